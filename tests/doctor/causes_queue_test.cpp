// Unit tests of the job queue family (causes_queue.cpp): workers_down, queue_backlog and
// worker_failures told apart by what the workers and the server behind do meanwhile.
#include "doctor/diagnosis.h"

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that a healthy queue in front changes nothing, and that the queue's wait is the first
// stage of the table.
TEST(QueueDiagnosisTest, HealthyQueueIsHealthy) {
  Diagnosis d = run(queued());
  EXPECT_EQ(d.verdict, "healthy") << to_text(d);
  ASSERT_FALSE(d.stages.empty());
  EXPECT_EQ(d.stages.front().stage, "queue_wait");
  EXPECT_TRUE(std::isnan(d.stages.front().share)) << "the queue's wait is outside the server's e2e change";
}

// Tests workers_down: the workers stop, jobs pile up and age a second per second, the server
// behind idles. Both when the server still finished enough requests early in the window and when
// it got none at all (then only the queue tells).
TEST(QueueDiagnosisTest, WorkersDownWhenNothingConsumes) {
  Snapshot late = queued();  // workers killed three quarters into the window
  late.signals["queue_depth"].incident = line(1, 75, 0.75);
  late.signals["queue_oldest_age"].incident = line(0.4, 75, 0.75);
  late.signals["queue_jobs_finished"].incident = rate(5, 300, 0.75);
  late.signals["queue_in_progress"].incident = line(1.5, 0, 0.75);
  late.signals["queue_workers_busy"].incident = line(1.5, 0, 0.75);
  late.signals["queue_workers_idle"].incident = line(0.5, 0, 0.75);
  late.signals["request_rate"] = quantity(5, 3.75, 100, "req/s", 0.02);
  late.signals["running"].incident = line(2, 0, 0.75);
  Diagnosis d = run(late);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "workers_down") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "queue_wait");
  EXPECT_FALSE(reports(d, "queue_backlog")) << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("no live worker"), std::string::npos) << d.findings.front().summary;

  Snapshot idle = queued();  // gone for the whole window; their hashes have not expired yet
  idle.signals["queue_depth"].incident = line(20, 320);
  idle.signals["queue_oldest_age"].incident = line(4, 304);
  idle.signals["queue_jobs_finished"].incident = rate(0, 300);
  idle.signals["queue_in_progress"].incident = line(0, 0);
  idle.signals["queue_workers_busy"].incident = line(0, 0);
  idle.signals["queue_workers_idle"].incident = line(2, 2);
  idle.stages["queue_wait"].incident = window(kNaN, 0);
  idle.latency["e2e"].incident = window(kNaN, 0);
  idle.signals["request_rate"].incident = window(0, 0);
  idle.signals["running"].incident = window(0, 100);
  Diagnosis i = run(idle);
  ASSERT_EQ(i.verdict, "degraded") << to_text(i);
  EXPECT_EQ(i.findings.front().cause, "workers_down") << to_text(i);
  EXPECT_NE(i.headline.find("jobs wait in the queue"), std::string::npos) << i.headline;
  EXPECT_NE(i.findings.front().summary.find("none busy"), std::string::npos) << i.findings.front().summary;

  // Stopped moments before the window's end (an alert that fired within seconds): most of the
  // window's last quarter still consumed, so only the workers' state tells; a backlog "while the
  // workers are busy" would contradict it, even when the queue had been growing before.
  Snapshot recent = queued();
  recent.signals["queue_depth"].incident = line(1, 40);  // already behind before they stopped
  recent.signals["queue_oldest_age"].incident = line(0.4, 30, 0.9);
  recent.signals["queue_jobs_finished"].incident = rate(5, 300, 0.92);
  recent.signals["queue_in_progress"].incident = line(1.5, 0, 0.9);
  recent.signals["queue_workers_busy"].incident = line(2, 0, 0.9);
  recent.signals["queue_workers_busy"].baseline = line(2, 2);
  recent.signals["queue_workers_idle"].baseline = line(0, 0);
  recent.signals["queue_workers_idle"].incident = line(0, 0);
  recent.signals["running"].incident = line(2, 0, 0.9);
  Diagnosis r = run(recent);
  ASSERT_EQ(r.verdict, "degraded") << to_text(r);
  EXPECT_EQ(r.findings.front().cause, "workers_down") << to_text(r);
  EXPECT_FALSE(reports(r, "queue_backlog")) << to_text(r);

  // SIGKILLed mid-job: RQ still lists them busy with their jobs in progress for up to 90 s, but
  // nothing ends for far longer than a job runs.
  Snapshot killed = late;
  killed.signals["queue_in_progress"].incident = line(1.5, 2, 0.75);
  killed.signals["queue_workers_busy"].incident = line(1.5, 2, 0.75);
  Diagnosis k = run(killed);
  ASSERT_EQ(k.verdict, "degraded") << to_text(k);
  EXPECT_EQ(k.findings.front().cause, "workers_down") << to_text(k);
  EXPECT_NE(k.findings.front().summary.find("still registered busy"), std::string::npos) << k.findings.front().summary;

  // The same silence while the server holds the workers' requests is the server's stall.
  Snapshot stalled = killed;
  stalled.signals["running"].incident = line(2, 2);
  Diagnosis st = run(stalled);
  for (const auto& f : st.findings) EXPECT_TRUE(f.cause != "workers_down" && f.cause != "queue_backlog") << to_text(st);
  bool said = false;
  for (const auto& c : st.considered) said |= c.cause == "workers_down" && c.reason.find("the server holds") == 0;
  EXPECT_TRUE(said) << to_text(st);
}

