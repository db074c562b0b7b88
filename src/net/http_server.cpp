// File: http_server.cpp
// HttpServer wiring: one io_context per io thread (so each connection's coroutine and its
// wake-ups run on one thread, with no strand), the acceptor, and a bounded, draining stop.
#include "net/http_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "net/connection.h"
#include "net/detail/server_core.h"

namespace inferscope::net {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

struct Shard {
  asio::io_context io{1};  // one thread runs it: concurrency hint 1 drops internal locking
  asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
  detail::ConnectionSet connections;
  std::thread thread;
};

Result<void> validate(const HttpServerOptions& o) {
  if (o.io_threads == 0 || o.io_threads > 64) return make_error("io threads must be 1..64");
  if (o.max_body_bytes == 0) return make_error("the body size limit must be positive");
  if (o.max_header_bytes < 256) return make_error("the header size limit must be at least 256 bytes");
  if (o.idle_timeout_ms == 0) return make_error("the idle timeout must be positive");
  if (o.header_timeout_ms == 0) return make_error("the header read timeout must be positive");
  return {};
}

// tls_server_context loads `files` into a server context: TLS 1.2+, no compression or
// renegotiation, and client certificates required when a client CA is named.
Result<std::unique_ptr<asio::ssl::context>> tls_server_context(const TlsServerFiles& files) {
  namespace ssl = asio::ssl;
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression |
                           ssl::context::single_dh_use,
                       ec);
  if (files.cert_file.empty() || files.key_file.empty()) return make_error("TLS needs both a certificate and a key file");
  // An encrypted key fails to load instead of OpenSSL asking for its passphrase on the terminal.
  context->set_password_callback([](std::size_t, ssl::context::password_purpose) { return std::string(); }, ec);
  context->use_certificate_chain_file(files.cert_file, ec);
  if (ec) return make_error("cannot read TLS certificate file " + files.cert_file + ": " + ec.message());
  context->use_private_key_file(files.key_file, ssl::context::pem, ec);
  if (ec && ec.message().find("mismatch") != std::string::npos) {
    return make_error("TLS key file " + files.key_file + " does not match certificate file " + files.cert_file);
  }
  if (ec) return make_error("cannot read TLS key file " + files.key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return make_error("TLS key file " + files.key_file + " does not match certificate file " + files.cert_file);
  }
  if (!files.client_ca_file.empty()) {
    context->load_verify_file(files.client_ca_file, ec);
    if (ec) return make_error("cannot read TLS client CA file " + files.client_ca_file + ": " + ec.message());
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
  }
  return context;
}

}  // namespace

struct HttpServer::Impl {
  detail::ServerCore core;
  std::vector<std::unique_ptr<Shard>> shards;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::uint16_t port = 0;
  std::atomic<bool> stopped{false};
  std::mutex exit_mu;
  std::condition_variable exit_cv;
  std::size_t threads_running = 0;  // guarded by exit_mu

  ~Impl() { stop(std::chrono::milliseconds(0)); }
  Result<void> listen();
  void start_threads();
  asio::awaitable<void> accept_loop();
  void drain(std::chrono::milliseconds drain);
  void stop(std::chrono::milliseconds drain);
};

Result<void> HttpServer::Impl::listen() {
  const HttpServerOptions& o = core.options;
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
  return {};
}

asio::awaitable<void> HttpServer::Impl::accept_loop() {
  std::size_t next = 0;
  while (!stopped.load()) {
    Shard& shard = *shards[next++ % shards.size()];
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor->async_accept(asio::any_io_executor(shard.io.get_executor()),
                                                         asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      // Out of descriptors or a transient error: wait a moment instead of spinning.
      spdlog::warn("{}: cannot accept connection: {}", core.options.log_name, ec.message());
      asio::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    auto connection = std::make_shared<Connection>(std::move(socket), core, shard.connections);
    asio::co_spawn(shard.io, [connection] { return connection->run(); }, asio::detached);
  }
}

void HttpServer::Impl::start_threads() {
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

// drain lets busy connections finish their response (each closes after it) until `drain` passes.
void HttpServer::Impl::drain(std::chrono::milliseconds drain) {
  core.draining = true;
  for (auto& shard : shards) asio::post(shard->io, [s = shard.get()] { s->connections.close_idle(); });
  const auto until = std::chrono::steady_clock::now() + drain;
  while (core.live.load() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // stop() is a rare, blocking call
  }
}

void HttpServer::Impl::stop(std::chrono::milliseconds drain_for) {
  if (stopped.exchange(true)) return;
  const bool running = !shards.empty() && shards.front()->thread.joinable();
  if (acceptor) {
    asio::post(shards.front()->io, [this] {
      boost::system::error_code ec;
      acceptor->close(ec);
    });
  }
  if (running && drain_for.count() > 0) drain(drain_for);
  core.draining = true;
  for (auto& shard : shards) {
    asio::post(shard->io, [s = shard.get()] { s->connections.close_all(); });
    shard->guard.reset();
  }
  if (running) {
    std::unique_lock lock(exit_mu);
    if (!exit_cv.wait_for(lock, std::chrono::seconds(3), [this] { return threads_running == 0; })) {
      spdlog::warn("{}: connections still busy 3 s after stop; cutting them", core.options.log_name);
      for (auto& shard : shards) shard->io.stop();
    }
  }
  for (auto& shard : shards) {
    if (shard->thread.joinable()) shard->thread.join();
  }
  // Blocking handlers still running post their answer into these (stopped, still alive)
  // io_contexts; wait for them so none posts into a destroyed one. Jobs not started skip.
  core.stopped = true;
  while (!core.wait_blocking_done(std::chrono::seconds(5))) {
    spdlog::warn("{}: waiting for blocking handlers to return before closing", core.options.log_name);
  }
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(HttpServerOptions options, RequestHandler handler) {
  const std::string where = options.host + ":" + std::to_string(options.port);
  auto fail = [&](const Error& e) { return make_error("cannot start HTTP server on " + where + ": " + e.message); };
  if (auto valid = validate(options); !valid) return fail(valid.error());
  if (!handler) return fail(Error{"no request handler given"});
  auto impl = std::make_unique<Impl>();
  impl->core.options = std::move(options);
  impl->core.handler = std::move(handler);
  if (impl->core.options.tls) {
    auto tls = tls_server_context(*impl->core.options.tls);
    if (!tls) return fail(tls.error());
    impl->core.tls = std::move(*tls);
  }
  for (unsigned i = 0; i < impl->core.options.io_threads; ++i) impl->shards.push_back(std::make_unique<Shard>());
  if (auto r = impl->listen(); !r) return fail(r.error());
  impl->start_threads();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;
std::uint16_t HttpServer::port() const { return impl_->port; }
std::size_t HttpServer::connections() const { return impl_->core.live.load(); }
void HttpServer::stop(std::chrono::milliseconds drain) { impl_->stop(drain); }

}  // namespace inferscope::net
