// Every request runs on a net::ClientConnection (the one Beast client: connect, TLS with SNI and
// verification, per-step deadlines, failure classes); this file adds the pool, the per-phase
// timestamps and the mapping to RequestRecord. Single-threaded by design: the pool, the active set
// and the shared JSON parser are touched only from the io thread.
#include "loadgen/http_client.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include "loadgen/openai_event.h"
#include "loadgen/response_recorder.h"
#include "net/client_connection.h"

namespace inferscope::loadgen {

namespace asio = boost::asio;
using net::ClientError;
using Clock = std::chrono::steady_clock;

namespace {

// Connection is a pooled connection and the buffer its body reads land in (kept, so a kept-alive
// connection reads without allocating).
struct Connection {
  std::unique_ptr<net::ClientConnection> link;
  std::string body;
};

// classify maps a failed exchange step to an ErrorKind.
ErrorKind classify(ClientError error) {
  switch (error) {
    case ClientError::kNone: return ErrorKind::kNone;
    case ClientError::kRefused: return ErrorKind::kRefused;
    case ClientError::kTls: return ErrorKind::kConnect;
    case ClientError::kConnectTimeout:
    case ClientError::kHeaderTimeout:
    case ClientError::kIdleTimeout: return ErrorKind::kTimeout;
    case ClientError::kReset: return ErrorKind::kReset;
    case ClientError::kTruncated: return ErrorKind::kTruncatedStream;
    case ClientError::kProtocol: return ErrorKind::kMalformedStream;
    case ClientError::kCancelled: return ErrorKind::kCancelled;
  }
  return ErrorKind::kReset;
}

std::chrono::milliseconds left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

struct HttpClient::Impl {
  asio::io_context& io;
  Target target;
  const RunClock& clock;
  ClientOptions options;
  std::shared_ptr<asio::ssl::context> tls_context;  // https only
  std::vector<std::unique_ptr<Connection>> idle;
  std::unordered_set<net::ClientConnection*> active;
  OpenAiEventParser parser;
  bool cancelled = false;

  Impl(asio::io_context& i, const Target& t, const RunClock& c, ClientOptions o)
      : io(i), target(t), clock(c), options(std::move(o)) {}

