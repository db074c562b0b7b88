#include "drill/drill_robot.h"

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "common/atomic_file.h"
#include "net/http_server.h"

namespace inferscope::drill {
namespace {

constexpr const char* kRobotPath = "/robot";

nlohmann::json state_json(const DrillRobot& robot) {
  return {{"enabled", true},
          {"channel", kDrillChannel},
          {"refusing", robot.refusing()},
          {"accepted", robot.accepted()},
          {"refused", robot.refused()}};
}

}  // namespace

Result<std::unique_ptr<DrillRobot>> DrillRobot::start(const std::filesystem::path& state_dir) {
  std::unique_ptr<DrillRobot> robot(new DrillRobot());
  DrillRobot* self = robot.get();
  robot->router_ = std::make_unique<net::Router>();
  robot->router_->post(kRobotPath, [self](const net::Request&) {
    if (self->refusing_.load()) {
      self->refused_.fetch_add(1);
      net::ApiError refused = net::ApiError::server_error("the drill robot refuses messages (inferscope drill)");
      refused.status = 503;
      return net::Response::error(refused);
    }
    self->accepted_.fetch_add(1);
    return net::Response::json(R"({"ok":true})");
  });
  auto server = net::HttpServer::start({.host = "127.0.0.1", .port = 0, .io_threads = 1, .max_body_bytes = 8u << 20,
                                        .log_name = "drill-robot"},
                                       robot->router_->handler());
  if (!server) return make_error("cannot start the drill robot: " + server.error().message);
  robot->server_ = std::move(*server);
  robot->url_ = "http://127.0.0.1:" + std::to_string(robot->server_->port()) + kRobotPath;
  robot->url_file_ = state_dir / "drill-robot.url";
  if (auto w = common::write_file_atomically(robot->url_file_, robot->url_); !w) return w.error();
  ::chmod(robot->url_file_.c_str(), 0600);
  return robot;
}

DrillRobot::~DrillRobot() = default;

relay::ChannelConfig DrillRobot::channel() const {
  relay::ChannelConfig c;
  c.kind = relay::ChannelKind::kWebhook;
  c.name = kDrillChannel;
  c.url.file = url_file_.string();
  return c;
}

Result<bool> parse_drill_switch(std::string_view body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("refuse") || !json["refuse"].is_boolean() ||
      json.size() != 1) {
    return make_error("cannot read the drill switch: expected {\"refuse\": true|false}");
  }
  return json["refuse"].get<bool>();
}

void add_drill_up_routes(net::Router& router, DrillRobot* robot) {
  auto answer = [robot](const net::Request& request) {
    if (!request.peer_loopback) {
      net::ApiError forbidden = net::ApiError::bad_request("the drill API answers loopback peers only");
      forbidden.status = 403;
      return net::Response::error(forbidden);
    }
    if (robot == nullptr) {
      return net::Response::error(net::ApiError::not_found(
          "the drill is not enabled on this inferscope up: set `drill: {enabled: true}` in its config"));
    }
    if (request.method == "POST") {
      auto refuse = parse_drill_switch(request.body);
      if (!refuse) return net::Response::error(net::ApiError::bad_request(refuse.error().message, "refuse"));
      robot->set_refusing(*refuse);
    }
    return net::Response::json(state_json(*robot).dump());
  };
  router.get(kDrillApiPath, answer);
  router.post(kDrillApiPath, answer);
}

}  // namespace inferscope::drill
