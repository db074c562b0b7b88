// File: proxy_call.cpp
// One ProxyCall per proxied request. The client's peer watch runs for the whole call: a client
// that leaves while queued abandons its place, and one that leaves later cancels the upstream
// connection at once through the connection's peer-closed hook (before or after the first byte,
// streaming or not). Every response to the client is written as it arrives (chunked), one write
// per upstream read whatever number of events it holds, with X-Accel-Buffering: no so that an
// nginx in front does not hold it back; a whole body's head waits for its first bytes, and the
// last bytes carry the terminating chunk, so a body read at once costs one write.
#include "gateway/proxy_call.h"

#include <boost/asio/this_coro.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <inferscope/timeline/timeline_summary.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

#include "gateway/client_request.h"
#include "gateway/gateway_trace.h"
#include "gateway/sse_relay.h"
#include "gateway/models_route.h"
#include "gateway/upstream_exchange.h"

namespace inferscope::gateway {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;
using timeline::Moment;

namespace {

constexpr std::size_t kMaxWholeCopy = 8u << 20;  // non-streamed bodies kept for usage parsing

bool is_hop_by_hop(http::field f) {
  return f == http::field::connection || f == http::field::keep_alive || f == http::field::transfer_encoding ||
         f == http::field::content_length || f == http::field::te || f == http::field::trailer ||
         f == http::field::upgrade || f == http::field::proxy_authorization || f == http::field::proxy_connection;
}

net::ApiError upstream_error(ErrorKind kind, const std::string& upstream) {
  net::ApiError e;
  e.type = "server_error";
  e.code = "upstream_" + std::string(to_string(kind));
  const std::string who = "upstream '" + upstream + "'";
  switch (kind) {
    case ErrorKind::kConnectRefused: e.status = 502; e.message = "cannot connect to " + who + ": connection refused"; break;
    case ErrorKind::kConnectTimeout: e.status = 504; e.message = "cannot connect to " + who + ": connect timed out"; break;
    case ErrorKind::kTls: e.status = 502; e.message = "cannot connect to " + who + ": TLS handshake or certificate verification failed"; break;
    case ErrorKind::kReset: e.status = 502; e.message = "cannot read response from " + who + ": connection reset before the response"; break;
    case ErrorKind::kHeaderTimeout: e.status = 504; e.message = "cannot read response from " + who + ": no response head in time"; break;
    case ErrorKind::kIdleTimeout: e.status = 504; e.message = "cannot read response from " + who + ": it went silent mid-response"; break;
    case ErrorKind::kMalformedStream: e.status = 502; e.message = "cannot relay response from " + who + ": malformed event stream"; break;
    case ErrorKind::kTruncatedStream: e.status = 502; e.message = "cannot relay response from " + who + ": the response ended early"; break;
    default: e.status = 502; e.message = "cannot relay response from " + who; break;
  }
  e.code = "upstream_" + std::string(to_string(kind));
  return e;
}

ErrorKind to_error_kind(net::ClientError e, bool in_body) {
  switch (e) {
    case net::ClientError::kRefused: return ErrorKind::kConnectRefused;
    case net::ClientError::kConnectTimeout: return ErrorKind::kConnectTimeout;
    case net::ClientError::kTls: return ErrorKind::kTls;
    case net::ClientError::kHeaderTimeout: return ErrorKind::kHeaderTimeout;
    case net::ClientError::kIdleTimeout: return ErrorKind::kIdleTimeout;
    case net::ClientError::kTruncated: return ErrorKind::kTruncatedStream;
    case net::ClientError::kProtocol: return in_body ? ErrorKind::kMalformedStream : ErrorKind::kReset;
    default: return ErrorKind::kReset;
  }
}

// forward_trace_context sets the upstream's `traceparent`: the request's CLIENT span when the
// gateway traces it; else a valid incoming one unchanged (a non-recording proxy). An invalid one
// is never passed on, nor a `tracestate` without a valid `traceparent` (W3C Trace Context).
void forward_trace_context(net::ClientRequest& upstream, const net::HttpRequest& client,
                           const std::optional<GatewayTrace>& trace) {
  if (trace) {
    upstream.set("traceparent", trace->upstream_traceparent());
    if (!trace->continued()) upstream.erase("tracestate");
    return;
  }
  const auto incoming = client.find("traceparent");
  if (incoming == client.end()) {
    upstream.erase("tracestate");
  } else if (!trace::parse_traceparent(net::to_std(incoming->value()))) {
    upstream.erase("traceparent");
    upstream.erase("tracestate");
  }
}

timeline::FinishReason to_finish(std::string_view reason) {
  return reason == "length" ? timeline::FinishReason::kLength : timeline::FinishReason::kStop;
}

class ProxyCall {
 public:
  ProxyCall(GatewayState& state, net::Connection& c, bool measured)
      : state_(state), c_(c), request_(c.request()), measured_(measured),
        timeline_(Clock::now(), timeline::Role::kGateway), signal_(c.executor()) {
    std::string_view target = net::to_std(request_.target());
    route_ = target.substr(0, target.find('?'));
    if (measured_) {
      state_.metrics->begin(timeline_);
      if (state_.tracer) trace_ = GatewayTrace::begin(state_.config.tracing, net::to_std(request_["traceparent"]));
    }
  }
  ~ProxyCall() { record(0); }

