// File: drill/drill_robot.h
// The fire drill's chat robot inside `inferscope up` (config `drill: {enabled: true}`): a webhook
// endpoint on its own loopback port that the relay delivers to as channel "drill", which accepts
// every message until `inferscope drill` tells it to refuse them (HTTP 503), so the relay's
// failure counter rises from real failed deliveries and InferscopeNotificationsFailing fires.
// Example:
//   auto robot = DrillRobot::start(state_dir);          // before Relay::open
//   config.relay.channels.push_back(robot->channel());  // channel "drill", URL from a file
//   add_drill_up_routes(router, robot.get());           // GET/POST /api/drill on up's API
// Thread-safe: the refuse switch and counters are atomics; the robot runs one io thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>

#include "net/router.h"
#include "relay/relay_config.h"

namespace inferscope::net {
class HttpServer;
}

namespace inferscope::drill {

// kDrillChannel is the relay channel name of the drill robot; kDrillApiPath up's route.
inline constexpr const char* kDrillChannel = "drill";
inline constexpr const char* kDrillApiPath = "/api/drill";

class DrillRobot {
 public:
  // start binds 127.0.0.1:0 and writes the robot's URL to <state_dir>/drill-robot.url, which the
  // channel reads (the relay takes URLs only from env vars or files). Fails naming the file or port.
  static Result<std::unique_ptr<DrillRobot>> start(const std::filesystem::path& state_dir);
  ~DrillRobot();
  DrillRobot(const DrillRobot&) = delete;
  DrillRobot& operator=(const DrillRobot&) = delete;

  // channel is the relay channel (generic webhook "drill", URL from the file start() wrote).
  relay::ChannelConfig channel() const;
  std::string url() const { return url_; }

  void set_refusing(bool refuse) { refusing_.store(refuse); }
  bool refusing() const { return refusing_.load(); }
  std::uint64_t accepted() const { return accepted_.load(); }
  std::uint64_t refused() const { return refused_.load(); }

 private:
  DrillRobot() = default;
  std::unique_ptr<net::Router> router_;
  std::unique_ptr<net::HttpServer> server_;
  std::filesystem::path url_file_;
  std::string url_;
  std::atomic<bool> refusing_{false};
  std::atomic<std::uint64_t> accepted_{0}, refused_{0};
};

// parse_drill_switch reads the body of POST /api/drill: {"refuse": true|false}; an Error naming
// `refuse` otherwise.
Result<bool> parse_drill_switch(std::string_view body);

// add_drill_up_routes registers GET /api/drill ({"enabled", "channel", "refusing", "accepted",
// "refused"}) and POST /api/drill ({"refuse": bool}, answered like GET). With `robot` null (drill
// not enabled) both answer 404 with the OpenAI error JSON saying how to enable it; peers that are
// not loopback get 403; a bad body 400. `robot` must outlive the server.
void add_drill_up_routes(net::Router& router, DrillRobot* robot);

}  // namespace inferscope::drill
