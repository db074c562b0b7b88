// QuantileSketch against its peer, exact quantiles by std::nth_element over a stored vector.
// Add: sketch add vs vector push_back (the peer's only per-value cost). Quantile: sketch quantile
// (O(bins)) vs copy + nth_element over all N values (the peer's cost per query). Prints ratios.
//   ./build/bench/metrics/quantile_sketch_bench
#include <inferscope/metrics/quantile_sketch.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "ratio_reporter.h"

namespace {

using inferscope::metrics::QuantileSketch;

// latencies returns n log-normal latencies (median ~50 ms, long tail), the shape the sketch serves.
std::vector<double> latencies(std::size_t n) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(-3.0, 1.0);
  std::vector<double> values(n);
  for (double& v : values) v = dist(rng);
  return values;
}

void BM_QuantileSketchAdd(benchmark::State& state) {
  const std::vector<double> values = latencies(1 << 16);
  QuantileSketch sketch;
  std::size_t i = 0;
  for (auto _ : state) {
    sketch.add(values[i++ & (values.size() - 1)]);
  }
  benchmark::DoNotOptimize(sketch.count());
}
BENCHMARK(BM_QuantileSketchAdd);

void BM_VectorAdd(benchmark::State& state) {
  const std::vector<double> values = latencies(1 << 16);
  std::vector<double> stored;
  stored.reserve(1 << 20);
  std::size_t i = 0;
  for (auto _ : state) {
    if (stored.size() == (1u << 20)) stored.clear();  // bounded memory; amortised like a real store
    stored.push_back(values[i++ & (values.size() - 1)]);
  }
  benchmark::DoNotOptimize(stored.data());
}
BENCHMARK(BM_VectorAdd);

void BM_QuantileSketchQuantile(benchmark::State& state) {
  QuantileSketch sketch;
  for (double v : latencies(static_cast<std::size_t>(state.range(0)))) sketch.add(v);
  for (auto _ : state) benchmark::DoNotOptimize(sketch.quantile(0.99));
  state.counters["bins"] = static_cast<double>(sketch.bin_count());
}
BENCHMARK(BM_QuantileSketchQuantile)->Arg(10000)->Arg(1000000);

void BM_NthElementQuantile(benchmark::State& state) {
  const std::vector<double> stored = latencies(static_cast<std::size_t>(state.range(0)));
  std::vector<double> scratch(stored.size());
  for (auto _ : state) {
    // nth_element reorders, so each query starts from the stored order, as a live store would.
    std::copy(stored.begin(), stored.end(), scratch.begin());
    auto nth = scratch.begin() + static_cast<std::ptrdiff_t>(0.99 * static_cast<double>(scratch.size() - 1));
    std::nth_element(scratch.begin(), nth, scratch.end());
    benchmark::DoNotOptimize(*nth);
  }
}
BENCHMARK(BM_NthElementQuantile)->Arg(10000)->Arg(1000000);

}  // namespace

int main(int argc, char** argv) {
  // Sketch time / peer time per pair of benchmarks.
  return inferscope::bench::run_benchmarks_with_ratios(argc, argv, [](const inferscope::bench::RatioReporter& r) {
    auto ratio = [&](const char* what, const std::string& ours, const std::string& peer) {
      const double a = r.time(ours), b = r.time(peer);
      if (a <= 0 || b <= 0) return;  // filtered out
      std::printf("ratio %-15s sketch %10.1f ns  peer %12.1f ns  sketch/peer %.4f\n", what, a, b, a / b);
    };
    ratio("add", "BM_QuantileSketchAdd", "BM_VectorAdd");
    ratio("quantile n=1e4", "BM_QuantileSketchQuantile/10000", "BM_NthElementQuantile/10000");
    ratio("quantile n=1e6", "BM_QuantileSketchQuantile/1000000", "BM_NthElementQuantile/1000000");
  });
}
