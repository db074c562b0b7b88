// File: connection.cpp
// One coroutine per connection. Deadlines come from a per-connection watchdog timer that closes
// the socket when the current deadline passes (Asio 1.74 has no awaitable operators), so a read or
// write stuck on a silent or slow peer always ends. Three deadlines: idle (waiting for the next
// request, a body, a write), header (first byte of a request -> end of its headers: slowloris).
#include "net/connection.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <charconv>

#include "net/detail/server_core.h"

namespace inferscope::net {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::redirect_error;
using asio::use_awaitable;

namespace {
// kMaxPipelinedBytes bounds what the peer watch buffers for a pipelined next request.
constexpr std::size_t kMaxPipelinedBytes = 64 * 1024;
}  // namespace

namespace detail {
void ConnectionSet::close_all() {
  for (Connection* connection : live_) connection->close();
}
void ConnectionSet::close_idle() {
  for (Connection* connection : live_) connection->close_if_idle();
}
}  // namespace detail

Connection::Connection(asio::ip::tcp::socket socket, detail::ServerCore& core, detail::ConnectionSet& set)
    : stream_(std::move(socket), core.tls.get()), core_(core), set_(set), watchdog_timer_(stream_.get_executor()) {
  boost::system::error_code ec;
  auto peer = stream_.socket().remote_endpoint(ec);
  peer_loopback_ = !ec && peer.address().is_loopback();
  if (!ec) {
    // An IPv4 client of a dual-stack listener shows as ::ffff:a.b.c.d: name it a.b.c.d.
    const auto address = peer.address();
    peer_address_ = address.is_v6() && address.to_v6().is_v4_mapped()
                        ? asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string()
                        : address.to_string();
  }
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
}

bool Connection::draining() const { return core_.draining.load(std::memory_order_relaxed); }

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  watchdog_timer_.cancel();
}

void Connection::close_if_idle() {
  if (!busy_) close();
}

void Connection::arm_deadline(std::chrono::milliseconds timeout) {
  deadline_ = std::chrono::steady_clock::now() + timeout;
  if (deadline_ < watchdog_timer_.expiry()) watchdog_timer_.cancel();  // re-arm sooner
}

void Connection::arm_idle_deadline() { arm_deadline(std::chrono::milliseconds(core_.options.idle_timeout_ms)); }

asio::awaitable<void> Connection::watchdog() {
  auto self = shared_from_this();
  while (!closed_) {
    boost::system::error_code ec;
    watchdog_timer_.expires_at(deadline_);
    co_await watchdog_timer_.async_wait(redirect_error(use_awaitable, ec));
    if (!closed_ && std::chrono::steady_clock::now() >= deadline_) {
      spdlog::debug("{}: closing a connection whose read or write passed its deadline", core_.options.log_name);
      close();
    }
  }
}

asio::awaitable<void> Connection::run() {
  auto self = shared_from_this();
  set_.add(this);
  core_.live.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(executor(), [self] { return self->watchdog(); }, asio::detached);
  const bool ready = !stream_.tls() || co_await tls_handshake();
  while (ready && !closed_ && !draining()) {
    if (!co_await read_request()) break;
    busy_ = true;
    keep_alive_ = request_.keep_alive();
    write_delay_ = std::chrono::microseconds(0);
    held_head_.clear();
    const bool keep = co_await core_.handler(*this);
    peer_closed_hook_ = nullptr;
    busy_ = false;
    if (!keep || !keep_alive_ || closed_) break;
  }
  close();
  set_.remove(this);
  core_.live.fetch_sub(1, std::memory_order_relaxed);
}

asio::awaitable<bool> Connection::tls_handshake() {
  boost::system::error_code ec;
  arm_deadline(std::chrono::milliseconds(core_.options.header_timeout_ms));
  co_await stream_.async_handshake(redirect_error(use_awaitable, ec));
  clear_deadline();
  if (ec) {
    // A scanner or a client that does not trust our certificate: nothing to answer.
    spdlog::debug("{}: TLS handshake with {} failed: {}", core_.options.log_name, peer_address_, ec.message());
    co_return false;
  }
  co_return true;
}

