// File: k8s_export.h
// `inferscope up --export-k8s DIR`: up's stack as Kubernetes objects for a cluster whose
// Prometheus and Alertmanager the Prometheus Operator runs (kube-prometheus-stack): up's rule
// files as PrometheusRule objects, a ServiceMonitor per target kind (and one for up's own series),
// the Grafana dashboards of --export-grafana as ConfigMaps for Grafana's dashboard sidecar, up
// itself (`inferscope up --prometheus URL`: relay, page, doctor, trace store) as a Deployment with
// a Service and a PersistentVolumeClaim, and the Alertmanager receiver that points at up's webhook
// with a bearer token read from a Secret. Every assumption about the cluster is an option here and
// a flag of up. Docs: docs/up.md "On Kubernetes".
// Example: auto written = write_k8s_export(config, rules, {.directory = "k8s"});
// Pure rendering plus plain file writes; thread-compatible. Never writes a secret: the Secrets it
// refers to (up's config, the relay token) are created by the operator of the cluster.
#pragma once

#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "config/stack_config.h"
#include "up/generated_files.h"

namespace inferscope::up {

// K8sExportOptions are the cluster's assumptions, each with the default kube-prometheus-stack
// installed as release "kube-prometheus-stack" in namespace "monitoring" gives.
struct K8sExportOptions {
  std::string directory;
  std::string namespace_name = "monitoring";      // where every object goes (and Grafana's sidecar looks)
  std::string release = "kube-prometheus-stack";  // the `release` label the operator's selectors match
  std::string prometheus_url = {};                // empty: the release's Prometheus Service (k8s_prometheus_url)
  std::string image = "inferscope:latest";        // the image holding the inferscope binary
  std::string storage = "10Gi";                   // the PersistentVolumeClaim's request
  std::string metrics_port = "metrics";           // the Service port name the targets' /metrics is on
  bool config_secret = false;                     // up's config comes from Secret inferscope-config
};

// kK8sApiPort is the port up listens on inside its pod (its --port there).
inline constexpr int kK8sApiPort = 9300;
// kRelayTokenSecret holds the bearer token Alertmanager sends to up's webhook (key "token").
inline constexpr const char* kRelayTokenSecret = "inferscope-relay-token";
// kConfigSecret holds up's config file (key "inferscope.yaml") when one is given.
inline constexpr const char* kConfigSecret = "inferscope-config";

// k8s_prometheus_url is the query URL of the Prometheus kube-prometheus-stack's release `release`
// runs in `namespace_name`: its Service "<fullname>-prometheus" on port 9090, where fullname is the
// release name when it contains the chart's name, else "<release>-kube-prometheus-stack" cut to 26
// characters (the chart's _helpers.tpl).
std::string k8s_prometheus_url(const std::string& release, const std::string& namespace_name);

// check_k8s_export_options refuses a value Kubernetes would refuse, naming its flag: a namespace
// that is not a DNS-1123 label, a release that is not a label value, an empty or spaced image, a
// storage that is not a quantity, a port name that is not an IANA service name.
Result<void> check_k8s_export_options(const K8sExportOptions& options);

// prometheus_rule_yaml returns `file` (a rules file: `groups:`) as a PrometheusRule object whose
// spec is the file's content, every rule value kept a string.
Result<std::string> prometheus_rule_yaml(const RuleFile& file, const K8sExportOptions& options);

// K8sManifest is one written file: its name in DIR and its YAML text.
struct K8sManifest {
  std::string file_name;
  std::string text;
};

// render_k8s_export renders every object for `config` (targets with their kinds settled: an
// `auto` target fails, naming it) and `rule_files` (generate_up_rules' files for it). Up's own
// arguments in the Deployment are `up_args` (the --target values given to this up, passed on).
Result<std::vector<K8sManifest>> render_k8s_export(const config::StackConfig& config,
                                                   const std::vector<RuleFile>& rule_files,
                                                   const std::vector<std::string>& up_args,
                                                   const K8sExportOptions& options);

// write_k8s_export renders and writes every manifest into options.directory (created), returning
// the paths written; fails with "cannot write <path>: <cause>" or render_k8s_export's error.
Result<std::vector<std::string>> write_k8s_export(const config::StackConfig& config,
                                                  const std::vector<RuleFile>& rule_files,
                                                  const std::vector<std::string>& up_args,
                                                  const K8sExportOptions& options);

}  // namespace inferscope::up
