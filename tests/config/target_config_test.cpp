// Tests of target_config.h: the target kinds come from the dialect table, and every key and flag
// that takes a kind accepts each of them.
#include "config/target_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/stack_config.h"
#include "dialect/dialect.h"

namespace inferscope::config {
namespace {

std::vector<std::string> table_kinds() {
  std::vector<std::string> kinds;
  for (dialect::DialectId id : dialect::kAllDialects) kinds.emplace_back(dialect::to_string(id));
  return kinds;
}

// Tests that dialect_kinds() is the dialect table's list, in its order, and that the kinds that are
// not dialects are not counted as dialect kinds.
TEST(TargetKindsTest, DialectKindsAreTheDialectTable) {
  EXPECT_EQ(dialect_kinds(), table_kinds());
  for (const std::string& kind : table_kinds()) EXPECT_TRUE(is_dialect_kind(kind)) << kind;
  for (std::string_view other : {kAutoKind, kCustomKind, kRedisKind, std::string_view("vlm"), std::string_view("")}) {
    EXPECT_FALSE(is_dialect_kind(other)) << other;
  }
  // Aliases parse_dialect knows are not kinds: a config spells a kind one way.
  EXPECT_FALSE(is_dialect_kind("llama.cpp"));
}

// Tests that every kind of the dialect table is accepted by --target NAME=KIND@URL and by a config
// target's `kind:` (the --kind flag: tests/up/cli/up_cli_integration_test.cpp).
TEST(TargetKindsTest, EveryDialectKindIsAcceptedByEveryKindKey) {
  for (const std::string& kind : table_kinds()) {
    auto target = parse_target_url("t=" + kind + "@http://127.0.0.1:8000/metrics");
    ASSERT_TRUE(target.ok()) << kind << ": " << target.error().message;
    EXPECT_EQ(target->kind, kind);
    auto config = parse_stack_config("targets:\n  - url: http://127.0.0.1:8000/metrics\n    kind: " + kind + "\n", "k.yaml");
    ASSERT_TRUE(config.ok()) << kind << ": " << config.error().message;
    ASSERT_EQ(config->targets.size(), 1u);
    EXPECT_EQ(config->targets[0].kind, kind);
  }
  auto detected = parse_stack_config("targets:\n  - url: http://127.0.0.1:8000/metrics\n    kind: auto\n", "k.yaml");
  ASSERT_TRUE(detected.ok()) << detected.error().message;
  EXPECT_EQ(detected->targets[0].kind, kAutoKind);
}

// Tests that an unknown kind's error lists every kind of the table: the list in the message is
// the table's, not a copy that can fall behind it.
TEST(TargetKindsTest, UnknownKindErrorsListTheTable) {
  const std::string listed = dialect_kind_list();
  for (const std::string& kind : table_kinds()) EXPECT_NE(listed.find(kind), std::string::npos) << kind;

  const auto flag = parse_target_url("t=vlm@http://127.0.0.1:8000/metrics");
  ASSERT_FALSE(flag.ok());
  EXPECT_EQ(flag.error().message, "unknown kind \"vlm\" in \"t=vlm@http://127.0.0.1:8000/metrics\" (" + listed +
                                      "; leave KIND@ out to detect it)");
  // auto and custom are not KIND@ values: auto is what leaving KIND@ out means, custom needs roles.
  EXPECT_FALSE(parse_target_url("t=auto@http://127.0.0.1:8000/metrics").ok());
  EXPECT_FALSE(parse_target_url("t=custom@http://127.0.0.1:8000/metrics").ok());

  const auto key = parse_stack_config("targets:\n  - url: http://127.0.0.1:8000/metrics\n    kind: vlm\n", "k.yaml");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error().message, "k.yaml:3:11: key 'targets[0].kind': unknown kind \"vlm\" (" + listed + ", custom, auto)");
}

// Tests that docs/up.md's --target row names every kind of the table, so the guide cannot fall
// behind the table either.
TEST(TargetKindsTest, UpGuideNamesEveryDialectKind) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/docs/up.md");
  ASSERT_TRUE(in) << "cannot read docs/up.md";
  std::string line, row;
  while (std::getline(in, line)) {
    if (line.starts_with("| `--target [NAME=][KIND@]URL`")) row = line;
  }
  ASSERT_FALSE(row.empty()) << "docs/up.md has no --target row";
  for (const std::string& kind : table_kinds()) {
    EXPECT_NE(row.find("`" + kind + "`"), std::string::npos) << "docs/up.md's --target row does not name " << kind;
  }
}

}  // namespace
}  // namespace inferscope::config
