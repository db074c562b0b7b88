#include "ratio_reporter.h"

#include <cstdio>

namespace inferscope::bench {

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    // Plain runs, or the median when --benchmark_repetitions reports aggregates.
    if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
    std::string name = run.run_type == Run::RT_Aggregate ? run.run_name.str() : run.benchmark_name();
    Figures& f = runs_[name];
    f.time = run.GetAdjustedRealTime();
    for (const auto& [key, c] : run.counters) f.counters[key] = c.value;
  }
}

void RatioReporter::Finalize() {
  ConsoleReporter::Finalize();
  if (print_ratios_) print_ratios_(*this);
  std::fflush(stdout);
}

double RatioReporter::time(const std::string& name) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? 0 : it->second.time;
}

double RatioReporter::counter(const std::string& name, const std::string& counter) const {
  auto it = runs_.find(name);
  if (it == runs_.end()) return 0;
  auto c = it->second.counters.find(counter);
  return c == it->second.counters.end() ? 0 : c->second;
}

std::vector<std::string> RatioReporter::names() const {
  std::vector<std::string> out;
  for (const auto& [name, figures] : runs_) out.push_back(name);
  return out;
}

void print_ratio(const std::string& what, double ours, double peer, const char* unit) {
  if (ours <= 0 || peer <= 0) return;  // one side filtered out
  std::printf("ratio %-40s ours %12.2f %s  peer %12.2f %s  peer/ours %8.2fx\n", what.c_str(), ours, unit, peer, unit,
              peer / ours);
}

int run_benchmarks_with_ratios(int argc, char** argv, RatioReporter::PrintRatios print_ratios) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter(std::move(print_ratios));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace inferscope::bench
