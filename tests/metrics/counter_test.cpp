// Tests for include/inferscope/metrics/counter.h.
#include <inferscope/metrics/counter.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace inferscope::metrics {
namespace {

std::string render_text(const Registry& registry) {
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  return out;
}

// Tests that inc and whole/fractional add accumulate into one value.
TEST(CounterTest, IncAndAddAccumulate) {
  Registry registry;
  Counter c = registry.counter({.name = "c_total", .help = "h"}).with({});
  c.inc();
  c.add(2);
  c.add(0.25);
  c.add(0.0);
  c.add(-0.0);
  EXPECT_DOUBLE_EQ(c.value(), 3.25);
}

// Tests that whole increments above 2^53 stay exact in the exposition (integer path).
TEST(CounterTest, WholeIncrementsStayExactAbove2To53) {
  Registry registry;
  Counter c = registry.counter({.name = "big_total", .help = "h"}).with({});
  c.add(9007199254740992.0);  // 2^53
  c.inc();                    // 2^53 + 1 is not representable as a double
  EXPECT_NE(render_text(registry).find("big_total 9007199254740993\n"), std::string::npos);
}

// Tests that negative and NaN additions are ignored and counted per family and reason.
TEST(CounterTest, NegativeAndNaNAreIgnoredAndCounted) {
  Registry registry;
  Counter c = registry.counter({.name = "c_total", .help = "h"}).with({});
  c.add(5);
  c.add(-1);
  c.add(-std::numeric_limits<double>::infinity());
  c.add(std::nan(""));
  EXPECT_EQ(c.value(), 5);
  const std::string text = render_text(registry);
  EXPECT_NE(text.find("inferscope_metrics_values_rejected_total{family=\"c_total\",reason=\"negative\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inferscope_metrics_values_rejected_total{family=\"c_total\",reason=\"nan\"} 1\n"),
            std::string::npos)
      << text;
}

// Tests that +Inf is accepted (it is not negative) and shows as +Inf.
TEST(CounterTest, PositiveInfinityIsKept) {
  Registry registry;
  Counter c = registry.counter({.name = "c_total", .help = "h"}).with({});
  c.add(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(c.value()));
  EXPECT_NE(render_text(registry).find("c_total +Inf\n"), std::string::npos);
}

// Tests that a default-constructed handle accepts writes without effect on any registry.
TEST(CounterTest, DefaultHandleIsHarmless) {
  Counter c;
  c.inc();
  c.add(-1);
  c.add(std::nan(""));
  EXPECT_GE(c.value(), 1);  // the shared null series may have been written by other tests
}

// Tests that copies of a handle write the same series.
TEST(CounterTest, CopiesShareTheSeries) {
  Registry registry;
  Counter a = registry.counter({.name = "c_total", .help = "h"}).with({});
  Counter b = a;
  a.inc();
  b.inc();
  EXPECT_EQ(a.value(), 2);
  EXPECT_EQ(b.value(), 2);
}

}  // namespace
}  // namespace inferscope::metrics
