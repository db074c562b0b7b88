// Tests of the threaded Engine. Most run it on a ManualClock (time moves only when the test moves
// it, then Engine::catch_up runs what fell due), so no outcome depends on the machine's speed or
// load; the rest wait on events (observer conditions, published stats), never by sleeping.
#include "serve/engine/engine.h"

#include <gtest/gtest.h>
#include <inferscope/metrics/clock.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>

#include "generation_request.h"

namespace inferscope::serve {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Recorder keeps one sequence's events.
class Recorder : public SequenceObserver {
 public:
  void on_scheduled(SteadyTime when) override { set([&] { scheduled = when; }); }
  void on_prefill_done(SteadyTime when) override { set([&] { prefill_done = when; }); }
  void on_tokens(std::span<const std::uint32_t> ids, SteadyTime when) override {
    set([&] { token_times.insert(token_times.end(), ids.size(), when); });
  }
  void on_preempted(SteadyTime) override { set([&] { ++preemptions; }); }
  void on_finished(FinishReason r, SteadyTime when) override {
    set([&] {
      reason = r;
      finished_at = when;
      ++finish_calls;
    });
  }
  // wait_for waits (bounded) until `pred` holds under the lock.
  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, [&] { return pred(*this); });
  }
  bool wait_finished() { return wait_for([](const Recorder& r) { return r.finish_calls > 0; }); }
  double ttft_s() {
    std::lock_guard lock(mu);
    return std::chrono::duration<double>(token_times.at(0) - *scheduled).count();
  }

  std::mutex mu;
  std::condition_variable cv;
  std::optional<SteadyTime> scheduled, prefill_done, finished_at;
  std::vector<SteadyTime> token_times;
  std::optional<FinishReason> reason;
  int preemptions = 0, finish_calls = 0;

 private:
  template <class F>
  void set(F f) {
    {
      std::lock_guard lock(mu);
      f();
    }
    cv.notify_all();
  }
};

using engine_test::request;

std::unique_ptr<Engine> start(EngineOptions options, FaultSet faults = {}) {
  auto engine = Engine::start(std::move(options), std::move(faults));
  if (!engine) ADD_FAILURE() << engine.error().message;
  return engine ? std::move(engine.value()) : nullptr;
}

// ManualRun is an engine on a ManualClock: time moves only when the test moves it, and
// catch_up() runs whatever fell due, so every outcome is the same on any machine and load.
struct ManualRun {
  explicit ManualRun(EngineOptions options, FaultSet faults = {}) {
    options.clock = &clock;
    engine = start(std::move(options), std::move(faults));
  }
  // run_until moves the clock in `slice` steps (at most `max_slices`) until `pred` holds.
  template <class Pred>
  bool run_until(Pred pred, Clock::duration slice = 1ms, int max_slices = 200000) {
    for (int i = 0; i < max_slices; ++i) {
      engine->catch_up();
      if (pred()) return true;
      clock.advance(slice);
    }
    return false;
  }
  double seconds_since(SteadyTime t) const { return std::chrono::duration<double>(clock.now() - t).count(); }

  metrics::ManualClock clock;
  std::unique_ptr<Engine> engine;
};

bool finished(const std::shared_ptr<Recorder>& r) {
  std::lock_guard lock(r->mu);
  return r->finish_calls > 0;
}

std::size_t tokens(const std::shared_ptr<Recorder>& r) {
  std::lock_guard lock(r->mu);
  return r->token_times.size();
}

// Tests that a longer prompt gives a longer TTFT (prefill cost grows with prompt length).
TEST(EngineTest, TtftGrowsWithPromptLength) {
  ManualRun run{EngineOptions{}};
  ASSERT_TRUE(run.engine);
  auto short_prompt = std::make_shared<Recorder>(), long_prompt = std::make_shared<Recorder>();
  ASSERT_TRUE(run.engine->submit(request(16, 2), short_prompt));
  ASSERT_TRUE(run.run_until([&] { return finished(short_prompt); }));
  ASSERT_TRUE(run.engine->submit(request(4000, 2, 50000), long_prompt));
  ASSERT_TRUE(run.run_until([&] { return finished(long_prompt); }));
  // Model: ~6.5 ms vs ~150 ms of prefill.
  EXPECT_GT(long_prompt->ttft_s(), 5 * short_prompt->ttft_s());
  EXPECT_EQ(*long_prompt->reason, FinishReason::kLength);
}

