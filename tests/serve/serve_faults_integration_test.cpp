// Integration tests that each fault set through POST /admin/faults moves the stage it should and
// leaves the others alone, read from inferscope_stage_duration_seconds before and after. Ratios
// are wide (the machine is shared and noisy) and relative to the same server's baseline.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "serve_test_support.h"

namespace inferscope::serve::testing {
namespace {

using StageMeans = std::map<std::string, double>;

class ServeFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o = fast_options();
    o.engine.time_scale = 10;
    o.enable_admin = true;
    server_ = std::make_unique<TestServer>(o);
    ASSERT_TRUE(server_->ok());
  }

  // window sends `n` streaming requests (one at a time, or all at once) and returns each stage's
  // mean over just those requests.
  StageMeans window(int prompt_words, bool concurrent = false, int n = 4) {
    auto before = server_->scrape();
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      auto send = [this, prompt_words, i] {
        // A unique head defeats prefix caching, which would otherwise hide prefill cost.
        auto body = chat_body("v" + std::to_string(i) + "r" + std::to_string(round_) + words(prompt_words),
                              8, true, {{"ignore_eos", true}});
        EXPECT_EQ(server_->post("/v1/chat/completions", body).status, 200);
      };
      if (concurrent) threads.emplace_back(send); else send();
    }
    for (auto& t : threads) t.join();
    ++round_;
    auto after = server_->scrape();
    StageMeans means;
    for (const char* stage : {"preprocess", "dependency", "queue", "prefill", "decode", "send"}) {
      means[stage] = stage_mean_between(before, after, stage);
    }
    return means;
  }

  void set_fault(const std::string& json) {
    HttpReply r = server_->post("/admin/faults", json);
    ASSERT_EQ(r.status, 200) << r.body;
  }

  std::unique_ptr<TestServer> server_;
  int round_ = 0;
};

std::string show(const StageMeans& m) {
  std::string out;
  for (auto& [stage, mean] : m) out += stage + "=" + std::to_string(mean * 1000) + "ms ";
  return out;
}

// Tests that decode_slowdown multiplies decode time and leaves prefill, queue and preprocess.
TEST_F(ServeFaultsTest, DecodeSlowdownMovesDecode) {
  auto base = window(50);
  set_fault(R"({"decode_slowdown": 6})");
  auto slow = window(50);
  EXPECT_GT(slow["decode"], 3 * base["decode"]) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["prefill"], 2 * base["prefill"] + 0.002) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["queue"] + slow["preprocess"], 0.25 * slow["decode"]) << show(slow);
}

// Tests that prefill_slowdown multiplies prefill time (long prompts) and leaves decode.
TEST_F(ServeFaultsTest, PrefillSlowdownMovesPrefill) {
  auto base = window(2000);
  set_fault(R"({"prefill_slowdown": 6})");
  auto slow = window(2000);
  EXPECT_GT(slow["prefill"], 2.5 * base["prefill"]) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["decode"], 2 * base["decode"] + 0.002) << show(base) << "| " << show(slow);
}

// Tests that preprocess_slowdown adds to preprocess only.
TEST_F(ServeFaultsTest, PreprocessSlowdownMovesPreprocess) {
  auto base = window(50);
  set_fault(R"({"preprocess_slowdown": {"factor": 1, "add_ms": 300}})");  // 30 ms real at x10
  auto slow = window(50);
  EXPECT_GT(slow["preprocess"], 0.015) << show(slow);
  EXPECT_GT(slow["preprocess"], 5 * base["preprocess"]) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["decode"], 2 * base["decode"] + 0.002) << show(base) << "| " << show(slow);
}

// Tests that a dependency fault shows up as stage dependency and nowhere else.
TEST_F(ServeFaultsTest, DependencyAddsDependencyStage) {
  auto base = window(50);
  set_fault(R"({"dependency": {"name": "embedding", "mean_ms": 300, "p99_ms": 300}})");
  auto slow = window(50);
  EXPECT_GT(slow["dependency"], 0.015) << show(slow);
  EXPECT_GT(slow["dependency"], 5 * base["dependency"] + 0.001) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["preprocess"], 0.5 * slow["dependency"]) << show(slow);
  EXPECT_LT(slow["queue"], 0.5 * slow["dependency"]) << show(slow);
}

// Tests that network_delay_ms shows up in stage send and leaves the engine's decode alone.
TEST_F(ServeFaultsTest, NetworkDelayMovesSend) {
  auto base = window(50);
  set_fault(R"({"network_delay_ms": 300})");
  auto slow = window(50);
  EXPECT_GT(slow["send"], 0.015) << show(slow);
  EXPECT_GT(slow["send"], 5 * base["send"]) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["decode"], 2 * base["decode"] + 0.002) << show(base) << "| " << show(slow);
}

