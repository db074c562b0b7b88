// File: relay/detail/relay_impl.h
// Relay::Impl, the state behind relay.h, shared by the files that implement it: relay.cpp
// (open, start/stop, status), relay_intake.cpp (the webhook), relay_delivery.cpp (one pass of a
// channel, the channel threads), relay_documents.cpp (reports), relay_diagnoses.cpp (the
// diagnosis cache) and relay_watchdog.cpp. DO NOT INCLUDE THIS FILE DIRECTLY outside src/relay.
// Threads share one condition variable: a stored notification bumps `generation_` and wakes them
// all; otherwise each sleeps until its next due time (at most 1 s, so a hand-moved test clock is
// noticed).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "relay/channel.h"
#include "relay/outbox.h"
#include "relay/relay.h"
#include "relay/detail/time_ms.h"
#include "relay/relay_metrics.h"

namespace inferscope::relay {
namespace detail {

using Clock = std::chrono::system_clock;

// Outbox keys of the watchdog's state, kept across restarts.
inline constexpr const char* kStateLastSeen = "watchdog_last_seen_ms";
inline constexpr const char* kStateAlarm = "watchdog_alarm_since_ms";


}  // namespace detail

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

  detail::Clock::time_point now() const { return options_.wall_clock ? options_.wall_clock() : detail::Clock::now(); }
  Result<void> load_state();
  WebhookReply handle_webhook(std::string_view body);
  struct Pass {
    int sent = 0;
    detail::Clock::time_point next;
  };
  Pass pass(ChannelSlot& slot);
  Pass pass_document(Channel& channel, const PendingDelivery& row, detail::Clock::time_point start);
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
  std::chrono::milliseconds backoff(int attempts);
  std::vector<std::string> diagnoses(const std::vector<Notification>& batch, const std::vector<PendingDelivery>& rows);
  // firing_diagnosis runs options_.diagnose and keeps its record on each firing alert's row;
  // recovery hands a resolved notification's kept records to options_.recovered.
  std::string firing_diagnosis(const Notification& n);
  std::string recovery(const Notification& n);
  // firing_with_recovered: a firing notification's diagnosis, then what recovered of the alerts
  // in it that resolved (Alertmanager sends a group's mixed states as one firing notification).
  std::string firing_with_recovered(const Notification& n);

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

}  // namespace inferscope::relay
