// build_report: plans one batch of Prometheus queries from the dialect table, runs it through the
// promapi client (8 at a time), folds the answers into groups, then picks the worst hour and asks
// the doctor about it, and reads the relay's fired-alert history.
#include "report/report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "dialect/dialect.h"
#include "dialect/promql.h"
#include "doctor/doctor_api.h"
#include "doctor/prometheus_collector.h"
#include "promapi/prometheus_client.h"
#include "relay/fired_alerts.h"
#include "report/report_derive.h"

namespace inferscope::report {
namespace {

using dialect::DialectId;
using dialect::MetricBinding;
using dialect::QueryScope;
using dialect::Role;

constexpr Role kTrafficRoles[] = {Role::kE2e, Role::kRequests, Role::kTtft, Role::kTpot, Role::kGenerationTokens};

std::string seconds_text(double s) { return std::to_string(static_cast<long long>(std::llround(s))) + "s"; }

std::string label(const promapi::Labels& labels, const std::string& name) {
  if (name.empty()) return "";
  auto it = labels.find(name);
  return it == labels.end() ? "" : it->second;
}

std::string regex_quote(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) out += "\\\\";
    out += c;
  }
  return out;
}

std::chrono::system_clock::time_point to_time_point(double unix_s) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(unix_s)));
}

// The dialect that owns each metric name the report looks for (gateway shares serve's names:
// its series are reported under "inferscope").
std::map<std::string, DialectId> names_to_dialects() {
  std::map<std::string, DialectId> out;
  for (DialectId id : dialect::kAllDialects) {
    if (id == DialectId::kGateway) continue;
    for (Role role : {Role::kE2e, Role::kRequests, Role::kTtft, Role::kTpot, Role::kGenerationTokens,
                      Role::kGpuUtilization}) {
      const MetricBinding* b = dialect::find_binding(id, role);
      if (!b) continue;
      out.emplace(dialect::presence_series(b->kind, b->metric), id);
    }
  }
  return out;
}

struct Planner {
  std::vector<promapi::QueryRequest> requests;
  std::vector<std::function<void(const promapi::QueryResult&)>> consumers;
  void add(std::string expr, double end, std::function<void(const promapi::QueryResult&)> consume) {
    requests.push_back({std::move(expr), end, 0, 0});
    consumers.push_back(std::move(consume));
  }
  void add_range(std::string expr, double start, double end, double step,
                 std::function<void(const promapi::QueryResult&)> consume) {
    requests.push_back({std::move(expr), end, start, step});
    consumers.push_back(std::move(consume));
  }
};

// Sums the series of a range answer point by point (keyed by time).
void add_points(std::map<double, double>& into, const promapi::QueryResult& r) {
  for (const auto& s : r.series)
    for (const auto& p : s.points)
      if (std::isfinite(p.value)) into[p.time] += p.value;
}

std::vector<Point> first_series(const promapi::QueryResult& r) {
  std::vector<Point> out;
  if (r.series.empty()) return out;
  for (const auto& p : r.series.front().points)
    if (std::isfinite(p.value)) out.push_back({p.time, p.value});
  return out;
}

std::vector<Point> to_points(const std::map<double, double>& m) {
  std::vector<Point> out;
  for (auto [t, v] : m) out.push_back({t, v});
  return out;
}

const MetricBinding* queue_binding(Role role) {
  for (const MetricBinding& b : dialect::queue_bindings())
    if (b.role == role) return &b;
  return nullptr;
}

}  // namespace

