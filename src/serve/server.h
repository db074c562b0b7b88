// File: server.h
// Server runs `inferscope serve` in-process: an OpenAI-compatible HTTP API (/v1/chat/completions,
// /v1/completions, /v1/models, /health, /metrics, optional /admin/faults) over a simulated Engine.
// Example: auto s = Server::start(options); if (!s) die(s.error().message); use port (*s)->port();
// Thread-safe: port()/engine()/registry() from any thread; stop() from any thread but an io thread.
// Beast stays out of this header (pimpl) so that tests and the CLI compile fast.
#pragma once

#include <cstdint>
#include <memory>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "serve/server_options.h"

namespace inferscope::serve {

class Engine;
class ServeMetrics;

class Server {
 public:
  // start validates `options`, starts the engine, registers metrics, binds host:port and starts
  // the io threads. Fails with "cannot start server on <host>:<port>: <cause>" for a bad option,
  // an engine that cannot start or an address that cannot be bound; nothing is left running.
  static Result<std::unique_ptr<Server>> start(ServerOptions options);

  // ~Server stops the server (see stop()).
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // port returns the bound API port (the real one when options.port was 0).
  std::uint16_t port() const;
  // metrics_port returns the bound --metrics-port, or 0 when there is none.
  std::uint16_t metrics_port() const;
  // engine returns the simulated engine of data-parallel rank `rank` (for tests reading stats);
  // valid until destruction. Throws std::out_of_range past engine_count().
  Engine& engine(std::uint32_t rank = 0);
  // engine_count returns the number of data-parallel ranks (--data-parallel-size).
  std::uint32_t engine_count() const;
  // registry returns the metrics registry behind /metrics.
  metrics::Registry& registry();
  // serve_metrics returns the metrics every request is recorded into (tests wait on their records).
  ServeMetrics& serve_metrics();

  // stop closes the listener, aborts every live sequence, closes every connection and joins the
  // io threads (bounded: connections still busy after 3 s are cut). Idempotent.
  void stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::serve
