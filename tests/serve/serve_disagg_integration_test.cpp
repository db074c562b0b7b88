// Integration tests of `serve --prefill-workers N --decode-workers M` (docs/disaggregation.md),
// over real HTTP: the stages of each request add up to its e2e, the KV transfer's time follows
// the prompt and the kv_transfer fault, a pool cut to one worker saturates while the other pool
// idles, route_skew piles requests onto one decode endpoint, every series of the issue-29
// contract is exposed (and no vllm:*), and bad flags and faults fail with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dialect/detect.h"
#include "serve/serve_metrics.h"
#include "serve_test_support.h"
#include "support/temp_dir.h"
#include "support/test_process.h"

namespace inferscope::serve::testing {
namespace {

ServerOptions disagg_options(std::uint32_t prefill, std::uint32_t decode) {
  ServerOptions o = fast_options();
  o.enable_admin = true;
  o.disagg.prefill_workers = prefill;
  o.disagg.decode_workers = decode;
  return o;
}

// disagg_unique_prompt starts each prompt with its own word so no two share a KV block.
std::string disagg_unique_prompt(const std::string& tag, int words_count) { return tag + words(words_count); }

// disagg_post sends one request and waits until the server has recorded it.
void disagg_post(TestServer& server, const std::string& body, std::uint64_t& recorded) {
  HttpReply r = server.post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  ++recorded;
  ASSERT_TRUE(server.server().serve_metrics().wait_requests_recorded(recorded, std::chrono::seconds(20)));
}

double disagg_stage_delta(const metrics::ParsedExposition& a, const metrics::ParsedExposition& b, std::string_view stage) {
  return stage_totals(b, stage).sum - stage_totals(a, stage).sum;
}

double disagg_delta(const metrics::ParsedExposition& a, const metrics::ParsedExposition& b, std::string_view name,
                    metrics::LabelSubset labels = {}) {
  return std::max(0.0, metric(b, name, labels)) - std::max(0.0, metric(a, name, labels));
}

// Tests that one request's stages (route, queue, prefill, kv_transfer, decode and the HTTP ones)
// add up to its e2e, streamed and not, and that route and kv_transfer are observed once each.
TEST(ServeDisaggTest, StagesAddUpToE2ePerRequest) {
  TestServer server(disagg_options(2, 2));
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(server.server().engine_count(), 4u);
  std::uint64_t recorded = 0;
  for (int i = 0; i < 4; ++i) {
    auto before = server.scrape();
    disagg_post(server, chat_body(disagg_unique_prompt("s" + std::to_string(i), 300), 12, i % 2 == 1,
                                  {{"ignore_eos", true}}),
                recorded);
    auto after = server.scrape();
    double stages = 0;
    for (std::string_view stage : {"preprocess", "dependency", "route", "queue", "prefill", "kv_transfer", "decode",
                                   "postprocess", "send"}) {
      stages += disagg_stage_delta(before, after, stage);
    }
    const double e2e = disagg_delta(before, after, "inferscope_request_duration_seconds_sum");
    EXPECT_GT(e2e, 0) << i;
    // Only the moment between preprocessed and handed to the router belongs to no stage.
    EXPECT_LE(stages, e2e + 1e-9) << i;
    EXPECT_NEAR(stages, e2e, 1e-3) << i;
    for (std::string_view stage : {"route", "queue", "prefill", "kv_transfer", "decode"}) {
      EXPECT_EQ(stage_totals(after, stage).count - stage_totals(before, stage).count, 1.0) << stage << " " << i;
      EXPECT_GT(disagg_stage_delta(before, after, stage), 0) << stage << " " << i;
    }
  }
}

// mean_kv_transfer runs `n` requests of `prompt_words` words and returns their mean kv_transfer.
double disagg_mean_kv_transfer(TestServer& server, std::uint64_t& recorded, const std::string& tag, int prompt_words,
                               int n) {
  auto before = server.scrape();
  for (int i = 0; i < n; ++i) {
    disagg_post(server, chat_body(disagg_unique_prompt(tag + std::to_string(i), prompt_words), 2, false,
                                  {{"ignore_eos", true}}),
                recorded);
  }
  return stage_mean_between(before, server.scrape(), "kv_transfer");
}

// Tests that the transfer's time grows with the prompt (bytes / bandwidth) and five-fold under
// the kv_transfer fault, and that its bytes histogram follows the prompt.
TEST(ServeDisaggTest, KvTransferGrowsWithThePromptAndTheFault) {
  ServerOptions o = disagg_options(1, 1);
  o.engine.time_scale = 2;        // transfers of tens of real ms: timer and scheduling noise stays small
  o.disagg.kv_link_gb_per_s = 1;  // slow link: a 1,500-token prompt's KV takes ~0.2 model seconds
  o.disagg.kv_link_latency_ms = 1;
  TestServer server(o);
  ASSERT_TRUE(server.ok());
  std::uint64_t recorded = 0;
  const double short_prompt = disagg_mean_kv_transfer(server, recorded, "a", 100, 3);
  auto before_long = server.scrape();
  const double long_prompt = disagg_mean_kv_transfer(server, recorded, "b", 1500, 3);
  auto after_long = server.scrape();
  EXPECT_GT(long_prompt, 4 * short_prompt) << short_prompt << " " << long_prompt;
  const double bytes = disagg_delta(before_long, after_long, "inferscope_kv_transfer_bytes_sum") / 3;
  const double per_token = server.server().engine(0).profile().kv_bytes_per_token;
  EXPECT_GT(bytes, 1400 * per_token);
  EXPECT_LT(bytes, 1700 * per_token);
  ASSERT_EQ(server.post("/admin/faults", R"({"kv_transfer": 5})").status, 200);
  const double slowed = disagg_mean_kv_transfer(server, recorded, "c", 1500, 3);
  EXPECT_GT(slowed, 3.5 * long_prompt) << long_prompt << " " << slowed;
  EXPECT_LT(slowed, 7 * long_prompt) << long_prompt << " " << slowed;
}

// Tests kv_link: only transfers into the degraded decode worker slow down (route_skew pins the
// requests on one worker or the other).
TEST(ServeDisaggTest, KvLinkSlowsOnlyItsDecodeWorker) {
  ServerOptions o = disagg_options(1, 2);
  o.engine.time_scale = 2;
  o.disagg.kv_link_gb_per_s = 1;
  o.faults.kv_link = KvLink{1, 6};
  TestServer server(o);
  ASSERT_TRUE(server.ok());
  std::uint64_t recorded = 0;
  ASSERT_EQ(server.post("/admin/faults", R"({"route_skew": {"endpoint": "decode-0", "weight": 1}})").status, 200);
  const double healthy = disagg_mean_kv_transfer(server, recorded, "h", 1000, 3);
  ASSERT_EQ(server.post("/admin/faults", R"({"route_skew": {"endpoint": "decode-1", "weight": 1}})").status, 200);
  auto before = server.scrape();
  const double degraded = disagg_mean_kv_transfer(server, recorded, "d", 1000, 3);
  auto after = server.scrape();
  EXPECT_EQ(disagg_delta(before, after, "inferscope_router_decisions_total", {{"endpoint", "decode-1"}}), 3.0);
  EXPECT_GT(degraded, 4 * healthy) << healthy << " " << degraded;
  EXPECT_LT(degraded, 8 * healthy) << healthy << " " << degraded;
}

// Tests kv_transfer_failure: failed attempts are counted and their time stays in kv_transfer.
TEST(ServeDisaggTest, FailedTransfersAreRetriedInsideTheStage) {
  ServerOptions o = disagg_options(1, 1);
  o.engine.time_scale = 4;
  o.disagg.kv_link_gb_per_s = 1;
  o.disagg.kv_link_latency_ms = 2;
  TestServer server(o);
  ASSERT_TRUE(server.ok());
  std::uint64_t recorded = 0;
  ASSERT_EQ(server.post("/admin/faults", R"({"kv_transfer_failure": 0.6})").status, 200);
  auto before = server.scrape();
  const double failing = disagg_mean_kv_transfer(server, recorded, "g", 800, 12);
  auto after = server.scrape();
  const double failures = disagg_delta(before, after, "inferscope_kv_transfer_failures_total");
  EXPECT_GT(failures, 0);
  EXPECT_EQ(disagg_delta(before, after, "trtllm_kv_transfer_success_total"), 12.0);
  // One attempt takes (latency + bytes / bandwidth) / time_scale of real time, and timers never
  // fire early: the stage holds at least the failed attempts plus the successful one.
  const double bytes = disagg_delta(before, after, "inferscope_kv_transfer_bytes_sum") / 12;
  const double attempt = (0.002 + bytes / 1e9) / 4;
  EXPECT_GE(failing, attempt * (1 + failures / 12) * 0.99) << attempt << " " << failing << " " << failures;
  EXPECT_LT(failing, attempt * (1 + failures / 12) * 3 + 0.05) << attempt << " " << failing << " " << failures;
}

// disagg_load sends `n` concurrent requests on their own threads and returns them to join.
// Request i is sent i * stagger_ms after the first.
std::vector<std::thread> disagg_load(TestServer& server, int n, int prompt_words, int max_tokens, std::atomic<int>& ok,
                                     int stagger_ms = 0) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&server, &ok, i, prompt_words, max_tokens, stagger_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(i * stagger_ms));
      HttpReply r = server.post("/v1/chat/completions",
                                chat_body(disagg_unique_prompt("l" + std::to_string(i), prompt_words), max_tokens, false,
                                          {{"ignore_eos", true}}));
      if (r.status == 200) ok.fetch_add(1);
    });
  }
  return threads;
}

