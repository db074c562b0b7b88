// File: server.cpp
// Server wiring: engine, metrics and the shared HTTP server core (src/net: one io_context per io
// thread, so each connection's coroutine and its engine wake-ups run on one thread, with no strand).
#include "serve/server.h"

#include <algorithm>

#include <inferscope/metrics/metrics_server.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "net/connection.h"
#include "net/http_server.h"
#include "serve/disagg_fleet.h"
#include "serve/routes.h"
#include "serve/engine/engine.h"
#include "serve/serve_metrics.h"
#include "serve/serve_metrics_binding.h"
#include "serve/server_state.h"

namespace inferscope::serve {

ServerState::ServerState(ServerOptions opts)
    : options(std::move(opts)), tokenizer(options.seed), text(options.seed) {}
ServerState::~ServerState() = default;

void ServerState::set_faults(FaultSet faults) {
  {
    std::lock_guard lock(faults_mu);
    active_faults = faults;
  }
  for (std::uint32_t rank = 0; rank < engines.size(); ++rank) engines[rank]->set_faults(faults_for_rank(faults, rank));
  if (disagg) disagg->set_faults(faults);
}

namespace {

// check_disagg_faults checks the disaggregated fleet's faults against its pools; `prefix` starts
// the one-line error ("--fault" or the request's "cannot parse faults from request").
Result<void> check_disagg_faults(const FaultSet& f, const DisaggOptions& d, const std::string& prefix) {
  const bool any = f.kv_transfer != 1.0 || f.kv_link.active() || f.kv_transfer_failure != 0 ||
                   !f.pool_workers.empty() || f.route_skew.active();
  if (!d.enabled()) {
    if (any) return make_error(prefix + ": the KV transfer, pool and routing faults need --prefill-workers and --decode-workers");
    return {};
  }
  if (f.kv_link.active() && static_cast<std::uint32_t>(f.kv_link.worker) >= d.decode_workers)
    return make_error(prefix + ": kv_link.worker: decode worker " + std::to_string(f.kv_link.worker) +
                      " is not served (--decode-workers " + std::to_string(d.decode_workers) + ")");
  for (const PoolWorkers& cut : f.pool_workers) {
    const std::uint32_t size = cut.pool == "prefill" ? d.prefill_workers : d.decode_workers;
    if (cut.count > size)
      return make_error(prefix + ": pool_workers.count: " + std::to_string(cut.count) + " is more than the " + cut.pool +
                        " pool's " + std::to_string(size) + " workers");
  }
  if (f.route_skew.active() && std::stoul(f.route_skew.endpoint.substr(7)) >= d.decode_workers)
    return make_error(prefix + ": route_skew.endpoint: " + f.route_skew.endpoint + " is not served (--decode-workers " +
                      std::to_string(d.decode_workers) + ")");
  return {};
}

std::uint32_t served_engines(const ServerOptions& o) {
  return o.disagg.enabled() ? o.disagg.prefill_workers + o.disagg.decode_workers : o.data_parallel_size;
}

// engines_flag names what sets the engine count, for engine_slowdown's range error.
std::string engines_flag(const ServerOptions& o) {
  if (o.disagg.enabled())
    return "--prefill-workers " + std::to_string(o.disagg.prefill_workers) + " + --decode-workers " +
           std::to_string(o.disagg.decode_workers) + ": prefill workers first";
  return "--data-parallel-size " + std::to_string(o.data_parallel_size);
}

}  // namespace

Result<void> ServerState::check_fault_ranks(const FaultSet& faults) const {
  if (faults.engine_slowdown.active() &&
      static_cast<std::uint32_t>(faults.engine_slowdown.engine) >= served_engines(options)) {
    return make_error("cannot parse faults from request: engine_slowdown.engine: rank " +
                      std::to_string(faults.engine_slowdown.engine) + " is not served (" + engines_flag(options) + ")");
  }
  return check_disagg_faults(faults, options.disagg, "cannot parse faults from request");
}

std::uint32_t ServerState::pick_engine(std::uint32_t first, std::uint32_t count) {
  const auto n = count ? count : static_cast<std::uint32_t>(engines.size());
  if (n <= 1) return first;
  const std::uint32_t start = dispatch_start.fetch_add(1, std::memory_order_relaxed) % n;
  std::uint32_t best = start;
  std::uint64_t best_score = UINT64_MAX;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t rank = first + (start + i) % n;
    const auto [waiting, running] = engines[rank]->load();
    const std::uint64_t score = std::uint64_t{waiting} * 4 + running;
    if (score < best_score) {
      best_score = score;
      best = rank;
    }
  }
  return best;
}

