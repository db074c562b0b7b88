// File: models_route.cpp
// Upstreams are asked one after another: a model list is small and rarely fetched.
#include "gateway/models_route.h"

#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include <set>

#include "gateway/upstream_exchange.h"

namespace inferscope::gateway {
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {
constexpr std::size_t kMaxModelsBody = 4u << 20;
}

asio::awaitable<bool> serve_merged_models(GatewayState& state, net::Connection& c) {
  nlohmann::json data = nlohmann::json::array();
  std::set<std::string> seen;
  std::size_t answered = 0;
  for (auto& upstream : state.pool->all()) {
    if (!upstream->healthy_at(std::chrono::steady_clock::now())) continue;
    net::ClientRequest request = make_upstream_request(*upstream, c.request(), state.client_keys.empty());
    UpstreamExchange exchange;
    net::ClientError error = co_await exchange.start(*upstream, request, state.config, nullptr);
    std::string body;
    while (error == net::ClientError::kNone && !exchange.done() && body.size() <= kMaxModelsBody) {
      std::string_view read;
      error = co_await exchange.read_some(read, state.config.idle_timeout);
      body.append(read);
    }
    if (error != net::ClientError::kNone || !exchange.done() || exchange.head().result_int() != 200) continue;
    exchange.keep(*upstream);
    auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object() || !json.contains("data") || !json["data"].is_array()) continue;
    ++answered;
    for (auto& model : json["data"]) {
      if (!model.is_object() || !model.contains("id") || !model["id"].is_string()) continue;
      if (seen.insert(model["id"].get<std::string>()).second) data.push_back(model);
    }
  }
  if (answered == 0) {
    net::ApiError e;
    e.status = 502;
    e.type = "server_error";
    e.code = "upstream_unavailable";
    e.message = "cannot list models: no upstream answered GET /v1/models";
    co_return co_await c.send_error(e, c.request());
  }
  net::HttpResponse response{http::status::ok, c.request().version()};
  response.set(http::field::content_type, "application/json");
  response.body() = nlohmann::json{{"object", "list"}, {"data", data}}.dump(-1, ' ', false,
                                                                            nlohmann::json::error_handler_t::replace);
  co_return co_await c.send(response);
}

}  // namespace inferscope::gateway
