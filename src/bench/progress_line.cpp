#include "bench/progress_line.h"

#include <algorithm>

#include <fmt/format.h>

namespace inferscope::bench {
namespace {
constexpr std::size_t kRing = 2048;  // running percentiles over the latest completions

double quantile_of(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}
}  // namespace

ProgressLine::ProgressLine(std::FILE* out, bool tty, std::chrono::seconds plain_every)
    : out_(out), tty_(tty), plain_every_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(plain_every).count()) {}

void ProgressLine::on_complete(const loadgen::RequestRecord& r) {
  if (!r.ok()) return;
  double ttft = static_cast<double>(r.ttft_anchor_ns() - r.started_ns) / 1e6;
  if (recent_ttft_ms_.size() < kRing) {
    recent_ttft_ms_.push_back(ttft);
  } else {
    recent_ttft_ms_[ring_pos_++ % kRing] = ttft;
  }
}

std::string ProgressLine::format(const loadgen::RunStatus& s) {
  std::string done = s.target > 0 ? fmt::format("{}/{}", s.done, s.target) : fmt::format("{}", s.done);
  std::string elapsed = fmt::format("{:.1f}s", static_cast<double>(s.elapsed_ns) / 1e9);
  if (s.duration.count() > 0) elapsed += fmt::format("/{:.0f}s", static_cast<double>(s.duration.count()) / 1e9);
  return fmt::format("[{}] done {} in-flight {} rate {:.1f} req/s errors {} ttft p50 {:.1f} ms p99 {:.1f} ms", elapsed,
                     done, s.in_flight, rate_, s.errors, quantile_of(recent_ttft_ms_, 0.5),
                     quantile_of(recent_ttft_ms_, 0.99));
}

void ProgressLine::on_tick(const loadgen::RunStatus& s) {
  std::int64_t dt = s.elapsed_ns - last_tick_ns_;
  if (dt > 0) rate_ = static_cast<double>(s.done - last_done_) * 1e9 / static_cast<double>(dt);
  last_tick_ns_ = s.elapsed_ns;
  last_done_ = s.done;
  last_ = s;
  if (tty_) {
    std::fprintf(out_, "\r\033[2K%s", format(s).c_str());
    std::fflush(out_);
    printed_ = true;
  } else if (s.elapsed_ns - last_plain_ns_ >= plain_every_ns_) {
    last_plain_ns_ = s.elapsed_ns;
    std::fprintf(out_, "%s\n", format(s).c_str());
    std::fflush(out_);
  }
}

void ProgressLine::finish() {
  if (tty_) {
    if (printed_) std::fprintf(out_, "\n");
  } else {
    std::fprintf(out_, "%s\n", format(last_).c_str());
  }
}

}  // namespace inferscope::bench
