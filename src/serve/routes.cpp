// File: routes.cpp
// Small routes live here; the generation routes are in completion_handler.cpp.
#include "serve/routes.h"

#include <boost/beast/http/verb.hpp>
#include <inferscope/metrics/exposition.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "serve/completion_handler.h"
#include "serve/metrics_filter.h"
#include "serve/server_state.h"

namespace inferscope::serve {
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

asio::awaitable<bool> send_body(net::Connection& c, const net::HttpRequest& request, std::string body,
                                std::string_view content_type, http::status status = http::status::ok) {
  net::HttpResponse response{status, request.version()};
  response.set(http::field::content_type, boost::beast::string_view(content_type.data(), content_type.size()));
  response.body() = std::move(body);
  co_return co_await c.send(response);
}

asio::awaitable<bool> handle_metrics(ServerState& state, net::Connection& c, const net::HttpRequest& request) {
  const FaultSet faults = state.faults();
  if (faults.metrics_down) {  // fault metrics_down: the scrape fails, Prometheus records up = 0
    net::ApiError down = net::ApiError::server_error("metrics unavailable (fault metrics_down)");
    down.status = 503;
    co_return co_await c.send_error(down, request);
  }
  metrics::ScrapeResponse scrape;
  bool rendered = true;
  try {
    // fault hide_metrics filters the text, so it is rendered uncompressed then.
    scrape = metrics::render_scrape(state.registry, net::to_std(request[http::field::accept]),
                                    faults.hide_metrics.empty() ? net::to_std(request[http::field::accept_encoding]) : "");
    if (!faults.hide_metrics.empty()) scrape.body = drop_metric_families(scrape.body, faults.hide_metrics);
  } catch (const std::exception& e) {  // a collect hook threw: answer 500, keep serving
    spdlog::error("serve: cannot render metrics for a scrape: {}", e.what());
    rendered = false;
  }
  if (!rendered) {
    co_return co_await c.send_error(net::ApiError::server_error("cannot render metrics: internal error"), request);
  }
  net::HttpResponse response{http::status::ok, request.version()};
  response.set(http::field::content_type, scrape.content_type);
  if (scrape.gzipped) response.set(http::field::content_encoding, "gzip");
  response.body() = std::move(scrape.body);
  co_return co_await c.send(response);
}

asio::awaitable<bool> handle_admin_faults(ServerState& state, net::Connection& c, const net::HttpRequest& request) {
  if (!c.peer_is_loopback()) {
    net::ApiError error = net::ApiError::bad_request("cannot change faults from a non-loopback peer");
    error.status = 403;
    error.type = "permission_error";
    co_return co_await c.send_error(error, request);
  }
  if (request.method() == http::verb::post) {
    auto json = nlohmann::json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) {
      co_return co_await c.send_error(
          net::ApiError::bad_request("cannot parse faults from request: body must be a JSON object"), request);
    }
    auto faults = parse_faults(json, state.faults());
    if (!faults) co_return co_await c.send_error(net::ApiError::bad_request(faults.error().message), request);
    if (auto ranks = state.check_fault_ranks(*faults); !ranks)
      co_return co_await c.send_error(net::ApiError::bad_request(ranks.error().message), request);
    state.set_faults(*faults);
    spdlog::info("serve: faults set by admin API: {}", to_json(*faults).dump());
  } else if (request.method() == http::verb::delete_) {
    state.set_faults(FaultSet{});
    spdlog::info("serve: faults cleared by admin API");
  } else if (request.method() != http::verb::get) {
    co_return co_await c.send_error(net::ApiError::method_not_allowed("cannot serve this method on /admin/faults"),
                                    request, "GET, POST, DELETE");
  }
  co_return co_await send_body(c, request, to_json(state.faults()).dump(), "application/json");
}

// is_get: the read-only routes answer GET only (HEAD would need a body-less reply).
bool is_get(const net::HttpRequest& request) { return request.method() == http::verb::get; }

}  // namespace

asio::awaitable<bool> route_request(ServerState& state, net::Connection& c, net::HttpRequest& request) {
  std::string_view target = net::to_std(request.target());
  std::string_view path = target.substr(0, target.find('?'));
  if (path == "/v1/chat/completions" || path == "/v1/completions") {
    if (request.method() != http::verb::post) {
      co_return co_await c.send_error(
          net::ApiError::method_not_allowed("cannot serve method " + std::string(net::to_std(request.method_string())) +
                                       " on " + std::string(path) + ": use POST"),
          request, "POST");
    }
    co_return co_await handle_completion(
        c, state, request, path == "/v1/chat/completions" ? Endpoint::kChat : Endpoint::kCompletions);
  }
  const bool admin = path == "/admin/faults" && state.options.enable_admin;
  const bool known = path == "/v1/models" || path == "/health" || path == "/metrics" || admin;
  if (!known) {
    co_return co_await c.send_error(net::ApiError::not_found("cannot find route " + std::string(path)), request);
  }
  if (admin) co_return co_await handle_admin_faults(state, c, request);
  if (!is_get(request)) {
    co_return co_await c.send_error(
        net::ApiError::method_not_allowed("cannot serve method " + std::string(net::to_std(request.method_string())) +
                                     " on " + std::string(path) + ": use GET"),
        request, "GET");
  }
  if (path == "/metrics") co_return co_await handle_metrics(state, c, request);
  if (path == "/health") co_return co_await send_body(c, request, "", "text/plain");
  co_return co_await send_body(c, request, state.models_body, "application/json");
}

}  // namespace inferscope::serve
