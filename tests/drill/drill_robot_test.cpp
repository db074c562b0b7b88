// Tests of up's drill robot and its /api/drill routes over loopback HTTP: the robot accepts until
// switched to refusing (503, OpenAI error JSON), its URL file and relay channel, and the routes'
// answers with the drill on (switch, bad body) and off (404).
#include "drill/drill_robot.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "net/http_server.h"
#include "net/blocking_client.h"

namespace inferscope::drill {
namespace {

class DrillRobotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/inferscope-drill-robot-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // serve starts an HTTP server with up's drill routes over `robot` and returns its base URL.
  std::string serve(DrillRobot* robot) {
    add_drill_up_routes(router_, robot);
    auto server = net::HttpServer::start({.host = "127.0.0.1", .port = 0}, router_.handler());
    EXPECT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    return "http://127.0.0.1:" + std::to_string(server_->port());
  }
  std::filesystem::path dir_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
};

// Tests that the robot accepts, then refuses with 503 and the OpenAI error JSON, and counts both;
// the channel reads the robot's URL from the file start() wrote.
TEST_F(DrillRobotTest, AcceptsUntilRefusing) {
  auto robot = DrillRobot::start(dir_);
  ASSERT_TRUE(robot) << robot.error().message;
  const relay::ChannelConfig channel = (*robot)->channel();
  EXPECT_EQ(channel.kind, relay::ChannelKind::kWebhook);
  EXPECT_EQ(channel.name, "drill");
  EXPECT_TRUE(channel.url.env.empty());
  std::ifstream file(channel.url.file);
  std::stringstream url;
  url << file.rdbuf();
  EXPECT_EQ(url.str(), (*robot)->url());
  EXPECT_EQ(url.str().rfind("http://127.0.0.1:", 0), 0u) << url.str();

  auto ok = net::blocking_http_request("POST", (*robot)->url(), R"({"text":"x"})", "application/json");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->status, 200);
  (*robot)->set_refusing(true);
  auto refused = net::blocking_http_request("POST", (*robot)->url(), R"({"text":"x"})", "application/json");
  ASSERT_TRUE(refused) << refused.error().message;
  EXPECT_EQ(refused->status, 503);
  const auto error = nlohmann::json::parse(refused->body, nullptr, false);
  ASSERT_TRUE(error.contains("error")) << refused->body;
  EXPECT_NE(error["error"]["message"].get<std::string>().find("refuses"), std::string::npos) << refused->body;
  EXPECT_EQ((*robot)->accepted(), 1u);
  EXPECT_EQ((*robot)->refused(), 1u);
}

// Tests GET/POST /api/drill with the drill on: the switch flips the robot, a bad body gets 400.
TEST_F(DrillRobotTest, RoutesSwitchTheRobot) {
  auto robot = DrillRobot::start(dir_);
  ASSERT_TRUE(robot) << robot.error().message;
  const std::string api = serve(robot->get()) + kDrillApiPath;
  auto state = net::blocking_http_request("POST", api, R"({"refuse": true})", "application/json");
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_EQ(state->status, 200);
  EXPECT_EQ(nlohmann::json::parse(state->body),
            (nlohmann::json{{"enabled", true}, {"channel", "drill"}, {"refusing", true}, {"accepted", 0}, {"refused", 0}}));
  EXPECT_TRUE((*robot)->refusing());
  auto bad = net::blocking_http_request("POST", api, R"({"refuse": "yes"})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(nlohmann::json::parse(bad->body)["error"]["param"], "refuse") << bad->body;
  EXPECT_TRUE((*robot)->refusing()) << "a bad body changes nothing";
  state = net::blocking_http_request("POST", api, R"({"refuse": false})", "application/json");
  ASSERT_TRUE(state);
  EXPECT_FALSE((*robot)->refusing());
  state = net::blocking_http_request("GET", api);
  ASSERT_TRUE(state);
  EXPECT_EQ(nlohmann::json::parse(state->body)["refusing"], false);
}

// Tests that with the drill off both routes answer 404 with the OpenAI error JSON saying how to
// turn it on.
TEST_F(DrillRobotTest, RoutesAnswer404WhenOff) {
  const std::string api = serve(nullptr) + kDrillApiPath;
  for (const char* method : {"GET", "POST"}) {
    auto reply = net::blocking_http_request(method, api, R"({"refuse": true})", "application/json");
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->status, 404) << method;
    const auto error = nlohmann::json::parse(reply->body, nullptr, false);
    ASSERT_TRUE(error.contains("error")) << reply->body;
    EXPECT_NE(error["error"]["message"].get<std::string>().find("drill: {enabled: true}"), std::string::npos)
        << reply->body;
  }
}

}  // namespace
}  // namespace inferscope::drill