// max_ttft_s submits `n` equal requests at once and returns the largest submit-to-first-token.
double max_ttft_s(std::uint32_t max_num_seqs, int n) {
  EngineOptions options;
  options.max_num_seqs = max_num_seqs;
  ManualRun run{options};
  std::vector<std::shared_ptr<Recorder>> recorders;
  const SteadyTime submitted = run.clock.now();
  for (int i = 0; i < n; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    EXPECT_TRUE(run.engine->submit(request(32, 20, 1000 * (i + 1)), recorders.back()));
  }
  EXPECT_TRUE(run.run_until([&] { return std::all_of(recorders.begin(), recorders.end(), finished); }));
  double worst = 0;
  for (auto& r : recorders) {
    std::lock_guard lock(r->mu);
    worst = std::max(worst, std::chrono::duration<double>(r->token_times.at(0) - submitted).count());
  }
  return worst;
}

// Tests that queueing grows TTFT when max_num_seqs is small.
TEST(EngineTest, QueueingGrowsTtftWhenMaxNumSeqsIsSmall) {
  // One at a time, the 8th waits for 7 x 20 steps (~0.9 s model).
  double serial = max_ttft_s(1, 8);
  double batched = max_ttft_s(8, 8);
  EXPECT_GT(serial, 3 * batched) << "serial " << serial << " batched " << batched;
}

// Tests that cutting the KV capacity (fault) causes preemptions and every sequence still ends.
// All eight are submitted before the clock moves, so the first step cannot finish any of them.
TEST(EngineTest, PreemptsWhenKvCapacityIsCut) {
  EngineOptions options;
  options.kv_capacity_tokens = 4096;
  FaultSet faults;
  faults.kv_capacity = 0.125;  // 512 tokens = 32 blocks for 8 x up to 7 blocks
  ManualRun run{options, faults};
  ASSERT_TRUE(run.engine);
  EXPECT_EQ(run.engine->stats().kv_blocks_total, 32u);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 8; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(run.engine->submit(request(48, 64, 1000 * (i + 1)), recorders.back()));
  }
  ASSERT_TRUE(run.run_until([&] { return std::all_of(recorders.begin(), recorders.end(), finished); }));
  int preempted = 0;
  for (auto& r : recorders) {
    std::lock_guard lock(r->mu);
    EXPECT_EQ(*r->reason, FinishReason::kLength);
    EXPECT_EQ(r->token_times.size(), 64u);
    preempted += r->preemptions;
  }
  EXPECT_GT(preempted, 0);
  EngineStats stats = run.engine->stats();
  EXPECT_EQ(stats.kv_blocks_used, 0u);
  EXPECT_GT(stats.preemptions_total, 0u);
}

// Tests that a stall set at run time stretches one step by the stall length (ITL gap) while the
// GPU counts as busy.
TEST(EngineTest, StallStretchesAStep) {
  ManualRun run{EngineOptions{}};
  ASSERT_TRUE(run.engine);
  std::mutex mu;
  double longest_step = 0;
  run.engine->set_step_listener([&](const StepInfo& step) {
    std::lock_guard lock(mu);
    longest_step = std::max(longest_step, step.model_seconds);
  });
  auto r = std::make_shared<Recorder>();
  ASSERT_TRUE(run.engine->submit(request(16, 4000), r));
  ASSERT_TRUE(run.run_until([&] { return tokens(r) >= 3; }));
  FaultSet faults;
  faults.stall = PeriodicPause{500, 1000};
  run.engine->set_faults(faults);
  ASSERT_TRUE(run.run_until([&] {
    std::lock_guard lock(mu);
    return longest_step >= 0.5;
  }));
  ASSERT_TRUE(run.run_until([&] { return tokens(r) >= 20; }));
  EXPECT_EQ(run.engine->faults(), faults);
  double max_gap = 0;
  {
    std::lock_guard lock(r->mu);
    for (std::size_t i = 1; i < r->token_times.size(); ++i)
      max_gap = std::max(max_gap, std::chrono::duration<double>(r->token_times[i] - r->token_times[i - 1]).count());
  }
  EXPECT_GE(max_gap, 0.5 * 0.99);  // the stall, in model seconds
  EXPECT_GE(run.engine->stats().busy_model_seconds, 0.5);
  run.engine->stop();
  EXPECT_EQ(*r->reason, FinishReason::kAbort);
}