asio::awaitable<bool> Connection::read_request() {
  boost::system::error_code ec;
  if (buffer_.size() == 0) {
    // Between requests the idle deadline applies; the header deadline starts at the first byte.
    arm_idle_deadline();
    if (stream_.tls()) {
      // TLS may hold decrypted bytes the socket no longer shows: read the first ones instead.
      const std::size_t n =
          co_await stream_.async_read_some(buffer_.prepare(4096), redirect_error(use_awaitable, ec));
      buffer_.commit(n);
    } else {
      co_await stream_.socket().async_wait(asio::ip::tcp::socket::wait_read, redirect_error(use_awaitable, ec));
    }
    if (ec || closed_ || draining()) co_return false;
  }
  busy_ = true;
  http::request_parser<http::string_body> parser;
  parser.body_limit(core_.options.max_body_bytes);
  parser.header_limit(core_.options.max_header_bytes);
  arm_deadline(std::chrono::milliseconds(core_.options.header_timeout_ms));
  co_await http::async_read_header(stream_, buffer_, parser, redirect_error(use_awaitable, ec));
  if (!ec && parser.get()[http::field::expect] == "100-continue") {
    // curl waits a second for this before sending bodies over 1 KiB.
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    arm_idle_deadline();
    co_await asio::async_write(stream_, asio::buffer(kContinue), redirect_error(use_awaitable, ec));
  }
  if (!ec) {
    arm_idle_deadline();
    co_await http::async_read(stream_, buffer_, parser, redirect_error(use_awaitable, ec));
  }
  clear_deadline();
  if (ec == http::error::body_limit) {
    keep_alive_ = false;
    HttpRequest head;  // the body was not read: answer and close
    head.version(parser.get().version());
    const ApiError error = ApiError::request_too_large("cannot read request body from client: it is over the limit of " +
                                                       std::to_string(core_.options.max_body_bytes) + " bytes");
    co_await send_error(error, head);
    co_return false;
  }
  if (ec == http::error::header_limit) {
    keep_alive_ = false;
    HttpRequest head;
    ApiError error = ApiError::bad_request("cannot read request headers from client: they are over the limit of " +
                                           std::to_string(core_.options.max_header_bytes) + " bytes");
    error.status = 431;
    error.code = "request_header_fields_too_large";
    co_await send_error(error, head);
    co_return false;
  }
  if (ec) {
    if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
        ec != asio::error::connection_reset && ec != asio::error::bad_descriptor) {
      spdlog::debug("{}: cannot read request from client: {}", core_.options.log_name, ec.message());
    }
    co_return false;
  }
  request_ = parser.release();
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
  if (draining()) keep_alive_ = false;
  response.keep_alive(keep_alive_);
  response.set(http::field::server, core_.options.server_name);
  response.prepare_payload();
  if (!co_await delay_write()) co_return false;
  boost::system::error_code ec;
  arm_idle_deadline();
  co_await http::async_write(stream_, response, redirect_error(use_awaitable, ec));
  clear_deadline();
  if (ec) peer_closed_ = true;
  co_return !ec;
}

asio::awaitable<bool> Connection::send_error(const ApiError& error, const HttpRequest& request,
                                             std::string_view allow) {
  HttpResponse response{static_cast<http::status>(error.status), request.version() ? request.version() : 11};
  response.set(http::field::content_type, "application/json");
  if (!allow.empty()) response.set(http::field::allow, boost::beast::string_view(allow.data(), allow.size()));
  if (error.retry_after) response.set(http::field::retry_after, std::to_string(*error.retry_after));
  response.body() = api_error_body(error);
  co_return co_await send(response);
}

asio::awaitable<bool> Connection::write_stream_head(const HttpRequest& request) {
  static const StreamHead kSseHead;
  co_return co_await write_stream_head(request, kSseHead);
}

