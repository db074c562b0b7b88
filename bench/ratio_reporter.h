// File: ratio_reporter.h
// RatioReporter is the one Google Benchmark reporter of inferscope's micro-benchmarks: it prints
// the usual console table, keeps each run's adjusted real time and counters by benchmark name, and
// after the last run calls the binary's own function that prints ratios against its peer runs.
// Example: int main(int c, char** v) { return run_benchmarks_with_ratios(c, v, [](const RatioReporter& r) {
//            print_ratio("add", r.time("BM_Ours"), r.time("BM_Peer")); }); }
// Single-threaded (Google Benchmark reports from its main thread). Never affects what is timed.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

namespace inferscope::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  using PrintRatios = std::function<void(const RatioReporter&)>;

  // RatioReporter calls `print_ratios` once, after the console table is complete.
  explicit RatioReporter(PrintRatios print_ratios) : print_ratios_(std::move(print_ratios)) {}

  // ConsoleReporter
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // time returns the adjusted real time per iteration of `name` (its full benchmark name, e.g.
  // "BM_X/real_time/threads:2"), or 0 when that benchmark did not run (filtered out).
  double time(const std::string& name) const;
  // counter returns counter `counter` of `name`, or 0 when absent.
  double counter(const std::string& name, const std::string& counter) const;
  // names lists every benchmark that ran, sorted.
  std::vector<std::string> names() const;

 private:
  struct Figures {
    double time = 0;
    std::map<std::string, double> counters;
  };
  PrintRatios print_ratios_;
  std::map<std::string, Figures> runs_;
};

// print_ratio prints "ratio <what>: ours <a> peer <b> peer/ours <r>x" when both ran.
void print_ratio(const std::string& what, double ours, double peer, const char* unit = "ns");

// run_benchmarks_with_ratios is a benchmark main(): initialize, reject unknown flags (exit 1), run
// everything selected through a RatioReporter, shut down. Returns the process exit status.
int run_benchmarks_with_ratios(int argc, char** argv, RatioReporter::PrintRatios print_ratios);

}  // namespace inferscope::bench
