// Relay documents: a report queued durably to named channels, and its delivery, alone and never
// merged with alerts, under the same rate limits, back-off and max_attempts.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "relay/detail/relay_impl.h"

namespace inferscope::relay {

using detail::Clock;
using detail::to_ms;

Relay::Impl::Pass Relay::Impl::pass_document(Channel& channel, const PendingDelivery& row, Clock::time_point start) {
  const std::string& name = channel.name();
  auto& series = metrics_.channel(name);
  DeliveryUpdate u{row.notification_id, DeliveryState::kDelivered, row.attempts + 1, 0, {}};
  auto document = parse_document(row.payload);
  if (!document) {  // cannot happen for rows this code wrote; kept visible rather than retried forever
    u.state = DeliveryState::kFailed;
    u.error = document.error().message;
    series.failed.inc();
    if (auto r = outbox_->update(name, {u}, to_ms(start)); !r) spdlog::error("relay: {}", r.error().message);
    emit("report_failed", name, "report failed: channel " + name + ": " + u.error);
    return {1, start};
  }
  const SendOutcome outcome = channel.send_document(*document, start);
  const Clock::time_point done = now();
  channel.limiter().record(start);
  if (outcome.ok) {
    series.delivered.inc();
    series.delivery_latency.observe(std::max(0.0, static_cast<double>(to_ms(done) - row.received_ms) / 1000.0));
  } else if (u.attempts >= std::max(1, config_.retry.max_attempts)) {
    u.state = DeliveryState::kFailed;
    u.error = outcome.error;
    series.failed.inc();
  } else {
    u.state = DeliveryState::kPending;
    u.error = outcome.error;
    u.next_attempt_ms = to_ms(done + backoff(u.attempts));
    series.retried.inc();
  }
  if (outcome.throttled) channel.limiter().pause_until(start + channel.throttle_pause());
  if (auto r = outbox_->update(name, {u}, to_ms(done), to_ms(start)); !r) spdlog::error("relay: {}", r.error().message);
  if (outcome.ok) {
    series.outbox_depth.dec(1);
    emit("report_sent", name, "report sent to " + name + " (" + std::to_string(outcome.bytes) + " bytes)");
  } else if (u.state == DeliveryState::kFailed) {
    series.outbox_depth.dec(1);
    spdlog::error("relay: channel {} gave up on report {} after {} attempts: {}", name, document->title, u.attempts,
                  outcome.error);
    emit("report_failed", name,
         "report failed: channel " + name + " after " + std::to_string(u.attempts) + " attempts: " + outcome.error);
  } else {
    spdlog::warn("relay: channel {} could not deliver report {}: {}", name, document->title, outcome.error);
    emit("report_retried", name, "report not sent to " + name + " yet (attempt " + std::to_string(u.attempts) +
                                     ", will retry): " + outcome.error);
  }
  return {1, start};
}

Result<void> Relay::Impl::enqueue_document(const Document& document, const std::vector<std::string>& channels) {
  if (channels.empty()) return make_error("cannot queue the report: no channel given");
  for (const std::string& name : channels) {
    const bool known = std::any_of(channels_.begin(), channels_.end(),
                                   [&](const auto& slot) { return slot->channel->name() == name; });
    if (!known) {
      RelayConfig names;
      names.channels = config_.channels;
      return make_error("unknown channel \"" + name + "\" (configured: " + configured_channel_names(names) + ")");
    }
  }
  auto stored = outbox_->store_document(document_to_json(document), channels, to_ms(now()));
  if (!stored) return stored.error();
  for (const std::string& name : channels) metrics_.channel(name).outbox_depth.inc();
  wake();
  return {};
}

}  // namespace inferscope::relay