void Connection::hold_stream_head(const HttpRequest& request, const StreamHead& head_spec) {
  http::response<http::empty_body> head{static_cast<http::status>(head_spec.status), request.version()};
  head.set(http::field::server, core_.options.server_name);
  head.set(http::field::content_type, head_spec.content_type);
  head.set(http::field::cache_control, "no-cache");
  for (const auto& [name, value] : head_spec.headers) head.set(name, value);
  if (draining()) keep_alive_ = false;
  chunked_ = request.version() >= 11;
  if (chunked_) {
    head.chunked(true);
  } else {
    keep_alive_ = false;  // HTTP/1.0: the end of the body is the end of the connection
  }
  head.keep_alive(keep_alive_);
  held_head_.clear();
  http::response_serializer<http::empty_body> serializer{head};
  serializer.split(true);
  boost::system::error_code ec;
  while (!ec && !serializer.is_header_done()) {
    serializer.next(ec, [&](boost::system::error_code&, const auto& buffers) {
      for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
        held_head_.append(static_cast<const char*>(buffer.data()), buffer.size());
      }
      serializer.consume(boost::beast::buffer_bytes(buffers));
    });
  }
}

// The write_stream_* calls hand back write_stream_parts' awaitable instead of awaiting it: no
// coroutine frame of their own per write (Asio 1.74 caches one frame per thread, so every extra
// nesting level is a malloc and a free per event).
asio::awaitable<bool> Connection::write_stream_head(const HttpRequest& request, const StreamHead& head_spec) {
  hold_stream_head(request, head_spec);
  return write_stream_parts({}, false);
}

asio::awaitable<bool> Connection::write_stream_data(std::string_view data) { return write_stream_parts(data, false); }

asio::awaitable<bool> Connection::write_stream_last(std::string_view data) { return write_stream_parts(data, true); }

asio::awaitable<bool> Connection::write_stream_end() { return write_stream_parts({}, true); }

asio::awaitable<bool> Connection::write_stream_parts(std::string_view data, bool last) {
  std::array<asio::const_buffer, 5> parts;
  std::size_t count = 0;
  const bool head = !held_head_.empty();
  if (head) parts[count++] = asio::buffer(held_head_);
  std::array<char, 20> size_line;  // "<hex size>\r\n", as Beast's make_chunk writes it
  if (!data.empty() && chunked_) {
    char* end = std::to_chars(size_line.data(), size_line.data() + 16, data.size(), 16).ptr;
    *end++ = '\r';
    *end++ = '\n';
    parts[count++] = asio::buffer(size_line.data(), static_cast<std::size_t>(end - size_line.data()));
    parts[count++] = asio::buffer(data.data(), data.size());
    parts[count++] = asio::buffer("\r\n", 2);
  } else if (!data.empty()) {
    parts[count++] = asio::buffer(data.data(), data.size());
  }
  if (last && chunked_) parts[count++] = asio::buffer("0\r\n\r\n", 5);
  if (count == 0) co_return !closed_;
  if (head || !data.empty()) {
    if (write_delay_.count() > 0) {
      if (!co_await delay_write()) co_return false;
    } else if (closed_) {
      co_return false;  // what delay_write says without a delay, without its coroutine frame
    }
  }
  boost::system::error_code ec;
  arm_idle_deadline();
  co_await asio::async_write(stream_, parts, redirect_error(use_awaitable, ec));  // unused parts are empty
  held_head_.clear();  // only now: the write read it in place
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
    std::size_t n = co_await stream_.async_read_some(buffer_.prepare(4096), redirect_error(use_awaitable, ec));
    if (ec) {
      if (!stop_watch_) {
        peer_closed_ = true;  // EOF or reset: the client is gone
        if (peer_closed_hook_) peer_closed_hook_();
      }
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
  stream_.socket().cancel(ec);  // only the watch's read is pending here: no write is in flight
  while (watching_) co_await signal.wait();
}

}  // namespace inferscope::net
