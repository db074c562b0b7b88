// File: request_channel.cpp
#include "serve/request_channel.h"

#include <boost/asio/post.hpp>

namespace inferscope::serve {

void RequestChannel::on_scheduled(SteadyTime when) { push({EngineEvent::Kind::kScheduled, when}, {}); }
void RequestChannel::on_prefill_done(SteadyTime when) {
  push({EngineEvent::Kind::kPrefillDone, when}, {});
}
void RequestChannel::on_tokens(std::span<const std::uint32_t> ids, SteadyTime when) {
  push({EngineEvent::Kind::kTokens, when}, ids);
}
void RequestChannel::on_preempted(SteadyTime when) { push({EngineEvent::Kind::kPreempted, when}, {}); }
void RequestChannel::on_finished(FinishReason reason, SteadyTime when) {
  push({EngineEvent::Kind::kFinished, when, reason}, {});
}

// on_last_tokens queues the tokens and the finish under one lock, so one batch holds both.
void RequestChannel::on_last_tokens(std::span<const std::uint32_t> ids, FinishReason reason, SteadyTime when) {
  push({EngineEvent::Kind::kTokens, when}, ids, EngineEvent{EngineEvent::Kind::kFinished, when, reason});
}

void RequestChannel::push(EngineEvent event, std::span<const std::uint32_t> ids, std::optional<EngineEvent> then) {
  bool post_wake = false;
  {
    std::lock_guard lock(mu_);
    event.token_begin = static_cast<std::uint32_t>(pending_.tokens.size());
    event.token_count = static_cast<std::uint32_t>(ids.size());
    pending_.tokens.insert(pending_.tokens.end(), ids.begin(), ids.end());
    pending_.events.push_back(event);
    if (then) pending_.events.push_back(*then);
    post_wake = !wake_posted_;
    wake_posted_ = true;
  }
  if (post_wake) {
    boost::asio::post(executor_, [self = shared_from_this()] { self->wake(); });
  }
}

void RequestChannel::wake() {
  // wake_posted_ stays set until take(): pushes between this wake and the take need no new post.
  if (signal_ != nullptr) signal_->notify();
}

void RequestChannel::take(EventBatch& batch) {
  batch.clear();
  std::lock_guard lock(mu_);
  std::swap(batch, pending_);
  wake_posted_ = false;
}

bool RequestChannel::pending() const {
  std::lock_guard lock(mu_);
  return !pending_.events.empty();
}

}  // namespace inferscope::serve
