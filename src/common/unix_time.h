#pragma once
// Wall-clock time as Unix seconds, the unit of Prometheus timestamps and of every JSON document
// inferscope writes.
#include <chrono>

namespace inferscope::common {

inline double unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

inline double unix_now_s() { return unix_seconds(std::chrono::system_clock::now()); }

}  // namespace inferscope::common
