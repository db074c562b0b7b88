// File: sliding_window.h
// SlidingWindow keeps the most recent samples, bounded by count AND by age, and answers exact
// mean, median and any quantile over them (a median filter, a recent-p99 for admission control).
//   SlidingWindow w({.max_samples = 1024, .max_age = std::chrono::seconds(30)});
//   w.add(0.120); std::optional<double> p99 = w.quantile(0.99);  // nullopt when empty
// Thread-safe (one internal mutex; see the class comment for why). Never reports an empty window
// as 0: every statistic of an empty window is std::nullopt.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include <inferscope/metrics/clock.h>

namespace inferscope::metrics {

// SlidingWindowOptions bounds a SlidingWindow. Both limits apply: a sample leaves when it is older
// than max_age or when max_samples newer samples have arrived, whichever comes first.
struct SlidingWindowOptions {
  std::size_t max_samples = 1024;  // > 0
  // > 0; Clock::Duration::max() means "bounded by count only".
  Clock::Duration max_age = std::chrono::seconds(60);
};

// SlidingWindow is an exact order-statistics window over recent samples.
//
// Thread safety: internally locked. The intended uses have writers and readers on different
// threads (request threads add, a scrape collect hook or an admission controller reads), and an
// add already costs an O(log n) tree insert with one node allocation (~100-200 ns), so an
// uncontended mutex (~20 ns) is cheap insurance against every caller having to wrap it. Because
// of that allocation and lock, it does not belong on the metrics hot path: use Histogram there.
//
// Cost: add O(log n) (+ amortised O(1) per expired sample), quantile/median O(log n), mean O(1).
// Memory ~100 bytes per sample held (tree node + deque entry).
class SlidingWindow {
 public:
  // SlidingWindow reads time from `clock`, which must outlive the window (the reference is kept).
  // Throws std::invalid_argument (setup misuse) if max_samples == 0 or max_age <= 0.
  explicit SlidingWindow(SlidingWindowOptions options, const Clock& clock = SteadyClock::instance());
  ~SlidingWindow();
  SlidingWindow(const SlidingWindow&) = delete;
  SlidingWindow& operator=(const SlidingWindow&) = delete;

  // add records `value` at clock.now(), first dropping samples that have expired and then the
  // oldest one if the window is full. NaN and +-Inf are dropped and counted in rejected() (they
  // have no place in a mean). May allocate (one tree node); never throws except std::bad_alloc.
  void add(double value);

  // quantile returns the q-quantile of the live samples, linearly interpolated between the two
  // closest ranks (rank q*(n-1), the R-7 / numpy default), so quantile(0.5) is the textbook median.
  // Returns std::nullopt when the window is empty or q is NaN or outside [0, 1].
  std::optional<double> quantile(double q) const;
  // median is quantile(0.5).
  std::optional<double> median() const { return quantile(0.5); }
  // mean returns the arithmetic mean of the live samples (compensated running sum, so long runs
  // of add/expire do not drift), or std::nullopt when empty.
  std::optional<double> mean() const;
  // min and max return the extreme live samples, or std::nullopt when empty. O(log n).
  std::optional<double> min() const { return quantile(0.0); }
  std::optional<double> max() const { return quantile(1.0); }
  // size returns the number of live (unexpired) samples.
  std::size_t size() const;
  // rejected returns how many non-finite values add() has dropped since construction.
  std::uint64_t rejected() const;
  // clear drops every sample (rejected() is kept).
  void clear();

 private:
  struct State;  // pb_ds order-statistics tree + FIFO deque; kept out of this header.

  // expire_locked drops samples older than now - max_age. Needs mu_ held.
  void expire_locked() const;

  const SlidingWindowOptions options_;
  const Clock& clock_;
  mutable std::mutex mu_;
  // Expiry is driven by time, so const readers also drop stale samples: logically const.
  std::unique_ptr<State> state_;
};

}  // namespace inferscope::metrics