// backlogged is queued() in a burst beyond what its two workers can run, both busy throughout.
Snapshot backlogged() {
  Snapshot s = queued();
  s.signals["queue_depth"].incident = line(1, 1800);
  s.signals["queue_oldest_age"].incident = line(0.4, 280);
  s.stages["queue_wait"].incident = window(60, 1950, 0);
  s.signals["queue_jobs_finished"].incident = rate(6.5, 300);
  s.signals["queue_in_progress"].incident = line(2, 2);
  s.signals["queue_workers_busy"].incident = line(2, 2);
  s.signals["queue_workers_idle"].incident = line(0, 0);
  return s;
}

// failing_jobs is queued() with a fifth of its jobs failing in the window (none in the baseline).
Snapshot failing_jobs() {
  Snapshot s = queued();
  s.signals["queue_jobs_finished"].incident = rate(4, 300);
  s.signals["queue_jobs_failed"].incident = rate(1, 300);
  return s;
}

// Tests queue_backlog: a burst beyond what two saturated workers can run. The server behind sees
// the same load (the workers cap it), the queue grows, and the finding names the capacity gap.
TEST(QueueDiagnosisTest, BacklogWhenArrivalsOutpaceBusyWorkers) {
  Diagnosis d = run(backlogged());
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "queue_backlog") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "queue_wait");
  EXPECT_FALSE(reports(d, "workers_down")) << to_text(d);
  const std::string& summary = d.findings.front().summary;
  EXPECT_NE(summary.find("/s short"), std::string::npos) << summary;
  EXPECT_NE(summary.find("more workers"), std::string::npos) << summary;
}

// Tests the trap: the server behind the queue decodes slower, so every job runs longer, the same
// workers finish fewer and the queue backs up. The cause is decode_slowdown; the backlog is its
// consequence, said in its finding, not a queue cause of its own.
TEST(QueueDiagnosisTest, DecodeSlowdownBehindQueueIsTheServersCause) {
  Snapshot s = queued();
  s.latency["e2e"] = quantity(0.300, 0.750, 100, "s", 0.02);
  s.stages["decode"] = quantity(0.245, 0.695);
  s.latency["tpot"] = quantity(0.008, 0.022);
  s.latency["itl"] = quantity(0.008, 0.022);
  s.latency["queue_run"] = quantity(0.31, 0.76, 1500);
  s.signals["request_rate"] = quantity(5, 2.6, 100, "req/s", 0.02);
  s.signals["queue_jobs_finished"].incident = rate(2.6, 300);
  s.signals["queue_depth"].incident = line(1, 720);
  s.signals["queue_oldest_age"].incident = line(0.4, 140);
  s.stages["queue_wait"].incident = window(40, 780, 0);
  s.signals["queue_in_progress"].incident = line(2, 2);
  s.signals["queue_workers_busy"].incident = line(2, 2);
  s.signals["queue_workers_idle"].incident = line(0, 0);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  const Finding& top = d.findings.front();
  EXPECT_EQ(top.cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(top.stage, "decode");
  EXPECT_NE(top.summary.find("backlog is its consequence"), std::string::npos) << top.summary;
  for (const auto& f : d.findings)
    EXPECT_TRUE(f.cause != "queue_backlog" && f.cause != "workers_down") << to_text(d);
  bool said = false;
  for (const auto& c : d.considered)
    said |= c.cause == "queue_backlog" && c.reason.find("a consequence of decode_slowdown") != std::string::npos;
  EXPECT_TRUE(said) << to_text(d);
}

// Tests worker_failures: the failed share of jobs rises while the server's own errors do not.
TEST(QueueDiagnosisTest, WorkerFailuresWhenFailedShareRises) {
  Diagnosis d = run(failing_jobs());
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().cause, "worker_failures") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("from 0% to 20%"), std::string::npos) << d.findings.front().summary;
}

