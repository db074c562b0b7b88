// Tests for include/inferscope/metrics/gauge.h.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/gauge.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace inferscope::metrics {
namespace {

// Tests that set, inc and dec combine as expected.
TEST(GaugeTest, SetIncDec) {
  Registry registry;
  Gauge g = registry.gauge({.name = "g", .help = "h"}).with({});
  EXPECT_EQ(g.value(), 0);
  g.set(10);
  g.inc();
  g.inc(2.5);
  g.dec(0.5);
  g.dec();
  EXPECT_DOUBLE_EQ(g.value(), 12);
}

// Tests that NaN and infinities are stored and exported as-is.
TEST(GaugeTest, SpecialValuesAreExported) {
  Registry registry;
  auto& family = registry.gauge({.name = "g", .help = "h", .label_names = {"k"}});
  family.with({"nan"}).set(std::nan(""));
  family.with({"pinf"}).set(INFINITY);
  family.with({"ninf"}).set(-INFINITY);
  family.with({"negzero"}).set(-0.0);
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_NE(out.find("g{k=\"nan\"} NaN\n"), std::string::npos) << out;
  EXPECT_NE(out.find("g{k=\"pinf\"} +Inf\n"), std::string::npos) << out;
  EXPECT_NE(out.find("g{k=\"ninf\"} -Inf\n"), std::string::npos) << out;
  EXPECT_NE(out.find("g{k=\"negzero\"} -0\n"), std::string::npos) << out;
}

// Tests that concurrent inc/dec from several threads lose no update (CAS loop).
TEST(GaugeTest, ConcurrentIncDecLoseNothing) {
  Registry registry;
  Gauge g = registry.gauge({.name = "g", .help = "h"}).with({});
  constexpr int kThreads = 4;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        g.inc(3);
        g.dec();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(g.value(), 2.0 * kThreads * kIterations);
}

// Tests that a default-constructed gauge works as a detached gauge (never exported anywhere).
TEST(GaugeTest, DefaultHandleIsDetached) {
  Registry registry;
  Gauge g;
  g.set(3);
  g.inc();
  EXPECT_EQ(g.value(), 4);
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  EXPECT_EQ(out.find("} 4\n"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::metrics
