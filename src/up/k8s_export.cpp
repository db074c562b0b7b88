// k8s_export: each object built as JSON (types kept), written as YAML by k8s_yaml. The object
// shapes follow the Prometheus Operator's CRDs (monitoring.coreos.com/v1 PrometheusRule and
// ServiceMonitor) and Kubernetes' apps/v1 and core/v1 APIs; tests/up/k8s_required_fields.yaml
// lists the required fields the test checks, with their sources.
#include "up/k8s_export.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "common/atomic_file.h"
#include "common/prom_duration.h"
#include "dashboard/grafana_export.h"
#include "up/k8s_yaml.h"

namespace inferscope::up {
namespace {

using nlohmann::json;

constexpr const char* kAppName = "inferscope";
constexpr const char* kStateDir = "/var/lib/inferscope";
constexpr const char* kConfigDir = "/etc/inferscope";
// kube-prometheus-stack mounts each Secret of alertmanagerSpec.secrets here (the operator's
// Alertmanager CRD: "mounted into /etc/alertmanager/secrets/<secret-name>").
constexpr const char* kAlertmanagerSecretsDir = "/etc/alertmanager/secrets/";

json labels(const K8sExportOptions& options, json extra = json::object()) {
  extra["app.kubernetes.io/name"] = kAppName;
  extra["app.kubernetes.io/part-of"] = kAppName;
  extra["release"] = options.release;
  return extra;
}

json object(const char* api_version, const char* kind, const std::string& name, const K8sExportOptions& options,
            json extra_labels = json::object()) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"metadata", {{"name", name}, {"namespace", options.namespace_name}, {"labels", labels(options, extra_labels)}}}};
}

// k8s_name turns `text` into a DNS-1123 subdomain piece: lowercase, [a-z0-9-] only, no dash at
// either end.
std::string k8s_name(std::string_view text) {
  std::string out;
  for (char c : text) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9');
    out += keep ? lower : '-';
  }
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// prometheus_rule_name names a rule file's PrometheusRule: "inferscope-common.rules.yml" →
// inferscope-common, "target-vllm.rules.yml" → inferscope-target-vllm.
std::string prometheus_rule_name(const RuleFile& file) {
  const std::string stem = k8s_name(file.name.substr(0, file.name.find(".rules.yml")));
  return stem.starts_with("inferscope") ? stem : "inferscope-" + stem;
}

// rule_value is a rule file's YAML as JSON with every scalar a string: a rules file holds strings
// only (expr, for, labels, annotations), and the CRD wants strings there.
json rule_value(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (const auto& item : node) out[item.first.as<std::string>()] = rule_value(item.second);
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const auto& item : node) out.push_back(rule_value(item));
    return out;
  }
  if (node.IsScalar()) return node.as<std::string>();
  return nullptr;
}

// kind_monitor is the ServiceMonitor of one target kind: the Services labelled
// inferscope.io/kind=<kind> in any namespace, the job named by their inferscope.io/job label (the
// target's name in up's config, which its rules select), inferscope_kind as up's own scrape adds it.
Result<json> kind_monitor(const std::string& kind, const std::vector<const config::TargetConfig*>& targets,
                          const config::StackConfig& config, const K8sExportOptions& options) {
  std::set<std::pair<std::string, std::string>> endpoints;  // scheme, path
  for (const config::TargetConfig* t : targets) endpoints.insert({t->scheme, t->metrics_path});
  if (endpoints.size() != 1) {
    return make_error("targets of kind " + kind + " serve /metrics on different paths or schemes; one ServiceMonitor "
                      "per kind needs one: give them the same, or export them separately");
  }
  json monitor = object("monitoring.coreos.com/v1", "ServiceMonitor", "inferscope-" + k8s_name(kind), options);
  monitor["spec"] = {
      {"selector", {{"matchLabels", {{"inferscope.io/kind", kind}}}}},
      {"namespaceSelector", {{"any", true}}},
      {"jobLabel", "inferscope.io/job"},
      {"endpoints", json::array({{{"port", options.metrics_port},
                                  {"scheme", endpoints.begin()->first},
                                  {"path", endpoints.begin()->second},
                                  {"interval", common::format_prom_duration(config.scrape_interval)},
                                  {"relabelings", json::array({{{"action", "replace"},
                                                                {"targetLabel", "inferscope_kind"},
                                                                {"replacement", kind}}})}}})}};
  return monitor;
}