namespace {

std::string models_body(const ServerOptions& options) {
  nlohmann::json data = nlohmann::json::array();
  const auto created = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  for (const std::string& name : options.model_names) {
    data.push_back({{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "inferscope"},
                    {"root", name}, {"parent", nullptr}, {"max_model_len", options.engine.max_model_len}});
  }
  // LoRA adapters as vLLM lists them: the adapter's name, its base model as parent.
  for (const std::string& name : options.lora_modules) {
    data.push_back({{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "inferscope"},
                    {"root", name}, {"parent", options.model_names.front()},
                    {"max_model_len", options.engine.max_model_len}});
  }
  return nlohmann::json{{"object", "list"}, {"data", data}}.dump();
}

Result<void> validate(const ServerOptions& o) {
  if (o.model_names.empty()) return make_error("no --model name given");
  for (const std::string& name : o.model_names) {
    if (name.empty()) return make_error("a --model name is empty");
  }
  if (o.io_threads == 0 || o.io_threads > 64) return make_error("io threads must be 1..64");
  if (o.max_body_bytes == 0) return make_error("--max-body-bytes must be positive");
  if (o.idle_timeout_ms == 0) return make_error("idle timeout must be positive");
  if (!(o.engine.time_scale > 0)) return make_error("--time-scale must be positive");
  if (o.data_parallel_size == 0 || o.data_parallel_size > 64) return make_error("--data-parallel-size must be 1..64");
  if (o.lora_modules.size() > kMaxLoraAdapters)
    return make_error("--lora-modules: at most " + std::to_string(kMaxLoraAdapters) + " adapters");
  for (const std::string& name : o.lora_modules) {
    if (name.empty()) return make_error("--lora-modules: an adapter name is empty");
    if (std::find(o.model_names.begin(), o.model_names.end(), name) != o.model_names.end())
      return make_error("--lora-modules: '" + name + "' is also a --model name");
  }
  if (!o.lora_modules.empty() && o.engine.max_loras == 0) return make_error("--max-loras must be >= 1 with --lora-modules");
  const DisaggOptions& d = o.disagg;
  if (d.enabled()) {
    if (d.prefill_workers == 0 || d.prefill_workers > 32) return make_error("--prefill-workers must be 1..32 with --decode-workers");
    if (d.decode_workers == 0 || d.decode_workers > 32) return make_error("--decode-workers must be 1..32 with --prefill-workers");
    if (o.data_parallel_size > 1)
      return make_error("--prefill-workers/--decode-workers cannot be combined with --data-parallel-size > 1");
    if (o.engine.profile == "seed-mock")
      return make_error("--prefill-workers/--decode-workers: profile seed-mock serves each request alone (no prefill/decode split)");
  }
  if (!(d.kv_link_gb_per_s > 0) || d.kv_link_gb_per_s > 1e6) return make_error("--kv-link-gb-per-s must be in (0, 1e6]");
  if (!(d.kv_link_latency_ms >= 0) || d.kv_link_latency_ms > 60000) return make_error("--kv-link-latency-ms must be 0..60000");
  if (auto disagg_faults = check_disagg_faults(o.faults, d, "--fault"); !disagg_faults) return disagg_faults;
  if (!o.faults.engine_slowdown.active()) return trace::validate_trace_settings(o.tracing);
  if (static_cast<std::uint32_t>(o.faults.engine_slowdown.engine) >= served_engines(o))
    return make_error("--fault engine_slowdown: rank " + std::to_string(o.faults.engine_slowdown.engine) +
                      " is not served (" + engines_flag(o) + ")");
  return trace::validate_trace_settings(o.tracing);
}

}  // namespace

struct Server::Impl {
  std::unique_ptr<ServerState> state;
  std::unique_ptr<net::HttpServer> http;
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  std::atomic<bool> stopped{false};

  ~Impl() { stop(); }
  Result<void> start_engine_and_metrics();
  Result<void> listen();
  void stop();
};

