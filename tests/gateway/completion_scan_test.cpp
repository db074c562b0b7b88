// Tests of scan_completion: the fields the gateway reads from real chunk and body shapes, inputs
// built to fool a scanner that looks for keys in the text (escaped quotes, keys inside strings and
// nested objects, duplicate keys, escaped key names), and the documents it must reject exactly
// as a JSON parser does.
#include "gateway/completion_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace inferscope::gateway {
namespace {

std::string finish_reason_of(const CompletionScan& s) {
  std::string out;
  if (s.finish_reason_seen) assign_json_string(s.finish_reason, s.finish_reason_escaped, out);
  return out;
}

// Tests that a vLLM content chunk, role chunk, finish chunk and usage-only chunk read as such.
TEST(CompletionScanTest, VllmChunkShapes) {
  const CompletionScan content = scan_completion(
      R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]})",
      CompletionShape::kChunk);
  EXPECT_TRUE(content.valid);
  EXPECT_TRUE(content.content);
  EXPECT_FALSE(content.finish_reason_seen);  // null is not a reason
  EXPECT_FALSE(content.usage);

  const CompletionScan role = scan_completion(
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})", CompletionShape::kChunk);
  EXPECT_TRUE(role.valid);
  EXPECT_FALSE(role.content);

  const CompletionScan finish =
      scan_completion(R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})", CompletionShape::kChunk);
  EXPECT_FALSE(finish.content);
  EXPECT_EQ(finish_reason_of(finish), "length");

  const CompletionScan usage = scan_completion(
      R"({"id":"c","choices":[],"usage":{"prompt_tokens":12,"total_tokens":20,"completion_tokens":8}})", CompletionShape::kChunk);
  EXPECT_TRUE(usage.valid);
  EXPECT_TRUE(usage.usage);
  EXPECT_TRUE(usage.choices);
  EXPECT_TRUE(usage.choices_empty);
  EXPECT_EQ(usage.prompt_tokens.value_or(0), 12u);
  EXPECT_EQ(usage.completion_tokens.value_or(0), 8u);
}

// Tests each kind of content a chunk's delta can carry, and the legacy "text".
TEST(CompletionScanTest, ChunkContentKinds) {
  const auto check = [](const std::string& json, bool want) {
    const CompletionScan s = scan_completion(json, CompletionShape::kChunk);
    EXPECT_TRUE(s.valid) << json;
    EXPECT_EQ(s.content, want) << json;
  };
  check(R"({"choices":[{"delta":{"reasoning_content":"think"}}]})", true);
  check(R"({"choices":[{"delta":{"reasoning":"think"}}]})", true);
  check(R"({"choices":[{"delta":{"tool_calls":[{"index":0}]}}]})", true);
  check(R"({"choices":[{"delta":{"tool_calls":[ ]}}]})", false);
  check(R"({"choices":[{"text":"a"}]})", true);
  check(R"({"choices":[{"text":""}]})", false);
  check(R"({"choices":[{"message":{"content":"whole-body key in a chunk"}}]})", false);
  check(R"({"choices":[{"delta":{"content":null}},{"delta":{"content":"second choice"}}]})", true);
  check(R"({"choices":[{"delta":"not an object"}]})", false);
  check(R"({"choices":[7,"x",null,{"delta":{"content":"a"}}]})", true);
}

// Tests a whole response: message content or tool calls count, a delta does not.
TEST(CompletionScanTest, WholeBodyShape) {
  const CompletionScan s = scan_completion(
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7}})",
      CompletionShape::kWhole);
  EXPECT_TRUE(s.valid);
  EXPECT_TRUE(s.content);
  EXPECT_EQ(s.prompt_tokens.value_or(0), 5u);
  EXPECT_EQ(s.completion_tokens.value_or(0), 7u);
  EXPECT_EQ(finish_reason_of(s), "stop");
  EXPECT_TRUE(scan_completion(R"({"choices":[{"message":{"tool_calls":[{"id":"1"}]}}]})", CompletionShape::kWhole).content);
  EXPECT_FALSE(scan_completion(R"({"choices":[{"message":{"reasoning_content":"r"}}]})", CompletionShape::kWhole).content);
  EXPECT_FALSE(scan_completion(R"({"choices":[{"delta":{"content":"d"}}]})", CompletionShape::kWhole).content);
}

