// File: request_channel.h
// RequestChannel carries one sequence's engine events from the engine thread to the coroutine
// that serves the request: the engine calls the SequenceObserver methods, the coroutine take()s
// batches. At most one wake-up is posted per batch, so a fast stream costs one post per write,
// not one per token. Example:
//   auto ch = std::make_shared<RequestChannel>(executor); engine.submit(req, ch); ... co_await ch->wait(signal);
// Thread-safe between the engine thread (observer side) and the one connection thread.
// It never calls into the Engine (the observer contract forbids re-entry).
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "net/async_signal.h"
#include "serve/engine/engine_types.h"

namespace inferscope::serve {

// EngineEvent is one observer call; token events refer to [token_begin, +token_count) of the batch.
struct EngineEvent {
  enum class Kind : std::uint8_t { kScheduled, kPrefillDone, kTokens, kPreempted, kFinished };
  Kind kind;
  SteadyTime when;
  FinishReason reason = FinishReason::kStop;  // kFinished only
  std::uint32_t token_begin = 0;
  std::uint32_t token_count = 0;
};

// EventBatch is what take() hands over; reused between calls so steady state allocates nothing.
struct EventBatch {
  std::vector<EngineEvent> events;
  std::vector<std::uint32_t> tokens;
  void clear() { events.clear(); tokens.clear(); }
};

class RequestChannel final : public SequenceObserver,
                             public std::enable_shared_from_this<RequestChannel> {
 public:
  // RequestChannel posts its wake-ups to `executor` (the connection's single-threaded executor).
  explicit RequestChannel(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}

  // SequenceObserver (engine thread)
  void on_scheduled(SteadyTime when) override;
  void on_prefill_done(SteadyTime when) override;
  void on_tokens(std::span<const std::uint32_t> ids, SteadyTime when) override;
  void on_preempted(SteadyTime when) override;
  void on_last_tokens(std::span<const std::uint32_t> ids, FinishReason reason, SteadyTime when) override;
  void on_finished(FinishReason reason, SteadyTime when) override;

  // attach names the signal to notify on new events (connection thread); nullptr detaches. The
  // signal must stay alive until detached.
  void attach(net::AsyncSignal* signal) { signal_ = signal; }
  // take swaps every pending event into `batch` (cleared first). Connection thread.
  void take(EventBatch& batch);
  // pending reports whether events are waiting to be taken. Any thread.
  bool pending() const;

 private:
  // push queues `event` (with `ids`) and, when given, `then` right after it, and wakes the reader.
  void push(EngineEvent event, std::span<const std::uint32_t> ids, std::optional<EngineEvent> then = std::nullopt);
  void wake();

  boost::asio::any_io_executor executor_;
  mutable std::mutex mu_;
  EventBatch pending_;      // guarded by mu_
  bool wake_posted_ = false;  // guarded by mu_
  net::AsyncSignal* signal_ = nullptr;  // connection thread only
};

}  // namespace inferscope::serve
