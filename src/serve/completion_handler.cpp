// File: completion_handler.cpp
// The front half of a generation request: validate, preprocess, HTTP-layer faults, submit.
// completion_stream.cpp holds the back half (waiting on engine events and writing).
#include "serve/completion_handler.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/redirect_error.hpp>

#include <chrono>
#include <random>

#include "serve/chat_template.h"
#include "serve/completion_call.h"
#include "serve/engine/engine.h"
#include "serve/engine/text_generator.h"
#include "serve/request_recording.h"
#include "serve/server_state.h"

namespace inferscope::serve {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

asio::awaitable<void> sleep_real_ms(net::Connection& c, double ms) {
  if (ms <= 0) co_return;
  asio::steady_timer timer(c.executor(), std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000)));
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

std::mt19937_64& fault_rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

net::ApiError context_error(std::size_t limit, std::size_t prompt, std::size_t output) {
  net::ApiError e = net::ApiError::bad_request(
      "This model's maximum context length is " + std::to_string(limit) + " tokens. However, you requested " +
          std::to_string(prompt + output) + " tokens (" + std::to_string(prompt) + " in the messages, " +
          std::to_string(output) + " in the completion). Please reduce the length of the messages or completion.",
      "messages");
  e.code = "context_length_exceeded";
  return e;
}

}  // namespace

asio::awaitable<bool> handle_completion(net::Connection& connection, ServerState& state,
                                        const net::HttpRequest& request, Endpoint endpoint) {
  CompletionCall call(connection, state, request, endpoint);
  co_return co_await call.run();
}

CompletionCall::CompletionCall(net::Connection& connection, ServerState& state, const net::HttpRequest& request,
                               Endpoint endpoint)
    : connection_(connection),
      state_(state),
      http_request_(request),
      endpoint_(endpoint),
      timeline_(Clock::now()),
      signal_(connection.executor()) {
  begin_request(state_, timeline_);
  const auto traceparent = request["traceparent"];
  trace_ = begin_request_trace(state_, std::string_view(traceparent.data(), traceparent.size()));
}

CompletionCall::~CompletionCall() {
  if (channel_) channel_->attach(nullptr);  // a late wake-up must not touch our dead signal
  if (prefill_channel_) prefill_channel_->attach(nullptr);
  if (prefill_live_) state_.engines[route_decision_->prefill]->abort(prefill_sequence_);
  if (submitted_ && !finished_) abort_sequence();
  record(0);  // a coroutine cut short (server stop) still ends its in-flight count
}

std::string_view CompletionCall::route() const {
  return endpoint_ == Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions";
}

asio::awaitable<bool> CompletionCall::run() {
  if (auto error = prepare()) co_return co_await reject(*error);
  faults_ = state_.faults();
  connection_.set_write_delay(std::chrono::microseconds(
      static_cast<std::int64_t>(state_.real_ms(faults_.network_delay_ms) * 1000)));
  co_await inject_http_faults();
  if (faults_.error_rate > 0 && std::uniform_real_distribution<double>(0, 1)(fault_rng()) < faults_.error_rate) {
    co_return co_await reject(net::ApiError::server_error("simulated internal error (fault error_rate)"));
  }
  if (state_.disagg) {
    if (auto error = co_await serve_disaggregated_front()) co_return co_await reject(*error);
  } else if (auto error = submit()) {
    co_return co_await reject(*error);
  }
  if (request_.stream) co_return co_await serve_stream();
  co_return co_await serve_whole();
}

