// Relay: webhook intake, one delivery thread per channel, and the watchdog thread. Threads share
// one condition variable: a stored notification bumps `generation_` and wakes them all; otherwise
// each sleeps until its next due time (at most 1 s, so a hand-moved test clock is noticed).
#include "relay/relay.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "relay/channel.h"
#include "relay/outbox.h"
#include "relay/relay_metrics.h"

namespace inferscope::relay {
namespace {

using Clock = std::chrono::system_clock;
using std::chrono::milliseconds;

constexpr int kBatchRows = 50;
constexpr std::size_t kDiagnosisCacheSize = 1000;
constexpr const char* kStateLastSeen = "watchdog_last_seen_ms";
constexpr const char* kStateAlarm = "watchdog_alarm_since_ms";
constexpr const char* kPipelineAlert = "InferscopeAlertingPipelineBroken";

std::int64_t to_ms(Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count(); }
Clock::time_point from_ms(std::int64_t ms) { return Clock::time_point(milliseconds(ms)); }

std::string reply_json(const char* status) { return nlohmann::json({{"status", status}}).dump(); }

std::string error_json(const std::string& message, const char* type) {
  return nlohmann::json({{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_chat(ChannelKind kind) {
  return kind == ChannelKind::kFeishu || kind == ChannelKind::kDingTalk || kind == ChannelKind::kWeCom ||
         kind == ChannelKind::kSlack;
}

}  // namespace

struct ChannelSlot {
  std::unique_ptr<Channel> channel;
  std::mutex mutex;  // one pass at a time (thread and deliver_due)
};

class Relay::Impl {
 public:
  Impl(RelayConfig config, RelayOptions options, std::unique_ptr<Outbox> outbox,
       std::vector<std::unique_ptr<ChannelSlot>> channels, metrics::Registry& registry, std::vector<std::string> names)
      : config_(std::move(config)),
        options_(std::move(options)),
        outbox_(std::move(outbox)),
        channels_(std::move(channels)),
        metrics_(registry, names),
        rng_(options_.jitter_seed != 0 ? options_.jitter_seed : std::random_device{}()) {}

  Clock::time_point now() const { return options_.wall_clock ? options_.wall_clock() : Clock::now(); }
  Result<void> load_state();
  WebhookReply handle_webhook(std::string_view body);
  struct Pass {
    int sent = 0;
    Clock::time_point next;
  };
  Pass pass(ChannelSlot& slot);
  Pass pass_document(Channel& channel, const PendingDelivery& row, Clock::time_point start);
  Result<void> enqueue_document(const Document& document, const std::vector<std::string>& channels);
  int deliver_due();
  void check_watchdog();
  void refresh_depth();
  void start();
  void stop();
  Result<RelayStatus> status();
  Outbox& outbox() { return *outbox_; }

 private:
  void channel_loop(ChannelSlot& slot);
  void watchdog_loop();
  void wake();
  void emit(const char* kind, const std::string& channel, std::string text);
  Result<void> note_watchdog(std::int64_t now_ms);
  Notification pipeline_notification(bool firing, std::int64_t since_ms, std::int64_t now_ms) const;
  std::vector<std::string> watchdog_channels() const;
  milliseconds backoff(int attempts);
  std::vector<std::string> diagnoses(const std::vector<Notification>& batch, const std::vector<PendingDelivery>& rows);
  // firing_diagnosis runs options_.diagnose and keeps its record on each firing alert's row;
  // recovery hands a resolved notification's kept records to options_.recovered.
  std::string firing_diagnosis(const Notification& n);
  std::string recovery(const Notification& n);

  RelayConfig config_;
  RelayOptions options_;
  std::unique_ptr<Outbox> outbox_;
  std::vector<std::unique_ptr<ChannelSlot>> channels_;
  RelayMetrics metrics_;

  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  bool stopping_ = false;
  std::uint64_t generation_ = 0;
  std::vector<std::thread> threads_;
  bool started_ = false;

  std::mutex rng_mutex_;
  std::mt19937_64 rng_;

  // One diagnosis per notification, shared by its channels and retries.
  std::mutex diagnosis_mutex_;
  std::map<std::int64_t, std::string> diagnosis_cache_;

  std::mutex watchdog_mutex_;
  std::int64_t watchdog_last_seen_ms_ = 0;  // 0: never seen
  std::int64_t watchdog_baseline_ms_ = 0;   // when this relay opened
  std::int64_t alarm_since_ms_ = 0;         // 0: no alarm raised
  std::int64_t last_prune_ms_ = 0;
};

Result<void> Relay::Impl::load_state() {
  const std::int64_t now_ms = to_ms(now());
  watchdog_baseline_ms_ = now_ms;
  last_prune_ms_ = 0;
  auto seen = outbox_->state(kStateLastSeen);
  if (!seen) return seen.error();
  if (*seen && !(*seen)->empty()) watchdog_last_seen_ms_ = std::stoll(**seen);
  auto alarm = outbox_->state(kStateAlarm);
  if (!alarm) return alarm.error();
  if (*alarm && !(*alarm)->empty()) alarm_since_ms_ = std::stoll(**alarm);
  metrics_.watchdog_last_seen.set(static_cast<double>(watchdog_last_seen_ms_) / 1000.0);
  // A restarted relay must not exceed a robot's limit with sends its predecessor just made.
  for (auto& slot : channels_) {
    auto sends = outbox_->sends_since(slot->channel->name(), now_ms - 61000);
    if (!sends) return sends.error();
    for (std::int64_t ms : *sends) slot->channel->limiter().record(from_ms(ms));
  }
  refresh_depth();
  return {};
}

void Relay::Impl::wake() {
  {
    std::lock_guard lock(wake_mutex_);
    ++generation_;
  }
  wake_cv_.notify_all();
}

void Relay::Impl::emit(const char* kind, const std::string& channel, std::string text) {
  if (options_.on_event) options_.on_event(RelayEvent{kind, channel, std::move(text)});
}

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

milliseconds Relay::Impl::backoff(int attempts) {
  const RetryConfig& r = config_.retry;
  double delay = static_cast<double>(r.initial_backoff.count());
  for (int i = 1; i < attempts && delay < static_cast<double>(r.max_backoff.count()); ++i) delay *= 2;
  delay = std::min(delay, static_cast<double>(r.max_backoff.count()));
  std::lock_guard lock(rng_mutex_);
  std::uniform_real_distribution<double> factor(1.0 - r.jitter, 1.0 + r.jitter);
  return milliseconds(static_cast<std::int64_t>(delay * factor(rng_)));
}

std::vector<std::string> Relay::Impl::diagnoses(const std::vector<Notification>& batch,
                                                const std::vector<PendingDelivery>& rows) {
  std::vector<std::string> out;
  if (!options_.diagnose && !options_.recovered) return out;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::int64_t id = rows[i].notification_id;
    {
      std::lock_guard lock(diagnosis_mutex_);
      if (auto it = diagnosis_cache_.find(id); it != diagnosis_cache_.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    // Computed outside the lock (it queries Prometheus); two channels racing may both compute it.
    std::string text;
    try {
      text = batch[i].status == "resolved" ? recovery(batch[i]) : firing_diagnosis(batch[i]);
    } catch (const std::exception& e) {
      spdlog::warn("relay: diagnosis failed, sending without it: {}", e.what());
    }
    std::lock_guard lock(diagnosis_mutex_);
    diagnosis_cache_.emplace(id, text);
    // Ids only grow: dropping the smallest keeps the newest notifications' diagnoses.
    while (diagnosis_cache_.size() > kDiagnosisCacheSize) diagnosis_cache_.erase(diagnosis_cache_.begin());
    out.push_back(std::move(text));
  }
  return out;
}

std::string Relay::Impl::firing_diagnosis(const Notification& n) {
  if (!options_.diagnose) return {};
  FiringDiagnosis d = options_.diagnose(n);
  if (d.record.empty()) return std::move(d.markdown);
  for (const Alert& a : n.alerts) {
    if (a.status != "firing") continue;
    if (auto kept = outbox_->keep_firing_record(a, d.record); !kept) {
      spdlog::warn("relay: cannot keep the firing diagnosis of {}: {}", a.alertname(), kept.error().message);
    }
  }
  return std::move(d.markdown);
}

std::string Relay::Impl::recovery(const Notification& n) {
  if (!options_.recovered) return {};
  std::vector<std::string> records;
  for (const Alert& a : n.alerts) {
    auto record = outbox_->firing_record(a);
    if (!record) spdlog::warn("relay: cannot read the firing diagnosis of {}: {}", a.alertname(), record.error().message);
    records.push_back(record && *record ? **record : std::string());
  }
  return options_.recovered(n, records);
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

void Relay::Impl::start() {
  std::lock_guard lock(wake_mutex_);
  if (started_) return;
  started_ = true;
  stopping_ = false;
  for (auto& slot : channels_) threads_.emplace_back([this, s = slot.get()] { channel_loop(*s); });
  threads_.emplace_back([this] { watchdog_loop(); });
}

void Relay::Impl::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    if (!started_) return;
    stopping_ = true;
  }
  wake_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  std::lock_guard lock(wake_mutex_);
  started_ = false;
}

Result<RelayStatus> Relay::Impl::status() {
  auto counts = outbox_->counts();
  if (!counts) return counts.error();
  RelayStatus s;
  for (const auto& slot : channels_) {
    ChannelStatus c;
    c.name = slot->channel->name();
    c.kind = std::string(channel_kind_name(slot->channel->config().kind));
    if (auto it = counts->find(c.name); it != counts->end()) {
      c.pending = it->second.pending;
      c.failed = it->second.failed;
      c.delivered = it->second.delivered;
      c.last_error = it->second.last_error;
    }
    s.channels.push_back(std::move(c));
  }
  std::lock_guard lock(watchdog_mutex_);
  if (watchdog_last_seen_ms_ != 0) s.watchdog_last_seen = from_ms(watchdog_last_seen_ms_);
  s.watchdog_alarm_raised = alarm_since_ms_ != 0;
  return s;
}

Result<std::unique_ptr<Relay>> Relay::open(RelayConfig config, metrics::Registry& registry, RelayOptions options) {
  if (config.database_path.empty()) return make_error("cannot open relay outbox: database_path is empty");
  std::vector<std::unique_ptr<ChannelSlot>> channels;
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const ChannelConfig& c : config.channels) {
    if (!seen.insert(c.name).second) return make_error("channel " + c.name + ": the name is used twice");
    auto channel = Channel::create(c, config.request_timeout);
    if (!channel) return channel.error();
    auto slot = std::make_unique<ChannelSlot>();
    slot->channel = std::move(*channel);
    channels.push_back(std::move(slot));
    names.push_back(c.name);
  }
  for (const std::string& name : config.watchdog.channels) {
    if (seen.count(name) == 0) return make_error("watchdog channel " + name + ": no channel has that name");
  }
  auto outbox = Outbox::open(config.database_path, config.db_busy_timeout);
  if (!outbox) return outbox.error();
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(std::move(config), std::move(options), std::move(*outbox), std::move(channels), registry,
                                  names);
  } catch (const std::invalid_argument& e) {
    return make_error(std::string("cannot register the relay's metrics: ") + e.what());
  }
  if (auto r = impl->load_state(); !r) return r.error();
  return std::unique_ptr<Relay>(new Relay(std::move(impl)));
}

Relay::Relay(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Relay::~Relay() { impl_->stop(); }
WebhookReply Relay::handle_webhook(std::string_view body) { return impl_->handle_webhook(body); }
void Relay::start() { impl_->start(); }
void Relay::stop() { impl_->stop(); }
int Relay::deliver_due() { return impl_->deliver_due(); }
void Relay::check_watchdog() { impl_->check_watchdog(); }
Result<void> Relay::enqueue_document(const Document& document, const std::vector<std::string>& channels) {
  return impl_->enqueue_document(document, channels);
}
Result<RelayStatus> Relay::status() { return impl_->status(); }

Result<std::vector<FiredAlert>> Relay::alerts_fired_between(Clock::time_point from, Clock::time_point to) {
  return impl_->outbox().fired_between(to_ms(from), to_ms(to));
}

}  // namespace inferscope::relay
