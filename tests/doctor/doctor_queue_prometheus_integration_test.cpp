// Tests the doctor on a real queue tier in --prometheus mode, against the real Prometheus of
// `inferscope up` (INFERSCOPE_BINARY): the workload of doctor_queue_support.h (redis-server, serve,
// three RQ 1.13 or Celery 5.2 workers whose jobs call serve, a producer), up started with serve as target "sim"
// and the redis as target "jobs" (its queue collector, scraped with serve every second). After a
// steady baseline the test changes one thing and asks the doctor about the 12 s since, against the
// 12 s before, as `inferscope doctor --prometheus URL --window 12s --baseline 12s` does.
#include <fstream>
#include <iostream>
#include <thread>

#include "doctor/alert_diagnosis.h"
#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/doctor_queue_support.h"
#include "up/cli/up_process.h"
#include "up/stack_test_support.h"

namespace inferscope::doctor {
namespace {

using namespace std::chrono_literals;

constexpr double kWindowSeconds = 12;

// UpQueueTier is the workload plus `inferscope up` scraping serve and collecting the queue.
class UpQueueTier {
 public:
  explicit UpQueueTier(testing::QueueWorkload::Options workload = {}) : workload_(workload) {
    if (!workload_.ok()) return;
    const bool celery = workload_.system() == testing::QueueWorkload::System::kCelery;
    const auto config = dir_.path() / "up.yaml";
    std::ofstream(config) << "targets:\n  - name: sim\n    url: " << workload_.serve_url() << "/metrics\n"
                          << "    kind: inferscope\n  - name: jobs\n    url: " << workload_.redis().url() << "\n"
                          << "    queues:\n      systems: [" << (celery ? "celery" : "rq")
                          << "]\nscrape_interval: 1s\n";
    up_ = std::make_unique<up::testing::UpProcess>(std::vector<std::string>{
        "up", "--config", config.string(), "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
        "--state-dir", (dir_.path() / "state").string()});
    const auto urls = up_->wait_ready(60s);
    if (!urls) {
      ADD_FAILURE() << "up did not get ready:\n" << up_->output();
      return;
    }
    prometheus_ = urls->prometheus;
    // Both jobs scraped with data: serve's finished requests and the queue's jobs seen starting
    // (Celery records no starts: its workers seen through their heartbeats).
    const std::string queue_ready = celery ? "sum(inferscope_queue_workers{job=\"jobs\",state=~\"busy|idle\"})"
                                           : "sum(inferscope_queue_wait_seconds_count{job=\"jobs\"})";
    if (!up::testing::wait_until(
            [&] {
              return up::testing::query_value(prometheus_, "sum(inferscope_request_duration_seconds_count{job=\"sim\"})") > 0 &&
                     up::testing::query_value(prometheus_, queue_ready) > 0;
            },
            60s)) {
      ADD_FAILURE() << "up's Prometheus has no data of sim and jobs:\n" << up_->output();
      prometheus_.clear();
    }
  }
  bool ok() const { return !prometheus_.empty(); }
  const std::string& prometheus() const { return prometheus_; }
  testing::QueueWorkload& workload() { return workload_; }

  // diagnose_change lets the baseline fill (12 s of steady work), runs `change`, waits one window
  // and diagnoses that window against the one before it.
  Diagnosis diagnose_change(const std::function<void()>& change) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kWindowSeconds));
    change();
    std::this_thread::sleep_for(std::chrono::duration<double>(kWindowSeconds));
    auto d = run_doctor(DoctorRequest{prometheus_, 0, kWindowSeconds, kWindowSeconds, "", ""});
    EXPECT_TRUE(d) << (d ? "" : d.error().message);
    return d ? *d : Diagnosis{};
  }

 private:
  testing::QueueWorkload workload_;
  inferscope::testing::TempDir dir_{"doctor-queue-up"};
  std::unique_ptr<up::testing::UpProcess> up_;
  std::string prometheus_;
};

