// File: request_spans.cpp
// Attribute names: OpenTelemetry GenAI semantic conventions (gen_ai.operation.name,
// gen_ai.provider.name since v1.37, gen_ai.request/response.model, gen_ai.usage.input/output_tokens,
// gen_ai.response.finish_reasons), HTTP conventions (http.route, http.response.status_code,
// error.type) and vLLM's V1 do_tracing (gen_ai.latency.*, seconds): ../shared/reference/tracing.md.
#include "trace/request_spans.h"

#include <inferscope/timeline/timeline_summary.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>
#include <vector>

namespace inferscope::trace {
namespace {

using timeline::FinishReason;
using timeline::Stage;

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

void double_if(SpanWriter& out, std::string_view key, std::optional<double> seconds) {
  if (seconds) out.double_attribute(key, *seconds);
}

// ChildSpan is one child of the root before writing: children are written in start order.
struct ChildSpan {
  timeline::TimePoint start;
  timeline::TimePoint end;
  std::size_t order = 0;  // stage index, then kStageCount + dependency index; kDecodeQueueOrder: the decode pool's queue
  const timeline::DependencyCall* call = nullptr;    // set for a dependency call
};

// kDecodeQueueOrder marks the second `queue` span of a disaggregated request (the decode pool's).
constexpr std::size_t kDecodeQueueOrder = ~std::size_t{0};

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

std::chrono::system_clock::time_point wall_time(timeline::TimePoint when) noexcept {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(unix_nanos(when))));
}

void write_request_spans(SpanWriter& out, const RequestTrace& trace, const timeline::RequestTimeline& t,
                         const RequestFacts& facts) {
  const timeline::StageIntervals intervals = timeline::stage_intervals(t);
  write_request_spans(out, trace, t, intervals, timeline::summarize(t, intervals), facts);
}

void write_request_spans(SpanWriter& out, const RequestTrace& trace, const timeline::RequestTimeline& t,
                         const timeline::StageIntervals& intervals, const timeline::TimelineSummary& s,
                         const RequestFacts& facts) {
  const bool failed = is_failed_request(t, facts.http_status);

  // Reused per thread: a request's span writing allocates nothing once these have grown.
  thread_local std::string root_name;
  thread_local std::vector<ChildSpan> children;

  const std::string_view model = facts.request_model.empty() ? facts.response_model : facts.request_model;
  root_name.assign(facts.operation);
  if (!model.empty()) root_name.append(" ").append(model);
  const std::uint64_t root_start = unix_nanos(*t.moment(timeline::Moment::kArrival));
  out.open(trace.trace_id, trace.root_span_id, trace.remote_parent.value_or(SpanId{}), root_name, SpanKind::kServer,
           root_start, std::max(root_start, unix_nanos(t.end())));
  out.string_attribute("gen_ai.operation.name", facts.operation);
  out.string_attribute("gen_ai.provider.name", facts.provider);
  if (!facts.request_model.empty()) out.string_attribute("gen_ai.request.model", facts.request_model);
  if (!facts.response_model.empty()) out.string_attribute("gen_ai.response.model", facts.response_model);
  if (facts.max_tokens > 0) out.int_attribute("gen_ai.request.max_tokens", facts.max_tokens);
  if (s.reason == FinishReason::kStop || s.reason == FinishReason::kLength) {
    const std::string_view reasons[] = {timeline::to_string(s.reason)};
    out.string_array_attribute("gen_ai.response.finish_reasons", reasons);
  }
  if (s.prompt_tokens > 0) out.int_attribute("gen_ai.usage.input_tokens", s.prompt_tokens);
  out.int_attribute("gen_ai.usage.output_tokens", s.output_tokens);
  // vLLM's names and meanings (its e2e ends at the last token, as vllm:e2e_request_latency_seconds).
  const auto complete = [&s](Stage stage) -> std::optional<double> {
    if (s.truncated_stage == stage) return std::nullopt;
    return s.stage_seconds[static_cast<std::size_t>(stage)];
  };
  double_if(out, "gen_ai.latency.time_to_first_token", s.ttft_seconds);
  out.double_attribute("gen_ai.latency.e2e", s.generation_seconds.value_or(s.e2e_seconds));
  double_if(out, "gen_ai.latency.time_in_queue", complete(Stage::kQueue));
  double_if(out, "gen_ai.latency.time_in_model_prefill", complete(Stage::kPrefill));
  double_if(out, "gen_ai.latency.time_in_model_decode", complete(Stage::kDecode));
  double_if(out, "gen_ai.latency.time_in_model_inference", s.inference_seconds);
  if (!facts.route.empty()) out.string_attribute("http.route", facts.route);
  if (facts.http_status > 0) out.int_attribute("http.response.status_code", facts.http_status);
  out.string_attribute("inferscope.finish_reason", timeline::to_string(s.reason));
  char status_text[16];
  std::string_view error_type;
  if (failed) {
    if (facts.http_status > 0) {
      const auto [end, ec] = std::to_chars(status_text, status_text + sizeof status_text, facts.http_status);
      error_type = std::string_view(status_text, static_cast<std::size_t>(end - status_text));
    } else {
      error_type = "engine_error";
    }
    out.string_attribute("error.type", error_type);
  }
  out.close(failed ? StatusCode::kError : StatusCode::kUnset, error_type,
            kRecordedSpanFlags | (trace.remote_parent ? kIsRemoteFlag : 0));

  children.clear();
  for (std::size_t i = 0; i < timeline::kStageCount; ++i) {
    if (const auto& interval = intervals.stages[i]) children.push_back({interval->start, interval->end, i, nullptr});
  }
  if (intervals.decode_queue) children.push_back({intervals.decode_queue->start, intervals.decode_queue->end, kDecodeQueueOrder, nullptr});
  const auto& calls = t.dependencies();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    children.push_back({calls[i].start, calls[i].end, timeline::kStageCount + i, &calls[i]});
  }
  std::sort(children.begin(), children.end(), [](const ChildSpan& x, const ChildSpan& y) {
    return x.start != y.start ? x.start < y.start : x.order < y.order;
  });
  for (const ChildSpan& child : children) {
    const bool decode_queue = child.order == kDecodeQueueOrder;
    const Stage stage = child.call != nullptr ? Stage::kDependency
                        : decode_queue        ? Stage::kQueue
                                              : static_cast<Stage>(child.order);
    const std::uint64_t start = unix_nanos(child.start);
    out.open(trace.trace_id, random_span_id(), trace.root_span_id, timeline::to_string(stage), SpanKind::kInternal,
             start, unix_nanos(std::max(child.start, child.end)));
    out.string_attribute("inferscope.stage", timeline::to_string(stage));
    if (child.call != nullptr) {
      out.string_attribute("inferscope.dependency", child.call->name);
    } else {
      if (intervals.truncated_stage == stage && !decode_queue) out.bool_attribute("inferscope.stage.truncated", true);
      // A disaggregated request waits twice: in the prefill pool's queue, then in the decode pool's.
      if (stage == Stage::kQueue && intervals.decode_queue) out.string_attribute("inferscope.pool", decode_queue ? "decode" : "prefill");
      if (stage == Stage::kDecode || stage == Stage::kStream) {
        out.int_attribute("gen_ai.usage.output_tokens", s.output_tokens);
      }
      if (stage == Stage::kPrefill && s.prompt_tokens > 0) out.int_attribute("gen_ai.usage.input_tokens", s.prompt_tokens);
    }
    out.close(StatusCode::kUnset, {}, kRecordedSpanFlags);
  }
}

}  // namespace inferscope::trace
