// Tests of the threaded Engine. Timing checks use the times the engine reports (its virtual
// timeline follows the model clock) or model-time figures, with wide margins; waits are
// condition-variable waits or polls with a bounded deadline.
#include "serve/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

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

GenerationRequest request(std::uint32_t prompt_len, std::uint32_t max_tokens, std::uint32_t first = 1000) {
  GenerationRequest r;
  r.prompt_tokens.resize(prompt_len);
  std::iota(r.prompt_tokens.begin(), r.prompt_tokens.end(), first);
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

std::unique_ptr<Engine> start(EngineOptions options, FaultSet faults = {}) {
  auto engine = Engine::start(std::move(options), std::move(faults));
  if (!engine) ADD_FAILURE() << engine.error().message;
  return engine ? std::move(engine.value()) : nullptr;
}

// poll_until checks `pred` every millisecond until it holds or `limit` passes.
template <class Pred>
bool poll_until(Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Tests that a longer prompt gives a longer TTFT (prefill cost grows with prompt length).
TEST(EngineTest, TtftGrowsWithPromptLength) {
  EngineOptions options;
  options.time_scale = 100;
  auto engine = start(options);
  ASSERT_TRUE(engine);
  auto short_prompt = std::make_shared<Recorder>(), long_prompt = std::make_shared<Recorder>();
  ASSERT_TRUE(engine->submit(request(16, 2), short_prompt));
  ASSERT_TRUE(short_prompt->wait_finished());
  ASSERT_TRUE(engine->submit(request(4000, 2, 50000), long_prompt));
  ASSERT_TRUE(long_prompt->wait_finished());
  // Model: ~6.5 ms vs ~150 ms of prefill.
  EXPECT_GT(long_prompt->ttft_s(), 5 * short_prompt->ttft_s());
  EXPECT_EQ(*long_prompt->reason, FinishReason::kLength);
}

// max_ttft_s submits `n` equal requests at once and returns the largest submit-to-first-token.
double max_ttft_s(std::uint32_t max_num_seqs, int n) {
  EngineOptions options;
  options.time_scale = 20;
  options.max_num_seqs = max_num_seqs;
  auto engine = start(options);
  std::vector<std::shared_ptr<Recorder>> recorders;
  const SteadyTime submitted = Clock::now();
  for (int i = 0; i < n; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    EXPECT_TRUE(engine->submit(request(32, 20, 1000 * (i + 1)), recorders.back()));
  }
  double worst = 0;
  for (auto& r : recorders) {
    EXPECT_TRUE(r->wait_finished());
    std::lock_guard lock(r->mu);
    worst = std::max(worst, std::chrono::duration<double>(r->token_times.at(0) - submitted).count());
  }
  return worst;
}

// Tests that queueing grows TTFT when max_num_seqs is small.
TEST(EngineTest, QueueingGrowsTtftWhenMaxNumSeqsIsSmall) {
  // One at a time, the 8th waits for 7 x 20 steps (~0.9 s model, ~43 ms real at scale 20).
  double serial = max_ttft_s(1, 8);
  double batched = max_ttft_s(8, 8);
  EXPECT_GT(serial, 3 * batched) << "serial " << serial << " batched " << batched;
}

// Tests that cutting the KV capacity (fault) causes preemptions and every sequence still ends.
TEST(EngineTest, PreemptsWhenKvCapacityIsCut) {
  EngineOptions options;
  options.profile = "zero-cost";
  options.kv_capacity_tokens = 4096;
  FaultSet faults;
  faults.kv_capacity = 0.125;  // 512 tokens = 32 blocks for 8 x up to 7 blocks
  auto engine = start(options, faults);
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine->stats().kv_blocks_total, 32u);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 8; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(engine->submit(request(48, 64, 1000 * (i + 1)), recorders.back()));
  }
  int preempted = 0;
  for (auto& r : recorders) {
    ASSERT_TRUE(r->wait_finished());
    std::lock_guard lock(r->mu);
    EXPECT_EQ(*r->reason, FinishReason::kLength);
    EXPECT_EQ(r->token_times.size(), 64u);
    preempted += r->preemptions;
  }
  EXPECT_GT(preempted, 0);
  ASSERT_TRUE(poll_until([&] { return engine->stats().kv_blocks_used == 0; }));
  EXPECT_GT(engine->stats().preemptions_total, 0u);
}

