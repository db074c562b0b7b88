// File: upstream_exchange.h
// UpstreamExchange is one request to one upstream: take an idle keep-alive connection or open a
// new one, write the request, read the response head (retrying once on a fresh connection when a
// reused one turns out closed before any byte), then hand the body back piece by piece. It marks
// the gateway moments upstream_connect_start/connected/request_sent on the request's timeline.
// Example: UpstreamExchange x; auto e = co_await x.start(u, req, config, &timeline); ... x.keep(u);
// Not thread-safe: one coroutine; cancel() may run from another handler on the same executor.
// Internal header (Beast, via net/client_connection.h).
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>
#include <inferscope/timeline/request_timeline.h>

#include <memory>
#include <string>

#include "gateway/gateway_config.h"
#include "gateway/upstream_pool.h"
#include "net/client_connection.h"
#include "net/connection.h"

namespace inferscope::gateway {

// make_upstream_request copies `client` for `upstream`: its path prefix, Host, its key (or the
// client's Authorization when `pass_client_auth` and the upstream has none), hop-by-hop headers
// and Accept-Encoding dropped (the gateway reads the stream), the body as is.
net::ClientRequest make_upstream_request(const Upstream& upstream, const net::HttpRequest& client,
                                         bool pass_client_auth);

class UpstreamExchange {
 public:
  UpstreamExchange();
  ~UpstreamExchange();

  // start connects and exchanges up to the response head; kNone means head() is valid.
  boost::asio::awaitable<net::ClientError> start(Upstream& upstream, const net::ClientRequest& request,
                                                 const GatewayConfig& config, timeline::RequestTimeline* timeline);
  const net::ClientResponseHead& head() const { return connection_->head(); }
  // read_some views the next body bytes in `out` (waiting at most `idle`), valid until the next
  // read_some or keep.
  boost::asio::awaitable<net::ClientError> read_some(std::string_view& out, std::chrono::milliseconds idle);
  bool done() const { return connection_ && connection_->done(); }
  bool reusable() const { return connection_ && !cancelled_ && connection_->reusable(); }
  // keep returns a reusable connection to the upstream's idle list.
  void keep(Upstream& upstream);
  // cancel closes the upstream connection now (the client left).
  void cancel();

 private:
  std::unique_ptr<net::ClientConnection> connection_;
  void* context_ = nullptr;
  bool cancelled_ = false;
};

}  // namespace inferscope::gateway
