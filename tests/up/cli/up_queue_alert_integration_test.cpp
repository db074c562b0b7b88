// The queue tier end to end through `inferscope up` (INFERSCOPE_BINARY): Debian's redis-server,
// real RQ 1.13 workers (python3-rq) whose jobs call an in-process `serve`, up's queue collector on
// a redis target, its real Prometheus and Alertmanager, and a fake webhook robot. Workers killed →
// InferscopeQueueNotConsumed fires and reaches the robot; a worker back → resolved; jobs arriving
// at 5x the worker's capacity → InferscopeQueueBacklogGrowing. Short scrape/evaluation intervals
// (1 s) and `for` overrides keep it within about two minutes.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <thread>

#include "fake_report_robots.h"
#include "net/blocking_client.h"
#include "queue/queue_test_support.h"
#include "up/stack_test_support.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using inferscope::testing::TempDir;
using inferscope::testing::wait_until;
using testing::child_of;
using testing::FakeRobots;
using testing::get_status;
using testing::process_alive;
using testing::UpProcess;
namespace qt = queue::testing;

constexpr double kHold = 1.0;  // seconds each job runs after calling serve: one worker does ~1 job/s

// notified tells whether the webhook robot received `alert` with `status` (firing / resolved).
bool notified(FakeRobots& robots, const std::string& alert, const std::string& status) {
  std::lock_guard lock(robots.mutex);
  for (const auto& [robot, body] : robots.received) {
    if (robot != "webhook" || body.find(alert) == std::string::npos) continue;
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) continue;
    for (const auto& n : j.value("notifications", nlohmann::json::array())) {
      if (n.value("status", "") == status && n.dump().find(alert) != std::string::npos) return true;
    }
  }
  return false;
}

// queue_status returns the redis target `name` of up's GET /api/status (null when absent).
nlohmann::json queue_status(const std::string& api, const std::string& name) {
  auto reply = net::blocking_http_request("GET", api + "/api/status", {}, {}, 10s);
  if (!reply || reply->status != 200) return nullptr;
  const auto status = nlohmann::json::parse(reply->body, nullptr, false);
  if (status.is_discarded()) return nullptr;
  for (const auto& q : status.value("queues", nlohmann::json::array())) {
    if (q.value("name", "") == name) return q;
  }
  return nullptr;
}

// padded returns `name` as up --status prints it in its first column.
std::string padded(const std::string& name) { return name + std::string(name.size() < 17 ? 17 - name.size() : 1, ' '); }

// Tests workers killed → not consumed (fires, reaches the robot), a worker back → resolved, and a
// burst at 5x capacity → backlog growing; /api/status shows the target up with its queue.
TEST(UpQueueAlertIntegrationTest, WorkersKilledFireNotConsumedAndBurstFiresBacklogGrowing) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  FakeRobots robots;
  ASSERT_TRUE(robots.server);
  ::setenv("INFERSCOPE_QUEUE_E2E_WEBHOOK_URL", robots.url("/webhook").c_str(), 1);
  qt::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.error();
  serve::testing::TestServer serve(serve::testing::fast_options());
  ASSERT_TRUE(serve.ok());
  const std::string serve_url = "http://127.0.0.1:" + std::to_string(serve.port());
  TempDir started("queue-e2e-started");
  const std::vector<std::string> worker_args = {"worker", "--url", redis.url(), "--path", qt::kPythonDir, "default"};
  auto worker = std::make_unique<qt::Worker>("/usr/bin/rq", worker_args, "Listening on default");

  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: jobs\n    url: " << redis.url() << "\n"
                        << "    queues:\n      systems: [rq]\n"
                           "scrape_interval: 1s\n"
                           "slo:\n  queue_depth: 10\n"
                           "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                           "alerts:\n  for:\n    InferscopeQueueNotConsumed: 2s\n    InferscopeQueueBacklogGrowing: 3s\n"
                           "notifications:\n  channels:\n"
                           "    - name: hook\n      kind: webhook\n      url: {env: INFERSCOPE_QUEUE_E2E_WEBHOOK_URL}\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  EXPECT_TRUE(up.wait_line("target jobs: redis " + redis.url() + ", queues collected every 1s", 1s)) << up.output();

  // The collector sees the idle worker; Prometheus scrapes it under job "jobs" from up's API.
  ASSERT_TRUE(wait_until([&] {
    const auto q = queue_status(urls->api, "jobs");
    if (q.is_null() || q.value("health", "") != "up") return false;
    for (const auto& s : q["systems"]) {
      if (s["system"] == "rq" && s["workers"].is_object() && s["workers"].value("idle", 0) >= 1) return true;
    }
    return false;
  }, 30s)) << queue_status(urls->api, "jobs").dump() << "\n" << up.output();
  auto scraped = net::blocking_http_request("GET", urls->prometheus + "/api/v1/query?query=inferscope_queue_up%7Bjob%3D%22jobs%22%7D");
  ASSERT_TRUE(wait_until([&] {
    scraped = net::blocking_http_request("GET", urls->prometheus + "/api/v1/query?query=inferscope_queue_up%7Bjob%3D%22jobs%22%7D");
    return scraped && scraped->body.find("\"1\"]") != std::string::npos;
  }, 30s)) << (scraped ? scraped->body : scraped.error().message);

  // The worker dies while idle (a busy one's heartbeat would count it busy for 90 s); jobs wait.
  worker->kill();
  worker.reset();
  const auto waiting = qt::enqueue({"rq", redis.url(), "default", "3", serve_url, "0.2", started.path().string()});
  ASSERT_EQ(waiting.size(), 3u);
  ASSERT_TRUE(wait_until([&] { return notified(robots, "InferscopeQueueNotConsumed", "firing"); }, 90s)) << up.output();
  EXPECT_TRUE(up.wait_line("inferscope up: alert firing InferscopeQueueNotConsumed job=jobs", 5s)) << up.output();
  const auto down_status = queue_status(urls->api, "jobs");
  ASSERT_FALSE(down_status.is_null());
  bool three_waiting = false;
  for (const auto& q : down_status["queues"]) three_waiting = three_waiting || (q["queue"] == "default" && q["depth"] == 3.0);
  EXPECT_TRUE(three_waiting) << down_status.dump();

  // A worker comes back and works the queue off.
  worker = std::make_unique<qt::Worker>("/usr/bin/rq", worker_args, "Listening on default");
  ASSERT_TRUE(wait_until([&] { return notified(robots, "InferscopeQueueNotConsumed", "resolved"); }, 90s)) << up.output();
  // Resolved at the first job seen starting; the worker then takes the other two.
  EXPECT_TRUE(wait_until([&] {
    return std::all_of(waiting.begin(), waiting.end(),
                       [&](const qt::Enqueued& job) { return qt::started_at(started.path(), job.index).has_value(); });
  }, 30s)) << worker->output();

  // Jobs arrive at 5 per second for 20 s while the worker finishes about one per second.
  const auto burst_end = std::chrono::steady_clock::now() + 60s;
  while (!notified(robots, "InferscopeQueueBacklogGrowing", "firing") && std::chrono::steady_clock::now() < burst_end) {
    const auto tick = std::chrono::steady_clock::now();
    qt::enqueue({"rq", redis.url(), "default", "5", serve_url, std::to_string(kHold), started.path().string()});
    std::this_thread::sleep_until(tick + 1s);
  }
  ASSERT_TRUE(notified(robots, "InferscopeQueueBacklogGrowing", "firing")) << up.output();
  EXPECT_TRUE(up.wait_line("inferscope up: alert firing InferscopeQueueBacklogGrowing job=jobs", 10s)) << up.output();

  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

