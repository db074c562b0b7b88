// File: detail/histogram_series.h  -- DO NOT INCLUDE DIRECTLY (use <inferscope/metrics/histogram.h>).
// Storage of one histogram series: per-thread single-writer shards, each a block
// [seq][sum][bucket 0..n] guarded by a sequence counter so that a scrape reads buckets and sum of a
// shard consistently; no stored count (count = sum of buckets, so _count == +Inf bucket always).
// Scheme and measurements: docs/design/metrics-hot-path.md.
// Thread-safe: any thread may observe; read() may run concurrently and never blocks writers.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <inferscope/metrics/detail/series_base.h>
#include <inferscope/metrics/detail/thread_slot.h>

namespace inferscope::metrics::detail {

// kLinearSearchMaxBounds: up to this many bounds a branch-free SIMD count beats binary search.
// BM_BucketSearch in bench/metrics/metrics_core_bench.cpp (2-vCPU Xeon, g++ 12 -O3, CPU time):
// 8 bounds 1.7 vs 2.8 ns, 20 bounds 3.3 vs 3.4 ns, 32 bounds 5.2 vs 3.7 ns (linear vs binary).
// client_golang measured 35 for Go's scalar loop; a plain scalar C++ loop is slower than binary
// search even at 8 bounds (GCC does not vectorise it for baseline x86-64), hence the SIMD form.
inline constexpr std::size_t kLinearSearchMaxBounds = 20;

// linear_bucket_index counts bounds < v, two at a time (GCC/Clang vector extension: SSE2 on
// x86-64, NEON on arm64; no branches, so random latencies cause no mispredictions).
inline std::size_t linear_bucket_index(const double* bounds, std::size_t n, double v) noexcept {
  std::size_t i = 0;
  std::size_t index = 0;
#if defined(__GNUC__)
  using V2d = double __attribute__((vector_size(16)));
  using V2l = long long __attribute__((vector_size(16)));
  const V2d vv = {v, v};
  V2l count = {0, 0};
  for (; i + 2 <= n; i += 2) {
    V2d pair;
    __builtin_memcpy(&pair, bounds + i, sizeof pair);
    count -= reinterpret_cast<V2l>(pair < vv);  // true lanes are -1
  }
  index = static_cast<std::size_t>(count[0] + count[1]);
#endif
  for (; i < n; ++i) index += static_cast<std::size_t>(bounds[i] < v);
  return index;
}

// binary_bucket_index is std::lower_bound over the bounds.
inline std::size_t binary_bucket_index(const double* bounds, std::size_t n, double v) noexcept {
  return static_cast<std::size_t>(std::lower_bound(bounds, bounds + n, v) - bounds);
}

// bucket_index returns the index of the first bound >= v (n for the +Inf bucket). v is not NaN.
inline std::size_t bucket_index(const double* bounds, std::size_t n, double v) noexcept {
  return n <= kLinearSearchMaxBounds ? linear_bucket_index(bounds, n, v) : binary_bucket_index(bounds, n, v);
}

// ThreadSanitizer does not model std::atomic_thread_fence, so under it the seqlock orders each data
// access instead (release stores in the writer, acquire loads in the reader): the same guarantee,
// which TSan can check. On x86 both forms compile to plain movs; the fences stay the default
// because on weakly ordered CPUs one fence is cheaper than an ordered access per bucket.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kSeqlockFences = false;
#else
inline constexpr bool kSeqlockFences = true;
#endif
inline constexpr std::memory_order kSeqlockDataStore = kSeqlockFences ? std::memory_order_relaxed : std::memory_order_release;
inline constexpr std::memory_order kSeqlockDataLoad = kSeqlockFences ? std::memory_order_relaxed : std::memory_order_acquire;

// HistogramShard is the header of one shard block; `bucket_count` counters follow it in the same
// 128-byte-aligned allocation.
struct HistogramShard {
  std::atomic<std::uint64_t> seq{0};       // odd while its single writer is mid-update
  std::atomic<std::uint64_t> sum_bits{0};  // double bits of the sum of observations
  std::atomic<std::uint64_t>* counts() noexcept {
    return reinterpret_cast<std::atomic<std::uint64_t>*>(this + 1);
  }
  const std::atomic<std::uint64_t>* counts() const noexcept {
    return reinterpret_cast<const std::atomic<std::uint64_t>*>(this + 1);
  }
  // create allocates a zeroed shard with bucket_count counters; nullptr when out of memory.
  static HistogramShard* create(std::size_t bucket_count) noexcept;
  static void destroy(HistogramShard* shard) noexcept;
};

// ExemplarSlot holds one bucket's latest exemplar (defined in histogram.cpp; see
// HistogramSeries::observe_with_exemplar).
struct ExemplarSlot;

// kMaxExemplarTextBytes bounds an exemplar's formatted label text: 128 code points of at most 4
// bytes, each escaped character doubled, plus the quotes, '=' and ',' between labels.
inline constexpr std::size_t kMaxExemplarTextBytes = 1024;

// ExemplarText is an exemplar's label set as OpenMetrics prints it (`a="x",b="y"`, escaped),
// checked once (prepare_exemplar_text); `valid` is false when OpenMetrics forbids the set.
struct ExemplarText {
  bool valid = false;
  std::size_t size = 0;
  char text[kMaxExemplarTextBytes];
};

// prepare_exemplar_text fills `out` from `labels` (bad or duplicate names, invalid UTF-8 or over
// 128 code points leave it invalid). Allocates nothing.
void prepare_exemplar_text(std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                           ExemplarText& out) noexcept;

// HistogramSeries is the state behind a Histogram handle.
class HistogramSeries : public SeriesBase {
 public:
  // bounds: strictly increasing finite upper bounds, shared with the family (kept alive here).
  HistogramSeries(std::string labels, std::shared_ptr<RejectCounts> rejects,
                  std::shared_ptr<const std::vector<double>> bounds);
  ~HistogramSeries();

