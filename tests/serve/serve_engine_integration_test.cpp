// Integration tests of engine behaviour as seen through HTTP and /metrics: TTFT grows with prompt
// length and with queueing, KV pressure preempts, a client hanging up frees its sequence and KV
// blocks and is counted as abort, and every metric vLLM's dashboard reads is exposed. Comparisons
// are relative with wide margins, never absolute times.
#include <gtest/gtest.h>

#include <thread>

#include "serve_test_support.h"
#include "serve/serve_metrics.h"

namespace inferscope::serve::testing {
namespace {

// ttft_mean_between returns the mean vLLM TTFT of the requests between two scrapes.
double ttft_mean_between(const metrics::ParsedExposition& a, const metrics::ParsedExposition& b) {
  double sum = metric(b, "vllm:time_to_first_token_seconds_sum") - metric(a, "vllm:time_to_first_token_seconds_sum");
  double count = metric(b, "vllm:time_to_first_token_seconds_count") - metric(a, "vllm:time_to_first_token_seconds_count");
  return count > 0 ? sum / count : 0;
}

// post_concurrently sends `bodies` at once, one connection each, and returns the statuses.
std::vector<int> post_concurrently(TestServer& s, const std::vector<std::string>& bodies) {
  std::vector<int> statuses(bodies.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    threads.emplace_back([&, i] { statuses[i] = s.post("/v1/chat/completions", bodies[i]).status; });
  }
  for (auto& t : threads) t.join();
  return statuses;
}

// Tests that a long prompt has a much longer TTFT than a short one (prefill cost per token).
TEST(ServeEngineTest, TtftGrowsWithPromptLength) {
  ServerOptions o = fast_options();
  o.engine.time_scale = 2;
  o.engine.enable_prefix_caching = false;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  auto run = [&](int prompt_words) {
    auto before = s.scrape();
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(s.post("/v1/chat/completions", chat_body(words(prompt_words) + std::to_string(i), 2)).status, 200);
    }
    return ttft_mean_between(before, s.scrape());
  };
  const double short_ttft = run(10);
  const double long_ttft = run(6000);
  EXPECT_GT(short_ttft, 0);
  EXPECT_GT(long_ttft, 3 * short_ttft) << "short " << short_ttft << " long " << long_ttft;
}

// Tests that with max_num_seqs=1 concurrent requests queue, so their mean TTFT and queue stage
// are far above a lone request's.
TEST(ServeEngineTest, TtftGrowsWithQueueing) {
  ServerOptions o = fast_options();
  o.engine.time_scale = 4;
  o.engine.max_num_seqs = 1;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  const std::string body = chat_body("queue me", 24, false, {{"ignore_eos", true}});
  auto a = s.scrape();
  ASSERT_EQ(s.post("/v1/chat/completions", body).status, 200);
  auto b = s.scrape();
  for (int status : post_concurrently(s, std::vector<std::string>(5, body))) EXPECT_EQ(status, 200);
  auto c = s.scrape();
  const double alone = ttft_mean_between(a, b), queued = ttft_mean_between(b, c);
  EXPECT_GT(queued, 3 * alone) << "alone " << alone << " queued " << queued;
  EXPECT_GT(stage_mean_between(b, c, "queue"), 3 * stage_mean_between(a, b, "queue"));
}

// Tests that cutting KV capacity below what concurrent requests need causes preemptions.
TEST(ServeEngineTest, KvPressurePreempts) {
  ServerOptions o = fast_options();
  o.engine.kv_capacity_tokens = 512;
  o.engine.max_model_len = 512;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  std::vector<std::string> bodies;
  for (int i = 0; i < 6; ++i) {
    bodies.push_back(chat_body(words(40) + std::to_string(i), 200, false, {{"ignore_eos", true}}));
  }
  for (int status : post_concurrently(s, bodies)) EXPECT_EQ(status, 200);
  EXPECT_GT(metric(s.scrape(), "vllm:num_preemptions_total"), 0);
}

// Tests that a client closing its socket mid-stream frees the sequence and its KV blocks at once
// and is counted as finished_reason="abort".
TEST(ServeEngineTest, DisconnectFreesSequence) {
  ServerOptions o = fast_options();
  o.engine.time_scale = 1;
  TestServer s(o);
  ASSERT_TRUE(s.ok());
  RawStream stream(s.port(), "/v1/chat/completions", chat_body(words(200), 4000, true, {{"ignore_eos", true}}));
  ASSERT_TRUE(stream.read_until("\"content\":\"")) << stream.seen();  // generating now
  // The engine publishes its stats after the step whose tokens the client may already have read:
  // wait for that publish instead of reading stats at once.
  auto [generating, reached] = s.server().engine().wait_stats(
      [](const EngineStats& stats) { return stats.running == 1 && stats.kv_usage > 0; });
  EXPECT_TRUE(reached) << "running " << generating.running << " kv_usage " << generating.kv_usage;
  stream.close();
  auto [freed, freed_reached] = s.server().engine().wait_stats([](const EngineStats& stats) {
    return stats.running == 0 && stats.waiting == 0 && stats.kv_blocks_used == 0;
  });
  EXPECT_TRUE(freed_reached) << "running " << freed.running << " blocks " << freed.kv_blocks_used;
  // 4000 tokens at ~6 ms each would take ~24 s: the abort, not the end, freed it.
  ASSERT_TRUE(s.server().serve_metrics().wait_requests_recorded(1, std::chrono::seconds(20)));
  EXPECT_EQ(metric(s.scrape(), "vllm:request_success_total", {{"finished_reason", "abort"}}), 1);
  EXPECT_EQ(metric(s.scrape(), "vllm:request_success_total", {{"finished_reason", "length"}}), 0);
}

// Tests that every metric of vLLM's example Grafana dashboard is exposed with model_name.
TEST(ServeEngineTest, VllmDashboardMetricsPresent) {
  TestServer s(fast_options());
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s.post("/v1/chat/completions", chat_body("fill the histograms", 4, true)).status, 200);
  auto e = s.scrape();
  for (const char* name :
       {"vllm:e2e_request_latency_seconds_count", "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
        "vllm:inter_token_latency_seconds_count", "vllm:num_requests_running", "vllm:num_requests_waiting",
        "vllm:time_to_first_token_seconds_count", "vllm:kv_cache_usage_perc", "vllm:request_prompt_tokens_count",
        "vllm:request_generation_tokens_count", "vllm:request_success_total", "vllm:request_queue_time_seconds_sum",
        "vllm:request_prefill_time_seconds_sum", "vllm:request_decode_time_seconds_sum",
        "vllm:request_max_num_generation_tokens_sum"}) {
    EXPECT_NE(metrics::find_sample(e, name, {{"model_name", "sim-a"}}), nullptr) << name;
  }
  EXPECT_GE(metric(e, "vllm:e2e_request_latency_seconds_count", {{"model_name", "sim-a"}}), 1);
}

}  // namespace
}  // namespace inferscope::serve::testing
