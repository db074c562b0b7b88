// Tests of Tokenizer and TextGenerator: determinism, the documented counting rules, and that
// generated text re-tokenizes to one token per generated token.
#include "serve/engine/tokenizer.h"

#include <gtest/gtest.h>

#include "serve/engine/text_generator.h"

namespace inferscope::serve {
namespace {

// Tests the counting rules on a table of texts (f-test style).
TEST(TokenizerTest, CountsFollowTheDocumentedRules) {
  Tokenizer tok;
  auto check = [&](const char* text, std::size_t want) {
    EXPECT_EQ(tok.count(text), want) << "text '" << text << "'";
    EXPECT_EQ(tok.encode(text).size(), want) << "text '" << text << "'";
  };
  check("", 0);
  check("Hi, world!", 5);             // "Hi" "," " worl" "d" "!"
  check("the cat sat", 3);
  check("internationalization", 5);   // 20 letters / 4
  check("a\nb", 3);
  check("a    b", 3);                 // "a" "   " " b"
  check("\xE4\xBD\xA0\xE5\xA5\xBD", 2);  // two CJK characters
  check("x = 1 + 2;", 8);
}

// Tests that encode is deterministic, seed-dependent, and keeps shared prefixes shared.
TEST(TokenizerTest, DeterministicAndPrefixStable) {
  Tokenizer a(1), b(1), c(2);
  auto x = a.encode("The quick brown fox jumps over the lazy dog.");
  EXPECT_EQ(x, b.encode("The quick brown fox jumps over the lazy dog."));
  EXPECT_NE(x, c.encode("The quick brown fox jumps over the lazy dog."));
  auto y = a.encode("The quick brown fox jumps over the lazy cat.");
  ASSERT_EQ(x.size(), y.size());
  EXPECT_TRUE(std::equal(x.begin(), x.end() - 2, y.begin()));
  for (auto id : x) {
    EXPECT_GE(id, Tokenizer::kFirstId);
    EXPECT_LT(id, Tokenizer::kVocabSize);
  }
}

// Tests that English prose comes out near 4 characters per token.
TEST(TokenizerTest, AboutFourCharactersPerToken) {
  std::string text =
      "When p99 jumps from two hundred milliseconds to five seconds, inferscope shows within "
      "minutes which stage of a request got slower: queueing, input processing, prefill, "
      "decode, post-processing, a dependency call, the gateway or the network.";
  double chars_per_token = static_cast<double>(text.size()) / Tokenizer().count(text);
  EXPECT_GT(chars_per_token, 3.0);
  EXPECT_LT(chars_per_token, 5.0);
}

// Tests that generated token texts are deterministic and each re-encodes to one token.
TEST(TextGeneratorTest, EachTokenTextIsOneToken) {
  TextGenerator gen(5);
  Tokenizer tok;
  std::string all;
  for (std::uint32_t i = 0; i < 500; ++i) {
    std::uint32_t id = output_token_id(9, i);
    std::string text = gen.token_text(id);
    EXPECT_EQ(text, TextGenerator(5).token_text(id));
    EXPECT_EQ(tok.count(text), 1u) << "text '" << text << "'";
    all += text;
  }
  EXPECT_EQ(tok.count(all), 500u);
  EXPECT_EQ(output_token_id(9, 3), output_token_id(9, 3));
  EXPECT_NE(output_token_id(9, 3), output_token_id(10, 3));
}

// Tests that natural lengths are deterministic and spread around the documented median.
TEST(TextGeneratorTest, NaturalLengthsSpreadAroundMedian) {
  std::vector<std::uint32_t> lengths;
  for (std::uint64_t seed = 0; seed < 2001; ++seed) lengths.push_back(natural_output_length(seed));
  EXPECT_EQ(natural_output_length(17), natural_output_length(17));
  std::sort(lengths.begin(), lengths.end());
  EXPECT_GT(lengths[1000], 100u);
  EXPECT_LT(lengths[1000], 160u);
  EXPECT_GE(lengths.front(), 1u);
  EXPECT_GT(lengths.back(), 600u);
}

}  // namespace
}  // namespace inferscope::serve