// Tests pool_workers: the prefill pool cut to one worker at a prompt-heavy mix makes the prefill
// pool's waiting grow while the decode pool's stays near 0, and inferscope_pool_workers says 1.
TEST(ServeDisaggTest, PrefillPoolCutToOneSaturatesWhileDecodeIdles) {
  ServerOptions o = disagg_options(2, 2);
  o.engine.time_scale = 5;
  o.engine.max_num_batched_tokens = 2048;  // a 3,000-token prompt takes two steps
  TestServer server(o);
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(server.post("/admin/faults", R"({"pool_workers": {"pool": "prefill", "count": 1}})").status, 200);
  std::atomic<int> ok{0};
  auto threads = disagg_load(server, 12, 3000, 2, ok);
  double prefill_peak = 0, decode_peak = 0;
  ASSERT_TRUE(wait_until([&] {
    auto e = server.scrape();
    prefill_peak = std::max(prefill_peak, metric(e, "inferscope_pool_requests_waiting", {{"pool", "prefill"}}));
    decode_peak = std::max(decode_peak, metric(e, "inferscope_pool_requests_waiting", {{"pool", "decode"}}));
    EXPECT_EQ(metric(e, "inferscope_pool_workers", {{"pool", "prefill"}}), 1.0);
    EXPECT_EQ(metric(e, "inferscope_endpoint_requests", {{"endpoint", "prefill-1"}}), 0.0);
    return prefill_peak >= 6;
  }));
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 12);
  EXPECT_LE(decode_peak, 2.0);
  EXPECT_GE(prefill_peak, 3 * decode_peak);
  EXPECT_EQ(server.server().engine(1).stats().prompt_tokens_total, 0u);  // prefill-1 took nothing
}

