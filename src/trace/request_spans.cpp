// File: request_spans.cpp
// Attribute names: OpenTelemetry GenAI semantic conventions (gen_ai.operation.name,
// gen_ai.provider.name since v1.37, gen_ai.request/response.model, gen_ai.usage.input/output_tokens,
// gen_ai.response.finish_reasons), HTTP conventions (http.route, http.response.status_code,
// error.type) and vLLM's V1 do_tracing (gen_ai.latency.*, seconds): ../shared/reference/tracing.md.
#include "trace/request_spans.h"

#include <inferscope/timeline/timeline_summary.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace inferscope::trace {
namespace {

using timeline::FinishReason;
using timeline::Stage;

constexpr std::uint32_t kHasIsRemote = 0x100;
constexpr std::uint32_t kIsRemote = 0x200;
constexpr std::uint8_t kRandomFlag = 0x02;

std::int64_t offset_nanos() {
  static const std::int64_t offset = [] {
    const auto system = std::chrono::system_clock::now().time_since_epoch();
    const auto steady = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(system).count() -
           std::chrono::duration_cast<std::chrono::nanoseconds>(steady).count();
  }();
  return offset;
}

void add(std::vector<Attribute>& out, AttributeKey key, AttributeValue value) {
  out.push_back(Attribute{std::move(key), std::move(value)});
}

void add_seconds(std::vector<Attribute>& out, AttributeKey key, std::optional<double> seconds) {
  if (seconds) add(out, key, *seconds);
}

}  // namespace

RequestTrace RequestTrace::begin(const std::optional<TraceParent>& incoming, double ratio) {
  RequestTrace t;
  t.root_span_id = random_span_id();
  if (incoming) {
    t.trace_id = incoming->trace_id;
    t.remote_parent = incoming->parent_id;
    t.trace_flags = incoming->flags & kRandomFlag;
  } else {
    t.trace_id = random_trace_id();
    t.trace_flags = kRandomFlag;
  }
  t.head_sampled = trace::head_sampled(t.trace_id, incoming, ratio);
  if (t.head_sampled) t.trace_flags |= kSampledFlag;
  return t;
}

bool TracePolicy::keep(const RequestTrace& trace, bool failed, double e2e_seconds) const noexcept {
  return trace.head_sampled || failed || (slow_seconds && e2e_seconds >= *slow_seconds);
}

bool is_failed_request(const timeline::RequestTimeline& timeline, int http_status) noexcept {
  if (http_status >= 500) return true;
  return http_status == 0 && timeline.finished() && timeline.finish_reason() == FinishReason::kError;
}

std::uint64_t unix_nanos(timeline::TimePoint when) noexcept {
  const std::int64_t steady = std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, steady + offset_nanos()));
}

Span child_span(const RequestTrace& trace, const SpanId& parent, std::string_view name, SpanKind kind,
                timeline::TimePoint start, timeline::TimePoint end) {
  Span span;
  span.trace_id = trace.trace_id;
  span.span_id = random_span_id();
  span.parent_span_id = parent;
  span.name = std::string(name);
  span.kind = kind;
  span.start_unix_ns = unix_nanos(start);
  span.end_unix_ns = unix_nanos(std::max(start, end));
  span.flags = kSampledFlag | kHasIsRemote;  // an exported span was recorded, whatever the head said
  return span;
}

