// File: report/detail/figure_text.h
// The report's figures as text, shared by its renderers (render_markdown.cpp, render_chat.cpp,
// render_html.cpp, render_json.cpp): times, seconds, ratios and changes ("no data" for a missing
// figure, never 0), the per-model table rows and the job queues' rows. The text is not yet escaped
// for any format: each renderer escapes what came from outside (model, job, alert labels).
// DO NOT INCLUDE THIS FILE DIRECTLY outside src/report. Pure functions, thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "relay/fired_alerts.h"
#include "report/report.h"

namespace inferscope::report::detail {

inline constexpr const char* kNoData = "no data";

// utc formats Unix seconds `t` in UTC with strftime's `format`.
std::string utc(double t, const char* format = "%Y-%m-%d %H:%M");
double unix_of(std::chrono::system_clock::time_point tp);

std::string seconds(const Value& v);
std::string ratio_pct(const Value& v);
std::string per_s(const Value& v, const char* unit);
std::string count(const Value& v);
// change is "+33 %", "0 %" under half a percent, or "" when either period lacks the figure.
std::string change(const Value& now, const Value& before);
// quantiles is "p50 / p95 / p99", or the mean where the dialect has no histogram.
std::string quantiles(const Latency& l);
// length_text is a period's length: "7 days", "24 h", "1.5 h", "30 min".
std::string length_text(double s);
std::string peak(const PeriodFigures& f);

bool has_traffic(const PeriodFigures& f);
bool has_gpu(const PeriodFigures& f);
std::string group_name(const GroupReport& g, bool show_job);
bool several_jobs(const Report& r);

// Row is one row of a model's table: label, current, previous, change.
struct Row {
  std::string what, now, before, delta;
};
std::vector<Row> rows(const GroupReport& g, double chart_step_s);
std::vector<std::string> latency_notes(const GroupReport& g);

// The job queues' table: one row per queue, this period and the one before.
std::string depth_text(const Value& v);
struct QueueRow {
  std::string queue, system, job, peak, peak_before, wait, wait_before;
};
std::vector<QueueRow> queue_rows(const Report& r);
inline constexpr const char* kQueueColumns[] = {"queue", "system", "job", "peak depth", "previous", "wait p95", "previous"};

std::string alert_label(const relay::FiredAlert& a, const char* name);

}  // namespace inferscope::report::detail
