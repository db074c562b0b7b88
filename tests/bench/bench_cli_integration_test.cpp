// Drives the inferscope binary as a subprocess against the test server on loopback.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "loadgen/test_llm_server.h"
#include "support/temp_dir.h"
#include "support/test_process.h"

namespace inferscope::bench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using inferscope::testing::ProcessOptions;
using inferscope::testing::TempDir;
using inferscope::testing::TestProcess;
using loadgen::testing::Behavior;
using loadgen::testing::TestLlmServer;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Outcome {
  int rc;
  std::string out, err;
};

// bench_process describes the binary run with `args`, stdout/stderr to files in `dir`.
ProcessOptions bench_process(const std::vector<std::string>& args, const TempDir& dir) {
  return {.binary = INFERSCOPE_BINARY,
          .args = args,
          .stdout_file = dir.path() / "out",
          .stderr_file = dir.path() / "err"};
}

// finish waits for the run to end; a death by signal reads as rc -1, so 130 means bench handled SIGINT.
Outcome finish(TestProcess& process) {
  const int rc = process.wait_exit(240s).value_or(-1);
  return {process.exit_signal() == 0 ? rc : -1, process.stdout_text(), process.stderr_text()};
}

Outcome run(const std::vector<std::string>& args, const TempDir& dir) {
  TestProcess process(bench_process(args, dir));
  return finish(process);
}

// Tests a full run: the vLLM-layout table, the JSON summary with SLO goodput, the per-request CSV
// and JSONL, and that the run ends by itself at --num-prompts.
TEST(BenchCliIntegrationTest, RunWritesAllOutputs) {
  TestLlmServer server({.tokens = 4, .ttft = 1ms});
  TempDir dir;
  Outcome o = run({"bench", "--base-url", server.base_url(), "--num-prompts", "30", "--max-concurrency", "3",
                   "--warmup", "5", "--random-input-len", "16", "--random-output-len", "4", "--slo", "ttft=10s,e2e=20s",
                   "--json", (dir.path() / "s.json").string(), "--csv", (dir.path() / "r.csv").string(), "--jsonl",
                   (dir.path() / "r.jsonl").string(), "--no-progress"},
                  dir);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("Successful requests:                     30"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Request goodput (req/s):"), std::string::npos);
  EXPECT_EQ(server.requests(), 35);
  nlohmann::json j = nlohmann::json::parse(slurp(dir.path() / "s.json"));
  EXPECT_EQ(j["completed"], 30);
  EXPECT_EQ(j["warmup_requests"], 5);
  EXPECT_DOUBLE_EQ(j["slo_attainment"].get<double>(), 1.0);
  EXPECT_EQ(j["total_output_tokens"], 120);
  EXPECT_EQ(j["token_sources"]["usage"], 30);
  std::string csv = slurp(dir.path() / "r.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 36);  // header + 35 requests
  EXPECT_EQ(csv.rfind("index,class,warmup,http_status,error,intended_ms", 0), 0u);
  std::istringstream lines(slurp(dir.path() / "r.jsonl"));
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    nlohmann::json r = nlohmann::json::parse(line);
    EXPECT_EQ(r["error"], "none");
    EXPECT_EQ(r["token_event_ms"].size(), 4u);
    ++n;
  }
  EXPECT_EQ(n, 35);
  // compare prints the difference of two summaries.
  Outcome c = run({"bench", "compare", (dir.path() / "s.json").string(), (dir.path() / "s.json").string()}, dir);
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_NE(c.out.find("median_ttft_ms"), std::string::npos);
}

// Tests that bad flags cost one line naming the flag and a non-zero exit, and that the API key
// never shows up in any output.
TEST(BenchCliIntegrationTest, BadFlagsAndSecretKey) {
  TempDir dir;
  auto check = [&](std::vector<std::string> args, const std::string& flag) {
    args.insert(args.begin(), "bench");
    Outcome o = run(args, dir);
    EXPECT_NE(o.rc, 0);
    EXPECT_NE(o.err.find(flag), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  };
  check({"--stages", "10:rate=1"}, "--stages");
  check({"--slo", "ttft=soon"}, "--slo");
  check({"--base-url", "ftp://x"}, "--base-url");
  check({"--request-rate", "-3"}, "--request-rate");
  check({"--api-key-env", "INFERSCOPE_TEST_UNSET_VARIABLE"}, "--api-key-env");
  check({"--no-such-flag"}, "--no-such-flag");
  check({"--fail-under-goodput", "0.9"}, "--fail-under-goodput");  // needs --slo
  check({"--slo", "ttft=1s", "--fail-under-goodput", "1.5"}, "--fail-under-goodput");
  TestLlmServer server({.tokens = 2});
  std::ofstream(dir.path() / "key") << "sk-secret-123\n";
  Outcome o = run({"bench", "--base-url", server.base_url(), "--num-prompts", "3", "--api-key-file",
                   (dir.path() / "key").string(), "--json", (dir.path() / "s.json").string(), "--no-progress"},
                  dir);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.out.find("sk-secret"), std::string::npos);
  EXPECT_EQ(o.err.find("sk-secret"), std::string::npos);
  EXPECT_EQ(slurp(dir.path() / "s.json").find("sk-secret"), std::string::npos);
}

// Tests that SIGINT ends a run against a server that never answers, with the partial report.
TEST(BenchCliIntegrationTest, CtrlCPrintsPartialReport) {
  TestLlmServer server({.behavior = Behavior::kHang});
  TempDir dir;
  TestProcess bench(bench_process({"bench", "--base-url", server.base_url(), "--num-prompts", "100",
                                   "--max-concurrency", "2", "--json", (dir.path() / "s.json").string()},
                                  dir));
  ASSERT_TRUE(server.wait_for_requests(2, 20s));
  bench.signal(SIGINT);
  Outcome o = finish(bench);
  EXPECT_EQ(o.rc, 130);
  EXPECT_NE(o.out.find("Interrupted: partial results."), std::string::npos) << o.out;
  nlohmann::json j = nlohmann::json::parse(slurp(dir.path() / "s.json"));
  EXPECT_EQ(j["errors"]["cancelled"], 2);
  EXPECT_TRUE(j["interrupted"].get<bool>());
}

// Tests that a --duration run ends by itself even when the server never answers (per-request
// timeout), and that plain progress lines appear when stderr is not a terminal.
TEST(BenchCliIntegrationTest, DurationBoundEndsRun) {
  TestLlmServer server({.behavior = Behavior::kHang});
  TempDir dir;
  Outcome o = run({"bench", "--base-url", server.base_url(), "--duration", "300ms", "--request-rate", "20",
                   "--timeout", "200ms", "--json", (dir.path() / "s.json").string()},
                  dir);
  // Every request timed out: the report is still written, and the exit status says all failed.
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find("inferscope bench: all "), std::string::npos) << o.err;
  nlohmann::json j = nlohmann::json::parse(slurp(dir.path() / "s.json"));
  EXPECT_GT(j["errors"]["timeout"].get<int>(), 0);
  EXPECT_EQ(j["completed"], 0);
  EXPECT_NE(o.err.find("done "), std::string::npos) << o.err;  // the first plain progress line
}

