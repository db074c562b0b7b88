// Integration tests of LoRA adapters in `serve` (--lora-modules, --max-loras): requests name an
// adapter in `model`, adapters beyond the slots wait for one (queue time grows while the batch has
// room), vLLM's vllm:lora_requests_info and inferscope's inferscope_lora_* series report it, and
// the max_loras fault cuts the slots.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "serve_test_support.h"

namespace inferscope::serve::testing {
namespace {

ServerOptions lora_options(std::uint32_t slots) {
  ServerOptions o = fast_options();
  o.engine.time_scale = 10;
  o.enable_admin = true;
  o.lora_modules = {"ad-1", "ad-2", "ad-3", "ad-4"};
  o.engine.max_loras = slots;
  return o;
}

// lora_round sends one streaming request per adapter at once (each holding its adapter for a
// while) and returns the mean queue stage of the round.
double lora_round(TestServer& server, int round) {
  auto before = server.scrape();
  std::vector<std::thread> threads;
  for (int a = 1; a <= 4; ++a) {
    threads.emplace_back([&, a] {
      nlohmann::json extra = {{"model", "ad-" + std::to_string(a)}, {"ignore_eos", true}};
      HttpReply r = server.post("/v1/chat/completions",
                                chat_body("l" + std::to_string(round) + "a" + std::to_string(a) + words(30), 48, true, extra));
      EXPECT_EQ(r.status, 200) << r.body;
      EXPECT_NE(r.body.find("\"model\":\"ad-" + std::to_string(a) + "\""), std::string::npos);
    });
  }
  for (auto& t : threads) t.join();
  return stage_mean_between(before, server.scrape(), "queue");
}

// Tests that adapters are served names (listed with their base model as parent; unknown names
// still 404) and that four adapters on four slots load once each and never wait for a slot.
TEST(ServeLoraTest, AdaptersAreServedAndLoadOnce) {
  TestServer server(lora_options(4));
  ASSERT_TRUE(server.ok());
  HttpReply models = server.get("/v1/models");
  ASSERT_EQ(models.status, 200);
  auto list = nlohmann::json::parse(models.body);
  bool listed = false;
  for (const auto& m : list["data"])
    if (m["id"] == "ad-3") listed = m["parent"] == "sim-a";
  EXPECT_TRUE(listed) << models.body;
  EXPECT_EQ(server.post("/v1/chat/completions", chat_body("x", 4, false, {{"model", "ad-9"}})).status, 404);
  lora_round(server, 0);
  auto e = server.scrape();
  EXPECT_EQ(metric(e, "inferscope_lora_loads_total"), 4.0);
  EXPECT_EQ(metric(e, "inferscope_lora_slots"), 4.0);
  EXPECT_EQ(metric(e, "inferscope_lora_waiting_requests"), 0.0);
  EXPECT_GT(metric(e, "inferscope_lora_load_seconds_total"), 0.0);
  ASSERT_GT(metric(e, "vllm:lora_requests_info", {{"max_lora", "4"}}), 1.0e9);  // a Unix timestamp
  // Requests naming an adapter are labelled with it (a configured name).
  EXPECT_GT(metric(e, "inferscope_requests_total", {{"model", "ad-2"}}), 0.0);
}

// Tests one slot for four adapters in flight: requests wait for the slot (queue time several
// times the four-slot server's), every adapter not resident loads, and vllm:lora_requests_info names the
// waiting adapters while they wait; then the max_loras fault on a four-slot server does the same.
TEST(ServeLoraTest, OneSlotMakesAdaptersWaitAndTheFaultCutsSlots) {
  TestServer wide(lora_options(4));
  ASSERT_TRUE(wide.ok());
  const double queue_wide = lora_round(wide, 1);
  ASSERT_EQ(wide.post("/admin/faults", R"({"max_loras": 1})").status, 200);
  const double queue_cut = lora_round(wide, 2);
  EXPECT_GT(queue_cut, 3 * queue_wide + 0.005) << queue_wide << " -> " << queue_cut;
  auto e = wide.scrape();
  EXPECT_EQ(metric(e, "inferscope_lora_slots"), 1.0);
  // Four loads in the first round; in the second, one slot for four adapters loads at least the
  // three not resident when the slots were cut (the fourth loads again only if its request does
  // not come first: the threads' order decides, so 7 is the bound, not 8).
  EXPECT_GE(metric(e, "inferscope_lora_loads_total"), 7.0);

  TestServer narrow(lora_options(1));
  ASSERT_TRUE(narrow.ok());
  // Hold the slot with one long request of ad-1, then send ad-2: it waits while the batch has room.
  RawStream hold(narrow.port(), "/v1/chat/completions",
                 chat_body("hold" + words(10), 4000, true, {{"model", "ad-1"}, {"ignore_eos", true}}));
  ASSERT_TRUE(hold.read_until("data: "));
  RawStream waiting(narrow.port(), "/v1/chat/completions",
                    chat_body("wait" + words(10), 4, true, {{"model", "ad-2"}, {"ignore_eos", true}}));
  auto [seen, held] = narrow.server().engine().wait_stats(
      [](const EngineStats& s) { return s.lora_waiting_requests == 1 && s.running == 1; });
  ASSERT_TRUE(held) << seen.lora_waiting_requests << " " << seen.running;
  auto e2 = narrow.scrape();
  EXPECT_EQ(metric(e2, "inferscope_lora_waiting_requests"), 1.0);
  EXPECT_GT(metric(e2, "vllm:lora_requests_info",
                   {{"max_lora", "1"}, {"running_lora_adapters", "ad-1"}, {"waiting_lora_adapters", "ad-2"}}),
            1.0e9);
}

// Tests the start-time checks: an adapter named like a model, and --max-loras 0 with adapters.
TEST(ServeLoraTest, StartRefusesBadAdapters) {
  ServerOptions clash = lora_options(1);
  clash.lora_modules = {"sim-a"};
  auto a = Server::start(clash);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("--lora-modules: 'sim-a' is also a --model name"), std::string::npos);
  ServerOptions none = lora_options(0);
  auto b = Server::start(none);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("--max-loras must be >= 1"), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace inferscope::serve::testing