// Tests that a worker stall stops scheduling: waiting grows and no step runs while the GPU
// utilisation (busy_fraction) falls; clearing it drains the queue.
TEST(EngineTest, WorkerStallGrowsQueueWhileGpuIdles) {
  EngineOptions options;
  options.busy_window_s = 0.05;
  ManualRun run{options};
  ASSERT_TRUE(run.engine);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 4; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(run.engine->submit(request(64, 5000, 1000 * (i + 1)), recorders.back()));
  }
  ASSERT_TRUE(run.run_until([&] { return run.engine->stats().busy_fraction > 0.8; }));
  EngineStats busy = run.engine->stats();
  EXPECT_GT(busy.gpu_power_w, run.engine->profile().idle_power_w);
  EXPECT_GT(busy.gpu_memory_used_bytes, run.engine->profile().weights_bytes);
  FaultSet faults;
  faults.worker_stall = PeriodicPause{10000, 1000};  // far longer than the clock moves below
  run.engine->set_faults(faults);
  for (int i = 0; i < 4; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(run.engine->submit(request(64, 10, 9000 * (i + 1)), recorders.back()));
  }
  run.clock.advance(50ms);  // the step already running when the stall began ends
  run.engine->catch_up();
  const std::uint64_t steps = run.engine->stats().steps_total;
  run.clock.advance(200ms);
  run.engine->catch_up();
  EngineStats s = run.engine->stats();
  EXPECT_EQ(s.waiting, 4u);
  EXPECT_EQ(s.running, 4u);
  EXPECT_LT(s.busy_fraction, 0.05);
  EXPECT_EQ(s.steps_total, steps);  // nothing scheduled during the stall
  run.engine->set_faults(FaultSet{});
  ASSERT_TRUE(run.run_until([&] { return run.engine->stats().running == 8; }));
  run.engine->stop();
  for (auto& r : recorders) EXPECT_EQ(r->finish_calls, 1);
}

// Tests that abort frees the sequence's KV blocks at once and reports kAbort exactly once.
TEST(EngineTest, AbortFreesBlocks) {
  ManualRun run{EngineOptions{}};
  ASSERT_TRUE(run.engine);
  auto r = std::make_shared<Recorder>();
  auto id = run.engine->submit(request(500, 5000), r);
  ASSERT_TRUE(id);
  ASSERT_TRUE(run.run_until([&] { return tokens(r) > 0; }));
  EXPECT_GE(run.engine->stats().kv_blocks_used, 32u);
  run.engine->abort(*id);
  run.engine->catch_up();
  ASSERT_TRUE(finished(r));
  EXPECT_EQ(*r->reason, FinishReason::kAbort);
  EngineStats s = run.engine->stats();
  EXPECT_EQ(s.kv_blocks_used, 0u);
  EXPECT_EQ(s.running, 0u);
  run.engine->abort(*id);  // unknown now: ignored
  run.engine->stop();
  EXPECT_EQ(r->finish_calls, 1);
}

// Tests that stop() finishes running and waiting sequences with kAbort, is idempotent, and
// that submit fails afterwards.
TEST(EngineTest, StopFinishesLiveSequencesWithAbort) {
  EngineOptions options;
  options.max_num_seqs = 1;
  ManualRun run{options};
  ASSERT_TRUE(run.engine);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 3; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(run.engine->submit(request(32, 5000, 1000 * (i + 1)), recorders.back()));
  }
  ASSERT_TRUE(run.run_until([&] { return tokens(recorders[0]) > 0; }));
  run.engine->stop();
  run.engine->stop();
  run.engine->catch_up();  // returns at once after stop
  for (auto& r : recorders) {
    EXPECT_EQ(r->finish_calls, 1);
    EXPECT_EQ(*r->reason, FinishReason::kAbort);
  }
  EXPECT_FALSE(run.engine->submit(request(4, 1), std::make_shared<Recorder>()));
}

