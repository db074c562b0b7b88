#include "relay/rate_limiter.h"

namespace inferscope::relay {

void RollingRateLimiter::expire(TimePoint now) {
  while (!sent_.empty() && sent_.front() + window_ <= now) sent_.pop_front();
}

bool RollingRateLimiter::allowed(TimePoint now) {
  if (now < paused_until_) return false;
  if (limit_ <= 0) return true;
  expire(now);
  return static_cast<int>(sent_.size()) < limit_;
}

RollingRateLimiter::TimePoint RollingRateLimiter::next_allowed(TimePoint now) {
  if (allowed(now)) return now;
  TimePoint at = std::max(now, paused_until_);
  if (limit_ > 0 && static_cast<int>(sent_.size()) >= limit_) {
    // The send that frees a slot is the one `limit_` places back from the newest.
    at = std::max(at, sent_[sent_.size() - static_cast<std::size_t>(limit_)] + window_);
  }
  return at;
}

void RollingRateLimiter::record(TimePoint now) {
  sent_.push_back(now);
  if (limit_ > 0) {
    while (static_cast<int>(sent_.size()) > limit_) sent_.pop_front();
  }
}

}  // namespace inferscope::relay
