// Unit tests of KindFollower (src/up/kind_follower.h) with fake probes, Prometheus names and rule
// loading, on a simulated clock: back-off while a target does not answer, detection as soon as
// Prometheus scrapes it, re-detection only when its metric names change, kind switches with the
// families gained and lost, and a refused reload.
#include <gtest/gtest.h>

#include "up/kind_follower.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// FakeWorld is the target, Prometheus and the rule loading as the follower sees them.
struct FakeWorld {
  TargetProbe next_probe;                             // what the target answers now
  std::optional<std::set<std::string>> names = std::set<std::string>{};  // what Prometheus holds
  std::vector<std::string> probed_kinds;              // expected_kind of each probe
  std::vector<std::string> applied_kinds;             // demo's kind in each applied config
  bool refuse_reload = false;
  std::vector<std::string> lines;

  KindFollowerHooks hooks() {
    return {.probe = [this](const config::TargetConfig&, const std::string& kind) {
              probed_kinds.push_back(kind);
              return next_probe;
            },
            .scraped_names = [this](const std::string&) { return names; },
            .apply = [this](const config::StackConfig& c, const std::vector<RuleFile>& files) -> Result<void> {
              if (refuse_reload) return make_error("cannot reload Prometheus: HTTP 500");
              EXPECT_FALSE(files.empty());
              applied_kinds.push_back(c.targets[0].kind);
              return {};
            },
            .print = [this](const std::string& line) { lines.push_back(line); }};
  }
};

TargetProbe silent() { return {.answered = false, .error = "cannot GET http://127.0.0.1:1/metrics: Couldn't connect"}; }

TargetProbe speaking(const std::string& kind, std::set<std::string> families, std::vector<std::string> missing = {}) {
  return {.answered = true, .kind = kind, .families = std::move(families), .expected_missing = std::move(missing)};
}

config::StackConfig config_with(const std::string& kind) {
  config::StackConfig c;
  c.targets.push_back(*config::parse_target_url("demo=http://127.0.0.1:1/metrics"));
  c.targets[0].kind = kind;
  return c;
}

int alerts_for(const std::string& kind) {
  auto rules = generate_up_rules(config_with(kind));
  return rules ? rules->alert_counts["demo"] : -1;
}

// Tests that a silent target is probed with doubling back-off from the interval, shows "not
// answering since", and is probed at once and detected when Prometheus starts holding its series.
TEST(KindFollowerTest, UnknownTargetBacksOffThenDetectsWhenScraped) {
  FakeWorld world;
  config::StackConfig config = config_with("auto");
  UpRules rules = *generate_up_rules(config);
  rules.probes["demo"] = silent();
  KindFollower follower(config, {"demo"}, rules, world.hooks(), {.interval = 1s, .max_backoff = 4s});
  EXPECT_EQ(follower.snapshot().notes["demo"].rfind("kind unknown yet (not answering since 20", 0), 0u)
      << follower.snapshot().notes["demo"];
  world.next_probe = silent();
  const Clock::time_point t0 = Clock::now();
  std::vector<int> probed_at;
  for (int s = 0; s <= 20; ++s) {
    const std::size_t before = world.probed_kinds.size();
    follower.tick(t0 + std::chrono::seconds(s) + 1ms);
    if (world.probed_kinds.size() > before) probed_at.push_back(s);
  }
  // Back-off 1 s, 2 s, 4 s, then capped at 4 s.
  EXPECT_EQ(probed_at, (std::vector<int>{1, 3, 7, 11, 15, 19}));
  EXPECT_TRUE(world.applied_kinds.empty());
  EXPECT_EQ(follower.snapshot().dialects["demo"], "auto");

  // Prometheus scraped it: probe at once, not at the next back-off step.
  world.names = std::set<std::string>{"vllm:num_requests_running"};
  world.next_probe = speaking("vllm", {"vllm:num_requests_running"});
  follower.tick(t0 + 20s + 2ms);
  ASSERT_EQ(world.applied_kinds, (std::vector<std::string>{"vllm"}));
  ASSERT_EQ(world.lines.size(), 1u);
  EXPECT_EQ(world.lines[0], "target demo: detected vllm, " + std::to_string(alerts_for("vllm")) + " alerts");
  const KindSnapshot snapshot = follower.snapshot();
  EXPECT_EQ(snapshot.dialects.at("demo"), "vllm");
  EXPECT_FALSE(snapshot.notes.contains("demo"));
  EXPECT_GT(alerts_for("vllm"), alerts_for("auto"));
}

// Tests that an answering target whose metrics match no dialect says so, not "not answering".
TEST(KindFollowerTest, AnsweringWithoutKnownDialectIsNotSilent) {
  FakeWorld world;
  config::StackConfig config = config_with("auto");
  UpRules rules = *generate_up_rules(config);
  rules.probes["demo"] = silent();
  KindFollower follower(config, {"demo"}, rules, world.hooks(), {.interval = 1s});
  world.next_probe = {.answered = true, .families = {"python_info"}, .error = "no known dialect in x (none)"};
  follower.tick(Clock::now() + 2s);
  EXPECT_EQ(follower.snapshot().notes["demo"], "kind unknown yet (no known dialect in x (none))");
}

