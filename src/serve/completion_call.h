// File: completion_call.h
// CompletionCall is the state of one generation request while it is served (internal to
// completion_handler.cpp and completion_stream.cpp; split only to keep files small).
// Example: CompletionCall call(connection, state, request, Endpoint::kChat); co_return co_await call.run();
// Not thread-safe: lives in one coroutine on the connection's executor.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <inferscope/timeline/request_timeline.h>

#include "net/api_error.h"
#include "net/async_signal.h"
#include "net/connection.h"
#include "serve/engine/engine_types.h"
#include "serve/disagg_fleet.h"
#include "serve/engine/faults.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"
#include "serve/request_channel.h"
#include "trace/request_spans.h"

namespace inferscope::serve {

struct ServerState;

class CompletionCall {
 public:
  CompletionCall(net::Connection& connection, ServerState& state, const net::HttpRequest& request, Endpoint endpoint);
  ~CompletionCall();
  // run serves the request to its end and records it; returns whether keep-alive may go on.
  boost::asio::awaitable<bool> run();

 private:
  std::optional<net::ApiError> prepare();
  boost::asio::awaitable<void> inject_http_faults();
  std::optional<net::ApiError> submit();
  void open_channel();
  // disaggregated (completion_disagg.cpp): route, prefill on a prefill worker, KV transfer, then
  // submit to the decode worker with the KV present; an error before the decode submit.
  boost::asio::awaitable<std::optional<net::ApiError>> serve_disaggregated_front();
  boost::asio::awaitable<std::optional<net::ApiError>> run_prefill();
  boost::asio::awaitable<void> transfer_kv();
  boost::asio::awaitable<bool> reject(const net::ApiError& error);
  boost::asio::awaitable<bool> serve_stream();
  boost::asio::awaitable<bool> serve_whole();
  boost::asio::awaitable<bool> next_batch();
  // apply turns one engine event into timeline marks and SSE text; `next` (the batch's following
  // event or null) lets the vLLM stream shape put finish_reason on the last content chunk.
  void apply(const EngineEvent& event, const EngineEvent* next, std::string* sse);
  void apply_batch(std::string* sse);
  void abort_sequence();
  void record(int http_status);
  std::string_view route() const;

  net::Connection& connection_;
  ServerState& state_;
  const net::HttpRequest& http_request_;
  Endpoint endpoint_;
  timeline::RequestTimeline timeline_;
  std::optional<trace::RequestTrace> trace_;  // set when serve exports traces
  net::AsyncSignal signal_;
  CompletionRequest request_;
  std::string_view model_;  // the served name answering this request (never the raw request)
  GenerationRequest generation_;
  FaultSet faults_;
  std::shared_ptr<RequestChannel> channel_;
  std::optional<ResponseFormatter> formatter_;
  EventBatch batch_;
  std::string text_;  // non-streaming: the whole output
  SequenceId sequence_ = 0;
  std::uint32_t engine_rank_ = 0;  // the data-parallel rank running sequence_
  // Disaggregated: the router's choice, the prefill worker's sequence while it runs.
  std::optional<RouteDecision> route_decision_;
  std::shared_ptr<RequestChannel> prefill_channel_;
  SequenceId prefill_sequence_ = 0;
  bool prefill_live_ = false;
  bool fleet_counted_ = false;  // counted in dynamo_frontend_active_requests
  bool submitted_ = false;
  bool finished_ = false;  // engine sent on_finished, or we aborted
  bool role_sent_ = false;
  bool finish_sent_ = false;  // vLLM shape: finish_reason already went out on the last content chunk
  bool recorded_ = false;
  FinishReason finish_reason_ = FinishReason::kStop;
  std::uint32_t completion_tokens_ = 0;
};

}  // namespace inferscope::serve
