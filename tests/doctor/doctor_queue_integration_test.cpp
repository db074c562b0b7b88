// Tests the doctor on a real queue tier in direct-scrape mode (the mode that needs only URLs):
// Debian's redis-server, three real RQ 1.13 workers (python3-rq) or Celery 5.2 workers
// (python3-celery) whose jobs call an in-process `serve`, a producer enqueueing with the system's
// own API, and the queue collector running in the test process with its registry served on a
// loopback /metrics. The doctor scrapes serve and the
// collector for 24 s; halfway the test changes one thing and the second half is compared with the
// first, as `inferscope doctor --scrape URL --scrape URL --duration 24s` does.
#include <inferscope/metrics/metrics_server.h>

#include <future>
#include <iostream>
#include <thread>

#include "doctor/diagnosis.h"
#include "doctor/diagnosis_format.h"
#include "doctor/doctor_queue_support.h"
#include "doctor/scrape_collector.h"

namespace inferscope::doctor {
namespace {

using namespace std::chrono_literals;

// QueueTier is the workload (doctor_queue_support.h) plus the collector of its queues (RQ or
// Celery, as the workload's) every 500 ms, in this process, with its registry on an ephemeral port.
class QueueTier {
 public:
  explicit QueueTier(testing::QueueWorkload::Options workload = {}) : workload_(workload) {
    if (!workload_.ok()) return;
    const bool celery = workload_.system() == testing::QueueWorkload::System::kCelery;
    queue::QueueCollectorOptions options{.systems = {celery ? queue::QueueSystem::kCelery : queue::QueueSystem::kRq}};
    options.target_name = "jobs";
    options.target = workload_.redis().target();
    options.interval = 500ms;
    collector_ = std::make_unique<queue::QueueCollector>(std::move(options), registry_);
    collector_->start();
    auto endpoint = metrics::MetricsServer::start(registry_, {.bind_address = "127.0.0.1", .port = 0});
    if (!endpoint) {
      ADD_FAILURE() << endpoint.error().message;
      return;
    }
    endpoint_ = std::move(*endpoint);
  }
  ~QueueTier() {
    if (collector_) collector_->stop();
  }
  bool ok() const { return endpoint_ != nullptr; }
  std::uint16_t serve_port() const { return workload_.serve_port(); }
  std::vector<std::string> urls() const {
    return {workload_.serve_url() + "/metrics", "http://127.0.0.1:" + std::to_string(endpoint_->port()) + "/metrics"};
  }
  void kill_workers() { workload_.kill_workers(); }
  testing::QueueWorkload& workload() { return workload_; }

 private:
  testing::QueueWorkload workload_;
  metrics::Registry registry_;
  std::unique_ptr<queue::QueueCollector> collector_;
  std::unique_ptr<metrics::MetricsServer> endpoint_;
};

// diagnose_around scrapes the tier for 24 s (after 10 s of warm-up traffic), runs `change` at the
// midpoint and diagnoses the second half against the first.
Diagnosis diagnose_around(QueueTier& tier, const std::function<void()>& change) {
  std::this_thread::sleep_for(10s);
  ScrapeOptions options{.urls = tier.urls(), .duration_s = 24, .interval_s = 1};
  auto scraping = std::async(std::launch::async, [&] { return scrape_rounds(options); });
  std::this_thread::sleep_for(12s);
  change();
  auto result = scraping.get();
  EXPECT_TRUE(result.ok());
  if (!result.ok()) return {};
  return diagnose(snapshot_from_scrapes(options, *result, "", nullptr));
}

bool reports(const Diagnosis& d, const std::string& cause) {
  for (const auto& f : d.findings)
    if (f.cause == cause) return true;
  return false;
}

// evidence_of returns the finding's evidence whose metric starts with `prefix` (nullptr if none).
const Evidence* evidence_of(const Finding& f, const std::string& prefix) {
  for (const auto& ev : f.evidence)
    if (ev.metric.rfind(prefix, 0) == 0) return &ev;
  return nullptr;
}

// Tests that SIGKILLed workers (RQ still lists them for a while) read as workers_down: jobs keep
// arriving, nothing consumes them, the server behind idles.
TEST(DoctorQueueIntegrationTest, KilledWorkersAreWorkersDown) {
  QueueTier tier;
  ASSERT_TRUE(tier.ok());
  Diagnosis d = diagnose_around(tier, [&] { tier.kill_workers(); });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "workers_down") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "queue_wait") << to_text(d);
}

