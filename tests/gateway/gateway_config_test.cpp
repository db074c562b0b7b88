// Tests of the gateway's YAML config: good files load, bad values name file:line and the key.
#include "gateway/gateway_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferscope::gateway {
namespace {

class GatewayConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gwcfg-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text) {
    const std::string path = (dir_ / "gw.yaml").string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

// Tests that a full config loads with its values.
TEST_F(GatewayConfigTest, LoadsAFullConfig) {
  const auto path = write(R"(port: 9000
max_concurrency: 4
queue_timeout: 500ms
timeouts:
  connect: 2s
  idle: 1m
upstreams:
  - name: a
    url: http://127.0.0.1:8000
    max_concurrency: 2
    api_key_env: GW_TEST_KEY
  - url: https://example.com/base
models:
  llama: [a]
)");
  auto c = load_gateway_config_file(path);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->port, 9000);
  EXPECT_EQ(c->max_concurrency, 4u);
  EXPECT_EQ(c->queue_timeout.count(), 500);
  EXPECT_EQ(c->connect_timeout.count(), 2000);
  EXPECT_EQ(c->idle_timeout.count(), 60000);
  ASSERT_EQ(c->upstreams.size(), 2u);
  EXPECT_EQ(c->upstreams[0].max_concurrency.value_or(0), 2u);
  EXPECT_EQ(c->upstreams[1].name, "example.com:443");
  EXPECT_EQ(c->upstreams[1].target.base_path, "/base");
  EXPECT_TRUE(c->upstreams[1].target.tls);
  EXPECT_EQ(c->models["llama"], std::vector<std::string>{"a"});
}

// Tests that each bad value is rejected with the file, the line and the key's name.
TEST_F(GatewayConfigTest, BadValuesNameFileLineAndKey) {
  auto check = [&](const std::string& text, const std::string& want) {
    const auto path = write(text);
    auto c = load_gateway_config_file(path);
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message.find(want), std::string::npos) << "got: " << c.error().message << "; want: " << want;
    EXPECT_NE(c.error().message.find(path), std::string::npos) << c.error().message;
  };
  check("port: 8000\nmax_concurrency: -3\n", "gw.yaml:2: key 'max_concurrency'");
  check("max_queue: lots\n", ":1: key 'max_queue'");
  check("queue_timeout: 30 parsecs\n", ":1: key 'queue_timeout'");
  check("timeouts:\n  connect: 1s\n  header: soon\n", ":3: key 'header'");
  check("timeouts:\n  conect: 1s\n", ":2: key 'conect' is unknown");
  check("upstreams:\n  - name: a\n    url: ftp://x\n", ":3: key 'url'");
  check("upstreams:\n  - name: a\n    url: http://x\n    api_key: sk-123\n", ":4: key 'api_key' is not allowed");
  check("upstreams:\n  - name: a\n    url: http://x\n    verify_tls: maybe\n", ":4: key 'verify_tls'");
  check("upstreams:\n  - name: a\n", "key 'url' is missing");
  check("models:\n  llama: [b]\nupstreams:\n  - name: a\n    url: http://x\n", "key 'models' names upstream 'b'");
  check("prot: 80\n", ":1: key 'prot' is unknown");
  check("tracing:\n  sample: 0.5\n", ":2: key 'tracing' needs otlp_endpoint");
  check("tracing:\n  otlp_endpoint: ftp://x\n", ":2: key 'otlp_endpoint'");
  check("tracing:\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n  sample: 1.5\n", ":3: key 'sample'");
  check("tracing:\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n  sample: half\n", ":3: key 'sample'");
  check("tracing:\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n  slow: -2s\n", ":3: key 'slow'");
  check("tracing:\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n  smaple: 1\n", ":3: key 'smaple' is unknown");
  check("tracing: on\n", ":1: key 'tracing' must be a map");
  check("port: [1\n", "gw.yaml:");
}

// Tests durations, --upstream URLs and secrets from env and files.
// Tests the tracing map: endpoint, head sampling ratio and slow threshold.
TEST_F(GatewayConfigTest, TracingSettings) {
  const auto path = write("tracing:\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n  sample: 0.25\n  slow: 1500ms\n"
                          "upstreams:\n  - url: http://127.0.0.1:8000\n");
  auto c = load_gateway_config_file(path);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->tracing.enabled());
  EXPECT_EQ(c->tracing.otlp_endpoint, "http://127.0.0.1:4318/v1/traces");
  EXPECT_DOUBLE_EQ(c->tracing.policy.sample_ratio, 0.25);
  EXPECT_DOUBLE_EQ(c->tracing.policy.slow_seconds.value_or(0), 1.5);
  GatewayConfig off;
  EXPECT_FALSE(off.tracing.enabled());
}

TEST_F(GatewayConfigTest, DurationsUrlsAndSecrets) {
  EXPECT_EQ(parse_duration("250ms")->count(), 250);
  EXPECT_EQ(parse_duration("2")->count(), 2000);
  EXPECT_EQ(parse_duration("1.5s")->count(), 1500);
  EXPECT_FALSE(parse_duration("fast"));
  EXPECT_FALSE(parse_duration("3d"));
  GatewayConfig c;
  EXPECT_FALSE(add_upstream_url(c, "localhost:8000"));
  ASSERT_TRUE(add_upstream_url(c, "http://127.0.0.1:8000"));
  EXPECT_EQ(c.upstreams.at(0).name, "127.0.0.1:8000");
  EXPECT_TRUE(validate_gateway_config(c));
  EXPECT_FALSE(validate_gateway_config(GatewayConfig{}));
  ::setenv("GW_TEST_SECRET", "sk-env", 1);
  EXPECT_EQ(*read_secret("GW_TEST_SECRET", ""), "sk-env");
  const std::string file = (dir_ / "key").string();
  std::ofstream(file) << "sk-file\n";
  EXPECT_EQ(*read_secret("", file), "sk-file");
  auto missing = read_secret("GW_TEST_SECRET_UNSET", "");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message.find("sk-"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::gateway
