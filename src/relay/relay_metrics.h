// File: relay_metrics.h
// RelayMetrics: the relay's series in the project's metrics registry (names in README.md).
// Example: RelayMetrics m(registry, {"oncall"});  m.channel("oncall").delivered.inc();
// Thread-safe after construction (handles never lock). Construction registers the families and
// throws std::invalid_argument if this registry already has them (one relay per registry).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <inferscope/metrics/registry.h>

namespace inferscope::relay {

class RelayMetrics {
 public:
  // ChannelSeries are one channel's handles, created at startup so that each series is exported
  // (at 0) before the first event: rate() alerts need the series to exist.
  struct ChannelSeries {
    metrics::Counter delivered, retried, failed;
    metrics::Histogram delivery_latency;  // webhook stored -> service confirmed, seconds
    metrics::Gauge outbox_depth;          // pending deliveries
  };

  RelayMetrics(metrics::Registry& registry, const std::vector<std::string>& channels);

  // channel returns the handles of a configured channel (a BUG to ask for another).
  ChannelSeries& channel(const std::string& name);

  metrics::Counter webhook_stored, webhook_duplicate, webhook_ignored, webhook_invalid, webhook_unavailable;
  metrics::Gauge watchdog_last_seen;  // Unix seconds; 0 until the first watchdog

 private:
  std::map<std::string, ChannelSeries> channels_;
};

}  // namespace inferscope::relay
