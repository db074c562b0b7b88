// File: metrics_server.h
// MetricsServer is the embedded /metrics endpoint: a small HTTP/1.1 server (Boost.Beast, its own
// thread and io_context) that answers scrapes of one Registry with content negotiation and gzip.
//   auto server = MetricsServer::start(registry, {.port = 0}); if (!server) die(server.error().message);
// Thread-safe: port()/local_address() from any thread; stop() from any thread except the server's
// own (never from a collect hook). Binds 127.0.0.1 unless told otherwise; never throws out of a
// connection handler; never blocks metric writers.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <inferscope/common/result.h>

namespace inferscope::metrics {

class Registry;

// MetricsServerOptions configures a MetricsServer. The first three fields are the shared contract.
struct MetricsServerOptions {
  std::string bind_address = "127.0.0.1";  // numeric IPv4/IPv6 address; "0.0.0.0" exposes it
  std::uint16_t port = 9464;               // 0 = ephemeral; port() tells the real one
  std::string path = "/metrics";           // must start with '/'; a query string is ignored
  // max_connections bounds concurrent connections; extra ones get a 503 and are closed at once.
  std::size_t max_connections = 64;
  // read_timeout bounds reading one request, including the keep-alive idle wait before it.
  std::chrono::milliseconds read_timeout = std::chrono::seconds(30);
  // write_timeout bounds writing one response (slow readers are cut off).
  std::chrono::milliseconds write_timeout = std::chrono::seconds(30);
};

// MetricsServer serves GET and HEAD on options.path with render_scrape(): Accept picks Prometheus
// text 0.0.4 or OpenMetrics 1.0.0, Accept-Encoding gzip compresses, Content-Type is always exact.
// Other paths get 404, other methods on the path 405 with "Allow: GET, HEAD". A render failure
// (a collect hook threw) gets 500; the server keeps serving. Connections are kept alive.
class MetricsServer {
 public:
  // start binds bind_address:port, listens, and starts the serving thread. `registry` is kept by
  // reference and must outlive the server. Returns an error ("cannot listen for metrics scrapes
  // on <addr>:<port>: <cause>") if the options are invalid or the address cannot be bound.
  static Result<std::unique_ptr<MetricsServer>> start(Registry& registry, MetricsServerOptions options = {});

  // ~MetricsServer stops the server (see stop()).
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // port returns the bound port (the ephemeral one when options.port was 0).
  std::uint16_t port() const noexcept;
  // local_address returns the bound address as text ("127.0.0.1").
  std::string local_address() const;

  // wait_connections_at_most_for_test blocks until at most `count` connections are open (true) or
  // `limit` passes (false): a test waits for the server to see a close instead of polling.
  bool wait_connections_at_most_for_test(std::size_t count, std::chrono::milliseconds limit) const;

  // stop closes the listener and every open connection (responses being written are cut) and
  // joins the serving thread. Idempotent; after it returns, nothing touches the registry. Must
  // not be called on the serving thread (it would join itself).
  void stop();

 private:
  struct Impl;  // Beast/Asio state, kept out of this header to keep includers' builds fast.
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::metrics
