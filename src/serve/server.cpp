// File: server.cpp
// Server wiring: engine, metrics, one io_context per io thread (so each connection's coroutine and
// its engine wake-ups run on one thread, with no strand), the acceptor, and a bounded stop.
#include "serve/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <inferscope/metrics/metrics_server.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <thread>

#include "serve/connection.h"
#include "serve/connection_set.h"
#include "serve/engine/engine.h"
#include "serve/serve_metrics.h"
#include "serve/serve_metrics_binding.h"
#include "serve/server_state.h"

namespace inferscope::serve {
namespace asio = boost::asio;
using asio::ip::tcp;

ServerState::ServerState(ServerOptions opts)
    : options(std::move(opts)), tokenizer(options.seed), text(options.seed) {}
ServerState::~ServerState() = default;

void ServerState::set_faults(FaultSet faults) {
  {
    std::lock_guard lock(faults_mu);
    active_faults = faults;
  }
  engine->set_faults(std::move(faults));
}

namespace {

struct Shard {
  asio::io_context io{1};  // one thread runs it: concurrency hint 1 drops internal locking
  asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
  ConnectionSet connections;
  std::thread thread;
};

std::string models_body(const ServerOptions& options) {
  nlohmann::json data = nlohmann::json::array();
  const auto created = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  for (const std::string& name : options.model_names) {
    data.push_back({{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "inferscope"},
                    {"root", name}, {"parent", nullptr}, {"max_model_len", options.engine.max_model_len}});
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
  return {};
}

}  // namespace

struct Server::Impl {
  std::unique_ptr<ServerState> state;
  std::vector<std::unique_ptr<Shard>> shards;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  std::uint16_t port = 0;
  std::atomic<bool> stopped{false};
  std::mutex exit_mu;
  std::condition_variable exit_cv;
  std::size_t threads_running = 0;  // guarded by exit_mu

  ~Impl() { stop(); }
  Result<void> start_engine_and_metrics();
  Result<void> listen();
  void start_threads();
  asio::awaitable<void> accept_loop();
  void stop();
};

Result<void> Server::Impl::start_engine_and_metrics() {
  ServerOptions& o = state->options;
  auto bound = bind_serve_metrics(*state);
  if (!bound) return bound;
  auto engine = Engine::start(o.engine, o.faults);
  if (!engine) return engine.error();
  state->engine = std::move(*engine);
  state->active_faults = o.faults;
  attach_engine_metrics(*state);
  state->models_body = models_body(o);
  return {};
}

Result<void> Server::Impl::listen() {
  const ServerOptions& o = state->options;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(o.host == "localhost" ? "127.0.0.1" : o.host, ec);
  if (ec) return make_error("host '" + o.host + "' is not a numeric IP address");
  acceptor = std::make_unique<tcp::acceptor>(shards.front()->io);
  tcp::endpoint endpoint{address, o.port};
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return make_error(ec.message());
  port = acceptor->local_endpoint().port();
  if (o.metrics_port) {
    metrics::MetricsServerOptions mo;
    mo.bind_address = address.to_string();
    mo.port = *o.metrics_port;
    auto ms = metrics::MetricsServer::start(state->registry, mo);
    if (!ms) return ms.error();
    metrics_server = std::move(*ms);
  }
  return {};
}

asio::awaitable<void> Server::Impl::accept_loop() {
  std::size_t next = 0;
  while (!stopped.load()) {
    Shard& shard = *shards[next++ % shards.size()];
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor->async_accept(asio::any_io_executor(shard.io.get_executor()),
                                                         asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      // Out of descriptors or a transient error: wait a moment instead of spinning.
      spdlog::warn("serve: cannot accept connection: {}", ec.message());
      asio::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    auto connection = std::make_shared<Connection>(std::move(socket), *state, shard.connections);
    asio::co_spawn(shard.io, [connection] { return connection->run(); }, asio::detached);
  }
}

void Server::Impl::start_threads() {
  threads_running = shards.size();
  for (auto& shard : shards) {
    shard->thread = std::thread([this, io = &shard->io] {
      io->run();
      std::lock_guard lock(exit_mu);
      --threads_running;
      exit_cv.notify_all();
    });
  }
  asio::co_spawn(shards.front()->io, [this] { return accept_loop(); }, asio::detached);
}

void Server::Impl::stop() {
  if (stopped.exchange(true)) return;
  if (state) state->stopping = true;
  if (metrics_server) metrics_server->stop();
  const bool running = !shards.empty() && shards.front()->thread.joinable();
  if (acceptor) {
    asio::post(shards.front()->io, [this] {
      boost::system::error_code ec;
      acceptor->close(ec);
    });
  }
  if (state && state->engine) state->engine->stop();  // every live sequence ends with kAbort
  for (auto& shard : shards) {
    asio::post(shard->io, [s = shard.get()] { s->connections.close_all(); });
    shard->guard.reset();
  }
  if (running) {
    std::unique_lock lock(exit_mu);
    if (!exit_cv.wait_for(lock, std::chrono::seconds(3), [this] { return threads_running == 0; })) {
      spdlog::warn("serve: connections still busy 3 s after stop; cutting them");
      for (auto& shard : shards) shard->io.stop();
    }
  }
  for (auto& shard : shards) {
    if (shard->thread.joinable()) shard->thread.join();
  }
}

Result<std::unique_ptr<Server>> Server::start(ServerOptions options) {
  const std::string where = options.host + ":" + std::to_string(options.port);
  auto fail = [&](const Error& e) { return make_error("cannot start server on " + where + ": " + e.message); };
  if (auto valid = validate(options); !valid) return fail(valid.error());
  auto impl = std::make_unique<Impl>();
  const unsigned threads = options.io_threads;
  impl->state = std::make_unique<ServerState>(std::move(options));
  for (unsigned i = 0; i < threads; ++i) impl->shards.push_back(std::make_unique<Shard>());
  if (auto r = impl->start_engine_and_metrics(); !r) return fail(r.error());
  if (auto r = impl->listen(); !r) return fail(r.error());
  impl->start_threads();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
std::uint16_t Server::port() const { return impl_->port; }
std::uint16_t Server::metrics_port() const {
  return impl_->metrics_server ? impl_->metrics_server->port() : 0;
}
Engine& Server::engine() { return *impl_->state->engine; }
metrics::Registry& Server::registry() { return impl_->state->registry; }
void Server::stop() { impl_->stop(); }

}  // namespace inferscope::serve
