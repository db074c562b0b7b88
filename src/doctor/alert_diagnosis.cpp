// The record a firing alert's diagnosis leaves for its resolved notification, and the
// before / during / after text made from it.
#include "doctor/alert_diagnosis.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "common/duration_text.h"
#include "common/prom_duration.h"
#include "dialect/promql.h"
#include "doctor/diagnosis_format.h"
#include "promapi/prometheus_client.h"
#include "common/unix_time.h"

namespace inferscope::doctor {
namespace {

using nlohmann::json;

constexpr const char* kE2eMean = "e2e mean";
constexpr const char* kE2eP95 = "e2e p95";
constexpr const char* kPerRequest = " per request";
constexpr const char* kAlertExpression = " (the alert's expression)";
// A job queue in front (up's queue collector): what waits at each span's end, the instant the
// page's queue chart shows there (the baseline's end, the firing, the resolve), and the queue's
// wait over each span.
constexpr const char* kQueueDepthAtEnd = "jobs waiting (at each span's end)";
constexpr const char* kQueueAgeAtEnd = "oldest waiting job's age (at each span's end)";
constexpr const char* kQueueWaitMean = "queue wait mean";

json json_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double number_from(const json& j) { return j.is_number() ? j.get<double>() : kNaN; }

std::string figure_text(double v, const std::string& unit) {
  if (std::isnan(v)) return "no data";
  if (v == 0) return unit == "s" ? "0 s" : "0";  // an empty queue's age, not "0 us"
  return unit == "s" ? common::format_seconds_readable(v) : common::format_number_readable(v);
}

// request_for narrows the doctor to the alert's job and model, as the notification's labels say.
DoctorRequest request_for(const std::string& url, const std::map<std::string, std::string>& labels) {
  DoctorRequest request;
  request.prometheus_url = url;
  if (auto job = labels.find("job"); job != labels.end()) request.selector = "{job=" + dialect::promql_string(job->second) + "}";
  for (const char* key : {"model", "model_name"})
    if (auto m = labels.find(key); m != labels.end()) request.model = m->second;
  return request;
}

// stage_per_request returns a stage's seconds per finished request in the baseline or the window
// (read from the snapshot: a window with too few requests for a verdict still has its figures).
double stage_per_request(const Diagnosis& d, const std::string& stage, bool incident) {
  auto it = d.snapshot.stages.find(stage);
  if (it == d.snapshot.stages.end()) return kNaN;
  return incident ? it->second.incident.per_request : it->second.baseline.per_request;
}

// e2e returns the end-to-end latency in the baseline or the window (empty when not exposed).
WindowStat e2e(const Diagnosis& d, bool incident) {
  const Quantity* q = d.snapshot.find(SignalId::kE2e);
  return q == nullptr ? WindowStat{} : incident ? q->incident : q->baseline;
}

// last_sample returns a gauge's last sample in the baseline or the window (NaN when none).
double last_sample(const Diagnosis& d, SignalId id, bool incident) {
  const Quantity* q = d.snapshot.find(id);
  if (q == nullptr) return kNaN;
  const auto& v = (incident ? q->incident : q->baseline).intervals;
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    if (!std::isnan(*it)) return *it;
  return kNaN;
}

// queue_wait_mean returns the queue's mean wait in the baseline or the window (NaN when none).
double queue_wait_mean(const Diagnosis& d, bool incident) {
  const Quantity* q = d.snapshot.find(dialect::Role::kQueueWait);
  return q == nullptr ? kNaN : (incident ? q->incident : q->baseline).mean;
}

// alert_value evaluates `expr` at `at` and returns the value of the series the alert was for
// (every label the series shares with the alert agrees); NaN when none.
double alert_value(const promapi::PrometheusClient& client, const std::string& expr, double at,
                   const std::map<std::string, std::string>& alert_labels) {
  auto result = client.query(expr, at);
  if (!result) return kNaN;
  for (const promapi::Series& s : result->series) {
    bool same = true;
    for (const auto& [key, value] : s.labels) {
      auto it = alert_labels.find(key);
      if (key != "__name__" && it != alert_labels.end() && it->second != value) same = false;
    }
    if (same && !s.points.empty()) return s.points.back().value;
  }
  return kNaN;
}

std::string url_query_value(const std::string& url, const std::string& key) {
  const auto q = url.find('?');
  if (q == std::string::npos) return {};
  std::string_view rest = std::string_view(url).substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && url_decode(pair.substr(0, eq)) == key) return url_decode(pair.substr(eq + 1));
  }
  return {};
}

}  // namespace