// Tests the reverse: the decode pool cut to one worker at an output-heavy mix (few seats per
// worker) makes the decode pool's waiting grow while the prefill pool's stays near 0.
TEST(ServeDisaggTest, DecodePoolCutToOneSaturatesWhilePrefillIdles) {
  ServerOptions o = disagg_options(2, 2);
  o.engine.time_scale = 5;
  o.engine.max_num_seqs = 3;
  TestServer server(o);
  ASSERT_TRUE(server.ok());
  ASSERT_EQ(server.post("/admin/faults", R"({"pool_workers": {"pool": "decode", "count": 1}})").status, 200);
  std::atomic<int> ok{0};
  auto threads = disagg_load(server, 12, 20, 600, ok, 20);  // staggered: the prefill pool never queues
  double prefill_peak = 0, decode_peak = 0;
  ASSERT_TRUE(wait_until([&] {
    auto e = server.scrape();
    prefill_peak = std::max(prefill_peak, metric(e, "inferscope_pool_requests_waiting", {{"pool", "prefill"}}));
    decode_peak = std::max(decode_peak, metric(e, "inferscope_pool_requests_waiting", {{"pool", "decode"}}));
    return decode_peak >= 6;
  }));
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 12);
  EXPECT_LE(prefill_peak, 3.0);
  EXPECT_GE(decode_peak, 2 * prefill_peak);
  EXPECT_EQ(server.server().engine(3).stats().generation_tokens_total, 0u);  // decode-1 took nothing
}

