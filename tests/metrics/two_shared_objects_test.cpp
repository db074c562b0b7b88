// Tests that two shared objects, each with its own static copy of the metrics library, can be
// written from the same threads without two live threads ever sharing a per-thread shard.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <barrier>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

// Plugin is one dlopen()ed copy of tests/metrics/shared_object/instrumented_library.cpp.
struct Plugin {
  explicit Plugin(const char* path, const std::string& prefix) {
    // RTLD_LOCAL, as plugin hosts load them: each object resolves its own ordinary symbols, while
    // GNU-unique symbols (inline variables) are still merged process-wide.
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return;
    work = reinterpret_cast<void (*)(std::uint64_t)>(dlsym(handle, (prefix + "_work").c_str()));
    totals = reinterpret_cast<void (*)(double*, std::uint64_t*)>(dlsym(handle, (prefix + "_totals").c_str()));
  }
  // The objects stay loaded: their threads' thread_local destructors may still run at exit.
  bool ok() const { return handle && work && totals; }
  void* handle = nullptr;
  void (*work)(std::uint64_t) = nullptr;
  void (*totals)(double*, std::uint64_t*) = nullptr;
};

// Tests exact totals in both objects when half the threads take their thread id in one object
// and half in the other before all of them write to both. With the thread id shared across the
// objects (an inline thread_local is GNU-unique) but a slot table in each, threads from the two
// halves got equal ids and lost increments on the single-writer shards.
TEST(TwoSharedObjectsTest, ExactTotalsFromThreadsThatStartedInEitherObject) {
  Plugin a(INSTRUMENTED_A_PATH, "a"), b(INSTRUMENTED_B_PATH, "b");
  ASSERT_TRUE(a.ok()) << dlerror();
  ASSERT_TRUE(b.ok()) << dlerror();
  constexpr int kThreads = 6;  // below the smallest shard count (8): every thread owns a shard
  constexpr std::uint64_t kRounds = 2000, kPerRound = 500;
  std::barrier ids_taken(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      (t % 2 == 0 ? a : b).work(1);
      ids_taken.arrive_and_wait();
      for (std::uint64_t r = 0; r < kRounds; ++r) {
        a.work(kPerRound);
        b.work(kPerRound);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double per_object = kThreads * kRounds * kPerRound + kThreads / 2;
  for (const Plugin* p : {&a, &b}) {
    double ops = 0;
    std::uint64_t observations = 0;
    p->totals(&ops, &observations);
    EXPECT_EQ(ops, per_object);
    EXPECT_EQ(static_cast<double>(observations), per_object);
  }
}

}  // namespace