  asio::awaitable<bool> run();

 private:
  asio::awaitable<bool> reject(const net::ApiError& error, ErrorKind kind);
  asio::awaitable<bool> fail_before_head(ErrorKind kind);
  asio::awaitable<bool> relay();
  asio::awaitable<bool> finish_stream(std::optional<ErrorKind> failure);
  void count_error(ErrorKind kind) {
    if (upstream_ != nullptr) {
      upstream_->gauges().errors[static_cast<std::size_t>(kind)].inc();
    } else {
      state_.metrics->gateway_error(kind);
    }
  }
  void health(bool ok) {
    if (upstream_ == nullptr) return;
    if (ok) {
      upstream_->record_success();
    } else {
      upstream_->record_failure(state_.config.health_failures, state_.config.health_backoff);
    }
  }
  void record(int status) {
    if (recorded_ || !measured_) return;
    recorded_ = true;
    timeline_.finish(timeline::FinishReason::kAbort, Clock::now());  // no-op when already finished
    // The spans go first (the tail rules are decided here): only a request whose spans the
    // exporter took gets exemplars, so every trace id on /metrics names a trace that was sent.
    timeline::RequestLabels labels{.model = info_.model, .route = route_, .http_status = status};
    trace::TraceIdHex trace_hex;
    if (trace_) {
      const bool failed = trace::is_failed_request(timeline_, status) || !upstream_error_.empty();
      const double e2e = timeline::seconds_between(*timeline_.moment(Moment::kArrival), timeline_.end());
      if (state_.config.tracing.policy.keep(trace_->request(), failed, e2e) && export_spans(status)) {
        trace_hex = trace::trace_id_hex(trace_->request().trace_id);
        labels.trace_id = trace_hex.view();
        labels.exemplar_time = trace::wall_time(timeline_.end());
      }
    }
    state_.metrics->record(timeline_, labels);
  }
  // export_spans hands the request's spans to the exporter: true when it took them.
  bool export_spans(int status);
  // upstream_done notes the end of the upstream call and, unless it succeeded, why.
  void upstream_done(std::string error_type) {
    upstream_end_ = Clock::now();
    upstream_error_ = std::move(error_type);
  }
  asio::awaitable<void> end_watch() {
    c_.set_peer_closed_hook(nullptr);
    co_await c_.stop_watching_peer(signal_);
  }