Result<void> Server::Impl::start_engine_and_metrics() {
  ServerOptions& o = state->options;
  auto bound = bind_serve_metrics(*state);
  if (!bound) return bound;
  EngineOptions engine_options = o.engine;
  engine_options.lora_adapters = static_cast<std::uint32_t>(o.lora_modules.size());
  if (o.lora_modules.empty()) engine_options.max_loras = 0;  // LoRA off: no adapter slots
  for (std::uint32_t rank = 0; rank < served_engines(o); ++rank) {
    auto engine = Engine::start(engine_options, faults_for_rank(o.faults, rank));
    if (!engine) return engine.error();
    if (o.disagg.enabled() && (*engine)->profile().independent_requests)
      return make_error("--prefill-workers/--decode-workers: profile " + o.engine.profile +
                        " serves each request alone (no prefill/decode split)");
    state->engines.push_back(std::move(*engine));
  }
  state->active_faults = o.faults;
  attach_engine_metrics(*state);
  if (o.disagg.enabled()) {
    std::vector<Engine*> workers;
    for (auto& engine : state->engines) workers.push_back(engine.get());
    const Engine& first = *state->engines.front();
    const std::uint64_t capacity_tokens = o.engine.kv_capacity_tokens ? o.engine.kv_capacity_tokens
                                                                      : first.profile().kv_capacity_tokens;
    try {
      state->disagg = std::make_unique<DisaggFleet>(o.disagg, std::move(workers), o.engine.block_size,
                                                    first.profile().kv_bytes_per_token,
                                                    capacity_tokens / std::max<std::uint32_t>(o.engine.block_size, 1),
                                                    o.model_names, state->registry);
    } catch (const std::invalid_argument& e) {
      return make_error(std::string("cannot register the disaggregated fleet's metrics: ") + e.what());
    }
    state->disagg->set_faults(o.faults);
  }
  state->models_body = models_body(o);
  auto tracer = trace::start_trace_exporter(o.tracing, "inferscope-serve", &state->registry);
  if (!tracer) return tracer.error();
  state->tracer = std::move(*tracer);
  return {};
}

Result<void> Server::Impl::listen() {
  const ServerOptions& o = state->options;
  net::HttpServerOptions ho;
  ho.host = o.host;
  ho.port = o.port;
  ho.io_threads = o.io_threads;
  ho.max_body_bytes = o.max_body_bytes;
  ho.idle_timeout_ms = o.idle_timeout_ms;
  ho.header_timeout_ms = o.idle_timeout_ms;  // serve has one deadline knob; the gateway splits them
  ho.log_name = "serve";
  ServerState* shared = state.get();
  auto http_server = net::HttpServer::start(
      ho, [shared](net::Connection& c) { return route_request(*shared, c, c.request()); });
  if (!http_server) {
    // Drop net's own "cannot start HTTP server on <where>: " so the caller's prefix is not doubled.
    const std::string& message = http_server.error().message;
    const std::size_t cause = message.find(": ");
    return make_error(cause == std::string::npos ? message : message.substr(cause + 2));
  }
  http = std::move(*http_server);
  if (o.metrics_port) {
    metrics::MetricsServerOptions mo;
    mo.bind_address = o.host == "localhost" ? "127.0.0.1" : o.host;
    mo.port = *o.metrics_port;
    auto ms = metrics::MetricsServer::start(state->registry, mo);
    if (!ms) return ms.error();
    metrics_server = std::move(*ms);
  }
  return {};
}

void Server::Impl::stop() {
  if (stopped.exchange(true)) return;
  if (state) state->stopping = true;
  if (metrics_server) metrics_server->stop();
  if (state) {
    for (auto& engine : state->engines) engine->stop();  // every live sequence ends with kAbort
  }
  if (http) http->stop();  // closes the listener and every connection, joins the io threads
  if (state && state->tracer) state->tracer->stop(std::chrono::seconds(5));  // sends what the requests left
}

Result<std::unique_ptr<Server>> Server::start(ServerOptions options) {
  const std::string where = options.host + ":" + std::to_string(options.port);
  auto fail = [&](const Error& e) { return make_error("cannot start server on " + where + ": " + e.message); };
  if (auto valid = validate(options); !valid) return fail(valid.error());
  auto impl = std::make_unique<Impl>();
  impl->state = std::make_unique<ServerState>(std::move(options));
  if (auto r = impl->start_engine_and_metrics(); !r) return fail(r.error());
  if (auto r = impl->listen(); !r) return fail(r.error());
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
std::uint16_t Server::port() const { return impl_->http->port(); }
std::uint16_t Server::metrics_port() const {
  return impl_->metrics_server ? impl_->metrics_server->port() : 0;
}
Engine& Server::engine(std::uint32_t rank) { return *impl_->state->engines.at(rank); }
std::uint32_t Server::engine_count() const { return static_cast<std::uint32_t>(impl_->state->engines.size()); }
metrics::Registry& Server::registry() { return impl_->state->registry; }
ServeMetrics& Server::serve_metrics() { return *impl_->state->metrics; }
void Server::stop() { impl_->stop(); }

}  // namespace inferscope::serve
