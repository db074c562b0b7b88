// File: completion_handler.h
// handle_completion serves POST /v1/chat/completions and /v1/completions: parse and validate
// (400/404), preprocess (chat template + tokenize, stage preprocess), HTTP-layer faults
// (preprocess_slowdown, dependency, error_rate, network_delay_ms), Engine::submit (503 when the
// waiting queue is full), then an SSE stream or one JSON body. A client that hangs up aborts its
// sequence at once. Every request's RequestTimeline goes to ServeMetrics when it ends, whatever way.
// Example: bool keep = co_await handle_completion(connection, state, request, Endpoint::kChat);
// Runs on the connection's executor; never throws; never logs prompt text.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>

#include "net/connection.h"
#include "serve/openai_request.h"

namespace inferscope::serve {

struct ServerState;

// handle_completion answers one generation request; returns whether the connection may go on.
boost::asio::awaitable<bool> handle_completion(net::Connection& connection, ServerState& state,
                                               const net::HttpRequest& request, Endpoint endpoint);

}  // namespace inferscope::serve