// up_monitor scrapes up's own Service: its /metrics as job inferscope-up, and each redis target's
// queue series at /queues/<name>/metrics as job <name>, as up's own Prometheus does.
json up_monitor(const config::StackConfig& config, const K8sExportOptions& options) {
  const auto endpoint = [&](const std::string& path, const std::string& job, const std::string& kind) {
    return json{{"port", "http"},
                {"path", path},
                {"interval", common::format_prom_duration(config.scrape_interval)},
                {"relabelings", json::array({{{"action", "replace"}, {"targetLabel", "job"}, {"replacement", job}},
                                             {{"action", "replace"}, {"targetLabel", "inferscope_kind"},
                                              {"replacement", kind}}})}};
  };
  json endpoints = json::array({endpoint("/metrics", "inferscope-up", "inferscope-up")});
  for (const config::QueueTargetConfig& q : config.queue_targets) {
    endpoints.push_back(endpoint("/queues/" + q.name + "/metrics", q.name, std::string(config::kRedisKind)));
  }
  json monitor = object("monitoring.coreos.com/v1", "ServiceMonitor", "inferscope-up", options);
  monitor["spec"] = {{"selector", {{"matchLabels", {{"app.kubernetes.io/name", kAppName}}}}},
                     {"endpoints", std::move(endpoints)}};
  return monitor;
}

std::vector<K8sManifest> dashboard_maps(const config::StackConfig& config, const K8sExportOptions& options) {
  std::vector<K8sManifest> out;
  const bool queue_row = !config.queue_targets.empty();
  for (dialect::DialectId id : dashboard::grafana_dialects()) {
    const std::string dialect_name(dialect::to_string(id));
    // The sidecar's default label (kube-prometheus-stack grafana.sidecar.dashboards.label/labelValue).
    json map = object("v1", "ConfigMap", "inferscope-dashboard-" + k8s_name(dialect_name), options,
                      {{"grafana_dashboard", "1"}});
    map["data"] = {{"inferscope-" + dialect_name + ".json", dashboard::grafana_dashboard_json(id, queue_row)}};
    out.push_back({"configmap-inferscope-dashboard-" + k8s_name(dialect_name) + ".yaml", k8s_yaml(map)});
  }
  return out;
}

json up_container(const std::vector<std::string>& up_args, const K8sExportOptions& options) {
  json args = json::array({"up", "--prometheus", options.prometheus_url, "--port", std::to_string(kK8sApiPort),
                           "--state-dir", kStateDir});
  for (const std::string& a : up_args) args.push_back(a);
  json mounts = json::array({{{"name", "state"}, {"mountPath", kStateDir}}});
  if (options.config_secret) {
    args.push_back("--config");
    args.push_back(std::string(kConfigDir) + "/inferscope.yaml");
    mounts.push_back({{"name", "config"}, {"mountPath", kConfigDir}, {"readOnly", true}});
  }
  return {{"name", kAppName},
          {"image", options.image},
          {"args", std::move(args)},
          {"ports", json::array({{{"name", "http"}, {"containerPort", kK8sApiPort}, {"protocol", "TCP"}}})},
          {"volumeMounts", std::move(mounts)}};
}

std::vector<K8sManifest> up_workload(const std::vector<std::string>& up_args, const K8sExportOptions& options) {
  const json selector = {{"app.kubernetes.io/name", kAppName}};
  json volumes = json::array({{{"name", "state"}, {"persistentVolumeClaim", {{"claimName", "inferscope-state"}}}}});
  if (options.config_secret) volumes.push_back({{"name", "config"}, {"secret", {{"secretName", kConfigSecret}}}});
  json deployment = object("apps/v1", "Deployment", kAppName, options);
  // One replica and Recreate: the relay's outbox and the trace store are SQLite files on a
  // ReadWriteOnce volume, which two pods must never open at once.
  deployment["spec"] = {
      {"replicas", 1},
      {"strategy", {{"type", "Recreate"}}},
      {"selector", {{"matchLabels", selector}}},
      {"template",
       {{"metadata", {{"labels", labels(options)}}},
        {"spec", {{"containers", json::array({up_container(up_args, options)})}, {"volumes", std::move(volumes)}}}}}};
  json service = object("v1", "Service", kAppName, options);
  service["spec"] = {{"selector", selector},
                     {"ports", json::array({{{"name", "http"}, {"port", kK8sApiPort}, {"targetPort", "http"},
                                             {"protocol", "TCP"}}})}};
  json claim = object("v1", "PersistentVolumeClaim", "inferscope-state", options);
  claim["spec"] = {{"accessModes", json::array({"ReadWriteOnce"})},
                   {"resources", {{"requests", {{"storage", options.storage}}}}}};
  return {{"deployment-inferscope.yaml", k8s_yaml(deployment)},
          {"service-inferscope.yaml", k8s_yaml(service)},
          {"persistentvolumeclaim-inferscope-state.yaml", k8s_yaml(claim)}};
}