// Tests that a stall set at run time stretches one step by the stall length (ITL gap) while the
// GPU counts as busy.
TEST(EngineTest, StallStretchesAStep) {
  EngineOptions options;
  options.time_scale = 20;
  auto engine = start(options);
  ASSERT_TRUE(engine);
  std::mutex mu;
  std::condition_variable cv;
  double longest_step = 0;
  engine->set_step_listener([&](const StepInfo& step) {
    std::lock_guard lock(mu);
    longest_step = std::max(longest_step, step.model_seconds);
    cv.notify_all();
  });
  auto r = std::make_shared<Recorder>();
  ASSERT_TRUE(engine->submit(request(16, 4000), r));
  ASSERT_TRUE(r->wait_for([](const Recorder& rec) { return rec.token_times.size() >= 3; }));
  FaultSet faults;
  faults.stall = PeriodicPause{500, 1000};
  engine->set_faults(faults);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 20s, [&] { return longest_step >= 0.5; }));
  }
  ASSERT_TRUE(r->wait_for([](const Recorder& rec) { return rec.token_times.size() >= 20; }));
  EXPECT_EQ(engine->faults(), faults);
  double max_gap = 0;
  {
    std::lock_guard lock(r->mu);
    for (std::size_t i = 1; i < r->token_times.size(); ++i)
      max_gap = std::max(max_gap, std::chrono::duration<double>(r->token_times[i] - r->token_times[i - 1]).count());
  }
  EXPECT_GE(max_gap, 0.5 / 20 * 0.99);  // the stall, in scaled seconds
  EXPECT_GE(engine->stats().busy_model_seconds, 0.5);
  engine->stop();
  EXPECT_EQ(*r->reason, FinishReason::kAbort);
}

// Tests that a worker stall stops scheduling: waiting grows and no step runs while the GPU
// utilisation (busy_fraction) falls; clearing it drains the queue.
TEST(EngineTest, WorkerStallGrowsQueueWhileGpuIdles) {
  EngineOptions options;
  options.busy_window_s = 0.05;  // real seconds, so utilisation reacts quickly
  auto engine = start(options);
  ASSERT_TRUE(engine);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 4; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(engine->submit(request(64, 5000, 1000 * (i + 1)), recorders.back()));
  }
  ASSERT_TRUE(poll_until([&] { return engine->stats().busy_fraction > 0.8; }));
  EngineStats busy = engine->stats();
  EXPECT_GT(busy.gpu_power_w, engine->profile().idle_power_w);
  EXPECT_GT(busy.gpu_memory_used_bytes, engine->profile().weights_bytes);
  FaultSet faults;
  faults.worker_stall = PeriodicPause{10000, 1000};  // longer than every poll below
  engine->set_faults(faults);
  for (int i = 0; i < 4; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(engine->submit(request(64, 10, 9000 * (i + 1)), recorders.back()));
  }
  EngineStats s;
  ASSERT_TRUE(poll_until([&] {
    s = engine->stats();
    return s.waiting == 4 && s.busy_fraction < 0.2;
  }, 6000ms)) << "waiting " << s.waiting << " running " << s.running << " busy " << s.busy_fraction
              << " steps " << s.steps_total;
  const std::uint64_t steps = engine->stats().steps_total;
  EXPECT_EQ(engine->stats().running, 4u);
  ASSERT_TRUE(poll_until([&] { return engine->stats().busy_fraction < 0.05; }, 2000ms));
  EXPECT_EQ(engine->stats().steps_total, steps);  // nothing scheduled during the stall
  engine->set_faults(FaultSet{});
  ASSERT_TRUE(poll_until([&] { return engine->stats().running == 8; }));
  engine->stop();
  for (auto& r : recorders) EXPECT_EQ(r->finish_calls, 1);
}

