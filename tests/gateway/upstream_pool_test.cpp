// Tests of the gateway's upstream choice: equally loaded upstreams are taken in turn, within the
// set configured for a model.
#include "gateway/upstream_pool.h"

#include <gtest/gtest.h>
#include <inferscope/metrics/registry.h>

#include <map>

namespace inferscope::gateway {
namespace {

GatewayConfig config_with(int upstreams) {
  GatewayConfig c;
  for (int i = 0; i < upstreams; ++i) EXPECT_TRUE(add_upstream_url(c, "http://127.0.0.1:" + std::to_string(9001 + i)));
  return c;
}

// Tests that idle upstreams share the requests: with ties broken always the same way, a replica
// behind a lightly loaded gateway never saw a request.
TEST(UpstreamPoolTest, TiesAreTakenInTurn) {
  GatewayConfig config = config_with(4);
  metrics::Registry registry;
  GatewayMetrics metrics(registry, config);
  auto pool = UpstreamPool::create(config, metrics);
  ASSERT_TRUE(pool) << pool.error().message;
  std::map<std::string, int> chosen;
  for (int i = 0; i < 8; ++i) ++chosen[(*pool)->choose("any")->config().name];
  ASSERT_EQ(chosen.size(), 4u);
  for (const auto& [name, times] : chosen) EXPECT_EQ(times, 2) << name;
}

// Tests that a configured model's requests go only to its upstreams, in turn.
TEST(UpstreamPoolTest, ModelsKeepToTheirUpstreams) {
  GatewayConfig config = config_with(3);
  config.models["sim-b"] = {config.upstreams[1].name, config.upstreams[2].name};
  metrics::Registry registry;
  GatewayMetrics metrics(registry, config);
  auto pool = UpstreamPool::create(config, metrics);
  ASSERT_TRUE(pool) << pool.error().message;
  std::map<std::string, int> chosen;
  for (int i = 0; i < 6; ++i) ++chosen[(*pool)->choose("sim-b")->config().name];
  EXPECT_EQ(chosen, (std::map<std::string, int>{{config.upstreams[1].name, 3}, {config.upstreams[2].name, 3}}));
}

}  // namespace
}  // namespace inferscope::gateway
