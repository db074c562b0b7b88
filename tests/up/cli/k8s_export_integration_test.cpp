// Tests of `inferscope up --export-k8s` (src/up/k8s_export.h): each exported PrometheusRule's
// spec, written back as a rules file, passes `promtool check rules` and the same `promtool test
// rules` inputs as the rule files (tests/alerts/rule_scenarios.h); the CLI's manifests hold the
// required fields listed in tests/up/cli/testdata/k8s_required_fields.yaml; the dashboards
// round-trip equal to --export-grafana's; bad flag values are one-line errors.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "alerts/rule_scenarios.h"
#include "support/peers.h"
#include "support/promtool_run.h"
#include "dashboard/grafana_export.h"
#include "support/temp_dir.h"
#include "up/child_process.h"
#include "up/k8s_export.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using up::testing::run_cli;
namespace rs = alerts::rule_scenarios;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// spec_as_rules_file is what the Prometheus Operator hands Prometheus: the object's spec.
std::string spec_as_rules_file(const std::string& manifest) {
  YAML::Emitter out;
  out << YAML::Load(manifest)["spec"];
  return out.c_str();
}


// Tests that every dialect's, the common and a queue target's PrometheusRule pass promtool check
// rules and the alert catalog's promtool tests, exactly as the rule files do.
TEST(K8sExportTest, PrometheusRulesPassTheRuleFilesPromtoolTests) {
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kPromtool}));
  inferscope::testing::TempDir dir("k8s-rules");
  const auto check_and_test = [&](const alerts::RuleFile& file, const std::string& tests) {
    auto manifest = prometheus_rule_yaml(file, {});
    ASSERT_TRUE(manifest) << manifest.error().message;
    std::ofstream(dir.path() / file.name) << spec_as_rules_file(*manifest);
    const auto check = inferscope::testing::run_promtool({"check", "rules", "--lint-fatal", file.name}, dir.path().string());
    EXPECT_EQ(check.exit_code, 0) << file.name << ":\n" << check.output;
    std::ofstream(dir.path() / ("test-" + file.name)) << rs::promtool_test_file(file.name, tests);
    const auto test = inferscope::testing::run_promtool({"test", "rules", "test-" + file.name}, dir.path().string());
    EXPECT_EQ(test.exit_code, 0) << file.name << ":\n" << test.output;
  };
  std::size_t tested = 0;
  for (dialect::DialectId id : dialect::kAllDialects) {
    if (id == dialect::DialectId::kCustom) continue;
    const rs::Target target{id, "t-" + std::string(dialect::to_string(id))};
    alerts::RulesConfig config = rs::test_config();
    config.targets = {{target.job, id}};
    auto rules = alerts::generate_rules(config);
    ASSERT_TRUE(rules) << rules.error().message;
    const std::string tests = rs::dialect_alert_tests(target, rules->files.at(1), tested);
    ASSERT_FALSE(tests.empty()) << target.job;
    check_and_test(rules->files.at(1), tests);
  }
  EXPECT_GE(tested, 50u);
  alerts::RulesConfig config = rs::test_config();
  config.queue_jobs = {rs::kQueueJob};
  auto rules = alerts::generate_rules(config);
  ASSERT_TRUE(rules);
  check_and_test(rules->files.at(0), rs::common_alert_tests());
  check_and_test(rules->files.at(1), rs::queue_alert_tests());
}

// nodes_at returns the nodes at `path` ("spec.groups[].rules[].expr"); `missing` counts the
// instances of the last parent that lack the final key.
void nodes_at(const YAML::Node& node, const std::string& path, std::vector<YAML::Node>& out, int& missing) {
  const auto dot = path.find('.');
  std::string head = path.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : path.substr(dot + 1);
  const bool each = head.ends_with("[]");
  if (each) head.resize(head.size() - 2);
  if (!node.IsMap() || !node[head]) {
    ++missing;
    return;
  }
  const YAML::Node child = node[head];
  std::vector<YAML::Node> children;
  if (each) {
    if (!child.IsSequence() || child.size() == 0) {
      ++missing;
      return;
    }
    for (const auto& c : child) children.push_back(c);
  } else {
    children.push_back(child);
  }
  for (const YAML::Node& c : children) {
    if (rest.empty()) out.push_back(c);
    else nodes_at(c, rest, out, missing);
  }
}

class K8sExportCliTest : public ::testing::Test {
 protected:
  std::vector<std::string> targets_ = {"--target", "vllm-a=vllm@http://vllm.ml.svc:8000/metrics", "--target",
                                       "sim=inferscope@http://sim.ml.svc:9000/metrics", "--target",
                                       "jobs=redis://redis.ml.svc:6379/0"};
  inferscope::testing::TempDir dir_{"k8s-export"};
  std::vector<std::string> args(std::vector<std::string> head) {
    head.insert(head.begin(), "up");
    head.insert(head.end(), targets_.begin(), targets_.end());
    return head;
  }
};

