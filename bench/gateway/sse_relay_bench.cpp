// CPU of the gateway's per-event relay work on a vLLM-shaped 64-token stream, one event per
// read: scan_completion beside a full simdjson DOM parse of the same payloads (what the relay did
// before), and the whole SseRelay::feed (framing, scan, copy out) beside a bare memcpy of the same
// bytes (all a byte-forwarding proxy such as nginx does with them).
// Run: build/release/bench/gateway/gateway_sse_relay_bench
#include <simdjson.h>

#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "gateway/completion_scan.h"
#include "gateway/sse_relay.h"
#include "ratio_reporter.h"

namespace {

constexpr int kTokens = 64;
constexpr int kEvents = kTokens + 3;  // role, content..., finish, [DONE]

std::string stream_body() {
  const std::string head = R"(data: {"id":"chatcmpl-5f0c","object":"chat.completion.chunk","created":1796009521,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":)";
  std::string body = head + R"({"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})" + "\n\n";
  for (int i = 0; i < kTokens; ++i) body += head + R"({"content":" word"},"logprobs":null,"finish_reason":null}]})" + "\n\n";
  body += head + R"({},"logprobs":null,"finish_reason":"length"}]})" + "\n\n";
  body += "data: [DONE]\n\n";
  return body;
}

// events splits the stream into its events: one upstream read each (the worst case for a relay).
std::vector<std::string_view> events(const std::string& body) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0, end; (end = body.find("\n\n", start)) != std::string::npos; start = end + 2) {
    out.push_back(std::string_view(body).substr(start, end + 2 - start));
  }
  return out;
}

void BM_SseRelayStream(benchmark::State& state) {
  const std::string body = stream_body();
  const std::vector<std::string_view> reads = events(body);
  std::string scratch;
  scratch.reserve(4096);
  for (auto _ : state) {
    inferscope::gateway::SseRelay relay(true);
    const auto now = std::chrono::steady_clock::now();
    for (const std::string_view read : reads) benchmark::DoNotOptimize(relay.feed(read, now, scratch));
    benchmark::DoNotOptimize(relay.content_events());
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
}
BENCHMARK(BM_SseRelayStream);

// data_payloads returns each event's JSON (what follows "data: "), [DONE] left out.
std::vector<std::string> data_payloads(const std::string& body) {
  std::vector<std::string> out;
  for (const std::string_view event : events(body)) {
    const std::string_view data = event.substr(6, event.size() - 8);
    if (data != "[DONE]") out.emplace_back(data);
  }
  return out;
}

void BM_ScanCompletion(benchmark::State& state) {
  const std::vector<std::string> payloads = data_payloads(stream_body());
  for (auto _ : state) {
    for (const std::string& data : payloads) {
      benchmark::DoNotOptimize(
          inferscope::gateway::scan_completion(data, inferscope::gateway::CompletionShape::kChunk).content);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(payloads.size()));
}
BENCHMARK(BM_ScanCompletion);

// Peer: a full parse of the same payloads, as the relay did before scan_completion: a padded
// copy, a simdjson DOM, then the same lookups.
void BM_SimdjsonDomBaseline(benchmark::State& state) {
  const std::vector<std::string> payloads = data_payloads(stream_body());
  simdjson::dom::parser parser;
  for (auto _ : state) {
    for (const std::string& data : payloads) {
      simdjson::padded_string padded(data);
      simdjson::dom::element root;
      bool content = false;
      simdjson::dom::array choices;
      if (parser.parse(padded).get(root) == simdjson::SUCCESS &&
          root["choices"].get_array().get(choices) == simdjson::SUCCESS) {
        for (simdjson::dom::element choice : choices) {
          std::string_view text;
          content = content || (choice["delta"]["content"].get_string().get(text) == simdjson::SUCCESS && !text.empty());
          benchmark::DoNotOptimize(choice["finish_reason"].get_string().get(text));
        }
      }
      benchmark::DoNotOptimize(content);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(payloads.size()));
}
BENCHMARK(BM_SimdjsonDomBaseline);

// Peer: forwarding the same bytes without looking at them.
void BM_MemcpyForwardBaseline(benchmark::State& state) {
  const std::string body = stream_body();
  const std::vector<std::string_view> reads = events(body);
  std::string out;
  out.reserve(4096);
  for (auto _ : state) {
    for (const std::string_view read : reads) {
      out.clear();
      out.append(read);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
}
BENCHMARK(BM_MemcpyForwardBaseline);

}  // namespace

int main(int argc, char** argv) {
  return inferscope::bench::run_benchmarks_with_ratios(argc, argv, [](const inferscope::bench::RatioReporter& r) {
    const double payloads = kEvents - 1;
    inferscope::bench::print_ratio("scan_completion vs simdjson DOM, per payload", r.time("BM_ScanCompletion") / payloads,
                                   r.time("BM_SimdjsonDomBaseline") / payloads);
    inferscope::bench::print_ratio("whole relay vs memcpy, per event", r.time("BM_SseRelayStream") / kEvents,
                                   r.time("BM_MemcpyForwardBaseline") / kEvents);
  });
}