Result<Report> build_report(const ReportRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  Report rep;
  rep.request = request;
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  rep.until = request.until > 0 ? request.until : std::floor(now);
  rep.since = request.since > 0 ? request.since : rep.until - 86400;
  if (rep.since >= rep.until) return make_error("cannot build the report: --since must be before --until");
  const double length = rep.until - rep.since;
  if (length < 60) return make_error("cannot build the report: the period must be at least 1 minute long");
  rep.previous_since = rep.since - length;
  rep.request.since = rep.since;
  rep.request.until = rep.until;

  auto inner = doctor::selector_matchers(request.selector);
  if (!inner) return inner.error();
  auto client = promapi::PrometheusClient::create(request.prometheus_url, {.tls = request.tls});
  if (!client) return make_error("cannot use --prometheus " + request.prometheus_url + ": " + client.error().message);

  // 1. Which dialects, jobs and models have series in the two periods: one series lookup.
  const auto owners = names_to_dialects();
  std::string names_re;
  for (const auto& [name, id] : owners) names_re += (names_re.empty() ? "" : "|") + regex_quote(name);
  std::string match = "{__name__=~\"" + names_re + "\"" + (inner->empty() ? "" : "," + *inner) + "}";
  auto series = client->series({match}, rep.previous_since, rep.until);
  ++rep.queries;
  if (!series) return make_error("cannot read series from Prometheus at " + request.prometheus_url + ": " +
                                 series.error().message);
  std::map<std::tuple<DialectId, std::string, std::string>, GroupReport> groups;
  std::set<DialectId> present;
  for (const auto& labels : *series) {
    auto owner = owners.find(label(labels, "__name__"));
    if (owner == owners.end()) continue;
    DialectId id = owner->second;
    const auto& d = dialect::dialect(id);
    std::string model = label(labels, std::string(d.model_label));
    if (!request.model.empty() && !d.model_label.empty() && model != request.model) continue;
    present.insert(id);
  }
  for (DialectId id : present) rep.dialects += (rep.dialects.empty() ? "" : "+") + std::string(dialect::to_string(id));
  if (!request.model.empty())
    for (DialectId id : present)
      if (dialect::dialect(id).model_label.empty())
        rep.notes.push_back(std::string(dialect::dialect(id).title) + " has no model label: --model " + request.model +
                            " cannot narrow its figures");

  auto group = [&](DialectId id, const promapi::Labels& labels, bool by_model) -> GroupReport& {
    const auto& d = dialect::dialect(id);
    std::string job = label(labels, "job");
    std::string model = by_model ? label(labels, std::string(d.model_label)) : "";
    auto& g = groups[{id, job, model}];
    g.job = job;
    g.model = model;
    g.dialect = std::string(dialect::to_string(id));
    return g;
  };

  // 2. Plan the batch.
  Planner plan;
  const double step = std::max(60.0, std::ceil(length / 288 / 60) * 60);
  const double short_window_s = std::max(300.0, step);
  const std::string short_window = seconds_text(short_window_s);
  // The first sample is one window after the start, so no window reaches into the period before.
  const double first_sample = std::min(short_window_s, length);
  rep.chart_step_s = step;
  // Gauge peaks take one sample each, so a sample on a boundary must count in one period only.
  // Prometheus 2.x range selectors and subqueries include both ends; evaluating 1 ms before a
  // period's end makes the period [start, end) (a sample at `end` opens the next one) in 2.x and 3.x.
  constexpr double kBeforeEnd = 0.001;
  const double first_hour_end = std::ceil(rep.since / 3600) * 3600 + 3600;
  const double last_hour_end = std::floor(rep.until / 3600) * 3600;
  const bool hourly = first_hour_end <= last_hour_end;
  std::map<double, double> rate_chart, hourly_rate;
  std::vector<Point> hourly_p95, hourly_p99;
  std::optional<DialectId> chart_dialect;
  std::vector<std::string> failures;

  for (DialectId id : present) {
    const auto& d = dialect::dialect(id);
    std::string matchers = *inner;
    if (!request.model.empty() && !d.model_label.empty())
      matchers += (matchers.empty() ? "" : ",") + std::string(d.model_label) + "=" +
                  dialect::promql_string(request.model);
    std::vector<std::string> by = {"job"};
    if (!d.model_label.empty()) by.emplace_back(d.model_label);
    QueryScope period{matchers, by, seconds_text(length)};
    for (int which = 0; which < 2; ++which) {
      const double end = which == 0 ? rep.until : rep.since;
      auto figures = [which](GroupReport& g) -> PeriodFigures& { return which == 0 ? g.current : g.previous; };
      auto instant = [&, id](std::optional<std::string> expr, bool by_model,
                             std::function<void(PeriodFigures&, double)> set, double before_end = 0) {
        if (!expr) return;
        plan.add(*expr, end - before_end, [&, id, by_model, set, figures](const promapi::QueryResult& r) {
          for (const auto& s : r.series)
            if (!s.points.empty()) {
              double v = s.points.back().value;
              if (std::isfinite(v)) set(figures(group(id, s.labels, by_model)), v);
            }
        });
      };
      // Latency: quantiles from histograms, means from whatever the dialect has.
      struct LatencyRole {
        Role role;
        Latency PeriodFigures::*field;
      };
      for (LatencyRole lr : {LatencyRole{Role::kE2e, &PeriodFigures::e2e}, LatencyRole{Role::kTtft, &PeriodFigures::ttft},
                             LatencyRole{Role::kTpot, &PeriodFigures::tpot}}) {
        const MetricBinding* b = dialect::find_binding(id, lr.role);
        if (!b) continue;
        auto field = lr.field;
        if (b->kind == dialect::MetricKind::kHistogram) {
          for (double q : {0.5, 0.95, 0.99}) {
            Value Latency::*qf = q == 0.5 ? &Latency::p50 : q == 0.95 ? &Latency::p95 : &Latency::p99;
            instant(dialect::quantile_expr(*b, q, period), true, [field, qf](PeriodFigures& f, double v) {
              (f.*field).*qf = v;
              (f.*field).has_histogram = true;
            });
          }
        }
        instant(dialect::mean_expr(*b, period), true, [field](PeriodFigures& f, double v) { (f.*field).mean = v; });
      }
      // Volume: the request counter, else the e2e histogram's count.
      const MetricBinding* volume = dialect::find_binding(id, Role::kRequests);
      if (!volume) {
        const MetricBinding* e2e = dialect::find_binding(id, Role::kE2e);
        if (e2e && e2e->kind == dialect::MetricKind::kHistogram) volume = e2e;
      }
      if (volume) {
        instant(dialect::rate_expr(*volume, period), true,
                [length](PeriodFigures& f, double v) { f.requests = v * length; });
        // Peak rate: the short-window rate over the period, per group.
        QueryScope short_scope{matchers, by, short_window};
        if (auto e = dialect::rate_expr(*volume, short_scope)) {
          double start = which == 0 ? rep.since : rep.previous_since;
          bool chart = which == 0;
          plan.add_range(*e, start + first_sample, end, step, [&, id, figures, chart](const promapi::QueryResult& r) {
            for (const auto& s : r.series) {
              PeriodFigures& f = figures(group(id, s.labels, true));
              for (const auto& p : s.points)
                if (std::isfinite(p.value) && (!f.peak_rate || p.value > *f.peak_rate)) {
                  f.peak_rate = p.value;
                  f.peak_rate_at = p.time;
                }
            }
            if (chart) add_points(rate_chart, r);
          });
        }
      }
      instant(dialect::error_ratio_expr(id, period), true, [](PeriodFigures& f, double v) { f.error_ratio = v; });
      if (const MetricBinding* b = dialect::find_binding(id, Role::kPromptTokens))
        instant(dialect::rate_expr(*b, period), true, [](PeriodFigures& f, double v) { f.prompt_tokens_per_s = v; });
      if (const MetricBinding* b = dialect::find_binding(id, Role::kGenerationTokens))
        instant(dialect::rate_expr(*b, period), true, [](PeriodFigures& f, double v) { f.generation_tokens_per_s = v; });
      // GPU utilization: per job, mean and max over the period of the dialect's aggregated gauge.
      if (const MetricBinding* b = dialect::find_binding(id, Role::kGpuUtilization)) {
        QueryScope gpu_scope{*inner, {"job"}, short_window};
        if (auto v = dialect::value_expr(*b, gpu_scope)) {
          std::string sub = "(" + *v + ")[" + seconds_text(length) + ":" + seconds_text(step) + "]";
          instant("avg_over_time(" + sub + ")", false, [](PeriodFigures& f, double x) { f.gpu_util_mean = x; },
                  kBeforeEnd);
          instant("max_over_time(" + sub + ")", false, [](PeriodFigures& f, double x) { f.gpu_util_max = x; },
                  kBeforeEnd);
        }
      }
    }
    // Hour-of-day profile and worst hour: hourly rate (all dialects add up) and hourly e2e
    // quantiles of the first dialect with an e2e histogram (table order), which the chart shows too.
    const MetricBinding* e2e = dialect::find_binding(id, Role::kE2e);
    const bool e2e_histogram = e2e && e2e->kind == dialect::MetricKind::kHistogram;
    if (hourly) {
      QueryScope hour{matchers, {}, "1h"};
      const MetricBinding* volume = dialect::find_binding(id, Role::kRequests);
      if (!volume && e2e_histogram) volume = e2e;
      if (volume)
        if (auto e = dialect::rate_expr(*volume, hour))
          plan.add_range(*e, first_hour_end, last_hour_end, 3600,
                         [&](const promapi::QueryResult& r) { add_points(hourly_rate, r); });
      if (!chart_dialect && e2e_histogram) {
        plan.add_range(*dialect::quantile_expr(*e2e, 0.95, hour), first_hour_end, last_hour_end, 3600,
                       [&](const promapi::QueryResult& r) { hourly_p95 = first_series(r); });
        plan.add_range(*dialect::quantile_expr(*e2e, 0.99, hour), first_hour_end, last_hour_end, 3600,
                       [&](const promapi::QueryResult& r) { hourly_p99 = first_series(r); });
      }
    }
    if (e2e_histogram && chart_dialect)
      rep.notes.push_back("the e2e chart, hourly p95 and worst hour use " + std::string(dialect::to_string(*chart_dialect)) +
                          "'s e2e histogram; " + std::string(dialect::to_string(id)) + "'s is in its own table only");
    if (!chart_dialect && e2e_histogram) {
      chart_dialect = id;
      QueryScope chart{matchers, {}, short_window};
      plan.add_range(*dialect::quantile_expr(*e2e, 0.95, chart), rep.since + first_sample, rep.until, step,
                     [&](const promapi::QueryResult& r) { rep.p95_e2e = first_series(r); });
      plan.add_range(*dialect::quantile_expr(*e2e, 0.99, chart), rep.since + first_sample, rep.until, step,
                     [&](const promapi::QueryResult& r) { rep.p99_e2e = first_series(r); });
    }
  }

  // Job queues (up's redis targets, one job each): per queue the peak depth (the most waiting at
  // any sample: max per chart step, then the step holding the peak) and the wait p95 of the jobs
  // that started in the period.
  std::map<std::tuple<std::string, std::string, std::string>, QueueReport> queues;
  auto queue_of = [&queues](const promapi::Labels& labels) -> QueueReport& {
    QueueReport& q = queues[{label(labels, "job"), label(labels, "queue"), label(labels, "system")}];
    q.job = label(labels, "job");
    q.queue = label(labels, "queue");
    q.system = label(labels, "system");
    return q;
  };
  const std::vector<std::string> queue_by = {"job", "queue", "system"};
  for (int which = 0; which < 2; ++which) {
    const double end = which == 0 ? rep.until : rep.since;
    const double start = which == 0 ? rep.since : rep.previous_since;
    auto figures = [which](QueueReport& q) -> QueueFigures& { return which == 0 ? q.current : q.previous; };
    if (const MetricBinding* depth = queue_binding(Role::kQueueDepth))
      if (auto v = dialect::value_expr(*depth, QueryScope{*inner, queue_by, short_window})) {
        plan.add_range("max_over_time((" + *v + ")[" + seconds_text(step) + ":])", std::min(start + step, end) - kBeforeEnd,
                       end - kBeforeEnd, step, [&queue_of, figures](const promapi::QueryResult& r) {
                         for (const auto& s : r.series) {
                           QueueFigures& f = figures(queue_of(s.labels));
                           for (const auto& p : s.points)
                             if (std::isfinite(p.value) && (!f.peak_depth || p.value > *f.peak_depth)) {
                               f.peak_depth = p.value;
                               f.peak_depth_at = p.time + kBeforeEnd;  // the step's end, as the chart shows it
                             }
                         }
                       });
      }
    if (const MetricBinding* wait = queue_binding(Role::kQueueWait))
      if (auto e = dialect::quantile_expr(*wait, 0.95, QueryScope{*inner, queue_by, seconds_text(length)}))
        plan.add(*e, end, [&queue_of, figures](const promapi::QueryResult& r) {
          for (const auto& s : r.series)
            if (!s.points.empty() && std::isfinite(s.points.back().value))
              figures(queue_of(s.labels)).wait_p95 = s.points.back().value;
        });
  }

  // 3. Run it.
  auto answers = client->query_all(plan.requests);
  rep.queries += static_cast<int>(plan.requests.size());
  std::size_t failed = 0;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    if (answers[i]) {
      plan.consumers[i](*answers[i]);
    } else {
      ++failed;
      if (failures.size() < 3) failures.push_back(answers[i].error().message);
    }
  }
  if (failed > 0 && failed == answers.size())
    return make_error("cannot query Prometheus at " + request.prometheus_url + ": " + failures.front());
  for (const auto& f : failures)
    rep.notes.push_back("a query failed (its figure shows as no data): " + f);
  if (failed > failures.size()) rep.notes.push_back(std::to_string(failed - failures.size()) + " more queries failed");

  for (auto& [key, g] : groups) rep.groups.push_back(std::move(g));
  for (auto& [key, q] : queues) rep.queues.push_back(std::move(q));
  rep.rate = to_points(rate_chart);
  for (auto& g : rep.groups)
    for (PeriodFigures* f : {&g.current, &g.previous})
      for (Latency* l : {&f->e2e, &f->ttft, &f->tpot})
        if (!l->has_histogram && l->mean) l->note = "mean only: " + g.dialect + " has no histogram for it";
  for (const auto& g : rep.groups) {
    const auto& c = g.current;
    if ((c.requests && *c.requests > 0) || c.e2e.mean || c.ttft.mean || c.tpot.mean ||
        (c.generation_tokens_per_s && *c.generation_tokens_per_s > 0))
      rep.has_data = true;
  }
  if (!rep.has_data) {
    std::string scope;
    if (!request.selector.empty()) scope += " the selector " + request.selector;
    if (!request.model.empty()) scope += std::string(scope.empty() ? "" : " and") + " model " + request.model;
    if (present.empty())
      rep.notes.insert(rep.notes.begin(), "no data: no series of a known server (inferscope, vLLM, llama.cpp, TGI, "
                                          "Triton) matched" + (scope.empty() ? std::string(" anything") : scope) +
                                              " in this period or the one before");
    else
      rep.notes.insert(rep.notes.begin(), "no data: no request finished and no latency was recorded in this period" +
                                              (scope.empty() ? std::string() : " for" + scope) + " (series found: " +
                                              rep.dialects + ")");
  }

  // 4. Hour-of-day profile and the worst hour, asked of the doctor.
  if (rep.has_data) {
    rep.hours = derive_hour_profile(to_points(hourly_rate), hourly_p95, request.slo_p95_e2e_s);
    if (!hourly) rep.hours.conclusions = {"no hour-of-day profile: the period holds no whole hour"};
    rep.worst = choose_worst_hour(hourly_p99, hourly_p95);
    if (rep.worst.found) {
      doctor::DoctorRequest dr;
      dr.prometheus_url = request.prometheus_url;
      dr.tls = request.tls;
      dr.at = rep.worst.end;
      dr.window_s = 3600;
      dr.baseline_s = 3600;
      dr.selector = request.selector;
      dr.model = request.model;
      auto d = doctor::run_doctor(dr);
      if (d) rep.worst.diagnosis = std::move(*d);
      else rep.worst.doctor_error = d.error().message;
    } else {
      rep.worst.doctor_error = hourly ? "no hourly e2e quantiles (no e2e histogram in " + rep.dialects + ")"
                                      : "the period holds no whole hour";
    }
  }

  // 5. Alerts the relay stored as fired.
  std::string db;
  if (!request.state_dir.empty()) {
    db = (std::filesystem::path(request.state_dir) / "relay.db").string();
  } else if (std::error_code ec; std::filesystem::exists("inferscope-state/relay.db", ec)) {
    db = "inferscope-state/relay.db";  // up's default --state-dir, when run from here
  }
  if (db.empty()) {
    rep.alerts.note = "no alert history (no state dir: pass the --state-dir of inferscope up)";
  } else {
    auto fired = relay::read_alerts_fired_between(db, to_time_point(rep.since), to_time_point(rep.until));
    if (fired) {
      rep.alerts.available = true;
      rep.alerts.alerts = std::move(*fired);
      rep.alerts.note = "from " + db;
    } else {
      rep.alerts.note = "no alert history: " + fired.error().message;
    }
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return rep;
}

}  // namespace inferscope::report
