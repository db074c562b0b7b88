// File: routes.h
// route_request maps one HTTP request to its handler: the OpenAI generation routes, /v1/models,
// /health, /metrics and (with --enable-admin, loopback peers only) /admin/faults. Unknown paths
// get 404 and wrong methods 405, both as OpenAI error JSON. Example:
//   bool keep_alive = co_await route_request(state, connection, request);
// Runs on the connection's executor; never throws.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>

#include "net/connection.h"

namespace inferscope::serve {

struct ServerState;

// route_request answers `request` and returns whether the connection may serve another one.
boost::asio::awaitable<bool> route_request(ServerState& state, net::Connection& connection, net::HttpRequest& request);

}  // namespace inferscope::serve
