// File: monitoring_stack.cpp
#include "up/monitoring_stack.h"

#include <unistd.h>

#include <filesystem>

#include "common/prom_duration.h"
#include "net/blocking_client.h"
#include "up/child_process.h"

namespace inferscope::up {
namespace {

using std::chrono::seconds;

std::string address(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// first_error_line picks the line that says what is wrong from a tool's output.
std::string first_error_line(const std::string& output) {
  std::size_t start = 0;
  std::string first;
  while (start < output.size()) {
    const std::size_t end = output.find('\n', start);
    const std::string line = output.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty() && first.empty()) first = line;
    if (line.find("FAILED") != std::string::npos || line.find("rror") != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return first.empty() ? "(no output)" : first;
}

// one_line joins a tool's output lines with "; " for a one-line report.
std::string one_line(const std::string& output) {
  std::string out;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
    start = end + 1;
  }
  return out;
}

Result<std::string> run_check(const std::string& binary, std::vector<std::string> args, const std::string& what) {
  auto r = run_command(binary, args, seconds(30));
  if (!r) return make_error("cannot run " + what + ": " + r.error().message);
  if (!r->ok()) return make_error(what + " failed (" + r->exit.describe() + "): " + first_error_line(r->output));
  return what + ": " + one_line(r->output);
}

std::string amtool_path(const config::StackConfig& config) {
  return (std::filesystem::path(config.binaries.alertmanager).parent_path() / "amtool").string();
}

// external_url_args: the configured external URL (served at the root all the same, so up's own
// probes and queries keep working behind a proxy path), else the loopback address once the port
// is known (on port 0 the first start has none: the webhook route re-bases those links).
std::vector<std::string> external_url_args(const std::string& configured, std::uint16_t port) {
  if (!configured.empty()) return {"--web.external-url=" + configured, "--web.route-prefix=/"};
  if (port != 0) return {"--web.external-url=http://" + address(port)};
  return {};
}

ChildSpec alertmanager_spec(const config::StackConfig& config, const GeneratedFiles& files, const std::filesystem::path& state) {
  ChildSpec spec;
  spec.name = "alertmanager";
  spec.binary = config.binaries.alertmanager;
  spec.port = config.alertmanager_port;
  spec.log_file = state / "logs" / "alertmanager.log";
  const std::string config_file = files.alertmanager_yml.string();
  const std::string storage = (state / "alertmanager").string();
  const std::string external = config.alertmanager_external_url;
  spec.args = [config_file, storage, external](std::uint16_t port) {
    std::vector<std::string> args{"--config.file=" + config_file, "--storage.path=" + storage,
                                  "--web.listen-address=" + address(port),
                                  // No gossip: a lone Alertmanager otherwise waits ~10 s to settle.
                                  "--cluster.listen-address="};
    for (std::string& a : external_url_args(external, port)) args.push_back(std::move(a));
    return args;
  };
  return spec;
}

ChildSpec prometheus_spec(const config::StackConfig& config, const GeneratedFiles& files, const std::filesystem::path& state) {
  ChildSpec spec;
  spec.name = "prometheus";
  spec.binary = config.binaries.prometheus;
  spec.port = config.prometheus_port;
  spec.log_file = state / "logs" / "prometheus.log";
  // TSDB replay after an unclean stop can take a while on a big data dir.
  spec.ready_timeout = seconds(120);
  const std::string config_file = files.prometheus_yml.string();
  const bool agent = config.agent;
  const std::string data = (state / (agent ? "prometheus-agent" : "prometheus")).string();
  const std::string retention = common::format_prom_duration(config.retention);
  const std::string external = config.prometheus_external_url;
  spec.args = [config_file, data, retention, agent, external](std::uint16_t port) {
    std::vector<std::string> args{"--config.file=" + config_file, "--web.listen-address=" + address(port),
                                  "--web.enable-lifecycle"};
    if (agent) {
      args.push_back("--enable-feature=agent");
      args.push_back("--storage.agent.path=" + data);
    } else {
      args.push_back("--storage.tsdb.path=" + data);
      args.push_back("--storage.tsdb.retention.time=" + retention);
      // Keeps the trace_id exemplars targets expose in OpenMetrics, which 2.42 asks for first.
      args.push_back("--enable-feature=exemplar-storage");
      // Without this the first notification waits a minute after Prometheus finds Alertmanager.
      args.push_back("--rules.alert.resend-delay=1s");
    }
    for (std::string& a : external_url_args(external, port)) args.push_back(std::move(a));
    return args;
  };
  return spec;
}

ChildSpec node_exporter_spec(const config::StackConfig& config, const std::filesystem::path& state) {
  ChildSpec spec;
  spec.name = "node-exporter";
  spec.binary = config.binaries.node_exporter;
  spec.port = 0;
  spec.ready_path = "/metrics";
  spec.log_file = state / "logs" / "node-exporter.log";
  spec.args = [](std::uint16_t port) {
    return std::vector<std::string>{"--web.listen-address=" + address(port)};
  };
  return spec;
}

// The exporter logs no bound port ("Providing metrics at 127.0.0.1:0/metrics"): read from its socket.
ChildSpec redis_exporter_spec(const config::StackConfig& config, const std::filesystem::path& state,
                              const RedisExporterTarget& target) {
  ChildSpec spec;
  spec.name = "redis-exporter-" + target.name;
  spec.binary = config.binaries.redis_exporter;
  spec.port = 0;
  spec.port_from_socket = true;
  spec.ready_path = "/health";  // /metrics would wait on Redis, which may be down: that is its redis_up 0
  spec.log_file = state / "logs" / (spec.name + ".log");
  // Always set, empty too: a REDIS_PASSWORD in up's own environment is not this target's.
  spec.env = {"REDIS_PASSWORD=" + target.password};
  spec.args = [redis_url = target.address](std::uint16_t port) {
    return std::vector<std::string>{"-redis.addr=" + redis_url, "-web.listen-address=" + address(port),
                                    "-redis-only-metrics"};
  };
  return spec;
}

}  // namespace

Result<CheckReport> check_generated_files(const config::StackConfig& config, const StackPorts& ports,
                                          const std::vector<RuleFile>& rule_files) {
  CheckReport report;
  auto files = write_generated_files(config, ports, rule_files);
  if (!files) return files.error();
  report.files = *files;
  std::vector<std::string> args{"check", "config"};
  if (config.agent) args.push_back("--agent");
  args.push_back(files->prometheus_yml.string());
  auto c = run_check(config.binaries.promtool, args, "promtool check config " + files->prometheus_yml.string());
  if (!c) return c.error();
  report.tool_output.push_back(*c);
  for (const auto& rule_file : files->rule_files) {
    auto r = run_check(config.binaries.promtool, {"check", "rules", rule_file.string()},
                       "promtool check rules " + rule_file.string());
    if (!r) return r.error();
    report.tool_output.push_back(*r);
  }
  if (const std::string amtool = amtool_path(config); ::access(amtool.c_str(), X_OK) == 0) {
    auto a = run_check(amtool, {"check-config", files->alertmanager_yml.string()},
                       "amtool check-config " + files->alertmanager_yml.string());
    if (!a) return a.error();
    report.tool_output.push_back(*a);
  }
  return report;
}

MonitoringStack::MonitoringStack(metrics::Registry& registry, SupervisorEvents events)
    : supervisor_(std::move(events), registry) {}

MonitoringStack::~MonitoringStack() { stop(); }

void MonitoringStack::stop() { supervisor_.stop_all(); }

Result<std::unique_ptr<MonitoringStack>> MonitoringStack::start(const config::StackConfig& config, std::uint16_t api_port,
                                                                const std::vector<RuleFile>& rule_files,
                                                                metrics::Registry& registry, SupervisorEvents events,
                                                                const std::vector<RedisExporterTarget>& redis_exporters) {
  std::error_code ec;
  const std::filesystem::path state = std::filesystem::absolute(config.state_dir, ec);
  for (const char* sub : {"logs", "prometheus", "alertmanager"}) {
    std::filesystem::create_directories(state / sub, ec);
    if (ec) return make_error("cannot create " + (state / sub).string() + ": " + ec.message());
  }
  std::unique_ptr<MonitoringStack> stack(new MonitoringStack(registry, std::move(events)));
  StackPorts ports{.api = api_port, .alertmanager = config.alertmanager_port};
  const bool run_prometheus = config.external_prometheus.empty();
  const bool run_alertmanager = run_prometheus && !config.agent;
  // Alertmanager first: with port 0 its real port is known only once it runs, and
  // prometheus.yml must name it.
  auto files = write_generated_files(config, ports, rule_files);
  if (!files) return files.error();
  if (run_alertmanager) {
    if (const std::string amtool = amtool_path(config); ::access(amtool.c_str(), X_OK) == 0) {
      if (auto a = run_check(amtool, {"check-config", files->alertmanager_yml.string()}, "amtool check-config"); !a) {
        return a.error();
      }
    }
    auto port = stack->supervisor_.start(alertmanager_spec(config, *files, state));
    if (!port) return port.error();
    ports.alertmanager = *port;
    stack->alertmanager_url_ = "http://" + address(*port);
  }
  if (config.node_exporter) {
    auto port = stack->supervisor_.start(node_exporter_spec(config, state));
    if (!port) return port.error();
    ports.node_exporter = *port;
  }
  for (const RedisExporterTarget& target : run_prometheus ? redis_exporters : std::vector<RedisExporterTarget>{}) {
    auto port = stack->supervisor_.start(redis_exporter_spec(config, state, target));
    if (!port) return port.error();
    ports.redis_exporters.emplace_back(target.name, *port);
  }
  if (!run_prometheus) {
    stack->prometheus_url_ = config.external_prometheus;
    while (!stack->prometheus_url_.empty() && stack->prometheus_url_.back() == '/') stack->prometheus_url_.pop_back();
    stack->files_ = *files;
    return stack;
  }
  auto checked = check_generated_files(config, ports, rule_files);
  if (!checked) return checked.error();
  auto port = stack->supervisor_.start(prometheus_spec(config, checked->files, state));
  if (!port) return port.error();
  stack->prometheus_url_ = "http://" + address(*port);
  // Now that Prometheus' own port is known it can scrape itself (samples/s, TSDB health).
  ports.prometheus = *port;
  stack->ports_ = ports;
  if (auto applied = stack->apply_rules(config, rule_files); !applied) return applied.error();
  return stack;
}

Result<void> MonitoringStack::apply_rules(const config::StackConfig& config, const std::vector<RuleFile>& rule_files) {
  auto files = write_generated_files(config, ports_, rule_files);
  if (!files) return files.error();
  auto reload = net::blocking_http_request("POST", prometheus_url_ + "/-/reload", {}, {}, seconds(10));
  if (!reload || reload->status != 200) {
    return make_error("cannot reload Prometheus at " + prometheus_url_ + ": " +
                      (reload ? "HTTP " + std::to_string(reload->status) + " " + reload->body : reload.error().message));
  }
  files_ = *files;
  return {};
}

}  // namespace inferscope::up
