// Unit tests of the baseline file (scrape_collector.h): what `--save-baseline` writes is what
// `--baseline-file` reads, each target's own statistics included, and a file saved before targets
// were kept still reads (its replicas are then compared within the window only).
#include "doctor/scrape_collector.h"

#include <fstream>

#include <gtest/gtest.h>

#include "doctor/diagnosis_support.h"
#include "support/temp_dir.h"

namespace inferscope::doctor {
namespace {

using namespace testing;

// Tests that the whole data and each target's slice survive a save and a load, keyed by where.
TEST(BaselineFileTest, TargetsRoundTrip) {
  inferscope::testing::TempDir dir("baseline-file");
  const std::string path = (dir.path() / "healthy.json").string();
  Snapshot whole = steady();
  Snapshot slow = decode_slowed(3);
  std::vector<Slice> targets{{{"", "127.0.0.1:8001", "sim"}, steady()}, {{"", "127.0.0.1:8002", "sim"}, slow},
                             {{"", "127.0.0.1:8003", "sim", "1"}, steady()}};
  ASSERT_TRUE(save_baseline(whole, targets, path));
  auto loaded = load_baseline(path);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->whole.dialect, "inferscope");
  EXPECT_DOUBLE_EQ(loaded->whole.find(SignalId::kE2e)->incident.mean, 0.300);
  ASSERT_EQ(loaded->targets.size(), 3u);
  EXPECT_EQ(loaded->targets[1].where.instance, "127.0.0.1:8002");
  EXPECT_TRUE(loaded->targets[1].where.engine.empty());
  EXPECT_EQ(loaded->targets[2].where.engine, "1");  // a data-parallel rank keeps its engine
  EXPECT_EQ(loaded->targets[1].where.model, "sim");
  // A target's incident side is what it saved: the slowed one's decode.
  EXPECT_DOUBLE_EQ(loaded->targets[1].snapshot.find(dialect::Role::kDecode)->incident.mean, 0.245 * 3);
  EXPECT_DOUBLE_EQ(loaded->targets[0].snapshot.find(SignalId::kTpot)->incident.mean, 0.008);
}

// Tests that a file without targets (written before they were saved) reads with none, and that a
// malformed targets entry is an error naming the file and the entry.
TEST(BaselineFileTest, OldFileAndBadTargets) {
  inferscope::testing::TempDir dir("baseline-file");
  const std::string path = (dir.path() / "old.json").string();
  std::ofstream(path) << R"({"schema": "inferscope-doctor-baseline/1", "dialect": "inferscope",
    "latency": {"e2e": {"metric": "m", "unit": "s", "stat": {"mean": 0.3, "count": 100}}}})";
  auto old = load_baseline(path);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_TRUE(old->targets.empty());
  EXPECT_DOUBLE_EQ(old->whole.find(SignalId::kE2e)->incident.mean, 0.3);

  const std::string bad = (dir.path() / "bad.json").string();
  std::ofstream(bad) << R"({"schema": "inferscope-doctor-baseline/1", "targets": [{"latency": {}}]})";
  auto refused = load_baseline(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "cannot read baseline file " + bad + ": targets[0].where is missing");
}

}  // namespace
}  // namespace inferscope::doctor
