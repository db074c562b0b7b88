// Unit tests of the cause table and the typed ids: every CauseId has its one spec, the stable
// ids round-trip, headline templates fill as their comment says, no file but a family's names a
// cause, and the shares a spec's weights give behave as docs/doctor.md says (a gateway stage
// carries the engine stages it stands for, only where those are not measured).
#include "doctor/cause_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "doctor/diagnosis.h"
#include "doctor/signal_id.h"
#include "doctor/stage_shares.h"

namespace inferscope::doctor {
namespace {

// Tests that the table holds each CauseId exactly once, in enum order, with a unique stable id.
TEST(CauseSpecTest, EveryCauseHasOneSpecInIdOrder) {
  std::set<std::string_view> names;
  std::size_t i = 0;
  for (const CauseSpec& c : cause_table()) {
    EXPECT_EQ(static_cast<std::size_t>(c.id), i++);
    EXPECT_FALSE(c.name.empty());
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate id " << c.name;
    EXPECT_EQ(cause_from_string(c.name), c.id);
    EXPECT_EQ(to_string(c.id), c.name);
    EXPECT_FALSE(c.next_steps.empty()) << c.name;
  }
  EXPECT_EQ(i, static_cast<std::size_t>(CauseId::kUnexplained) + 1);
  EXPECT_EQ(cause_from_string("no_such_cause"), std::nullopt);
}

// Tests that a cause moving the pipeline has its own stage, weighted 1, and that the stable ids
// DESIGN.md lists are spelled as before.
TEST(CauseSpecTest, PipelineCausesWeighTheirOwnStageFully) {
  for (const CauseSpec& c : cause_table()) {
    if (c.weights.empty()) continue;
    ASSERT_TRUE(c.stage.has_value()) << c.name;
    EXPECT_EQ(c.weight_on(*c.stage), 1.0) << c.name;
  }
  EXPECT_EQ(to_string(CauseId::kKvCachePressure), "kv_cache_pressure");
  EXPECT_EQ(to_string(CauseId::kGatewayQueue), "gateway_queue");
  EXPECT_EQ(to_string(CauseId::kErrorSpike), "error_spike");
  EXPECT_EQ(to_string(CauseId::kWorkersDown), "workers_down");
  EXPECT_EQ(to_string(CauseId::kQueueBacklog), "queue_backlog");
  EXPECT_EQ(to_string(CauseId::kWorkerFailures), "worker_failures");
  EXPECT_EQ(to_string(CauseId::kUnexplained), "unexplained");
}

// Tests that a headline template fills its fields, drops a [part] whose field is empty, and that
// the compile-time parse rejects an unknown field or an unclosed or nested part.
TEST(CauseSpecTest, HeadlineTemplatesFillAndDropEmptyParts) {
  const HeadlineFields decode{"decode_slowdown", "decode", "each token takes longer", "jobs wait"};
  const std::string_view names = Headline{}.names;
  EXPECT_EQ(fill_headline(names, decode), "top cause decode_slowdown (decode)");
  EXPECT_EQ(fill_headline(names, {"error_spike", "", "", ""}), "top cause error_spike");
  EXPECT_EQ(fill_headline("no known cause fits[ ({stage} moved most)]", decode), "no known cause fits (decode moved most)");
  EXPECT_EQ(fill_headline("{summary}; {queue}", decode), "each token takes longer; jobs wait");
  EXPECT_EQ(fill_headline("", decode), "");
  static_assert(headline_template_parses("top cause {cause}[ ({stage})]"));
  for (std::string_view bad : {"{nope}", "{cause", "cause}", "[ ({stage})", "a]", "[[{stage}]]"})
    EXPECT_FALSE(headline_template_parses(bad)) << bad;
  for (const CauseSpec& c : cause_table()) {
    EXPECT_TRUE(headline_template_parses(c.headline.names)) << c.name;
    EXPECT_TRUE(headline_template_parses(c.headline.lead_without_slowdown)) << c.name;
  }
}

// code_of returns a C++ file's code with comments blanked and every string literal replaced by
// "\x01<contents>\x01" (raw strings included), so a search sees code and literals apart.
std::string code_of(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i);
      i = i == std::string::npos ? text.size() : i + 2;
    } else if (text.compare(i, 2, "R\"") == 0) {
      const std::size_t open = text.find('(', i);
      const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      const std::size_t end = text.find(close, open);
      out += '\x01' + text.substr(open + 1, end - open - 1) + '\x01';
      i = end + close.size();
    } else if (text[i] == '"' || text[i] == '\'') {
      const char quote = text[i];
      std::string literal;
      for (++i; i < text.size() && text[i] != quote; ++i) {
        if (text[i] == '\\') literal += text[i++];
        literal += text[i];
      }
      ++i;
      out += quote == '"' ? '\x01' + literal + '\x01' : std::string("' '");
    } else {
      out += text[i++];
    }
  }
  return out;
}

