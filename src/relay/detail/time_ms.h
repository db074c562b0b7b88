#pragma once
// The outbox stores times as Unix milliseconds; these convert at its edge.
#include <chrono>
#include <cstdint>

namespace inferscope::relay::detail {

inline std::int64_t to_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline std::chrono::system_clock::time_point from_ms(std::int64_t ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

}  // namespace inferscope::relay::detail
