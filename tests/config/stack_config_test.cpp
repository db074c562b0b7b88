// Tests of stack_config.h: the YAML config.
#include "config/stack_config.h"

#include "config/role_mapping.h"

#include <gtest/gtest.h>


namespace inferscope::config {
namespace {

using std::chrono::milliseconds;

// Tests that --target accepts NAME=URL and URL and rejects what Prometheus could not scrape.
TEST(TargetUrlTest, ParsesNameAndUrl) {
  auto t = parse_target_url("sim=http://127.0.0.1:8000");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "sim");
  EXPECT_EQ(t->host_port, "127.0.0.1:8000");
  EXPECT_EQ(t->metrics_path, "/metrics");
  EXPECT_EQ(t->url, "http://127.0.0.1:8000/metrics");
  t = parse_target_url("https://gpu1:9400/custom/metrics");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "gpu1_9400");
  EXPECT_EQ(t->scheme, "https");
  EXPECT_EQ(t->metrics_path, "/custom/metrics");
  EXPECT_EQ(t->kind, "auto");
  t = parse_target_url("demo=vllm@http://10.0.0.5:8000/metrics");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "demo");
  EXPECT_EQ(t->kind, "vllm");
  EXPECT_EQ(t->url, "http://10.0.0.5:8000/metrics");
  t = parse_target_url("tgi@http://h:3000");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "h_3000");
  EXPECT_EQ(t->kind, "tgi");
  const auto unknown_kind = parse_target_url("demo=vlm@http://h:1");
  ASSERT_FALSE(unknown_kind.ok());
  EXPECT_NE(unknown_kind.error().message.find("unknown kind \"vlm\""), std::string::npos) << unknown_kind.error().message;
  for (const char* bad : {"127.0.0.1:8000", "http://host", "http://:80", "ftp://h:1", "bad name=http://h:1",
                          "demo=auto@http://h:1", "demo=@http://h:1",
                          "http://h:0", "http://h:70000", "http://h:1/m?x=1", "http://h\x88:1", "http://h:1/a b"}) {
    EXPECT_FALSE(parse_target_url(bad).ok()) << bad;
  }
}

