// File: completion_stream.cpp
// The back half of a generation request: wait for engine events, turn them into timeline marks
// and SSE chunks (or one JSON body), write, and abort the sequence the moment the client is gone.
// Each wake-up drains every pending event and writes them in one chunk, so a slow client gets
// fewer, larger writes instead of an unbounded backlog.
#include <chrono>

#include "serve/completion_call.h"
#include "serve/engine/engine.h"
#include "serve/serve_metrics.h"
#include "serve/server_state.h"

namespace inferscope::serve {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;


// next_batch waits until engine events are pending (true) or the client is gone (false).
asio::awaitable<bool> CompletionCall::next_batch() {
  for (;;) {
    if (connection_.peer_closed()) co_return false;
    if (channel_->pending()) {
      channel_->take(batch_);
      co_return true;
    }
    co_await signal_.wait();
  }
}

void CompletionCall::abort_sequence() {
  if (!submitted_ || finished_) return;
  finished_ = true;
  state_.engines[engine_rank_]->abort(sequence_);  // frees the KV blocks now; on_finished(kAbort) follows
  timeline_.finish(timeline::FinishReason::kAbort, Clock::now());
}

void CompletionCall::apply_batch(std::string* sse) {
  const auto& events = batch_.events;
  for (std::size_t i = 0; i < events.size(); ++i) apply(events[i], i + 1 < events.size() ? &events[i + 1] : nullptr, sse);
}

// apply turns one engine event into timeline marks and, when `sse` is given, SSE text.
void CompletionCall::apply(const EngineEvent& event, const EngineEvent* next, std::string* sse) {
  switch (event.kind) {
    case EngineEvent::Kind::kScheduled:
      timeline_.mark(timeline::Moment::kScheduled, event.when);  // kept from the prefill worker when disaggregated
      if (route_decision_) timeline_.mark(timeline::Moment::kDecodeScheduled, event.when);
      return;
    case EngineEvent::Kind::kPrefillDone:
    case EngineEvent::Kind::kPreempted:
      return;  // prefill ends at the first token; preemptions are counted from engine stats
    case EngineEvent::Kind::kTokens:
      break;
    case EngineEvent::Kind::kFinished: {
      finished_ = true;
      finish_reason_ = event.reason;
      if (sse != nullptr) {
        if (event.reason == FinishReason::kStop || event.reason == FinishReason::kLength) {
          if (!finish_sent_) formatter_->append_finish_chunk(to_string(event.reason), *sse);
          if (request_.include_usage) {
            formatter_->append_usage_chunk(Usage{timeline_.prompt_tokens(), completion_tokens_}, *sse);
          }
        } else {
          ResponseFormatter::append_error_event("cannot finish generation: the engine ended the sequence (" +
                                                    std::string(to_string(event.reason)) + ")",
                                                *sse);
        }
        ResponseFormatter::append_done(*sse);
      }
      timeline_.mark(timeline::Moment::kPostprocessed, Clock::now());
      return;
    }
  }
  if (sse != nullptr && !role_sent_) {
    formatter_->append_role_chunk(*sse);
    role_sent_ = true;
    if (endpoint_ == Endpoint::kChat) timeline_.add_output(event.when, 0);
  }
  // The engine delivers the last tokens and the finish together (one batch), so `next` tells.
  const bool ends_here = sse != nullptr && state_.options.stream_shape == StreamShape::kVllm && next != nullptr &&
                         next->kind == EngineEvent::Kind::kFinished &&
                         (next->reason == FinishReason::kStop || next->reason == FinishReason::kLength);
  // One engine event is one chunk, however many tokens it carries (a speculative step's accepted
  // drafts and its own token), as vLLM streams one delta per engine step: a client's gap between
  // chunks is then per step, not per token (the ITL vs TPOT confusion under speculation).
  std::string piece;
  for (std::uint32_t i = 0; i < event.token_count; ++i) piece += state_.text.token_text(batch_.tokens[event.token_begin + i]);
  if (event.token_count > 0) {
    if (sse != nullptr && ends_here) {
      formatter_->append_last_content_chunk(piece, to_string(next->reason), *sse);
      finish_sent_ = true;
    } else if (sse != nullptr) {
      formatter_->append_content_chunk(piece, *sse);
    } else {
      text_ += piece;
    }
  }
  completion_tokens_ += event.token_count;
  if (event.token_count > 0) timeline_.add_output(event.when, event.token_count);
}

asio::awaitable<bool> CompletionCall::serve_stream() {
  bool ok = co_await connection_.write_stream_head(http_request_);
  if (ok) connection_.watch_peer(&signal_);
  std::string out;
  while (ok && !finished_) {
    ok = co_await next_batch();
    if (!ok) break;
    out.clear();
    apply_batch(&out);
    ok = co_await connection_.write_stream_data(out);
  }
  if (ok) ok = co_await connection_.write_stream_end();
  co_await connection_.stop_watching_peer(signal_);
  if (!ok) {
    abort_sequence();  // no-op when the engine had already finished it
  } else {
    const auto sent = Clock::now();
    timeline_.mark(timeline::Moment::kSent, sent);
    timeline_.finish(finish_reason_, sent);
  }
  record(200);
  co_return ok;
}

asio::awaitable<bool> CompletionCall::serve_whole() {
  connection_.watch_peer(&signal_);
  bool ok = true;
  while (ok && !finished_) {
    ok = co_await next_batch();
    if (ok) {
      apply_batch(nullptr);
    }
  }
  co_await connection_.stop_watching_peer(signal_);
  if (!ok) {
    abort_sequence();
    record(0);
    co_return false;
  }
  if (finish_reason_ != FinishReason::kStop && finish_reason_ != FinishReason::kLength) {
    co_return co_await reject(net::ApiError::server_error("cannot finish generation: the engine ended the sequence (" +
                                                     std::string(to_string(finish_reason_)) + ")"));
  }
  net::HttpResponse response{boost::beast::http::status::ok, http_request_.version()};
  response.set(boost::beast::http::field::content_type, "application/json");
  response.body() = formatter_->full_body(text_, to_string(finish_reason_),
                                          Usage{timeline_.prompt_tokens(), completion_tokens_});
  timeline_.mark(timeline::Moment::kPostprocessed, Clock::now());
  ok = co_await connection_.send(response);
  const auto sent = Clock::now();
  if (ok) {
    timeline_.mark(timeline::Moment::kSent, sent);
    timeline_.finish(finish_reason_, sent);
  } else {
    timeline_.finish(timeline::FinishReason::kAbort, sent);
  }
  record(ok ? 200 : 0);
  co_return ok;
}

}  // namespace inferscope::serve