// Tests route_skew: without it, sequential requests spread over the decode endpoints; with
// decode-1 favoured, every decision goes to decode-1.
TEST(ServeDisaggTest, RouteSkewPilesRequestsOntoOneEndpoint) {
  TestServer server(disagg_options(1, 3));
  ASSERT_TRUE(server.ok());
  std::uint64_t recorded = 0;
  auto before = server.scrape();
  for (int i = 0; i < 6; ++i) disagg_post(server, chat_body(disagg_unique_prompt("r" + std::to_string(i), 60), 3), recorded);
  auto spread = server.scrape();
  for (const std::string endpoint : {"decode-0", "decode-1", "decode-2"}) {
    EXPECT_EQ(disagg_delta(before, spread, "inferscope_router_decisions_total", {{"endpoint", endpoint}}), 2.0) << endpoint;
  }
  ASSERT_EQ(server.post("/admin/faults", R"({"route_skew": {"endpoint": "decode-1", "weight": 0.9}})").status, 200);
  for (int i = 0; i < 6; ++i) disagg_post(server, chat_body(disagg_unique_prompt("k" + std::to_string(i), 60), 3), recorded);
  auto skewed = server.scrape();
  EXPECT_EQ(disagg_delta(spread, skewed, "inferscope_router_decisions_total", {{"endpoint", "decode-1"}}), 6.0);
  EXPECT_EQ(disagg_delta(spread, skewed, "inferscope_router_decisions_total", {{"endpoint", "decode-0"}}), 0.0);
  // A repeated prompt is routed back to the worker holding its blocks: the prefix hit shows it.
  ASSERT_EQ(server.post("/admin/faults", R"({"route_skew": null})").status, 200);
  auto before_hit = server.scrape();
  disagg_post(server, chat_body(disagg_unique_prompt("r0", 60), 3), recorded);
  auto after_hit = server.scrape();
  EXPECT_GT(disagg_delta(before_hit, after_hit, "inferscope_router_prefix_hit_ratio_sum"), 0.5);
}

