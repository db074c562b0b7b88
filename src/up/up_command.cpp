// File: up_command.cpp
// Flag wiring for `inferscope up` and its run loop: config → rules → files → API server → relay →
// children → ready line → wait for SIGINT/SIGTERM → orderly stop. `--check` and `--status` too.
#include "up/up_command.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>

#include "common/prom_duration.h"
#include "dashboard/dashboard_routes.h"
#include "dashboard/grafana_export.h"
#include "doctor/alert_diagnosis.h"
#include "doctor/doctor_api.h"
#include "doctor/doctor_routes.h"
#include "drill/drill_robot.h"
#include "drill/notification_route.h"
#include "net/blocking_client.h"
#include "net/http_server.h"
#include "net/router.h"
#include "relay/relay.h"
#include "up/k8s_export.h"
#include "up/up_access.h"
#include "up/kind_follower.h"
#include "up/monitoring_stack.h"
#include "up/stack_status.h"
#include "up/up_context.h"
#include "up/up_queues.h"
#include "up/up_report.h"
#include "up/up_routes.h"
#include "up/up_rules.h"
#include "trace/trace_receiver.h"
#include "trace/trace_store.h"

namespace inferscope::up {
namespace {

struct UpFlags {
  std::string config_file;
  std::vector<std::string> targets;
  std::string kind{config::kAutoKind};
  bool check = false;
  bool status = false;
  bool json = false;
  std::uint16_t port = 9300;
  std::uint16_t prometheus_port = 9090;
  std::uint16_t alertmanager_port = 9093;
  std::string state_dir = "./inferscope-state";
  std::string scrape_interval = "5s";
  bool node_exporter = false;
  std::vector<std::string> remote_write;
  bool agent = false;
  std::string prometheus;
  net::TlsOptions prometheus_tls;  // --ca-file, --insecure: how an https:// --prometheus is reached
  config::BinaryPaths binaries;
  std::string export_grafana;  // write Grafana dashboards + provisioning here, start nothing
  std::string otlp_forward;    // copy what POST /v1/traces receives to this OTLP/HTTP URL
  std::string export_k8s;      // write Kubernetes manifests here, start nothing
  K8sExportOptions k8s;        // --k8s-*: the cluster's assumptions
  std::string listen;          // --listen ADDR:PORT: a second, public server (TLS + auth from web:)
  bool insecure_listen = false;  // allow a non-loopback --listen without TLS and authentication
  bool hash_password = false;    // print the bcrypt hash of the password on stdin, start nothing
};

// PublicListen is what --listen asks for, checked against the config's web: section.
struct PublicListen {
  ListenAddress address;
  std::string text;  // as given
  std::optional<config::WebConfig> web;
};

// check_listen validates --listen and --insecure-listen against `config.web` and loads the token
// files; nullopt without --listen. A non-loopback address needs web.tls and users or tokens.
std::optional<PublicListen> check_listen(const UpFlags& f, const CLI::App& cmd, const config::StackConfig& config);

// run_hash_password reads one line (the password) from stdin and prints its bcrypt hash.
void run_hash_password();

// kK8sFlags are the flags that only --export-k8s reads.
constexpr const char* kK8sFlags[] = {"--k8s-namespace", "--k8s-release", "--k8s-image", "--k8s-storage",
                                     "--k8s-metrics-port"};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "inferscope up: %s\n", message.c_str());
  throw CLI::RuntimeError(1);
}

