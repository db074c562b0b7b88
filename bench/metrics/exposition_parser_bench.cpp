// Throughput of parse_exposition (the doctor's direct-scrape path) on real captures, in MB/s.
// Peer baseline: splitting the same bytes into lines with memchr and touching each line, the floor
// for any line-oriented parser; the binary prints parse throughput as a fraction of it.
#include <benchmark/benchmark.h>

#include "ratio_reporter.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "inferscope/metrics/exposition_parser.h"

namespace {

using inferscope::metrics::ExpositionTextFormat;

// source_dir is the checkout CMake configured (not __FILE__: ccache's base_dir makes that
// relative to the build folder); INFERSCOPE_SOURCE_DIR in the environment overrides it.
std::string source_dir() {
  if (const char* env = std::getenv("INFERSCOPE_SOURCE_DIR")) return env;
  return INFERSCOPE_SOURCE_DIR;
}

const std::string& sample(const std::string& name) {
  static std::map<std::string, std::string> cache;
  auto [it, added] = cache.try_emplace(name);
  if (added) {
    std::ifstream in(source_dir() + "/tests/metrics/testdata/" + name, std::ios::binary);
    std::ostringstream body;
    body << in.rdbuf();
    it->second = body.str();
    if (it->second.empty()) {
      std::fprintf(stderr, "cannot read tests/metrics/testdata/%s (set INFERSCOPE_SOURCE_DIR)\n", name.c_str());
      std::exit(1);
    }
  }
  return it->second;
}

void parse_bench(benchmark::State& state, const char* file, ExpositionTextFormat format) {
  const std::string& text = sample(file);
  for (auto _ : state) {
    auto parsed = inferscope::metrics::parse_exposition(text, format);
    if (!parsed) state.SkipWithError(parsed.error().message.c_str());
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void BM_ExpositionParserNodeExporter(benchmark::State& state) {
  parse_bench(state, "node-exporter-1.5-metrics.txt", ExpositionTextFormat::kPrometheus004);
}
BENCHMARK(BM_ExpositionParserNodeExporter);

void BM_ExpositionParserPrometheus(benchmark::State& state) {
  parse_bench(state, "prometheus-2.42-metrics.txt", ExpositionTextFormat::kPrometheus004);
}
BENCHMARK(BM_ExpositionParserPrometheus);

void BM_ExpositionParserOpenMetrics(benchmark::State& state) {
  parse_bench(state, "openmetrics-handwritten.txt", ExpositionTextFormat::kOpenMetrics100);
}
BENCHMARK(BM_ExpositionParserOpenMetrics);

void BM_ExpositionParserValidateNodeExporter(benchmark::State& state) {
  const std::string& text = sample("node-exporter-1.5-metrics.txt");
  auto parsed = inferscope::metrics::parse_exposition(text, ExpositionTextFormat::kPrometheus004);
  for (auto _ : state) {
    auto checked = inferscope::metrics::validate_exposition(*parsed);
    benchmark::DoNotOptimize(checked);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ExpositionParserValidateNodeExporter);

// Peer baseline: memchr line split of the node-exporter capture.
void BM_LineSplitBaselineNodeExporter(benchmark::State& state) {
  const std::string& text = sample("node-exporter-1.5-metrics.txt");
  for (auto _ : state) {
    std::size_t lines = 0;
    std::size_t hashes = 0;
    const char* p = text.data();
    const char* end = text.data() + text.size();
    while (p < end) {
      const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      hashes += *p == '#';
      ++lines;
      p = nl ? static_cast<const char*>(nl) + 1 : end;
    }
    benchmark::DoNotOptimize(lines);
    benchmark::DoNotOptimize(hashes);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_LineSplitBaselineNodeExporter);

}  // namespace

int main(int argc, char** argv) {
  // Parse MB/s as a fraction of the memchr line-split floor.
  return inferscope::bench::run_benchmarks_with_ratios(argc, argv, [](const inferscope::bench::RatioReporter& r) {
    const double parse = r.counter("BM_ExpositionParserNodeExporter", "bytes_per_second");
    const double floor = r.counter("BM_LineSplitBaselineNodeExporter", "bytes_per_second");
    if (parse > 0 && floor > 0) {
      std::printf("node-exporter parse: %.1f MB/s; memchr line split: %.1f MB/s; parse/baseline = %.3f\n",
                  parse / 1e6, floor / 1e6, parse / floor);
    }
  });
}
