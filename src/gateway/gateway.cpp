// File: gateway.cpp
// Wiring: config -> state (metrics, upstreams, client keys, span exporter) -> the shared HTTP server core, plus a
// MetricsServer on its own port. Idle upstream connections are dropped before the HTTP server's
// io_contexts go away (a socket must die before its context).
#include "gateway/gateway.h"

#include <inferscope/metrics/metrics_server.h>

#include <fstream>

#include "gateway/gateway_state.h"
#include "gateway/proxy_call.h"
#include "net/http_server.h"

namespace inferscope::gateway {

namespace {

Result<std::vector<std::string>> read_client_keys(const std::string& path) {
  std::vector<std::string> keys;
  if (path.empty()) return keys;
  std::ifstream in(path);
  if (!in) return make_error("cannot read client keys from " + path);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (!line.empty() && line.front() != '#') keys.push_back(line);
  }
  if (keys.empty()) return make_error("cannot read client keys from " + path + ": the file has no key");
  return keys;
}

}  // namespace

struct Gateway::Impl {
  std::unique_ptr<GatewayState> state;
  std::unique_ptr<net::HttpServer> http;
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  bool stopped = false;

  ~Impl() { stop(std::chrono::milliseconds(0)); }
  void stop(std::chrono::milliseconds drain) {
    if (stopped) return;
    stopped = true;
    if (http) http->stop(drain);
    if (state && state->pool) state->pool->clear_idle();
    http.reset();
    if (state && state->tracer) state->tracer->stop();  // the drained requests' spans go out first
    if (metrics_server) metrics_server->stop();
  }
};

Result<std::unique_ptr<Gateway>> Gateway::start(GatewayConfig config) {
  const std::string where = config.host + ":" + std::to_string(config.port);
  auto fail = [&](const Error& e) { return make_error("cannot start gateway on " + where + ": " + e.message); };
  if (auto ok = validate_gateway_config(config); !ok) return fail(ok.error());
  auto impl = std::make_unique<Impl>();
  impl->state = std::make_unique<GatewayState>();
  GatewayState& state = *impl->state;
  state.config = std::move(config);
  auto keys = read_client_keys(state.config.auth_keys_file);
  if (!keys) return fail(keys.error());
  state.client_keys = std::move(*keys);
  state.metrics = std::make_unique<GatewayMetrics>(state.registry, state.config);
  auto pool = UpstreamPool::create(state.config, *state.metrics);
  if (!pool) return fail(pool.error());
  state.pool = std::move(*pool);
  auto tracer = trace::start_trace_exporter(state.config.tracing, "inferscope-gateway", &state.registry);
  if (!tracer) return fail(tracer.error());
  state.tracer = std::move(*tracer);

  net::HttpServerOptions o;
  o.host = state.config.host;
  o.port = state.config.port;
  o.io_threads = state.config.io_threads;
  o.max_body_bytes = state.config.max_body_bytes;
  o.max_header_bytes = state.config.max_header_bytes;
  o.header_timeout_ms = static_cast<std::uint32_t>(state.config.client_header_timeout.count());
  o.idle_timeout_ms = static_cast<std::uint32_t>(state.config.client_idle_timeout.count());
  o.server_name = "inferscope-gateway";
  o.log_name = "gateway";
  GatewayState* shared = &state;
  auto http = net::HttpServer::start(o, [shared](net::Connection& c) { return handle_gateway_request(*shared, c); });
  if (!http) return fail(http.error());
  impl->http = std::move(*http);
  if (state.config.metrics_port) {
    metrics::MetricsServerOptions mo;
    mo.bind_address = state.config.host == "localhost" ? "127.0.0.1" : state.config.host;
    mo.port = *state.config.metrics_port;
    auto ms = metrics::MetricsServer::start(state.registry, mo);
    if (!ms) return fail(ms.error());
    impl->metrics_server = std::move(*ms);
  }
  return std::unique_ptr<Gateway>(new Gateway(std::move(impl)));
}

Gateway::Gateway(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Gateway::~Gateway() = default;
std::uint16_t Gateway::port() const { return impl_->http ? impl_->http->port() : 0; }
std::uint16_t Gateway::metrics_port() const { return impl_->metrics_server ? impl_->metrics_server->port() : 0; }
metrics::Registry& Gateway::registry() { return impl_->state->registry; }
void Gateway::stop(std::chrono::milliseconds drain) { impl_->stop(drain); }

}  // namespace inferscope::gateway
