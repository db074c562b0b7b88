#include "doctor/doctor_api.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <regex>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/prom_duration.h"
#include "dialect/promql.h"
#include "doctor/diagnosis_format.h"
#include "doctor/localize.h"
#include "doctor/prometheus_collector.h"
#include "doctor/trace_examples.h"
#include "promapi/api_response.h"
#include "promapi/prometheus_client.h"
#include "common/unix_time.h"

namespace inferscope::doctor {
namespace {

ApiAnswer error_answer(int status, const std::string& message, const std::string& type, const std::string& param) {
  ApiAnswer a;
  a.status = status;
  a.error_message = message;
  a.error_type = type;
  a.error_param = param;
  return a;
}

// format_duration prints whole seconds as Prometheus-style 1h2m3s.
std::string format_duration(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  std::string out;
  if (s >= 3600) out += std::to_string(s / 3600) + "h";
  if (s % 3600 >= 60) out += std::to_string(s % 3600 / 60) + "m";
  if (s % 60 || out.empty()) out += std::to_string(s % 60) + "s";
  return out;
}

}  // namespace

std::string url_decode(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out.push_back(' ');
    } else if (in[i] == '%' && i + 2 < in.size() && std::isxdigit(static_cast<unsigned char>(in[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(in[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

Result<double> parse_time(std::string_view text, std::string_view flag) {
  auto bad = [&] {
    return make_error("cannot parse " + std::string(flag) + " '" + std::string(text) +
                      "': expected RFC 3339 (2026-11-30T13:00:00Z) or Unix seconds");
  };
  if (text.empty()) return bad();
  if (text.find('T') == std::string_view::npos && text.find('-') == std::string_view::npos) {
    std::string s(text);
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return bad();
    return v;
  }
  std::string s(text);
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &consumed) != 6)
    return bad();
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  double fraction = 0;
  std::size_t i = static_cast<std::size_t>(consumed);
  if (i < s.size() && s[i] == '.') {
    std::size_t j = i + 1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i + 1) return bad();
    fraction = std::strtod(s.substr(i, j - i).c_str(), nullptr);
    i = j;
  }
  double offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int hh = 0, mm = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2 || s.size() != i + 6) return bad();
    offset = (s[i] == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    i = s.size();
  } else {
    return bad();
  }
  if (i != s.size()) return bad();
  std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return bad();
  return static_cast<double>(t) + fraction - offset;
}

Result<double> parse_duration(std::string_view text, std::string_view flag) {
  auto d = common::parse_prom_duration(text);
  if (!d)
    return make_error("cannot parse " + std::string(flag) + " '" + std::string(text) +
                      "': expected a duration such as 90s, 5m or 1h");
  return static_cast<double>(d->count()) / 1000;
}

std::optional<std::pair<double, double>> fit_to_history(double at, double data_start, double window_s,
                                                        double baseline_s) {
  if (std::isnan(data_start)) return std::nullopt;
  const double history = at - data_start;
  if (!(history > 0) || data_start <= at - window_s - baseline_s + 1) return std::nullopt;
  // Keep the window when at least as much history precedes it; else compare two equal halves,
  // as scrape mode does.
  if (history >= 2 * window_s) return std::make_pair(window_s, history - window_s);
  return std::make_pair(history / 2, history / 2);
}

std::string selected_job(const std::string& selector) {
  static const std::regex kJob(R"re((?:^|[{,\s])job\s*=\s*"((?:[^"\\]|\\.)*)")re");
  std::smatch m;
  if (!std::regex_search(selector, m, kJob)) return {};
  const std::string quoted = m[1].str();
  std::string out;
  for (std::size_t i = 0; i < quoted.size(); ++i) {
    if (quoted[i] == '\\' && i + 1 < quoted.size()) ++i;
    out += quoted[i];
  }
  return out;
}

namespace {

// with_matcher adds `key="value"` to a selector ("{job=\"x\"}" or "").
std::string with_matcher(const std::string& selector, const std::string& key, const std::string& value) {
  auto inner = selector_matchers(selector);
  std::string matchers = inner ? *inner : std::string();
  return "{" + matchers + (matchers.empty() ? "" : ",") + key + "=" + dialect::promql_string(value) + "}";
}

// localize_from_prometheus reads each slice worth comparing (instances of a job+model, models)
// over the same windows as `d` and localizes its findings (localize.h).
void localize_from_prometheus(const promapi::PrometheusClient& client, const PrometheusWindow& w, Diagnosis& d) {
  std::vector<Where> sources;
  for (const Where& s : d.snapshot.sources)
    if (w.model.empty() || s.model == w.model) sources.push_back(s);
  SlicePlan plan = plan_slices(sources);
  if (!w.model.empty()) plan.models.clear();
  auto read = [&](const std::vector<Where>& wanted, std::vector<Slice>& into) {
    for (const Where& where : wanted) {
      PrometheusWindow narrow = w;
      if (!where.job.empty()) narrow.selector = with_matcher(narrow.selector, "job", where.job);
      if (!where.instance.empty()) narrow.selector = with_matcher(narrow.selector, "instance", where.instance);
      if (!where.engine.empty()) narrow.selector = with_matcher(narrow.selector, "engine", where.engine);
      if (!where.model.empty()) narrow.model = where.model;
      auto snapshot = collect_from_prometheus(client, narrow);
      if (!snapshot) {
        d.notes.push_back("cannot read the slice " + where.job + "/" + where_name(where) + "/" + where.model + ": " +
                          snapshot.error().message);
        continue;
      }
      snapshot->targets_down.clear();  // the whole data's diagnosis reports down targets
      into.push_back({where, std::move(*snapshot)});
    }
  };
  std::vector<Slice> instances, models;
  read(plan.instances, instances);
  read(plan.models, models);
  for (auto& n : plan.notes) d.notes.push_back(std::move(n));
  localize(d, instances, models);
}

}  // namespace

Result<Diagnosis> run_doctor(const DoctorRequest& request) {
  auto client = promapi::PrometheusClient::create(request.prometheus_url, {.tls = request.tls});
  if (!client) return client.error();
  PrometheusWindow w;
  w.at = request.at > 0 ? request.at : common::unix_now_s();
  w.window_s = request.window_s;
  w.baseline_s = request.baseline_s;
  w.selector = request.selector;
  w.model = request.model;
  if (auto custom = request.custom_targets.find(selected_job(request.selector)); custom != request.custom_targets.end()) {
    w.custom = custom->second;
  }
  auto snapshot = collect_from_prometheus(*client, w);
  if (!snapshot) return snapshot.error();
  Diagnosis d = diagnose(*snapshot);
  // A baseline that reaches back before the first sample (a young stack or target) has too
  // little in it: compare within the history that exists instead, and say so. A job queue
  // weighed on its own (no server latency) whose depth has no sample in the baseline is younger
  // than the window: its "before" would be no data beside a queue the page shows consumed.
  const Quantity* depth = snapshot->find(SignalId::kQueueDepth);
  const bool young_queue = snapshot->find(SignalId::kE2e) == nullptr && depth != nullptr &&
                           !depth->baseline.has_data() && depth->incident.has_data();
  auto fitted = d.verdict == "no_data" || young_queue
                    ? fit_to_history(w.at, snapshot->data_start, w.window_s, w.baseline_s)
                    : std::nullopt;
  if (!fitted) {
    localize_from_prometheus(*client, w, d);
    if (!request.traces_url.empty()) {
      add_trace_examples(d, request.traces_url, request.traces_url, request.model, request.tls);
    }
    return d;
  }
  PrometheusWindow shorter = w;
  shorter.window_s = fitted->first;
  shorter.baseline_s = fitted->second;
  auto retry = collect_from_prometheus(*client, shorter);
  if (!retry) return d;
  Diagnosis again = diagnose(*retry);
  std::string note = "data starts at " + format_duration(w.at - snapshot->data_start) +
                     " before the window end, so the baseline was shortened from " + format_duration(w.baseline_s) +
                     " to " + format_duration(shorter.baseline_s);
  if (shorter.window_s != w.window_s)
    note += " and the window from " + format_duration(w.window_s) + " to " + format_duration(shorter.window_s);
  again.notes.insert(again.notes.begin(), note);
  localize_from_prometheus(*client, shorter, again);
  if (!request.traces_url.empty()) {
    add_trace_examples(again, request.traces_url, request.traces_url, request.model, request.tls);
  }
  return again;
}

ApiAnswer handle_doctor_api(std::string_view query, const std::string& prometheus_url, const net::TlsOptions& tls,
                            const CustomTargets& custom_targets, const std::string& traces_url) {
  DoctorRequest request;
  request.prometheus_url = prometheus_url;
  request.traces_url = traces_url;
  request.tls = tls;
  request.custom_targets = custom_targets;
  std::string format = "json";
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string key = url_decode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1));
    if (key == "window" || key == "baseline") {
      auto d = parse_duration(value, key);
      if (!d) return error_answer(400, d.error().message, "invalid_request_error", key);
      (key == "window" ? request.window_s : request.baseline_s) = *d;
    } else if (key == "at") {
      auto t = parse_time(value, key);
      if (!t) return error_answer(400, t.error().message, "invalid_request_error", key);
      request.at = *t;
    } else if (key == "selector") {
      if (auto m = selector_matchers(value); !m)
        return error_answer(400, m.error().message, "invalid_request_error", key);
      request.selector = value;
    } else if (key == "model") {
      request.model = value;
    } else if (key == "format") {
      if (value != "json" && value != "markdown" && value != "text")
        return error_answer(400, "format must be json, markdown or text", "invalid_request_error", key);
      format = value;
    } else {
      return error_answer(400, "unknown parameter " + key, "invalid_request_error", key);
    }
  }
  auto diagnosis = run_doctor(request);
  if (!diagnosis) return error_answer(502, diagnosis.error().message, "upstream_error", "");
  ApiAnswer answer;
  if (format == "markdown") {
    answer.content_type = "text/markdown; charset=utf-8";
    answer.body = to_markdown(*diagnosis);
  } else if (format == "text") {
    answer.content_type = "text/plain; charset=utf-8";
    answer.body = to_text(*diagnosis);
  } else {
    answer.body = to_json(*diagnosis).dump();
  }
  return answer;
}

}  // namespace inferscope::doctor
