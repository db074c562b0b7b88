// File: progress_line.h
// ProgressLine shows a run's progress: on a terminal one line rewritten in place (elapsed,
// done/target, current rate, errors, running p50/p99 TTFT); otherwise a plain line every
// `plain_every` (logs and CI). It only displays: results never depend on it.
// Example: ProgressLine p(stderr, isatty(2)); runner.set_observer(&p);
// Called on the io thread only (RunObserver). Never prints prompts; never blocks on a slow pipe
// for long (one short fprintf per tick).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "loadgen/request_runner.h"

namespace inferscope::bench {

class ProgressLine final : public loadgen::RunObserver {
 public:
  // ProgressLine writes to `out` (kept; must outlive it). `tty` selects in-place updates.
  ProgressLine(std::FILE* out, bool tty, std::chrono::seconds plain_every = std::chrono::seconds(10));

  void on_complete(const loadgen::RequestRecord& record) override;
  void on_tick(const loadgen::RunStatus& status) override;
  // finish ends the in-place line with a newline, or prints the last status as a plain line
  // (call once after the run).
  void finish();

  // format renders one progress line for `status` (exposed for tests).
  std::string format(const loadgen::RunStatus& status);

 private:
  std::FILE* out_;
  bool tty_;
  std::int64_t plain_every_ns_;
  std::int64_t last_plain_ns_ = 0;
  std::int64_t last_tick_ns_ = 0;
  std::uint64_t last_done_ = 0;
  double rate_ = 0;
  std::vector<double> recent_ttft_ms_;  // ring of the latest completions' TTFT
  std::size_t ring_pos_ = 0;
  bool printed_ = false;
  loadgen::RunStatus last_{};
};

}  // namespace inferscope::bench
