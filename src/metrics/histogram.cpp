// Histogram storage: per-thread seqlocked shards (see docs/design/metrics-hot-path.md).
#include <inferscope/metrics/histogram.h>

#include <new>
#include <thread>

#include <inferscope/metrics/detail/counter_series.h>

namespace inferscope::metrics {
namespace detail {
namespace {
constexpr std::align_val_t kShardAlign{kCacheLine};

std::size_t shard_bytes(std::size_t bucket_count) {
  const std::size_t raw = sizeof(HistogramShard) + bucket_count * sizeof(std::atomic<std::uint64_t>);
  return (raw + kCacheLine - 1) / kCacheLine * kCacheLine;  // whole lines: no sharing with neighbours
}
}  // namespace

HistogramShard* HistogramShard::create(std::size_t bucket_count) noexcept {
  void* raw = ::operator new(shard_bytes(bucket_count), kShardAlign, std::nothrow);
  if (raw == nullptr) return nullptr;
  auto* shard = new (raw) HistogramShard();
  auto* counts = reinterpret_cast<std::atomic<std::uint64_t>*>(shard + 1);
  for (std::size_t i = 0; i < bucket_count; ++i) new (counts + i) std::atomic<std::uint64_t>(0);
  return shard;
}

void HistogramShard::destroy(HistogramShard* shard) noexcept {
  if (shard == nullptr) return;
  // std::atomic<uint64_t> and HistogramShard are trivially destructible.
  ::operator delete(static_cast<void*>(shard), kShardAlign);
}

HistogramSeries::HistogramSeries(std::string labels, std::shared_ptr<RejectCounts> rejects,
                                 std::shared_ptr<const std::vector<double>> bounds)
    : SeriesBase(std::move(labels), std::move(rejects)),
      bounds_(std::move(bounds)),
      bounds_data_(bounds_->data()),
      bounds_size_(bounds_->size()),
      shard_count_(shard_count()),
      shards_(new std::atomic<HistogramShard*>[shard_count_]),
      shared_(HistogramShard::create(bounds_size_ + 1)) {
  if (shared_ == nullptr) throw std::bad_alloc();
  for (std::uint32_t i = 0; i < shard_count_; ++i) shards_[i].store(nullptr, std::memory_order_relaxed);
}

HistogramSeries::~HistogramSeries() {
  for (std::uint32_t i = 0; i < shard_count_; ++i) HistogramShard::destroy(shards_[i].load(std::memory_order_relaxed));
  HistogramShard::destroy(shared_);
}

HistogramShard* HistogramSeries::create_shard(std::uint32_t slot) noexcept {
  HistogramShard* shard = HistogramShard::create(bounds_size_ + 1);
  if (shard != nullptr) shards_[slot].store(shard, std::memory_order_release);
  return shard;
}

void HistogramSeries::observe_shared(std::size_t index, double v) noexcept {
  shared_->counts()[index].fetch_add(1, std::memory_order_relaxed);
  std::uint64_t old = shared_->sum_bits.load(std::memory_order_relaxed);
  while (!shared_->sum_bits.compare_exchange_weak(
      old, std::bit_cast<std::uint64_t>(std::bit_cast<double>(old) + v), std::memory_order_relaxed)) {
  }
}

namespace {
// read_shard copies one shard with Boehm's seqlock reader into scratch and returns its sum. A
// writer holds the odd state for a few instructions; if it was preempted there, yield instead of
// burning the CPU it needs.
double read_shard(const HistogramShard& shard, std::size_t n, std::uint64_t* scratch) noexcept {
  for (unsigned attempt = 1;; ++attempt) {
    const std::uint64_t before = shard.seq.load(std::memory_order_acquire);
    if ((before & 1) == 0) {
      const double sum = std::bit_cast<double>(shard.sum_bits.load(kSeqlockDataLoad));
      for (std::size_t b = 0; b < n; ++b) scratch[b] = shard.counts()[b].load(kSeqlockDataLoad);
      if constexpr (kSeqlockFences) std::atomic_thread_fence(std::memory_order_acquire);
      if (shard.seq.load(std::memory_order_relaxed) == before) return sum;
    }
    if (attempt % 64 == 0) std::this_thread::yield();
  }
}
}  // namespace

double HistogramSeries::read(std::uint64_t* counts, std::uint64_t* scratch) const noexcept {
  const std::size_t n = bucket_count();
  double sum = std::bit_cast<double>(shared_->sum_bits.load(std::memory_order_relaxed));
  for (std::size_t b = 0; b < n; ++b) counts[b] += shared_->counts()[b].load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < shard_count_; ++i) {
    const HistogramShard* shard = shards_[i].load(std::memory_order_acquire);
    if (shard == nullptr) continue;
    sum += read_shard(*shard, n, scratch);
    for (std::size_t b = 0; b < n; ++b) counts[b] += scratch[b];
  }
  return sum;
}

namespace {
const std::shared_ptr<HistogramSeries>& null_histogram_series() {
  static auto* series = new std::shared_ptr<HistogramSeries>(std::make_shared<HistogramSeries>(
      "", nullptr, std::make_shared<const std::vector<double>>()));
  return *series;
}
}  // namespace

}  // namespace detail

Histogram::Histogram() noexcept : series_(detail::null_histogram_series()) {}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot snap;
  snap.cumulative_counts.assign(series_->bucket_count(), 0);
  std::vector<std::uint64_t> scratch(series_->bucket_count());
  snap.sum = series_->read(snap.cumulative_counts.data(), scratch.data());
  std::uint64_t running = 0;
  for (auto& c : snap.cumulative_counts) {
    running += c;
    c = running;
  }
  snap.count = running;
  return snap;
}

}  // namespace inferscope::metrics
