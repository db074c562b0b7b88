#include "doctor/doctor_command.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <memory>

#include "config/role_mapping.h"
#include "doctor/check_metrics.h"
#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/prometheus_collector.h"
#include "doctor/scrape_collector.h"
#include "doctor/trace_examples.h"

namespace inferscope::doctor {
namespace {

struct DoctorOptions {
  std::string prometheus;
  std::string at, window = "5m", baseline = "30m", selector, model, format = "text";
  std::vector<std::string> scrape;
  std::string duration = "60s", interval = "1s", baseline_file, save_baseline;
  std::string check_metrics;
  bool explain = false;  // --explain: text output lists considered[] (why the runners-up lost)
  std::string roles;  // --roles FILE: the targets' own names mapped to roles (kind custom)
  net::TlsOptions tls;  // --ca-file, --insecure: for https:// Prometheus and scrape URLs
  std::string traces;   // --traces URL: up's api base, example traces per finding
};

[[noreturn]] void fail(const std::string& message, int code = 3) {
  std::cerr << "inferscope doctor: " << message << "\n";
  throw CLI::RuntimeError(code);
}

template <class T>
T need(Result<T> r) {
  if (!r) fail(r.error().message);
  return std::move(*r);
}

void print(const Diagnosis& d, const DoctorOptions& o) {
  if (o.format == "json") std::cout << to_json(d).dump(2) << "\n";
  else if (o.format == "markdown") std::cout << to_markdown(d);
  else std::cout << to_text(d, o.explain);
}

void finish(const std::string& verdict) {
  std::cout.flush();
  int code = exit_code_for(verdict);
  if (code != 0) throw CLI::RuntimeError(code);
}

std::shared_ptr<const dialect::CustomDialect> role_mapping(const DoctorOptions& o) {
  if (o.roles.empty()) return nullptr;
  auto mapping = config::load_role_mapping(o.roles);
  if (!mapping) fail("cannot use --roles " + o.roles + ": " + mapping.error().message);
  return *mapping;
}

// check_traces_url refuses a --traces value that is not an http(s) URL before any work starts;
// an up that cannot answer later only costs the examples (a note says so).
void check_traces_url(const DoctorOptions& o) {
  if (o.traces.empty()) return;
  if (auto client = net::BlockingClient::create(o.traces, {.tls = o.tls}, "--traces"); !client) {
    fail(client.error().message);
  }
}

void run_check_metrics(const DoctorOptions& o) {
  const auto custom = role_mapping(o);
  auto fetched = fetch_exposition(o.check_metrics, std::chrono::milliseconds(10000), o.tls);
  if (!fetched) {
    // An endpoint that cannot be read is "no data", still with one line saying why.
    if (o.format == "json") std::cout << nlohmann::json{{"url", o.check_metrics}, {"verdict", "no_data"},
                                                        {"error", fetched.error().message}}.dump(2) << "\n";
    else std::cout << "no_data: " << fetched.error().message << "\n";
    finish("no_data");
    return;
  }
  MetricsCheck check = check_exposition(o.check_metrics, *fetched, custom.get());
  if (o.format == "json") std::cout << to_json(check).dump(2) << "\n";
  else std::cout << to_text(check);
  finish(check.verdict);
}

void run_scrape(const DoctorOptions& o) {
  ScrapeOptions s;
  s.urls = o.scrape;
  s.tls = o.tls;
  s.custom = role_mapping(o);
  s.duration_s = need(parse_duration(o.duration, "--duration"));
  s.interval_s = need(parse_duration(o.interval, "--interval"));
  if (s.interval_s > s.duration_s) fail("cannot use --interval " + o.interval + ": longer than --duration " + o.duration);
  std::unique_ptr<SavedBaseline> baseline;
  if (!o.baseline_file.empty()) baseline = std::make_unique<SavedBaseline>(need(load_baseline(o.baseline_file)));
  ScrapeResult result = need(scrape_rounds(s));
  Snapshot snap = snapshot_from_scrapes(s, result, o.model, baseline ? &baseline->whole : nullptr);
  if (!o.save_baseline.empty()) {
    SamplingReport report;
    SampledRoles sampled = sample_rounds(result.rounds, o.model, report, s.custom.get());
    double t0 = result.rounds.front().time, t1 = result.rounds.back().time;
    Snapshot whole = build_snapshot(sampled, {t0, t1}, {t0, t1});
    for (std::size_t i = 0; i < report.dialects.size(); ++i) whole.dialect += (i ? "+" : "") + report.dialects[i];
    const std::vector<Slice> targets = whole_run_slices(s, result, o.model, snap.sources);
    if (auto saved = save_baseline(whole, targets, o.save_baseline); !saved) fail(saved.error().message);
    std::cerr << "inferscope doctor: baseline of " << result.rounds.size() << " scrapes (" << targets.size()
              << " targets one by one) saved to " << o.save_baseline << "\n";
  }
  Diagnosis d = diagnose(snap);
  // Replicas and models are compared one by one: within this run (first half vs second half of
  // each), or against each one's saved baseline, and with their peers within the window.
  localize_scrapes(s, result, o.model, d, baseline.get());
  if (!o.traces.empty()) add_trace_examples(d, o.traces, o.traces, o.model, o.tls);
  print(d, o);
  finish(d.verdict);
}

void run_prometheus(const DoctorOptions& o) {
  DoctorRequest r;
  r.prometheus_url = o.prometheus;
  r.tls = o.tls;
  if (!o.at.empty()) r.at = need(parse_time(o.at, "--at"));
  r.window_s = need(parse_duration(o.window, "--window"));
  r.baseline_s = need(parse_duration(o.baseline, "--baseline"));
  need(selector_matchers(o.selector));
  r.selector = o.selector;
  r.model = o.model;
  r.traces_url = o.traces;
  if (auto custom = role_mapping(o)) {
    // The mapping is the selected job's: a selector naming it (job="NAME") is how run_doctor finds it.
    const std::string job = selected_job(o.selector);
    if (job.empty()) fail("cannot use --roles with --prometheus without --selector '{job=\"NAME\"}' naming the target's job");
    r.custom_targets[job] = custom;
  }
  Diagnosis d = need(run_doctor(r));
  print(d, o);
  finish(d.verdict);
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto o = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand("doctor", "Say which stage of inference requests got slower, why, and what to do");
  auto* prom = cmd->add_option("--prometheus", o->prometheus, "Prometheus-compatible query API base URL (http://host:9090)");
  cmd->add_option("--at", o->at, "End of the incident window: RFC 3339 or Unix seconds (default now)");
  cmd->add_option("--window", o->window, "Incident window length (default 5m)");
  cmd->add_option("--baseline", o->baseline, "Baseline length before the window (default 30m)");
  cmd->add_option("--selector", o->selector, "Series selector narrowing the data, e.g. '{job=\"vllm\"}'");
  cmd->add_option("--model", o->model, "Only this model (model / model_name label)");
  cmd->add_option("--format", o->format, "Output: text, json or markdown")->check(CLI::IsMember({"text", "json", "markdown"}));
  cmd->add_flag("--explain", o->explain,
                "Text output: also list every cause weighed and not reported, with its score and why it lost");
  auto* scrape = cmd->add_option("--scrape", o->scrape, "Scrape this /metrics URL directly (repeatable); no Prometheus");
  cmd->add_option("--duration", o->duration, "With --scrape: how long to scrape (default 60s)");
  cmd->add_option("--interval", o->interval, "With --scrape: scrape interval (default 1s)");
  cmd->add_option("--baseline-file", o->baseline_file, "With --scrape: compare with this saved baseline");
  cmd->add_option("--save-baseline", o->save_baseline, "With --scrape: save this run as a baseline file");
  auto* check = cmd->add_option("--check-metrics", o->check_metrics,
                                "Inspect one metrics URL: dialect, missing/renamed metrics, exposition problems, cardinality");
  cmd->add_option("--roles", o->roles,
                  "YAML mapping a hand-instrumented target's own metric names to roles (roles: {e2e: NAME, ...}), "
                  "as a `kind: custom` target in up's config; with --prometheus, --selector must name its job")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ca-file", o->tls.ca_file, "PEM CA certificates to trust for https:// URLs, besides the system store")
      ->check(CLI::ExistingFile);
  cmd->add_flag_callback("--insecure", [o] { o->tls.verify = false; },
                "Do not verify the TLS certificate of https:// URLs");
  auto* traces = cmd->add_option("--traces", o->traces,
                                 "inferscope up's API base URL (http://host:port): each finding lists up to three "
                                 "example requests of the window from up's trace store");
  prom->excludes(scrape)->excludes(check);
  scrape->excludes(check);
  traces->excludes(check);
  cmd->callback([o] {
    check_traces_url(*o);
    if (!o->check_metrics.empty()) return run_check_metrics(*o);
    if (!o->scrape.empty()) return run_scrape(*o);
    if (!o->prometheus.empty()) return run_prometheus(*o);
    fail("one of --prometheus URL, --scrape URL or --check-metrics URL is required", 3);
  });
}

}  // namespace inferscope::doctor
