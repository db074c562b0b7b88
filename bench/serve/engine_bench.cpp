// Throughput of the simulated engine with the zero-cost profile: token events per second
// delivered to observers by the threaded Engine (BM_EngineZeroCostTokens), next to its peer
// baseline, the same workload stepped directly on an EngineCore without thread or timers
// (BM_EngineCoreZeroCostTokens); Arg = concurrent sequences of 1000 tokens. The ratio is the
// cost of the driver (one post per step, observers, stats). BM_EngineCoreZeroCostSpeculative
// runs the core with speculative decoding; its steps_per_s against the plain core's is the cost
// of a speculative step; BM_EngineCoreZeroCostLora's (4 adapters, 4 slots) the cost of LoRA.
// Target (issue 3): Engine >= 50,000 token events/s.
#include <benchmark/benchmark.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <numeric>

#include "serve/engine/engine.h"
#include "serve/engine/engine_core.h"

namespace inferscope::serve {
namespace {

constexpr std::uint32_t kTokens = 1000;

GenerationRequest request(int i, std::uint32_t adapters = 0) {
  GenerationRequest r;
  r.lora = adapters > 0 ? static_cast<std::uint32_t>(i) % adapters + 1 : 0;
  r.prompt_tokens.resize(128);
  std::iota(r.prompt_tokens.begin(), r.prompt_tokens.end(), 1000u * (i + 1));
  r.max_tokens = kTokens;
  r.ignore_eos = true;
  return r;
}

struct Counter : SequenceObserver {
  std::atomic<std::uint64_t>* tokens;
  std::atomic<int>* done;
  std::mutex* mu;
  std::condition_variable* cv;
  void on_scheduled(SteadyTime) override {}
  void on_prefill_done(SteadyTime) override {}
  void on_tokens(std::span<const std::uint32_t> ids, SteadyTime) override { tokens->fetch_add(ids.size()); }
  void on_preempted(SteadyTime) override {}
  void on_finished(FinishReason, SteadyTime) override {
    std::lock_guard lock(*mu);
    done->fetch_add(1);
    cv->notify_all();
  }
};

void BM_EngineZeroCostTokens(benchmark::State& state) {
  EngineOptions options;
  options.profile = "zero-cost";
  auto engine = Engine::start(options, {}).value();
  const int sequences = static_cast<int>(state.range(0));
  std::uint64_t total = 0;
  for (auto _ : state) {
    std::atomic<std::uint64_t> tokens{0};
    std::atomic<int> done{0};
    std::mutex mu;
    std::condition_variable cv;
    for (int i = 0; i < sequences; ++i) {
      auto counter = std::make_shared<Counter>();
      counter->tokens = &tokens;
      counter->done = &done;
      counter->mu = &mu;
      counter->cv = &cv;
      (void)engine->submit(request(i), counter);
    }
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done.load() == sequences; });
    total += tokens.load();
  }
  state.counters["token_events_per_s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineZeroCostTokens)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

// run_core steps every sequence to the end on a bare EngineCore; counts token events and steps.
// Only the steps are timed: building the core, submitting and tearing it down are paused out, so
// time / steps is the cost of a step (a fixed cost per run would otherwise weigh on the
// speculative run, which takes fewer steps, more than on the plain one).
void run_core(benchmark::State& state, const CoreConfig& config, std::uint32_t adapters = 0) {
  CostProfile profile;
  profile.name = "zero-cost";
  profile.kv_capacity_tokens = 1 << 20;
  const int sequences = static_cast<int>(state.range(0));
  std::uint64_t total = 0, steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto core = std::make_unique<EngineCore>(config, profile);
    for (int i = 0; i < sequences; ++i) (void)core->submit(i + 1, request(i, adapters));
    state.ResumeTiming();
    while (core->has_work()) {
      if (core->plan_step().empty()) break;
      total += core->finish_step().events.size();
      ++steps;
    }
    state.PauseTiming();
    core.reset();
    state.ResumeTiming();
  }
  state.counters["token_events_per_s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}

void BM_EngineCoreZeroCostTokens(benchmark::State& state) { run_core(state, CoreConfig{}); }
BENCHMARK(BM_EngineCoreZeroCostTokens)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same sequences with speculative decoding (3 drafts, acceptance 0.7): a step emits about
// 2.2 tokens per sequence, so compare steps_per_s with BM_EngineCoreZeroCostTokens' (issue 28:
// the cost of one simulated step stays within 10 %).
void BM_EngineCoreZeroCostSpeculative(benchmark::State& state) {
  CoreConfig config;
  config.speculative_tokens = 3;
  config.speculative_acceptance = 0.7;
  run_core(state, config);
}
BENCHMARK(BM_EngineCoreZeroCostSpeculative)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same sequences spread over 4 LoRA adapters on 4 slots (--max-loras 4): every sequence runs
// at once as in the plain case, so steps_per_s against BM_EngineCoreZeroCostTokens' is the cost of
// the adapter bookkeeping per step (issue 28: within 10 %).
void BM_EngineCoreZeroCostLora(benchmark::State& state) {
  CoreConfig config;
  config.max_loras = 4;
  run_core(state, config, 4);
}
BENCHMARK(BM_EngineCoreZeroCostLora)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace inferscope::serve

BENCHMARK_MAIN();