  std::int64_t ns(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - clock.start).count();
  }
  asio::awaitable<std::unique_ptr<Connection>> connect(RequestRecord& record, Clock::time_point deadline);
  struct Outcome {
    bool retry = false;  // a reused connection was closed before answering
  };
  asio::awaitable<Outcome> exchange(Connection& conn, const std::string& wire, RequestRecord& record, bool reused,
                                    Clock::time_point deadline);
  asio::awaitable<void> execute(const std::string& wire, RequestRecord& record, Clock::time_point deadline);
};

asio::awaitable<std::unique_ptr<Connection>> HttpClient::Impl::connect(RequestRecord& record,
                                                                       Clock::time_point deadline) {
  auto conn = std::make_unique<Connection>();
  conn->link = net::ClientConnection::create(io.get_executor());
  net::ClientConnection* link = conn->link.get();
  active.insert(link);
  struct Unregister {
    Impl* self;
    net::ClientConnection* c;
    ~Unregister() { self->active.erase(c); }
  } unregister{this, link};
  net::ConnectPhases phases;
  const ClientError error = co_await link->connect(target, tls_context.get(), left(deadline), &phases);
  const auto reached = [](Clock::time_point t) { return t.time_since_epoch().count() != 0; };
  if (reached(phases.resolved)) record.dns_ns = ns(phases.resolved) - ns(phases.started);
  if (reached(phases.connected)) record.connect_ns = ns(phases.connected) - ns(phases.resolved);
  if (reached(phases.handshaken)) record.tls_ns = ns(phases.handshaken) - ns(phases.connected);
  if (error != ClientError::kNone) {
    // A name that did not resolve is a connect failure, not a refusal.
    record.error = cancelled ? ErrorKind::kCancelled
                   : !reached(phases.resolved) && error == ClientError::kRefused ? ErrorKind::kConnect
                   : error == ClientError::kReset ? ErrorKind::kConnect
                                                  : classify(error);
    co_return nullptr;
  }
  conn->body.reserve(16 * 1024);
  co_return conn;
}

// exchange writes the request and reads the response; Outcome::retry when a reused connection was
// found closed before any response byte (the caller retries on a fresh one).
asio::awaitable<HttpClient::Impl::Outcome> HttpClient::Impl::exchange(Connection& conn, const std::string& wire,
                                                                      RequestRecord& record, bool reused,
                                                                      Clock::time_point deadline) {
  net::ClientConnection& link = *conn.link;
  auto failed_before_answer = [&](ClientError error) {
    if (reused && error == ClientError::kReset && !link.bytes_received()) return Outcome{true};
    record.error = classify(error);
    record.end_ns = clock.now_ns();
    return Outcome{};
  };
  if (ClientError e = co_await link.write_raw(wire, left(deadline)); e != ClientError::kNone) {
    co_return failed_before_answer(e);
  }
  record.sent_ns = clock.now_ns();
  if (ClientError e = co_await link.read_head(left(deadline)); e != ClientError::kNone) {
    co_return failed_before_answer(e);
  }
  record.headers_ns = clock.now_ns();
  record.http_status = static_cast<std::uint16_t>(link.head().result_int());
  if (record.http_status < 200 || record.http_status > 299) record.error = ErrorKind::kHttpStatus;
  ResponseRecorder recorder(record, parser);
  ClientError error = ClientError::kNone;
  while (!link.done()) {
    conn.body.clear();
    error = co_await link.read_body_some(conn.body, left(deadline));
    const std::int64_t now = clock.now_ns();
    if (!conn.body.empty()) recorder.on_body(conn.body, now);
    if (error != ClientError::kNone) break;
  }
  if (error != ClientError::kNone && record.error == ErrorKind::kNone) record.error = classify(error);
  recorder.on_end(clock.now_ns());
  co_return Outcome{};
}

asio::awaitable<void> HttpClient::Impl::execute(const std::string& wire, RequestRecord& record,
                                                Clock::time_point deadline) {
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
    net::ClientConnection* link = conn->link.get();
    active.insert(link);
    const Outcome outcome = co_await exchange(*conn, wire, record, reused, deadline);
    active.erase(link);
    // After cancel_all closed the socket, whatever error the exchange saw is the cancellation.
    if (cancelled && (record.error != ErrorKind::kNone || outcome.retry)) record.error = ErrorKind::kCancelled;
    if (outcome.retry && !cancelled) {
      record.error = ErrorKind::kNone;
      continue;
    }
    // Reuse only connections whose response was read to its end with nothing left over; a
    // malformed SSE payload inside a well-framed HTTP body does not spoil the connection.
    if (!cancelled && link->reusable()) {
      link->reset_for_reuse();
      idle.push_back(std::move(conn));
    }
    co_return;
  }
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::create(asio::io_context& io, const Target& target,
                                                       const RunClock& clock, ClientOptions options) {
  auto impl = std::make_unique<Impl>(io, target, clock, std::move(options));
  if (target.tls) {
    auto tls = net::make_client_tls_context(impl->options.tls.ca_file, impl->options.tls.verify);
    if (!tls) return tls.error();
    impl->tls_context = std::move(*tls);
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

asio::awaitable<void> HttpClient::execute(const std::string& wire, RequestRecord& record,
                                          Clock::time_point deadline) {
  return impl_->execute(wire, record, deadline);
}

void HttpClient::cancel_all() {
  impl_->cancelled = true;
  // cancel closes the socket (and stops a pending name lookup): an exchange whose write has
  // completed but whose coroutine has not yet resumed fails its next read at once instead of
  // waiting for the request deadline.
  for (net::ClientConnection* c : impl_->active) c->cancel();
  impl_->idle.clear();
}

std::size_t HttpClient::open_connections() const { return impl_->idle.size() + impl_->active.size(); }

}  // namespace inferscope::loadgen
