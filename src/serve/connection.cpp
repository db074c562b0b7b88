// File: connection.cpp
// One coroutine per connection. Deadlines come from a per-connection watchdog timer that closes
// the socket when the current deadline passes (Asio 1.74 has no awaitable operators), so a read or
// write stuck on a silent peer always ends.
#include "serve/connection.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include "serve/connection_set.h"
#include "serve/routes.h"
#include "serve/server_state.h"

namespace inferscope::serve {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::redirect_error;
using asio::use_awaitable;

namespace {
// kMaxPipelinedBytes bounds what the peer watch buffers for a pipelined next request.
constexpr std::size_t kMaxPipelinedBytes = 64 * 1024;
constexpr std::uint32_t kMaxHeaderBytes = 16 * 1024;
}  // namespace

void ConnectionSet::close_all() {
  for (Connection* connection : live_) connection->close();
}

Connection::Connection(asio::ip::tcp::socket socket, ServerState& state, ConnectionSet& set)
    : socket_(std::move(socket)), state_(state), set_(set), watchdog_timer_(socket_.get_executor()) {
  boost::system::error_code ec;
  auto peer = socket_.remote_endpoint(ec);
  peer_loopback_ = !ec && peer.address().is_loopback();
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  watchdog_timer_.cancel();
}

void Connection::arm_deadline() {
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(state_.options.idle_timeout_ms);
  if (deadline_ < watchdog_timer_.expiry()) watchdog_timer_.cancel();  // re-arm sooner
}

asio::awaitable<void> Connection::watchdog() {
  auto self = shared_from_this();
  while (!closed_) {
    boost::system::error_code ec;
    watchdog_timer_.expires_at(deadline_);
    co_await watchdog_timer_.async_wait(redirect_error(use_awaitable, ec));
    if (!closed_ && std::chrono::steady_clock::now() >= deadline_) {
      spdlog::debug("serve: closing a connection whose read or write passed its deadline");
      close();
    }
  }
}

asio::awaitable<void> Connection::run() {
  auto self = shared_from_this();
  set_.add(this);
  asio::co_spawn(executor(), [self] { return self->watchdog(); }, asio::detached);
  while (!closed_ && !state_.stopping.load(std::memory_order_relaxed)) {
    HttpRequest request;
    if (!co_await read_request(request)) break;
    keep_alive_ = request.keep_alive();
    write_delay_ = std::chrono::microseconds(0);
    const bool keep = co_await route_request(*this, request);
    if (!keep || !keep_alive_ || closed_) break;
  }
  close();
  set_.remove(this);
}

asio::awaitable<bool> Connection::read_request(HttpRequest& out) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(state_.options.max_body_bytes);
  parser.header_limit(kMaxHeaderBytes);
  boost::system::error_code ec;
  arm_deadline();
  co_await http::async_read_header(socket_, buffer_, parser, redirect_error(use_awaitable, ec));
  if (!ec && parser.get()[http::field::expect] == "100-continue") {
    // curl waits a second for this before sending bodies over 1 KiB.
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    co_await asio::async_write(socket_, asio::buffer(kContinue), redirect_error(use_awaitable, ec));
  }
  if (!ec) co_await http::async_read(socket_, buffer_, parser, redirect_error(use_awaitable, ec));
  clear_deadline();
  if (ec == http::error::body_limit) {
    ApiError error = ApiError::bad_request(
        "cannot read request body from client: it is over the limit of " +
        std::to_string(state_.options.max_body_bytes) + " bytes");
    error.status = 413;
    error.code = "request_too_large";
    keep_alive_ = false;
    HttpRequest head;  // the body was not read: answer and close
    head.version(parser.get().version());
    co_await send_error(error, head);
    co_return false;
  }
  if (ec) {
    if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
        ec != asio::error::connection_reset && ec != asio::error::bad_descriptor) {
      spdlog::debug("serve: cannot read request from client: {}", ec.message());
    }
    co_return false;
  }
  out = parser.release();
  co_return true;
}

asio::awaitable<bool> Connection::delay_write() {
  if (write_delay_.count() <= 0) co_return !closed_;
  boost::system::error_code ec;
  asio::steady_timer timer(executor(), write_delay_);
  co_await timer.async_wait(redirect_error(use_awaitable, ec));
  co_return !closed_;
}

