// File: client_metrics.h
// ClientMetrics exposes the client-side view of a run as Prometheus metrics (through
// libinferscope's Registry and MetricsServer on --metrics-port), so a dashboard can put what the
// client saw next to what the server reports: inferscope_bench_* requests, tokens, in-flight, and
// TTFT/E2E histograms both from the actual start and from the intended send.
// Example: auto m = ClientMetrics::start(9465); runner.set_observer(m.get());
// RunObserver calls come from the io thread; scrapes from the server's thread (metrics are atomic).
// Never labels by prompt, request id or URL: labels are error kind and the latency origin only.
#pragma once

#include <cstdint>
#include <memory>

#include "inferscope/common/result.h"
#include "loadgen/request_runner.h"

namespace inferscope::bench {

class ClientMetrics final : public loadgen::RunObserver {
 public:
  // start registers the families and serves GET /metrics on 127.0.0.1:`port` (0 = ephemeral).
  // Fails when the port cannot be bound.
  static Result<std::unique_ptr<ClientMetrics>> start(std::uint16_t port);
  ~ClientMetrics() override;

  void on_complete(const loadgen::RequestRecord& record) override;
  void on_tick(const loadgen::RunStatus& status) override;
  // port returns the bound port.
  std::uint16_t port() const;

 private:
  struct Impl;
  explicit ClientMetrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferscope::bench