// Tests that every series of the issue-29 contract is exposed after one request, with its
// labels, and that no vllm:* series is.
TEST(ServeDisaggTest, EverySeriesOfTheContractIsPresent) {
  TestServer server(disagg_options(2, 2));
  ASSERT_TRUE(server.ok());
  std::uint64_t recorded = 0;
  disagg_post(server, chat_body(disagg_unique_prompt("n", 200), 8, true, {{"ignore_eos", true}}), recorded);
  auto e = server.scrape();
  for (const std::string pool : {"prefill", "decode"}) {
    EXPECT_GE(metric(e, "inferscope_pool_requests_waiting", {{"pool", pool}}), 0) << pool;
    EXPECT_GE(metric(e, "inferscope_pool_requests_running", {{"pool", pool}}), 0) << pool;
    EXPECT_EQ(metric(e, "inferscope_pool_workers", {{"pool", pool}}), 2.0) << pool;
    EXPECT_GE(metric(e, "dynamo_frontend_router_queue_pending_requests", {{"worker_type", pool}}), 0) << pool;
    for (const std::string index : {"0", "1"}) {
      EXPECT_GE(metric(e, "inferscope_endpoint_requests", {{"pool", pool}, {"endpoint", pool + "-" + index}}), 0);
      EXPECT_GE(metric(e, "inferscope_router_decisions_total", {{"pool", pool}, {"endpoint", pool + "-" + index}}), 0);
    }
    EXPECT_GE(metric(e, "dynamo_frontend_worker_active_decode_blocks", {{"worker_type", pool}, {"dp_rank", "0"}}), 0);
    EXPECT_GE(metric(e, "dynamo_frontend_worker_active_prefill_tokens", {{"worker_type", pool}, {"dp_rank", "0"}}), 0);
  }
  for (std::string_view stage : {"route", "kv_transfer"}) {
    EXPECT_EQ(metric(e, "inferscope_stage_duration_seconds_count", {{"stage", stage}}), 1.0) << stage;
  }
  EXPECT_EQ(metric(e, "inferscope_kv_transfer_bytes_count"), 1.0);
  EXPECT_EQ(metric(e, "inferscope_kv_transfer_failures_total"), 0.0);
  EXPECT_EQ(metric(e, "inferscope_router_prefix_hit_ratio_count"), 1.0);
  EXPECT_EQ(metric(e, "inferscope_router_decisions_total"), 2.0);
  const metrics::LabelSubset model = {{"model", "sim-a"}};
  EXPECT_EQ(metric(e, "dynamo_frontend_requests_total",
                   {{"model", "sim-a"}, {"request_type", "stream"}, {"status", "success"}, {"endpoint", "chat_completions"}}),
            1.0);
  EXPECT_EQ(metric(e, "dynamo_frontend_request_duration_seconds_count", model), 1.0);
  EXPECT_EQ(metric(e, "dynamo_frontend_time_to_first_token_seconds_count", model), 1.0);
  EXPECT_GT(metric(e, "dynamo_frontend_inter_token_latency_seconds_count", model), 0);
  EXPECT_EQ(metric(e, "dynamo_frontend_input_sequence_tokens_count", model), 1.0);
  EXPECT_EQ(metric(e, "dynamo_frontend_output_sequence_tokens_count", model), 1.0);
  EXPECT_EQ(metric(e, "dynamo_frontend_output_tokens_total", model), 8.0);
  EXPECT_EQ(metric(e, "dynamo_frontend_active_requests", model), 0.0);
  for (std::string_view stage : {"route", "preprocess", "postprocess"}) {
    EXPECT_EQ(metric(e, "dynamo_frontend_stage_duration_seconds_count", {{"stage", stage}}), 1.0) << stage;
  }
  EXPECT_EQ(metric(e, "dynamo_component_router_kv_hit_rate_count", {{"router_id", "0"}}), 1.0);
  const metrics::LabelSubset trt = {{"model_name", "sim-a"}, {"disaggregation_mode", "prefill"}, {"engine_type", "trtllm"}};
  EXPECT_EQ(metric(e, "trtllm_kv_transfer_latency_seconds_count", trt), 1.0);
  EXPECT_EQ(metric(e, "trtllm_kv_transfer_bytes_count", trt), 1.0);
  EXPECT_EQ(metric(e, "trtllm_kv_transfer_success_total", trt), 1.0);
  for (const auto& family : e.families) EXPECT_NE(family.name.rfind("vllm:", 0), 0u) << family.name;
  EXPECT_FALSE(e.families.empty());
  // `up` and --check-metrics read it as an inferscope target, with Dynamo's names also found.
  const dialect::Detection detection = dialect::detect_dialects(e);
  ASSERT_TRUE(detection.primary.has_value()) << detection.evidence;
  EXPECT_EQ(*detection.primary, dialect::DialectId::kInferscope) << detection.evidence;
  EXPECT_TRUE(std::any_of(detection.found.begin(), detection.found.end(),
                          [](const dialect::DetectedDialect& d) { return d.id == dialect::DialectId::kDynamo; }))
      << detection.evidence;
}