// Tests that no source file but a family's (src/doctor/causes_<family>.*) names a cause: neither a
// CauseId enumerator anywhere in src/ nor a stable id as a string literal in src/doctor/. The
// flow asks the spec instead, so adding a cause touches its family's files only.
TEST(CauseSpecTest, OnlyFamilyFilesNameACause) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(INFERSCOPE_SOURCE_DIR) / "src";
  const std::regex enumerator(R"(CauseId::k[A-Z]\w*)");
  std::vector<std::string> named;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const fs::path& path = entry.path();
    if (!entry.is_regular_file() || (path.extension() != ".cpp" && path.extension() != ".h")) continue;
    const bool in_doctor = path.parent_path().filename() == "doctor";
    if (in_doctor && path.filename().string().starts_with("causes_")) continue;
    ++files;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string code = code_of(text.str());
    const std::string where = fs::relative(path, src).string();
    for (std::sregex_iterator m(code.begin(), code.end(), enumerator), end; m != end; ++m)
      named.push_back(where + ": " + m->str());
    if (!in_doctor) continue;
    for (const CauseSpec& c : cause_table())
      if (code.find('\x01' + std::string(c.name) + '\x01') != std::string::npos)
        named.push_back(where + ": \"" + std::string(c.name) + "\"");
  }
  EXPECT_GT(files, 100u) << "read " << src;
  EXPECT_TRUE(named.empty()) << ::testing::PrintToString(named);
  // The scan finds what it looks for: a family file names its causes both ways.
  std::ifstream family(src / "doctor" / "causes_errors.cpp");
  std::stringstream family_text;
  family_text << family.rdbuf();
  const std::string family_code = code_of(family_text.str());
  EXPECT_TRUE(std::regex_search(family_code, enumerator));
  EXPECT_NE(family_code.find('\x01' + std::string("error_spike") + '\x01'), std::string::npos);
}

// Tests that signal ids round-trip and land in the right Snapshot map.
TEST(SignalIdTest, IdsRoundTripAndKnowTheirMap) {
  for (std::size_t i = 0; i <= static_cast<std::size_t>(SignalId::kQueueWorkersStale); ++i) {
    auto id = static_cast<SignalId>(i);
    EXPECT_EQ(signal_from_string(to_string(id)), id) << to_string(id);
  }
  EXPECT_EQ(signal_from_string("no_such_signal"), std::nullopt);
  Snapshot s;
  s.latency["e2e"].metric = "latency";
  s.signals["kv_usage"].metric = "signal";
  s.stages["decode"].metric = "stage";
  ASSERT_NE(s.find(SignalId::kE2e), nullptr);
  EXPECT_EQ(s.find(SignalId::kE2e)->metric, "latency");
  EXPECT_EQ(s.find(SignalId::kKvUsage)->metric, "signal");
  EXPECT_EQ(s.find(dialect::Role::kDecode)->metric, "stage");
  EXPECT_EQ(s.find(SignalId::kTtft), nullptr);
}

// Tests that a gateway's stages stand for the engine's: the stream for decode, the upstream's
// TTFT for queue and prefill.
TEST(StageSharesTest, GatewayStagesStandForEngineStages) {
  EXPECT_EQ(detail::gateway_stage_of(Stage::kDecode), Stage::kStream);
  EXPECT_EQ(detail::gateway_stage_of(Stage::kQueue), Stage::kUpstreamTtft);
  EXPECT_EQ(detail::gateway_stage_of(Stage::kPrefill), Stage::kUpstreamTtft);
  EXPECT_EQ(detail::gateway_stage_of(Stage::kSend), std::nullopt);
  EXPECT_TRUE(detail::stands_for(Stage::kDecode).empty());
}

// with_rise makes an Evaluation where `stage` rose by `delta` s per request and the given
// causes hold the given strengths.
detail::Evaluation& with_rise(detail::Evaluation& e, Stage stage, double delta,
                              std::initializer_list<std::pair<CauseId, double>> causes) {
  e.stage_deltas[std::string(dialect::to_string(stage))] = delta;
  for (auto [id, strength] : causes) e.add(id).strength = strength;
  return e;
}

// Tests that a stage's rise is shared by strength x weight: on decode, long outputs (weight 1)
// take twice what KV pressure (weight 0.5) takes at the same strength, and the shares add up.
TEST(StageSharesTest, SharesFollowStrengthTimesWeight) {
  Snapshot s;
  DiagnoseOptions o;
  detail::Evaluation e(s, o);
  with_rise(e, Stage::kDecode, 0.3, {{CauseId::kLongOutputs, 0.6}, {CauseId::kKvCachePressure, 0.6}});
  detail::assign_shares(e);
  double outputs = e.find(CauseId::kLongOutputs)->portions["decode"];
  double kv = e.find(CauseId::kKvCachePressure)->portions["decode"];
  EXPECT_NEAR(outputs, 0.2, 1e-12);
  EXPECT_NEAR(kv, 0.1, 1e-12);
}

// Tests that behind a gateway the stream takes the decode weights, but not next to a measured
// decode stage (the same time would count twice), and that a decode cap bounds a prefill-side
// cause, its remainder going to the others.
TEST(StageSharesTest, StreamCarriesDecodeOnlyWithoutDecodeAndCapsHold) {
  Snapshot s;
  DiagnoseOptions o;
  detail::Evaluation gateway(s, o);
  with_rise(gateway, Stage::kStream, 0.4, {{CauseId::kDecodeSlowdown, 0.5}, {CauseId::kLongPrompts, 0.5}});
  gateway.found.decode_caps[CauseId::kLongPrompts] = 0.05;
  detail::assign_shares(gateway);
  EXPECT_NEAR(gateway.find(CauseId::kLongPrompts)->portions["stream"], 0.05, 1e-12);
  EXPECT_NEAR(gateway.find(CauseId::kDecodeSlowdown)->portions["stream"], 0.35, 1e-12);

  detail::Evaluation both(s, o);
  with_rise(both, Stage::kStream, 0.4, {{CauseId::kDecodeSlowdown, 0.5}});
  both.stage_deltas["decode"] = 0;
  detail::assign_shares(both);
  EXPECT_TRUE(both.find(CauseId::kDecodeSlowdown)->portions.empty());
}

}  // namespace
}  // namespace inferscope::doctor
