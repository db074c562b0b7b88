// Integration tests of `serve --data-parallel-size N`: requests spread over the ranks by vLLM's
// least-loaded rule, every vllm:* series carries engine="<rank>", the inferscope_* series add the
// ranks up, and the engine_slowdown fault slows the one rank it names (read from that rank's own
// vllm:e2e_request_latency_seconds against the other ranks' of the same run).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "serve_test_support.h"

namespace inferscope::serve::testing {
namespace {

ServerOptions dp_options(std::uint32_t ranks) {
  ServerOptions o = fast_options();
  o.engine.time_scale = 10;
  o.enable_admin = true;
  o.data_parallel_size = ranks;
  return o;
}

// mean_e2e returns rank `engine`'s mean vllm:e2e_request_latency_seconds between two scrapes.
double dp_mean_e2e(const metrics::ParsedExposition& before, const metrics::ParsedExposition& after,
                   const std::string& engine) {
  const double count = metric(after, "vllm:e2e_request_latency_seconds_count", {{"engine", engine}}) -
                       std::max(0.0, metric(before, "vllm:e2e_request_latency_seconds_count", {{"engine", engine}}));
  const double sum = metric(after, "vllm:e2e_request_latency_seconds_sum", {{"engine", engine}}) -
                     std::max(0.0, metric(before, "vllm:e2e_request_latency_seconds_sum", {{"engine", engine}}));
  return count > 0 ? sum / count : -1;
}

// Tests that idle ranks take turns (the rotating start breaks the ties), that every rank has its
// own vllm:* children, its own engine and its own simulated GPU, and that inferscope_* series
// are the sums over the ranks.
TEST(ServeDataParallelTest, IdleRanksTakeTurnsAndEverySeriesHasItsRank) {
  TestServer server(dp_options(4));
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(server.server().engine_count(), 4u);
  for (int i = 0; i < 8; ++i) {
    HttpReply r = server.post("/v1/chat/completions", chat_body("q" + std::to_string(i) + words(20), 4, false,
                                                                {{"ignore_eos", true}}));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  auto e = server.scrape();
  double prompt_sum = 0;
  for (const std::string rank : {"0", "1", "2", "3"}) {
    EXPECT_EQ(metric(e, "vllm:e2e_request_latency_seconds_count", {{"engine", rank}}), 2.0) << rank;
    EXPECT_EQ(metric(e, "vllm:request_success_total", {{"engine", rank}, {"finished_reason", "length"}}), 2.0) << rank;
    EXPECT_GE(metric(e, "vllm:num_requests_running", {{"engine", rank}}), 0.0) << rank;
    EXPECT_GT(metric(e, "vllm:iteration_tokens_total_count", {{"engine", rank}}), 0.0) << rank;
    EXPECT_GE(metric(e, "DCGM_FI_DEV_FB_USED", {{"gpu", rank}}), 0.0) << rank;
    const double prompt = metric(e, "vllm:prompt_tokens_total", {{"engine", rank}});
    EXPECT_GT(prompt, 0) << rank;
    prompt_sum += prompt;
    EXPECT_EQ(server.server().engine(static_cast<std::uint32_t>(std::stoi(rank))).stats().generation_tokens_total, 8u)
        << rank;
  }
  EXPECT_EQ(metric(e, "vllm:e2e_request_latency_seconds_count", {{"engine", "4"}}), -1);
  EXPECT_EQ(metric(e, "inferscope_kv_cache_blocks", {{"state", "capacity"}}),
            4.0 * static_cast<double>(server.server().engine(0).stats().kv_blocks_total));
  EXPECT_EQ(metric(e, "inferscope_requests_total"), 8.0);
  EXPECT_GT(prompt_sum, 0);
}

// Tests that a busy rank is passed over: with rank 0 holding long streams, new requests go to
// the other ranks (least loaded by waiting*4 + running), never to rank 0.
TEST(ServeDataParallelTest, BusyRankIsPassedOver) {
  TestServer server(dp_options(2));
  ASSERT_TRUE(server.ok());
  // Two long streams: the first goes to rank 0 (idle ranks, start 0), the second to rank 1.
  std::vector<std::unique_ptr<RawStream>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<RawStream>(server.port(), "/v1/chat/completions",
                                               chat_body("h" + std::to_string(i) + words(10), 4000, true,
                                                         {{"ignore_eos", true}})));
    ASSERT_TRUE(held.back()->read_until("data: "));
  }
  // Both run one: a third long stream makes one of them (the tie's rotating start) run two.
  auto [s0, ok0] = server.server().engine(0).wait_stats([](const EngineStats& s) { return s.running == 1; });
  auto [s1, ok1] = server.server().engine(1).wait_stats([](const EngineStats& s) { return s.running == 1; });
  ASSERT_TRUE(ok0 && ok1) << s0.running << " " << s1.running;
  held.push_back(std::make_unique<RawStream>(server.port(), "/v1/chat/completions",
                                             chat_body("h2" + words(10), 4000, true, {{"ignore_eos", true}})));
  ASSERT_TRUE(held.back()->read_until("data: "));
  // The first chunk can reach the client before its rank publishes the third sequence as running,
  // and no one engine's wait_stats can say which rank took it: poll the two ranks' sum.
  ASSERT_TRUE(wait_until([&] {
    return server.server().engine(0).stats().running + server.server().engine(1).stats().running == 3;
  }));
  // Now one rank runs two and the other one: the next short request goes to the one.
  const std::uint32_t busy = server.server().engine(0).stats().running == 2 ? 0 : 1;
  ASSERT_EQ(server.server().engine(busy).stats().running, 2u);
  auto before = server.scrape();
  HttpReply r = server.post("/v1/chat/completions", chat_body("short" + words(5), 2, false, {{"ignore_eos", true}}));
  ASSERT_EQ(r.status, 200) << r.body;
  auto after = server.scrape();
  const std::string quiet = busy == 0 ? "1" : "0";
  EXPECT_EQ(metric(after, "vllm:e2e_request_latency_seconds_count", {{"engine", quiet}}) -
                std::max(0.0, metric(before, "vllm:e2e_request_latency_seconds_count", {{"engine", quiet}})),
            1.0);
  EXPECT_EQ(metric(after, "vllm:e2e_request_latency_seconds_count", {{"engine", std::to_string(busy)}}),
            std::max(0.0, metric(before, "vllm:e2e_request_latency_seconds_count", {{"engine", std::to_string(busy)}})));
}

// Tests engine_slowdown: rank 2 of 4 slowed x6 answers several times slower than the other
// ranks of the same run, which keep their speed; a rank the server does not run is refused.
TEST(ServeDataParallelTest, EngineSlowdownSlowsTheNamedRankOnly) {
  TestServer server(dp_options(4));
  ASSERT_TRUE(server.ok());
  HttpReply bad = server.post("/admin/faults", R"({"engine_slowdown": {"engine": 4, "factor": 6}})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("engine_slowdown.engine: rank 4 is not served"), std::string::npos) << bad.body;
  HttpReply set = server.post("/admin/faults", R"({"engine_slowdown": {"engine": 2, "factor": 6}})");
  ASSERT_EQ(set.status, 200) << set.body;
  auto before = server.scrape();
  for (int i = 0; i < 8; ++i) {
    HttpReply r = server.post("/v1/chat/completions", chat_body("w" + std::to_string(i) + words(200), 16, false,
                                                                {{"ignore_eos", true}}));
    ASSERT_EQ(r.status, 200) << r.body;
  }
  auto after = server.scrape();
  const double slow = dp_mean_e2e(before, after, "2");
  for (const std::string rank : {"0", "1", "3"}) {
    const double fast = dp_mean_e2e(before, after, rank);
    ASSERT_GT(fast, 0) << rank;
    EXPECT_GT(slow, 3 * fast) << "rank 2 " << slow << " s vs rank " << rank << " " << fast << " s";
  }
  EXPECT_EQ(server.server().engine(2).faults().decode_slowdown, 6);
  EXPECT_EQ(server.server().engine(1).faults().decode_slowdown, 1);
}

// Tests the start-time checks: a size outside 1..64 and a slowed rank beyond the size fail with
// one line naming the flag.
TEST(ServeDataParallelTest, StartRefusesBadSizeAndRank) {
  ServerOptions zero = dp_options(0);
  auto none = Server::start(zero);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("--data-parallel-size must be 1..64"), std::string::npos) << none.error().message;
  ServerOptions two = dp_options(2);
  two.faults.engine_slowdown = {5, 2.0};
  auto beyond = Server::start(two);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("--fault engine_slowdown: rank 5 is not served"), std::string::npos)
      << beyond.error().message;
}

}  // namespace
}  // namespace inferscope::serve::testing
