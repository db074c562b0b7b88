// Integration tests of the gateway's proxy path against real upstreams on loopback: inferscope
// serve in-process and a small scripted server (tests/loadgen/test_llm_server.h) replaying a
// recorded llama.cpp stream. Covers pass-through exactness, include_usage handling, latency
// agreement with the upstream's own histograms, the admission queue and cancellation.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <future>
#include <sstream>

#include "gateway/gateway_test_support.h"
#include "loadgen/test_llm_server.h"

namespace inferscope::gateway {
namespace {

using namespace testing;  // NOLINT
using loadgen::testing::Behavior;
using loadgen::testing::TestLlmServer;
using loadgen::testing::TestServerOptions;
using serve::testing::chat_body;
using serve::testing::fast_options;
using serve::testing::RawStream;
using serve::testing::sse_payloads;
using serve::testing::TestServer;
using serve::testing::wait_until;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// without_ids drops the per-response fields (id, created) so two answers can be compared.
nlohmann::json without_ids(const std::string& payload) {
  auto json = nlohmann::json::parse(payload, nullptr, false);
  if (json.is_discarded()) return payload;  // [DONE]
  if (json.is_object()) {
    json.erase("id");
    json.erase("created");
  }
  return json;
}

// Tests that a streamed and a whole answer from serve reach the client unchanged (content,
// order, finish reason; only id/created differ between two runs), that the usage chunk the
// gateway asked for is stripped, and that the gateway still counts the exact tokens.
TEST(GatewayProxyTest, ServeAnswersPassThroughUnchanged) {
  TestServer serve(fast_options());
  ASSERT_TRUE(serve.ok());
  TestGateway gw(config_for({url(serve.port())}));
  ASSERT_TRUE(gw.ok());
  for (bool stream : {true, false}) {
    const std::string body = chat_body("tell me a story", 12, stream, {{"seed", 7}});
    const HttpReply direct = serve.post("/v1/chat/completions", body);
    const HttpReply proxied = gw.post("/v1/chat/completions", body);
    ASSERT_EQ(direct.status, 200) << direct.body;
    ASSERT_EQ(proxied.status, 200) << proxied.body;
    EXPECT_EQ(proxied.header("X-Accel-Buffering"), "no");
    if (stream) {
      const auto a = sse_payloads(direct.body), b = sse_payloads(proxied.body);
      ASSERT_EQ(a.size(), b.size()) << proxied.body;
      for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(without_ids(a[i]), without_ids(b[i])) << i;
      EXPECT_EQ(proxied.body.find("\"usage\""), std::string::npos) << "the injected usage chunk leaked";
    } else {
      EXPECT_EQ(without_ids(direct.body), without_ids(proxied.body));
    }
  }
  const auto m = gw.scrape_after(2);
  EXPECT_EQ(metric(m, "inferscope_generation_tokens_total"), 24);  // 12 + 12, from usage
  EXPECT_EQ(metric(m, "inferscope_gateway_usage_estimated_total"), 0);
  EXPECT_EQ(metric(m, "inferscope_requests_total", {{"status_class", "2xx"}}), 2);
  EXPECT_EQ(metric(m, "inferscope_gateway_upstream_connections_total", {{"connection", "reused"}}), 1);
}

// Tests that a recorded llama.cpp stream (no role chunk, usage on the final choices chunk)
// passes byte for byte, and that a whole JSON body does too.
TEST(GatewayProxyTest, RecordedLlamaCppStreamIsByteExact) {
  const std::string recorded = read_file(INFERSCOPE_SOURCE_DIR "/tests/gateway/testdata/llamacpp-b4748-chat-stream.sse");
  ASSERT_FALSE(recorded.empty());
  TestServerOptions so;
  so.behavior = Behavior::kReplay;
  so.replay = recorded;
  TestLlmServer upstream(so);
  TestGateway gw(config_for({upstream.base_url()}));
  ASSERT_TRUE(gw.ok());
  const HttpReply r = gw.post("/v1/chat/completions", R"({"model":"tiny","stream":true,"messages":[]})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, recorded);
  const auto m = gw.scrape_after(1);
  EXPECT_EQ(metric(m, "inferscope_generation_tokens_total"), 64);
  EXPECT_EQ(metric(m, "inferscope_prompt_tokens_total"), 71);
  EXPECT_EQ(metric(m, "inferscope_requests_total", {{"finish_reason", "length"}}), 1);

  TestLlmServer whole({});
  TestGateway gw2(config_for({whole.base_url()}));
  const std::string body = R"({"model":"x","messages":[]})";
  const HttpReply direct = request(whole.port(), http::verb::post, "/v1/chat/completions", body);
  const HttpReply proxied = gw2.post("/v1/chat/completions", body);
  EXPECT_EQ(proxied.status, 200);
  EXPECT_EQ(proxied.body, direct.body);
}

// Tests that a stream without any usage is counted by content events and says so.
TEST(GatewayProxyTest, StreamWithoutUsageIsCountedFromEvents) {
  TestServerOptions so;
  so.usage = false;
  so.tokens = 6;
  TestLlmServer upstream(so);
  TestGateway gw(config_for({upstream.base_url()}));
  const HttpReply r = gw.post("/v1/chat/completions", R"({"model":"x","stream":true})");
  ASSERT_EQ(r.status, 200);
  const auto m = gw.scrape_after(1);
  EXPECT_EQ(metric(m, "inferscope_generation_tokens_total"), 6);
  EXPECT_EQ(metric(m, "inferscope_gateway_usage_estimated_total"), 1);
}

// Tests that at low load the gateway's TTFT and E2E means agree with serve's own within 2 ms.
// Two warm-up requests (connection set up, caches warm) are left out of both sides' means.
TEST(GatewayProxyTest, TtftAndE2eAgreeWithServe) {
  TestServer serve(fast_options());
  ASSERT_TRUE(serve.ok());
  TestGateway gw(config_for({url(serve.port())}));
  ASSERT_TRUE(gw.ok());
  auto run = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const HttpReply r = gw.post("/v1/chat/completions", chat_body("hello there", 16, true, {{"seed", i}}));
      ASSERT_EQ(r.status, 200);
    }
  };
  // 40 requests: one delayed by a busy machine moves the mean a quarter as much as among 10.
  constexpr int kWarmup = 2, kRequests = 40;
  run(0, kWarmup);
  const auto g0 = gw.scrape_after(kWarmup);
  const auto s0 = serve.scrape();
  run(kWarmup, kWarmup + kRequests);
  const auto g1 = gw.scrape_after(kWarmup + kRequests);
  const auto s1 = serve.scrape();
  auto mean = [](const metrics::ParsedExposition& before, const metrics::ParsedExposition& after, const char* family) {
    const std::string name(family);
    return (metric(after, name + "_sum") - metric(before, name + "_sum")) /
           (metric(after, name + "_count") - metric(before, name + "_count"));
  };
  ASSERT_EQ(metric(g1, "inferscope_time_to_first_token_seconds_count"), kWarmup + kRequests);
  const double ttft_gap = mean(g0, g1, "inferscope_time_to_first_token_seconds") -
                          mean(s0, s1, "inferscope_time_to_first_token_seconds");
  const double e2e_gap = mean(g0, g1, "inferscope_request_duration_seconds") -
                         mean(s0, s1, "inferscope_request_duration_seconds");
  EXPECT_GE(ttft_gap, -0.0005);
  EXPECT_LT(ttft_gap, 0.002) << "gateway TTFT mean minus serve's";
  EXPECT_GE(e2e_gap, -0.0005);
  EXPECT_LT(e2e_gap, 0.002) << "gateway e2e mean minus serve's";
  EXPECT_EQ(metric(g1, "inferscope_stage_duration_seconds_count", {{"stage", "upstream_ttft"}}), kWarmup + kRequests);
  EXPECT_EQ(metric(g1, "inferscope_stage_duration_seconds_count", {{"stage", "gateway_queue"}}), kWarmup + kRequests);
  EXPECT_GT(metric(g1, "gen_ai_client_operation_duration_seconds_count"), 0);
}

// Tests the admission queue: one slot, one queue place; a third request is 429 at once and the
// queued one is 503 after the queue timeout, both with Retry-After and OpenAI error JSON.
TEST(GatewayProxyTest, QueueFullIs429AndQueueTimeoutIs503) {
  TestServerOptions so;
  so.tokens = 40;
  so.itl = std::chrono::milliseconds(50);  // a 2 s stream holds the only slot
  TestLlmServer upstream(so);
  GatewayConfig c = config_for({upstream.base_url()});
  c.max_concurrency = 1;
  c.max_queue = 1;
  c.queue_timeout = std::chrono::milliseconds(400);
  TestGateway gw(std::move(c));
  ASSERT_TRUE(gw.ok());
  const std::string body = R"({"model":"x","stream":true})";
  RawStream holder(gw.port(), "/v1/chat/completions", body);
  ASSERT_TRUE(holder.read_until("data: "));
  auto queued = std::async(std::launch::async, [&] { return gw.post("/v1/chat/completions", body); });
  ASSERT_TRUE(wait_until([&] { return metric(gw.scrape(), "inferscope_gateway_queued_requests") == 1; }));
  const HttpReply full = gw.post("/v1/chat/completions", body);
  EXPECT_EQ(full.status, 429) << full.body;
  EXPECT_EQ(full.header("Retry-After"), "1");
  EXPECT_NE(full.body.find("\"rate_limit_error\""), std::string::npos) << full.body;
  const HttpReply timed_out = queued.get();
  EXPECT_EQ(timed_out.status, 503) << timed_out.body;
  EXPECT_EQ(timed_out.header("Retry-After"), "1");
  EXPECT_NE(timed_out.body.find("queue timeout"), std::string::npos) << timed_out.body;
  const auto m = gw.scrape_after(2);
  EXPECT_EQ(metric(m, "inferscope_gateway_errors_total", {{"kind", "queue_full"}}), 1);
  EXPECT_EQ(metric(m, "inferscope_gateway_errors_total", {{"kind", "queue_timeout"}}), 1);
  EXPECT_EQ(metric(m, "inferscope_stage_duration_seconds_count", {{"stage", "gateway_queue"}}), 2);
  EXPECT_EQ(upstream.requests(), 1);
}

// Tests that a client hanging up cancels the upstream request at once, streaming (after the
// first byte) and not streaming (before it): serve counts both as aborts.
TEST(GatewayProxyTest, ClientDisconnectAbortsUpstream) {
  serve::ServerOptions so = fast_options();
  so.engine.time_scale = 1;  // 500 tokens take seconds: only a cancellation ends them early
  TestServer serve(so);
  ASSERT_TRUE(serve.ok());
  TestGateway gw(config_for({url(serve.port())}));
  ASSERT_TRUE(gw.ok());
  auto aborts = [&] {
    return metric(serve.scrape(), "inferscope_requests_total", {{"finish_reason", "abort"}});
  };
  {
    RawStream stream(gw.port(), "/v1/chat/completions", chat_body("go on", 500, true));
    ASSERT_TRUE(stream.read_until("data: "));
    stream.close();
  }
  EXPECT_TRUE(wait_until([&] { return aborts() >= 1; }, std::chrono::seconds(5))) << aborts();
  {
    RawStream whole(gw.port(), "/v1/chat/completions", chat_body("go on", 500, false));
    ASSERT_TRUE(wait_until([&] { return metric(serve.scrape(), "inferscope_requests_in_flight") >= 1; }));
    whole.close();
  }
  EXPECT_TRUE(wait_until([&] { return aborts() >= 2; }, std::chrono::seconds(5))) << aborts();
  EXPECT_TRUE(wait_until([&] {
    return metric(gw.scrape(), "inferscope_gateway_errors_total", {{"kind", "client_disconnect"}}) == 2;
  }));
}

// Tests that a graceful stop lets an in-flight stream finish ([DONE] reaches the client) while
// the listener is already closed.
TEST(GatewayProxyTest, StopDrainsInFlightStreams) {
  TestServerOptions so;
  so.tokens = 10;
  so.itl = std::chrono::milliseconds(50);
  TestLlmServer upstream(so);
  TestGateway gw(config_for({upstream.base_url()}));
  ASSERT_TRUE(gw.ok());
  RawStream stream(gw.port(), "/v1/chat/completions", R"({"model":"x","stream":true})");
  ASSERT_TRUE(stream.read_until("data: "));
  std::thread stopper([&] { gw.gateway().stop(std::chrono::seconds(10)); });
  EXPECT_TRUE(stream.read_until("data: [DONE]")) << stream.seen();
  stopper.join();
}

// Tests that /v1/models merges the upstreams' lists and that unknown routes are 404 JSON.
TEST(GatewayProxyTest, ModelsAreMergedAndUnknownRoutesAre404) {
  serve::ServerOptions a = fast_options();
  a.model_names = {"m1", "shared"};
  serve::ServerOptions b = fast_options();
  b.model_names = {"m2", "shared"};
  TestServer sa(a), sb(b);
  TestGateway gw(config_for({url(sa.port()), url(sb.port())}));
  ASSERT_TRUE(gw.ok());
  const HttpReply models = request(gw.port(), http::verb::get, "/v1/models");
  ASSERT_EQ(models.status, 200) << models.body;
  std::vector<std::string> ids;
  const auto listed = nlohmann::json::parse(models.body);
  for (const auto& m : listed["data"]) ids.push_back(m["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"m1", "shared", "m2"})) << models.body;
  const HttpReply missing = request(gw.port(), http::verb::get, "/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("\"error\""), std::string::npos);
}

}  // namespace
}  // namespace inferscope::gateway