  // observe records v: NaN is dropped and counted; everything else (negative, +-Inf) is kept.
  void observe(double v) noexcept {
    if (std::isnan(v)) [[unlikely]] {
      count_rejected(true);
      return;
    }
    record(bucket_index(bounds_data_, bounds_size_, v), v);
  }

  // observe_with_exemplar records v like observe() and makes (labels, v, unix_ms) the exemplar of
  // v's bucket unless that bucket holds one with the same or a later timestamp. Labels that are not valid
  // OpenMetrics exemplar labels (bad or duplicate names, invalid UTF-8, over 128 code points) drop
  // the exemplar, not the value, and count reason="exemplar" rejects. Out of line: validation,
  // escaping and one per-bucket mutex; the first exemplar of the series allocates its slots.
  void observe_with_exemplar(double v, std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                             std::int64_t unix_ms) noexcept;
  // The same with labels checked and formatted beforehand (an invalid text drops the exemplar and
  // counts the reject, as above): what a request's several latencies with one trace id share.
  void observe_with_exemplar(double v, const ExemplarText& labels, std::int64_t unix_ms) noexcept;

  // append_exemplar appends ` # {labels} value timestamp` (OpenMetrics) for bucket `bucket` when it
  // has an exemplar; appends nothing otherwise. Holds the bucket's mutex only to copy the slot.
  void append_exemplar(std::size_t bucket, std::string& out) const;

  // bucket_count returns the number of buckets including +Inf.
  std::size_t bucket_count() const noexcept { return bounds_size_ + 1; }
  const std::vector<double>& bounds() const noexcept { return *bounds_; }

  // read adds every shard's per-bucket (non-cumulative) counts into counts[0..bucket_count()) and
  // returns the sum; scratch is caller-provided space for bucket_count() values (so rendering does
  // not allocate). Each shard is read consistently (buckets and sum of the same observations); the
  // shared shard's sum may lag its buckets by in-flight observations.
  double read(std::uint64_t* counts, std::uint64_t* scratch) const noexcept;

 private:
  HistogramShard* own_shard() noexcept {
    const std::uint32_t slot = this_thread_slot();
    if (slot >= shard_count_) [[unlikely]] return nullptr;
    HistogramShard* s = shards_[slot].load(std::memory_order_relaxed);
    if (s == nullptr) [[unlikely]] s = create_shard(slot);
    return s;
  }
  // record adds one observation of v to bucket `index`.
  void record(std::size_t index, double v) noexcept {
    if (HistogramShard* s = own_shard()) [[likely]] {
      // Single writer: Boehm's seqlock writer. All plain movs on x86; the fences only stop the
      // compiler (and weakly ordered CPUs) from moving the data stores outside the odd window.
      const std::uint64_t seq = s->seq.load(std::memory_order_relaxed);
      s->seq.store(seq + 1, std::memory_order_relaxed);
      if constexpr (kSeqlockFences) std::atomic_thread_fence(std::memory_order_release);
      std::atomic<std::uint64_t>& c = s->counts()[index];
      c.store(c.load(std::memory_order_relaxed) + 1, kSeqlockDataStore);
      const double sum = std::bit_cast<double>(s->sum_bits.load(std::memory_order_relaxed)) + v;
      s->sum_bits.store(std::bit_cast<std::uint64_t>(sum), kSeqlockDataStore);
      s->seq.store(seq + 2, std::memory_order_release);
      return;
    }
    observe_shared(index, v);
  }
  HistogramShard* create_shard(std::uint32_t slot) noexcept;
  ExemplarSlot* exemplar_slots() noexcept;
  void observe_shared(std::size_t index, double v) noexcept;

  std::shared_ptr<const std::vector<double>> bounds_;
  const double* bounds_data_;
  std::size_t bounds_size_;
  std::uint32_t shard_count_;
  std::unique_ptr<std::atomic<HistogramShard*>[]> shards_;
  HistogramShard* shared_;  // multi-writer fallback, allocated eagerly
  // One slot per bucket, allocated by the first exemplar; observe() never touches it.
  std::atomic<ExemplarSlot*> exemplars_{nullptr};
};

}  // namespace inferscope::metrics::detail