// Tests that abort frees the sequence's KV blocks at once and reports kAbort exactly once.
TEST(EngineTest, AbortFreesBlocks) {
  auto engine = start(EngineOptions{});
  ASSERT_TRUE(engine);
  auto r = std::make_shared<Recorder>();
  auto id = engine->submit(request(500, 5000), r);
  ASSERT_TRUE(id);
  ASSERT_TRUE(r->wait_for([](const Recorder& rec) { return !rec.token_times.empty(); }));
  EXPECT_TRUE(poll_until([&] { return engine->stats().kv_blocks_used >= 32u; }));
  engine->abort(*id);
  ASSERT_TRUE(r->wait_finished());
  EXPECT_EQ(*r->reason, FinishReason::kAbort);
  ASSERT_TRUE(poll_until([&] { return engine->stats().kv_blocks_used == 0 && engine->stats().running == 0; }));
  engine->abort(*id);  // unknown now: ignored
  engine->stop();
  EXPECT_EQ(r->finish_calls, 1);
}

// Tests that stop() finishes running and waiting sequences with kAbort, is idempotent, and
// that submit fails afterwards.
TEST(EngineTest, StopFinishesLiveSequencesWithAbort) {
  EngineOptions options;
  options.max_num_seqs = 1;
  auto engine = start(options);
  ASSERT_TRUE(engine);
  std::vector<std::shared_ptr<Recorder>> recorders;
  for (int i = 0; i < 3; ++i) {
    recorders.push_back(std::make_shared<Recorder>());
    ASSERT_TRUE(engine->submit(request(32, 5000, 1000 * (i + 1)), recorders.back()));
  }
  ASSERT_TRUE(recorders[0]->wait_for([](const Recorder& rec) { return !rec.token_times.empty(); }));
  engine->stop();
  engine->stop();
  for (auto& r : recorders) {
    EXPECT_EQ(r->finish_calls, 1);
    EXPECT_EQ(*r->reason, FinishReason::kAbort);
  }
  EXPECT_FALSE(engine->submit(request(4, 1), std::make_shared<Recorder>()));
}

// Tests that with the zero-cost profile a submit is served between the steps of a long
// generation (steps are posted, not looped) and all token events arrive.
TEST(EngineTest, ZeroCostInterleavesSubmits) {
  EngineOptions options;
  options.profile = "zero-cost";
  auto engine = start(options);
  ASSERT_TRUE(engine);
  auto long_run = std::make_shared<Recorder>(), short_run = std::make_shared<Recorder>();
  ASSERT_TRUE(engine->submit(request(16, 8000), long_run));
  ASSERT_TRUE(long_run->wait_for([](const Recorder& rec) { return !rec.token_times.empty(); }));
  ASSERT_TRUE(engine->submit(request(16, 1, 7000), short_run));
  ASSERT_TRUE(short_run->wait_finished());
  std::size_t long_tokens_then;
  {
    std::lock_guard lock(long_run->mu);
    long_tokens_then = long_run->token_times.size();
  }
  EXPECT_LT(long_tokens_then, 8000u);
  ASSERT_TRUE(long_run->wait_finished());
  EXPECT_EQ(long_run->token_times.size(), 8000u);
  EXPECT_TRUE(poll_until([&] { return engine->stats().generation_tokens_total == 8001u; }));
}

// Tests the seed-mock profile end to end: a solo request's steps add up to
// 0.2 + 0.001 x 100 + 0.01 x 50 = 0.8 model seconds.
TEST(EngineTest, SeedMockSoloRequestFollowsFormula) {
  EngineOptions options;
  options.profile = "seed-mock";
  options.time_scale = 100;
  auto engine = start(options);
  ASSERT_TRUE(engine);
  std::atomic<double> total{0};
  std::atomic<int> steps{0};
  engine->set_step_listener([&](const StepInfo& s) {
    total.store(total.load() + s.model_seconds);
    steps.fetch_add(1);
  });
  auto r = std::make_shared<Recorder>();
  ASSERT_TRUE(engine->submit(request(100, 50), r));
  ASSERT_TRUE(r->wait_finished());
  ASSERT_TRUE(poll_until([&] { return steps.load() == 50; }));
  EXPECT_NEAR(total.load(), 0.8, 1e-9);
  double e2e = std::chrono::duration<double>(*r->finished_at - *r->scheduled).count();
  EXPECT_GE(e2e, 0.8 / 100 - 1e-6);
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
