// Micro-benchmark of a traced request's own work in `serve` and `gateway`: building its spans
// from the finished timeline (request_spans), encoding them (encode_spans_field), both, and
// joining a batch into one OTLP body. The end-to-end cost per request, tracing on against off, is
// bench/serve/tracing_overhead.sh and bench/gateway/tracing_overhead.sh.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include <inferscope/timeline/request_timeline.h>

#include "trace/otlp.h"
#include "trace/request_spans.h"
#include "trace/trace_context.h"

namespace {

using namespace inferscope;
using timeline::Moment;

// served_request is a streamed chat completion as serve records one: 32 prompt tokens,
// 16 output events, every stage but dependency.
timeline::RequestTimeline served_request() {
  const timeline::TimePoint t0 = timeline::Clock::now();
  const auto at = [t0](int us) { return t0 + std::chrono::microseconds(us); };
  timeline::RequestTimeline t(t0);
  t.mark(Moment::kPreprocessed, at(20));
  t.mark(Moment::kEnqueued, at(25));
  t.mark(Moment::kScheduled, at(60));
  for (int i = 0; i < 16; ++i) t.add_output(at(200 + 40 * i), 1);
  t.mark(Moment::kPostprocessed, at(900));
  t.mark(Moment::kSent, at(910));
  t.set_prompt_tokens(32);
  t.finish(timeline::FinishReason::kLength, at(910));
  return t;
}

trace::RequestFacts facts() {
  trace::RequestFacts f;
  f.operation = "chat";
  f.request_model = "inferscope-sim-8b";
  f.response_model = "inferscope-sim-8b";
  f.route = "/v1/chat/completions";
  f.http_status = 200;
  f.max_tokens = 16;
  return f;
}

void BM_RequestSpans(benchmark::State& state) {
  const auto t = served_request();
  const auto f = facts();
  const auto trace = trace::RequestTrace::begin(std::nullopt, 1.0);
  for (auto _ : state) benchmark::DoNotOptimize(trace::request_spans(trace, t, f));
}
BENCHMARK(BM_RequestSpans);

void BM_EncodeSpansField(benchmark::State& state) {
  const auto spans = trace::request_spans(trace::RequestTrace::begin(std::nullopt, 1.0), served_request(), facts());
  for (auto _ : state) benchmark::DoNotOptimize(trace::encode_spans_field(spans));
  state.counters["bytes"] = static_cast<double>(trace::encode_spans_field(spans).size());
  state.counters["spans"] = static_cast<double>(spans.size());
}
BENCHMARK(BM_EncodeSpansField);

// The request thread's whole tracing work from a finished timeline to the bytes it queues.
void BM_SpansThenEncode(benchmark::State& state) {
  const auto t = served_request();
  const auto f = facts();
  for (auto _ : state) {
    const auto trace = trace::RequestTrace::begin(std::nullopt, 1.0);
    benchmark::DoNotOptimize(trace::encode_spans_field(trace::request_spans(trace, t, f)));
  }
}
BENCHMARK(BM_SpansThenEncode);

// The sending thread's join of 64 requests' fields into one ExportTraceServiceRequest.
void BM_JoinBatch(benchmark::State& state) {
  const auto field = trace::encode_spans_field(
      trace::request_spans(trace::RequestTrace::begin(std::nullopt, 1.0), served_request(), facts()));
  const std::vector<std::string> batch(64, field);
  const std::vector<trace::Attribute> resource = {{"service.name", std::string("inferscope-serve")}};
  for (auto _ : state) benchmark::DoNotOptimize(trace::encode_export_request(resource, "inferscope", "", batch));
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_JoinBatch);

}  // namespace

BENCHMARK_MAIN();