// EventPrinter prints the ready line and event lines whole, from any thread.
class EventPrinter {
 public:
  void operator()(const std::string& line) {
    std::lock_guard lock(mutex_);
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

 private:
  std::mutex mutex_;
};

bool given(const CLI::App& cmd, const char* flag) { return cmd.count(flag) > 0; }

config::StackConfig build_config(const UpFlags& f, const CLI::App& cmd) {
  config::StackConfig config;
  if (!f.config_file.empty()) {
    auto loaded = config::load_stack_config(f.config_file);
    if (!loaded) fail(loaded.error().message);
    config = std::move(*loaded);
  }
  if (given(cmd, "--kind") && f.targets.empty()) fail("--kind applies to --target: give at least one --target");
  for (const std::string& text : f.targets) {
    if (config::is_queue_target_url(text)) {
      auto queue_target = config::parse_queue_target_url(text);
      if (!queue_target) fail("--target: " + queue_target.error().message);
      config.queue_targets.push_back(std::move(*queue_target));
      continue;
    }
    auto target = config::parse_target_url(text);
    if (!target) fail("--target: " + target.error().message);
    if (target->kind == config::kAutoKind) target->kind = f.kind;  // NAME=KIND@URL wins over --kind
    config.targets.push_back(std::move(*target));
  }
  if (given(cmd, "--port")) config.port = f.port;
  if (given(cmd, "--prometheus-port")) config.prometheus_port = f.prometheus_port;
  if (given(cmd, "--alertmanager-port")) config.alertmanager_port = f.alertmanager_port;
  if (given(cmd, "--state-dir")) config.state_dir = f.state_dir;
  if (given(cmd, "--scrape-interval")) {
    auto d = common::parse_prom_duration(f.scrape_interval);
    if (!d) fail("--scrape-interval: " + d.error().message);
    config.scrape_interval = *d;
  }
  if (f.node_exporter) config.node_exporter = true;
  for (const std::string& url : f.remote_write) config.remote_write.push_back(url);
  if (f.agent) config.agent = true;
  if (!f.prometheus.empty()) config.external_prometheus = f.prometheus;
  if (given(cmd, "--prometheus-bin")) config.binaries.prometheus = f.binaries.prometheus;
  if (given(cmd, "--alertmanager-bin")) config.binaries.alertmanager = f.binaries.alertmanager;
  if (given(cmd, "--promtool-bin")) config.binaries.promtool = f.binaries.promtool;
  if (given(cmd, "--node-exporter-bin")) config.binaries.node_exporter = f.binaries.node_exporter;
  if (given(cmd, "--redis-exporter-bin")) config.binaries.redis_exporter = f.binaries.redis_exporter;
  if (auto v = config::validate_stack_config(config); !v) fail(v.error().message);
  return config;
}

void run_status(const UpFlags& f) {
  const std::string url = "http://127.0.0.1:" + std::to_string(f.port) + "/api/status";
  auto reply = net::blocking_http_request("GET", url, {}, {}, std::chrono::seconds(10));
  if (!reply) fail("cannot reach a running inferscope up: " + reply.error().message);
  const auto status = nlohmann::json::parse(reply->body, nullptr, false);
  if (reply->status != 200 || status.is_discarded()) {
    fail("cannot GET " + url + ": HTTP " + std::to_string(reply->status) + " " + reply->body.substr(0, 200));
  }
  if (f.json) {
    std::printf("%s\n", status.dump(2).c_str());
  } else {
    std::fputs(render_status_text(status).c_str(), stdout);
  }
}

void run_check(const config::StackConfig& config, const UpRules& rules) {
  const StackPorts ports{.api = config.port, .alertmanager = config.alertmanager_port};
  auto report = check_generated_files(config, ports, rules.files);
  if (!report) fail(report.error().message);
  for (const std::string& line : report->tool_output) std::fprintf(stderr, "inferscope up: %s\n", line.c_str());
  std::printf("inferscope up: check passed; generated files:\n%s\n%s\n", report->files.prometheus_yml.c_str(),
              report->files.alertmanager_yml.c_str());
  for (const auto& path : report->files.rule_files) std::printf("%s\n", path.c_str());
}

// run_export_grafana writes the Grafana dashboards (same rows as up's own page) and provisioning
// YAML whose datasource is the Prometheus this configuration would use.
// With a queue (redis) target in --target or --config, the dashboards get the Queue row too.
void run_export_grafana(const UpFlags& f, const CLI::App& cmd) {
  const std::string prometheus = !f.prometheus.empty()
                                     ? f.prometheus
                                     : "http://127.0.0.1:" + std::to_string(f.prometheus_port == 0 ? 9090 : f.prometheus_port);
  const bool queue_row = (!f.targets.empty() || !f.config_file.empty()) && !build_config(f, cmd).queue_targets.empty();
  auto files = dashboard::write_grafana_export(
      {.directory = f.export_grafana, .prometheus_url = prometheus, .queue_row = queue_row});
  if (!files) fail("cannot export Grafana dashboards to --export-grafana " + f.export_grafana + ": " + files.error().message);
  for (const std::string& path : *files) std::printf("%s\n", path.c_str());
}

// run_export_k8s writes the Kubernetes manifests of this configuration: its rules (kinds as given,
// no target is probed: they are in the cluster, not here), ServiceMonitors, dashboards, up's
// Deployment running `up --prometheus URL` with the same --target, --kind and --scrape-interval.
void run_export_k8s(const UpFlags& f, const CLI::App& cmd) {
  if (!f.export_grafana.empty()) fail("--export-k8s and --export-grafana: give one of them");
  const config::StackConfig config = build_config(f, cmd);
  auto rules = generate_up_rules(config);
  if (!rules) fail(rules.error().message);
  std::vector<std::string> up_args;
  for (const std::string& target : f.targets) up_args.insert(up_args.end(), {"--target", target});
  if (given(cmd, "--kind")) up_args.insert(up_args.end(), {"--kind", f.kind});
  if (given(cmd, "--scrape-interval")) up_args.insert(up_args.end(), {"--scrape-interval", f.scrape_interval});
  K8sExportOptions options = f.k8s;
  options.directory = f.export_k8s;
  options.prometheus_url = f.prometheus;
  options.config_secret = !f.config_file.empty();
  auto files = write_k8s_export(config, rules->files, up_args, options);
  if (!files) fail("cannot export Kubernetes manifests to --export-k8s " + f.export_k8s + ": " + files.error().message);
  for (const std::string& path : *files) std::printf("%s\n", path.c_str());
}

std::map<std::string, std::shared_ptr<const dialect::CustomDialect>> custom_targets_of(const config::StackConfig& config) {
  std::map<std::string, std::shared_ptr<const dialect::CustomDialect>> out;
  for (const config::TargetConfig& target : config.targets) {
    if (target.custom) out[target.name] = target.custom;
  }
  return out;
}

// queue_jobs_of returns the Prometheus jobs of the redis targets (each is scraped as its name).
std::vector<std::string> queue_jobs_of(const config::StackConfig& config) {
  std::vector<std::string> out;
  for (const config::QueueTargetConfig& target : config.queue_targets) out.push_back(target.name);
  return out;
}

double config_scrape_seconds(const config::StackConfig& config) {
  return std::chrono::duration<double>(config.scrape_interval).count();
}

relay::RelayOptions relay_options(EventPrinter& print) {
  relay::RelayOptions options;
  options.on_event = [&print](const relay::RelayEvent& e) {
    if (e.kind.starts_with("report_")) {  // the text is the whole line: "report sent to oncall (5120 bytes)"
      print("inferscope up: " + e.text);
      return;
    }
    std::string line = "inferscope up: notification " + e.kind;
    if (!e.channel.empty()) line += " channel=" + e.channel;
    if (!e.text.empty()) line += ": " + e.text;
    print(line);
  };
  return options;
}

int wait_for_stop_signal(const sigset_t& signals) {
  int number = 0;
  while (sigwait(&signals, &number) != 0) {
  }
  return number;
}

std::optional<PublicListen> check_listen(const UpFlags& f, const CLI::App& cmd, const config::StackConfig& config) {
  if (f.insecure_listen && !given(cmd, "--listen")) fail("--insecure-listen applies to --listen: give --listen ADDR:PORT too");
  if (!given(cmd, "--listen")) return std::nullopt;
  auto address = parse_listen_address(f.listen);
  if (!address) fail("--listen " + f.listen + ": " + address.error().message);
  PublicListen out{*address, f.listen, config.web};
  const bool tls = out.web && out.web->tls;
  const bool auth = out.web && out.web->has_auth();
  if (!address->loopback && !(tls && auth) && !f.insecure_listen) {
    const std::string missing = !tls && !auth ? "TLS and authentication" : !tls ? "TLS" : "authentication";
    fail("--listen " + f.listen + ": a non-loopback address needs " + missing +
         ": set web.tls and web.users or web.tokens in --config (docs/up.md \"For a team\"), or give --insecure-listen");
  }
  if (out.web) {
    if (auto loaded = config::load_web_tokens(*out.web); !loaded) fail(loaded.error().message);
  }
  return out;
}

void run_hash_password() {
  std::string password;
  if (!std::getline(std::cin, password)) fail("--hash-password: give the password on stdin (one line)");
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) fail("--hash-password: the password on stdin is empty");
  auto hash = bcrypt_hash(password, 12);
  if (!hash) fail("--hash-password: " + hash.error().message);
  std::printf("%s\n", hash->c_str());
}

