#include "loadgen/workload.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "loadgen/dataset_workload.h"

namespace inferscope::loadgen {
namespace {

std::size_t words(const std::string& s) {
  std::istringstream in(s);
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

// Tests that synthetic prompts have the drawn number of one-token words, are deterministic per
// index, and that outputs follow the output distribution.
TEST(WorkloadTest, SyntheticLengthsAndDeterminism) {
  SyntheticWorkload w({{"c", 1, fixed_length(50), fixed_length(7)}}, 0, 3);
  RequestSpec a = w.next(5);
  EXPECT_EQ(words(a.prompt), 50u);
  EXPECT_EQ(a.input_tokens, 50u);
  EXPECT_EQ(a.max_tokens, 7u);
  EXPECT_EQ(w.next(5).prompt, a.prompt);
  EXPECT_NE(w.next(6).prompt, a.prompt);
}

// Tests that a shared-prefix ratio makes every prompt start with the same words.
TEST(WorkloadTest, SharedPrefix) {
  SyntheticWorkload w({{"c", 1, fixed_length(40), fixed_length(4)}}, 0.5, 9);
  RequestSpec a = w.next(1), b = w.next(2);
  EXPECT_EQ(words(a.prompt), 40u);
  std::istringstream ia(a.prompt), ib(b.prompt);
  std::string wa, wb;
  for (int i = 0; i < 20; ++i) {
    ia >> wa;
    ib >> wb;
    EXPECT_EQ(wa, wb) << "word " << i;
  }
  EXPECT_NE(a.prompt, b.prompt);
}

// first_words returns the first `n` words of `s` joined by spaces.
std::string first_words(const std::string& s, std::size_t n) {
  std::istringstream in(s);
  std::string out, w;
  for (std::size_t i = 0; i < n && in >> w; ++i) out += (i ? " " : "") + w;
  return out;
}

// Tests a prefix pool: every prompt keeps its drawn length, starts with one of `count` distinct
// prefixes of `tokens` words (each drawn about equally often), and a prompt shorter than the
// prefix is the prefix's first words.
TEST(WorkloadTest, PrefixPool) {
  SyntheticWorkload w({{"c", 1, fixed_length(60), fixed_length(4)}}, 0, 5, PrefixPool{4, 32});
  std::map<std::string, int> seen;
  for (std::uint64_t i = 0; i < 400; ++i) {
    RequestSpec r = w.next(i);
    EXPECT_EQ(words(r.prompt), 60u);
    ++seen[first_words(r.prompt, 32)];
  }
  ASSERT_EQ(seen.size(), 4u);
  for (const auto& [prefix, n] : seen) EXPECT_NEAR(n, 100, 35) << prefix;
  // Requests after the prefix differ.
  EXPECT_NE(w.next(1).prompt.substr(0, 400), w.next(2).prompt.substr(0, 400));

  SyntheticWorkload short_prompts({{"c", 1, fixed_length(10), fixed_length(4)}}, 0, 5, PrefixPool{1, 32});
  SyntheticWorkload long_prompts({{"c", 1, fixed_length(60), fixed_length(4)}}, 0, 5, PrefixPool{1, 32});
  EXPECT_EQ(short_prompts.next(3).prompt, first_words(long_prompts.next(9).prompt, 10));
  // Another seed is another pool (a changed system prompt).
  SyntheticWorkload other({{"c", 1, fixed_length(60), fixed_length(4)}}, 0, 6, PrefixPool{1, 32});
  EXPECT_NE(first_words(other.next(0).prompt, 32), first_words(long_prompts.next(0).prompt, 32));
}

// Tests that a weighted mix picks classes in proportion and parse_mix rejects bad entries.
TEST(WorkloadTest, MixWeights) {
  auto mix = parse_mix("short:3:16:8,long:1:256:64", 0);
  ASSERT_TRUE(mix) << mix.error().message;
  SyntheticWorkload w(*mix, 0, 1);
  int counts[2] = {0, 0};
  for (std::uint64_t i = 0; i < 4000; ++i) {
    RequestSpec r = w.next(i);
    ++counts[r.class_id];
    EXPECT_EQ(r.max_tokens, r.class_id == 0 ? 8u : 64u);
  }
  EXPECT_NEAR(counts[0] / 4000.0, 0.75, 0.03);
  EXPECT_EQ(w.class_names()[1], "long");
  for (const char* bad : {"", "x:1:2", "x:0:1:1", "x:1:0:5", "x:1:2:3junk"}) {
    auto r = parse_mix(bad, 0);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--mix"), std::string::npos);
  }
}

// Tests the length distributions: ranges respected, normal/lognormal means close to the target.
TEST(WorkloadTest, LengthDistributions) {
  WorkloadRng rng(1);
  auto u = parse_length_distribution("uniform:10:20", "--x");
  ASSERT_TRUE(u);
  for (int i = 0; i < 1000; ++i) {
    auto v = u->sample(rng);
    EXPECT_GE(v, 10u);
    EXPECT_LE(v, 20u);
  }
  for (const char* spec : {"normal:200:20", "lognormal:200:100"}) {
    auto d = parse_length_distribution(spec, "--x");
    ASSERT_TRUE(d) << spec;
    double sum = 0;
    for (int i = 0; i < 20000; ++i) sum += d->sample(rng);
    EXPECT_NEAR(sum / 20000, 200, 5) << spec;
  }
  EXPECT_EQ(parse_length_distribution("64", "--x")->sample(rng), 64u);
  EXPECT_FALSE(parse_length_distribution("gauss:1:2", "--x"));
  EXPECT_FALSE(parse_length_distribution("uniform:5:2", "--x"));
}

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& content) {
    path = std::filesystem::temp_directory_path() /
           ("loadgen-ds-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".json");
    std::ofstream(path) << content;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// Tests JSONL entries with prompt or messages, the default max_tokens, and line-numbered errors.
TEST(WorkloadTest, JsonlDataset) {
  TempFile f("{\"prompt\":\"hello there\",\"max_tokens\":5}\n\n{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n");
  auto w = load_jsonl_workload(f.path.string(), 99);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ((*w)->size(), 2u);
  EXPECT_EQ((*w)->next(0).prompt, "hello there");
  EXPECT_EQ((*w)->next(0).max_tokens, 5u);
  EXPECT_EQ((*w)->next(1).messages_json, R"([{"content":"hi","role":"user"}])");
  EXPECT_EQ((*w)->next(1).max_tokens, 99u);
  EXPECT_EQ((*w)->next(2).prompt, "hello there");  // cycles
  TempFile bad("{\"prompt\":\"ok\"}\n{\"max_tokens\":3}\n");
  auto e = load_jsonl_workload(bad.path.string(), 1);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find(":2:"), std::string::npos) << e.error().message;
  EXPECT_FALSE(load_jsonl_workload("/nonexistent/file.jsonl", 1));
}

// Tests ShareGPT loading with vLLM's length filters.
TEST(WorkloadTest, ShareGptDataset) {
  std::string long_text(8000, 'a');
  TempFile f(R"([{"conversations":[{"from":"human","value":"please write a poem about the sea"},{"from":"gpt","value":"the sea is wide and deep and blue"}]},)"
             R"({"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello to you as well"}]},)"
             R"({"conversations":[{"from":"human","value":")" + long_text + R"("},{"from":"gpt","value":"ok ok ok ok ok ok"}]},)"
             R"({"conversations":[{"from":"human","value":"only one turn"}]}])");
  auto w = load_sharegpt_workload(f.path.string(), 0, 1);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ((*w)->size(), 1u);  // "hi" is < 4 tokens, the long prompt > 1024, one has no answer
  EXPECT_EQ((*w)->next(0).max_tokens, 9u);  // 33 bytes at ~4 bytes a token
  auto fixed = load_sharegpt_workload(f.path.string(), 50, 1);
  ASSERT_TRUE(fixed);
  EXPECT_EQ((*fixed)->next(0).max_tokens, 50u);
}

}  // namespace
}  // namespace inferscope::loadgen
