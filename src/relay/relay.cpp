// Relay: opening it (channels, outbox, metrics, the watchdog's kept state), its threads' start
// and stop, its status, and the public methods, each handed to Relay::Impl
// (relay/detail/relay_impl.h, which says how the threads share their wake-ups).
#include "relay/relay.h"

#include <set>

#include "relay/detail/relay_impl.h"

namespace inferscope::relay {

using detail::Clock;
using detail::from_ms;
using detail::kStateAlarm;
using detail::kStateLastSeen;
using detail::to_ms;

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