void run_up(const UpFlags& f, const CLI::App& cmd) {
  if (f.status) return run_status(f);
  if (f.hash_password) return run_hash_password();
  if (f.export_k8s.empty()) {
    for (const char* flag : kK8sFlags) {
      if (given(cmd, flag)) fail(std::string(flag) + " applies to --export-k8s: give --export-k8s DIR too");
    }
  }
  if (!f.export_k8s.empty()) return run_export_k8s(f, cmd);
  if (!f.export_grafana.empty()) return run_export_grafana(f, cmd);
  config::StackConfig config = build_config(f, cmd);
  std::optional<PublicListen> listen = check_listen(f, cmd, config);
  std::vector<std::string> followed;  // `auto` targets: their kind follows what they expose
  for (const config::TargetConfig& t : config.targets) {
    if (t.kind == config::kAutoKind) followed.push_back(t.name);
  }
  auto rules = make_up_rules(config);
  if (!rules) fail(rules.error().message);
  for (const std::string& warning : rules->warnings) std::fprintf(stderr, "%s\n", warning.c_str());
  if (f.check) return run_check(config, *rules);

  // Every thread up starts inherits this mask; the signals are taken by sigwait below, so a
  // SIGTERM during start-up still ends in an orderly stop (children unblock them after fork).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  EventPrinter print;
  for (const auto& [job, probe] : rules->probes) {
    if (probe.kind) {
      print("inferscope up: target " + job + ": detected " + *probe.kind + ", " +
            std::to_string(rules->alert_counts[job]) + " alerts");
    }
  }
  metrics::Registry registry;
  UpContext context(registry, f.prometheus_tls);
  std::error_code ec;
  std::filesystem::create_directories(config.state_dir, ec);
  if (ec) fail("cannot create --state-dir " + config.state_dir.string() + ": " + ec.message());
  config.relay.database_path = (config.state_dir / "relay.db").string();
  relay::RelayOptions options = relay_options(print);
  // The relay's report_* events also go to the daily report's status (set once it exists, before
  // the relay starts; cleared after the relay stopped).
  std::atomic<UpReport*> report_sink{nullptr};
  options.on_event = [print_event = options.on_event, &report_sink](const relay::RelayEvent& e) {
    print_event(e);
    if (UpReport* sink = report_sink.load(); sink != nullptr && e.kind.starts_with("report_")) sink->record_delivery(e);
  };
  // A firing notification carries the doctor's diagnosis (the 5 minutes before, narrowed by the
  // alert's job/model labels, a custom target's mapping for its job); the resolved one says what
  // recovered, from the record kept when it fired. None until Prometheus is ready.
  const doctor::CustomTargets alert_custom_targets = custom_targets_of(config);
  options.diagnose = [&context, &alert_custom_targets](const relay::Notification& n) {
    const std::string url = context.prometheus_url();
    if (url.empty()) return relay::FiringDiagnosis{};
    std::string generator_url;
    for (const relay::Alert& a : n.alerts)
      if (a.status == "firing" && generator_url.empty()) generator_url = a.generator_url;
    doctor::AlertDiagnosis d = doctor::diagnose_alert(url, n.common_labels, generator_url, 0, 3500,
                                                      context.prometheus_tls(), alert_custom_targets,
                                                      context.api_url());
    return relay::FiringDiagnosis{std::move(d.markdown), std::move(d.record)};
  };
  options.recovered = [&context, &alert_custom_targets](const relay::Notification& n, const std::vector<std::string>& records) {
    const std::string url = context.prometheus_url();
    if (url.empty()) return std::string();
    // Alerts of one group usually fired together and share one record: each is said once.
    std::set<std::string> said;
    std::string out;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const std::string& record = records[i];
      if (record.empty()) {
        // It fired before Prometheus was ready (no diagnosis, no record): diagnose its firing now.
        if (i >= n.alerts.size() || n.alerts[i].status != "resolved") continue;
        const relay::Alert& a = n.alerts[i];
        auto fired_at = doctor::parse_time(a.starts_at, "startsAt");
        if (!fired_at || !said.insert(a.fingerprint + a.starts_at).second) continue;
        out += doctor::recovery_without_record(url, a.labels, a.generator_url, *fired_at, 0, context.prometheus_tls(),
                                               alert_custom_targets);
        continue;
      }
      if (!said.insert(record).second) continue;
      out += doctor::recovery_markdown(url, record, 0, context.prometheus_tls(), alert_custom_targets);
    }
    return out;
  };
  // drill: {enabled: true}: the fire drill's robot is one more channel ("drill"), on its own port.
  std::unique_ptr<drill::DrillRobot> drill_robot;
  if (config.drill_enabled) {
    for (const relay::ChannelConfig& channel : config.relay.channels) {
      if (channel.name == drill::kDrillChannel) {
        fail("notifications.channels: the channel name \"drill\" is reserved while drill.enabled is true: rename it");
      }
    }
    auto robot = drill::DrillRobot::start(config.state_dir);
    if (!robot) fail(robot.error().message);
    drill_robot = std::move(*robot);
    config.relay.channels.push_back(drill_robot->channel());
  }
  auto relay = relay::Relay::open(config.relay, registry, std::move(options));
  if (!relay) fail(relay.error().message);
  // report: {daily_at: ...}: the daily report, queued to the relay; POST /api/report/send at once.
  std::vector<std::string> channel_names;
  for (const relay::ChannelConfig& c : config.relay.channels) {
    if (!(drill_robot && c.name == drill::kDrillChannel)) channel_names.push_back(c.name);  // the drill's robot takes no report
  }
  UpReport report(**relay, config.report, channel_names, config.state_dir.string(),
                  [&context] { return context.prometheus_url(); }, context.prometheus_tls(),
                  [&print](const std::string& line) { print(line); });
  report_sink = &report;
  // Redis targets: one queue collector each, its series on /queues/<name>/metrics of this server.
  auto queues = UpQueues::create(config, [&print](const std::string& line) { print("inferscope up: " + line); });
  if (!queues) fail(queues.error().message);
  // POST /v1/traces: OTLP spans from serve, the gateway or any SDK, kept in a bounded store.
  auto trace_store = trace::TraceStore::open({.path = (config.state_dir / "traces.db").string(),
                                              .slowest_per_window = config.traces.slowest_per_window,
                                              .retention = config.traces.retention,
                                              .max_mb = config.traces.max_mb});
  if (!trace_store) fail(trace_store.error().message);
  trace::TraceReceiver trace_receiver(**trace_store, registry, {.forward_url = f.otlp_forward});

  std::unique_ptr<MonitoringStack> stack;
  std::unique_ptr<KindFollower> follower;
  std::mutex stack_mutex;  // guards `stack` and `follower` for status readers during start-up
  std::string api_url;
  net::Router router;
  add_stack_routes(router, context, [&]() {
    StatusInputs in;
    in.dialects = rules->dialects;
    in.missing_alerts = rules->missing_alerts;
    {
      std::lock_guard lock(stack_mutex);
      if (stack) in.children = stack->supervisor().status();
      if (follower) {
        KindSnapshot kinds = follower->snapshot();
        in.dialects = std::move(kinds.dialects);
        in.missing_alerts = std::move(kinds.missing_alerts);
        in.kind_notes = std::move(kinds.notes);
      }
    }
    in.prometheus_url = context.prometheus_url();
    in.prometheus_tls = context.prometheus_tls();
    in.alertmanager_url = context.alertmanager_url();
    in.api_url = api_url;
    if (auto s = (*relay)->status()) in.relay = relay_status_json(*s);
    in.report = report.status_json();
    in.queues = (*queues)->status_json();
    return in;
  });
  add_webhook_route(router, **relay, context, [&print](const std::string& line) { print(line); });
  // Other parts add their routes here, one call each (src/up/README.md).
  add_report_route(router, report);  // POST /api/report/send
  trace::add_trace_routes(router, trace_receiver);  // POST /v1/traces, GET /api/traces, GET /api/traces/{id}
  (*queues)->add_routes(router);      // GET /queues/<name>/metrics, one per redis target
  drill::add_notification_route(router, **relay);  // GET /api/notifications, read by `inferscope drill`
  drill::add_drill_up_routes(router, drill_robot.get());  // GET/POST /api/drill (404 unless drill.enabled)
  dashboard::add_dashboard_routes(router, [&context] { return context.prometheus_url(); },
                                  {.tls = context.prometheus_tls(),
                                   .scrape_interval_s = config_scrape_seconds(config),
                                   .target_notes = [&stack_mutex, &follower] {
                                     std::lock_guard lock(stack_mutex);
                                     return follower ? follower->snapshot().notes
                                                     : std::map<std::string, std::string>();
                                   },
                                   .custom_targets = custom_targets_of(config),
                                   .queue_jobs = queue_jobs_of(config)});
  doctor::add_doctor_routes(router, [&context] { return context.prometheus_url(); }, "prometheus",
                            context.prometheus_tls(), custom_targets_of(config),
                            [&context] { return context.api_url(); });  // GET /api/doctor, examples from our store

  // --listen: the public server's handler asks UpAccess first (bcrypt may block: on its own lane);
  // with users, the page signs in at /login (a session cookie, add_login_routes).
  std::unique_ptr<UpAccess> access;
  if (listen && listen->web && listen->web->has_auth()) {
    access = std::make_unique<UpAccess>(*listen->web, [&print](const std::string& line) { print(line); });
    router.set_lane("access", {.threads = 2, .max_waiting = 64, .retry_after_s = 1});
    router.set_lane("login", {.threads = 2, .max_waiting = 32, .retry_after_s = 1});
    add_login_routes(router, *access, "login");
  }
  // Every route has its role (kUpRouteRoles), --listen or not: a route added without one is a bug
  // that every start of up reports.
  if (auto roles = check_up_route_roles(router.routes()); !roles) fail(roles.error().message);
  net::RequestHandler public_handler;
  if (listen) public_handler = access ? router.handler(access->guard(), "access") : router.handler();

  net::HttpServerOptions loopback_options;
  loopback_options.port = config.port;
  loopback_options.io_threads = 2;
  loopback_options.max_body_bytes = 8u << 20;
  loopback_options.log_name = "up";
  auto server = net::HttpServer::start(loopback_options, router.handler());
  if (!server) fail(server.error().message);
  std::unique_ptr<net::HttpServer> public_server;
  if (listen) {
    net::HttpServerOptions options = loopback_options;
    options.host = listen->address.host;
    options.port = listen->address.port;
    options.log_name = "up-public";
    const bool tls = listen->web && listen->web->tls;
    if (tls) {
      const config::WebTls& files = *listen->web->tls;
      options.tls = net::TlsServerFiles{files.cert_file, files.key_file, files.client_ca_file};
    }
    auto started_public = net::HttpServer::start(options, public_handler);
    if (!started_public) {
      (*server)->stop();
      fail("--listen " + listen->text + ": " + started_public.error().message);
    }
    public_server = std::move(*started_public);
    const std::string host = listen->address.host.find(':') != std::string::npos ? "[" + listen->address.host + "]"
                                                                                  : listen->address.host;
    std::string how = tls ? "TLS" : "no TLS";
    how += access ? ", " + std::to_string(listen->web->users.size()) + " users, " +
                        std::to_string(listen->web->tokens.size()) + " tokens"
                  : ", no authentication";
    if (f.insecure_listen && !(tls && access)) {
      std::fprintf(stderr, "inferscope up: warning: --insecure-listen: %s:%u serves with %s to anyone who can reach it\n",
                   host.c_str(), static_cast<unsigned>(public_server->port()), how.c_str());
    }
    print("inferscope up: listening on " + std::string(tls ? "https" : "http") + "://" + host + ":" +
          std::to_string(public_server->port()) + " (" + how + ")");
  }
  api_url = "http://127.0.0.1:" + std::to_string((*server)->port());
  context.set_api_url(api_url);
  if (auto started_receiver = trace_receiver.start(); !started_receiver) {
    (*server)->stop();
    fail(started_receiver.error().message);
  }
  (*relay)->start();
  auto started = MonitoringStack::start(config, (*server)->port(), rules->files, registry,
                                        [&print](const std::string& line) { print(line); }, (*queues)->redis_exporters());
  if (!started) {
    (*server)->stop();
    trace_receiver.stop();
    (*relay)->stop();
    fail(started.error().message);
  }
  {
    std::lock_guard lock(stack_mutex);
    stack = std::move(*started);
    // Only a Prometheus that up runs evaluates up's rules: there the kinds of `auto` targets are
    // followed while up runs; in agent mode or with --prometheus they are settled once at start.
    const bool evaluates_rules = config.external_prometheus.empty() && !config.agent;
    KindFollowerHooks hooks{
        .probe = [](const config::TargetConfig& t, const std::string& kind) { return probe_target(t, kind); },
        .scraped_names = [url = stack->prometheus_url()](const std::string& job) {
          return prometheus_scraped_names(url, job);
        },
        .apply = [s = stack.get()](const config::StackConfig& c, const std::vector<RuleFile>& files) {
          return s->apply_rules(c, files);
        },
        .print = [&print](const std::string& line) { print("inferscope up: " + line); }};
    follower = std::make_unique<KindFollower>(config, evaluates_rules ? followed : std::vector<std::string>{}, *rules,
                                              std::move(hooks), KindFollowerOptions{.interval = config.scrape_interval});
  }
  follower->start();
  (*queues)->start();
  for (const config::QueueTargetConfig& t : config.queue_targets) {
    print("inferscope up: target " + t.name + ": redis " + t.url + ", queues collected every " +
          common::format_prom_duration(t.interval.value_or(config.scrape_interval)) + ", " +
          std::to_string(rules->alert_counts[t.name]) + " alerts, series at " + api_url + queue_metrics_path(t.name));
  }
  context.set_ready(stack->prometheus_url(), stack->alertmanager_url());
  report.start();
  const std::string alertmanager = stack->alertmanager_url().empty() ? "none" : stack->alertmanager_url();
  print("inferscope up: ready prometheus=" + stack->prometheus_url() + " alertmanager=" + alertmanager +
        " api=" + api_url);

  const int number = wait_for_stop_signal(stop_signals);
  print("inferscope up: signal " + std::to_string(number) + " received, stopping");
  if (public_server) public_server->stop(std::chrono::seconds(1));
  (*server)->stop(std::chrono::seconds(1));
  trace_receiver.stop();
  report.stop();
  (*queues)->stop();
  follower->stop();
  stack->stop();
  (*relay)->stop();
  report_sink = nullptr;
  print("inferscope up: stopped");
}

}  // namespace

