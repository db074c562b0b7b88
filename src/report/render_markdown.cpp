// File: render_markdown.cpp
// render_markdown: the report as Markdown tables (terminal, webhook, email text part). Every label
// value that came from outside is escaped (md).
#include <algorithm>

#include "common/duration_text.h"
#include "doctor/diagnosis_format.h"
#include "report/detail/figure_text.h"
#include "report/report.h"

namespace inferscope::report {
namespace {

using detail::alert_label;
using detail::change;
using detail::group_name;
using detail::has_gpu;
using detail::has_traffic;
using detail::kNoData;
using detail::kQueueColumns;
using detail::latency_notes;
using detail::length_text;
using detail::peak;
using detail::queue_rows;
using detail::ratio_pct;
using detail::rows;
using detail::seconds;
using detail::several_jobs;
using detail::unix_of;
using detail::utc;
std::string md(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') out += ' ';
    else if (c == '|' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']' || c == '<' || c == '>' || c == '\\') {
      out += '\\';
      out += c;
    } else out += c;
  }
  return out;
}

// any_hour_data: whether some hour of day has a rate or a p95 (else its table is 24 empty rows).
bool any_hour_data(const HourProfile& p) {
  return std::any_of(p.hours.begin(), p.hours.end(), [](const HourRow& h) { return h.mean_rate || h.p95_e2e; });
}

}  // namespace

std::string render_markdown(const Report& r) {
  std::string o = "## " + report_title(r) + "\n\n";
  o += "Compared with the " + length_text(r.until - r.since) + " before (" + utc(r.previous_since) +
       " - " + utc(r.since) + "). Source: Prometheus " + md(r.request.prometheus_url);
  if (!r.request.selector.empty()) o += ", selector " + md(r.request.selector);
  if (!r.request.model.empty()) o += ", model " + md(r.request.model);
  o += (r.dialects.empty() ? "" : ", dialect " + md(r.dialects)) + ".\n\n";
  for (const auto& n : r.notes) o += "- " + md(n) + "\n";
  if (!r.notes.empty()) o += "\n";
  const bool jobs = several_jobs(r);
  for (const auto& g : r.groups) {
    if (!has_traffic(g.current) && !has_traffic(g.previous)) continue;
    o += "### " + md(group_name(g, jobs)) + "\n\n| | this period | previous | change |\n|---|---|---|---|\n";
    for (const auto& row : rows(g, r.chart_step_s)) o += "| " + row.what + " | " + row.now + " | " + row.before + " | " + row.delta + " |\n";
    for (const auto& n : latency_notes(g)) o += "\n_" + md(n) + "_\n";
    o += "\n";
  }
  bool gpu = false;
  for (const auto& g : r.groups)
    if (has_gpu(g.current) || has_gpu(g.previous)) {
      if (!gpu) o += "### GPU utilization\n\n| job | mean | max | previous mean | previous max |\n|---|---|---|---|---|\n";
      gpu = true;
      o += "| " + md(g.job) + " | " + ratio_pct(g.current.gpu_util_mean) + " | " + ratio_pct(g.current.gpu_util_max) +
           " | " + ratio_pct(g.previous.gpu_util_mean) + " | " + ratio_pct(g.previous.gpu_util_max) + " |\n";
    }
  if (gpu) o += "\n";
  if (!r.queues.empty()) {
    o += "### Job queues\n\n|";
    for (const char* c : kQueueColumns) o += std::string(" ") + c + " |";
    o += "\n|---|---|---|---|---|---|---|\n";
    for (const auto& q : queue_rows(r))
      o += "| " + md(q.queue) + " | " + md(q.system) + " | " + md(q.job) + " | " + q.peak + " | " + q.peak_before +
           " | " + q.wait + " | " + q.wait_before + " |\n";
    o += "\n";
  }

  o += "### Alerts that fired\n\n";
  if (!r.alerts.available) o += md(r.alerts.note) + "\n\n";
  else if (r.alerts.alerts.empty()) o += "none (" + md(r.alerts.note) + ")\n\n";
  else {
    o += "| alert | severity | started | ended |\n|---|---|---|---|\n";
    for (const auto& a : r.alerts.alerts)
      o += "| " + md(a.alertname) + " | " + md(alert_label(a, "severity")) + " | " + utc(unix_of(a.starts_at)) + " | " +
           (a.ends_at ? utc(unix_of(*a.ends_at)) : std::string("still firing")) + " |\n";
    o += "\n";
  }

  o += "### Worst hour\n\n";
  if (!r.worst.found) {
    o += "none: " + md(r.worst.doctor_error.empty() ? "no data" : r.worst.doctor_error) + "\n\n";
  } else {
    o += utc(r.worst.start) + " - " + utc(r.worst.end, "%H:%M") + " UTC: e2e " + r.worst.quantile + " " +
         seconds(r.worst.value_s) + ".\n\n";
    if (r.worst.diagnosis) o += doctor::to_markdown(*r.worst.diagnosis, 1500) + "\n";
    else o += "The doctor could not run: " + md(r.worst.doctor_error) + "\n\n";
  }

  o += "### Hour of day (UTC)\n\n";
  for (const auto& c : r.hours.conclusions) o += "- " + c + "\n";  // built from numbers only
  if (!any_hour_data(r.hours)) return o + (r.hours.conclusions.empty() ? "no data for any hour\n" : "");
  o += "\n| hour | req/s | p95 e2e | |\n|---|---|---|---|\n";
  for (const auto& h : r.hours.hours) {
    std::string flags = std::string(h.peak ? "peak " : "") + (h.trough ? "trough " : "") + (h.over_slo ? "over limit" : "");
    o += "| " + common::format_printf("%02.0f", h.hour) + " | " + (h.mean_rate ? common::format_printf("%.3g", *h.mean_rate) : kNoData) +
         " | " + seconds(h.p95_e2e) + " | " + flags + " |\n";
  }
  return o;
}

}  // namespace inferscope::report
