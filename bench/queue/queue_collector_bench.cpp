// Queue collection cost benchmark: the collector's cost must not depend on how many jobs wait.
// A real redis-server (Debian's, loopback, started here) holds N queued jobs in each system the way
// each lays them out: an RQ queue (N job IDs + N job hashes, 10 started jobs, a finished registry),
// a Celery queue (N task messages on two priority lists), a stream with a consumer group (N
// undelivered entries, 10 pending) and a plain list. BM_Collect/N times collect_once() (three
// pipelined round trips) between discovery passes and reads Redis's own CPU per collection from
// INFO commandstats (usec summed over every command but INFO); BM_DiscoveryPass/N times the
// keyspace SCAN that runs once per discovery_interval. Peer: the 10-job run; the ratios printed at
// the end are 10-job / N-job (1.0x = same cost, 0.5x = twice the cost).
// Run: build/release/bench/queue/queue_collector_bench
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <inferscope/metrics/registry.h>

#include "queue/queue_collector.h"
#include "queue/redis_server.h"
#include "ratio_reporter.h"

namespace {

using inferscope::queue::QueueCollector;
using inferscope::queue::QueueSystem;
using inferscope::queue::RedisClient;
using inferscope::queue::RedisCommand;
using inferscope::queue::testing::RedisServer;

constexpr std::size_t kBatch = 10000;

// fill writes `commands` in pipelined batches; aborts the benchmark on a failed connection.
bool fill(RedisClient& client, std::vector<RedisCommand>& commands, benchmark::State& state) {
  if (commands.size() < kBatch) return true;
  auto replies = client.pipeline(commands);
  commands.clear();
  if (!replies) state.SkipWithError(replies.error().message.c_str());
  return replies.ok();
}

bool load(RedisServer& redis, long long jobs, benchmark::State& state) {
  auto client = RedisClient::connect(redis.target(), std::chrono::seconds(30));
  if (!client) {
    state.SkipWithError(client.error().message.c_str());
    return false;
  }
  std::vector<RedisCommand> batch{{"FLUSHALL"}, {"SADD", "rq:queues", "rq:queue:default"},
                                  {"SADD", "_kombu.binding.celery", std::string("celery\x06\x16\x06\x16") + "celery"},
                                  {"XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"}};
  const std::string message =
      R"({"body": "W1tdLCB7fSwge31d", "headers": {"id": "ID", "task": "t", "inferscope_enqueued_at": 1796148470.03},)"
      R"( "properties": {"priority": 0, "delivery_tag": "tag"}})";
  for (long long i = 0; i < jobs; ++i) {
    const std::string id = "job-" + std::to_string(i);
    batch.push_back({"RPUSH", "rq:queue:default", id});
    batch.push_back({"HSET", "rq:job:" + id, "status", "queued", "enqueued_at", "2026-12-01T16:07:04.146997Z",
                     "created_at", "2026-12-01T16:07:04.146997Z", "origin", "default", "data", std::string(64, 'x')});
    batch.push_back({"LPUSH", i % 2 == 0 ? std::string("celery") : std::string("celery\x06\x16") + "6", message});
    batch.push_back({"XADD", "jobs", "*", "n", id});
    batch.push_back({"LPUSH", "plain", id});
    if (!fill(*client, batch, state)) return false;
  }
  for (int i = 0; i < 10; ++i) {
    const std::string id = "started-" + std::to_string(i);
    batch.push_back({"ZADD", "rq:wip:default", "9999999999", id});
    batch.push_back({"HSET", "rq:job:" + id, "status", "started", "enqueued_at", "2026-12-01T16:07:04.146997Z",
                     "started_at", "2026-12-01T16:07:05.146997Z"});
    batch.push_back({"ZADD", "rq:finished:default", std::to_string(1796148000 + i), "done-" + std::to_string(i)});
  }
  batch.push_back({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "10", "STREAMS", "jobs", ">"});
  auto replies = client->pipeline(batch);
  if (!replies) state.SkipWithError(replies.error().message.c_str());
  return replies.ok();
}

// redis_usec sums the usec of every command in INFO commandstats except INFO itself.
double redis_usec(RedisServer& redis) {
  const auto info = redis.run({"INFO", "commandstats"});
  std::istringstream lines(info.str);
  std::string line;
  double usec = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("cmdstat_", 0) != 0 || line.rfind("cmdstat_info:", 0) == 0) continue;
    const auto at = line.find("usec=");
    if (at != std::string::npos) usec += std::stod(line.substr(at + 5));
  }
  return usec;
}