// alertmanager_values is the part of kube-prometheus-stack's Helm values that routes inferscope's
// alerts to up's relay, as up's own alertmanager.yml does, with the token from the Secret.
K8sManifest alertmanager_values(const config::StackConfig& config, const K8sExportOptions& options) {
  const config::AlertmanagerTiming& t = config.alertmanager_timing;
  const std::string webhook = "http://" + std::string(kAppName) + "." + options.namespace_name +
                              ".svc:" + std::to_string(kK8sApiPort) + kWebhookPath;
  // The watchdog is repeated often so the relay can tell "no news" from "the pipeline is dead" (as
  // up's own alertmanager.yml does it).
  const auto watchdog_repeat = std::max(t.group_interval, std::chrono::milliseconds(std::chrono::minutes(1)));
  const json watchdog = {{"receiver", "inferscope-relay"},
                         {"matchers", json::array({"alertname=\"InferscopeWatchdog\""})},
                         {"repeat_interval", common::format_prom_duration(watchdog_repeat)}};
  const json route = {{"receiver", "inferscope-relay"},
                      {"matchers", json::array({"alertname=~\"Inferscope.+\""})},
                      {"group_by", json::array({"alertname", "job"})},
                      {"group_wait", common::format_prom_duration(t.group_wait)},
                      {"group_interval", common::format_prom_duration(t.group_interval)},
                      {"repeat_interval", common::format_prom_duration(t.repeat_interval)},
                      {"routes", json::array({watchdog})}};
  const json receiver = {
      {"name", "inferscope-relay"},
      {"webhook_configs",
       json::array({{{"url", webhook},
                     {"send_resolved", true},
                     {"max_alerts", 0},
                     {"http_config",
                      {{"authorization",
                        {{"type", "Bearer"},
                         {"credentials_file", std::string(kAlertmanagerSecretsDir) + kRelayTokenSecret + "/token"}}}}}}})}};
  const json values = {{"alertmanager",
                        {{"alertmanagerSpec", {{"secrets", json::array({kRelayTokenSecret})}}},
                         {"config", {{"route", {{"routes", json::array({route})}}},
                                     {"receivers", json::array({receiver})}}}}}};
  return {"alertmanager-values.yaml",
          "# kube-prometheus-stack Helm values (generated by inferscope up --export-k8s): route inferscope's alerts\n"
          "# to up's relay. Merge by hand into your values: Helm replaces lists, so add this route and receiver\n"
          "# to the ones you have. The token comes from Secret " + std::string(kRelayTokenSecret) +
              " (key token), mounted by alertmanagerSpec.secrets.\n" + k8s_yaml(values)};
}

}  // namespace

std::string k8s_prometheus_url(const std::string& release, const std::string& namespace_name) {
  constexpr std::string_view kChart = "kube-prometheus-stack";
  std::string fullname = release.find(kChart) != std::string::npos ? release : release + "-" + std::string(kChart);
  fullname = fullname.substr(0, 26);
  while (!fullname.empty() && fullname.back() == '-') fullname.pop_back();
  return "http://" + fullname + "-prometheus." + namespace_name + ".svc:9090";
}