// Tests that quotes, braces and key names inside strings are text, not structure.
TEST(CompletionScanTest, EscapedQuotesAndKeysInsideStringsAreText) {
  // The content is: "},"finish_reason":"stop"}   — a naive key search would find a reason.
  const CompletionScan s = scan_completion(
      R"({"choices":[{"delta":{"content":"\"},\"finish_reason\":\"stop\"}"}}]})", CompletionShape::kChunk);
  EXPECT_TRUE(s.valid);
  EXPECT_TRUE(s.content);
  EXPECT_FALSE(s.finish_reason_seen);
  // A backslash at the end of a string does not escape its closing quote.
  const CompletionScan t = scan_completion(R"({"choices":[{"delta":{"content":"a\\"},"finish_reason":"stop"}]})",
                                           CompletionShape::kChunk);
  EXPECT_TRUE(t.valid);
  EXPECT_EQ(finish_reason_of(t), "stop");
  // "usage" and "error" nested below the root are not the root's.
  const CompletionScan nested = scan_completion(
      R"({"meta":{"usage":{"prompt_tokens":1},"error":"x"},"choices":[{"delta":{"usage":{"completion_tokens":2}}}]})",
      CompletionShape::kChunk);
  EXPECT_TRUE(nested.valid);
  EXPECT_FALSE(nested.usage);
  EXPECT_FALSE(nested.error);
  EXPECT_FALSE(nested.prompt_tokens.has_value());
  EXPECT_FALSE(nested.completion_tokens.has_value());
}

