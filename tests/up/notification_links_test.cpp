// Tests of fix_local_links: the links of a webhook body from a Prometheus/Alertmanager started on
// port 0 ("http://<hostname>:0/...") are pointed at the real bound address; others are kept.
#include "up/notification_links.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace inferscope::up {
namespace {

// Tests that only a port-0 origin is replaced, keeping path, query and fragment.
TEST(NotificationLinksTest, ReplacesOnlyPortZeroOrigins) {
  EXPECT_EQ(replace_port_zero_origin("http://box:0/graph?g0.expr=up%3D%3D0&g0.tab=1", "http://127.0.0.1:41234"),
            "http://127.0.0.1:41234/graph?g0.expr=up%3D%3D0&g0.tab=1");
  EXPECT_EQ(replace_port_zero_origin("http://box:0", "http://127.0.0.1:41235/"), "http://127.0.0.1:41235");
  EXPECT_EQ(replace_port_zero_origin("http://box:0?x=1", "http://127.0.0.1:9"), "http://127.0.0.1:9?x=1");
  EXPECT_EQ(replace_port_zero_origin("http://box:9090/graph", "http://127.0.0.1:1"), "http://box:9090/graph");
  EXPECT_EQ(replace_port_zero_origin("http://box:10/graph", "http://127.0.0.1:1"), "http://box:10/graph");
  EXPECT_EQ(replace_port_zero_origin("https://alerts.example.com/", "http://127.0.0.1:1"), "https://alerts.example.com/");
  EXPECT_EQ(replace_port_zero_origin("http://box:0/graph", ""), "http://box:0/graph");
  EXPECT_EQ(replace_port_zero_origin("not a url :0", "http://127.0.0.1:1"), "not a url :0");
}

// Tests that externalURL and every generatorURL of a v4 body are re-based, and that a body
// without port-0 links or that is not JSON comes back byte for byte.
TEST(NotificationLinksTest, RebasesWebhookBodyLinks) {
  const std::string body = R"({"version":"4","status":"firing","externalURL":"http://build-host:0",
    "alerts":[{"status":"firing","labels":{"alertname":"A"},"generatorURL":"http://build-host:0/graph?g0.expr=x"},
              {"status":"firing","labels":{"alertname":"B"},"generatorURL":"http://prom.example:9090/graph"}]})";
  const auto fixed = nlohmann::json::parse(fix_local_links(body, "http://127.0.0.1:41234", "http://127.0.0.1:41235"));
  EXPECT_EQ(fixed["externalURL"], "http://127.0.0.1:41235");
  EXPECT_EQ(fixed["alerts"][0]["generatorURL"], "http://127.0.0.1:41234/graph?g0.expr=x");
  EXPECT_EQ(fixed["alerts"][1]["generatorURL"], "http://prom.example:9090/graph");
  EXPECT_EQ(fixed["alerts"][0]["labels"]["alertname"], "A");

  const std::string clean = R"({"externalURL":"http://127.0.0.1:9093","alerts":[]})";
  EXPECT_EQ(fix_local_links(clean, "http://127.0.0.1:1", "http://127.0.0.1:2"), clean);
  EXPECT_EQ(fix_local_links("{not json", "http://127.0.0.1:1", "http://127.0.0.1:2"), "{not json");
  EXPECT_EQ(fix_local_links(R"([1,2])", "http://127.0.0.1:1", "http://127.0.0.1:2"), "[1,2]");
}

}  // namespace
}  // namespace inferscope::up