// Tests that with latency flat (no wait stage measured) the headline leads with what the queue's
// users feel: the queue's depth and oldest job for a backlog, the failed share's own sentence for
// worker_failures.
TEST(QueueDiagnosisTest, HeadlineLeadsWithTheQueueWhileLatencyIsFlat) {
  Snapshot backlog = backlogged();
  backlog.stages.erase("queue_wait");
  Diagnosis b = run(backlog);
  ASSERT_EQ(b.verdict, "degraded") << to_text(b);
  EXPECT_EQ(b.headline,
            "degraded: jobs wait in the queue (peak depth 1 -> 1800, oldest job 400 ms -> 280.00 s); top cause "
            "queue_backlog (queue_wait)")
      << to_text(b);

  Diagnosis f = run(failing_jobs());
  ASSERT_FALSE(f.findings.empty()) << to_text(f);
  EXPECT_EQ(f.headline, "degraded: " + f.findings.front().summary + "; top cause worker_failures") << to_text(f);
}

// Tests that failed jobs beside the server's own errors are the server's: worker_failures says
// so, naming the server's error cause, and is weighed at half its strength.
TEST(QueueDiagnosisTest, WorkerFailuresBesideServerErrorsNameTheServersCause) {
  Snapshot s = failing_jobs();
  s.signals["error_rate"] = quantity(0.0, 1.0, 100, "req/s");
  s.signals["error_rate"].baseline = window(0, 0);
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  EXPECT_TRUE(reports(d, "error_spike")) << to_text(d);
  const Finding* failures = nullptr;
  for (const Finding& f : d.findings)
    if (f.cause == "worker_failures") failures = &f;
  ASSERT_NE(failures, nullptr) << to_text(d);
  EXPECT_NEAR(failures->score, 0.5, 1e-9) << to_text(d);
  EXPECT_NE(failures->summary.find("; the server's own errors rose too (error_spike): jobs fail because their calls fail"),
            std::string::npos)
      << failures->summary;
}

// Tests a Celery queue (no enqueue time: no oldest age, no wait stage, no job counters) in front
// of an unchanged server: a burst takes the depth from about 6 to 128 while both workers stay
// busy. The server's finished requests (one per job) stand for completions, Little's law
// (mean depth / completions) estimates the wait, and the verdict is degraded with queue_backlog.
TEST(QueueDiagnosisTest, CeleryBacklogWithoutEnqueueTimes) {
  Snapshot s = queued();
  for (const char* id : {"queue_oldest_age", "queue_jobs_finished", "queue_jobs_failed"}) s.signals.erase(id);
  s.latency.erase("queue_run");
  s.stages.erase("queue_wait");
  s.signals["queue_depth"].baseline = line(6, 6);
  s.signals["queue_depth"].incident = line(6, 128);
  s.signals["queue_workers_busy"] = quantity(2, 2, 12, "workers");
  s.signals["queue_workers_idle"] = quantity(0, 0, 12, "workers");
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d, true);
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "queue_backlog") << to_text(d, true);
  // 67 jobs waiting on average against 5 ending per second: about 13 s, from 1.2 s.
  EXPECT_NE(f.summary.find("estimated wait 1.20 s -> 13.40 s (Little's law"), std::string::npos) << f.summary;
  bool evidence = false;
  for (const auto& ev : f.evidence) evidence |= ev.metric.find("finished server requests/s, one per job") != std::string::npos;
  EXPECT_TRUE(evidence) << to_text(d);
}

