// File: relay_test_util.h
// Helpers shared by the relay tests: a unique temporary directory and notification builders.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace inferscope::relay::testing {

// kNow is the fixed clock reading the relay tests render with, so expected texts never move.
inline const std::chrono::system_clock::time_point kNow{std::chrono::milliseconds(1577262236757)};

using inferscope::testing::TempDir;

// webhook_body builds a v4 payload with one alert per fingerprint.
inline std::string webhook_body(const std::string& alertname, const std::string& status,
                                const std::vector<std::string>& fingerprints, const std::string& receiver = "relay",
                                const std::string& description = "p99 4.2 s") {
  nlohmann::json alerts = nlohmann::json::array();
  for (const std::string& f : fingerprints) {
    alerts.push_back({{"status", status},
                      {"labels", {{"alertname", alertname}, {"instance", "i-" + f}, {"severity", "critical"}}},
                      {"annotations", {{"summary", alertname + " summary"}, {"description", description}, {"runbook", "look at stages"}}},
                      {"startsAt", "2026-11-30T03:00:00Z"},
                      {"endsAt", status == "firing" ? "0001-01-01T00:00:00Z" : "2026-11-30T03:10:00Z"},
                      {"generatorURL", ""},
                      {"fingerprint", f}});
  }
  return nlohmann::json({{"receiver", receiver},
                         {"status", status},
                         {"alerts", alerts},
                         {"groupLabels", {{"alertname", alertname}}},
                         {"commonLabels", {{"alertname", alertname}}},
                         {"commonAnnotations", nlohmann::json::object()},
                         {"externalURL", "http://127.0.0.1:9093"},
                         {"version", "4"},
                         {"groupKey", "{}:{alertname=\"" + alertname + "\"}"},
                         {"truncatedAlerts", 0}})
      .dump();
}

}  // namespace inferscope::relay::testing