Result<void> check_k8s_export_options(const K8sExportOptions& o) {
  static const std::regex dns_label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  static const std::regex label_value("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");
  static const std::regex quantity("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");
  static const std::regex port_name("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  if (o.namespace_name.size() > 63 || !std::regex_match(o.namespace_name, dns_label)) {
    return make_error("bad --k8s-namespace \"" + o.namespace_name + "\": expected a DNS-1123 label (a-z, 0-9, '-', at most 63)");
  }
  if (o.release.empty() || o.release.size() > 63 || !std::regex_match(o.release, label_value)) {
    return make_error("bad --k8s-release \"" + o.release + "\": expected a label value (A-Z, a-z, 0-9, '-', '_', '.', at most 63)");
  }
  if (o.image.empty() || std::any_of(o.image.begin(), o.image.end(), [](unsigned char c) { return std::isspace(c) || c < 0x20; })) {
    return make_error("bad --k8s-image \"" + o.image + "\": expected an image reference such as registry/inferscope:1.0");
  }
  if (!std::regex_match(o.storage, quantity)) {
    return make_error("bad --k8s-storage \"" + o.storage + "\": expected a quantity such as 10Gi or 500Mi");
  }
  const bool has_letter = std::any_of(o.metrics_port.begin(), o.metrics_port.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  if (o.metrics_port.size() > 15 || !has_letter || !std::regex_match(o.metrics_port, port_name)) {
    return make_error("bad --k8s-metrics-port \"" + o.metrics_port +
                      "\": expected a Service port name (a-z, 0-9, '-', at most 15, one letter at least)");
  }
  return {};
}

Result<std::string> prometheus_rule_yaml(const RuleFile& file, const K8sExportOptions& options) {
  YAML::Node rules;
  try {
    rules = YAML::Load(file.text);
  } catch (const YAML::Exception& e) {
    return make_error("cannot read rule file " + file.name + ": " + e.what());
  }
  json rule = object("monitoring.coreos.com/v1", "PrometheusRule", prometheus_rule_name(file), options);
  rule["spec"] = rule_value(rules);
  return k8s_yaml(rule);
}

// render_settled renders with every option settled (the Prometheus URL filled in).
static Result<std::vector<K8sManifest>> render_settled(const config::StackConfig& config,
                                                       const std::vector<RuleFile>& rule_files,
                                                       const std::vector<std::string>& up_args,
                                                       const K8sExportOptions& options);

Result<std::vector<K8sManifest>> render_k8s_export(const config::StackConfig& config,
                                                   const std::vector<RuleFile>& rule_files,
                                                   const std::vector<std::string>& up_args,
                                                   const K8sExportOptions& options) {
  if (auto checked = check_k8s_export_options(options); !checked) return checked.error();
  K8sExportOptions settled = options;
  if (settled.prometheus_url.empty()) settled.prometheus_url = k8s_prometheus_url(options.release, options.namespace_name);
  return render_settled(config, rule_files, up_args, settled);
}

static Result<std::vector<K8sManifest>> render_settled(const config::StackConfig& config,
                                                       const std::vector<RuleFile>& rule_files,
                                                       const std::vector<std::string>& up_args,
                                                       const K8sExportOptions& options) {
  std::vector<K8sManifest> out;
  std::set<std::string> names;
  for (const RuleFile& file : rule_files) {
    auto text = prometheus_rule_yaml(file, options);
    if (!text) return text.error();
    const std::string name = prometheus_rule_name(file);
    if (!names.insert(name).second) return make_error("two rule files become one PrometheusRule " + name + ": rename a target");
    out.push_back({"prometheusrule-" + name + ".yaml", std::move(*text)});
  }
  std::map<std::string, std::vector<const config::TargetConfig*>> by_kind;
  for (const config::TargetConfig& t : config.targets) {
    if (t.kind == config::kAutoKind) {
      return make_error("target " + t.name + " has kind auto: --export-k8s writes rules and a ServiceMonitor per kind, "
                        "give it one (NAME=KIND@URL, --kind, or kind: in the config)");
    }
    by_kind[t.kind].push_back(&t);
  }
  for (const auto& [kind, targets] : by_kind) {
    auto monitor = kind_monitor(kind, targets, config, options);
    if (!monitor) return monitor.error();
    out.push_back({"servicemonitor-inferscope-" + k8s_name(kind) + ".yaml", k8s_yaml(*monitor)});
  }
  out.push_back({"servicemonitor-inferscope-up.yaml", k8s_yaml(up_monitor(config, options))});
  for (K8sManifest& m : dashboard_maps(config, options)) out.push_back(std::move(m));
  for (K8sManifest& m : up_workload(up_args, options)) out.push_back(std::move(m));
  out.push_back(alertmanager_values(config, options));
  return out;
}

Result<std::vector<std::string>> write_k8s_export(const config::StackConfig& config,
                                                  const std::vector<RuleFile>& rule_files,
                                                  const std::vector<std::string>& up_args,
                                                  const K8sExportOptions& options) {
  auto manifests = render_k8s_export(config, rule_files, up_args, options);
  if (!manifests) return manifests.error();
  std::error_code ec;
  const std::filesystem::path dir(options.directory);
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error("cannot create " + dir.string() + ": " + ec.message());
  std::vector<std::string> written;
  for (const K8sManifest& m : *manifests) {
    if (auto w = common::write_file_atomically(dir / m.file_name, m.text); !w) return w.error();
    written.push_back((dir / m.file_name).string());
  }
  return written;
}

}  // namespace inferscope::up
