// File: render_json.cpp
// render_json: the Report as JSON (schema_version 1; docs/report.md).
#include <nlohmann/json.hpp>

#include "doctor/diagnosis_format.h"
#include "report/detail/figure_text.h"
#include "report/report.h"

namespace inferscope::report {
namespace {

using detail::unix_of;

nlohmann::json jv(const Value& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json latency_json(const Latency& l) {
  return {{"p50", jv(l.p50)}, {"p95", jv(l.p95)}, {"p99", jv(l.p99)}, {"mean", jv(l.mean)},
          {"has_histogram", l.has_histogram}, {"note", l.note}};
}
nlohmann::json figures_json(const PeriodFigures& f) {
  return {{"e2e_s", latency_json(f.e2e)},
          {"ttft_s", latency_json(f.ttft)},
          {"tpot_s", latency_json(f.tpot)},
          {"requests", jv(f.requests)},
          {"peak_rate_per_s", jv(f.peak_rate)},
          {"peak_rate_at", f.peak_rate ? nlohmann::json(doctor::format_time(f.peak_rate_at)) : nlohmann::json(nullptr)},
          {"error_ratio", jv(f.error_ratio)},
          {"prompt_tokens_per_s", jv(f.prompt_tokens_per_s)},
          {"generation_tokens_per_s", jv(f.generation_tokens_per_s)},
          {"gpu_utilization_mean", jv(f.gpu_util_mean)},
          {"gpu_utilization_max", jv(f.gpu_util_max)}};
}
nlohmann::json points_json(const std::vector<Point>& pts) {
  auto a = nlohmann::json::array();
  for (const auto& p : pts) a.push_back({p.t, p.v});
  return a;
}

}  // namespace

std::string render_json(const Report& r) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["title"] = report_title(r);
  j["period"] = {{"since", doctor::format_time(r.since)}, {"until", doctor::format_time(r.until)}};
  j["previous"] = {{"since", doctor::format_time(r.previous_since)}, {"until", doctor::format_time(r.since)}};
  j["prometheus"] = r.request.prometheus_url;
  j["selector"] = r.request.selector;
  j["model"] = r.request.model;
  j["dialects"] = r.dialects;
  j["has_data"] = r.has_data;
  j["notes"] = r.notes;
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups)
    j["groups"].push_back({{"job", g.job}, {"model", g.model}, {"dialect", g.dialect},
                           {"current", figures_json(g.current)}, {"previous", figures_json(g.previous)}});
  auto queue_json = [](const QueueFigures& f) {
    return nlohmann::json{{"peak_depth", jv(f.peak_depth)},
                          {"peak_depth_at", f.peak_depth ? nlohmann::json(doctor::format_time(f.peak_depth_at))
                                                         : nlohmann::json(nullptr)},
                          {"wait_p95_s", jv(f.wait_p95)}};
  };
  j["queues"] = nlohmann::json::array();
  for (const auto& q : r.queues)
    j["queues"].push_back({{"job", q.job}, {"queue", q.queue}, {"system", q.system},
                           {"current", queue_json(q.current)}, {"previous", queue_json(q.previous)}});
  j["charts"] = {{"step_s", r.chart_step_s}, {"request_rate", points_json(r.rate)},
                 {"p95_e2e_s", points_json(r.p95_e2e)}, {"p99_e2e_s", points_json(r.p99_e2e)}};
  auto hours = nlohmann::json::array();
  for (const auto& h : r.hours.hours)
    hours.push_back({{"hour", h.hour}, {"mean_rate", jv(h.mean_rate)}, {"p95_e2e_s", jv(h.p95_e2e)},
                     {"peak", h.peak}, {"trough", h.trough}, {"over_limit", h.over_slo}});
  j["hour_of_day"] = {{"hours", hours}, {"trough_threshold", r.hours.trough_threshold},
                      {"latency_limit_s", jv(r.hours.latency_limit_s)},
                      {"latency_limit_source", r.hours.latency_limit_source},
                      {"conclusions", r.hours.conclusions}};
  nlohmann::json worst = {{"found", r.worst.found}};
  if (r.worst.found) {
    worst["start"] = doctor::format_time(r.worst.start);
    worst["end"] = doctor::format_time(r.worst.end);
    worst["quantile"] = r.worst.quantile;
    worst["value_s"] = jv(r.worst.value_s);
  }
  worst["diagnosis"] = r.worst.diagnosis ? doctor::to_json(*r.worst.diagnosis) : nlohmann::json(nullptr);
  worst["doctor_error"] = r.worst.doctor_error;
  j["worst_hour"] = worst;
  auto alerts = nlohmann::json::array();
  for (const auto& a : r.alerts.alerts)
    alerts.push_back({{"alertname", a.alertname}, {"labels", a.labels},
                      {"starts_at", doctor::format_time(unix_of(a.starts_at))},
                      {"ends_at", a.ends_at ? nlohmann::json(doctor::format_time(unix_of(*a.ends_at)))
                                            : nlohmann::json(nullptr)}});
  j["alerts"] = {{"available", r.alerts.available}, {"note", r.alerts.note}, {"fired", alerts}};
  j["queries"] = r.queries;
  j["seconds"] = r.seconds;
  return j.dump(2) + "\n";
}

}  // namespace inferscope::report
