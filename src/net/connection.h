// File: connection.h
// Connection serves one accepted TCP connection of an HttpServer as one coroutine (STYLE.md item
// 11): read a request under deadlines and size limits, hand it to the server's handler, repeat
// while keep-alive. It offers the write primitives handlers use (whole responses, chunked streams
// such as SSE) and a concurrent "peer watch" read that notices a client hanging up mid-response.
// Example (inside a RequestHandler): co_return co_await connection.send(response);
// Not thread-safe: everything runs on the connection's single-threaded executor. No exception
// leaves run(); every error ends in close(). Internal header (Beast): only .cpp files of handlers
// that need the raw request include it; src/net/router.h is the Beast-free way to add routes.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/api_error.h"
#include "net/async_signal.h"
#include "net/detail/server_stream.h"

namespace inferscope::net {

namespace detail {
struct ServerCore;
class ConnectionSet;
}

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// to_std converts Beast 1.74's boost::string_view to std::string_view.
inline std::string_view to_std(boost::beast::string_view s) { return {s.data(), s.size()}; }

// StreamHead describes the head of a streamed (chunked) response; the defaults are SSE's.
struct StreamHead {
  int status = 200;
  std::string content_type = "text/event-stream; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. X-Accel-Buffering
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Connection takes the accepted socket; `core` and `set` (its io thread's) must outlive it. With
  // core.tls set, run() first does the TLS handshake (under the header deadline).
  Connection(boost::asio::ip::tcp::socket socket, detail::ServerCore& core, detail::ConnectionSet& set);

  // run serves requests until the peer leaves, an error, a deadline, a drain or close(). Never throws.
  boost::asio::awaitable<void> run();
  // close shuts the socket at once; pending reads and writes fail. Idempotent.
  void close();
  // close_if_idle closes the connection when it is between requests (used by a graceful drain).
  void close_if_idle();

  // request returns the request being served (valid inside the handler).
  HttpRequest& request() { return request_; }
  // core is what the connections of this server share (router.cpp's blocking routes use it).
  detail::ServerCore& core() { return core_; }
  boost::asio::any_io_executor executor() { return stream_.get_executor(); }
  // peer_is_loopback reports whether the client connected from 127.0.0.0/8 or ::1.
  bool peer_is_loopback() const { return peer_loopback_; }
  // peer_address is the client's IP address as text ("127.0.0.1", "::1"); empty if unknown.
  const std::string& peer_address() const { return peer_address_; }
  // is_tls reports whether this connection speaks TLS.
  bool is_tls() const { return stream_.tls(); }
  // draining reports whether the server is shutting down gracefully (finish, then close).
  bool draining() const;

  // set_write_delay delays every following write of this request by `delay` (fault injection).
  void set_write_delay(std::chrono::microseconds delay) { write_delay_ = delay; }
  // set_keep_alive(false) closes the connection after the current response.
  void set_keep_alive(bool keep) { keep_alive_ = keep_alive_ && keep; }

  // send writes a whole response (Content-Length, Server and keep-alive set here). False: write failed.
  boost::asio::awaitable<bool> send(HttpResponse& response);
  // send_error writes the OpenAI error JSON of `error` (plus Allow/Retry-After when relevant).
  boost::asio::awaitable<bool> send_error(const ApiError& error, const HttpRequest& request,
                                          std::string_view allow = {});

  // write_stream_head writes the head of a streamed response (chunked for HTTP/1.1; for
  // HTTP/1.0 the body ends with the connection).
  // (No default argument: g++ 12 destroys a temporary in a co_await full-expression twice.)
  boost::asio::awaitable<bool> write_stream_head(const HttpRequest& request, const StreamHead& head);
  // write_stream_head(request) writes SSE's default head.
  boost::asio::awaitable<bool> write_stream_head(const HttpRequest& request);
  // hold_stream_head prepares the head as write_stream_head does, but sends it with the next
  // write_stream_data, write_stream_last or write_stream_end, in the same write: for a body that
  // is about to follow, one write instead of two or three. Writes nothing itself.
  void hold_stream_head(const HttpRequest& request, const StreamHead& head);
  // write_stream_data writes `data` as one chunk, at once (no buffering). False: the write failed.
  boost::asio::awaitable<bool> write_stream_data(std::string_view data);
  // write_stream_last writes `data` as the last chunk and the terminating chunk, in one write.
  boost::asio::awaitable<bool> write_stream_last(std::string_view data);
  // write_stream_end writes the terminating chunk; the stream is then complete.
  boost::asio::awaitable<bool> write_stream_end();

  // watch_peer starts a concurrent read that sets peer_closed() and notifies `signal` when the
  // client hangs up; bytes it reads (a pipelined request) are kept for the next request.
  void watch_peer(AsyncSignal* signal);
  // set_peer_closed_hook runs `hook` (on this connection's executor) the moment the peer watch sees
  // the client hang up, e.g. to cancel an upstream request at once. Cleared after each request.
  void set_peer_closed_hook(std::function<void()> hook) { peer_closed_hook_ = std::move(hook); }
  // stop_watching_peer ends the watch and waits on `signal` (the one given to watch_peer) until it
  // has stopped; call it before that signal dies and with no write in flight.
  boost::asio::awaitable<void> stop_watching_peer(AsyncSignal& signal);
  // peer_closed reports whether the watch saw the client hang up, or a write failed.
  bool peer_closed() const { return peer_closed_; }

 private:
  boost::asio::awaitable<bool> read_request();
  boost::asio::awaitable<bool> tls_handshake();
  boost::asio::awaitable<void> watchdog();
  boost::asio::awaitable<void> peer_watch_loop(AsyncSignal* signal);
  boost::asio::awaitable<bool> delay_write();
  // write_stream_parts writes a held head, `data` as a chunk and, when `last`, the terminating
  // chunk, whichever there are, in one gather write.
  boost::asio::awaitable<bool> write_stream_parts(std::string_view data, bool last);
  void arm_deadline(std::chrono::milliseconds timeout);
  void arm_idle_deadline();
  void clear_deadline() { deadline_ = std::chrono::steady_clock::time_point::max(); }

  detail::ServerStream stream_;
  detail::ServerCore& core_;
  detail::ConnectionSet& set_;
  boost::beast::flat_buffer buffer_;
  HttpRequest request_;
  std::string held_head_;  // a serialized response head waiting to go out with the body
  boost::asio::steady_timer watchdog_timer_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::chrono::microseconds write_delay_{0};
  bool closed_ = false;
  bool busy_ = false;           // a request is being read or served
  bool peer_loopback_ = false;
  std::string peer_address_;
  bool keep_alive_ = true;      // of the request being served
  bool chunked_ = false;        // of the stream being written
  bool watching_ = false;
  bool stop_watch_ = false;
  bool peer_closed_ = false;
  std::function<void()> peer_closed_hook_;
};

}  // namespace inferscope::net