// Tests every manifest against the required-field facts of the CRDs and Kubernetes APIs.
TEST_F(K8sExportCliTest, EveryManifestHasTheRequiredFields) {
  const auto out = dir_.path() / "k8s";
  const CommandResult run = run_cli(args({"--export-k8s", out.string(), "--k8s-release", "prom"}));
  ASSERT_TRUE(run.ok()) << run.output;
  const YAML::Node facts = YAML::LoadFile(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/up/cli/testdata/k8s_required_fields.yaml");
  std::map<std::string, int> kinds;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    if (entry.path().filename() == "alertmanager-values.yaml") continue;
    const YAML::Node object = YAML::LoadFile(entry.path().string());
    const std::string kind = object["kind"].as<std::string>();
    ++kinds[kind];
    const YAML::Node fact = facts[kind];
    ASSERT_TRUE(fact) << entry.path() << ": no facts for kind " << kind;
    EXPECT_EQ(object["apiVersion"].as<std::string>(), fact["apiVersion"].as<std::string>()) << entry.path();
    EXPECT_EQ(object["metadata"]["namespace"].as<std::string>(), "monitoring");
    EXPECT_EQ(object["metadata"]["labels"]["release"].as<std::string>(), "prom");
    for (const auto& path : fact["required"]) {
      std::vector<YAML::Node> found;
      int missing = 0;
      nodes_at(object, path.as<std::string>(), found, missing);
      EXPECT_EQ(missing, 0) << entry.path() << " lacks " << path.as<std::string>();
    }
    for (const auto& [label, value] : fact["labels"].as<std::map<std::string, std::string>>()) {
      EXPECT_EQ(object["metadata"]["labels"][label].as<std::string>(""), value) << entry.path() << " " << label;
    }
    if (kind == "ConfigMap") {
      EXPECT_LT(read_text(entry.path()).size(), fact["max_bytes"].as<std::size_t>());
    }
    if (kind == "Deployment") {
      for (const auto& item : object["spec"]["selector"]["matchLabels"]) {
        const std::string key = item.first.as<std::string>();
        EXPECT_EQ(object["spec"]["template"]["metadata"]["labels"][key].as<std::string>(""),
                  item.second.as<std::string>());
      }
      const YAML::Node args = object["spec"]["template"]["spec"]["containers"][0]["args"];
      EXPECT_EQ(args[2].as<std::string>(), "http://prom-kube-prometheus-stack-prometheus.monitoring.svc:9090");
    }
  }
  EXPECT_EQ(kinds["PrometheusRule"], 4);  // common, two targets, the queue
  EXPECT_EQ(kinds["ServiceMonitor"], 3);  // vllm, inferscope, up itself
  EXPECT_EQ(kinds["Deployment"], 1);
  EXPECT_EQ(kinds["Service"], 1);
  EXPECT_EQ(kinds["PersistentVolumeClaim"], 1);
  // The receiver snippet, as an Alertmanager config, passes amtool.
  const YAML::Node values = YAML::LoadFile((out / "alertmanager-values.yaml").string());
  YAML::Node config = values["alertmanager"]["config"];
  config["route"]["receiver"] = "inferscope-relay";
  std::ofstream(dir_.path() / "alertmanager.yml") << YAML::Dump(config);
  auto amtool = run_command("/usr/bin/amtool", {"check-config", (dir_.path() / "alertmanager.yml").string()}, 60s);
  ASSERT_TRUE(amtool);
  EXPECT_TRUE(amtool->ok()) << amtool->output;
}

// Tests that the dashboard ConfigMaps hold exactly what --export-grafana writes.
TEST_F(K8sExportCliTest, DashboardsRoundTripWithExportGrafana) {
  ASSERT_TRUE(run_cli(args({"--export-k8s", (dir_.path() / "k8s").string()})).ok());
  ASSERT_TRUE(run_cli(args({"--export-grafana", (dir_.path() / "grafana").string()})).ok());
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() / "k8s")) {
    if (!entry.path().filename().string().starts_with("configmap-")) continue;
    const YAML::Node map = YAML::LoadFile(entry.path().string());
    EXPECT_EQ(map["metadata"]["labels"]["grafana_dashboard"].as<std::string>(), "1");
    for (const auto& item : map["data"]) {
      const std::string key = item.first.as<std::string>();
      EXPECT_EQ(item.second.as<std::string>(), read_text(dir_.path() / "grafana" / "dashboards" / key)) << key;
      ++compared;
    }
  }
  EXPECT_EQ(compared, static_cast<int>(dashboard::grafana_dialects().size()));
}

// Tests that bad values are one-line errors naming the flag, with a non-zero exit.
TEST_F(K8sExportCliTest, BadFlagValuesAreOneLineErrors) {
  const auto check = [&](std::vector<std::string> flags, const std::string& want) {
    const CommandResult r = run_cli(args(std::move(flags)));
    EXPECT_FALSE(r.ok()) << want;
    EXPECT_NE(r.output.find(want), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  const std::string out = (dir_.path() / "bad").string();
  check({"--export-k8s", out, "--k8s-namespace", "Bad_NS"}, "--k8s-namespace");
  check({"--export-k8s", out, "--k8s-release", "-x-"}, "--k8s-release");
  check({"--export-k8s", out, "--k8s-storage", "10GB"}, "--k8s-storage");
  check({"--export-k8s", out, "--k8s-metrics-port", "Metrics"}, "--k8s-metrics-port");
  check({"--export-k8s", out, "--k8s-image", ""}, "--k8s-image");
  check({"--k8s-namespace", "ml"}, "applies to --export-k8s");
  const CommandResult autok = run_cli({"up", "--export-k8s", out, "--target", "x=http://x:1/metrics"});
  EXPECT_FALSE(autok.ok());
  EXPECT_NE(autok.output.find("target x has kind auto"), std::string::npos) << autok.output;
}

}  // namespace
}  // namespace inferscope::up