// Tests that a known target is probed only when Prometheus' metric names for it change, that a
// change to another dialect regenerates its rules with the families gained and lost, and that
// expected metrics going missing under the same kind are reported without a reload.
TEST(KindFollowerTest, KnownTargetReprobesOnlyOnChange) {
  FakeWorld world;
  config::StackConfig config = config_with("inferscope");
  UpRules rules = *generate_up_rules(config);
  rules.probes["demo"] = speaking("inferscope", {"inferscope_requests_total", "process_cpu_seconds_total"});
  KindFollower follower(config, {"demo"}, rules, world.hooks(), {.interval = 1s});
  const Clock::time_point t0 = Clock::now();
  world.names = std::set<std::string>{"inferscope_requests_total"};
  for (int s = 1; s <= 5; ++s) follower.tick(t0 + std::chrono::seconds(s));
  EXPECT_TRUE(world.probed_kinds.empty()) << "probed although nothing changed";
  // The target went down: its series went stale. Nothing to probe.
  world.names = std::set<std::string>{};
  follower.tick(t0 + 6s);
  EXPECT_TRUE(world.probed_kinds.empty());

  // Back with vLLM's names.
  world.names = std::set<std::string>{"vllm:e2e_request_latency_seconds_bucket"};
  world.next_probe = speaking("vllm", {"vllm:e2e_request_latency_seconds", "process_cpu_seconds_total"});
  follower.tick(t0 + 7s);
  ASSERT_EQ(world.probed_kinds, (std::vector<std::string>{"inferscope"}));
  ASSERT_EQ(world.applied_kinds, (std::vector<std::string>{"vllm"}));
  ASSERT_EQ(world.lines.size(), 1u);
  EXPECT_EQ(world.lines[0], "target demo: detected vllm, " + std::to_string(alerts_for("vllm")) +
                                " alerts (was inferscope; families gained: vllm:e2e_request_latency_seconds; lost: "
                                "inferscope_requests_total)");
  EXPECT_EQ(follower.snapshot().dialects.at("demo"), "vllm");

  // Same kind, new names: first a baseline of its expected metrics, then a rename that loses one.
  world.names = std::set<std::string>{"vllm:e2e_request_latency_seconds_bucket", "vllm:num_requests_running"};
  world.next_probe = speaking("vllm", {"vllm:e2e_request_latency_seconds", "vllm:num_requests_running"});
  follower.tick(t0 + 8s);
  EXPECT_EQ(world.lines.size(), 1u);
  world.names = std::set<std::string>{"vllm:request_latency_bucket", "vllm:num_requests_running"};
  world.next_probe = speaking("vllm", {"vllm:request_latency", "vllm:num_requests_running"},
                              {"vllm:e2e_request_latency_seconds"});
  follower.tick(t0 + 9s);
  EXPECT_EQ(world.probed_kinds.back(), "vllm");
  EXPECT_EQ(world.applied_kinds.size(), 1u) << "same kind: the rules do not change";
  ASSERT_EQ(world.lines.size(), 2u);
  EXPECT_NE(world.lines[1].find("target demo: vllm metrics changed (families gained: vllm:request_latency; lost: "
                                "vllm:e2e_request_latency_seconds); expected vllm metrics missing now: "
                                "vllm:e2e_request_latency_seconds"),
            std::string::npos)
      << world.lines[1];
  EXPECT_EQ(follower.snapshot().notes.at("demo"), "lacks expected vllm metrics: vllm:e2e_request_latency_seconds");
}

// Tests that a refused reload keeps the old kind, says why, and the next probe tries again.
TEST(KindFollowerTest, RefusedReloadKeepsTheKindAndRetries) {
  FakeWorld world;
  world.refuse_reload = true;
  config::StackConfig config = config_with("auto");
  UpRules rules = *generate_up_rules(config);
  rules.probes["demo"] = silent();
  KindFollower follower(config, {"demo"}, rules, world.hooks(), {.interval = 1s});
  world.next_probe = speaking("tgi", {"tgi_request_count"});
  const Clock::time_point t0 = Clock::now();
  follower.tick(t0 + 2s);
  ASSERT_EQ(world.lines.size(), 1u);
  EXPECT_EQ(world.lines[0], "target demo: detected tgi but cannot load its rules: cannot reload Prometheus: HTTP 500");
  EXPECT_EQ(follower.snapshot().dialects.at("demo"), "auto");
  world.refuse_reload = false;
  follower.tick(t0 + 10s);
  EXPECT_EQ(world.applied_kinds, (std::vector<std::string>{"tgi"}));
  EXPECT_EQ(follower.snapshot().dialects.at("demo"), "tgi");
}

// Tests that targets not followed (an explicit kind) are never probed.
TEST(KindFollowerTest, ExplicitKindIsNeverProbed) {
  FakeWorld world;
  config::StackConfig config = config_with("vllm");
  KindFollower follower(config, {}, *generate_up_rules(config), world.hooks(), {.interval = 1s});
  world.names = std::set<std::string>{"tgi_request_count"};
  world.next_probe = speaking("tgi", {"tgi_request_count"});
  const Clock::time_point t0 = Clock::now();
  for (int s = 1; s <= 3; ++s) follower.tick(t0 + std::chrono::seconds(s));
  EXPECT_TRUE(world.probed_kinds.empty());
  EXPECT_EQ(follower.snapshot().dialects.at("demo"), "vllm");
}

}  // namespace
}  // namespace inferscope::up
