// SlidingWindow: a FIFO deque gives expiry order, and a libstdc++ policy-based red-black tree with
// order-statistics node updates gives O(log n) insert, erase and k-th element. Keys are
// (value, sequence number) so equal values stay distinct and erase removes exactly one sample.
#include <inferscope/metrics/sliding_window.h>

#include <cmath>
#include <deque>
#include <functional>
#include <stdexcept>
#include <utility>

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

namespace inferscope::metrics {
namespace {

using Key = std::pair<double, std::uint64_t>;
using OrderTree = __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                                   __gnu_pbds::tree_order_statistics_node_update>;

struct Sample {
  Key key;
  Clock::TimePoint at;
};

// CompensatedSum is Neumaier's summation: adding and later subtracting the same values many times
// would otherwise accumulate rounding error in the running mean without bound.
class CompensatedSum {
 public:
  void add(double v) noexcept {
    double t = sum_ + v;
    compensation_ += std::fabs(sum_) >= std::fabs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  double value() const noexcept { return sum_ + compensation_; }
  void reset() noexcept { sum_ = compensation_ = 0; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

}  // namespace

struct SlidingWindow::State {
  OrderTree tree;
  std::deque<Sample> fifo;
  CompensatedSum sum;
  std::uint64_t next_seq = 0;
  std::uint64_t rejected = 0;

  void pop_oldest() {
    const Sample& oldest = fifo.front();
    tree.erase(oldest.key);
    sum.add(-oldest.key.first);
    fifo.pop_front();
    if (fifo.empty()) sum.reset();  // an empty window restarts from an exact zero
  }
};

SlidingWindow::SlidingWindow(SlidingWindowOptions options, const Clock& clock)
    : options_(options), clock_(clock), state_(std::make_unique<State>()) {
  if (options_.max_samples == 0) throw std::invalid_argument("SlidingWindow: max_samples must be > 0");
  if (options_.max_age <= Clock::Duration::zero()) {
    throw std::invalid_argument("SlidingWindow: max_age must be > 0");
  }
}

SlidingWindow::~SlidingWindow() = default;

void SlidingWindow::expire_locked() const {
  if (options_.max_age == Clock::Duration::max() || state_->fifo.empty()) return;
  const Clock::TimePoint now = clock_.now();
  // A sample is live while its age is strictly below max_age. Compare ages rather than computing
  // now - max_age, which could underflow a time_point near the clock's origin.
  while (!state_->fifo.empty() && now - state_->fifo.front().at >= options_.max_age) {
    state_->pop_oldest();
  }
}

void SlidingWindow::add(double value) {
  std::lock_guard lock(mu_);
  if (!std::isfinite(value)) {
    ++state_->rejected;
    return;
  }
  expire_locked();
  while (state_->fifo.size() >= options_.max_samples) state_->pop_oldest();
  Sample sample{{value, state_->next_seq++}, clock_.now()};
  state_->tree.insert(sample.key);
  try {
    state_->fifo.push_back(sample);
  } catch (...) {
    state_->tree.erase(sample.key);  // keep tree and fifo in step if the deque cannot grow
    throw;
  }
  state_->sum.add(value);
}

std::optional<double> SlidingWindow::quantile(double q) const {
  if (!(q >= 0.0 && q <= 1.0)) return std::nullopt;  // also rejects NaN
  std::lock_guard lock(mu_);
  expire_locked();
  const std::size_t n = state_->tree.size();
  if (n == 0) return std::nullopt;
  const double rank = q * static_cast<double>(n - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const double lo = state_->tree.find_by_order(lower)->first;
  if (lower + 1 >= n) return lo;
  const double fraction = rank - static_cast<double>(lower);
  if (fraction == 0.0) return lo;
  const double hi = state_->tree.find_by_order(lower + 1)->first;
  return lo + (hi - lo) * fraction;
}

std::optional<double> SlidingWindow::mean() const {
  std::lock_guard lock(mu_);
  expire_locked();
  if (state_->fifo.empty()) return std::nullopt;
  return state_->sum.value() / static_cast<double>(state_->fifo.size());
}

std::size_t SlidingWindow::size() const {
  std::lock_guard lock(mu_);
  expire_locked();
  return state_->fifo.size();
}

std::uint64_t SlidingWindow::rejected() const {
  std::lock_guard lock(mu_);
  return state_->rejected;
}

void SlidingWindow::clear() {
  std::lock_guard lock(mu_);
  state_->tree.clear();
  state_->fifo.clear();
  state_->sum.reset();
}

}  // namespace inferscope::metrics
