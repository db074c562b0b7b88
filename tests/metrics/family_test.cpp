// Tests for include/inferscope/metrics/family.h: lookup, removal, handle lifetime, cardinality guard.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/family.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::metrics {
namespace {

std::string text(const Registry& registry) {
  std::string out;
  render(registry, ExpositionFormat::kPrometheusText004, out);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Tests that with() returns the same series for equal values, in any overload.
TEST(FamilyTest, SameValuesSameSeries) {
  Registry registry;
  auto& family = registry.counter({.name = "c_total", .help = "h", .label_names = {"a", "b"}});
  family.with({"x", "y"}).inc();
  const std::vector<std::string> owned = {"x", "y"};
  family.with(std::span<const std::string>(owned)).inc();
  const std::string_view views[] = {"x", "y"};
  family.with(std::span<const std::string_view>(views)).inc();
  EXPECT_EQ(family.with({"x", "y"}).value(), 3);
  EXPECT_EQ(family.size(), 1u);
  // Length-prefixed keys: ("xy","") and ("x","y") are different series.
  family.with({"xy", ""}).inc();
  EXPECT_EQ(family.size(), 2u);
  EXPECT_EQ(family.name(), "c_total");
}

// Tests that the wrong number of label values is setup misuse and throws.
TEST(FamilyTest, WrongValueCountThrows) {
  Registry registry;
  auto& family = registry.gauge({.name = "g", .help = "h", .label_names = {"a"}});
  EXPECT_THROW(family.with({}), std::invalid_argument);
  EXPECT_THROW(family.with({"1", "2"}), std::invalid_argument);
  EXPECT_THROW(family.remove({"1", "2"}), std::invalid_argument);
}

// Tests that a handle stays valid after remove() (run under ASan) and no longer shows up, and that
// a re-created series starts from zero.
TEST(FamilyTest, HandleStaysValidAfterRemove) {
  Registry registry;
  auto& family = registry.histogram({{.name = "h_seconds", .help = "h", .label_names = {"k"}}, {1}});
  Histogram old = family.with({"gone"});
  old.observe(0.5);
  EXPECT_TRUE(family.remove({"gone"}));
  EXPECT_FALSE(family.remove({"gone"}));
  EXPECT_EQ(family.size(), 0u);
  old.observe(0.5);  // must not crash or be visible
  EXPECT_EQ(old.snapshot().count, 2u);
  EXPECT_FALSE(contains(text(registry), "k=\"gone\""));
  Histogram fresh = family.with({"gone"});
  EXPECT_EQ(fresh.snapshot().count, 0u);
}

// Tests that handles outlive the registry itself.
TEST(FamilyTest, HandleOutlivesRegistry) {
  Counter counter;
  Histogram histogram;
  {
    Registry registry;
    counter = registry.counter({.name = "c_total", .help = "h"}).with({});
    histogram = registry.histogram({{.name = "h", .help = "h"}, {1}}).with({});
  }
  counter.inc();
  counter.add(-1);  // rejection counter outlives the registry too
  histogram.observe(std::nan(""));
  histogram.observe(2);
  EXPECT_EQ(counter.value(), 1);
  EXPECT_EQ(histogram.snapshot().count, 1u);
}

// Tests the per-family limit: past it with() returns the overflow series and counts the refusal.
TEST(FamilyTest, FamilyLimitSendsToOverflow) {
  Registry registry;
  auto& family = registry.counter({.name = "c_total", .help = "h", .label_names = {"a", "b"}, .max_series = 2});
  family.with({"1", "1"}).inc();
  family.with({"2", "2"}).inc();
  family.with({"3", "3"}).inc();
  family.with({"4", "4"}).add(2);
  family.with({"1", "1"}).inc();  // existing series still reachable
  EXPECT_EQ(family.size(), 3u);   // two real + overflow
  const std::string out = text(registry);
  EXPECT_TRUE(contains(out, "c_total{a=\"__overflow__\",b=\"__overflow__\"} 3\n")) << out;
  EXPECT_TRUE(contains(out, "c_total{a=\"1\",b=\"1\"} 2\n")) << out;
  EXPECT_TRUE(contains(out, "inferscope_metrics_series_dropped_total{family=\"c_total\",reason=\"family_limit\"} 2\n"))
      << out;
  // Removing a series frees room under the limit.
  EXPECT_TRUE(family.remove({"2", "2"}));
  family.with({"5", "5"}).inc();
  EXPECT_TRUE(contains(text(registry), "c_total{a=\"5\",b=\"5\"} 1\n"));
}

// Tests the registry-wide limit across families.
TEST(FamilyTest, RegistryLimitSendsToOverflow) {
  Registry registry(RegistryOptions{.max_series_per_family = 100, .max_series_total = 3});
  auto& a = registry.gauge({.name = "a", .help = "h", .label_names = {"k"}});
  auto& b = registry.gauge({.name = "b", .help = "h", .label_names = {"k"}});
  a.with({"1"}).set(1);
  a.with({"2"}).set(1);
  b.with({"1"}).set(1);
  b.with({"2"}).set(7);  // refused: total is 3
  const std::string out = text(registry);
  EXPECT_TRUE(contains(out, "b{k=\"__overflow__\"} 7\n")) << out;
  EXPECT_TRUE(contains(out, "inferscope_metrics_series_dropped_total{family=\"b\",reason=\"registry_limit\"} 1\n"))
      << out;
}

// Tests that invalid UTF-8 label values are refused (overflow + counted) and valid UTF-8 kept.
TEST(FamilyTest, InvalidUtf8GoesToOverflow) {
  Registry registry;
  auto& family = registry.counter({.name = "c_total", .help = "h", .label_names = {"v"}});
  for (std::string_view bad : {std::string_view("\xff"), std::string_view("\xc0\xaf"),  // overlong '/'
                               std::string_view("\xed\xa0\x80"),                        // surrogate
                               std::string_view("ab\xe2\x82")}) {                       // truncated
    family.with({bad}).inc();
  }
  family.with({"caf\xc3\xa9 \xf0\x9f\x9a\x80"}).inc();
  const std::string out = text(registry);
  EXPECT_TRUE(contains(out, "c_total{v=\"__overflow__\"} 4\n")) << out;
  EXPECT_TRUE(contains(out, "c_total{v=\"caf\xc3\xa9 \xf0\x9f\x9a\x80\"} 1\n")) << out;
  EXPECT_TRUE(contains(out, "{family=\"c_total\",reason=\"invalid_label_value\"} 4\n")) << out;
}

// Tests that asking for the overflow values directly returns the overflow series without counting
// a drop, so it can never appear twice.
TEST(FamilyTest, OverflowValuesMapToOverflowSeries) {
  Registry registry;
  auto& family = registry.counter({.name = "c_total", .help = "h", .label_names = {"v"}, .max_series = 0});
  family.with({"__overflow__"}).inc();
  family.with({"x"}).inc();
  EXPECT_EQ(family.size(), 1u);
  const std::string out = text(registry);
  EXPECT_TRUE(contains(out, "c_total{v=\"__overflow__\"} 2\n")) << out;
  EXPECT_TRUE(contains(out, "{family=\"c_total\",reason=\"family_limit\"} 1\n")) << out;
}

// Tests that label values are escaped once in the cached label text.
TEST(FamilyTest, LabelValuesAreEscaped) {
  Registry registry;
  auto& family = registry.gauge({.name = "g", .help = "h", .label_names = {"v"}});
  family.with({"back\\slash \"quoted\"\nnewline\ttab"}).set(1);
  EXPECT_TRUE(contains(text(registry), "g{v=\"back\\\\slash \\\"quoted\\\"\\nnewline\ttab\"} 1\n"));
}

}  // namespace
}  // namespace inferscope::metrics