// Tests that worker_stall (no scheduling) shows up as queue time, and in the engine's count of
// time held without a step: none before the fault, at most the one 150 ms pause with it.
TEST_F(ServeFaultsTest, WorkerStallMovesQueue) {
  auto held = [&] { return metric(server_->scrape(), "inferscope_engine_held_seconds_total"); };
  const double held_at_start = held();
  ASSERT_GE(held_at_start, 0) << "inferscope_engine_held_seconds_total is not exposed";
  auto base = window(50, true);
  const double held_base = held();
  set_fault(R"({"worker_stall": {"for_ms": 1500, "every_s": 1000}})");  // 150 ms real, now
  auto slow = window(50, true);
  const double held_slow = held();
  EXPECT_GT(slow["queue"], 0.03) << show(slow);
  EXPECT_GT(slow["queue"], 5 * base["queue"]) << show(base) << "| " << show(slow);
  EXPECT_LT(slow["preprocess"], 0.25 * slow["queue"]) << show(slow);
  EXPECT_LT(held_base - held_at_start, 0.005);
  EXPECT_GT(held_slow - held_base, 0.02);
  EXPECT_LT(held_slow - held_base, 0.16);
}

// Tests speculative decoding end to end: a server with 3 draft tokens at acceptance 0.8 exports
// vLLM's spec_decode series (per position "0".."2", non-increasing) and inferscope's own, streams
// one chunk per engine step (fewer chunks than tokens), and the spec_acceptance fault (0.05)
// lowers the accepted share and stretches decode at the same outputs.
TEST(ServeSpeculativeTest, SeriesChunksAndAcceptanceFault) {
  ServerOptions o = fast_options();
  o.engine.time_scale = 10;
  o.enable_admin = true;
  o.engine.speculative_tokens = 3;
  o.engine.speculative_acceptance = 0.8;
  TestServer server(o);
  ASSERT_TRUE(server.ok());
  auto window = [&](int round) {
    auto before = server.scrape();
    std::size_t chunks = 0;
    for (int i = 0; i < 4; ++i) {
      auto body = chat_body("s" + std::to_string(round) + "r" + std::to_string(i) + words(40), 64, true, {{"ignore_eos", true}});
      HttpReply r = server.post("/v1/chat/completions", body);
      EXPECT_EQ(r.status, 200);
      chunks += sse_payloads(r.body).size();
    }
    auto after = server.scrape();
    return std::tuple{before, after, chunks, stage_mean_between(before, after, "decode")};
  };
  auto [before, after, chunks, decode_fast] = window(0);
  const double drafts = metric(after, "vllm:spec_decode_num_draft_tokens_total");
  const double accepted = metric(after, "vllm:spec_decode_num_accepted_tokens_total");
  ASSERT_GT(drafts, 0);
  EXPECT_GT(accepted / drafts, 0.4) << accepted << " / " << drafts;
  EXPECT_GT(metric(after, "vllm:spec_decode_num_drafts_total"), 0);
  double previous = accepted + 1;
  for (const char* position : {"0", "1", "2"}) {
    const double at = metric(after, "vllm:spec_decode_num_accepted_tokens_per_pos_total", {{"position", position}});
    EXPECT_GE(at, 0) << position;
    EXPECT_LE(at, previous) << position;
    previous = at;
  }
  EXPECT_EQ(metric(after, "inferscope_spec_decode_accepted_tokens_total"), accepted);
  EXPECT_EQ(metric(after, "inferscope_spec_decode_draft_tokens_total"), drafts);
  EXPECT_LT(chunks, 4u * 64u) << "several tokens per chunk when drafts are accepted";

  HttpReply set = server.post("/admin/faults", R"({"spec_acceptance": 0.05})");
  ASSERT_EQ(set.status, 200) << set.body;
  auto [before2, after2, chunks2, decode_slow] = window(1);
  const double drafts2 = metric(after2, "vllm:spec_decode_num_draft_tokens_total") - drafts;
  const double accepted2 = metric(after2, "vllm:spec_decode_num_accepted_tokens_total") - accepted;
  EXPECT_LT(accepted2 / drafts2, 0.15) << accepted2 << " / " << drafts2;
  EXPECT_GT(decode_slow, 1.5 * decode_fast) << decode_fast << " -> " << decode_slow;
  EXPECT_GT(chunks2, chunks);
}

// Tests that a server without speculation exports no spec_decode series (as vLLM without a
// speculative config).
TEST(ServeSpeculativeTest, NoSeriesWhenOff) {
  TestServer server(fast_options());
  ASSERT_TRUE(server.ok());
  auto e = server.scrape();
  EXPECT_EQ(metric(e, "vllm:spec_decode_num_drafts_total"), -1);
  EXPECT_EQ(metric(e, "inferscope_spec_decode_draft_tokens_total"), -1);
}

}  // namespace
}  // namespace inferscope::serve::testing