void add_up_command(CLI::App& app) {
  auto flags = std::make_shared<UpFlags>();
  CLI::App* cmd = app.add_subcommand("up", "run the monitoring stack: Prometheus, Alertmanager, rules, alert relay");
  cmd->add_option("--config", flags->config_file, "YAML config (see deploy/inferscope.yaml)")->check(CLI::ExistingFile);
  cmd->add_option("--target", flags->targets,
                  "[NAME=][KIND@]URL of a /metrics endpoint to scrape (repeatable); KIND (" + config::dialect_kind_list() +
                      ") skips detection, e.g. demo=vllm@http://10.0.0.5:8000/metrics; "
                      "or NAME=redis://HOST:PORT/DB: collect its job queues (RQ, Celery; password only via the config)");
  std::vector<std::string> kind_flag_values = config::dialect_kinds();
  kind_flag_values.emplace_back(config::kAutoKind);
  cmd->add_option("--kind", flags->kind,
                  "kind of the --target servers without KIND@; auto: detected once each answers, and followed when "
                  "its metric names change")
      ->check(CLI::IsMember(kind_flag_values))
      ->capture_default_str();
  cmd->add_flag("--check", flags->check, "validate, generate and check the files with promtool, print their paths, start nothing");
  cmd->add_flag("--status", flags->status, "print the running instance's children, targets and firing alerts");
  cmd->add_flag("--json", flags->json, "with --status: print the raw JSON of GET /api/status");
  cmd->add_option("--port", flags->port, "up's own HTTP API port (0 = ephemeral)")->capture_default_str();
  cmd->add_option("--prometheus-port", flags->prometheus_port, "Prometheus port (0 = ephemeral)")->capture_default_str();
  cmd->add_option("--alertmanager-port", flags->alertmanager_port, "Alertmanager port (0 = ephemeral)")
      ->capture_default_str();
  cmd->add_option("--state-dir", flags->state_dir, "generated files, TSDB, relay outbox, trace store, logs")->capture_default_str();
  cmd->add_option("--scrape-interval", flags->scrape_interval, "scrape and rule evaluation interval")
      ->capture_default_str();
  cmd->add_flag("--node-exporter", flags->node_exporter, "also run Debian's node-exporter and scrape it");
  cmd->add_option("--remote-write", flags->remote_write, "remote_write URL (repeatable)");
  cmd->add_flag("--agent", flags->agent, "run Prometheus in agent mode (scrape and remote-write only; rules run centrally)");
  cmd->add_option("--prometheus", flags->prometheus, "use this Prometheus-compatible API instead of starting one");
  cmd->add_option("--ca-file", flags->prometheus_tls.ca_file,
                  "PEM CA certificates to trust for an https:// --prometheus, besides the system store")
      ->check(CLI::ExistingFile);
  cmd->add_flag_callback("--insecure", [flags] { flags->prometheus_tls.verify = false; },
                "do not verify the TLS certificate of an https:// --prometheus");
  cmd->add_option("--export-grafana", flags->export_grafana,
                  "write Grafana dashboards (inferscope, gateway, vLLM, llama.cpp, TGI, Triton, SGLang, LiteLLM) and "
                  "provisioning YAML into this directory, start nothing; with a redis --target (or one in --config) "
                  "they have the Queue row");
  cmd->add_option("--listen", flags->listen,
                  "ADDR:PORT of a second, public server with every route of --port, behind the web: section of "
                  "--config (TLS, users, tokens, roles; docs/up.md \"For a team\"); a non-loopback address needs TLS "
                  "and authentication unless --insecure-listen");
  cmd->add_flag("--insecure-listen", flags->insecure_listen,
                "let a non-loopback --listen serve without TLS or authentication (prints a warning at start)");
  cmd->add_flag("--hash-password", flags->hash_password,
                "read a password from stdin, print its bcrypt hash for web.users in --config, start nothing");
  cmd->add_option("--export-k8s", flags->export_k8s,
                  "write Kubernetes manifests for the Prometheus Operator into this directory, start nothing: the "
                  "rules as PrometheusRules, a ServiceMonitor per target kind, the Grafana dashboards as ConfigMaps, "
                  "up as a Deployment + Service + PersistentVolumeClaim, the Alertmanager receiver (docs/up.md)");
  cmd->add_option("--k8s-namespace", flags->k8s.namespace_name, "with --export-k8s: the namespace of every object")
      ->capture_default_str();
  cmd->add_option("--k8s-release", flags->k8s.release,
                  "with --export-k8s: the kube-prometheus-stack release, as the `release` label its selectors match "
                  "(and, without --prometheus, whose Prometheus up queries)")
      ->capture_default_str();
  cmd->add_option("--k8s-image", flags->k8s.image, "with --export-k8s: the image holding the inferscope binary")
      ->capture_default_str();
  cmd->add_option("--k8s-storage", flags->k8s.storage, "with --export-k8s: the size of up's state volume")
      ->capture_default_str();
  cmd->add_option("--k8s-metrics-port", flags->k8s.metrics_port,
                  "with --export-k8s: the name of the Service port the targets serve /metrics on")
      ->capture_default_str();
  cmd->add_option("--otlp-forward", flags->otlp_forward,
                  "also send every OTLP trace request POST /v1/traces receives to this URL (e.g. a Collector's "
                  "http://host:4318/v1/traces); a full queue or a failed send drops and counts it");
  cmd->add_option("--prometheus-bin", flags->binaries.prometheus, "path of prometheus")->capture_default_str();
  cmd->add_option("--alertmanager-bin", flags->binaries.alertmanager, "path of Alertmanager")->capture_default_str();
  cmd->add_option("--promtool-bin", flags->binaries.promtool, "path of promtool")->capture_default_str();
  cmd->add_option("--node-exporter-bin", flags->binaries.node_exporter, "path of node-exporter")->capture_default_str();
  cmd->add_option("--redis-exporter-bin", flags->binaries.redis_exporter,
                  "path of prometheus-redis-exporter (run against each redis target)")
      ->capture_default_str();
  cmd->callback([flags, cmd] { run_up(*flags, *cmd); });
}

}  // namespace inferscope::up
