// Micro-benchmarks of the metrics core hot path, lookup and rendering, each next to a peer
// baseline implemented the prometheus-cpp way (reference §8.1): atomic<double> CAS counters, a
// seq_cst atomic<double> gauge, a mutex histogram with std::lower_bound, a std::map-labelled family
// whose Add() allocates on every call, and a std::ostream serializer with 16 significant digits.
// The peers are re-implementations of that approach (prometheus-cpp is not packaged in Debian 12),
// not prometheus-cpp itself. After the runs the binary prints peer/inferscope time ratios (wall
// time per call, and each calling thread's own time for the 2-thread runs).
// Run: build-core/bench/metrics/metrics_core_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include "ratio_reporter.h"

#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

using namespace inferscope::metrics;

// ---------------------------------------------------------------- peer (prometheus-cpp style)
class PeerGauge {
 public:
  void set(double v) { value_.store(v); }  // seq_cst store: xchg on x86
  void add(double v) {
    double old = value_.load();
    while (!value_.compare_exchange_weak(old, old + v)) {
    }
  }
  double value() const { return value_.load(); }

 private:
  std::atomic<double> value_{0};
};

class PeerCounter {
 public:
  void inc(double v = 1) {
    if (v < 0) return;
    gauge_.add(v);
  }
  double value() const { return gauge_.value(); }

 private:
  PeerGauge gauge_;
};

class PeerHistogram {
 public:
  explicit PeerHistogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void observe(double v) {
    const auto index = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
    std::lock_guard lock(mutex_);
    sum_.add(v);
    counts_[index].inc();
  }

 private:
  std::vector<double> bounds_;
  std::vector<PeerCounter> counts_;
  PeerGauge sum_;
  std::mutex mutex_;
};

using PeerLabels = std::map<std::string, std::string>;
struct PeerLabelsHash {
  std::size_t operator()(const PeerLabels& labels) const {
    std::size_t seed = 0;
    for (const auto& [k, v] : labels) {
      seed ^= std::hash<std::string>{}(k) + 0x9e3779b9 + (seed << 6) + (seed >> 2);
      seed ^= std::hash<std::string>{}(v) + 0x9e3779b9 + (seed << 6) + (seed >> 2);
    }
    return seed;
  }
};

// PeerFamily::add mirrors prometheus-cpp Family::Add: allocate a new object, copy the labels map
// into the insert under the mutex, find the existing child, destroy the copies.
class PeerFamily {
 public:
  PeerCounter& add(const PeerLabels& labels) {
    auto object = std::make_unique<PeerCounter>();
    std::lock_guard lock(mutex_);
    auto [it, inserted] = children_.insert(std::make_pair(labels, std::move(object)));
    return *it->second;
  }
  const std::unordered_map<PeerLabels, std::unique_ptr<PeerCounter>, PeerLabelsHash>& children() const {
    return children_;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<PeerLabels, std::unique_ptr<PeerCounter>, PeerLabelsHash> children_;
};

// peer_serialize mirrors Collect (deep copy of names and labels) + TextSerializer (ostream,
// classic locale, 16 significant digits).
void peer_serialize(const std::string& name, const PeerFamily& family, std::string& out) {
  struct Sample {
    PeerLabels labels;
    double value;
  };
  std::vector<Sample> collected;
  for (const auto& [labels, counter] : family.children()) collected.push_back({labels, counter->value()});
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(16);
  os << "# HELP " << name << " help\n# TYPE " << name << " counter\n";
  for (const auto& sample : collected) {
    os << name << '{';
    bool first = true;
    for (const auto& [k, v] : sample.labels) {
      if (!first) os << ',';
      first = false;
      os << k << "=\"";
      for (char c : v) {
        if (c == '"' || c == '\\') os << '\\';
        os << c;
      }
      os << '"';
    }
    os << "} " << sample.value << '\n';
  }
  out = os.str();
}

// ---------------------------------------------------------------- fixtures
constexpr int kMaxThreads = 2;

std::vector<double> latency_values() {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(std::log(0.001), std::log(60.0));
  std::vector<double> values(4096);
  for (double& v : values) v = std::exp(exponent(rng));  // log-uniform 1 ms .. 60 s
  return values;
}
const std::vector<double>& values() {
  static const std::vector<double> v = latency_values();
  return v;
}

struct Fixture {
  Registry registry{RegistryOptions{.max_series_per_family = 20000, .max_series_total = 200000}};
  CounterFamily& counters = registry.counter({.name = "bench_ops_total", .help = "h", .label_names = {"k"}});
  GaugeFamily& gauges = registry.gauge({.name = "bench_level", .help = "h", .label_names = {"k"}});
  HistogramFamily& histograms = registry.histogram(
      {{.name = "bench_latency_seconds", .help = "h", .label_names = {"k"}}, default_latency_buckets()});
  CounterFamily& three = registry.counter({.name = "bench_three_total", .help = "h", .label_names = {"a", "b", "c"}});
  Counter shared_counter = counters.with({"shared"});
  Gauge shared_gauge = gauges.with({"shared"});
  Histogram shared_histogram = histograms.with({"shared"});
  std::vector<Counter> own_counters;
  std::vector<Gauge> own_gauges;
  std::vector<Histogram> own_histograms;
  PeerCounter peer_shared_counter;
  PeerGauge peer_shared_gauge;
  PeerHistogram peer_shared_histogram{default_latency_buckets()};
  std::vector<std::unique_ptr<PeerCounter>> peer_own_counters;
  std::vector<std::unique_ptr<PeerGauge>> peer_own_gauges;
  std::vector<std::unique_ptr<PeerHistogram>> peer_own_histograms;
  PeerFamily peer_one;
  PeerFamily peer_three;

