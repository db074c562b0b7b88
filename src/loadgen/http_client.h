// File: http_client.h
// HttpClient sends prebuilt HTTP/1.1 requests to one Target over a keep-alive pool of
// net::ClientConnection (plain TCP or TLS, the gateway's client) and records every timing of a
// RequestRecord: DNS, connect, TLS, request written, headers, each SSE event, end, and the error kind.
// Example: auto c = HttpClient::create(io, target, {}); co_await (*c)->execute(wire, rec, deadline);
// Not thread-safe: one io_context thread drives it. execute() never throws; all failures land in
// the record. Beast and OpenSSL stay in the .cpp (they are slow to compile).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <utility>  // before asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <boost/asio/awaitable.hpp>

#include "inferscope/common/result.h"
#include "loadgen/base_url.h"
#include "loadgen/request_record.h"
#include "loadgen/run_clock.h"
#include "net/blocking_client.h"

namespace boost::asio {
class io_context;
}

namespace inferscope::loadgen {

struct ClientOptions {
  net::TlsOptions tls;  // --ca-file adds a CA; --insecure turns peer verification off
};

class HttpClient {
 public:
  // create prepares the TLS context; fails when the CA store or --ca-file cannot be loaded. Keeps `io` and
  // `clock` by reference; both must outlive the client.
  static Result<std::unique_ptr<HttpClient>> create(boost::asio::io_context& io, const Target& target,
                                                    const RunClock& clock, ClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // execute sends `wire` on an idle connection (or a new one) and fills `record` until the
  // response ends, fails or `deadline` passes. A kept-alive connection that turns out closed
  // before any response byte is retried once on a fresh connection. `wire` and `record` must stay
  // valid until the coroutine completes.
  boost::asio::awaitable<void> execute(const std::string& wire, RequestRecord& record,
                                       std::chrono::steady_clock::time_point deadline);

  // cancel_all aborts every in-flight request (their records get kCancelled) and closes idle
  // connections. Call on the io thread.
  void cancel_all();

  // open_connections counts idle plus in-use connections.
  std::size_t open_connections() const;

 private:
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::loadgen
