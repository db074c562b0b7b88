#include "loadgen/arrival_schedule.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace inferscope::loadgen {
namespace {

using std::chrono::seconds;

std::vector<double> gaps_s(ArrivalKind kind, double rate, double burstiness, int n, std::uint64_t seed = 7) {
  LoadPlan plan{{LoadStage{Nanos(0), rate, 0}}, kind, burstiness};
  ArrivalSchedule s(plan, seed);
  std::vector<double> gaps;
  Nanos prev{0};
  for (int i = 0; i < n; ++i) {
    auto t = s.next(prev);
    EXPECT_TRUE(t.has_value());
    gaps.push_back(static_cast<double>((*t - prev).count()) / 1e9);
    prev = *t;
  }
  return gaps;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double cv(const std::vector<double>& v) {
  double m = mean(v), sq = 0;
  for (double x : v) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(v.size())) / m;
}

// Tests that a constant stage spaces arrivals exactly 1/rate apart.
TEST(ArrivalScheduleTest, ConstantGapsAreExact) {
  for (double g : gaps_s(ArrivalKind::kConstant, 200, 1, 100)) EXPECT_NEAR(g, 0.005, 1e-9);
}

// Tests that Poisson gaps have mean 1/rate and coefficient of variation 1.
TEST(ArrivalScheduleTest, PoissonHasMeanAndUnitVariation) {
  auto g = gaps_s(ArrivalKind::kPoisson, 100, 1, 20000);
  EXPECT_NEAR(mean(g), 0.01, 0.0005);
  EXPECT_NEAR(cv(g), 1.0, 0.05);
}

// Tests that gamma gaps keep mean 1/rate with coefficient of variation 1/sqrt(burstiness).
TEST(ArrivalScheduleTest, GammaBurstinessSetsVariation) {
  auto bursty = gaps_s(ArrivalKind::kGamma, 100, 0.25, 20000);
  EXPECT_NEAR(mean(bursty), 0.01, 0.0008);
  EXPECT_NEAR(cv(bursty), 2.0, 0.15);
  auto smooth = gaps_s(ArrivalKind::kGamma, 100, 4, 20000);
  EXPECT_NEAR(cv(smooth), 0.5, 0.05);
}

// Tests that the same seed yields the same schedule and another seed a different one.
TEST(ArrivalScheduleTest, SeedMakesScheduleReproducible) {
  EXPECT_EQ(gaps_s(ArrivalKind::kPoisson, 50, 1, 100, 1), gaps_s(ArrivalKind::kPoisson, 50, 1, 100, 1));
  EXPECT_NE(gaps_s(ArrivalKind::kPoisson, 50, 1, 100, 1), gaps_s(ArrivalKind::kPoisson, 50, 1, 100, 2));
}

// Tests that stages change the rate at their boundaries and the schedule ends after the last one.
TEST(ArrivalScheduleTest, StagesStepTheRateAndEnd) {
  LoadPlan plan{{{seconds(1), 10, 0}, {seconds(1), 100, 0}, {seconds(1), 10, 0}}, ArrivalKind::kConstant, 1};
  ArrivalSchedule s(plan, 1);
  int per_stage[3] = {0, 0, 0};
  Nanos prev{0};
  for (int i = 0; i < 1000; ++i) {
    auto t = s.next(prev);
    if (!t) break;
    ++per_stage[s.stage_index_at(*t)];
    prev = *t;
  }
  EXPECT_EQ(per_stage[0], 9);  // 0.1 .. 0.9 (the next gap crosses into stage 2)
  EXPECT_EQ(per_stage[1], 99);
  EXPECT_EQ(per_stage[2], 9);
  EXPECT_FALSE(s.next(prev).has_value());
  EXPECT_EQ(s.plan_end(), seconds(3));
}

// Tests that a closed-loop stage returns the caller's time (paced by free slots, not the RNG).
TEST(ArrivalScheduleTest, ClosedLoopStageReturnsNow) {
  LoadPlan plan{{{seconds(2), 0, 8}}, ArrivalKind::kPoisson, 1};
  ArrivalSchedule s(plan, 1);
  EXPECT_EQ(s.next(seconds(1)), Nanos(seconds(1)));
  EXPECT_FALSE(s.next(seconds(2)).has_value());
}

// Tests that parse_stages reads rates, concurrencies and both, and names --stages on errors.
TEST(ArrivalScheduleTest, ParseStages) {
  auto ok = parse_stages("30s:rate=10,1m:rate=50:concurrency=64,500ms:concurrency=8");
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[0].duration, seconds(30));
  EXPECT_EQ((*ok)[0].rate, 10);
  EXPECT_EQ((*ok)[1].duration, seconds(60));
  EXPECT_EQ((*ok)[1].concurrency, 64u);
  EXPECT_EQ((*ok)[2].duration, std::chrono::milliseconds(500));
  EXPECT_EQ((*ok)[2].rate, 0);
  for (const char* bad : {"", "30:rate=1", "30s:speed=3", "30s:rate=-1", "30s:rate", "0s:rate=1"}) {
    auto r = parse_stages(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--stages"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace inferscope::loadgen
