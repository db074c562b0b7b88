// File: gateway.h
// Gateway runs `inferscope gateway` in-process: an instrumenting reverse proxy in front of
// OpenAI-compatible upstreams, with its own /metrics port. Example:
//   auto g = Gateway::start(config); if (!g) die(g.error().message); use (*g)->port();
// Thread-safe: port()/metrics_port()/registry() from any thread; stop() from any thread but an io
// thread. Beast stays out of this header (pimpl).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include <inferscope/common/result.h>
#include <inferscope/metrics/registry.h>

#include "gateway/gateway_config.h"

namespace inferscope::gateway {

class Gateway {
 public:
  // start validates `config`, reads keys and CA files, binds the proxy (and metrics) port and
  // starts serving. Fails with "cannot start gateway on <host>:<port>: <cause>".
  static Result<std::unique_ptr<Gateway>> start(GatewayConfig config);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  std::uint16_t port() const;
  // metrics_port returns the bound /metrics port, or 0 when there is none.
  std::uint16_t metrics_port() const;
  metrics::Registry& registry();

  // stop closes the listener, lets in-flight requests finish for up to `drain` (each connection
  // closes after its response), then closes everything. Idempotent.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(0));

 private:
  struct Impl;
  explicit Gateway(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::gateway
