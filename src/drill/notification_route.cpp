#include "drill/notification_route.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>

namespace inferscope::drill {
namespace {

double unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

Result<std::optional<double>> parse_since(std::string_view query) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.substr(0, 6) == "since=") {
      const std::string_view text = pair.substr(6);
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
        return make_error("cannot read 'since': expected Unix seconds, got '" + std::string(text) + "'");
      }
      return std::optional<double>(value);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::optional<double>();
}

void add_notification_route(net::Router& router, relay::Relay& relay, const std::string& lane) {
  router.get_blocking(kNotificationsPath, [&relay](const net::Request& request) {
    auto since = parse_since(request.query);
    if (!since) return net::Response::error(net::ApiError::bad_request(since.error().message, "since"));
    const auto now = std::chrono::system_clock::now();
    const auto from = since->has_value()
                          ? std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                std::chrono::duration<double>(**since)))
                          : now - std::chrono::hours(1);
    auto fired = relay.alerts_fired_between(from, now + std::chrono::hours(1));
    if (!fired) {
      net::ApiError unavailable = net::ApiError::server_error(fired.error().message);
      unavailable.status = 503;
      return net::Response::error(unavailable);
    }
    nlohmann::json list = nlohmann::json::array();
    for (const relay::FiredAlert& a : *fired) {
      list.push_back({{"alertname", a.alertname},
                      {"fingerprint", a.fingerprint},
                      {"labels", a.labels},
                      {"starts_at", unix_seconds(a.starts_at)},
                      {"ends_at", a.ends_at ? nlohmann::json(unix_seconds(*a.ends_at)) : nlohmann::json(nullptr)},
                      {"received_at", unix_seconds(a.received_at)},
                      {"resolved_received_at", a.resolved_received_at
                                                   ? nlohmann::json(unix_seconds(*a.resolved_received_at))
                                                   : nlohmann::json(nullptr)}});
    }
    return net::Response::json(nlohmann::json{{"notifications", list}}.dump());
  }, lane);
}

}  // namespace inferscope::drill