asio::awaitable<bool> Connection::send(HttpResponse& response) {
  response.keep_alive(keep_alive_);
  response.set(http::field::server, "inferscope");
  response.prepare_payload();
  if (!co_await delay_write()) co_return false;
  boost::system::error_code ec;
  arm_deadline();
  co_await http::async_write(socket_, response, redirect_error(use_awaitable, ec));
  clear_deadline();
  if (ec) peer_closed_ = true;
  co_return !ec;
}

asio::awaitable<bool> Connection::send_error(const ApiError& error, const HttpRequest& request,
                                             std::string_view allow) {
  HttpResponse response{static_cast<http::status>(error.status), request.version()};
  response.set(http::field::content_type, "application/json");
  if (!allow.empty()) response.set(http::field::allow, boost::beast::string_view(allow.data(), allow.size()));
  if (error.retry_after) response.set(http::field::retry_after, std::to_string(*error.retry_after));
  response.body() = api_error_body(error);
  co_return co_await send(response);
}

asio::awaitable<bool> Connection::write_stream_head(const HttpRequest& request) {
  http::response<http::empty_body> head{http::status::ok, request.version()};
  head.set(http::field::server, "inferscope");
  head.set(http::field::content_type, "text/event-stream; charset=utf-8");
  head.set(http::field::cache_control, "no-cache");
  chunked_ = request.version() >= 11;
  if (chunked_) {
    head.chunked(true);
  } else {
    keep_alive_ = false;  // HTTP/1.0: the end of the body is the end of the connection
  }
  head.keep_alive(keep_alive_);
  if (!co_await delay_write()) co_return false;
  http::response_serializer<http::empty_body> serializer{head};
  boost::system::error_code ec;
  arm_deadline();
  co_await http::async_write_header(socket_, serializer, redirect_error(use_awaitable, ec));
  clear_deadline();
  if (ec) peer_closed_ = true;
  co_return !ec;
}

asio::awaitable<bool> Connection::write_stream_data(std::string_view data) {
  if (data.empty()) co_return !closed_;
  if (!co_await delay_write()) co_return false;
  boost::system::error_code ec;
  arm_deadline();
  if (chunked_) {
    co_await asio::async_write(socket_, http::make_chunk(asio::buffer(data.data(), data.size())),
                               redirect_error(use_awaitable, ec));
  } else {
    co_await asio::async_write(socket_, asio::buffer(data.data(), data.size()),
                               redirect_error(use_awaitable, ec));
  }
  clear_deadline();
  if (ec) peer_closed_ = true;
  co_return !ec;
}

asio::awaitable<bool> Connection::write_stream_end() {
  if (!chunked_) co_return !closed_;
  boost::system::error_code ec;
  arm_deadline();
  co_await asio::async_write(socket_, http::make_chunk_last(), redirect_error(use_awaitable, ec));
  clear_deadline();
  if (ec) peer_closed_ = true;
  co_return !ec;
}

void Connection::watch_peer(AsyncSignal* signal) {
  if (watching_ || closed_) return;
  watching_ = true;
  stop_watch_ = false;
  asio::co_spawn(executor(), [self = shared_from_this(), signal] { return self->peer_watch_loop(signal); },
                 asio::detached);
}

asio::awaitable<void> Connection::peer_watch_loop(AsyncSignal* signal) {
  auto self = shared_from_this();
  while (!stop_watch_ && buffer_.size() < kMaxPipelinedBytes) {
    boost::system::error_code ec;
    std::size_t n = co_await socket_.async_read_some(buffer_.prepare(4096), redirect_error(use_awaitable, ec));
    if (ec) {
      if (!stop_watch_) peer_closed_ = true;  // EOF or reset: the client is gone
      break;
    }
    buffer_.commit(n);
  }
  watching_ = false;
  signal->notify();
}

asio::awaitable<void> Connection::stop_watching_peer(AsyncSignal& signal) {
  if (!watching_) co_return;
  stop_watch_ = true;
  boost::system::error_code ec;
  socket_.cancel(ec);  // only the watch's read is pending here: no write is in flight
  while (watching_) co_await signal.wait();
}

}  // namespace inferscope::serve