std::string alert_expression(const std::string& generator_url) {
  const std::string expr = url_query_value(generator_url, "g0.expr");
  // The last comparison outside parentheses, braces and quotes whose right side is one number.
  int depth = 0;
  bool quoted = false;
  std::size_t cut = std::string::npos, rhs = std::string::npos;
  for (std::size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    else if (c == '(' || c == '{' || c == '[') ++depth;
    else if (c == ')' || c == '}' || c == ']') --depth;
    else if (depth == 0 && (c == '>' || c == '<' || (c == '=' && i + 1 < expr.size() && expr[i + 1] == '=') ||
                            (c == '!' && i + 1 < expr.size() && expr[i + 1] == '='))) {
      cut = i;
      rhs = i + ((i + 1 < expr.size() && expr[i + 1] == '=') ? 2 : 1);
      i = rhs - 1;
    }
  }
  if (cut == std::string::npos) return {};
  std::string right = expr.substr(rhs);
  if (right.starts_with(" bool")) right = right.substr(5);
  char* end = nullptr;
  std::strtod(right.c_str(), &end);
  if (end == right.c_str() || std::string_view(end).find_first_not_of(" \t\n") != std::string_view::npos) return {};
  std::string left = expr.substr(0, cut);
  while (!left.empty() && std::isspace(static_cast<unsigned char>(left.back()))) left.pop_back();
  return left;
}

std::string record_to_json(const FiringRecord& r) {
  json figures = json::array();
  for (const RecoveredFigure& f : r.figures)
    figures.push_back({{"name", f.name}, {"unit", f.unit}, {"before", json_or_null(f.before)}, {"during", json_or_null(f.during)}});
  return json({{"selector", r.selector}, {"model", r.model}, {"fired_at", json_or_null(r.fired_at)},
               {"window_s", r.window_s}, {"baseline_s", r.baseline_s}, {"cause", r.cause}, {"stage", r.stage},
               {"alert_expr", r.alert_expr}, {"alert_labels", r.alert_labels}, {"figures", figures}})
      .dump();
}

std::optional<FiringRecord> record_from_json(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("figures") || !j["figures"].is_array()) return std::nullopt;
  FiringRecord r;
  try {
    r.selector = j.value("selector", "");
    r.model = j.value("model", "");
    r.fired_at = number_from(j.value("fired_at", json()));
    r.window_s = j.value("window_s", 300.0);
    r.baseline_s = j.value("baseline_s", 1800.0);
    r.cause = j.value("cause", "");
    r.stage = j.value("stage", "");
    r.alert_expr = j.value("alert_expr", "");
    r.alert_labels = j.value("alert_labels", std::map<std::string, std::string>{});
    for (const json& f : j["figures"])
      r.figures.push_back({f.value("name", ""), f.value("unit", ""), number_from(f.value("before", json())),
                           number_from(f.value("during", json()))});
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return r;
}

AlertDiagnosis diagnose_alert(const std::string& prometheus_url, const std::map<std::string, std::string>& labels,
                              const std::string& generator_url, double at, std::size_t max_bytes,
                              const net::TlsOptions& tls, const CustomTargets& custom_targets,
                              const std::string& traces_url) {
  DoctorRequest request = request_for(prometheus_url, labels);
  request.traces_url = traces_url;
  request.tls = tls;
  request.custom_targets = custom_targets;
  request.at = at > 0 ? at : common::unix_now_s();
  auto diagnosis = run_doctor(request);
  if (!diagnosis) return {"_Doctor could not run: " + diagnosis.error().message + "_\n", ""};
  const Diagnosis& d = *diagnosis;
  FiringRecord r;
  r.selector = request.selector;
  r.model = request.model;
  r.fired_at = request.at;
  // The windows the doctor used (shorter on a young stack, fit_to_history), else the requested ones.
  const double window_s = d.snapshot.incident_end - d.snapshot.incident_start;
  const double baseline_s = d.snapshot.baseline_end - d.snapshot.baseline_start;
  r.window_s = window_s > 0 ? window_s : request.window_s;
  r.baseline_s = baseline_s > 0 ? baseline_s : request.baseline_s;
  if (!d.findings.empty()) {
    r.cause = d.findings.front().cause;
    r.stage = d.findings.front().stage;
  }
  r.alert_expr = alert_expression(generator_url);
  r.alert_labels = labels;
  if (!r.alert_expr.empty()) {
    if (auto client = promapi::PrometheusClient::create(prometheus_url, {.tls = tls}); client) {
      const double start = r.fired_at - r.window_s;
      const std::string baseline_avg = "avg_over_time((" + r.alert_expr + ")[" +
                                       std::to_string(std::lround(r.baseline_s)) + "s:" +
                                       std::to_string(std::max(1L, std::lround(r.baseline_s / 60))) + "s])";
      const std::string unit = r.alert_expr.find("_seconds") != std::string::npos ? "s" : "";
      r.figures.push_back({r.alert_expr + kAlertExpression, unit, alert_value(*client, baseline_avg, start, labels),
                           alert_value(*client, r.alert_expr, r.fired_at, labels)});
    }
  }
  // A finding on e2e itself (a target without stages) has no stage figure beside e2e's.
  if (d.snapshot.stages.count(r.stage) != 0)
    r.figures.push_back({r.stage + kPerRequest, "s", stage_per_request(d, r.stage, false), stage_per_request(d, r.stage, true)});
  if (d.snapshot.find(SignalId::kQueueDepth) != nullptr) {
    r.figures.push_back({kQueueDepthAtEnd, "", last_sample(d, SignalId::kQueueDepth, false),
                         last_sample(d, SignalId::kQueueDepth, true)});
    if (d.snapshot.find(SignalId::kQueueOldestAge) != nullptr)
      r.figures.push_back({kQueueAgeAtEnd, "s", last_sample(d, SignalId::kQueueOldestAge, false),
                           last_sample(d, SignalId::kQueueOldestAge, true)});
    r.figures.push_back({kQueueWaitMean, "s", queue_wait_mean(d, false), queue_wait_mean(d, true)});
  }
  r.figures.push_back({kE2eMean, "s", e2e(d, false).mean, e2e(d, true).mean});
  r.figures.push_back({kE2eP95, "s", e2e(d, false).p95, e2e(d, true).p95});
  return {to_markdown(d, max_bytes), record_to_json(r)};
}

