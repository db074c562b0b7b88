// Counter storage: per-thread shards (see docs/design/metrics-hot-path.md).
#include <inferscope/metrics/counter.h>

#include <new>

namespace inferscope::metrics {
namespace detail {

CounterSeries::CounterSeries(std::string labels, std::shared_ptr<RejectCounts> rejects)
    : SeriesBase(std::move(labels), std::move(rejects)),
      shard_count_(shard_count()),
      shards_(new std::atomic<CounterShard*>[shard_count_]) {
  for (std::uint32_t i = 0; i < shard_count_; ++i) shards_[i].store(nullptr, std::memory_order_relaxed);
}

CounterSeries::~CounterSeries() {
  for (std::uint32_t i = 0; i < shard_count_; ++i) delete shards_[i].load(std::memory_order_relaxed);
}

CounterShard* CounterSeries::create_shard(std::uint32_t slot) noexcept {
  auto* shard = new (std::nothrow) CounterShard();
  // Only this thread writes this slot (it owns the id), so a plain release store publishes it to
  // readers; no CAS needed.
  if (shard != nullptr) shards_[slot].store(shard, std::memory_order_release);
  return shard;
}

CounterSeries::Total CounterSeries::read() const noexcept {
  Total total{shared_.whole.load(std::memory_order_relaxed),
              shared_.fraction.load(std::memory_order_relaxed)};
  for (std::uint32_t i = 0; i < shard_count_; ++i) {
    const CounterShard* shard = shards_[i].load(std::memory_order_acquire);
    if (shard == nullptr) continue;
    total.whole += shard->whole.load(std::memory_order_relaxed);
    total.fraction += shard->fraction.load(std::memory_order_relaxed);
  }
  return total;
}

namespace {
// null_counter_series backs default-constructed handles; leaked so handles in static objects work
// during static destruction.
const std::shared_ptr<CounterSeries>& null_counter_series() {
  static auto* series = new std::shared_ptr<CounterSeries>(std::make_shared<CounterSeries>("", nullptr));
  return *series;
}
}  // namespace

}  // namespace detail

Counter::Counter() noexcept : series_(detail::null_counter_series()) {}

double Counter::value() const noexcept {
  const auto total = series_->read();
  return static_cast<double>(total.whole) + total.fraction;
}

}  // namespace inferscope::metrics
