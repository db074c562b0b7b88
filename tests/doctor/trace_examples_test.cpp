// Unit tests of the doctor's example traces (trace_examples.h) on a constructed diagnosis and trace
// list: which requests show which finding, at most three, longest first, only from the window;
// the JSON, text and Markdown renderings; up's list parsed and refused when malformed; and no
// examples, only a note, when up cannot be reached.
#include "doctor/trace_examples.h"

#include <gtest/gtest.h>

#include "doctor/cause_spec.h"
#include "doctor/diagnosis_format.h"

namespace inferscope::doctor {
namespace {

TraceListing trace(std::string id, double start, std::map<std::string, double> stages, bool failed = false) {
  TraceListing t;
  t.trace_id = std::move(id);
  t.start = start;
  t.stages = std::move(stages);
  t.duration_s = 0;
  for (const auto& [stage, seconds] : t.stages) t.duration_s += seconds;
  t.failed = failed;
  return t;
}

std::string id(char c) { return std::string(32, c); }

// A decode_slowdown finding over the window 1000..1300 whose decode stage averaged 0.5 s before,
// an error_spike finding and a target_down finding (which no request's breakdown can show).
Diagnosis decode_diagnosis() {
  Diagnosis d;
  d.verdict = "degraded";
  d.headline = "degraded: decode got slower";
  d.snapshot.incident_start = 1000;
  d.snapshot.incident_end = 1300;
  StageRow decode;
  decode.stage = "decode";
  decode.baseline.mean = 0.5;
  d.stages.push_back(decode);
  Finding slow;
  slow.cause = std::string(to_string(CauseId::kDecodeSlowdown));
  slow.stage = "decode";
  slow.summary = "decode is slower";
  Finding errors;
  errors.cause = std::string(to_string(CauseId::kErrorSpike));
  errors.summary = "more requests fail";
  Finding down;
  down.cause = std::string(to_string(CauseId::kTargetDown));
  down.summary = "a target is down";
  d.findings = {slow, errors, down};
  return d;
}

std::vector<TraceListing> window_traces() {
  return {
      trace(id('a'), 1100, {{"decode", 3.0}, {"prefill", 0.2}}),
      trace(id('b'), 1200, {{"decode", 2.0}, {"queue", 0.1}}),
      trace(id('c'), 1150, {{"decode", 0.4}, {"prefill", 0.1}}),  // decode longest but not longer than before
      trace(id('d'), 1160, {{"queue", 5.0}, {"decode", 1.0}}),   // queue dominates
      trace(id('e'), 900, {{"decode", 9.0}}),                    // before the window
      trace(id('f'), 1250, {{"decode", 1.5}, {"prefill", 0.3}}),
      trace(id('g'), 1260, {{"decode", 1.0}}),                   // fourth: one too many
      trace(id('h'), 1170, {{"preprocess", 0.01}}, true),        // failed
  };
}

// Tests the choice: decode_slowdown gets the three requests with the longest decode among those
// whose decode is their longest stage and grew; error_spike the failed one; target_down none.
TEST(TraceExamplesTest, EachFindingGetsRequestsWhoseBreakdownShowsIt) {
  Diagnosis d = decode_diagnosis();
  attach_examples(d, window_traces());
  ASSERT_EQ(d.findings[0].examples.size(), kMaxExamples);
  EXPECT_EQ(d.findings[0].examples[0].trace_id, id('a'));
  EXPECT_EQ(d.findings[0].examples[1].trace_id, id('b'));
  EXPECT_EQ(d.findings[0].examples[2].trace_id, id('f'));
  EXPECT_DOUBLE_EQ(d.findings[0].examples[0].stages.at("decode"), 3.0);
  EXPECT_DOUBLE_EQ(d.findings[0].examples[0].duration_s, 3.2);
  ASSERT_EQ(d.findings[1].examples.size(), 1U);
  EXPECT_EQ(d.findings[1].examples[0].trace_id, id('h'));
  EXPECT_TRUE(d.findings[2].examples.empty());
}

// Tests that requests which do not show the finding give no examples (never a misleading one).
TEST(TraceExamplesTest, NoRequestShowsItNoExamples) {
  Diagnosis d = decode_diagnosis();
  attach_examples(d, {trace(id('d'), 1160, {{"queue", 5.0}, {"decode", 1.0}}),
                      trace(id('c'), 1150, {{"decode", 0.4}})});
  for (const Finding& f : d.findings) EXPECT_TRUE(f.examples.empty()) << f.cause;
  attach_examples(d, {});
  for (const Finding& f : d.findings) EXPECT_TRUE(f.examples.empty()) << f.cause;
  EXPECT_EQ(to_json(d)["findings"][0]["examples"], nlohmann::json::array());
}

// Tests the three renderings: JSON examples [{trace_id, duration_s, stages}], a text line per
// example with its stages longest first, and Markdown links to up's page.
TEST(TraceExamplesTest, RenderedInJsonTextAndMarkdown) {
  Diagnosis d = decode_diagnosis();
  attach_examples(d, window_traces());
  d.trace_page_url = "http://127.0.0.1:9466";
  const nlohmann::json j = to_json(d);
  const nlohmann::json& first = j["findings"][0]["examples"][0];
  EXPECT_EQ(first["trace_id"], id('a'));
  EXPECT_DOUBLE_EQ(first["duration_s"].get<double>(), 3.2);
  EXPECT_DOUBLE_EQ(first["stages"]["decode"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(first["stages"]["prefill"].get<double>(), 0.2);
  EXPECT_EQ(j["findings"][0]["examples"].size(), 3U);

  const std::string text = to_text(d);
  EXPECT_NE(text.find("trace " + id('a') + " 3.20 s: decode 3.00 s, prefill 200 ms"), std::string::npos) << text;

  const std::string md = to_markdown(d);
  EXPECT_NE(md.find("[`aaaaaaaa`](http://127.0.0.1:9466/?trace=" + id('a') + ")"), std::string::npos) << md;
  d.trace_page_url.clear();
  EXPECT_EQ(to_markdown(d).find("](http"), std::string::npos);
}

// Tests parsing up's GET /api/traces body and refusing one that is not that shape.
TEST(TraceExamplesTest, ParsesUpsTraceList) {
  auto parsed = parse_trace_listing(R"({"traces":[{"trace_id":")" + id('a') +
                                    R"(","job":"inferscope-serve","model":"sim-a","name":"chat sim-a","start":1100.5,)"
                                    R"("duration_s":3.2,"status":"error","stages":{"decode":3.0,"prefill":0.2}}]})");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 1U);
  EXPECT_EQ((*parsed)[0].trace_id, id('a'));
  EXPECT_EQ((*parsed)[0].model, "sim-a");
  EXPECT_DOUBLE_EQ((*parsed)[0].start, 1100.5);
  EXPECT_TRUE((*parsed)[0].failed);
  EXPECT_DOUBLE_EQ((*parsed)[0].stages.at("decode"), 3.0);
  for (const char* bad : {"", "[]", R"({"traces":{}})", R"({"traces":[{"trace_id":"x"}]})"}) {
    auto refused = parse_trace_listing(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().message.rfind("cannot read the trace list: ", 0), 0U) << refused.error().message;
  }
}

// Tests that an up that does not answer leaves the findings without examples and says so.
TEST(TraceExamplesTest, UnreachableUpGivesANoteAndNoExamples) {
  Diagnosis d = decode_diagnosis();
  add_trace_examples(d, "http://127.0.0.1:1", "http://127.0.0.1:1", "", {});
  for (const Finding& f : d.findings) EXPECT_TRUE(f.examples.empty());
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes.back().rfind("example traces unavailable: ", 0), 0U) << d.notes.back();
  EXPECT_TRUE(d.trace_page_url.empty());
}

}  // namespace
}  // namespace inferscope::doctor