std::string render_recovery(const FiringRecord& r, double resolved_at, const std::string& after_note) {
  // A figure with no value at any time tells the reader nothing (the server behind a queue whose
  // workers stopped served no request to time): it is left out, and with no figure left, the part.
  std::vector<const RecoveredFigure*> shown;
  for (const RecoveredFigure& f : r.figures)
    if (!std::isnan(f.before) || !std::isnan(f.during) || (after_note.empty() && !std::isnan(f.after))) shown.push_back(&f);
  if (shown.empty()) return {};
  std::string out = "It fired with ";
  out += r.cause.empty() ? "no cause named by the doctor" : "`" + r.cause + "`" + (r.stage.empty() ? "" : " (stage " + r.stage + ")");
  out += "; before / during / after:\n";
  for (const RecoveredFigure* figure : shown) {
    const RecoveredFigure& f = *figure;
    out += "- " + (f.name.ends_with(kAlertExpression) ? "`" + f.name.substr(0, f.name.size() - std::strlen(kAlertExpression)) +
                                                            "`" + kAlertExpression
                                                      : f.name);
    out += ": before " + figure_text(f.before, f.unit) + ", during " + figure_text(f.during, f.unit) + ", after " +
           (after_note.empty() ? figure_text(f.after, f.unit) : "unknown") + "\n";
  }
  const auto span = [](double s) {
    return common::format_prom_duration(std::chrono::milliseconds(std::llround(std::max(0.0, s) * 1000)));
  };
  out += "_before: the " + span(r.baseline_s) + " before the window; during: the " + span(r.window_s) + " up to " +
         format_time(r.fired_at) + " (when it fired); after: the " + span(r.window_s) + " up to " +
         format_time(resolved_at) + "_\n";
  if (!after_note.empty()) out += "_after unknown: " + after_note + "_\n";
  return out;
}

std::string recovery_markdown(const std::string& prometheus_url, const std::string& record, double at,
                              const net::TlsOptions& tls, const CustomTargets& custom_targets) {
  if (record.empty()) return {};
  auto r = record_from_json(record);
  if (!r) return {};
  const double resolved_at = at > 0 ? at : common::unix_now_s();
  DoctorRequest request;
  request.prometheus_url = prometheus_url;
  request.tls = tls;
  request.custom_targets = custom_targets;
  request.selector = r->selector;
  request.model = r->model;
  request.at = resolved_at;
  request.window_s = r->window_s;
  request.baseline_s = r->baseline_s;
  auto after = run_doctor(request);
  if (!after) return render_recovery(*r, resolved_at, after.error().message);
  std::optional<promapi::PrometheusClient> client;
  if (!r->alert_expr.empty())
    if (auto c = promapi::PrometheusClient::create(prometheus_url, {.tls = tls}); c) client.emplace(std::move(*c));
  for (RecoveredFigure& f : r->figures) {
    if (f.name == kE2eMean) f.after = e2e(*after, true).mean;
    else if (f.name == kE2eP95) f.after = e2e(*after, true).p95;
    else if (f.name.ends_with(kAlertExpression)) f.after = client ? alert_value(*client, r->alert_expr, resolved_at, r->alert_labels) : kNaN;
    else if (f.name == r->stage + kPerRequest) f.after = stage_per_request(*after, r->stage, true);
    else if (f.name == kQueueDepthAtEnd) f.after = last_sample(*after, SignalId::kQueueDepth, true);
    else if (f.name == kQueueAgeAtEnd) f.after = last_sample(*after, SignalId::kQueueOldestAge, true);
    else if (f.name == kQueueWaitMean) f.after = queue_wait_mean(*after, true);
  }
  return render_recovery(*r, resolved_at, "");
}

std::string recovery_without_record(const std::string& prometheus_url, const std::map<std::string, std::string>& labels,
                                    const std::string& generator_url, double fired_at, double at,
                                    const net::TlsOptions& tls, const CustomTargets& custom_targets) {
  if (!(fired_at > 0)) return {};
  const AlertDiagnosis firing = diagnose_alert(prometheus_url, labels, generator_url, fired_at, 0, tls, custom_targets);
  return recovery_markdown(prometheus_url, firing.record, at, tls, custom_targets);
}

}  // namespace inferscope::doctor