// GatedRecorder holds the engine thread in its first on_tokens until open() is called, so a
// test can act at an exact point of a run (test only: real observers never block).
class GatedRecorder : public Recorder {
 public:
  void on_tokens(std::span<const std::uint32_t> ids, SteadyTime when) override {
    Recorder::on_tokens(ids, when);
    std::unique_lock lock(gate_mu_);
    gate_cv_.wait_for(lock, 20s, [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(gate_mu_);
      open_ = true;
    }
    gate_cv_.notify_all();
  }

 private:
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool open_ = false;
};

// Tests that with the zero-cost profile a submit is served between the steps of a long
// generation (steps are posted, not looped) and all token events arrive. The long run is held
// at its first token until the short request is submitted, so the outcome never depends on how
// fast the test thread runs.
TEST(EngineTest, ZeroCostInterleavesSubmits) {
  EngineOptions options;
  options.profile = "zero-cost";
  auto engine = start(options);
  ASSERT_TRUE(engine);
  auto long_run = std::make_shared<GatedRecorder>();
  // Counts the long run's tokens on the engine thread when the short one ends, between two steps.
  class CountingRecorder : public Recorder {
   public:
    explicit CountingRecorder(std::shared_ptr<Recorder> other) : other_(std::move(other)) {}
    void on_finished(FinishReason r, SteadyTime when) override {
      other_tokens_then = tokens(other_);
      Recorder::on_finished(r, when);
    }
    std::size_t other_tokens_then = 0;

   private:
    std::shared_ptr<Recorder> other_;
  };
  auto short_run = std::make_shared<CountingRecorder>(long_run);
  ASSERT_TRUE(engine->submit(request(16, 8000), long_run));
  ASSERT_TRUE(long_run->wait_for([](const Recorder& rec) { return !rec.token_times.empty(); }));
  ASSERT_TRUE(engine->submit(request(16, 1, 7000), short_run));  // queued behind the held step
  long_run->open();
  ASSERT_TRUE(short_run->wait_finished());
  EXPECT_LT(short_run->other_tokens_then, 10u);
  ASSERT_TRUE(long_run->wait_finished());
  EXPECT_EQ(long_run->token_times.size(), 8000u);
  auto [stats, reached] = engine->wait_stats([](const EngineStats& s) { return s.generation_tokens_total == 8001u; });
  EXPECT_TRUE(reached) << stats.generation_tokens_total;
}

// Tests the seed-mock profile end to end: a solo request takes 0.2 + 0.001 x 100 + 0.01 x 50 =
// 0.8 model seconds, with no engine steps (each request runs on its own timeline).
TEST(EngineTest, SeedMockSoloRequestFollowsFormula) {
  EngineOptions options;
  options.profile = "seed-mock";
  ManualRun run{options};
  ASSERT_TRUE(run.engine);
  EXPECT_EQ(run.engine->options().max_num_seqs, 40u);  // the seed's thread pool
  const SteadyTime submitted = run.clock.now();
  auto r = std::make_shared<Recorder>();
  ASSERT_TRUE(run.engine->submit(request(100, 50), r));
  ASSERT_TRUE(run.run_until([&] { return finished(r); }));
  EXPECT_NEAR(std::chrono::duration<double>(*r->finished_at - submitted).count(), 0.8, 1e-6);
  EXPECT_NEAR(r->ttft_s(), 0.2 + 0.1 + 0.01, 1e-6);
  EXPECT_EQ(r->token_times.size(), 50u);
  EXPECT_EQ(*r->reason, FinishReason::kLength);
  EXPECT_EQ(run.engine->stats().generation_tokens_total, 50u);
}

// Tests that seed-mock requests are independent under load, as the seed's thread-pool server
// runs them: 100 requests arriving as a Poisson process at 10/s with 125-token prompts and 10
// output tokens each take 0.2 + 0.001 x 125 + 0.01 x 10 = 0.425 s end to end (within 5 %),
// however many overlap. A batching engine would stretch the overlapping ones.
TEST(EngineTest, SeedMockRequestsAreIndependentUnderPoissonLoad) {
  EngineOptions options;
  options.profile = "seed-mock";
  ManualRun run{options};
  ASSERT_TRUE(run.engine);
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> gap(10.0);
  std::vector<std::shared_ptr<Recorder>> recorders;
  std::vector<SteadyTime> arrivals;
  std::uint32_t most_running = 0;
  for (int i = 0; i < 100; ++i) {
    run.clock.advance(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng))));
    run.engine->catch_up();
    most_running = std::max(most_running, run.engine->stats().running);
    arrivals.push_back(run.clock.now());
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(run.engine->submit(request(125, 10, 1000 * (i + 1)), recorders.back()));
  }
  ASSERT_TRUE(run.run_until([&] { return std::all_of(recorders.begin(), recorders.end(), finished); }));
  EXPECT_GE(most_running, 3u);  // requests really overlapped
  const double formula = 0.2 + 0.001 * 125 + 0.01 * 10;
  for (std::size_t i = 0; i < recorders.size(); ++i) {
    double e2e = std::chrono::duration<double>(*recorders[i]->finished_at - arrivals[i]).count();
    EXPECT_NEAR(e2e, formula, 0.05 * formula) << "request " << i;
  }
}

