// File: drill/notification_route.h
// GET /api/notifications on `inferscope up`'s API: the alerts the relay received from
// Alertmanager (its fired-alert history), so `inferscope drill` can see a notification reach the
// relay and its resolve follow. Registered by up with one call, like the other parts' routes.
// Example: drill::add_notification_route(router, relay);
// The handler reads the relay's SQLite history (a short indexed query) on an io thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "net/router.h"
#include "relay/relay.h"

namespace inferscope::drill {

// kNotificationsPath is the route's path.
inline constexpr const char* kNotificationsPath = "/api/notifications";

// add_notification_route registers GET /api/notifications?since=<unix seconds> answering
// {"notifications":[{"alertname","fingerprint","labels":{},"starts_at":s,"ends_at":s|null,
// "received_at":s,"resolved_received_at":s|null}]} (received_*: when the relay stored them)
// for alerts firing at or after `since` (default: the last hour), oldest first. A bad `since`
// gets 400 with the OpenAI error JSON; an unreadable history 503. `relay` must outlive the server.
// It reads the relay's SQLite database, so it runs on the router's blocking lane `lane` (up's
// "relay" lane), never on an io thread.
void add_notification_route(net::Router& router, relay::Relay& relay, const std::string& lane = "relay");

// parse_since reads the `since` query parameter (Unix seconds, decimals allowed) from a query
// string; nullopt when absent; an Error naming `since` when malformed.
Result<std::optional<double>> parse_since(std::string_view query);

}  // namespace inferscope::drill
