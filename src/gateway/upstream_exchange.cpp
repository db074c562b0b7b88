// File: upstream_exchange.cpp
// Idle connections are kept per io_context because a socket belongs to the thread that runs its
// context; the key is that context's address.
#include "gateway/upstream_exchange.h"

#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/http/field.hpp>

namespace inferscope::gateway {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;
using timeline::Moment;

net::ClientRequest make_upstream_request(const Upstream& upstream, const net::HttpRequest& client,
                                         bool pass_client_auth) {
  const UpstreamConfig& u = upstream.config();
  net::ClientRequest out{client.method(), u.target.base_path + std::string(net::to_std(client.target())), 11};
  for (const auto& field : client) {
    switch (field.name()) {
      case http::field::connection:
      case http::field::keep_alive:
      case http::field::transfer_encoding:
      case http::field::content_length:
      case http::field::te:
      case http::field::upgrade:
      case http::field::host:
      case http::field::expect:
      case http::field::accept_encoding:
      case http::field::proxy_authorization:
      case http::field::authorization:
        continue;
      default:
        out.insert(field.name_string(), field.value());
    }
  }
  out.set(http::field::host, u.target.host_header);
  if (!upstream.authorization().empty()) {
    out.set(http::field::authorization, upstream.authorization());
  } else if (pass_client_auth && client.count(http::field::authorization) > 0) {
    out.set(http::field::authorization, client[http::field::authorization]);
  }
  out.keep_alive(true);
  out.body() = client.body();
  out.prepare_payload();
  return out;
}

UpstreamExchange::UpstreamExchange() = default;
UpstreamExchange::~UpstreamExchange() = default;

asio::awaitable<net::ClientError> UpstreamExchange::start(Upstream& upstream, const net::ClientRequest& request,
                                                          const GatewayConfig& config,
                                                          timeline::RequestTimeline* timeline) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  context_ = &asio::query(executor, asio::execution::context);
  net::ClientError error = net::ClientError::kNone;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (timeline != nullptr) timeline->mark(Moment::kUpstreamConnectStart, Clock::now());
    connection_ = attempt == 0 ? upstream.take_idle(context_) : nullptr;
    const bool reused = connection_ != nullptr;
    if (!reused) {
      error = co_await net::ClientConnection::open(executor, upstream.config().target, upstream.tls(),
                                                  config.connect_timeout, connection_);
      if (error != net::ClientError::kNone) co_return cancelled_ ? net::ClientError::kCancelled : error;
    }
    if (cancelled_) {
      connection_->cancel();
      co_return net::ClientError::kCancelled;
    }
    (reused ? upstream.gauges().connections_reused : upstream.gauges().connections_new).inc();
    if (timeline != nullptr) timeline->mark(Moment::kUpstreamConnected, Clock::now());
    error = co_await connection_->write(request, config.idle_timeout);
    if (error == net::ClientError::kNone) {
      if (timeline != nullptr) timeline->mark(Moment::kUpstreamRequestSent, Clock::now());
      error = co_await connection_->read_head(config.header_timeout);
    }
    const bool stale = reused && !cancelled_ && !connection_->bytes_received() &&
                       (error == net::ClientError::kReset || error == net::ClientError::kTruncated);
    if (!stale) break;  // a kept-alive connection the upstream had closed: once more on a new one
  }
  if (cancelled_) co_return net::ClientError::kCancelled;
  co_return error;
}

asio::awaitable<net::ClientError> UpstreamExchange::read_some(std::string_view& out, std::chrono::milliseconds idle) {
  out = {};
  if (cancelled_) co_return net::ClientError::kCancelled;
  const net::ClientError error = co_await connection_->read_body_view(out, idle);
  co_return cancelled_ ? net::ClientError::kCancelled : error;
}

void UpstreamExchange::keep(Upstream& upstream) {
  if (!reusable()) return;
  connection_->reset_for_reuse();
  upstream.put_idle(context_, std::move(connection_));
}

void UpstreamExchange::cancel() {
  cancelled_ = true;
  if (connection_) connection_->cancel();
}

}  // namespace inferscope::gateway