  Fixture() {
    for (int t = 0; t < kMaxThreads; ++t) {
      const std::string key = std::to_string(t);  // ("t" + to_string) trips GCC 12's -Wrestrict
      own_counters.push_back(counters.with({key}));
      own_gauges.push_back(gauges.with({key}));
      own_histograms.push_back(histograms.with({key}));
      peer_own_counters.push_back(std::make_unique<PeerCounter>());
      peer_own_gauges.push_back(std::make_unique<PeerGauge>());
      peer_own_histograms.push_back(std::make_unique<PeerHistogram>(default_latency_buckets()));
    }
    three.with({"/v1/chat/completions", "200", "llama-3-8b"});
    peer_one.add({{"k", "shared"}});
    peer_three.add({{"a", "/v1/chat/completions"}, {"b", "200"}, {"c", "llama-3-8b"}});
  }
};
Fixture& fixture() {
  static Fixture* f = new Fixture();  // leaked: benchmark threads may still hold handles at exit
  return *f;
}

// ---------------------------------------------------------------- counters, gauges, histograms
// Every hot-path loop ends its iteration with benchmark::ClobberMemory(), so the compiler can
// neither merge repeated increments nor keep a value in a register across iterations, for ours and
// the peer alike. Google Benchmark divides the wall time by the iterations of all threads together;
// per_thread_ns is what one call costs the thread that makes it (the figure an instrumented
// request pays), measured per thread and averaged over the threads.
template <class Body>
void timed_loop(benchmark::State& state, Body&& body) {
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  state.counters["per_thread_ns"] =
      benchmark::Counter(state.iterations() > 0 ? ns / static_cast<double>(state.iterations()) : 0,
                         benchmark::Counter::kAvgThreads);
}

// value_cursor walks the precomputed latency values from a per-thread offset.
struct ValueCursor {
  const std::vector<double>& v = values();
  std::size_t i;
  explicit ValueCursor(const benchmark::State& state) : i(static_cast<std::size_t>(state.thread_index()) * 1000) {}
  double next() { return v[i++ & 4095]; }
};

void BM_CounterInc_Shared(benchmark::State& state) {
  Counter c = fixture().shared_counter;
  timed_loop(state, [&] { c.inc(); });
}
void BM_CounterInc_Separate(benchmark::State& state) {
  Counter c = fixture().own_counters[static_cast<std::size_t>(state.thread_index())];
  timed_loop(state, [&] { c.inc(); });
}
void BM_PeerCounterInc_Shared(benchmark::State& state) {
  PeerCounter& c = fixture().peer_shared_counter;
  timed_loop(state, [&] { c.inc(); });
}
void BM_PeerCounterInc_Separate(benchmark::State& state) {
  PeerCounter& c = *fixture().peer_own_counters[static_cast<std::size_t>(state.thread_index())];
  timed_loop(state, [&] { c.inc(); });
}
// Gauges are set from precomputed values: a loop-carried `v += 1` would put a dependent FP add
// (4 cycles) into every iteration and let the compiler see the sequence.
void BM_GaugeSet_Shared(benchmark::State& state) {
  Gauge g = fixture().shared_gauge;
  ValueCursor v(state);
  timed_loop(state, [&] { g.set(v.next()); });
}
void BM_GaugeSet_Separate(benchmark::State& state) {
  Gauge g = fixture().own_gauges[static_cast<std::size_t>(state.thread_index())];
  ValueCursor v(state);
  timed_loop(state, [&] { g.set(v.next()); });
}
void BM_PeerGaugeSet_Shared(benchmark::State& state) {
  PeerGauge& g = fixture().peer_shared_gauge;
  ValueCursor v(state);
  timed_loop(state, [&] { g.set(v.next()); });
}
void BM_PeerGaugeSet_Separate(benchmark::State& state) {
  PeerGauge& g = *fixture().peer_own_gauges[static_cast<std::size_t>(state.thread_index())];
  ValueCursor v(state);
  timed_loop(state, [&] { g.set(v.next()); });
}

template <class H>
void observe_loop(benchmark::State& state, H& h) {
  ValueCursor v(state);
  timed_loop(state, [&] { h.observe(v.next()); });
}
void BM_HistogramObserve_Shared(benchmark::State& state) {
  Histogram h = fixture().shared_histogram;
  observe_loop(state, h);
}
void BM_HistogramObserve_Separate(benchmark::State& state) {
  Histogram h = fixture().own_histograms[static_cast<std::size_t>(state.thread_index())];
  observe_loop(state, h);
}
void BM_PeerHistogramObserve_Shared(benchmark::State& state) { observe_loop(state, fixture().peer_shared_histogram); }
void BM_PeerHistogramObserve_Separate(benchmark::State& state) {
  observe_loop(state, *fixture().peer_own_histograms[static_cast<std::size_t>(state.thread_index())]);
}

// The realistic case: a server with 1,000 live series (routes x models x status) observes into
// them in request order, not into one hot series, so each call mostly misses L1 and often L2; both
// threads draw from the same 1,000 series (they share cache lines now and then, as real workers do).
constexpr std::size_t kManySeries = 1000;
constexpr std::size_t kOrderLength = 1 << 16;

struct ManySeries {
  std::vector<Histogram> ours;
  std::vector<std::unique_ptr<PeerHistogram>> peer;
  std::vector<std::uint32_t> order[kMaxThreads];  // a random series index per call, per thread
  ManySeries() {
    auto& family = fixture().registry.histogram(
        {{.name = "bench_many_seconds", .help = "h", .label_names = {"route"}}, default_latency_buckets()});
    for (std::size_t i = 0; i < kManySeries; ++i) {
      ours.push_back(family.with({"/r/" + std::to_string(i)}));
      peer.push_back(std::make_unique<PeerHistogram>(default_latency_buckets()));
    }
    for (int t = 0; t < kMaxThreads; ++t) {
      std::mt19937 rng(static_cast<std::uint32_t>(11 + t));
      std::uniform_int_distribution<std::uint32_t> pick(0, kManySeries - 1);
      order[t].resize(kOrderLength);
      for (auto& o : order[t]) o = pick(rng);
    }
  }
};
ManySeries& many() {
  static ManySeries* m = new ManySeries();  // leaked like fixture()
  return *m;
}

void BM_HistogramObserve_1000SeriesRandom(benchmark::State& state) {
  ManySeries& m = many();
  const std::vector<std::uint32_t>& order = m.order[state.thread_index()];
  ValueCursor v(state);
  std::size_t k = 0;
  timed_loop(state, [&] { m.ours[order[k++ & (kOrderLength - 1)]].observe(v.next()); });
}
void BM_PeerHistogramObserve_1000SeriesRandom(benchmark::State& state) {
  ManySeries& m = many();
  const std::vector<std::uint32_t>& order = m.order[state.thread_index()];
  ValueCursor v(state);
  std::size_t k = 0;
  timed_loop(state, [&] { m.peer[order[k++ & (kOrderLength - 1)]]->observe(v.next()); });
}

// observe_with_exemplar as a traced request makes it: a 32-hex trace id and the wall clock read per
// call. Main prints its cost over plain observe on the same series (the exemplar path adds label
// validation, escaping, a clock read and a per-bucket mutex; observe() itself is unchanged).
constexpr std::string_view kTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
void BM_HistogramObserveWithExemplar_Shared(benchmark::State& state) {
  Histogram h = fixture().shared_histogram;
  ValueCursor v(state);
  timed_loop(state, [&] { h.observe_with_exemplar(v.next(), {{"trace_id", kTraceId}}); });
}
void BM_HistogramObserveWithExemplar_Separate(benchmark::State& state) {
  Histogram h = fixture().own_histograms[static_cast<std::size_t>(state.thread_index())];
  ValueCursor v(state);
  timed_loop(state, [&] { h.observe_with_exemplar(v.next(), {{"trace_id", kTraceId}}); });
}

#define HOT_PATH(name) BENCHMARK(name)->Threads(1)->Threads(2)->UseRealTime()
HOT_PATH(BM_CounterInc_Shared);
HOT_PATH(BM_PeerCounterInc_Shared);
HOT_PATH(BM_CounterInc_Separate);
HOT_PATH(BM_PeerCounterInc_Separate);
HOT_PATH(BM_GaugeSet_Shared);
HOT_PATH(BM_PeerGaugeSet_Shared);
HOT_PATH(BM_GaugeSet_Separate);
HOT_PATH(BM_PeerGaugeSet_Separate);
HOT_PATH(BM_HistogramObserve_Shared);
HOT_PATH(BM_PeerHistogramObserve_Shared);
HOT_PATH(BM_HistogramObserve_Separate);
HOT_PATH(BM_PeerHistogramObserve_Separate);
HOT_PATH(BM_HistogramObserve_1000SeriesRandom);
HOT_PATH(BM_PeerHistogramObserve_1000SeriesRandom);
HOT_PATH(BM_HistogramObserveWithExemplar_Shared);
HOT_PATH(BM_HistogramObserveWithExemplar_Separate);

// ---------------------------------------------------------------- bucket search crossover
// Justifies detail::kLinearSearchMaxBounds: SIMD linear count vs std::lower_bound, same values.
void BM_BucketSearch(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool linear = state.range(1) == 1;
  const std::vector<double> bounds = exponential_buckets(0.001, std::pow(60000.0, 1.0 / static_cast<double>(n)), n);
  const std::vector<double>& v = values();
  std::size_t i = 0;
  std::size_t sink = 0;
  for (auto _ : state) {
    const double x = v[i++ & 4095];
    std::size_t index = linear ? detail::linear_bucket_index(bounds.data(), n, x) : detail::binary_bucket_index(bounds.data(), n, x);
    benchmark::DoNotOptimize(index);
    sink += index;
  }
  benchmark::DoNotOptimize(sink);
  state.SetLabel(linear ? "linear" : "binary");
}
BENCHMARK(BM_BucketSearch)->ArgsProduct({{8, 16, 20, 24, 32, 64}, {1, 0}});

// ---------------------------------------------------------------- lookup of an existing series
void BM_FamilyWith_1Label(benchmark::State& state) {
  CounterFamily& f = fixture().counters;
  for (auto _ : state) {
    f.with({"shared"}).inc();
    benchmark::ClobberMemory();
  }
}
void BM_PeerFamilyAdd_1Label(benchmark::State& state) {
  const PeerLabels labels{{"k", "shared"}};
  for (auto _ : state) {
    fixture().peer_one.add(labels).inc();
    benchmark::ClobberMemory();
  }
}
void BM_FamilyWith_3Labels(benchmark::State& state) {
  CounterFamily& f = fixture().three;
  for (auto _ : state) {
    f.with({"/v1/chat/completions", "200", "llama-3-8b"}).inc();
    benchmark::ClobberMemory();
  }
}
void BM_PeerFamilyAdd_3Labels(benchmark::State& state) {
  const PeerLabels labels{{"a", "/v1/chat/completions"}, {"b", "200"}, {"c", "llama-3-8b"}};
  for (auto _ : state) {
    fixture().peer_three.add(labels).inc();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_FamilyWith_1Label);
BENCHMARK(BM_PeerFamilyAdd_1Label);
BENCHMARK(BM_FamilyWith_3Labels);
BENCHMARK(BM_PeerFamilyAdd_3Labels);

// ---------------------------------------------------------------- rendering 10,000 series
constexpr int kRenderSeries = 10000;

void BM_Render10kCounters(benchmark::State& state) {
  static Registry* registry = [] {
    auto* r = new Registry(RegistryOptions{.max_series_per_family = 20000});
    auto& f = r->counter({.name = "http_requests_total", .help = "Requests.", .label_names = {"route", "code"}});
    for (int i = 0; i < kRenderSeries; ++i) f.with({"/api/v1/item/" + std::to_string(i), "200"}).add(i * 3 + 1);
    return r;
  }();
  std::string out;
  for (auto _ : state) {
    out.clear();
    render(*registry, ExpositionFormat::kPrometheusText004, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["per_series"] =
      benchmark::Counter(kRenderSeries, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["bytes"] = static_cast<double>(out.size());
}
void BM_Render1kHistograms(benchmark::State& state) {
  static Registry* registry = [] {
    auto* r = new Registry();
    auto& f = r->histogram(
        {{.name = "lat_seconds", .help = "Latency.", .label_names = {"route"}}, default_latency_buckets()});
    for (int i = 0; i < 1000; ++i) f.with({"/api/" + std::to_string(i)}).observe(0.001 * i);
    return r;
  }();
  std::string out;
  for (auto _ : state) {
    out.clear();
    render(*registry, ExpositionFormat::kOpenMetrics100, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["per_series"] =
      benchmark::Counter(1000, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_PeerRender10kCounters(benchmark::State& state) {
  static PeerFamily* family = [] {
    auto* f = new PeerFamily();
    for (int i = 0; i < kRenderSeries; ++i) {
      f->add({{"route", "/api/v1/item/" + std::to_string(i)}, {"code", "200"}}).inc(i * 3 + 1);
    }
    return f;
  }();
  std::string out;
  for (auto _ : state) {
    peer_serialize("http_requests_total", *family, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["per_series"] =
      benchmark::Counter(kRenderSeries, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Render10kCounters)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PeerRender10kCounters)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Render1kHistograms)->Unit(benchmark::kMicrosecond);

}  // namespace

// After the runs: peer time / inferscope time for every BM_PeerX that has a BM_X, by wall time per
// call (Google Benchmark's figure) and, for threaded runs, by the calling thread's own time.
int main(int argc, char** argv) {
  fixture();
  many();
  return inferscope::bench::run_benchmarks_with_ratios(argc, argv, [](const inferscope::bench::RatioReporter& r) {
    std::printf("\nPeer (prometheus-cpp approach) / inferscope, same binary:\n");
    for (const std::string& name : r.names()) {
      if (name.rfind("BM_Peer", 0) != 0) continue;
      const std::string ours = "BM_" + name.substr(7);
      inferscope::bench::print_ratio(ours, r.time(ours), r.time(name));
      const double ours_thread = r.counter(ours, "per_thread_ns"), peer_thread = r.counter(name, "per_thread_ns");
      if (name.find("threads:2") != std::string::npos) {
        inferscope::bench::print_ratio(ours + " (per thread)", ours_thread, peer_thread);
      }
    }
    std::printf("\nobserve_with_exemplar / observe, same series:\n");
    for (const std::string& name : r.names()) {
      const std::string with = "BM_HistogramObserveWithExemplar_";
      if (name.rfind(with, 0) != 0) continue;
      const std::string plain = "BM_HistogramObserve_" + name.substr(with.size());
      if (r.time(plain) <= 0) continue;
      std::printf("ratio %-52s with %8.2f ns  plain %8.2f ns  with/plain %6.2fx\n", name.c_str(), r.time(name),
                  r.time(plain), r.time(name) / r.time(plain));
    }
    for (const char* labels : {"1Label", "3Labels"}) {
      inferscope::bench::print_ratio(std::string("BM_FamilyWith_") + labels, r.time(std::string("BM_FamilyWith_") + labels),
                                     r.time(std::string("BM_PeerFamilyAdd_") + labels));
    }
  });
}