// Tests content written only as unicode escapes, escaped key names and escaped reasons.
TEST(CompletionScanTest, UnicodeEscapes) {
  const CompletionScan s = scan_completion(
      R"({"choices":[{"delta":{"content":"\u00e9\ud83d\ude00"},"finish_reason":"\u0073top"}]})", CompletionShape::kChunk);
  EXPECT_TRUE(s.valid);
  EXPECT_TRUE(s.content);
  EXPECT_TRUE(s.finish_reason_escaped);
  EXPECT_EQ(finish_reason_of(s), "stop");
  const CompletionScan keys = scan_completion(R"({"cho\u0069ces":[{"d\u0065lta":{"con\u0074ent":"\u0000"}}]})",
                                              CompletionShape::kChunk);
  EXPECT_TRUE(keys.content);  // "\u0000" decodes to one character: not empty
  std::string decoded;
  assign_json_string(R"(\"a\\\/\b\f\n\r\t\u00e9\ud83d\ude00)", true, decoded);
  EXPECT_EQ(decoded, "\"a\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
}

// Tests that the first of duplicate keys wins, as with a JSON parser's lookup by key.
TEST(CompletionScanTest, FirstDuplicateKeyWins) {
  const CompletionScan s = scan_completion(
      R"({"usage":5,"usage":{"prompt_tokens":1},"choices":[{"finish_reason":"stop","finish_reason":"length","delta":[],"delta":{"content":"a"}}]})",
      CompletionShape::kChunk);
  EXPECT_TRUE(s.valid);
  EXPECT_FALSE(s.usage);
  EXPECT_EQ(finish_reason_of(s), "stop");
  EXPECT_FALSE(s.content);
}

// Tests which token counts are read: non-negative integers only.
TEST(CompletionScanTest, TokenCounts) {
  const auto prompt = [](const std::string& value) {
    return scan_completion(R"({"usage":{"prompt_tokens":)" + value + "}}", CompletionShape::kChunk).prompt_tokens;
  };
  EXPECT_EQ(prompt("0"), 0u);
  EXPECT_EQ(prompt("-0"), 0u);
  EXPECT_EQ(prompt("18446744073709551615"), 18446744073709551615u);
  EXPECT_FALSE(prompt("-1").has_value());
  EXPECT_FALSE(prompt("5.0").has_value());
  EXPECT_FALSE(prompt("1e2").has_value());
  EXPECT_FALSE(prompt("\"5\"").has_value());
  EXPECT_FALSE(prompt("null").has_value());
}

// Tests llama.cpp's timings: numbers of any JSON form for the milliseconds, non-negative integers
// for the counts, anything else left out; a non-object "timings" is not timings.
TEST(CompletionScanTest, LlamaCppTimings) {
  const CompletionScan s = scan_completion(
      R"({"choices":[],"timings":{"prompt_n":71,"prompt_ms":1.369,"prompt_per_token_ms":0.019,"predicted_n":64,"predicted_ms":13}})",
      CompletionShape::kChunk);
  ASSERT_TRUE(s.valid);
  ASSERT_TRUE(s.timings);
  EXPECT_DOUBLE_EQ(s.engine_timings.prompt_ms.value_or(-1), 1.369);
  EXPECT_DOUBLE_EQ(s.engine_timings.predicted_ms.value_or(-1), 13);
  EXPECT_EQ(s.engine_timings.prompt_n.value_or(0), 71u);
  EXPECT_EQ(s.engine_timings.predicted_n.value_or(0), 64u);
  const CompletionScan odd = scan_completion(R"({"timings":{"prompt_ms":"1","predicted_ms":2.5e1,"prompt_n":-1,"predicted_n":1.5}})",
                                             CompletionShape::kWhole);
  ASSERT_TRUE(odd.timings);
  EXPECT_FALSE(odd.engine_timings.prompt_ms.has_value());
  EXPECT_DOUBLE_EQ(odd.engine_timings.predicted_ms.value_or(-1), 25);
  EXPECT_FALSE(odd.engine_timings.prompt_n.has_value());
  EXPECT_FALSE(odd.engine_timings.predicted_n.has_value());
  EXPECT_FALSE(scan_completion(R"({"timings":[1,2]})", CompletionShape::kChunk).timings);
  EXPECT_FALSE(scan_completion(R"({"timings":{"prompt_ms":1.}})", CompletionShape::kChunk).valid);
}

// Tests that what a JSON parser rejects is rejected, and what it accepts is accepted.
TEST(CompletionScanTest, ValidityMatchesJson) {
  const auto check = [](const std::string& json, bool want) {
    EXPECT_EQ(scan_completion(json, CompletionShape::kChunk).valid, want) << json;
  };
  check("{}", true);
  check(" \t\r\n{ } \n", true);
  check(R"({"a":[1,-2.5e-3,true,false,null,"x",{"b":[]}]})", true);
  check(R"({"a":1e-400})", true);                  // underflows to 0: fine
  check(R"({"a":-9223372036854775808})", true);
  check(R"({"a":"\u0000\u00ff"})", true);
  check("", false);
  check("[DONE]", false);
  check("[]", false);                               // valid JSON, but not an object
  check("5", false);
  check(R"({"a":1}x)", false);
  check(std::string("{\"a\":1}\0", 8), false);
  check(R"({"a":1,})", false);
  check(R"({"a" 1})", false);
  check(R"({'a':1})", false);
  check(R"({"a":01})", false);
  check(R"({"a":1.})", false);
  check(R"({"a":-})", false);
  check(R"({"a":1e})", false);
  check(R"({"a":+1})", false);
  check(R"({"a":18446744073709551616})", false);   // beyond 64 bits
  check(R"({"a":-9223372036854775809})", false);
  check(R"({"a":1e400})", false);                   // overflows a double
  check(R"({"a":tru})", false);
  check(R"({"a":"\x"})", false);
  check(R"({"a":"\u12G4"})", false);
  check(R"({"a":"\ud800"})", false);                // a high surrogate alone
  check(R"({"a":"\ud800\u0041"})", false);
  check(R"({"a":"\udc00"})", false);                // a low surrogate alone
  check("{\"a\":\"\x01\"}", false);                // a raw control character
  check("{\"a\":\"\xC3\xA9\"}", true);
  check("{\"a\":\"\xC0\x80\"}", false);            // an overlong encoding
  check("{\"a\":\"\xED\xA0\x80\"}", false);        // an encoded surrogate
  check("{\"a\":\"\xF4\x90\x80\x80\"}", false);    // above U+10FFFF
  check("{\"a\":\"\xC3\"}", false);                // cut short
  check(R"({"a":"unterminated})", false);
  check(R"({"a":[1,2)", false);
  check(R"({"choices":[{"delta":{"content":"x"})", false);
}

// Tests the nesting limit: 1024 levels parse, 1025 do not (and deep input does not overflow).
TEST(CompletionScanTest, NestingLimit) {
  const auto nested = [](int arrays) {
    return "{\"a\":" + std::string(static_cast<std::size_t>(arrays), '[') + std::string(static_cast<std::size_t>(arrays), ']') +
           "}";
  };
  EXPECT_TRUE(scan_completion(nested(1023), CompletionShape::kChunk).valid);
  EXPECT_FALSE(scan_completion(nested(1024), CompletionShape::kChunk).valid);
  EXPECT_FALSE(scan_completion("{\"a\":" + std::string(100000, '['), CompletionShape::kChunk).valid);
}

// Tests that an error member counts unless it is null.
TEST(CompletionScanTest, ErrorMember) {
  EXPECT_TRUE(scan_completion(R"({"error":{"message":"boom"}})", CompletionShape::kChunk).error);
  EXPECT_TRUE(scan_completion(R"({"error":"boom"})", CompletionShape::kChunk).error);
  EXPECT_FALSE(scan_completion(R"({"error":null,"choices":[]})", CompletionShape::kChunk).error);
}

}  // namespace
}  // namespace inferscope::gateway
