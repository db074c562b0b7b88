// File: detail/counter_series.h  -- DO NOT INCLUDE DIRECTLY (use <inferscope/metrics/counter.h>).
// Storage of one counter series: per-thread single-writer shards (relaxed load + store, no lock
// prefix) with an integer part and a floating part, plus one shared shard for threads without one.
// Scheme and measurements: docs/design/metrics-hot-path.md.
// Thread-safe: any thread may write; read() may run concurrently with writers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <inferscope/metrics/detail/series_base.h>
#include <inferscope/metrics/detail/thread_slot.h>

namespace inferscope::metrics::detail {

// kCacheLine is 128, not 64: x86's adjacent-line prefetcher pairs lines, so 64-byte padding still
// lets two cores' shards interfere (reference §12; BM_CounterInc/2 threads/separate shards shows it).
inline constexpr std::size_t kCacheLine = 128;

// CounterShard is one thread's part of a counter. `whole` keeps integer increments exact beyond
// 2^53; `fraction` takes the rest.
struct alignas(kCacheLine) CounterShard {
  std::atomic<std::uint64_t> whole{0};
  std::atomic<double> fraction{0.0};
};

// CounterSeries is the state behind a Counter handle.
class CounterSeries : public SeriesBase {
 public:
  CounterSeries(std::string labels, std::shared_ptr<RejectCounts> rejects);
  ~CounterSeries();

  // add_whole adds n. Own shard: relaxed load + store (~2 ns); shared shard: one fetch_add.
  void add_whole(std::uint64_t n) noexcept {
    if (CounterShard* s = own_shard()) [[likely]] {
      s->whole.store(s->whole.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
      return;
    }
    shared_.whole.fetch_add(n, std::memory_order_relaxed);
  }

  // add_fraction adds a non-negative, non-integral (or huge) v.
  void add_fraction(double v) noexcept {
    if (CounterShard* s = own_shard()) [[likely]] {
      s->fraction.store(s->fraction.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
      return;
    }
    double old = shared_.fraction.load(std::memory_order_relaxed);
    while (!shared_.fraction.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
    }
  }

  // reject counts a refused add (negative or NaN).
  void reject(bool nan) noexcept { count_rejected(nan); }

  // Total is a consistent-enough sum of all shards: each shard is read atomically, so the total
  // never goes backwards between two reads.
  struct Total {
    std::uint64_t whole = 0;
    double fraction = 0.0;
  };
  // read sums all shards; O(shard count), never blocks writers.
  Total read() const noexcept;

 private:
  // own_shard returns this thread's shard, allocating it on the thread's first write; nullptr when
  // the thread has no slot below shard_count_ or allocation failed (then the shared shard is used).
  CounterShard* own_shard() noexcept {
    const std::uint32_t slot = this_thread_slot();
    if (slot >= shard_count_) [[unlikely]] return nullptr;
    CounterShard* s = shards_[slot].load(std::memory_order_relaxed);
    if (s == nullptr) [[unlikely]] s = create_shard(slot);
    return s;
  }
  CounterShard* create_shard(std::uint32_t slot) noexcept;

  std::uint32_t shard_count_;
  std::unique_ptr<std::atomic<CounterShard*>[]> shards_;
  CounterShard shared_;
};

}  // namespace inferscope::metrics::detail