// Tests the CI gate: --fail-under-goodput exits 3 when too few requests meet the SLO and 0 when
// enough do; the summary is written either way.
TEST(BenchCliIntegrationTest, FailUnderGoodputGates) {
  TestLlmServer server({.tokens = 2, .ttft = 20ms});
  TempDir dir;
  auto bench = [&](const std::string& slo) {
    return run({"bench", "--base-url", server.base_url(), "--num-prompts", "6", "--max-concurrency", "2", "--slo", slo,
                "--fail-under-goodput", "0.9", "--json", (dir.path() / "s.json").string(), "--no-progress"},
               dir);
  };
  Outcome strict = bench("ttft=1ms");  // the server waits 20 ms before the first token
  EXPECT_EQ(strict.rc, 3) << strict.err;
  EXPECT_NE(strict.err.find("--fail-under-goodput"), std::string::npos) << strict.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(slurp(dir.path() / "s.json"))["slo_attainment"].get<double>(), 0.0);
  Outcome loose = bench("ttft=60s");
  EXPECT_EQ(loose.rc, 0) << loose.err;
}

// Tests that the class column of --csv and --jsonl is each request's own --mix class, and that
// input tokens fall back to the client's estimate (marked) when the server sends no usage.
TEST(BenchCliIntegrationTest, PerRequestClassAndInputSource) {
  TestLlmServer server({.usage = false, .tokens = 2});
  TempDir dir;
  Outcome o = run({"bench", "--base-url", server.base_url(), "--num-prompts", "40", "--max-concurrency", "4",
                   "--mix", "small:1:8:2,big:1:64:2", "--csv", (dir.path() / "r.csv").string(), "--jsonl",
                   (dir.path() / "r.jsonl").string(), "--no-progress"},
                  dir);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.out.find("Total input tokens:                      0 "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Input tokens from estimated (req):       40"), std::string::npos) << o.out;
  std::istringstream lines(slurp(dir.path() / "r.jsonl"));
  std::string line;
  int small = 0, big = 0;
  while (std::getline(lines, line)) {
    nlohmann::json r = nlohmann::json::parse(line);
    EXPECT_EQ(r["input_token_source"], "estimated");
    if (r["class"] == "small") {
      ++small;
      EXPECT_EQ(r["input_tokens"], 8);
    } else {
      ASSERT_EQ(r["class"], "big");
      ++big;
      EXPECT_EQ(r["input_tokens"], 64);
    }
  }
  EXPECT_EQ(small + big, 40);
  EXPECT_GT(small, 0);
  EXPECT_GT(big, 0);
  std::string csv = slurp(dir.path() / "r.csv");
  EXPECT_NE(csv.find(",big,"), std::string::npos);
  EXPECT_NE(csv.find(",small,"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::bench
