#include "relay/relay_metrics.h"

#include <cstdlib>

namespace inferscope::relay {

RelayMetrics::RelayMetrics(metrics::Registry& registry, const std::vector<std::string>& channels) {
  auto& notifications = registry.counter(
      {.name = "inferscope_notifications_total",
       .help = "Alert notifications by channel and result: delivered (confirmed by the service), retried (an attempt "
               "failed and will be retried), failed (given up after the last attempt; kept in the outbox).",
       .label_names = {"channel", "result"}});
  metrics::HistogramOptions latency_options;
  latency_options.name = "inferscope_relay_delivery_latency_seconds";
  latency_options.help = "Time from storing a webhook notification to the channel confirming its delivery.";
  latency_options.label_names = {"channel"};
  latency_options.unit = "seconds";
  latency_options.buckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};
  auto& latency = registry.histogram(latency_options);
  auto& depth = registry.gauge({.name = "inferscope_relay_outbox_depth",
                                .help = "Deliveries waiting in the relay outbox (new, backing off or rate-limited).",
                                .label_names = {"channel"}});
  for (const std::string& name : channels) {
    channels_.emplace(name, ChannelSeries{notifications.with({name, "delivered"}), notifications.with({name, "retried"}),
                                          notifications.with({name, "failed"}), latency.with({name}), depth.with({name})});
  }
  auto& webhooks = registry.counter(
      {.name = "inferscope_relay_webhooks_total",
       .help = "Alertmanager webhooks received by result: stored, duplicate, ignored (watchdog only), invalid (400), "
               "unavailable (503, outbox not writable).",
       .label_names = {"result"}});
  webhook_stored = webhooks.with({"stored"});
  webhook_duplicate = webhooks.with({"duplicate"});
  webhook_ignored = webhooks.with({"ignored"});
  webhook_invalid = webhooks.with({"invalid"});
  webhook_unavailable = webhooks.with({"unavailable"});
  watchdog_last_seen = registry
                           .gauge({.name = "inferscope_relay_watchdog_last_seen_timestamp_seconds",
                                   .help = "Unix time the watchdog alert last reached the relay (0: never)."})
                           .with({});
}

RelayMetrics::ChannelSeries& RelayMetrics::channel(const std::string& name) {
  auto it = channels_.find(name);
  if (it == channels_.end()) std::abort();  // BUG: channels are fixed at construction
  return it->second;
}

}  // namespace inferscope::relay
