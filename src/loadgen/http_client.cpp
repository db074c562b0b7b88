// Every socket operation is a co_await with redirect_error (no exceptions cross a handler); one
// tcp_stream deadline covers the whole request. Single-threaded by design: the pool, the active set
// and the shared JSON parser are touched only from the io thread.
#include "loadgen/http_client.h"

#include <limits>
#include <unordered_set>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "loadgen/openai_event.h"
#include "loadgen/response_recorder.h"

namespace inferscope::loadgen {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

auto tok(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

struct Connection {
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  std::unique_ptr<char[]> chunk;
  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
};

bool is_closed_by_peer(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == http::error::partial_message;
}

// classify maps a socket/HTTP error to an ErrorKind; `in_body` separates a stream cut after the
// response began (truncated) from a connection that died before answering (reset).
ErrorKind classify(const error_code& ec, bool in_body) {
  if (ec == beast::error::timeout) return ErrorKind::kTimeout;
  if (ec == asio::error::operation_aborted) return ErrorKind::kCancelled;
  if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe) return ErrorKind::kReset;
  if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == http::error::partial_message) {
    return in_body ? ErrorKind::kTruncatedStream : ErrorKind::kReset;
  }
  if (ec.category() == http::make_error_code(http::error::bad_version).category()) return ErrorKind::kMalformedStream;
  return ErrorKind::kReset;
}

}  // namespace

struct HttpClient::Impl {
  asio::io_context& io;
  Target target;
  const RunClock& clock;
  ClientOptions options;
  ssl::context tls_context{ssl::context::tls_client};
  tcp::resolver resolver{io};
  std::vector<std::unique_ptr<Connection>> idle;
  std::unordered_set<Connection*> active;
  OpenAiEventParser parser;
  bool cancelled = false;

  Impl(asio::io_context& i, const Target& t, const RunClock& c, ClientOptions o)
      : io(i), target(t), clock(c), options(o) {}

  asio::awaitable<std::unique_ptr<Connection>> connect(RequestRecord& record,
                                                       std::chrono::steady_clock::time_point deadline);
  struct Outcome {
    bool retry = false;       // a reused connection was closed before answering
    bool keep_alive = false;  // the connection can carry the next request
  };
  template <class Stream>
  asio::awaitable<Outcome> exchange(Stream& stream, Connection& conn, const std::string& wire, RequestRecord& record,
                                 bool reused);
  asio::awaitable<void> execute(const std::string& wire, RequestRecord& record,
                                std::chrono::steady_clock::time_point deadline);
};

asio::awaitable<std::unique_ptr<Connection>> HttpClient::Impl::connect(RequestRecord& record,
                                                                       std::chrono::steady_clock::time_point deadline) {
  auto conn = std::make_unique<Connection>();
  conn->tcp = std::make_unique<beast::tcp_stream>(io);
  conn->tcp->expires_at(deadline);
  active.insert(conn.get());
  struct Unregister {
    Impl* self;
    Connection* c;
    ~Unregister() { self->active.erase(c); }
  } unregister{this, conn.get()};

  error_code ec;
  std::int64_t t0 = clock.now_ns();
  std::vector<tcp::endpoint> endpoints;
  if (auto addr = asio::ip::make_address(target.host, ec); !ec) {
    endpoints.emplace_back(addr, static_cast<unsigned short>(std::stoi(target.port)));
  } else {
    ec = {};
    auto results = co_await resolver.async_resolve(target.host, target.port, tok(ec));
    if (ec || cancelled) {
      record.error = cancelled ? ErrorKind::kCancelled : ErrorKind::kConnect;
      co_return nullptr;
    }
    for (const auto& r : results) endpoints.push_back(r.endpoint());
  }
  std::int64_t t1 = clock.now_ns();
  record.dns_ns = t1 - t0;
  co_await conn->tcp->async_connect(endpoints, tok(ec));
  std::int64_t t2 = clock.now_ns();
  record.connect_ns = t2 - t1;
  if (ec) {
    record.error = ec == asio::error::connection_refused ? ErrorKind::kRefused
                   : ec == beast::error::timeout         ? ErrorKind::kTimeout
                   : ec == asio::error::operation_aborted ? ErrorKind::kCancelled
                                                          : ErrorKind::kConnect;
    co_return nullptr;
  }
  conn->tcp->socket().set_option(tcp::no_delay(true), ec);
  if (target.tls) {
    conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*conn->tcp), tls_context);
    conn->tcp.reset();
    SSL_set_tlsext_host_name(conn->tls->native_handle(), target.host.c_str());
    if (options.verify_tls) conn->tls->set_verify_callback(ssl::host_name_verification(target.host));
    co_await conn->tls->async_handshake(ssl::stream_base::client, tok(ec));
    record.tls_ns = clock.now_ns() - t2;
    if (ec) {
      record.error = ec == beast::error::timeout ? ErrorKind::kTimeout
                     : ec == asio::error::operation_aborted ? ErrorKind::kCancelled
                                                            : ErrorKind::kConnect;
      co_return nullptr;
    }
  }
  conn->chunk = std::make_unique<char[]>(options.read_chunk);
  co_return conn;
}

