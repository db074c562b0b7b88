// File: request_spans.h
// The spans of one served request: a root SERVER span named and attributed per the OpenTelemetry
// GenAI conventions ("chat <model>", gen_ai.*) plus vLLM's gen_ai.latency.* names, and one
// INTERNAL child per stage the request went through, cut from the same stage_intervals() that
// its stage histograms observe (src/timeline), so a span and its histogram observation agree.
// The trace decision: head sampling (ParentBased ratio) at the start, tail rules at the end
// (errors and requests slower than the threshold are always exported).
// The spans are written as OTLP bytes (span_writer.h) straight from the timeline: no Span object
// is built per request.
// Example: RequestTrace t = RequestTrace::begin(parse_traceparent(header), 0.1);
//          ... if (policy.keep(t, failed, e2e)) {
//                std::string bytes; SpanWriter w(bytes); write_request_spans(w, t, timeline, facts);
//                exporter.submit_encoded(bytes, w.spans()); }
// Pure functions over their arguments (thread-safe); RequestTrace is a plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include <inferscope/timeline/request_timeline.h>
#include <inferscope/timeline/timeline_summary.h>

#include "trace/span.h"
#include "trace/span_writer.h"
#include "trace/trace_context.h"

namespace inferscope::trace {

// RequestTrace is where one request's spans hang: its trace, its root span's id, the caller's
// span when a valid traceparent came in, and the head-sampling decision.
struct RequestTrace {
  TraceId trace_id{};
  SpanId root_span_id{};
  std::optional<SpanId> remote_parent;  // the incoming traceparent's parent-id
  std::uint8_t trace_flags = 0;         // incoming flags (random bit kept), sampled per the decision
  bool head_sampled = false;

  // begin continues `incoming` (trace id, parent, its sampled flag) or starts a new random trace
  // sampled with probability `ratio` (by trace id).
  static RequestTrace begin(const std::optional<TraceParent>& incoming, double ratio);
};

// TracePolicy is the export decision made when a request ends.
struct TracePolicy {
  double sample_ratio = 1.0;             // --trace-sample (head)
  std::optional<double> slow_seconds;    // --trace-slow: e2e at or above it is always exported
  // keep: head-sampled, or failed, or slow.
  bool keep(const RequestTrace& trace, bool failed, double e2e_seconds) const noexcept;
};

// RequestFacts are what the spans say about a request beyond its timeline. Views must outlive
// the request_spans() call only. Never the prompt or the output text.
struct RequestFacts {
  std::string_view operation;        // gen_ai.operation.name: "chat" or "text_completion"
  std::string_view provider = "inferscope";  // gen_ai.provider.name
  std::string_view request_model;    // as requested (a served name; empty when unknown)
  std::string_view response_model;   // the served name that answered (empty when none)
  std::string_view route;            // http.route, e.g. "/v1/chat/completions"
  int http_status = 0;               // 0: no status reached the client
  std::uint32_t max_tokens = 0;      // 0: not given
};

// is_failed_request: a 5xx answer, or an engine error with no answer sent (OTel's HTTP server
// rule: 4xx is the client's error, not the server span's).
bool is_failed_request(const timeline::RequestTimeline& timeline, int http_status) noexcept;

// unix_nanos converts a steady-clock time point to unix nanoseconds through one offset taken at
// the first call, so differences between converted points are exactly the steady differences.
std::uint64_t unix_nanos(timeline::TimePoint when) noexcept;
// wall_time is unix_nanos as a system_clock time point: a request's exemplar timestamp, taken
// from its timeline's end like its spans' times (no clock read per request).
std::chrono::system_clock::time_point wall_time(timeline::TimePoint when) noexcept;

// kRecordedSpanFlags are the flags of every exported span: sampled (it was recorded, whatever
// the head decided) and OTLP's "is-remote known" bit, clear (a local parent).
inline constexpr std::uint32_t kHasIsRemoteFlag = 0x100;
inline constexpr std::uint32_t kIsRemoteFlag = 0x200;
inline constexpr std::uint32_t kRecordedSpanFlags = kSampledFlag | kHasIsRemoteFlag;

// write_request_spans writes the root span and one child per stage with an interval (per
// dependency call for kDependency), children in time order after the root. `timeline` must be
// finished.
void write_request_spans(SpanWriter& out, const RequestTrace& trace, const timeline::RequestTimeline& timeline,
                         const RequestFacts& facts);
// The same with the timeline's stage intervals and summary already computed (by the caller,
// who records the request's metrics from the same summary).
void write_request_spans(SpanWriter& out, const RequestTrace& trace, const timeline::RequestTimeline& timeline,
                         const timeline::StageIntervals& intervals, const timeline::TimelineSummary& summary,
                         const RequestFacts& facts);

}  // namespace inferscope::trace
