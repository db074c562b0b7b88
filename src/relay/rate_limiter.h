// File: rate_limiter.h
// RollingRateLimiter: at most N messages in any rolling window (DingTalk and WeCom robots take 20
// a minute; DingTalk then throttles for 10 minutes), plus a pause after the service said
// "too fast". Example:
//   RollingRateLimiter limit(20, 60s);  if (limit.allowed(now)) { send(); limit.record(now); }
// Not thread-safe (one per channel, used by its delivery thread). Times are caller-supplied, so
// tests move them by hand.
#pragma once

#include <chrono>
#include <deque>
#include <algorithm>

namespace inferscope::relay {

class RollingRateLimiter {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  // RollingRateLimiter allows `limit` sends per `window`; limit 0 = unlimited.
  RollingRateLimiter(int limit, std::chrono::milliseconds window) : limit_(limit), window_(window) {}

  // allowed reports whether a send at `now` stays within the limit and no pause is on.
  bool allowed(TimePoint now);
  // next_allowed returns the earliest time a send is allowed (now if allowed now).
  TimePoint next_allowed(TimePoint now);
  // record notes a send at `now`.
  void record(TimePoint now);
  // pause_until refuses every send before `until`.
  void pause_until(TimePoint until) { paused_until_ = std::max(paused_until_, until); }

 private:
  void expire(TimePoint now);
  int limit_;
  std::chrono::milliseconds window_;
  std::deque<TimePoint> sent_;
  TimePoint paused_until_{};
};

}  // namespace inferscope::relay
