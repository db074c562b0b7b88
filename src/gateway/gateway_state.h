// File: gateway_state.h
// GatewayState is what every connection of one Gateway shares: config, metrics, upstreams and the
// client bearer keys, the span exporter. Internal to src/gateway. Example: state.pool->choose(model);
// Thread-safe: immutable after Gateway::start except what UpstreamPool and the metrics guard.
#pragma once

#include <inferscope/metrics/registry.h>

#include <memory>
#include <string>
#include <vector>

#include "gateway/gateway_config.h"
#include "gateway/gateway_metrics.h"
#include "gateway/upstream_pool.h"
#include "trace/span_exporter.h"

namespace inferscope::gateway {

struct GatewayState {
  GatewayConfig config;
  metrics::Registry registry;
  std::unique_ptr<GatewayMetrics> metrics;
  std::unique_ptr<UpstreamPool> pool;
  std::vector<std::string> client_keys;  // accepted bearer keys; empty = no client auth
  std::unique_ptr<trace::SpanExporter> tracer;  // null when tracing is off (no otlp endpoint)
};

}  // namespace inferscope::gateway