std::vector<Span> request_spans(const RequestTrace& trace, const timeline::RequestTimeline& t,
                                const RequestFacts& facts) {
  const timeline::TimelineSummary s = timeline::summarize(t);
  const timeline::StageIntervals intervals = timeline::stage_intervals(t);
  const bool failed = is_failed_request(t, facts.http_status);
  const std::uint32_t sampled = kSampledFlag;  // an exported span was recorded, whatever the head said

  std::vector<Span> spans;
  spans.reserve(1 + timeline::kStageCount + t.dependencies().size());
  Span& root = spans.emplace_back();
  root.trace_id = trace.trace_id;
  root.span_id = trace.root_span_id;
  if (trace.remote_parent) root.parent_span_id = *trace.remote_parent;
  root.name = facts.response_model.empty() && facts.request_model.empty()
                  ? std::string(facts.operation)
                  : std::string(facts.operation) + " " +
                        std::string(facts.request_model.empty() ? facts.response_model : facts.request_model);
  root.kind = SpanKind::kServer;
  root.start_unix_ns = unix_nanos(*t.moment(timeline::Moment::kArrival));
  root.end_unix_ns = std::max(root.start_unix_ns, unix_nanos(t.end()));
  root.flags = sampled | kHasIsRemote | (trace.remote_parent ? kIsRemote : 0);

  auto& a = root.attributes;
  a.reserve(24);
  add(a, "gen_ai.operation.name", std::string(facts.operation));
  add(a, "gen_ai.provider.name", std::string(facts.provider));
  if (!facts.request_model.empty()) add(a, "gen_ai.request.model", std::string(facts.request_model));
  if (!facts.response_model.empty()) add(a, "gen_ai.response.model", std::string(facts.response_model));
  if (facts.max_tokens > 0) add(a, "gen_ai.request.max_tokens", std::int64_t{facts.max_tokens});
  if (s.reason == FinishReason::kStop || s.reason == FinishReason::kLength) {
    add(a, "gen_ai.response.finish_reasons", StringList{std::string(timeline::to_string(s.reason))});
  }
  if (s.prompt_tokens > 0) add(a, "gen_ai.usage.input_tokens", std::int64_t{s.prompt_tokens});
  add(a, "gen_ai.usage.output_tokens", std::int64_t{s.output_tokens});
  // vLLM's names and meanings (its e2e ends at the last token, as vllm:e2e_request_latency_seconds).
  const auto complete = [&s](Stage stage) -> std::optional<double> {
    if (s.truncated_stage == stage) return std::nullopt;
    return s.stage_seconds[static_cast<std::size_t>(stage)];
  };
  add_seconds(a, "gen_ai.latency.time_to_first_token", s.ttft_seconds);
  add(a, "gen_ai.latency.e2e", s.generation_seconds.value_or(s.e2e_seconds));
  add_seconds(a, "gen_ai.latency.time_in_queue", complete(Stage::kQueue));
  add_seconds(a, "gen_ai.latency.time_in_model_prefill", complete(Stage::kPrefill));
  add_seconds(a, "gen_ai.latency.time_in_model_decode", complete(Stage::kDecode));
  add_seconds(a, "gen_ai.latency.time_in_model_inference", s.inference_seconds);
  if (!facts.route.empty()) add(a, "http.route", std::string(facts.route));
  if (facts.http_status > 0) add(a, "http.response.status_code", std::int64_t{facts.http_status});
  add(a, "inferscope.finish_reason", std::string(timeline::to_string(s.reason)));
  if (failed) {
    const std::string type = facts.http_status > 0 ? std::to_string(facts.http_status) : "engine_error";
    add(a, "error.type", type);
    root.status = SpanStatus{StatusCode::kError, type};
  }

  const auto child = [&](std::string_view name, timeline::TimePoint start, timeline::TimePoint end) -> Span& {
    return spans.emplace_back(child_span(trace, trace.root_span_id, name, SpanKind::kInternal, start, end));
  };
  for (std::size_t i = 0; i < timeline::kStageCount; ++i) {
    const auto& interval = intervals.stages[i];
    if (!interval) continue;
    const auto stage = static_cast<Stage>(i);
    Span& span = child(timeline::to_string(stage), interval->start, interval->end);
    add(span.attributes, "inferscope.stage", std::string(timeline::to_string(stage)));
    if (intervals.truncated_stage == stage) add(span.attributes, "inferscope.stage.truncated", true);
    if (stage == Stage::kDecode || stage == Stage::kStream) {
      add(span.attributes, "gen_ai.usage.output_tokens", std::int64_t{s.output_tokens});
    }
    if (stage == Stage::kPrefill && s.prompt_tokens > 0) {
      add(span.attributes, "gen_ai.usage.input_tokens", std::int64_t{s.prompt_tokens});
    }
  }
  for (const timeline::DependencyCall& call : t.dependencies()) {
    Span& span = child(timeline::to_string(Stage::kDependency), call.start, call.end);
    add(span.attributes, "inferscope.stage", std::string(timeline::to_string(Stage::kDependency)));
    add(span.attributes, "inferscope.dependency", call.name);
  }
  std::sort(spans.begin() + 1, spans.end(),
            [](const Span& x, const Span& y) { return x.start_unix_ns < y.start_unix_ns; });
  return spans;
}

}  // namespace inferscope::trace
