// Relay intake: one Alertmanager webhook body → the watchdog noted, the rest stored durably for
// each accepting channel before the answer (200 stored/duplicate/ignored, 400, 503).
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "relay/detail/relay_impl.h"

namespace inferscope::relay {
namespace {

std::string reply_json(const char* status) { return nlohmann::json({{"status", status}}).dump(); }

std::string error_json(const std::string& message, const char* type) {
  return nlohmann::json({{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

using detail::to_ms;
using std::chrono::milliseconds;

WebhookReply Relay::Impl::handle_webhook(std::string_view body) {
  auto parsed = parse_notification(body);
  if (!parsed) {
    metrics_.webhook_invalid.inc();
    return {400, error_json(parsed.error().message, "invalid_request_error")};
  }
  Notification n = std::move(*parsed);
  const std::int64_t now_ms = to_ms(now());
  // The watchdog proves the pipeline works; it is noted, never forwarded (it always fires).
  bool watchdog_firing = false;
  std::erase_if(n.alerts, [&](const Alert& a) {
    if (a.alertname() != config_.watchdog.alertname) return false;
    watchdog_firing = watchdog_firing || a.status == "firing";
    return true;
  });
  if (watchdog_firing && config_.watchdog.enabled) {
    if (auto noted = note_watchdog(now_ms); !noted) {
      metrics_.webhook_unavailable.inc();
      spdlog::error("relay: {}", noted.error().message);
      return {503, error_json(noted.error().message, "server_error")};
    }
  }
  if (n.alerts.empty()) {
    metrics_.webhook_ignored.inc();
    return {200, reply_json("ignored")};
  }
  n.status = "resolved";
  for (const Alert& a : n.alerts) {
    if (a.status == "firing") n.status = "firing";
  }
  std::vector<std::string> targets;
  for (const auto& slot : channels_) {
    if (slot->channel->accepts(n.receiver)) targets.push_back(slot->channel->name());
  }
  const auto window_ms = std::chrono::duration_cast<milliseconds>(config_.dedupe_window).count();
  auto stored = outbox_->store(n, dedupe_key(n), targets, now_ms, window_ms);
  if (!stored) {
    metrics_.webhook_unavailable.inc();
    spdlog::error("relay: {}", stored.error().message);
    return {503, error_json(stored.error().message, "server_error")};
  }
  if (*stored == StoreOutcome::kDuplicate) {
    metrics_.webhook_duplicate.inc();
    return {200, reply_json("duplicate")};
  }
  metrics_.webhook_stored.inc();
  for (const auto& slot : channels_) {
    if (slot->channel->accepts(n.receiver)) metrics_.channel(slot->channel->name()).outbox_depth.inc();
  }
  wake();
  return {200, reply_json("stored")};
}

}  // namespace inferscope::relay