// Tests that seed-mock runs max_num_seqs requests at once and queues the rest: with two
// workers (--max-num-seqs 2 overriding the profile's 40) the third request starts when the
// first ends.
TEST(EngineTest, SeedMockQueuesBeyondMaxNumSeqs) {
  EngineOptions options;
  options.profile = "seed-mock";
  options.max_num_seqs = 2;
  ManualRun run{options};
  ASSERT_TRUE(run.engine);
  const SteadyTime submitted = run.clock.now();
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 3; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(run.engine->submit(request(100, 10, 1000 * (i + 1)), recorders.back()));
  }
  run.engine->catch_up();
  EngineStats s = run.engine->stats();
  EXPECT_EQ(s.running, 2u);
  EXPECT_EQ(s.waiting, 1u);
  ASSERT_TRUE(run.run_until([&] { return std::all_of(recorders.begin(), recorders.end(), finished); }));
  const double one = 0.2 + 0.1 + 0.1;
  auto since = [&](SteadyTime t) { return std::chrono::duration<double>(t - submitted).count(); };
  EXPECT_NEAR(since(*recorders[0]->finished_at), one, 1e-6);
  EXPECT_NEAR(since(*recorders[1]->finished_at), one, 1e-6);
  EXPECT_NEAR(since(*recorders[2]->scheduled), one, 1e-6);
  EXPECT_NEAR(since(*recorders[2]->finished_at), 2 * one, 1e-6);
}

// Tests that submit fails when max_waiting requests wait, and the message says so.
TEST(EngineTest, SubmitFailsWhenWaitingQueueIsFull) {
  EngineOptions options;
  options.max_waiting = 2;
  FaultSet faults;
  faults.worker_stall = PeriodicPause{600000, 1000};  // nothing is scheduled
  auto engine = start(options, faults);
  ASSERT_TRUE(engine);
  auto a = std::make_shared<Recorder>(), b = std::make_shared<Recorder>();
  ASSERT_TRUE(engine->submit(request(8, 4), a));
  ASSERT_TRUE(engine->submit(request(8, 4), b));
  auto full = engine->submit(request(8, 4), std::make_shared<Recorder>());
  ASSERT_FALSE(full);
  EXPECT_NE(full.error().message.find("waiting queue is full"), std::string::npos);
  EXPECT_GE(engine->stats().waiting, 2u);  // counted even before the engine thread takes them
  EXPECT_FALSE(engine->submit(request(0, 4), std::make_shared<Recorder>()));
  engine->stop();
  EXPECT_EQ(*a->reason, FinishReason::kAbort);
  EXPECT_EQ(*b->reason, FinishReason::kAbort);
}

// Tests that bad options fail to start with a clear message.
TEST(EngineTest, StartRejectsBadOptions) {
  EngineOptions options;
  options.profile = "no-such-profile";
  auto bad = Engine::start(options, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown profile 'no-such-profile' (known: "), std::string::npos);
  options = EngineOptions{};
  options.time_scale = 0;
  EXPECT_FALSE(Engine::start(options, {}));
}

}  // namespace
}  // namespace inferscope::serve
