// File: figure_text.cpp
#include "report/detail/figure_text.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "common/duration_text.h"

namespace inferscope::report {
namespace detail {
namespace {

std::string peak_depth(const QueueFigures& f) {
  if (!f.peak_depth) return kNoData;
  return depth_text(f.peak_depth) + (f.peak_depth_at > 0 ? " at " + utc(f.peak_depth_at, "%m-%d %H:%M") : "");
}

}  // namespace

std::string utc(double t, const char* format) {
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

double unix_of(std::chrono::system_clock::time_point tp) {
  return std::chrono::duration<double>(tp.time_since_epoch()).count();
}

std::string seconds(const Value& v) { return v ? common::format_seconds_readable(*v) : kNoData; }
std::string ratio_pct(const Value& v) { return v ? common::format_printf("%.2f %%", *v * 100) : kNoData; }
std::string per_s(const Value& v, const char* unit) {
  return v ? common::format_printf("%.3g", *v) + " " + unit : kNoData;
}
std::string count(const Value& v) {
  if (!v) return kNoData;
  return common::format_printf("%.0f", std::round(*v));
}
std::string change(const Value& now, const Value& before) {
  if (!now || !before || *before == 0) return "";
  double c = (*now - *before) / *before * 100;
  if (std::fabs(c) < 0.5) return "0 %";
  return common::format_printf("%+.0f %%", c);
}
std::string quantiles(const Latency& l) {
  if (!l.has_histogram) return l.mean ? "mean " + seconds(l.mean) : kNoData;
  return seconds(l.p50) + " / " + seconds(l.p95) + " / " + seconds(l.p99);
}
std::string length_text(double s) {
  if (s >= 2 * 86400 && std::fmod(s, 86400) == 0) return common::format_printf("%.0f days", s / 86400);
  if (s >= 3600 && std::fmod(s, 3600) == 0) return common::format_printf("%.0f h", s / 3600);
  if (s >= 3600) return common::format_printf("%.1f h", s / 3600);
  return common::format_printf("%.0f min", s / 60);
}
std::string peak(const PeriodFigures& f) {
  if (!f.peak_rate) return kNoData;
  return common::format_printf("%.3g", *f.peak_rate) + " req/s at " + utc(f.peak_rate_at, "%m-%d %H:%M");
}

bool has_traffic(const PeriodFigures& f) {
  return f.requests || f.e2e.mean || f.ttft.mean || f.tpot.mean || f.prompt_tokens_per_s || f.generation_tokens_per_s ||
         f.error_ratio;
}
bool has_gpu(const PeriodFigures& f) { return f.gpu_util_mean || f.gpu_util_max; }

std::string group_name(const GroupReport& g, bool show_job) {
  std::string name = g.model.empty() ? "(no model label)" : g.model;
  if (show_job) name += " (job " + (g.job.empty() ? std::string("?") : g.job) + ")";
  return name + " — " + g.dialect;
}
bool several_jobs(const Report& r) {
  for (const auto& g : r.groups)
    if (g.job != r.groups.front().job) return true;
  return false;
}

std::vector<Row> rows(const GroupReport& g, double chart_step_s) {
  const std::string peak_label = "peak rate (" + common::format_printf("%.0f", std::max(300.0, chart_step_s) / 60) + " min)";
  const auto& c = g.current;
  const auto& p = g.previous;
  std::vector<Row> out = {
      {"requests", count(c.requests), count(p.requests), change(c.requests, p.requests)},
      {peak_label, peak(c), peak(p), change(c.peak_rate, p.peak_rate)},
      {"e2e p50 / p95 / p99", quantiles(c.e2e), quantiles(p.e2e), change(c.e2e.has_histogram ? c.e2e.p95 : c.e2e.mean,
                                                                          p.e2e.has_histogram ? p.e2e.p95 : p.e2e.mean)},
      {"TTFT p50 / p95 / p99", quantiles(c.ttft), quantiles(p.ttft),
       change(c.ttft.has_histogram ? c.ttft.p95 : c.ttft.mean, p.ttft.has_histogram ? p.ttft.p95 : p.ttft.mean)},
      {"TPOT p50 / p95 / p99", quantiles(c.tpot), quantiles(p.tpot),
       change(c.tpot.has_histogram ? c.tpot.p95 : c.tpot.mean, p.tpot.has_histogram ? p.tpot.p95 : p.tpot.mean)},
      {"error ratio", ratio_pct(c.error_ratio), ratio_pct(p.error_ratio), ""},
      {"prompt tokens", per_s(c.prompt_tokens_per_s, "tok/s"), per_s(p.prompt_tokens_per_s, "tok/s"),
       change(c.prompt_tokens_per_s, p.prompt_tokens_per_s)},
      {"generation tokens", per_s(c.generation_tokens_per_s, "tok/s"), per_s(p.generation_tokens_per_s, "tok/s"),
       change(c.generation_tokens_per_s, p.generation_tokens_per_s)},
  };
  return out;
}
std::vector<std::string> latency_notes(const GroupReport& g) {
  std::vector<std::string> out;
  for (const Latency* l : {&g.current.e2e, &g.current.ttft, &g.current.tpot})
    if (!l->note.empty() && std::find(out.begin(), out.end(), l->note) == out.end()) out.push_back(l->note);
  return out;
}

std::string depth_text(const Value& v) { return v ? common::format_printf("%.0f", std::round(*v)) : kNoData; }

std::vector<QueueRow> queue_rows(const Report& r) {
  std::vector<QueueRow> out;
  for (const auto& q : r.queues)
    out.push_back({q.queue, q.system, q.job, peak_depth(q.current), peak_depth(q.previous), seconds(q.current.wait_p95),
                   seconds(q.previous.wait_p95)});
  return out;
}

std::string alert_label(const relay::FiredAlert& a, const char* name) {
  auto it = a.labels.find(name);
  return it == a.labels.end() ? "" : it->second;
}

}  // namespace detail

using detail::utc;

std::string report_title(const Report& r) {
  return "inferscope report " + utc(r.since) + " - " + utc(r.until) + " UTC";
}

}  // namespace inferscope::report
