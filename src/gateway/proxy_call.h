// File: proxy_call.h
// handle_gateway_request answers one client request of the gateway: /health, client auth, the
// measured OpenAI routes (admission queue -> upstream exchange -> pass-through relay with timeline
// and metrics), merged /v1/models, other /v1/* passed through unmeasured, 404 for the rest.
// Example: HttpServer::start(o, [&state](net::Connection& c) { return handle_gateway_request(state, c); });
// Runs on the connection's executor; never throws; never logs prompts or keys.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>

#include "gateway/gateway_state.h"
#include "net/connection.h"

namespace inferscope::gateway {

// handle_gateway_request returns whether the client connection may serve another request.
boost::asio::awaitable<bool> handle_gateway_request(GatewayState& state, net::Connection& connection);

}  // namespace inferscope::gateway