// prepare parses, picks the served model, applies the chat template and tokenizes (the natural
// part of stage preprocess), then checks the context length.
std::optional<net::ApiError> CompletionCall::prepare() {
  if (auto error = parse_completion_request(endpoint_, http_request_.body(), request_)) return error;
  model_ = state_.served_model(request_.model);
  if (model_.empty()) return net::ApiError::model_not_found(request_.model);
  if (!request_.prompt_token_ids.empty()) {
    generation_.prompt_tokens = std::move(request_.prompt_token_ids);
  } else if (endpoint_ == Endpoint::kChat) {
    generation_.prompt_tokens = state_.tokenizer.encode(apply_chat_template(request_.messages));
  } else {
    generation_.prompt_tokens = state_.tokenizer.encode(request_.prompt);
  }
  const std::size_t prompt = generation_.prompt_tokens.size();
  const std::size_t limit = state_.options.engine.max_model_len;
  if (prompt >= limit) return context_error(limit, prompt, request_.max_tokens.value_or(0));
  const std::size_t max_tokens = request_.max_tokens.value_or(limit - prompt);
  if (prompt + max_tokens > limit) return context_error(limit, prompt, max_tokens);
  if (request_.min_tokens > max_tokens) {
    return net::ApiError::bad_request("cannot serve request: 'min_tokens' must not exceed 'max_tokens'", "min_tokens");
  }
  generation_.max_tokens = static_cast<std::uint32_t>(max_tokens);
  generation_.ignore_eos = request_.ignore_eos;
  generation_.seed = request_.seed.value_or(state_.next_seed());
  generation_.lora = state_.lora_of(model_);
  // The engine has no min_tokens: when the natural (EOS) length falls short, ignore EOS up to it.
  if (!generation_.ignore_eos && request_.min_tokens > natural_output_length(generation_.seed)) {
    generation_.ignore_eos = true;
    generation_.max_tokens = request_.min_tokens;
  }
  timeline_.set_prompt_tokens(static_cast<std::uint32_t>(prompt));
  return std::nullopt;
}

// inject_http_faults stretches preprocess (preprocess_slowdown), marks it done, then makes the
// dependency calls. Fault times are model milliseconds, divided by --time-scale like engine costs.
asio::awaitable<void> CompletionCall::inject_http_faults() {
  if (faults_.preprocess_slowdown.active()) {
    const double natural_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - *timeline_.moment(timeline::Moment::kArrival)).count();
    co_await sleep_real_ms(connection_, natural_ms * (faults_.preprocess_slowdown.factor - 1) +
                                            state_.real_ms(faults_.preprocess_slowdown.add_ms));
  }
  timeline_.mark(timeline::Moment::kPreprocessed, Clock::now());
  for (const DependencyFault& dependency : faults_.dependencies) {
    const auto start = Clock::now();
    co_await sleep_real_ms(connection_, state_.real_ms(dependency.sample_ms(fault_rng())));
    timeline_.add_dependency(dependency.name, start, Clock::now());
  }
}

void CompletionCall::open_channel() {
  formatter_.emplace(endpoint_, make_response_id(endpoint_),
                     std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count(),
                     model_);
  channel_ = std::make_shared<RequestChannel>(connection_.executor());
  channel_->attach(&signal_);
  timeline_.reserve_outputs(std::min<std::size_t>(generation_.max_tokens, 4096));
}

std::optional<net::ApiError> CompletionCall::submit() {
  open_channel();
  timeline_.mark(timeline::Moment::kEnqueued, Clock::now());
  engine_rank_ = state_.pick_engine();
  Engine& engine = *state_.engines[engine_rank_];
  auto id = engine.submit(std::move(generation_), channel_);
  if (!id) {
    channel_->attach(nullptr);
    if (engine.load().first >= state_.options.engine.max_waiting) {
      return net::ApiError::overloaded("cannot queue request: the waiting queue is full (" +
                                      std::to_string(state_.options.engine.max_waiting) + " requests)", 1);
    }
    return net::ApiError::bad_request(id.error().message, "messages");
  }
  sequence_ = *id;
  submitted_ = true;
  return std::nullopt;
}

asio::awaitable<bool> CompletionCall::reject(const net::ApiError& error) {
  const bool keep = co_await connection_.send_error(error, http_request_);
  timeline_.finish(timeline::FinishReason::kError, Clock::now());
  record(keep ? error.status : 0);
  co_return keep;
}

void CompletionCall::record(int http_status) {
  if (recorded_) return;
  recorded_ = true;
  RequestOutcome outcome;
  outcome.model = model_;
  outcome.route = route();
  outcome.http_status = http_status;
  outcome.max_tokens = request_.max_tokens.value_or(0);
  outcome.engine = engine_rank_;
  outcome.stream = request_.stream;
  if (state_.disagg) {
    if (route_decision_) state_.disagg->release(*route_decision_);
    if (fleet_counted_) state_.disagg->end_request(model_);
  }
  record_request(state_, timeline_, outcome, trace_ ? &*trace_ : nullptr);
}

}  // namespace inferscope::serve
