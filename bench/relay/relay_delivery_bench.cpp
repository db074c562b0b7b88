// Relay delivery benchmark. Peer baseline: BM_DirectPost, one bare libcurl POST of the same body
// to the same loopback fake robot (what a relay without an outbox costs). Ours:
//   BM_RelayStore          webhook intake: parse + one durable SQLite commit (WAL, synchronous=FULL)
//   BM_RelayEndToEnd       one notification: handle_webhook -> outbox -> delivery thread -> robot
//                          confirmed (latency per notification, p50/p99 counters)
//   BM_RelayThroughput/M   bursts of 200 notifications; M=1 merges pending ones into one message
//                          (the real behaviour), M=0 forces one message per notification
// Prints ratios to the peer at the end. The database lives in $TMPDIR (fsync cost is real).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>

#include <benchmark/benchmark.h>

#include <inferscope/metrics/registry.h>

#include "fake_servers.h"
#include "ratio_reporter.h"
#include "relay/http_poster.h"
#include "relay/relay.h"
#include "relay_test_util.h"

namespace {

using namespace std::chrono_literals;
using inferscope::relay::ChannelConfig;
using inferscope::relay::ChannelKind;
using inferscope::relay::Relay;
using inferscope::relay::RelayConfig;
using inferscope::relay::testing::FakeHttpServer;
using inferscope::relay::testing::FakeRequest;
using inferscope::relay::testing::FakeResponse;
using inferscope::relay::testing::TempDir;
using inferscope::relay::testing::webhook_body;

// CountingRobot is a fake robot that counts the notifications it received (one "groupKey" each).
struct CountingRobot {
  std::mutex mutex;
  std::condition_variable cv;
  std::int64_t notifications = 0;
  std::int64_t messages = 0;
  FakeHttpServer server{[this](const FakeRequest& r) {
    std::int64_t n = 0;
    for (auto at = r.body.find("\"groupKey\""); at != std::string::npos; at = r.body.find("\"groupKey\"", at + 1)) ++n;
    {
      std::lock_guard lock(mutex);
      notifications += n;
      ++messages;
    }
    cv.notify_all();
    return FakeResponse{200, "ok"};
  }};
  void wait_for(std::int64_t total) {
    std::unique_lock lock(mutex);
    cv.wait_for(lock, 60s, [&] { return notifications >= total; });
  }
};

struct Bench {
  TempDir dir;
  CountingRobot robot;
  inferscope::metrics::Registry registry;
  std::unique_ptr<Relay> relay;

  explicit Bench(bool merge) {
    const std::string url_file = (dir.path() / "url").string();
    std::ofstream(url_file) << robot.server.url("/hook?token=t") << "\n";
    ChannelConfig c;
    c.kind = ChannelKind::kWebhook;
    c.name = "bench";
    c.url.file = url_file;
    c.messages_per_minute = 0;
    // 256 bytes is shorter than one rendered notification, so nothing can be merged.
    c.max_message_bytes = merge ? 0 : 256;
    RelayConfig config;
    config.database_path = (dir.path() / "relay.db").string();
    config.channels = {c};
    config.dedupe_window = 0s;
    auto opened = Relay::open(config, registry);
    if (!opened) {
      std::fprintf(stderr, "%s\n", opened.error().message.c_str());
      std::abort();
    }
    relay = std::move(*opened);
  }
};

std::string body(std::int64_t i) { return webhook_body("BenchAlert" + std::to_string(i), "firing", {"f" + std::to_string(i)}); }

void BM_DirectPost(benchmark::State& state) {
  CountingRobot robot;
  inferscope::relay::HttpPoster poster(10s);
  const std::string payload = body(0);
  for (auto _ : state) {
    auto answer = poster.post(robot.server.url("/hook?token=t"), payload);
    if (!answer || answer->status != 200) state.SkipWithError("POST failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DirectPost)->UseRealTime()->MinTime(1.0);

void BM_RelayStore(benchmark::State& state) {
  Bench bench(true);
  std::int64_t i = 0;
  for (auto _ : state) {
    if (bench.relay->handle_webhook(body(i++)).status != 200) state.SkipWithError("not stored");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RelayStore)->UseRealTime()->MinTime(1.0);

void BM_RelayEndToEnd(benchmark::State& state) {
  Bench bench(true);
  bench.relay->start();
  std::vector<double> latencies;
  std::int64_t i = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    if (bench.relay->handle_webhook(body(i++)).status != 200) state.SkipWithError("not stored");
    bench.robot.wait_for(i);
    latencies.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  bench.relay->stop();
  std::sort(latencies.begin(), latencies.end());
  if (!latencies.empty()) {
    state.counters["p50_us"] = latencies[latencies.size() / 2];
    state.counters["p99_us"] = latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)];
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RelayEndToEnd)->UseRealTime()->MinTime(1.0);

void BM_RelayThroughput(benchmark::State& state) {
  constexpr std::int64_t kBurst = 200;
  Bench bench(state.range(0) == 1);
  bench.relay->start();
  std::int64_t sent = 0;
  for (auto _ : state) {
    for (std::int64_t k = 0; k < kBurst; ++k) {
      if (bench.relay->handle_webhook(body(sent++)).status != 200) state.SkipWithError("not stored");
    }
    bench.robot.wait_for(sent);
  }
  bench.relay->stop();
  state.SetItemsProcessed(sent);
  state.counters["notifications_per_message"] =
      static_cast<double>(bench.robot.notifications) / static_cast<double>(std::max<std::int64_t>(1, bench.robot.messages));
}
BENCHMARK(BM_RelayThroughput)->Arg(1)->Arg(0)->UseRealTime()->MinTime(2.0);

}  // namespace

int main(int argc, char** argv) {
  return inferscope::bench::run_benchmarks_with_ratios(argc, argv, [](const inferscope::bench::RatioReporter& r) {
    const double direct = r.time("BM_DirectPost/min_time:1.000/real_time");
    auto line = [&](const char* what, const std::string& name, double per_item_divisor) {
      const double t = r.time(name) / per_item_divisor;
      if (t > 0 && direct > 0) std::printf("ratio %-34s %10.1f us/notification  direct POST %8.1f us  ours/peer %.2f\n", what, t / 1e3, direct / 1e3, t / direct);
    };
    line("store (intake, fsync)", "BM_RelayStore/min_time:1.000/real_time", 1);
    line("end-to-end one at a time", "BM_RelayEndToEnd/min_time:1.000/real_time", 1);
    line("burst of 200, merged", "BM_RelayThroughput/1/min_time:2.000/real_time", 200);
    line("burst of 200, one message each", "BM_RelayThroughput/0/min_time:2.000/real_time", 200);
  });
}