// samples builds a gauge window from its samples (NaN: no sample).
WindowStat samples(std::vector<double> v) {
  WindowStat w;
  double total = 0;
  for (double x : v) {
    w.intervals.push_back(x);
    if (std::isnan(x)) continue;
    total += x;
    w.count += 1;
    w.max = std::isnan(w.max) ? x : std::max(w.max, x);
  }
  if (w.count > 0) w.mean = total / w.count;
  return w;
}

// Tests the Celery burst as the live tier scraped it (doctor_queue_integration_test.cpp, three
// workers, 1 job/s then 24 jobs/s): the series Celery lacks are in the snapshot without samples
// (job counters), the oldest age is 0 while the queue is empty and absent once jobs wait, and the
// workers' heartbeats read busy only now and then (a worker takes one message per transport poll,
// about one a second) while the depth climbs from 0 to 219 and jobs end at least at the
// baseline's pace. Absent is not zero (no job "ended"), an age of 0 beside an empty queue is no
// wait, and the busy sample is not the workers' capacity: queue_backlog with the Little's-law
// wait, not workers_down, and the headline names no oldest job.
TEST(QueueDiagnosisTest, CeleryBurstAsScrapedLive) {
  Snapshot s = queued();
  s.latency.erase("queue_run");
  s.stages.erase("queue_wait");
  for (const char* id : {"queue_jobs_finished", "queue_jobs_failed"}) {
    s.signals[id].baseline = samples(std::vector<double>(12, kNaN));
    s.signals[id].incident = samples(std::vector<double>(12, kNaN));
  }
  // The collector's age: 0 while the queue is empty, none while plain messages wait.
  s.signals["queue_oldest_age"].baseline = samples({0, kNaN, 0, kNaN, 0, kNaN, 0, 0, kNaN, 0, kNaN, 0});
  s.signals["queue_oldest_age"].incident = samples({0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
  s.signals["queue_depth"].baseline = samples({0, 1, 0, 2, 0, 1, 0, 0, 1, 0, 2, 0});
  s.signals["queue_depth"].incident = samples({0, 0, 46, 45, 90, 88, 133, 131, 176, 174, 219, 217});
  const std::vector<double> base_busy = {1, 3, 2, 0, 0, 0, 0, 0, 0, 0, 1, 3};
  const std::vector<double> busy = {2, 0, 0, 0, 0, 0, 0, 0, 1, 3, 2, 0};
  auto idle_of = [](std::vector<double> v) {
    for (double& x : v) x = 3 - x;
    return v;
  };
  s.signals["queue_workers_busy"].baseline = samples(base_busy);
  s.signals["queue_workers_busy"].incident = samples(busy);
  s.signals["queue_in_progress"].baseline = samples(base_busy);
  s.signals["queue_in_progress"].incident = samples(busy);
  s.signals["queue_workers_idle"].baseline = samples(idle_of(base_busy));
  s.signals["queue_workers_idle"].incident = samples(idle_of(busy));
  s.signals["request_rate"] = quantity(1, 1.83, 20, "req/s");
  Diagnosis d = run(s);
  ASSERT_EQ(d.verdict, "degraded") << to_text(d, true);
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, "queue_backlog") << to_text(d, true);
  EXPECT_FALSE(reports(d, "workers_down")) << to_text(d, true);
  // 110 jobs waiting on average against 1.83 ending per second: about a minute, from 0.6 s.
  EXPECT_NE(f.summary.find("; estimated wait 583 ms -> 60.06 s (Little's law"), std::string::npos) << f.summary;
  // Said as what it is (busy 8 of 36 worker samples), and per live worker: 1.83 jobs/s over 3.
  EXPECT_EQ(f.summary.rfind("the queue backs up while jobs still end at the baseline's pace or faster (the workers' "
                            "sampled busy share 22% misses their work)", 0), 0u) << f.summary;
  EXPECT_EQ(d.headline.find("oldest job"), std::string::npos) << d.headline;
  EXPECT_NE(f.summary.find("more workers at 0.61 jobs/s each"), std::string::npos) << f.summary;
}

// Tests that the oldest job's age slope is read over the time between the samples it uses: jobs
// that began to wait inside the last quarter (no age sample before) of a queue nothing consumes
// age one second per second, not half that; and the depth's evidence is its peak, as the headline.
TEST(QueueDiagnosisTest, AgeSlopeOverTheSamplesRead) {
  Snapshot s = queued();
  const double step = 300.0 / 11;  // line() spreads 12 samples over the 300 s window
  WindowStat age = line(0.4, 0.4);
  age.intervals[9] = kNaN;
  age.intervals[10] = 0;
  age.intervals[11] = step;
  age.max = step;
  s.signals["queue_oldest_age"].incident = age;
  s.signals["queue_depth"].incident = line(0, 15, 0.8);
  s.signals["queue_jobs_finished"].incident = rate(5, 300, 0.7);
  for (const char* id : {"queue_in_progress", "queue_workers_busy"}) s.signals[id].incident = line(1.5, 0, 0.7);
  s.signals["queue_workers_idle"].incident = line(0.5, 0, 0.7);
  s.signals["running"].incident = line(2, 0, 0.7);  // the server finished what the workers sent
  Diagnosis d = run(s);
  ASSERT_FALSE(d.findings.empty()) << to_text(d, true);
  ASSERT_EQ(d.findings.front().cause, "workers_down") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("the oldest job ages 1.00 s per s"), std::string::npos)
      << d.findings.front().summary;
  EXPECT_NE(d.headline.find("peak depth 1 -> 15"), std::string::npos) << d.headline;
  EXPECT_EQ(d.findings.front().evidence.front().metric, "inferscope_queue_depth (jobs waiting, peak)");
  EXPECT_DOUBLE_EQ(d.findings.front().evidence.front().incident, 15);
}

