// summarize(): the stage-boundary rules of docs/request-timeline.md. Keep the two in sync.
#include <inferscope/timeline/timeline_summary.h>

namespace inferscope::timeline {
namespace {

using MaybeTime = std::optional<TimePoint>;

struct Bounds {
  MaybeTime start;
  MaybeTime end;
};

MaybeTime either(MaybeTime preferred, MaybeTime fallback) { return preferred ? preferred : fallback; }

// stage_bounds fills the start/end moment of every stage that applies to the timeline's role.
std::array<Bounds, kStageCount> stage_bounds(const RequestTimeline& t) {
  const auto at = [&t](Moment m) { return t.moment(m); };
  const MaybeTime arrival = at(Moment::kArrival);
  const MaybeTime first = t.first_output();
  const MaybeTime last = t.last_output();
  std::array<Bounds, kStageCount> b{};
  const auto set = [&b](Stage s, MaybeTime start, MaybeTime end) {
    b[static_cast<std::size_t>(s)] = Bounds{start, end};
  };
  set(Stage::kGatewayQueue, arrival, at(Moment::kAdmitted));
  set(Stage::kPreprocess, either(at(Moment::kAdmitted), arrival), at(Moment::kPreprocessed));
  set(Stage::kPostprocess, last, at(Moment::kPostprocessed));
  set(Stage::kSend, either(at(Moment::kPostprocessed), last), at(Moment::kSent));
  if (t.role() == Role::kServer && at(Moment::kRouted)) {
    // Disaggregated: route, the prefill pool's queue, prefill on the prefill worker, the KV
    // transfer, the decode pool's queue (StageIntervals::decode_queue), decode on the decode worker.
    set(Stage::kRoute, either(at(Moment::kEnqueued), at(Moment::kPreprocessed)), at(Moment::kRouted));
    set(Stage::kQueue, at(Moment::kRouted), at(Moment::kScheduled));
    set(Stage::kPrefill, at(Moment::kScheduled), either(at(Moment::kPrefilled), first));
    set(Stage::kKvTransfer, at(Moment::kPrefilled), at(Moment::kKvTransferred));
    set(Stage::kDecode, either(at(Moment::kDecodeScheduled), first), last);
  } else if (t.role() == Role::kServer) {
    set(Stage::kQueue, either(at(Moment::kEnqueued), at(Moment::kPreprocessed)), at(Moment::kScheduled));
    set(Stage::kPrefill, at(Moment::kScheduled), first);
    set(Stage::kDecode, first, last);
  } else {
    set(Stage::kUpstreamConnect,
        either(at(Moment::kUpstreamConnectStart), either(at(Moment::kAdmitted), arrival)),
        at(Moment::kUpstreamConnected));
    set(Stage::kUpstreamTtft, at(Moment::kUpstreamRequestSent), first);
    set(Stage::kStream, first, last);
  }
  return b;
}

// in_progress_stage names the stage the request was in when it ended, judged by the furthest
// moment it reached. After the first token only kSend can be cut short (decode is always
// first -> last token, whatever happened after the last one).
std::optional<Stage> in_progress_stage(const RequestTimeline& t) {
  const auto has = [&t](Moment m) { return t.moment(m).has_value(); };
  if (has(Moment::kSent)) return std::nullopt;
  if (has(Moment::kPostprocessed)) return Stage::kSend;
  if (t.first_output()) return std::nullopt;
  if (t.role() == Role::kServer && has(Moment::kRouted)) {
    if (has(Moment::kDecodeScheduled)) return Stage::kDecode;
    if (has(Moment::kKvTransferred)) return std::nullopt;  // the decode pool's queue: decode_queue
    if (has(Moment::kPrefilled)) return Stage::kKvTransfer;
    if (has(Moment::kScheduled)) return Stage::kPrefill;
    return Stage::kQueue;
  }
  if (t.role() == Role::kServer) {
    if (has(Moment::kScheduled)) return Stage::kPrefill;
    if (has(Moment::kPreprocessed) || has(Moment::kEnqueued)) return Stage::kQueue;
    return Stage::kPreprocess;
  }
  if (has(Moment::kUpstreamRequestSent)) return Stage::kUpstreamTtft;
  if (has(Moment::kUpstreamConnected)) return std::nullopt;  // writing the request: no stage
  if (has(Moment::kUpstreamConnectStart) || has(Moment::kAdmitted)) return Stage::kUpstreamConnect;
  return Stage::kGatewayQueue;
}

}  // namespace

StageIntervals stage_intervals(const RequestTimeline& t) noexcept {
  StageIntervals out;
  const auto bounds = stage_bounds(t);
  for (std::size_t i = 0; i < kStageCount; ++i) {
    if (bounds[i].start && bounds[i].end) {
      out.stages[i] = StageInterval{*bounds[i].start, std::max(*bounds[i].start, *bounds[i].end)};
    }
  }
  if (const auto transferred = t.moment(Moment::kKvTransferred); transferred && t.moment(Moment::kRouted)) {
    // The decode pool's wait ends at admission, or at the end for a request cut short there.
    const auto admitted = t.moment(Moment::kDecodeScheduled);
    if (admitted || !t.first_output()) {
      const TimePoint end = admitted ? *admitted : t.end();
      out.decode_queue = StageInterval{*transferred, std::max(*transferred, end)};
    }
  }
  if (const auto stage = in_progress_stage(t)) {
    const auto index = static_cast<std::size_t>(*stage);
    if (bounds[index].start && !bounds[index].end) {
      out.truncated_stage = stage;
      out.stages[index] = StageInterval{*bounds[index].start, std::max(*bounds[index].start, t.end())};
    }
  }
  return out;
}

TimelineSummary summarize(const RequestTimeline& t) noexcept { return summarize(t, stage_intervals(t)); }

TimelineSummary summarize(const RequestTimeline& t, const StageIntervals& intervals) noexcept {
  TimelineSummary s;
  const TimePoint arrival = *t.moment(Moment::kArrival);
  const TimePoint end = t.end();
  const MaybeTime first = t.first_output();
  const MaybeTime last = t.last_output();
  s.reason = t.finished() ? t.finish_reason() : FinishReason::kError;
  s.e2e_seconds = seconds_between(arrival, end);
  s.prompt_tokens = t.prompt_tokens();
  s.output_tokens = t.output_tokens();
  s.output_events = static_cast<std::uint32_t>(t.outputs().size());
  if (first) {
    s.ttft_seconds = seconds_between(arrival, *first);
    s.generation_seconds = seconds_between(arrival, *last);
    // TPOT needs two distinct events: one event carrying everything has no decode interval.
    if (s.output_tokens >= 2 && s.output_events >= 2 && *last > *first) {
      s.tpot_seconds = seconds_between(*first, *last) / static_cast<double>(s.output_tokens - 1);
    }
    const MaybeTime scheduled = t.moment(Moment::kScheduled);
    if (scheduled && t.role() == Role::kServer) s.inference_seconds = seconds_between(*scheduled, *last);
  }

  for (std::size_t i = 0; i < kStageCount; ++i) {
    if (const auto& interval = intervals.stages[i]) s.stage_seconds[i] = seconds_between(interval->start, interval->end);
  }
  if (intervals.decode_queue) {
    auto& queue = s.stage_seconds[static_cast<std::size_t>(Stage::kQueue)];
    queue = queue.value_or(0) + seconds_between(intervals.decode_queue->start, intervals.decode_queue->end);
  }
  s.truncated_stage = intervals.truncated_stage;
  if (!t.dependencies().empty()) {
    double total = 0;
    for (const auto& call : t.dependencies()) total += seconds_between(call.start, call.end);
    s.stage_seconds[static_cast<std::size_t>(Stage::kDependency)] = total;
  }
  return s;
}

}  // namespace inferscope::timeline
