// Hot-path cost of turning a streamed body into records: SSE splitting and per-event JSON field
// extraction, each next to its peer baseline (a bare memchr line split; nlohmann::json parsing).
// Run: build-loadgen/bench/loadgen/loadgen_sse_parser_bench
#include <cstring>
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "loadgen/openai_event.h"
#include "loadgen/response_recorder.h"
#include "loadgen/sse_parser.h"

namespace {

const std::string kEvent =
    R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" time"},"finish_reason":null}]})";

std::string stream_body(int tokens) {
  std::string body;
  for (int i = 0; i < tokens; ++i) body += "data: " + kEvent + "\n\n";
  body += "data: [DONE]\n\n";
  return body;
}

void BM_SseParserStream(benchmark::State& state) {
  std::string body = stream_body(256);
  std::size_t events = 0;
  for (auto _ : state) {
    inferscope::loadgen::SseParser p([&](std::string_view d, std::int64_t) { events += d.size() > 0; });
    for (std::size_t i = 0; i < body.size(); i += 1400) p.feed(std::string_view(body).substr(i, 1400), 0);
  }
  benchmark::DoNotOptimize(events);
  state.SetItemsProcessed(state.iterations() * 257);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_SseParserStream);

// Peer baseline: the least any line-based splitter must do.
void BM_MemchrLineSplitBaseline(benchmark::State& state) {
  std::string body = stream_body(256);
  std::size_t lines = 0;
  for (auto _ : state) {
    const char* p = body.data();
    const char* end = p + body.size();
    while (const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) {
      lines += nl > p;
      p = nl + 1;
    }
  }
  benchmark::DoNotOptimize(lines);
  state.SetItemsProcessed(state.iterations() * 257);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_MemchrLineSplitBaseline);

void BM_OpenAiEventParse(benchmark::State& state) {
  inferscope::loadgen::OpenAiEventParser p;
  for (auto _ : state) benchmark::DoNotOptimize(p.parse(kEvent).has_content);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OpenAiEventParse);

// Peer baseline: a DOM parse with the project's non-hot-path JSON library.
void BM_NlohmannEventParseBaseline(benchmark::State& state) {
  for (auto _ : state) {
    auto j = nlohmann::json::parse(kEvent);
    benchmark::DoNotOptimize(j["choices"][0]["delta"]["content"].get_ref<const std::string&>().empty());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NlohmannEventParseBaseline);

// The whole per-response path: SSE split + JSON + record update for a 256-token stream.
void BM_ResponseRecorderStream(benchmark::State& state) {
  std::string body = stream_body(256);
  inferscope::loadgen::OpenAiEventParser json;
  for (auto _ : state) {
    inferscope::loadgen::RequestRecord r;
    r.streaming = true;
    r.started_ns = 0;
    inferscope::loadgen::ResponseRecorder rec(r, json);
    for (std::size_t i = 0; i < body.size(); i += 1400) rec.on_body(std::string_view(body).substr(i, 1400), 1000);
    rec.on_end(2000);
    benchmark::DoNotOptimize(r.output_tokens);
  }
  state.SetItemsProcessed(state.iterations() * 257);
}
BENCHMARK(BM_ResponseRecorderStream);

}  // namespace

BENCHMARK_MAIN();
