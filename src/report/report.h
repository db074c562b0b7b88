// File: report.h
// `inferscope report` as a library: build_report gathers, over the Prometheus HTTP API (the one
// promapi client, queries built from the dialect table), the figures of a period [since, until)
// and of the period of equal length before it: per model (and job) p50/p95/p99 of e2e, TTFT and
// TPOT, request volume, peak request rate, error ratio, token throughput, GPU utilization; per job
// queue (up's redis targets) the peak depth and the wait p95; the
// alerts the relay stored as fired; the doctor's findings for the worst hour; and an hour-of-day
// profile saying when capacity can shrink or must grow. Renderers give Markdown (chat-sized),
// one self-contained HTML file (inline CSS + SVG, no URL fetched at view time) and JSON.
// Example: auto r = build_report({.prometheus_url = "http://127.0.0.1:9090"});
//          if (r) std::cout << render_markdown(*r);
// Thread-safe (no shared state); build_report blocks (a few dozen queries, 8 at a time). Never throws.
// Missing data is std::nullopt everywhere and renders as "no data", never as 0.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "doctor/diagnosis.h"
#include "inferscope/common/result.h"
#include "net/blocking_client.h"
#include "relay/notification.h"

namespace inferscope::report {

// ReportRequest says what to report on. Times are Unix seconds.
struct ReportRequest {
  std::string prometheus_url;
  double since = 0, until = 0;  // 0 = until - 24h / now
  std::string selector, model, state_dir;  // selector: '{job="x"}'; state_dir: where up keeps relay.db
  double slo_p95_e2e_s = 0;     // p95 e2e objective for the hour-of-day profile; 0 = none (see docs/report.md)
  net::TlsOptions tls = {};     // for an https:// Prometheus (--ca-file, --insecure)
};

using Value = std::optional<double>;  // nullopt = no data (never rendered as 0)

// Latency is one latency role over one period, in seconds (TPOT: seconds per output token).
struct Latency {
  Value p50, p95, p99;
  Value mean;                // sum/count over the period (histograms) or counter-pair mean
  bool has_histogram = false;  // false: the dialect has no histogram; only `mean` can be known
  std::string note;          // e.g. "llama.cpp: mean from counter pairs, no quantiles"
};

// PeriodFigures are the figures of one group (job, model) over one period.
struct PeriodFigures {
  Latency e2e, ttft, tpot;
  Value requests;            // finished requests in the period (count)
  Value peak_rate;           // max of the request rate over a short window (requests/s)
  double peak_rate_at = 0;   // Unix seconds when the peak happened (0 when peak_rate is unknown)
  Value error_ratio;         // failed / all requests, 0..1
  Value prompt_tokens_per_s, generation_tokens_per_s;  // mean over the period
  Value gpu_util_mean, gpu_util_max;                   // 0..1, when a GPU dialect is scraped
};

// GroupReport is one (job, model) with its dialect, the period and the period before.
struct GroupReport {
  std::string job;     // "" when the report has one job
  std::string model;   // "" when the dialect has no model label
  std::string dialect; // "inferscope", "vllm", "llamacpp", ...
  PeriodFigures current, previous;
};

// QueueFigures are one job queue's figures over one period (up's queue collector, docs/queues.md).
struct QueueFigures {
  Value peak_depth;          // most jobs waiting at once (the collector's samples)
  double peak_depth_at = 0;  // Unix seconds, end of the chart step that held the peak (0 when unknown)
  Value wait_p95;            // enqueue -> start, seconds; nullopt: no job seen starting, or the
                             // queue system cannot tell (Celery, plain lists)
};

// QueueReport is one queue of a queue target: its figures in the period and the period before.
struct QueueReport {
  std::string job, queue, system;  // job: the redis target's name
  QueueFigures current, previous;
};

// Point is one sample of a chart series; series skip missing samples (gaps are drawn as gaps).
struct Point {
  double t = 0;
  double v = 0;
};

// HourRow is one hour of day (UTC) over the period.
struct HourRow {
  int hour = 0;
  Value mean_rate;   // requests/s averaged over every occurrence of this hour in the period
  Value p95_e2e;     // mean of the hourly p95 e2e values of this hour (seconds)
  bool peak = false, trough = false, over_slo = false;
};

// numbered_hours returns the 24 rows of a day labelled 00..23, without data.
constexpr std::array<HourRow, 24> numbered_hours() {
  std::array<HourRow, 24> rows{};
  for (int h = 0; h < 24; ++h) rows[h].hour = h;
  return rows;
}

// HourProfile is the hour-of-day table with the conclusions derived from it.
struct HourProfile {
  std::array<HourRow, 24> hours = numbered_hours();  // labelled even where nothing was derived
  double trough_threshold = 0.30;   // load < 30 % of the peak hour's load: capacity can shrink
  Value latency_limit_s;            // p95 above this: capacity must grow (SLO, or derived)
  std::string latency_limit_source; // "--slo-p95" or "1.5 x the median hourly p95"
  std::vector<std::string> conclusions;  // "capacity can shrink 02:00-06:00 (load < 30 % of peak)"
};

// WorstHour is the hour with the highest e2e p99 (p95 when p99 is missing) and the doctor's answer.
struct WorstHour {
  bool found = false;
  double start = 0, end = 0;
  std::string quantile;  // "p99" or "p95"
  Value value_s;
  std::optional<doctor::Diagnosis> diagnosis;  // run_doctor, window 1 h at `end`
  std::string doctor_error;                    // why there is no diagnosis
};

// AlertHistory is what the relay stored as fired during the period.
struct AlertHistory {
  bool available = false;        // false: no state dir or no database; `note` says why
  std::string note;
  std::vector<relay::FiredAlert> alerts;
};

// Report is everything the renderers print.
struct Report {
  ReportRequest request;         // with since/until resolved
  double since = 0, until = 0;   // the period
  double previous_since = 0;     // the period before: [previous_since, since)
  std::string dialects;          // detected, "+"-joined
  std::vector<GroupReport> groups;
  std::vector<QueueReport> queues;  // job queues in front of the servers (none: no queue target)
  double chart_step_s = 0;
  std::vector<Point> rate, p95_e2e, p99_e2e;  // over the period, all groups together
  HourProfile hours;
  WorstHour worst;
  AlertHistory alerts;
  bool has_data = false;          // false: no request series in the period at all
  std::vector<std::string> notes; // what is missing and why
  int queries = 0;                // Prometheus queries made
  double seconds = 0;             // time taken to gather
};

// build_report gathers the report. Errors: a bad request (names the field), Prometheus unreachable
// or refusing the queries. A period without data is not an error: has_data is false.
Result<Report> build_report(const ReportRequest& request);

// render_markdown: a few KB of Markdown with tables (terminal, webhook, email text part; chat robots get render_chat).
std::string render_markdown(const Report& report);

// render_chat: the report for chat robots (DingTalk, Feishu/Lark, WeCom, Slack), which do not
// render Markdown tables: no table and no heading, one short line per figure per model
// ("- e2e p95 1.20 s (was 900 ms, +33 %)"), blocks split by blank lines; a few hundred bytes per
// model (8 models fit WeCom's 4096).
// The relay sends it to robot channels (relay::Document::chat) and cuts it to their size limit.
std::string render_chat(const Report& report);

// render_html: one self-contained HTML document (inline CSS, inline SVG charts, no script, no URL).
std::string render_html(const Report& report);

// render_json: the Report as JSON (schema_version 1; docs/report.md).
std::string render_json(const Report& report);

// report_title: "inferscope report 2026-11-29 09:00 - 2026-11-30 09:00 UTC".
std::string report_title(const Report& report);

}  // namespace inferscope::report
