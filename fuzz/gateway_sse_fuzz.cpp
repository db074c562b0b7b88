// Fuzzes the gateway's relay of upstream event streams (SseRelay). Invariants: reading the same
// bytes in different pieces forwards the same bytes and sees the same events (the relay is
// incremental); without usage stripping and without a malformed event, what is forwarded plus
// what is still pending is exactly the input (pass-through is byte-exact).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gateway/sse_relay.h"

using inferscope::gateway::SseRelay;

namespace {

struct Run {
  std::string out;
  std::size_t pending = 0;
  std::uint32_t content = 0;
  bool malformed = false;
  bool done = false;
};

Run relay(std::string_view input, std::size_t step, bool strip) {
  SseRelay r(strip, 1 << 16);
  Run run;
  std::string scratch;
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < input.size(); i += step) run.out.append(r.feed(input.substr(i, step), now, scratch));
  run.pending = r.pending_bytes();
  run.content = r.content_events();
  run.malformed = r.malformed();
  run.done = r.done_seen();
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool strip = (data[0] & 1) != 0;
  const std::size_t step = 1 + data[0] % 13;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Run whole = relay(input, input.size() + 1, strip);
  const Run pieces = relay(input, step, strip);
  if (whole.out != pieces.out || whole.content != pieces.content || whole.malformed != pieces.malformed ||
      whole.done != pieces.done) {
    std::abort();
  }
  if (!strip && !whole.malformed && whole.out.size() + whole.pending != input.size()) std::abort();
  return 0;
}