// Tests a burst of about five times what the workers can run: the queue backs up while every
// worker is busy and jobs still end at their pace; queue_backlog, not workers_down.
TEST(DoctorQueueIntegrationTest, BurstOfFiveTimesCapacityIsQueueBacklog) {
  QueueTier tier;
  ASSERT_TRUE(tier.ok());
  Diagnosis d = diagnose_around(tier, [&] { tier.workload().set_jobs_per_tick(5 * 8); });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "queue_backlog") << to_text(d);
  EXPECT_FALSE(reports(d, "workers_down")) << to_text(d);
}

// Tests the trap: the server behind the queue decodes 100x slower, jobs run about 4x longer, the
// same workers finish fewer than arrive and the queue backs up; the doctor names decode_slowdown,
// says the backlog is its consequence, and puts no queue cause above it.
TEST(DoctorQueueIntegrationTest, SlowerServerBehindTheQueueIsDecodeSlowdown) {
  QueueTier tier;
  ASSERT_TRUE(tier.ok());
  Diagnosis d = diagnose_around(tier, [&] {
    EXPECT_EQ(testing::set_faults(tier.serve_port(), R"({"decode_slowdown":100})"), 200);
  });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("backlog is its consequence"), std::string::npos) << to_text(d);
  EXPECT_FALSE(reports(d, "workers_down")) << to_text(d);
  for (const auto& f : d.findings) {
    if (f.cause == "queue_backlog") {
      EXPECT_LT(f.score, d.findings.front().score) << to_text(d);
    }
  }
}

// Tests issue 31's Celery case live: three Celery workers (python3-celery) in front of an unchanged
// serve, plain Celery messages (no enqueue time: no oldest age, no wait stage, no job counters),
// 1 job/s in the baseline, then a burst of 24 jobs/s, about ten times the 2-3 jobs/s the workers
// finish (one message per transport poll each; their heartbeats read them idle most of the time).
// The queue in front is part of what users wait for: degraded, queue_backlog, with the wait
// Little's law estimates (mean depth / the server's finished requests, one per job).
TEST(DoctorQueueIntegrationTest, CeleryBurstIsQueueBacklogWithEstimatedWait) {
  QueueTier tier(testing::QueueWorkload::Celery());
  ASSERT_TRUE(tier.ok());
  Diagnosis d = diagnose_around(tier, [&] { tier.workload().set_jobs_per_tick(48); });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  std::cout << to_text(d);  // the diagnosis of a live Celery burst, for the log
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "queue_backlog") << to_text(d);
  EXPECT_EQ(f.stage, "queue_wait") << to_text(d);
  EXPECT_FALSE(reports(d, "workers_down")) << to_text(d);
  EXPECT_NE(f.summary.find("; estimated wait "), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find(" (Little's law: mean depth / completions; the queue records no enqueue time)"),
            std::string::npos)
      << f.summary;
  // The estimate rose (the wait is the queue's, the server unchanged) and the burst was several
  // times what the workers finished.
  const Evidence* wait = evidence_of(f, "estimated wait (Little's law");
  ASSERT_NE(wait, nullptr) << to_text(d);
  EXPECT_NE(wait->metric.find("finished server requests/s, one per job"), std::string::npos) << wait->metric;
  EXPECT_GT(wait->incident, 2 * wait->baseline + 1) << to_text(d);
  const Evidence* arrivals = evidence_of(f, "job arrivals");
  ASSERT_NE(arrivals, nullptr) << to_text(d);
  EXPECT_GT(arrivals->incident, 2 * arrivals->baseline) << to_text(d);
}

}  // namespace
}  // namespace inferscope::doctor