// Tests the one-line errors: a pool without the other, mixing with data parallelism, seed-mock,
// and faults that name workers the fleet does not have or need a fleet at all.
TEST(ServeDisaggTest, BadFlagsAndFaultsFailWithOneLine) {
  auto start_error = [](ServerOptions o) {
    auto started = Server::start(std::move(o));
    return started ? std::string() : started.error().message;
  };
  ServerOptions only_prefill = disagg_options(2, 0);
  EXPECT_NE(start_error(only_prefill).find("--decode-workers must be 1..32 with --prefill-workers"), std::string::npos);
  ServerOptions with_dp = disagg_options(1, 1);
  with_dp.data_parallel_size = 2;
  EXPECT_NE(start_error(with_dp).find("cannot be combined with --data-parallel-size"), std::string::npos);
  ServerOptions mock = disagg_options(1, 1);
  mock.engine.profile = "seed-mock";
  EXPECT_NE(start_error(mock).find("seed-mock"), std::string::npos);
  ServerOptions bad_link = disagg_options(1, 2);
  bad_link.faults.kv_link = KvLink{2, 5};
  EXPECT_NE(start_error(bad_link).find("--fault: kv_link.worker: decode worker 2 is not served"), std::string::npos);
  ServerOptions no_fleet = fast_options();
  no_fleet.faults.kv_transfer = 5;
  EXPECT_NE(start_error(no_fleet).find("need --prefill-workers and --decode-workers"), std::string::npos);
  for (const std::string& message : {start_error(only_prefill), start_error(with_dp), start_error(mock)})
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;

  TestServer server(disagg_options(1, 2));
  ASSERT_TRUE(server.ok());
  HttpReply cut = server.post("/admin/faults", R"({"pool_workers": {"pool": "decode", "count": 3}})");
  EXPECT_EQ(cut.status, 400) << cut.body;
  EXPECT_NE(cut.body.find("pool_workers.count: 3 is more than the decode pool's 2 workers"), std::string::npos) << cut.body;
  HttpReply skew = server.post("/admin/faults", R"({"route_skew": {"endpoint": "decode-7", "weight": 0.5}})");
  EXPECT_EQ(skew.status, 400) << skew.body;
  HttpReply pool = server.post("/admin/faults", R"({"pool_workers": {"pool": "gpu", "count": 1}})");
  EXPECT_EQ(pool.status, 400) << pool.body;
  HttpReply rank = server.post("/admin/faults", R"({"engine_slowdown": {"engine": 3, "factor": 4}})");
  EXPECT_EQ(rank.status, 400) << rank.body;
  EXPECT_NE(rank.body.find("rank 3 is not served (--prefill-workers 1 + --decode-workers 2"), std::string::npos)
      << rank.body;
  HttpReply link = server.post("/admin/faults", R"({"kv_link": {"worker": 1, "factor": 4}})");
  EXPECT_EQ(link.status, 200) << link.body;
  HttpReply listed = server.get("/admin/faults");
  EXPECT_NE(listed.body.find("\"kv_link\""), std::string::npos) << listed.body;

  ServerOptions plain_options = fast_options();
  plain_options.enable_admin = true;
  TestServer plain(plain_options);  // a server without pools refuses the fleet's faults
  ASSERT_TRUE(plain.ok());
  HttpReply refused = plain.post("/admin/faults", R"({"kv_transfer": 5})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("need --prefill-workers and --decode-workers"), std::string::npos) << refused.body;
}

// DisaggCliRun is one run of the inferscope binary; stdout and stderr captured in a temp dir.
struct DisaggCliRun {
  int rc = -1;
  std::string out, err;
};

DisaggCliRun disagg_run_cli(std::vector<std::string> args, std::chrono::seconds limit = std::chrono::seconds(120)) {
  inferscope::testing::TempDir dir("serve-disagg-cli");
  inferscope::testing::TestProcess process({.binary = INFERSCOPE_BINARY,
                                            .args = std::move(args),
                                            .stdout_file = dir.path() / "out",
                                            .stderr_file = dir.path() / "err"});
  DisaggCliRun run;
  run.rc = process.wait_exit(limit).value_or(-1);
  run.out = process.stdout_text();
  run.err = process.stderr_text();
  return run;
}

// disagg_table_ms reads the milliseconds of the server stage table's row starting with `label`.
double disagg_table_ms(const std::string& out, const std::string& label) {
  const std::size_t at = out.find("\n" + label);
  if (at == std::string::npos) return -1;
  const std::size_t end = out.find('\n', at + 1);
  std::istringstream row(out.substr(at + 1 + label.size(), end - at - 1 - label.size()));
  std::string token;
  std::vector<double> numbers;
  while (row >> token) {
    try {
      numbers.push_back(std::stod(token));
    } catch (const std::exception&) {
    }
  }
  // A stage row: observed, mean ms, share; a total row: mean ms (then the request count).
  if (numbers.size() >= 3 && label != "Server e2e (mean)") return numbers[1];
  return numbers.empty() ? -1 : numbers[0];
}

// Tests `inferscope bench --server-metrics` against a disaggregated serve: the server stage table
// has route and kv_transfer rows, and its stages add up to the server's e2e.
TEST(ServeDisaggTest, BenchPrintsTheStageTableWithRouteAndKvTransfer) {
  TestServer server(disagg_options(2, 2));
  ASSERT_TRUE(server.ok());
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  DisaggCliRun run = disagg_run_cli({"bench", "--base-url", base, "--model", "sim-a", "--num-prompts", "12",
                                     "--max-concurrency", "4", "--random-input-len", "400", "--random-output-len", "8",
                                     "--ignore-eos", "--no-progress", "--server-metrics", base + "/metrics"});
  ASSERT_EQ(run.rc, 0) << run.err;
  ASSERT_NE(run.out.find("Server stages"), std::string::npos) << run.out;
  for (const std::string stage : {"route", "queue", "prefill", "kv_transfer", "decode"}) {
    EXPECT_GT(disagg_table_ms(run.out, stage), 0) << stage << "\n" << run.out;
  }
  const double sum = disagg_table_ms(run.out, "Sum of stages");
  const double e2e = disagg_table_ms(run.out, "Server e2e (mean)");
  EXPECT_GT(e2e, 0) << run.out;
  EXPECT_NEAR(sum, e2e, 0.01 * e2e + 0.01) << run.out;
}

// Tests the CLI's one-line errors for the fleet's flags and faults.
TEST(ServeDisaggTest, CliRefusesBadFleetFlags) {
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"serve", "--port", "0", "--prefill-workers", "2"}, "--decode-workers must be 1..32"},
           {{"serve", "--port", "0", "--prefill-workers", "1", "--decode-workers", "1", "--data-parallel-size", "2"},
            "--data-parallel-size"},
           {{"serve", "--port", "0", "--prefill-workers", "1", "--decode-workers", "1", "--profile", "seed-mock"},
            "seed-mock"},
           {{"serve", "--port", "0", "--decode-workers", "0", "--prefill-workers", "1"}, "--decode-workers"},
           {{"serve", "--port", "0", "--fault", "kv_transfer=5"}, "need --prefill-workers and --decode-workers"},
           {{"serve", "--port", "0", "--prefill-workers", "1", "--decode-workers", "1", "--fault",
             R"(route_skew={"endpoint":"decode-1","weight":0.5})"},
            "route_skew.endpoint: decode-1 is not served"}}) {
    DisaggCliRun run = disagg_run_cli(args, std::chrono::seconds(30));
    EXPECT_NE(run.rc, 0) << needle;
    EXPECT_NE(run.err.find(needle), std::string::npos) << run.err;
    EXPECT_LE(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

}  // namespace
}  // namespace inferscope::serve::testing
