// Fuzzes the loadgen's SSE parser and OpenAI event accounting. Invariants: splitting the input at
// any points yields the same events (the parser is incremental), and ResponseRecorder never
// crashes or produces inconsistent timestamps on any body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "loadgen/response_recorder.h"
#include "loadgen/sse_parser.h"

using inferscope::loadgen::OpenAiEventParser;
using inferscope::loadgen::RequestRecord;
using inferscope::loadgen::ResponseRecorder;
using inferscope::loadgen::SseParser;

namespace {

std::vector<std::string> parse(std::string_view body, std::size_t step) {
  std::vector<std::string> events;
  SseParser p([&](std::string_view d, std::int64_t) { events.emplace_back(d); }, 1 << 16);
  for (std::size_t i = 0; i < body.size(); i += step) p.feed(body.substr(i, step), static_cast<std::int64_t>(i));
  p.finish();
  if (p.error()) events.push_back("<error>");
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t step = 1 + data[0] % 17;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> whole = parse(body, body.size() + 1);
  std::vector<std::string> pieces = parse(body, step);
  // An oversized event may be detected at a different point; compare only error-free parses.
  bool errored = (!whole.empty() && whole.back() == "<error>") || (!pieces.empty() && pieces.back() == "<error>");
  if (!errored && whole != pieces) std::abort();

  OpenAiEventParser json;
  RequestRecord record;
  record.streaming = (data[0] & 0x80) == 0;
  record.started_ns = 0;
  ResponseRecorder recorder(record, json);
  for (std::size_t i = 0; i < body.size(); i += step) recorder.on_body(body.substr(i, step), static_cast<std::int64_t>(i));
  recorder.on_end(static_cast<std::int64_t>(body.size()));
  if (record.first_content_ns != -1 && record.last_token_ns < record.first_content_ns) std::abort();
  if (record.token_events != record.token_event_us.size()) std::abort();
  return 0;
}