// exchange writes the request and reads the response; Outcome::retry when a reused connection was
// found closed before any response byte (the caller retries on a fresh one).
template <class Stream>
asio::awaitable<HttpClient::Impl::Outcome> HttpClient::Impl::exchange(Stream& stream, Connection& conn, const std::string& wire,
                                                 RequestRecord& record, bool reused) {
  error_code ec;
  co_await asio::async_write(stream, asio::buffer(wire), tok(ec));
  if (ec) {
    if (reused && is_closed_by_peer(ec)) co_return Outcome{true, false};
    record.error = classify(ec, false);
    record.end_ns = clock.now_ns();
    co_return Outcome{};
  }
  record.sent_ns = clock.now_ns();
  http::response_parser<http::buffer_body> response;
  response.body_limit(std::numeric_limits<std::uint64_t>::max());
  co_await http::async_read_header(stream, conn.buffer, response, tok(ec));
  if (ec) {
    if (reused && is_closed_by_peer(ec) && conn.buffer.size() == 0) co_return Outcome{true, false};
    record.error = classify(ec, false);
    record.end_ns = clock.now_ns();
    co_return Outcome{};
  }
  record.headers_ns = clock.now_ns();
  record.http_status = static_cast<std::uint16_t>(response.get().result_int());
  if (record.http_status < 200 || record.http_status > 299) record.error = ErrorKind::kHttpStatus;
  ResponseRecorder recorder(record, parser);
  while (!response.is_done()) {
    auto& body = response.get().body();
    body.data = conn.chunk.get();
    body.size = options.read_chunk;
    co_await http::async_read_some(stream, conn.buffer, response, tok(ec));
    std::int64_t now = clock.now_ns();
    std::size_t n = options.read_chunk - response.get().body().size;
    if (n > 0) recorder.on_body(std::string_view(conn.chunk.get(), n), now);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) break;
  }
  if (ec && record.error == ErrorKind::kNone) record.error = classify(ec, true);
  recorder.on_end(clock.now_ns());
  co_return Outcome{false, !ec && response.keep_alive()};
}

asio::awaitable<void> HttpClient::Impl::execute(const std::string& wire, RequestRecord& record,
                                                std::chrono::steady_clock::time_point deadline) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Connection> conn;
    bool reused = false;
    if (!idle.empty() && attempt == 0) {
      conn = std::move(idle.back());
      idle.pop_back();
      reused = true;
    } else {
      conn = co_await connect(record, deadline);
      if (!conn) {
        if (cancelled) record.error = ErrorKind::kCancelled;
        record.end_ns = clock.now_ns();
        co_return;
      }
    }
    record.reused_connection = reused;
    conn->lowest().expires_at(deadline);
    active.insert(conn.get());
    Outcome outcome = conn->tls ? co_await exchange(*conn->tls, *conn, wire, record, reused)
                                : co_await exchange(*conn->tcp, *conn, wire, record, reused);
    active.erase(conn.get());
    // After cancel_all closed the socket, whatever error the exchange saw is the cancellation.
    if (cancelled && (record.error != ErrorKind::kNone || outcome.retry)) record.error = ErrorKind::kCancelled;
    if (outcome.retry && !cancelled) {
      record.error = ErrorKind::kNone;
      continue;
    }
    // Reuse only connections whose response was read to its end with nothing left over; a
    // malformed SSE payload inside a well-framed HTTP body does not spoil the connection.
    bool reusable = !cancelled && outcome.keep_alive && conn->buffer.size() == 0;
    if (reusable) {
      conn->lowest().expires_never();
      idle.push_back(std::move(conn));
    }
    co_return;
  }
}

}  // namespace inferscope::loadgen

namespace inferscope::loadgen {

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::create(asio::io_context& io, const Target& target,
                                                       const RunClock& clock, ClientOptions options) {
  auto impl = std::make_unique<Impl>(io, target, clock, options);
  if (target.tls) {
    error_code ec;
    impl->tls_context.set_default_verify_paths(ec);
    if (ec) return make_error("cannot load CA certificates from the system store: " + ec.message());
    impl->tls_context.set_verify_mode(options.verify_tls ? ssl::verify_peer : ssl::verify_none);
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

asio::awaitable<void> HttpClient::execute(const std::string& wire, RequestRecord& record,
                                          std::chrono::steady_clock::time_point deadline) {
  return impl_->execute(wire, record, deadline);
}

void HttpClient::cancel_all() {
  impl_->cancelled = true;
  impl_->resolver.cancel();
  // close, not cancel: cancel() reaches only the operation pending right now, and an exchange
  // whose write has completed but whose coroutine has not yet resumed would start its read after
  // it and wait for the request deadline. A closed socket fails every later operation at once.
  for (Connection* c : impl_->active) c->lowest().close();
  impl_->idle.clear();
}

std::size_t HttpClient::open_connections() const { return impl_->idle.size() + impl_->active.size(); }

}  // namespace inferscope::loadgen