// read_file returns a file's bytes ("" when unreadable): /proc/PID/cmdline and environ, logs.
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Tests the redis target's prometheus-redis-exporter: up runs it with the target's password in its
// environment only (not on its command line, not in up's output or the exporter's log), up's
// Prometheus scrapes it as job jobs-redis (redis_up 1), `up --status` lists it as a child, a killed
// exporter is restarted on its port and scraped again, a Redis filled past a small maxmemory under
// allkeys-lru evicts keys and InferscopeRedisEvictingKeys fires for job jobs, and no exporter is
// left running after up exits.
TEST(UpQueueAlertIntegrationTest, RedisExporterIsScrapedRestartedAndEvictionsFire) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kRedisExporter}));
  TempDir dir;
  const std::string password = "exporter-secret-" + std::to_string(::getpid());
  qt::RedisServer redis(password);
  ASSERT_TRUE(redis.ok()) << redis.error();
  ::setenv("INFERSCOPE_QUEUE_E2E_REDIS_PASSWORD", password.c_str(), 1);
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: jobs\n    url: " << redis.url() << "\n"
                        << "    password_env: INFERSCOPE_QUEUE_E2E_REDIS_PASSWORD\n"
                           "    queues:\n      systems: [rq]\n"
                           "scrape_interval: 1s\n"
                           "alertmanager:\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                           "alerts:\n  for:\n    InferscopeRedisEvictingKeys: 2s\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();

  const nlohmann::json first = child_of(get_status(*urls), "redis-exporter-jobs");
  ASSERT_TRUE(first.is_object()) << get_status(*urls).dump() << "\n" << up.output();
  const int first_pid = first["pid"].get<int>();
  const int exporter_port = first["port"].get<int>();
  EXPECT_TRUE(first["running"].get<bool>());
  EXPECT_GT(exporter_port, 0);
  const std::string cmdline = read_file("/proc/" + std::to_string(first_pid) + "/cmdline");
  EXPECT_NE(cmdline.find("-redis.addr=" + redis.url()), std::string::npos) << cmdline;
  EXPECT_EQ(cmdline.find(password), std::string::npos) << "the password is on the exporter's command line";
  EXPECT_NE(read_file("/proc/" + std::to_string(first_pid) + "/environ").find("REDIS_PASSWORD=" + password),
            std::string::npos);
  // redis_up 1 proves the exporter authenticated with the password from its environment.
  const std::string redis_up = "redis_up{job=\"jobs-redis\",inferscope_kind=\"redis-exporter\"}";
  ASSERT_TRUE(wait_until([&] { return testing::query_value(urls->prometheus, redis_up) == 1.0; }, 30s))
      << get_status(*urls).dump() << "\n" << up.output();
  auto status = UpProcess({"up", "--status", "--port", std::to_string(urls->api_port())});
  ASSERT_TRUE(status.started());
  EXPECT_TRUE(status.wait_line("redis-exporter-jobs running  pid " + std::to_string(first_pid), 20s)) << status.output();

  ASSERT_EQ(::kill(first_pid, SIGKILL), 0);
  ASSERT_TRUE(up.wait_line("inferscope up: redis-exporter-jobs restarted", 60s)) << up.output();
  int second_pid = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        const nlohmann::json c = child_of(get_status(*urls), "redis-exporter-jobs");
        if (!c.is_object() || !c.value("running", false) || c.value("restarts", 0) < 1) return false;
        second_pid = c["pid"].get<int>();
        return second_pid != first_pid && c["port"].get<int>() == exporter_port;
      },
      30s))
      << get_status(*urls).dump();
  // Prometheus scraped the target successfully in a later second than the new process started.
  const auto scraped_since_restart = [&] {
    const nlohmann::json status = get_status(*urls);
    const nlohmann::json c = child_of(status, "redis-exporter-jobs");
    if (!c.is_object()) return false;
    const std::string started = c.value("up_since", "").substr(0, 19);
    for (const auto& t : status["targets"]) {
      if (t.value("job", "") == "jobs-redis" && t.value("health", "") == "up" &&
          t.value("last_scrape", "").substr(0, 19) > started) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(wait_until([&] { return scraped_since_restart() && testing::query_value(urls->prometheus, redis_up) == 1.0; },
                         30s))
      << "the restarted exporter is not scraped\n" << get_status(*urls).dump() << "\n" << up.output();

  // 200 values of 32 KiB into a Redis capped at 4 MiB that evicts the least recently used keys.
  EXPECT_EQ(redis.run({"CONFIG", "SET", "maxmemory", "4mb"}).str, "OK");
  EXPECT_EQ(redis.run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}).str, "OK");
  {
    auto client = queue::RedisClient::connect(redis.target(), 5s);
    ASSERT_TRUE(client) << client.error().message;
    std::vector<queue::RedisCommand> fill;
    for (int i = 0; i < 200; ++i) fill.push_back({"SET", "fill:" + std::to_string(i), std::string(32 * 1024, 'x')});
    ASSERT_TRUE(client->pipeline(fill));
  }
  ASSERT_TRUE(up.wait_line("inferscope up: alert firing InferscopeRedisEvictingKeys job=jobs", 60s)) << up.output();
  EXPECT_GT(testing::query_value(urls->prometheus, "redis_evicted_keys_total{job=\"jobs-redis\"}").value_or(0), 0.0);

  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
  EXPECT_TRUE(wait_until([&] { return !process_alive(second_pid); }, 10s)) << "the redis exporter outlived up";
  EXPECT_EQ(up.output().find(password), std::string::npos) << "up printed the redis password";
  EXPECT_EQ(read_file(dir.path() / "state" / "logs" / "redis-exporter-jobs.log").find(password), std::string::npos);
}

