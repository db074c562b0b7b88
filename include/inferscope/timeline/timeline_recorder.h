// File: timeline_recorder.h
// TimelineRecorder turns finished RequestTimelines into observations of the generic inferscope_*
// request metrics (stage durations, e2e, TTFT, TPOT, ITL, tokens, requests by outcome). Families
// and label sets: docs/metrics-reference.md. Example:
//   TimelineRecorder rec(registry, {.model_names = {"llama"}});  rec.record(timeline, {"llama", "/v1/chat/completions", 200});
// Thread-safe: record() may run on any number of threads. It never looks a series up by string
// after its first use of a label combination, never throws and never puts unconfigured names in labels.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/metrics/registry.h>
#include <inferscope/timeline/request_timeline.h>
#include <inferscope/timeline/timeline_summary.h>

namespace inferscope::timeline {

// kOtherLabel is the label value for a model, route or dependency name that was not configured.
inline constexpr std::string_view kOtherLabel = "other";

// TimelineRecorderOptions configures the bounded label values.
struct TimelineRecorderOptions {
  std::vector<std::string> model_names;       // values of label `model`; anything else -> "other"
  std::vector<std::string> routes;            // values of label `route`; anything else -> "other"
  std::vector<std::string> dependency_names;  // values of label `dependency`; else -> "other"
  std::vector<double> latency_buckets;        // empty: metrics::default_latency_buckets() (1 ms..60 s)
  std::vector<double> token_buckets;          // empty: 1-2-5 series 1..100000
};

// RequestLabels are the bounded facts about a request that become labels.
struct RequestLabels {
  std::string_view model;  // requested model name (mapped to a configured name or "other")
  std::string_view route;  // e.g. "/v1/chat/completions" (mapped to a configured route or "other")
  int http_status = 200;   // 0 = no status was sent (connection lost first)
  // trace_id, when not empty, is the id (32 lowercase hex) of the request's exported trace: the
  // e2e, TTFT, stage and dependency observations then carry it as a `trace_id` exemplar stamped
  // `exemplar_time` (OpenMetrics exposition only). Only for exported requests: an exemplar must
  // point at a trace that exists.
  std::string_view trace_id{};
  std::chrono::system_clock::time_point exemplar_time{};
};

// LatencyObserver observes one request's latencies, each with a `trace_id` exemplar stamped
// `labels.exemplar_time` when `labels.trace_id` is set (prepared once for all of them): the rule
// TimelineRecorder::record applies to its latency histograms, for a caller's own latency
// histograms of the same request too (the gateway's gen_ai_*). Lives on the stack for the request
// (~1 KiB); not thread-safe.
class LatencyObserver {
 public:
  explicit LatencyObserver(const RequestLabels& labels) noexcept;
  void observe(metrics::Histogram h, double v) const noexcept;

 private:
  std::optional<metrics::PreparedExemplar> exemplar_;
  std::chrono::system_clock::time_point at_;
};

// status_class maps an HTTP status to "1xx".."5xx", or "none" for 0 and out-of-range values.
std::string_view status_class(int http_status) noexcept;

// TimelineRecorder owns cached handles into the inferscope_* request families of one registry.
class TimelineRecorder {
 public:
  // TimelineRecorder registers its families in `registry`, which must outlive it. Throws
  // std::invalid_argument when a family of the same name is already registered (setup misuse).
  TimelineRecorder(metrics::Registry& registry, TimelineRecorderOptions options);
  ~TimelineRecorder();
  TimelineRecorder(const TimelineRecorder&) = delete;
  TimelineRecorder& operator=(const TimelineRecorder&) = delete;

  // begin counts `timeline` in inferscope_requests_in_flight until record() sees it. Optional.
  void begin(RequestTimeline& timeline) noexcept;

  // record observes everything `timeline` contributes (see docs/request-timeline.md) under
  // `labels`, and ends its in-flight count. Call exactly once per request, after finish(). The
  // request is counted in inferscope_requests_total after its other observations, so a scrape that
  // sees the count sees them too.
  // Cost: O(stages + output events); allocates only on a label combination's first use.
  void record(const RequestTimeline& timeline, const RequestLabels& labels) noexcept;

  // record is the same with a summary the caller already computed from `timeline`.
  void record(const RequestTimeline& timeline, const TimelineSummary& summary,
              const RequestLabels& labels) noexcept;

  // model_index returns the position of `model` in options.model_names, or model_names.size()
  // for "other". O(configured names).
  std::size_t model_index(std::string_view model) const noexcept;

  // model_label returns the label value used for `model` (a configured name or "other").
  std::string_view model_label(std::string_view model) const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace inferscope::timeline
