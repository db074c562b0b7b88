// Relay watchdog: the always-firing watchdog alert noted as it arrives, and the pipeline alarm
// raised (and later resolved) through the chat channels when it stops arriving.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "relay/detail/relay_impl.h"

namespace inferscope::relay {
namespace {

constexpr const char* kPipelineAlert = "InferscopeAlertingPipelineBroken";

bool is_chat(ChannelKind kind) {
  return kind == ChannelKind::kFeishu || kind == ChannelKind::kDingTalk || kind == ChannelKind::kWeCom ||
         kind == ChannelKind::kSlack;
}

}  // namespace

using detail::from_ms;
using detail::kStateAlarm;
using detail::kStateLastSeen;
using detail::to_ms;
using std::chrono::milliseconds;

Result<void> Relay::Impl::note_watchdog(std::int64_t now_ms) {
  std::lock_guard lock(watchdog_mutex_);
  if (auto r = outbox_->set_state(kStateLastSeen, std::to_string(now_ms)); !r) return r;
  watchdog_last_seen_ms_ = now_ms;
  metrics_.watchdog_last_seen.set(static_cast<double>(now_ms) / 1000.0);
  if (alarm_since_ms_ != 0) {
    const Notification restored = pipeline_notification(false, alarm_since_ms_, now_ms);
    auto stored = outbox_->store(restored, dedupe_key(restored), watchdog_channels(), now_ms, 0);
    if (!stored) return stored.error();
    if (auto r = outbox_->set_state(kStateAlarm, ""); !r) return r;
    alarm_since_ms_ = 0;
    spdlog::info("relay: watchdog alert arrived again; alerting pipeline restored");
    emit("watchdog_restored", "", "alerting pipeline restored: watchdog alert received again");
    wake();
  }
  return {};
}

std::vector<std::string> Relay::Impl::watchdog_channels() const {
  if (!config_.watchdog.channels.empty()) return config_.watchdog.channels;
  std::vector<std::string> chat, all;
  for (const auto& slot : channels_) {
    all.push_back(slot->channel->name());
    if (is_chat(slot->channel->config().kind)) chat.push_back(slot->channel->name());
  }
  return chat.empty() ? all : chat;
}

Notification Relay::Impl::pipeline_notification(bool firing, std::int64_t since_ms, std::int64_t now_ms) const {
  const std::int64_t reference = watchdog_last_seen_ms_ != 0 ? watchdog_last_seen_ms_ : watchdog_baseline_ms_;
  const std::int64_t minutes = std::max<std::int64_t>(1, (now_ms - reference) / 60000);
  Alert a;
  a.status = firing ? "firing" : "resolved";
  a.labels = {{"alertname", kPipelineAlert}, {"severity", "critical"}};
  const std::string since = watchdog_last_seen_ms_ != 0 ? format_rfc3339(from_ms(watchdog_last_seen_ms_))
                                                        : "the relay started at " + format_rfc3339(from_ms(reference));
  a.annotations = {
      {"summary", firing ? "alerting pipeline broken: no watchdog for " + std::to_string(minutes) + " minutes"
                         : "alerting pipeline restored: watchdog alert received again"},
      {"description", "The always-firing " + config_.watchdog.alertname + " alert has not reached the relay since " +
                          since + ". Prometheus, Alertmanager, the watchdog rule or the route to the relay is not "
                                  "working, so other alerts may be lost too."},
      {"runbook", "Run `inferscope up --status`; check that Prometheus and Alertmanager are up, that the rule " +
                      config_.watchdog.alertname + " is loaded, and that alertmanager.yml routes it to the relay."}};
  a.starts_at = format_rfc3339(from_ms(since_ms));
  a.ends_at = firing ? "0001-01-01T00:00:00Z" : format_rfc3339(from_ms(now_ms));
  a.fingerprint = "inferscope-watchdog-" + std::to_string(since_ms);
  Notification n;
  n.receiver = "inferscope-relay";
  n.status = a.status;
  n.group_key = std::string("inferscope-relay:{alertname=\"") + kPipelineAlert + "\"}";
  n.group_labels = {{"alertname", kPipelineAlert}};
  n.common_labels = a.labels;
  n.alerts.push_back(std::move(a));
  return n;
}

void Relay::Impl::check_watchdog() {
  if (!config_.watchdog.enabled) return;
  std::lock_guard lock(watchdog_mutex_);
  const std::int64_t now_ms = to_ms(now());
  const std::int64_t reference = watchdog_last_seen_ms_ != 0 ? watchdog_last_seen_ms_ : watchdog_baseline_ms_;
  const auto timeout_ms = std::chrono::duration_cast<milliseconds>(config_.watchdog.timeout).count();
  if (alarm_since_ms_ != 0 || now_ms - reference < timeout_ms) return;
  const Notification alarm = pipeline_notification(true, now_ms, now_ms);
  auto stored = outbox_->store(alarm, dedupe_key(alarm), watchdog_channels(), now_ms, 0);
  if (!stored) {
    spdlog::error("relay: cannot queue the watchdog alarm: {}", stored.error().message);
    return;  // tried again on the next tick
  }
  if (auto r = outbox_->set_state(kStateAlarm, std::to_string(now_ms)); !r) {
    spdlog::error("relay: {}", r.error().message);
  }
  alarm_since_ms_ = now_ms;
  const std::string summary = alarm.alerts.front().annotation("summary");
  spdlog::error("relay: {}", summary);
  emit("watchdog_missing", "", summary);
  wake();
}

void Relay::Impl::watchdog_loop() {
  for (;;) {
    {
      std::unique_lock lock(wake_mutex_);
      if (wake_cv_.wait_for(lock, milliseconds(1000), [&] { return stopping_; })) return;
    }
    check_watchdog();
    refresh_depth();
    const std::int64_t now_ms = to_ms(now());
    if (now_ms - last_prune_ms_ > 3600 * 1000) {
      last_prune_ms_ = now_ms;
      const auto retention = std::chrono::duration_cast<milliseconds>(config_.history_retention).count();
      if (auto r = outbox_->prune(now_ms - retention, now_ms - 3600 * 1000); !r) spdlog::warn("relay: {}", r.error().message);
    }
  }
}

}  // namespace inferscope::relay
