// Relay delivery: one pass of one channel (due rows → one merged message → send → every row's
// outcome), the back-off between attempts, and the channel threads.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "relay/detail/relay_impl.h"

namespace inferscope::relay {
namespace {

constexpr int kBatchRows = 50;

}  // namespace

using detail::Clock;
using detail::from_ms;
using detail::to_ms;
using std::chrono::milliseconds;

milliseconds Relay::Impl::backoff(int attempts) {
  const RetryConfig& r = config_.retry;
  double delay = static_cast<double>(r.initial_backoff.count());
  for (int i = 1; i < attempts && delay < static_cast<double>(r.max_backoff.count()); ++i) delay *= 2;
  delay = std::min(delay, static_cast<double>(r.max_backoff.count()));
  std::lock_guard lock(rng_mutex_);
  std::uniform_real_distribution<double> factor(1.0 - r.jitter, 1.0 + r.jitter);
  return milliseconds(static_cast<std::int64_t>(delay * factor(rng_)));
}

// pass is one delivery attempt of one channel: due rows -> one composed message -> send -> every
// row's outcome recorded. It runs long (about 90 lines) on purpose: the order "send, then mark"
// that makes the outbox lose nothing is visible in one place.
Relay::Impl::Pass Relay::Impl::pass(ChannelSlot& slot) {
  std::lock_guard lock(slot.mutex);
  Channel& channel = *slot.channel;
  const std::string& name = channel.name();
  const Clock::time_point start = now();
  if (!channel.limiter().allowed(start)) return {0, channel.limiter().next_allowed(start)};
  auto rows = outbox_->due(name, to_ms(start), kBatchRows);
  if (!rows) {
    spdlog::error("relay: {}", rows.error().message);
    return {0, start + std::chrono::seconds(1)};
  }
  if (rows->empty()) {
    auto next = outbox_->next_due_ms(name);
    if (next && *next) return {0, from_ms(**next)};
    return {0, start + std::chrono::hours(1)};
  }
  // A document (report) goes alone; alerts before it are merged as usual, those after wait.
  if (rows->front().kind == "document") return pass_document(channel, rows->front(), start);
  std::erase_if(*rows, [seen = false](const PendingDelivery& r) mutable { return seen = seen || r.kind == "document"; });
  std::vector<Notification> batch;
  std::vector<PendingDelivery> batch_rows;
  std::vector<DeliveryUpdate> updates;
  auto& series = metrics_.channel(name);
  for (PendingDelivery& row : *rows) {
    auto n = parse_notification(row.payload);
    if (!n) {  // cannot happen for rows this code wrote; kept visible rather than retried forever
      updates.push_back({row.notification_id, DeliveryState::kFailed, row.attempts, 0, n.error().message});
      series.failed.inc();
      spdlog::error("relay: channel {} cannot read stored notification {}: {}", name, row.notification_id,
                    n.error().message);
      continue;
    }
    batch.push_back(std::move(*n));
    batch_rows.push_back(std::move(row));
  }
  if (batch.empty()) {
    // Only unreadable rows: they are now marked failed; look again at once (or in a second if
    // even that could not be written, to avoid spinning on a broken database).
    if (auto r = outbox_->update(name, updates, to_ms(start)); !r) {
      spdlog::error("relay: {}", r.error().message);
      return {0, start + std::chrono::seconds(1)};
    }
    return {1, start};
  }
  const ComposedMessage message = compose_message(channel.style(), batch, channel.max_message_bytes(), diagnoses(batch, batch_rows));
  batch.resize(message.notifications);
  const SendOutcome outcome = channel.send(message, batch, start);
  const Clock::time_point done = now();
  channel.limiter().record(start);
  const int max_attempts = std::max(1, config_.retry.max_attempts);
  int gave_up = 0;
  for (std::size_t i = 0; i < message.notifications; ++i) {
    const PendingDelivery& row = batch_rows[i];
    DeliveryUpdate u{row.notification_id, DeliveryState::kDelivered, row.attempts + 1, 0, {}};
    if (outcome.ok) {
      series.delivered.inc();
      series.delivery_latency.observe(std::max(0.0, static_cast<double>(to_ms(done) - row.received_ms) / 1000.0));
    } else if (u.attempts >= max_attempts) {
      u.state = DeliveryState::kFailed;
      u.error = outcome.error;
      series.failed.inc();
      ++gave_up;
      spdlog::error("relay: channel {} gave up on notification {} ({}) after {} attempts: {}", name,
                    row.notification_id, notification_title(batch[i]), u.attempts, outcome.error);
    } else {
      u.state = DeliveryState::kPending;
      u.error = outcome.error;
      u.next_attempt_ms = to_ms(done + backoff(u.attempts));
      series.retried.inc();
    }
    updates.push_back(std::move(u));
  }
  if (outcome.throttled) channel.limiter().pause_until(start + channel.throttle_pause());
  if (auto r = outbox_->update(name, updates, to_ms(done), to_ms(start)); !r) {
    // The rows stay pending: the message may be sent twice, never lost.
    spdlog::error("relay: {}", r.error().message);
  }
  const std::string what = std::to_string(message.notifications) + " notification(s) " + message.title;
  if (outcome.ok) {
    series.outbox_depth.dec(static_cast<double>(message.notifications));
    emit("delivered", name, what);
  } else {
    spdlog::warn("relay: channel {} could not deliver {}: {}", name, what, outcome.error);
    if (gave_up > 0) {
      series.outbox_depth.dec(gave_up);
      emit("failed", name, what + ": " + outcome.error);
    } else {
      emit("retried", name, what + ": " + outcome.error);
    }
  }
  return {1, start};
}

int Relay::Impl::deliver_due() {
  int sent = 0;
  for (auto& slot : channels_) {
    // Bounded: each pass either sends or stops on a limit/back-off.
    for (int i = 0; i < 10000; ++i) {
      const Pass p = pass(*slot);
      if (p.sent == 0) break;
      sent += p.sent;
    }
  }
  refresh_depth();
  return sent;
}

void Relay::Impl::refresh_depth() {
  auto counts = outbox_->counts();
  if (!counts) return;
  for (const auto& slot : channels_) {
    auto it = counts->find(slot->channel->name());
    metrics_.channel(slot->channel->name()).outbox_depth.set(it == counts->end() ? 0.0 : static_cast<double>(it->second.pending));
  }
}

void Relay::Impl::channel_loop(ChannelSlot& slot) {
  for (;;) {
    std::uint64_t seen;
    {
      std::lock_guard lock(wake_mutex_);
      if (stopping_) return;
      seen = generation_;
    }
    const Pass p = pass(slot);
    if (p.sent > 0) continue;
    const auto wait = std::clamp(std::chrono::duration_cast<milliseconds>(p.next - now()), milliseconds(0),
                                 milliseconds(1000));
    std::unique_lock lock(wake_mutex_);
    wake_cv_.wait_for(lock, wait, [&] { return stopping_ || generation_ != seen; });
  }
}

}  // namespace inferscope::relay
