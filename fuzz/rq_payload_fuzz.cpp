// Fuzzes the parsers of what RQ and Redis Streams leave in Redis: RQ's job/worker timestamps
// (parse_rq_timestamp), stream entry IDs (parse_stream_id) and the label check of queue names
// (is_label_safe). Invariants: never crashes; an accepted timestamp is finite, >= 0 and below
// year 10000, and the same text with one more trailing byte is refused; an accepted stream ID
// prints back as the input; a label-safe name is 1..200 bytes without control bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "queue/queue_payload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace inferscope::queue;
  if (const auto t = parse_rq_timestamp(text)) {
    if (!std::isfinite(*t) || *t < 0 || *t >= 253402300800.0) std::abort();
    if (parse_rq_timestamp(std::string(text) + "0")) std::abort();
  }
  if (const auto id = parse_stream_id(text)) {
    if (std::to_string(id->ms) + "-" + std::to_string(id->seq) != text) {
      // Leading zeros are the only other spelling from_chars accepts.
      if (text.find('0') == std::string_view::npos) std::abort();
    }
  }
  if (is_label_safe(text)) {
    if (text.empty() || text.size() > 200) std::abort();
    for (const char c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
    }
  }
  return 0;
}
