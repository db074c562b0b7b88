// Histogram storage: per-thread seqlocked shards (see docs/design/metrics-hot-path.md).
#include <inferscope/metrics/histogram.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <new>
#include <thread>

#include <inferscope/metrics/detail/counter_series.h>

#include "detail/text_format.h"

namespace inferscope::metrics {
namespace detail {
namespace {
constexpr std::align_val_t kShardAlign{kCacheLine};

std::size_t shard_bytes(std::size_t bucket_count) {
  const std::size_t raw = sizeof(HistogramShard) + bucket_count * sizeof(std::atomic<std::uint64_t>);
  return (raw + kCacheLine - 1) / kCacheLine * kCacheLine;  // whole lines: no sharing with neighbours
}
}  // namespace

// OpenMetrics 1.0: an exemplar's label names and values together are at most 128 UTF-8 code points.
constexpr std::size_t kMaxExemplarCodePoints = 128;
// The escaped `name="value",...` text of 128 code points: at most 4 bytes per code point (an
// escaped ASCII character takes 2), plus `=""` and `,` (4 bytes) per label, at most one label per
// code point.
static_assert(kMaxExemplarTextBytes >= 8 * kMaxExemplarCodePoints);

struct ExemplarSlot {
  std::mutex mutex;  // only observe_with_exemplar and append_exemplar take it
  // unix_ms of the kept exemplar, also readable without the mutex: an exemplar that would not
  // replace it is dropped before locking, which at a high rate is most of them.
  std::atomic<std::int64_t> kept_ms{std::numeric_limits<std::int64_t>::min()};
  bool present = false;
  double value = 0;
  std::int64_t unix_ms = 0;
  std::size_t size = 0;
  char text[kMaxExemplarTextBytes];
};

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
  delete[] exemplars_.load(std::memory_order_acquire);
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

void prepare_exemplar_text(std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                           ExemplarText& out) noexcept {
  out.valid = false;
  out.size = 0;
  std::size_t code_points = 0;
  std::size_t size = 0;
  char* text = out.text;
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    const auto& [name, value] = *it;
    if (!is_valid_label_name(name) || !is_valid_utf8(value)) return;
    for (auto prior = labels.begin(); prior != it; ++prior) {
      if (prior->first == name) return;
    }
    code_points += name.size();  // label names are ASCII
    for (char c : value) code_points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (code_points > kMaxExemplarCodePoints) return;
    if (size != 0) text[size++] = ',';
    std::memcpy(text + size, name.data(), name.size());
    size += name.size();
    text[size++] = '=';
    text[size++] = '"';
    for (char c : value) {
      if (c == '\\' || c == '"' || c == '\n') {
        text[size++] = '\\';
        text[size++] = c == '\n' ? 'n' : c;
      } else {
        text[size++] = c;
      }
    }
    text[size++] = '"';
  }
  out.size = size;
  out.valid = true;
}

namespace {
// append_unix_ms writes milliseconds since the epoch as OpenMetrics seconds with three decimals.
void append_unix_ms(std::string& out, std::int64_t unix_ms) {
  if (unix_ms < 0) out += '-';
  const std::uint64_t magnitude = unix_ms < 0 ? 0 - static_cast<std::uint64_t>(unix_ms) : static_cast<std::uint64_t>(unix_ms);
  append_uint(out, magnitude / 1000);
  const std::uint64_t millis = magnitude % 1000;
  const char digits[4] = {'.', static_cast<char>('0' + millis / 100), static_cast<char>('0' + millis / 10 % 10),
                          static_cast<char>('0' + millis % 10)};
  out.append(digits, 4);
}
}  // namespace

ExemplarSlot* HistogramSeries::exemplar_slots() noexcept {
  ExemplarSlot* slots = exemplars_.load(std::memory_order_acquire);
  if (slots != nullptr) return slots;
  auto* fresh = new (std::nothrow) ExemplarSlot[bucket_count()];
  if (fresh == nullptr) return nullptr;
  if (exemplars_.compare_exchange_strong(slots, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
    return fresh;
  }
  delete[] fresh;  // another thread's first exemplar won
  return slots;
}

void HistogramSeries::observe_with_exemplar(
    double v, std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
    std::int64_t unix_ms) noexcept {
  ExemplarText text;
  prepare_exemplar_text(labels, text);
  observe_with_exemplar(v, text, unix_ms);
}

void HistogramSeries::observe_with_exemplar(double v, const ExemplarText& labels, std::int64_t unix_ms) noexcept {
  if (std::isnan(v)) [[unlikely]] {
    count_rejected(true);
    return;
  }
  const std::size_t index = bucket_index(bounds_data_, bounds_size_, v);
  record(index, v);
  ExemplarSlot* slots = labels.valid ? exemplar_slots() : nullptr;
  if (slots == nullptr) {
    count_rejected_exemplar();
    return;
  }
  ExemplarSlot& slot = slots[index];
  // Prometheus stores an exemplar only when it is later than the last one it stored for the
  // series (an equal timestamp is a duplicate or out of order to it), so an older one arriving
  // late (another thread, a caller-given time) must not replace a newer one, and a second one in
  // the same millisecond would change nothing Prometheus could keep: the first of each
  // millisecond stays.
  if (unix_ms <= slot.kept_ms.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(slot.mutex);
  if (unix_ms <= slot.kept_ms.load(std::memory_order_relaxed)) return;
  slot.kept_ms.store(unix_ms, std::memory_order_relaxed);
  slot.present = true;
  slot.value = v;
  slot.unix_ms = unix_ms;
  slot.size = labels.size;
  std::memcpy(slot.text, labels.text, labels.size);
}

void HistogramSeries::append_exemplar(std::size_t bucket, std::string& out) const {
  ExemplarSlot* slots = exemplars_.load(std::memory_order_acquire);
  if (slots == nullptr) return;
  char text[kMaxExemplarTextBytes];
  std::size_t size = 0;
  double value = 0;
  std::int64_t unix_ms = 0;
  {
    // Copy out first: growing `out` may allocate, and writers should not wait for that.
    ExemplarSlot& slot = slots[bucket];
    std::lock_guard lock(slot.mutex);
    if (!slot.present) return;
    size = slot.size;
    value = slot.value;
    unix_ms = slot.unix_ms;
    std::memcpy(text, slot.text, size);
  }
  out += " # {";
  out.append(text, size);
  out += "} ";
  append_double(out, value);
  out += ' ';
  append_unix_ms(out, unix_ms);
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
