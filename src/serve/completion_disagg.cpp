// The front half of a request in a disaggregated serve (docs/disaggregation.md): route, queue and
// prefill on a prefill worker, KV transfer over the simulated link, then the decode worker admits
// the sequence with its KV present; completion_stream.cpp streams its tokens as for any request.
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <random>

#include "serve/completion_call.h"
#include "serve/disagg_fleet.h"
#include "serve/engine/engine.h"
#include "serve/server_state.h"

namespace inferscope::serve {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

asio::awaitable<void> disagg_sleep_model_seconds(net::Connection& c, const ServerState& state, double model_seconds) {
  const double real_ms = state.real_ms(model_seconds * 1000.0);
  if (real_ms <= 0) co_return;
  asio::steady_timer timer(c.executor(), std::chrono::microseconds(static_cast<std::int64_t>(real_ms * 1000)));
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

std::mt19937_64& disagg_transfer_rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

net::ApiError disagg_submit_error(const ServerState& state, const Engine& engine, const Error& error) {
  if (engine.load().first >= state.options.engine.max_waiting) {
    return net::ApiError::overloaded("cannot queue request: the waiting queue is full (" +
                                         std::to_string(state.options.engine.max_waiting) + " requests)",
                                     1);
  }
  return net::ApiError::bad_request(error.message, "messages");
}

}  // namespace

asio::awaitable<std::optional<net::ApiError>> CompletionCall::serve_disaggregated_front() {
  DisaggFleet& fleet = *state_.disagg;
  open_channel();
  fleet.begin_request(model_);
  fleet_counted_ = true;
  timeline_.mark(timeline::Moment::kEnqueued, Clock::now());
  // route: the router's own work, then its choice (booked on the decode worker at once).
  fleet.begin_routing();
  co_await disagg_sleep_model_seconds(connection_, state_, fleet.options().route_overhead_ms / 1000.0);
  route_decision_ = fleet.route(generation_.prompt_tokens, faults_);
  fleet.end_routing();
  timeline_.mark(timeline::Moment::kRouted, Clock::now());
  if (auto error = co_await run_prefill()) co_return error;
  co_await transfer_kv();
  // decode: the decode worker admits the sequence with the prompt's KV present.
  engine_rank_ = fleet.options().prefill_workers + route_decision_->decode;
  Engine& engine = *state_.engines[engine_rank_];
  generation_.kv_present = true;
  auto id = engine.submit(std::move(generation_), channel_);
  if (!id) {
    channel_->attach(nullptr);
    co_return disagg_submit_error(state_, engine, id.error());
  }
  sequence_ = *id;
  submitted_ = true;
  co_return std::nullopt;
}

// run_prefill computes the prompt and its first token on the chosen prefill worker (max_tokens
// 1, as a P/D proxy asks of vLLM's prefill instance) and waits for it to finish there.
asio::awaitable<std::optional<net::ApiError>> CompletionCall::run_prefill() {
  Engine& engine = *state_.engines[route_decision_->prefill];
  GenerationRequest prefill;
  prefill.prompt_tokens = generation_.prompt_tokens;
  prefill.max_tokens = 1;
  prefill.ignore_eos = true;
  prefill.seed = generation_.seed;
  prefill.lora = generation_.lora;
  prefill_channel_ = std::make_shared<RequestChannel>(connection_.executor());
  prefill_channel_->attach(&signal_);
  auto id = engine.submit(std::move(prefill), prefill_channel_);
  if (!id) {
    prefill_channel_->attach(nullptr);
    state_.disagg->prefill_done(*route_decision_);
    co_return disagg_submit_error(state_, engine, id.error());
  }
  prefill_sequence_ = *id;
  prefill_live_ = true;
  EventBatch batch;
  std::optional<FinishReason> finished;
  bool prefilled = false;
  while (!finished) {
    if (!prefill_channel_->pending()) {
      co_await signal_.wait();
      continue;
    }
    prefill_channel_->take(batch);
    for (const EngineEvent& event : batch.events) {
      if (event.kind == EngineEvent::Kind::kScheduled) timeline_.mark(timeline::Moment::kScheduled, event.when);
      if (event.kind == EngineEvent::Kind::kPrefillDone && !prefilled) {
        prefilled = true;
        timeline_.mark(timeline::Moment::kPrefilled, event.when);
        state_.disagg->prefill_done(*route_decision_);
      }
      if (event.kind == EngineEvent::Kind::kFinished) finished = event.reason;
    }
  }
  prefill_live_ = false;
  prefill_channel_->attach(nullptr);
  if (!prefilled) state_.disagg->prefill_done(*route_decision_);
  if (*finished != FinishReason::kStop && *finished != FinishReason::kLength) {
    co_return net::ApiError::server_error("cannot prefill request: the prefill worker ended the sequence (" +
                                          std::string(to_string(*finished)) + ")");
  }
  co_return std::nullopt;
}

// transfer_kv moves the KV the decode worker lacks over the simulated link; a failed attempt
// (kv_transfer_failure) costs its whole time and is retried, both inside the kv_transfer stage.
asio::awaitable<void> CompletionCall::transfer_kv() {
  DisaggFleet& fleet = *state_.disagg;
  const auto start = Clock::now();
  constexpr int kDisaggMaxTransferAttempts = 16;
  for (int attempt = 1;; ++attempt) {
    co_await disagg_sleep_model_seconds(connection_, state_, fleet.transfer_seconds(*route_decision_, faults_));
    const bool failed = attempt < kDisaggMaxTransferAttempts && faults_.kv_transfer_failure > 0 &&
                        std::uniform_real_distribution<double>(0, 1)(disagg_transfer_rng()) < faults_.kv_transfer_failure;
    if (!failed) break;
    fleet.transfer_failed();
  }
  const auto done = Clock::now();
  timeline_.mark(timeline::Moment::kKvTransferred, done);
  fleet.transfer_done(*route_decision_, std::chrono::duration<double>(done - start).count());
}

}  // namespace inferscope::serve