// loaded_redis returns the one redis-server of every benchmark, loaded with `jobs` jobs per system.
RedisServer* loaded_redis(long long jobs, benchmark::State& state) {
  static RedisServer redis;  // started once, stopped at exit
  static long long loaded = -1;
  if (!redis.ok()) {
    state.SkipWithError(redis.error().c_str());
    return nullptr;
  }
  if (loaded != jobs) {
    if (!load(redis, jobs, state)) return nullptr;
    loaded = jobs;
  }
  return &redis;
}

inferscope::queue::QueueCollectorOptions bench_options(const RedisServer& redis) {
  return {.target_name = "bench",
          .target = redis.target(),
          .systems = {QueueSystem::kRq, QueueSystem::kCelery, QueueSystem::kStreams, QueueSystem::kList},
          .streams = {{.key = "jobs", .group = "workers"}},
          .lists = {"plain", "pla*"}};
}

// BM_Collect/N: one collection between discovery passes (the steady state).
void BM_Collect(benchmark::State& state) {
  RedisServer* redis = loaded_redis(state.range(0), state);
  if (redis == nullptr) return;
  inferscope::metrics::Registry registry;
  QueueCollector collector(bench_options(*redis), registry);
  if (auto first = collector.collect_once(); !first) {  // connects, discovers, sets baselines
    state.SkipWithError(first.error().message.c_str());
    return;
  }
  redis->run({"CONFIG", "RESETSTAT"});
  for (auto _ : state) {
    auto collected = collector.collect_once();
    if (!collected) {
      state.SkipWithError(collected.error().message.c_str());
      return;
    }
  }
  state.counters["redis_cpu_us"] = redis_usec(*redis) / static_cast<double>(state.iterations());
  const auto status = collector.status();
  double depth = 0;
  for (const auto& queue : status.queues) depth += queue.depth.value_or(0);
  state.counters["depth_seen"] = depth;
}
BENCHMARK(BM_Collect)->Arg(10)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMicrosecond)->UseRealTime();

// BM_DiscoveryPass/N: one discovery pass (SCAN over the whole keyspace for Celery's binding sets
// and the list pattern), which runs once per discovery_interval (5 min by default): the one cost
// that grows with the number of keys, reported so that it is not hidden in the figure above.
void BM_DiscoveryPass(benchmark::State& state) {
  RedisServer* redis = loaded_redis(state.range(0), state);
  if (redis == nullptr) return;
  inferscope::metrics::Registry registry;
  QueueCollector collector(bench_options(*redis), registry);
  redis->run({"CONFIG", "RESETSTAT"});
  for (auto _ : state) {
    auto discovered = collector.discover_now();
    if (!discovered) {
      state.SkipWithError(discovered.error().message.c_str());
      return;
    }
  }
  state.counters["redis_cpu_us"] = redis_usec(*redis) / static_cast<double>(state.iterations());
  state.counters["keys"] = static_cast<double>(redis->run({"DBSIZE"}).integer);
}
BENCHMARK(BM_DiscoveryPass)->Arg(10)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return inferscope::bench::run_benchmarks_with_ratios(argc, argv, [](const inferscope::bench::RatioReporter& r) {
    const std::string peer = "BM_Collect/10/real_time";
    for (const char* n : {"10000", "1000000"}) {
      const std::string ours = std::string("BM_Collect/") + n + "/real_time";
      const std::string pass = std::string("BM_DiscoveryPass/") + n + "/real_time";
      inferscope::bench::print_ratio(std::string("discovery pass wall time, ") + n + " vs 10 jobs", r.time(pass),
                                     r.time("BM_DiscoveryPass/10/real_time"), "us");
      inferscope::bench::print_ratio(std::string("collection wall time, ") + n + " vs 10 jobs", r.time(ours),
                                     r.time(peer), "us");
      inferscope::bench::print_ratio(std::string("redis CPU per collection, ") + n + " vs 10 jobs",
                                     r.counter(ours, "redis_cpu_us"), r.counter(peer, "redis_cpu_us"), "us");
    }
  });
}
