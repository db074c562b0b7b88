// File: models_route.h
// serve_merged_models answers GET /v1/models with the union of every healthy upstream's model
// list (first upstream wins on duplicate ids), so clients see one server. 502 when none answers.
// Example: co_return co_await serve_merged_models(state, connection);
// Runs on the connection's executor; never throws.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>

#include "gateway/gateway_state.h"
#include "net/connection.h"

namespace inferscope::gateway {

boost::asio::awaitable<bool> serve_merged_models(GatewayState& state, net::Connection& connection);

}  // namespace inferscope::gateway