// Tests that a full config reads every section into the struct.
TEST(StackConfigTest, ReadsEverySection) {
  const char* yaml = R"(
scrape_interval: 2s
evaluation_interval: 4s
retention: 7d
port: 0
state_dir: /tmp/x
node_exporter: true
remote_write: [http://central:9090/api/v1/write]
targets:
  - name: sim
    url: http://127.0.0.1:8000/metrics
    kind: inferscope
  - url: http://127.0.0.1:8001
slo:
  e2e_p99: 8s
  ttft_p95: 500ms
  error_ratio: 0.02
alerts:
  for:
    InferscopeE2EP99High: 3m
    InferscopeErrorRatioHigh: 0s
alertmanager:
  group_wait: 1s
notifications:
  watchdog_timeout: 5m
  channels:
    - name: oncall
      kind: dingtalk
      url: {env: DT_URL}
      secret: {file: /run/secrets/dt}
)";
  auto c = parse_stack_config(yaml, "t.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->scrape_interval, milliseconds(2000));
  EXPECT_EQ(c->effective_evaluation_interval(), milliseconds(4000));
  EXPECT_EQ(c->retention, milliseconds(7LL * 24 * 3600 * 1000));
  EXPECT_EQ(c->port, 0);
  EXPECT_TRUE(c->node_exporter);
  ASSERT_EQ(c->targets.size(), 2u);
  EXPECT_EQ(c->targets[0].kind, "inferscope");
  EXPECT_EQ(c->targets[1].kind, "auto");
  EXPECT_EQ(c->targets[1].name, "127.0.0.1_8001");
  EXPECT_DOUBLE_EQ(c->slo.e2e_p99_seconds, 8.0);
  EXPECT_DOUBLE_EQ(c->slo.ttft_p95_seconds, 0.5);
  EXPECT_DOUBLE_EQ(c->slo.error_ratio, 0.02);
  EXPECT_EQ(c->alert_for.at("InferscopeE2EP99High"), milliseconds(180000));
  EXPECT_EQ(c->alert_for.at("InferscopeErrorRatioHigh"), milliseconds(0));
  EXPECT_EQ(c->alertmanager_timing.group_wait, milliseconds(1000));
  ASSERT_EQ(c->relay.channels.size(), 1u);
  EXPECT_EQ(c->relay.channels[0].kind, relay::ChannelKind::kDingTalk);
  EXPECT_EQ(c->relay.channels[0].url.env, "DT_URL");
  EXPECT_EQ(c->relay.channels[0].secret.file, "/run/secrets/dt");
  EXPECT_EQ(c->relay.watchdog.timeout, std::chrono::seconds(300));
  EXPECT_TRUE(validate_stack_config(*c).ok());
}

// Tests the drill's keys: alerts.throughput_baseline_offset, alerts.notification_window (unset
// when not given) and drill.enabled (off by default).
TEST(StackConfigTest, DrillKeysAndAlertWindows) {
  auto c = parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n"
                              "alerts: {throughput_baseline_offset: 30s, notification_window: 20s, "
                              "feature_baseline_offset: 2m}\n"
                              "drill: {enabled: true}\n", "t.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->throughput_baseline_offset, milliseconds(30000));
  EXPECT_EQ(c->notification_window, milliseconds(20000));
  EXPECT_EQ(c->feature_baseline_offset, milliseconds(120000));
  EXPECT_TRUE(c->drill_enabled);
  auto plain = parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n", "t.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->drill_enabled);
  EXPECT_FALSE(plain->throughput_baseline_offset);
  EXPECT_FALSE(plain->notification_window);
  EXPECT_FALSE(plain->feature_baseline_offset);
  auto bad = parse_stack_config("drill:\n  enabled: 1\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.yaml:2:12: key 'drill.enabled'"), std::string::npos) << bad.error().message;
  bad = parse_stack_config("drill:\n  enable: true\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("key 'drill.enable': unknown key"), std::string::npos) << bad.error().message;
  bad = parse_stack_config("alerts:\n  notification_window: 0\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("key 'alerts.notification_window'"), std::string::npos) << bad.error().message;
}

// Tests traces: (up's trace store bounds): defaults when absent, values when given, and bad values
// named with file:line:col.
TEST(StackConfigTest, TracesKeys) {
  auto plain = parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n", "t.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->traces.max_mb, 256);
  EXPECT_EQ(plain->traces.retention, std::chrono::hours(24));
  EXPECT_EQ(plain->traces.slowest_per_window, 100);
  auto c = parse_stack_config("traces: {max_mb: 64, retention: 6h, slowest_per_window: 20}\n", "t.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->traces.max_mb, 64);
  EXPECT_EQ(c->traces.retention, std::chrono::hours(6));
  EXPECT_EQ(c->traces.slowest_per_window, 20);
  auto bad = parse_stack_config("traces:\n  max_mb: 0\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.yaml:2:11: key 'traces.max_mb'"), std::string::npos) << bad.error().message;
  bad = parse_stack_config("traces:\n  retention: forever\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.yaml:2:14: key 'traces.retention'"), std::string::npos) << bad.error().message;
  bad = parse_stack_config("traces:\n  slowest_per_window: 2.5\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("key 'traces.slowest_per_window': expected a whole number"), std::string::npos)
      << bad.error().message;
  bad = parse_stack_config("traces:\n  keep: 3\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("key 'traces.keep': unknown key"), std::string::npos) << bad.error().message;
}

// Tests external_urls (how people reach Prometheus/Alertmanager behind a proxy): read when given,
// empty by default, and a non-http URL or an unknown key named with its position.
TEST(StackConfigTest, ExternalUrls) {
  auto c = parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n"
                              "external_urls:\n  prometheus: https://ops.example.com/prometheus/\n"
                              "  alertmanager: http://alerts.example.com\n", "t.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->prometheus_external_url, "https://ops.example.com/prometheus/");
  EXPECT_EQ(c->alertmanager_external_url, "http://alerts.example.com");
  auto plain = parse_stack_config("targets: [{url: http://127.0.0.1:8000}]\n", "t.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->prometheus_external_url.empty());
  EXPECT_TRUE(plain->alertmanager_external_url.empty());
  auto bad = parse_stack_config("external_urls:\n  prometheus: ops.example.com:9090\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.yaml:2:15: key 'external_urls.prometheus'"), std::string::npos)
      << bad.error().message;
  bad = parse_stack_config("external_urls:\n  grafana: http://g\n", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("key 'external_urls.grafana': unknown key"), std::string::npos) << bad.error().message;
}

// Tests that each bad config fails with file:line:column and the key's name.
TEST(StackConfigTest, ErrorsNameFileLineColumnAndKey) {
  const auto check = [](const char* yaml, const char* want) {
    auto c = parse_stack_config(yaml, "bad.yaml");
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_EQ(c.error().message.find('\n'), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find(want), std::string::npos) << "got: " << c.error().message << "\nwant: " << want;
  };
  check("scrape_intervall: 5s\n", "bad.yaml:1:1: key 'scrape_intervall': unknown key");
  check("targets:\n  - url: http://h:1\n    knd: vllm\n", "bad.yaml:3:5: key 'targets[0].knd': unknown key");
  check("targets:\n  - url: http://h:1\n    kind: vlm\n", "bad.yaml:3:11: key 'targets[0].kind': unknown kind \"vlm\"");
  check("scrape_interval: 5\n", "bad.yaml:1:18: key 'scrape_interval': not a valid duration");
  check("slo:\n  error_ratio: 2\n", "bad.yaml:2:16: key 'slo.error_ratio': must be between 0 and 1");
  check("port: 99999\n", "bad.yaml:1:7: key 'port'");
  check("targets:\n  - name: x\n", "bad.yaml:2:5: key 'targets[0].url': missing");
  check("notifications:\n  channels:\n    - kind: feishu\n      url: https://open.feishu.cn/hook/tok\n",
        "bad.yaml:4:12: key 'notifications.channels[0].url': secrets are never written in the config");
  check("alerts:\n  for:\n    Bad-Name: 5m\n", "bad.yaml:3:5: key 'alerts.for.Bad-Name'");
  check("targets: [\n", "bad.yaml:2:1: cannot parse YAML");
  // Found by stack_config_fuzz: a multi-line key must not break the one-line error.
  check("? |\n  two\n  lines\n: 1\n", "key 'two\\nlines\\n': unknown key");
}

// Tests that a `kind: custom` target's roles become its mapping, and that a bad line is named
// by file, line, column and key; a --roles file reads the same keys.
TEST(StackConfigTest, CustomTargetMapsRoles) {
  auto c = parse_stack_config("targets:\n  - name: house\n    url: http://h:1\n    kind: custom\n    model_label: model\n"
                              "    roles:\n      e2e: llm_request_latency_seconds\n"
                              "      gpu_utilization: {metric: gpu_utilization_percent, unit: percent}\n",
                              "ok.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->targets.size(), 1u);
  EXPECT_EQ(c->targets[0].kind, "custom");
  ASSERT_TRUE(c->targets[0].custom);
  const auto& table = c->targets[0].custom->table();
  EXPECT_EQ(table.model_label, "model");
  ASSERT_NE(dialect::find_binding(table, dialect::Role::kE2e), nullptr);
  EXPECT_DOUBLE_EQ(dialect::find_binding(table, dialect::Role::kGpuUtilization)->scale, 0.01);

  const auto check = [](const char* yaml, const char* want) {
    auto bad = parse_stack_config(yaml, "bad.yaml");
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_EQ(bad.error().message.find('\n'), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find(want), std::string::npos) << "got: " << bad.error().message << "\nwant: " << want;
  };
  const std::string head = "targets:\n  - url: http://h:1\n    kind: custom\n";
  check(head.c_str(), "bad.yaml:2:5: key 'targets[0].roles': missing");
  check((head + "    roles:\n      e2ee: x\n").c_str(), "bad.yaml:5:13: key 'targets[0].roles.e2ee': role \"e2ee\": unknown role");
  check((head + "    roles:\n      e2e: x_bucket\n").c_str(), "bad.yaml:5:12: key 'targets[0].roles.e2e': role \"e2e\": give the");
  check((head + "    roles:\n      kv_usage: {metric: kv, unit: MB}\n").c_str(),
        "key 'targets[0].roles.kv_usage': role \"kv_usage\": unit \"MB\" does not fit");
  check((head + "    roles:\n      e2e: {metrc: x}\n").c_str(), "key 'targets[0].roles.e2e.metrc': unknown key");
  check("targets:\n  - url: http://h:1\n    kind: vllm\n    roles:\n      e2e: x\n",
        "bad.yaml:5:7: key 'targets[0].roles': only a target of kind custom maps its own names");

  auto file = parse_role_mapping("roles:\n  e2e: llm_request_latency_seconds\n", "roles.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_NE(dialect::find_binding((*file)->table(), dialect::Role::kE2e), nullptr);
  auto bad_file = parse_role_mapping("roles:\n  e2e: x\nkind: custom\n", "roles.yaml");
  ASSERT_FALSE(bad_file.ok());
  EXPECT_NE(bad_file.error().message.find("roles.yaml:3:1: key 'kind': unknown key"), std::string::npos)
      << bad_file.error().message;
}

// Tests that the merged config is checked across keys (names, ports, modes).
TEST(StackConfigTest, ValidatesMergedConfig) {
  StackConfig c;
  EXPECT_FALSE(validate_stack_config(c).ok());  // no targets
  c.targets.push_back(*parse_target_url("a=http://h:1"));
  EXPECT_TRUE(validate_stack_config(c).ok());
  c.targets.push_back(*parse_target_url("a=http://h:2"));
  EXPECT_FALSE(validate_stack_config(c).ok());  // duplicate name
  c.targets.pop_back();
  c.prometheus_port = c.port;
  EXPECT_FALSE(validate_stack_config(c).ok());
  c.prometheus_port = 0;
  c.port = 0;
  c.alertmanager_port = 0;
  EXPECT_TRUE(validate_stack_config(c).ok());  // several ephemeral ports are fine
  c.agent = true;
  EXPECT_FALSE(validate_stack_config(c).ok());  // agent without remote write
  c.remote_write.push_back("http://central:9090/api/v1/write");
  EXPECT_TRUE(validate_stack_config(c).ok());
  c.external_prometheus = "http://p:9090";
  EXPECT_FALSE(validate_stack_config(c).ok());
}

// Tests that the shipped example config is valid as it stands.
TEST(StackConfigTest, ShippedExampleLoads) {
  auto c = load_stack_config(std::string(INFERSCOPE_SOURCE_DIR) + "/deploy/inferscope.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->targets.size(), 1u);
  EXPECT_EQ(c->relay.channels.size(), 1u);
  EXPECT_TRUE(validate_stack_config(*c).ok());
}

// Tests the redis target form of --target: the scheme selects the kind, a password never rides
// in the URL, and the name defaults like other targets'.
TEST(QueueTargetUrlTest, ParsesNameAndRefusesPasswords) {
  EXPECT_TRUE(is_queue_target_url("jobs=redis://127.0.0.1:6379/0"));
  EXPECT_TRUE(is_queue_target_url("redis://h"));
  EXPECT_FALSE(is_queue_target_url("sim=http://127.0.0.1:8000"));
  EXPECT_FALSE(is_queue_target_url("x=vllm@http://h:1/redis://"));
  auto t = parse_queue_target_url("jobs=redis://127.0.0.1:6380/2");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "jobs");
  EXPECT_EQ(t->url, "redis://127.0.0.1:6380/2");
  EXPECT_EQ(t->systems, (std::vector<std::string>{"rq", "celery"}));
  t = parse_queue_target_url("redis://cache");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "cache_6379");
  EXPECT_EQ(t->url, "redis://cache:6379/0");
  const auto secret = parse_queue_target_url("jobs=redis://:hunter2@127.0.0.1:6379/0");
  ASSERT_FALSE(secret.ok());
  EXPECT_EQ(secret.error().message.find("hunter2"), std::string::npos) << secret.error().message;
  EXPECT_NE(secret.error().message.find("password_file"), std::string::npos) << secret.error().message;
  for (const char* bad : {"bad name=redis://h:1/0", "jobs=redis://h:0/0", "jobs=redis://h:1/x"}) {
    EXPECT_FALSE(parse_queue_target_url(bad).ok()) << bad;
  }
}

// Tests a redis target in the config: queues block, password source, systems defaulting to rq and
// celery plus what is named, errors with file:line:column, and names unique across both kinds.
TEST(StackConfigTest, RedisTargetsAndQueueSlo) {
  auto c = parse_stack_config("targets:\n"
                              "  - name: sim\n    url: http://127.0.0.1:8000/metrics\n"
                              "  - name: jobs\n    url: redis://127.0.0.1:6379/1\n    password_env: REDIS_PW\n"
                              "    queues:\n      streams: [{key: tasks, group: workers}]\n      interval: 2s\n"
                              "slo:\n  queue_wait: 90s\n  queue_depth: 50\n  queue_failure_ratio: 0.2\n",
                              "q.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->targets.size(), 1u);
  ASSERT_EQ(c->queue_targets.size(), 1u);
  const QueueTargetConfig& q = c->queue_targets[0];
  EXPECT_EQ(q.name, "jobs");
  EXPECT_EQ(q.url, "redis://127.0.0.1:6379/1");
  EXPECT_EQ(q.password.env, "REDIS_PW");
  EXPECT_EQ(q.systems, (std::vector<std::string>{"rq", "celery", "streams"}));
  ASSERT_EQ(q.streams.size(), 1u);
  EXPECT_EQ(q.streams[0], (std::pair<std::string, std::string>{"tasks", "workers"}));
  EXPECT_EQ(q.interval, milliseconds(2000));
  EXPECT_DOUBLE_EQ(c->slo.queue_wait_seconds, 90);
  EXPECT_DOUBLE_EQ(c->slo.queue_depth, 50);
  EXPECT_DOUBLE_EQ(c->slo.queue_failure_ratio, 0.2);
  EXPECT_TRUE(validate_stack_config(*c).ok());

  const auto expect_error = [](const std::string& yaml, const std::string& part) {
    const auto bad = parse_stack_config(yaml, "q.yaml");
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_NE(bad.error().message.find(part), std::string::npos) << bad.error().message;
  };
  expect_error("targets:\n  - url: redis://h:1/0\n    queues:\n      systems: [rq, sidekiq]\n",
               "q.yaml:4:21: key 'targets[0].queues.systems[1]': unknown queue system \"sidekiq\"");
  expect_error("targets:\n  - url: redis://h:1/0\n    password: x\n", "key 'targets[0].password': unknown key");
  expect_error("targets:\n  - url: redis://:pw@h:1/0\n", "key 'targets[0].url'");
  expect_error("targets:\n  - url: redis://h:1/0\n    password_env: A\n    password_file: /f\n", "not both");
  expect_error("targets:\n  - url: redis://h:1/0\n    queues:\n      systems: [rq]\n      lists: [a]\n",
               "systems does not list list");
  expect_error("targets:\n  - url: http://h:1/metrics\n    queues: {}\n", "key 'targets[0].queues': unknown key");

  auto twice = parse_stack_config("targets:\n  - {name: a, url: 'http://h:1'}\n  - {name: a, url: 'redis://h:2/0'}\n", "q.yaml");
  ASSERT_TRUE(twice.ok()) << twice.error().message;
  const auto v = validate_stack_config(*twice);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("\"a\" is used twice"), std::string::npos) << v.error().message;
}

}  // namespace
}  // namespace inferscope::config