// rank returns the position of `cause` among the findings (-1 when not named).
int rank(const Diagnosis& d, const std::string& cause) {
  for (std::size_t i = 0; i < d.findings.size(); ++i)
    if (d.findings[i].cause == cause) return static_cast<int>(i);
  return -1;
}

// Tests that SIGKILLed workers read as workers_down through Prometheus: jobs keep arriving,
// nothing consumes them, the server behind idles.
TEST(DoctorQueuePrometheusIntegrationTest, KilledWorkersAreWorkersDown) {
  UpQueueTier tier;
  ASSERT_TRUE(tier.ok());
  const Diagnosis d = tier.diagnose_change([&] { tier.workload().kill_workers(); });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "workers_down") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "queue_wait") << to_text(d);

  // An alert on the queue's job keeps the queue's own figures for its resolved message (its
  // server behind has no request to time): the jobs waiting when it fired, and before.
  const AlertDiagnosis alert = diagnose_alert(tier.prometheus(), {{"job", "jobs"}, {"alertname", "T"}}, "");
  const auto record = record_from_json(alert.record);
  ASSERT_TRUE(record) << alert.markdown;
  const RecoveredFigure* waiting = nullptr;
  for (const RecoveredFigure& f : record->figures)
    if (f.name == "jobs waiting (at each span's end)") waiting = &f;
  ASSERT_NE(waiting, nullptr) << alert.record;
  EXPECT_GE(waiting->during, 1) << alert.record;
  EXPECT_FALSE(std::isnan(waiting->before)) << alert.record;
}

// Tests that jobs arriving at about 5x what the three workers finish read as queue_backlog: the
// queue and its oldest job grow while the workers stay busy and jobs keep ending.
TEST(DoctorQueuePrometheusIntegrationTest, BurstOfFiveTimesCapacityIsQueueBacklog) {
  UpQueueTier tier;
  ASSERT_TRUE(tier.ok());
  const Diagnosis d = tier.diagnose_change([&] { tier.workload().set_jobs_per_tick(5 * 8); });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "queue_backlog") << to_text(d);
  EXPECT_EQ(rank(d, "workers_down"), -1) << to_text(d);
}

// Tests the trap through Prometheus: serve behind the queue decodes 100x slower, jobs run longer,
// the same workers finish fewer and the queue backs up; the doctor names decode_slowdown first and
// queue_backlog, if at all, only after it.
TEST(DoctorQueuePrometheusIntegrationTest, SlowerServerBehindTheQueueIsDecodeSlowdown) {
  UpQueueTier tier;
  ASSERT_TRUE(tier.ok());
  const Diagnosis d = tier.diagnose_change([&] {
    EXPECT_EQ(testing::set_faults(tier.workload().serve_port(), R"({"decode_slowdown":100})"), 200);
  });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(rank(d, "workers_down"), -1) << to_text(d);
  const int backlog = rank(d, "queue_backlog");
  EXPECT_TRUE(backlog == -1 || backlog > 0) << to_text(d);
}

// Tests issue 31's Celery case through Prometheus: three Celery workers in front of an unchanged
// serve, plain Celery messages (no enqueue time), 1 job/s, then a burst of 24 jobs/s, about ten
// times what the workers finish; degraded, queue_backlog, with the wait Little's law estimates.
TEST(DoctorQueuePrometheusIntegrationTest, CeleryBurstIsQueueBacklogWithEstimatedWait) {
  UpQueueTier tier(testing::QueueWorkload::Celery());
  ASSERT_TRUE(tier.ok());
  const Diagnosis d = tier.diagnose_change([&] { tier.workload().set_jobs_per_tick(48); });
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  std::cout << to_text(d);  // the diagnosis of a live Celery burst, for the log
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "queue_backlog") << to_text(d);
  EXPECT_EQ(rank(d, "workers_down"), -1) << to_text(d);
  EXPECT_NE(f.summary.find("; estimated wait "), std::string::npos) << f.summary;
  EXPECT_NE(f.summary.find(" (Little's law: mean depth / completions; the queue records no enqueue time)"),
            std::string::npos)
      << f.summary;
}

}  // namespace
}  // namespace inferscope::doctor
