// File: support/registry_scrape.h
// Test helpers for code that records into a metrics::Registry: render it as Prometheus text 0.0.4,
// parse and validate it strictly (a failure is a test failure), and fixed timeline instants.
// Example: const auto e = testing::scrape(registry); EXPECT_EQ(metrics::value_of(e, "x_total"), 1.0);
// Not thread-safe against concurrent registration; scraping while writers run is fine.
#pragma once

#include <gtest/gtest.h>
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/exposition_parser.h>
#include <inferscope/metrics/registry.h>
#include <inferscope/timeline/request_timeline.h>

#include <chrono>
#include <string>
#include <utility>

namespace inferscope::testing {

// kT0 is the fixed start of test timelines (an hour past the epoch, so subtracting stays valid).
inline const timeline::TimePoint kT0 = timeline::TimePoint{} + std::chrono::hours(1);

// at_ms returns kT0 + ms milliseconds (fractions kept to the clock's nanosecond).
inline timeline::TimePoint at_ms(double ms) {
  return kT0 + std::chrono::duration_cast<timeline::Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

// scrape renders `registry`, parses the text and validates it; either failure fails the test
// (with the text) and returns an empty exposition.
inline metrics::ParsedExposition scrape(const metrics::Registry& registry) {
  std::string text;
  metrics::render(registry, metrics::ExpositionFormat::kPrometheusText004, text);
  auto parsed = metrics::parse_exposition(text, metrics::ExpositionTextFormat::kPrometheus004);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message) << "\n" << text;
  if (!parsed.ok()) return {};
  const auto valid = metrics::validate_exposition(*parsed);
  EXPECT_TRUE(valid.ok()) << (valid.ok() ? "" : valid.error().message);
  return std::move(parsed).value();
}

}  // namespace inferscope::testing