// Tests that an unreachable Redis is down, never empty: /api/status says down with the error,
// inferscope_queue_up is 0 in up's Prometheus and InferscopeTargetDown fires for the job.
TEST(UpQueueAlertIntegrationTest, UnreachableRedisIsDownNotEmpty) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir;
  const int port = qt::free_loopback_port();
  const auto config = dir.path() / "up.yaml";
  std::ofstream(config) << "targets:\n  - name: gone\n    url: redis://127.0.0.1:" << port << "/0\n"
                        << "scrape_interval: 1s\nalerts:\n  for:\n    InferscopeTargetDown: 0s\n";
  UpProcess up({"up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
                "--state-dir", (dir.path() / "state").string()});
  const auto urls = up.wait_ready(60s);
  ASSERT_TRUE(urls) << up.output();
  EXPECT_TRUE(up.wait_line("queue target gone: ", 30s)) << up.output();
  nlohmann::json q;
  ASSERT_TRUE(wait_until([&] {
    q = queue_status(urls->api, "gone");
    return !q.is_null() && q.value("health", "") == "down";
  }, 30s)) << q.dump();
  EXPECT_NE(q.value("last_error", "").find("redis://127.0.0.1:" + std::to_string(port) + "/0"), std::string::npos) << q.dump();
  EXPECT_TRUE(q["queues"].empty()) << q.dump();
  ASSERT_TRUE(up.wait_line("inferscope up: alert firing InferscopeTargetDown job=gone", 60s)) << up.output();
  auto status = UpProcess({"up", "--status", "--port", std::to_string(urls->api_port())});
  ASSERT_TRUE(status.started());
  EXPECT_TRUE(status.wait_line(padded("gone") + "down", 20s)) << status.output();
  ASSERT_EQ(::kill(up.process().pid(), SIGTERM), 0);
  EXPECT_TRUE(up.wait_line("inferscope up: stopped", 30s)) << up.output();
}

}  // namespace
}  // namespace inferscope::up
