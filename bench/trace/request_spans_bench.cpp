// Micro-benchmark of a traced request's own work in `serve` and `gateway`: writing its spans from
// the finished timeline as OTLP bytes (write_request_spans), the Span model's encoding of the same
// spans for comparison, and joining a batch into one OTLP body. The end-to-end cost per request, tracing on against off, is
// bench/serve/tracing_overhead.sh and bench/gateway/tracing_overhead.sh.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include <inferscope/timeline/request_timeline.h>

#include "trace/otlp.h"
#include "trace/request_spans.h"
#include "trace/span_writer.h"
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

// The request thread's whole tracing work: a finished timeline written as OTLP span bytes into
// the thread's reused buffer.
void BM_WriteRequestSpans(benchmark::State& state) {
  const auto t = served_request();
  const auto f = facts();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto trace = trace::RequestTrace::begin(std::nullopt, 1.0);
    trace::SpanWriter writer(trace::thread_span_buffer());
    trace::write_request_spans(writer, trace, t, f);
    bytes = writer.bytes().size();
    benchmark::DoNotOptimize(writer.bytes().data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_WriteRequestSpans);

// The same spans as Span objects written through encode_spans_field: the Span model's path
// (up's forwarding, tests), for comparison.
void BM_EncodeSpanModel(benchmark::State& state) {
  const auto t = served_request();
  trace::SpanWriter writer(trace::thread_span_buffer());
  trace::write_request_spans(writer, trace::RequestTrace::begin(std::nullopt, 1.0), t, facts());
  const std::string field(writer.bytes());
  const auto spans = trace::decode_spans_field(field);
  if (!spans) {
    state.SkipWithError(spans.error().message.c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(trace::encode_spans_field(*spans));
  state.counters["spans"] = static_cast<double>(spans->size());
}
BENCHMARK(BM_EncodeSpanModel);

// The sending thread's join of 64 requests' fields into one ExportTraceServiceRequest.
void BM_JoinBatch(benchmark::State& state) {
  trace::SpanWriter writer(trace::thread_span_buffer());
  trace::write_request_spans(writer, trace::RequestTrace::begin(std::nullopt, 1.0), served_request(), facts());
  std::string batch;
  for (int i = 0; i < 64; ++i) batch += writer.bytes();
  const std::vector<trace::Attribute> resource = {{"service.name", std::string("inferscope-serve")}};
  for (auto _ : state) benchmark::DoNotOptimize(trace::encode_export_request(resource, "inferscope", "", batch));
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_JoinBatch);

}  // namespace

BENCHMARK_MAIN();