  GatewayState& state_;
  net::Connection& c_;
  net::HttpRequest& request_;
  bool measured_;
  timeline::RequestTimeline timeline_;
  net::AsyncSignal signal_;
  std::string_view route_;
  ClientRequestInfo info_;
  Upstream* upstream_ = nullptr;
  bool admitted_ = false;
  bool recorded_ = false;
  UpstreamExchange exchange_;
  int status_ = 0;
  std::string reason_;  // the upstream's last finish_reason
  bool ended_ = false;  // the response's terminating chunk went out with its last data
  std::optional<GatewayTrace> trace_;  // set when tracing is on (measured routes only)
  std::optional<Clock::time_point> upstream_end_;
  std::string upstream_error_;         // error.type of the upstream call; empty: it went well
  std::optional<EngineTimings> engine_timings_;  // llama.cpp's timings, and when they were read
  Clock::time_point engine_timings_read_{};
};

bool ProxyCall::export_spans(int status) {
  trace::RequestFacts facts;
  facts.operation = route_ == "/v1/chat/completions" ? "chat" : "text_completion";
  facts.provider = "inferscope";
  // The requested model goes into spans when it is a configured name or the upstream served it;
  // any other client text stays out.
  constexpr std::size_t kMaxModelBytes = 256;
  if (info_.model.size() <= kMaxModelBytes &&
      (state_.config.models.count(info_.model) > 0 || (status_ >= 200 && status_ < 300))) {
    facts.request_model = info_.model;
  }
  facts.route = route_;
  facts.http_status = status;
  UpstreamCallFacts call;
  if (upstream_ != nullptr) {
    const UpstreamConfig& u = upstream_->config();
    call.upstream = u.name;
    call.server_address = u.target.host;
    call.server_port = u.target.port;
  }
  call.start = timeline_.moment(Moment::kUpstreamConnectStart);
  call.end = upstream_end_.value_or(timeline_.end());
  call.http_status = status_;
  call.error_type = upstream_error_;
  call.timings = engine_timings_;
  call.timings_read = engine_timings_read_;
  trace::SpanWriter writer(trace::thread_span_buffer());
  write_gateway_spans(writer, *trace_, timeline_, facts, call);
  return state_.tracer->submit_encoded(writer.bytes(), writer.spans());
}

asio::awaitable<bool> ProxyCall::reject(const net::ApiError& error, ErrorKind kind) {
  co_await end_watch();
  count_error(kind);
  const bool keep = co_await c_.send_error(error, request_);
  timeline_.finish(timeline::FinishReason::kError, Clock::now());
  record(keep ? error.status : 0);
  co_return keep;
}

asio::awaitable<bool> ProxyCall::run() {
  if (measured_) {
    info_ = inspect_client_request(request_.body());
    if (info_.error) {
      const net::ApiError e = net::ApiError::bad_request(*info_.error, info_.error_param);
      co_return co_await reject(e, ErrorKind::kBadRequest);
    }
  }
  upstream_ = state_.pool->choose(info_.model);
  c_.watch_peer(&signal_);
  if (measured_) {
    std::function<bool()> gone = [this] { return c_.peer_closed(); };
    const Clock::time_point deadline = Clock::now() + state_.config.queue_timeout;
    const AdmitResult admit = co_await state_.pool->admit(*upstream_, signal_, deadline, gone);
    if (admit == AdmitResult::kQueueFull) {
      const net::ApiError e = net::ApiError::too_many_requests(
          "cannot queue request for upstream '" + upstream_->config().name + "': its waiting queue is full", 1);
      co_return co_await reject(e, ErrorKind::kQueueFull);
    }
    if (admit == AdmitResult::kTimeout) {
      const net::ApiError e = net::ApiError::overloaded(
          "cannot serve request: it waited in the gateway queue for upstream '" + upstream_->config().name +
              "' longer than the queue timeout",
          1);
      co_return co_await reject(e, ErrorKind::kQueueTimeout);
    }
    if (admit == AdmitResult::kCancelled) {
      co_await end_watch();
      count_error(ErrorKind::kClientDisconnect);
      record(0);
      co_return false;
    }
    admitted_ = true;
    timeline_.mark(Moment::kAdmitted, Clock::now());
    if (info_.needs_usage()) request_.body() = with_include_usage(request_.body());
    timeline_.mark(Moment::kPreprocessed, Clock::now());
  }
  struct Release {
    ProxyCall* call;
    ~Release() {
      if (call->admitted_) call->upstream_->release();
    }
  } release{this};
  c_.set_peer_closed_hook([this] { exchange_.cancel(); });
  // The client's own key goes upstream only when the gateway does not check keys itself.
  net::ClientRequest upstream_request = make_upstream_request(*upstream_, request_, state_.client_keys.empty());
  forward_trace_context(upstream_request, request_, trace_);
  const net::ClientError error = co_await exchange_.start(*upstream_, upstream_request, state_.config, &timeline_);
  if (c_.peer_closed()) {
    co_await end_watch();
    count_error(ErrorKind::kClientDisconnect);
    record(0);
    co_return false;
  }
  if (error != net::ClientError::kNone) co_return co_await fail_before_head(to_error_kind(error, false));
  co_return co_await relay();
}

asio::awaitable<bool> ProxyCall::fail_before_head(ErrorKind kind) {
  upstream_done(std::string(to_string(kind)));
  health(false);
  co_return co_await reject(upstream_error(kind, upstream_->config().name), kind);
}

asio::awaitable<bool> ProxyCall::relay() {
  const auto& head = exchange_.head();
  status_ = static_cast<int>(head.result_int());
  const std::string_view content_type = net::to_std(head[http::field::content_type]);
  const bool sse = content_type.starts_with("text/event-stream");
  if (status_ >= 500) {
    count_error(ErrorKind::kUpstream5xx);
    health(false);
  } else {
    health(true);
    if (status_ >= 400) count_error(ErrorKind::kUpstream4xx);
  }
  net::StreamHead out_head;
  out_head.status = status_;
  out_head.content_type = content_type.empty() ? "application/octet-stream" : std::string(content_type);
  for (const auto& field : head) {
    if (is_hop_by_hop(field.name()) || field.name() == http::field::content_type ||
        field.name() == http::field::server || field.name() == http::field::date ||
        field.name() == http::field::cache_control) {
      continue;
    }
    out_head.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  out_head.headers.emplace_back("X-Accel-Buffering", "no");
  if (sse) {
    if (!co_await c_.write_stream_head(request_, out_head)) {
      exchange_.cancel();
      co_return co_await finish_stream(ErrorKind::kClientDisconnect);
    }
  } else {
    // A whole body follows its head at once (and its client waits for all of it): the head goes
    // out with the first body bytes, a body read in one piece with its end too: one write.
    c_.hold_stream_head(request_, out_head);
  }
  SseRelay sse_relay(measured_ && info_.needs_usage());
  const auto cut_short = [&] {  // well-framed HTTP, but the event stream stopped short
    return sse && measured_ && status_ < 300 && (!sse_relay.done_seen() || sse_relay.pending_bytes() > 0) &&
           !sse_relay.error_event_seen();
  };
  std::string_view in;   // a read, in the upstream connection's buffer until the next one
  std::string scratch;  // what the relay forwards when it cannot be `in` itself
  std::string whole;              // a non-streamed body that came in several reads
  std::string_view whole_in_place;  // ... or the one read that held all of it
  std::optional<ErrorKind> failure;
  while (!exchange_.done()) {
    const net::ClientError error = co_await exchange_.read_some(in, state_.config.idle_timeout);
    const auto now = Clock::now();
    std::string_view forward = in;
    if (sse && measured_ && status_ < 300) {
      forward = sse_relay.feed(in, now, scratch);
    } else if (measured_ && whole.empty() && exchange_.done()) {
      whole_in_place = in;  // the loop ends here and the connection is kept only after it is read
    } else if (measured_ && whole.size() + in.size() <= kMaxWholeCopy) {
      whole.append(in);
    }
    if (exchange_.done() && error == net::ClientError::kNone && !sse_relay.malformed() && !c_.peer_closed() &&
        !cut_short()) {
      // The body is complete and nothing is wrong: its last bytes and the end in one write.
      ended_ = co_await c_.write_stream_last(forward);
      if (!ended_) failure = ErrorKind::kClientDisconnect;
      break;
    }
    if (!forward.empty() && !co_await c_.write_stream_data(forward)) {
      failure = ErrorKind::kClientDisconnect;
      break;
    }
    if (sse_relay.malformed()) {
      failure = ErrorKind::kMalformedStream;
      break;
    }
    if (error != net::ClientError::kNone) {
      failure = c_.peer_closed() || error == net::ClientError::kCancelled ? ErrorKind::kClientDisconnect
                                                                           : to_error_kind(error, true);
      break;
    }
  }
  if (c_.peer_closed()) failure = ErrorKind::kClientDisconnect;
  if (!failure && cut_short()) failure = ErrorKind::kTruncatedStream;
  if (failure && failure != ErrorKind::kClientDisconnect) {
    upstream_done(std::string(to_string(*failure)));
  } else {
    upstream_done(status_ >= 500 ? std::to_string(status_) : std::string());
  }
  if (failure) exchange_.cancel();
  // Timeline: content events as they passed, then the upstream's own token counts when given.
  if (measured_ && sse) {
    for (const auto t : sse_relay.content_times()) timeline_.add_output(t, 1);
    if (sse_relay.prompt_tokens()) timeline_.set_prompt_tokens(*sse_relay.prompt_tokens());
    if (sse_relay.completion_tokens()) {
      timeline_.set_output_tokens(*sse_relay.completion_tokens());
    } else if (sse_relay.content_events() > 0) {
      state_.metrics->usage_estimated();
    }
    if (!failure && sse_relay.error_event_seen()) timeline_.finish(timeline::FinishReason::kError, Clock::now());
    reason_ = sse_relay.finish_reason();
    engine_timings_ = sse_relay.engine_timings();
    engine_timings_read_ = sse_relay.engine_timings_read();
  } else if (measured_ && status_ < 300) {
    const WholeResponse r = read_whole_response(whole.empty() ? whole_in_place : std::string_view(whole));
    const std::uint32_t tokens = r.completion_tokens.value_or(r.has_content ? 1 : 0);
    if (tokens > 0) timeline_.add_output(Clock::now(), tokens);
    if (r.prompt_tokens) timeline_.set_prompt_tokens(*r.prompt_tokens);
    if (!r.completion_tokens && r.has_content) state_.metrics->usage_estimated();
    reason_ = r.finish_reason;
    engine_timings_ = r.engine_timings;
    engine_timings_read_ = *upstream_end_;
  }
  co_return co_await finish_stream(failure);
}

asio::awaitable<bool> ProxyCall::finish_stream(std::optional<ErrorKind> failure) {
  bool ok = true;
  if (failure == ErrorKind::kClientDisconnect) {
    ok = false;
  } else if (failure) {
    count_error(*failure);
    if (*failure != ErrorKind::kMalformedStream) health(false);
    // The client sees why the stream broke, then the end marker its SDK waits for.
    const net::ApiError e = upstream_error(*failure, upstream_->config().name);
    std::string tail = "data: " + net::api_error_body(e) + "\n\ndata: [DONE]\n\n";
    ok = co_await c_.write_stream_data(tail);
  }
  if (ok && !ended_) ok = co_await c_.write_stream_end();
  co_await end_watch();
  const auto end = Clock::now();
  if (failure == ErrorKind::kClientDisconnect || !ok) {
    count_error(ErrorKind::kClientDisconnect);
    timeline_.finish(timeline::FinishReason::kAbort, end);
    record(status_);
    co_return false;
  }
  timeline_.mark(Moment::kSent, end);
  timeline_.finish(failure || status_ >= 400 ? timeline::FinishReason::kError : to_finish(reason_), end);
  record(status_);
  if (exchange_.reusable()) exchange_.keep(*upstream_);
  co_return true;
}

}  // namespace

asio::awaitable<bool> handle_gateway_request(GatewayState& state, net::Connection& c) {
  net::HttpRequest& request = c.request();
  const std::string_view target = net::to_std(request.target());
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/health") {
    net::HttpResponse ok{http::status::ok, request.version()};
    ok.set(http::field::content_type, "text/plain");
    ok.body() = "ok\n";
    co_return co_await c.send(ok);
  }
  if (!state.client_keys.empty()) {
    const std::string_view auth = net::to_std(request[http::field::authorization]);
    bool allowed = false;
    for (const std::string& key : state.client_keys) allowed = allowed || auth == "Bearer " + key;
    if (!allowed) {
      state.metrics->gateway_error(ErrorKind::kUnauthorized);
      net::ApiError e = net::ApiError::bad_request("cannot authorize request: missing or unknown bearer key");
      e.status = 401;
      e.code = "invalid_api_key";
      co_return co_await c.send_error(e, request);
    }
  }
  if (path == "/v1/chat/completions" || path == "/v1/completions") {
    if (request.method() != http::verb::post) {
      const net::ApiError e = net::ApiError::method_not_allowed("cannot serve this method on " + std::string(path) + ": use POST");
      co_return co_await c.send_error(e, request, "POST");
    }
    ProxyCall call(state, c, true);
    co_return co_await call.run();
  }
  if (path == "/v1/models" && request.method() == http::verb::get) {
    co_return co_await serve_merged_models(state, c);
  }
  if (path.starts_with("/v1/")) {
    ProxyCall call(state, c, false);
    co_return co_await call.run();
  }
  const net::ApiError e = net::ApiError::not_found("cannot find route " + std::string(path));
  co_return co_await c.send_error(e, request);
}

}  // namespace inferscope::gateway
