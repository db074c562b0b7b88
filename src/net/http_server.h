// File: http_server.h
// HttpServer is inferscope's one HTTP/1.1 server core (serve, gateway and up use it): an acceptor,
// one io_context per io thread, one coroutine per connection, deadlines (header read, idle), header
// and body size limits, and a graceful drain. What to answer is the caller's RequestHandler; most
// callers build it with a Router (net/router.h, Beast-free). Example:
//   net::Router router; router.get("/api/status", [](const net::Request&) { return net::Response::json("{}"); });
//   auto server = net::HttpServer::start(options, router.handler());   // (*server)->port()
// Thread-safe: port() from any thread; stop() from any thread but an io thread. Beast stays out of
// this header (pimpl).
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <inferscope/common/result.h>

namespace inferscope::net {

class Connection;

// RequestHandler answers connection.request() on the connection's io thread and returns whether
// the connection may serve another request (false after a failed write or a response that ends
// the connection). It must not throw and must not block the io thread.
using RequestHandler = std::function<boost::asio::awaitable<bool>(Connection&)>;

// TlsServerFiles names the PEM files of a TLS server: its certificate chain and private key and,
// when set, the CA whose certificates clients must present (mutual TLS).
struct TlsServerFiles {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // empty: clients need no certificate
};

// HttpServerOptions holds the listen address and the limits every connection gets.
struct HttpServerOptions {
  std::string host = "127.0.0.1";        // numeric IP or "localhost"
  std::uint16_t port = 0;                // 0 = ephemeral; HttpServer::port() tells the real one
  unsigned io_threads = 1;               // 1..64; connections are spread round-robin
  std::size_t max_body_bytes = 1 << 20;  // larger bodies get 413 and the connection closes
  std::uint32_t max_header_bytes = 16 * 1024;  // larger headers: the connection closes (431 semantics)
  std::uint32_t header_timeout_ms = 10000;     // first byte of a request -> end of its headers
  std::uint32_t idle_timeout_ms = 60000;       // keep-alive idle, body read and each write
  std::string server_name = "inferscope";      // the Server header
  std::string log_name = "http";               // prefix of this server's log lines
  std::optional<TlsServerFiles> tls = std::nullopt;  // set: HTTPS only (TLS 1.2 or newer)
};

class HttpServer {
 public:
  // start validates `options`, loads the TLS files when given, binds host:port and starts the io
  // threads. Fails with "cannot start HTTP server on <host>:<port>: <cause>" (a TLS file that
  // cannot be read or does not match names its flag-free path); nothing is left running then.
  static Result<std::unique_ptr<HttpServer>> start(HttpServerOptions options, RequestHandler handler);

  // ~HttpServer stops the server at once (stop(0)).
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // port returns the bound port (the real one when options.port was 0).
  std::uint16_t port() const;
  // connections returns the number of open client connections (all io threads).
  std::size_t connections() const;

  // stop closes the listener, then drains: idle keep-alive connections close at once, busy ones
  // finish their current response (then close) until `drain` passes; what is left is closed and
  // the io threads are joined (cut after a further 3 s). Idempotent; stop(0) closes everything now.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(0));

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::net