// Tests that the ageing rate is read from when the queue last emptied, at the samples' own times,
// as Prometheus lays them out: the queue was consumed (age 0) for most of the window's last
// quarter, then the workers stopped and one job after another waited; the samples sit every 5 s
// on a grid aligned on the window's end, so 60 of them span 295 s of the 300 s window. Read from
// the quarter's first sample, the same rise would read 0.25 s per s; spread evenly over the
// window, 0.98.
TEST(QueueDiagnosisTest, AgeingRateSinceTheQueueLastEmptied) {
  Snapshot s = queued();
  const int n = 60;
  const double step = 5, end = s.incident_end;
  WindowStat age;
  for (int i = 0; i < n; ++i) {
    const double t = end - (n - 1 - i) * step;
    // The first job that nobody took came 2 s after the sample at index 55.
    const double enqueued = end - (n - 1 - 55) * step + 2;
    age.intervals.push_back(t > enqueued ? t - enqueued : 0);
    age.interval_times.push_back(t);
  }
  age.max = age.intervals.back();
  age.mean = age.max / n;
  age.count = n;
  ASSERT_DOUBLE_EQ(age.intervals[56], 3);
  s.signals["queue_oldest_age"].incident = age;
  s.signals["queue_depth"].incident = line(0, 4, 0.93);
  s.signals["queue_jobs_finished"].incident = rate(5, 300, 0.93);
  for (const char* id : {"queue_in_progress", "queue_workers_busy"}) s.signals[id].incident = line(1.5, 0, 0.93);
  s.signals["queue_workers_idle"].incident = line(0.5, 0, 0.93);
  s.signals["running"].incident = line(2, 0, 0.93);
  Diagnosis d = run(s);
  ASSERT_FALSE(d.findings.empty()) << to_text(d, true);
  ASSERT_EQ(d.findings.front().cause, "workers_down") << to_text(d);
  EXPECT_NE(d.findings.front().summary.find("the oldest job ages 1.00 s per s"), std::string::npos)
      << d.findings.front().summary;

  // Nothing taken for most of the window (the first job waits from 2 s after index 10 on) and
  // the last collection scraped twice (the collector and the scrape keep clocks of their own):
  // the rise is read from the first waiting sample (index 11), not from the quarter's start
  // (65 s over 70 s: 0.93).
  WindowStat& all = s.signals["queue_oldest_age"].incident;
  for (int i = 0; i < n; ++i) all.intervals[i] = i > 10 ? (i - 10) * step - 2 : 0;
  all.intervals[59] = all.intervals[58];
  all.max = all.intervals.back();
  s.signals["queue_depth"].incident = line(0, 49, 0.17);
  Diagnosis whole = run(s);
  ASSERT_FALSE(whole.findings.empty()) << to_text(whole, true);
  ASSERT_EQ(whole.findings.front().cause, "workers_down") << to_text(whole);
  EXPECT_NE(whole.findings.front().summary.find("the oldest job ages 0.98 s per s"), std::string::npos)
      << whole.findings.front().summary;
}

}  // namespace
}  // namespace inferscope::doctor
