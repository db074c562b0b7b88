// File: client_connection.h
// ClientConnection is one outbound HTTP/1.1 connection (plain TCP or TLS through OpenSSL) that
// carries requests one at a time and hands the response body back as it arrives, so a proxy can
// forward each piece at once. Every step has its own deadline (connect, response head, idle gap
// between body reads) and every failure is classified (ClientError), which is what the gateway
// reports to its clients and metrics. Example:
//   std::unique_ptr<ClientConnection> c; auto e = co_await ClientConnection::open(ex, url, tls, 5s, c);
//   e = co_await c->write(request); e = co_await c->read_head(30s); while (!c->done()) co_await c->read_body_some(out, 60s);
// A caller that must cancel a connect in progress, or time its phases (bench), creates first:
//   auto c = ClientConnection::create(ex); ConnectPhases p; e = co_await c->connect(url, tls, 5s, &p);
// Not thread-safe: one coroutine on one executor uses it; cancel() may be called from another
// handler on that executor. Internal header (Beast, Asio SSL): include it from .cpp files only.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "net/http_url.h"

namespace inferscope::net {

// ClientError says how an outbound exchange failed (kNone: it did not).
enum class ClientError : std::uint8_t {
  kNone,
  kRefused,         // connect: nobody listens
  kConnectTimeout,  // connect (or TLS handshake) took longer than its deadline
  kTls,             // TLS handshake or certificate verification failed
  kReset,           // the connection broke before the response head arrived
  kHeaderTimeout,   // no complete response head within its deadline
  kIdleTimeout,     // the body went silent for longer than the idle deadline
  kTruncated,       // the connection ended inside the body
  kProtocol,        // the response is not valid HTTP/1.1
  kCancelled,       // cancel() was called (the client went away)
};

// to_string returns a bounded label value: "refused", "connect_timeout", "tls", ...
std::string_view to_string(ClientError error) noexcept;

using ClientRequest = boost::beast::http::request<boost::beast::http::string_body>;
using ClientResponseHead = boost::beast::http::response_header<>;

// ConnectPhases holds when each step of connect() ended; a step not reached stays at its epoch
// (time_since_epoch() == 0). Numeric hosts skip DNS: `resolved` is then the start.
struct ConnectPhases {
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point resolved;
  std::chrono::steady_clock::time_point connected;
  std::chrono::steady_clock::time_point handshaken;  // TLS only
};

class ClientConnection {
 public:
  // open connects to `url` (numeric hosts skip DNS) within `timeout`, then does the TLS handshake
  // when url.tls, verifying the peer against `tls` (which must outlive the connection). On
  // success `out` holds the connection.
  static boost::asio::awaitable<ClientError> open(boost::asio::any_io_executor executor, const HttpUrl& url,
                                                  boost::asio::ssl::context* tls, std::chrono::milliseconds timeout,
                                                  std::unique_ptr<ClientConnection>& out);
  // create makes an unconnected connection; connect() it next. cancel() works from here on.
  static std::unique_ptr<ClientConnection> create(boost::asio::any_io_executor executor);
  // connect is open()'s work on a created connection; `phases` (optional) gets each step's end.
  boost::asio::awaitable<ClientError> connect(const HttpUrl& url, boost::asio::ssl::context* tls,
                                              std::chrono::milliseconds timeout, ConnectPhases* phases);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // write sends `request` whole (the caller set Host, Content-Length and the like).
  boost::asio::awaitable<ClientError> write(const ClientRequest& request, std::chrono::milliseconds timeout);
  // write_raw sends bytes that already are a whole serialized request (bench prebuilds them).
  boost::asio::awaitable<ClientError> write_raw(std::string_view request, std::chrono::milliseconds timeout);
  // read_head reads the response status and headers within `timeout`.
  boost::asio::awaitable<ClientError> read_head(std::chrono::milliseconds timeout);
  // head returns the response head read by read_head.
  const ClientResponseHead& head() const;
  // read_body_some appends the next body bytes to `out` (chunked framing removed), waiting at most
  // `idle` for them. done() turns true once the body is complete.
  boost::asio::awaitable<ClientError> read_body_some(std::string& out, std::chrono::milliseconds idle);
  // read_body_view is read_body_some without the copy: `out` views the bytes in the connection's
  // own buffer, valid until its next read (a proxy forwards them from there).
  boost::asio::awaitable<ClientError> read_body_view(std::string_view& out, std::chrono::milliseconds idle);
  // done reports whether the current response body was read to its end.
  bool done() const;
  // reusable reports whether another request may follow on this connection (body complete,
  // keep-alive, nothing left over, no error, not cancelled).
  bool reusable() const;
  // bytes_received reports whether any byte of the current response arrived.
  bool bytes_received() const;
  // failure_detail is the system's words for the last failure ("certificate verify failed",
  // "Connection refused"), empty when none: for error messages, not for classification.
  const std::string& failure_detail() const;
  // cancel closes the connection at once; the pending operation ends with kCancelled.
  void cancel();
  // reset_for_reuse prepares a reusable connection for the next request.
  void reset_for_reuse();

 private:
  struct Impl;
  explicit ClientConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// make_client_tls_context builds the TLS context for outbound connections: verification on, the
// system CA store, plus `ca_file` when given (PEM). Fails naming the file.
Result<std::shared_ptr<boost::asio::ssl::context>> make_client_tls_context(const std::string& ca_file, bool verify);

}  // namespace inferscope::net
