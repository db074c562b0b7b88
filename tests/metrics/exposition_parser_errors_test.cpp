// Tests that malformed expositions fail with the right line, column and cause, in both formats.
#include <gtest/gtest.h>

#include <string>

#include "inferscope/metrics/exposition_parser.h"

#include "parser_formats.h"

namespace inferscope::metrics {
namespace {

using parser_test::k004;
using parser_test::kOm;

// check parses `text` and expects an error at line:column whose cause contains `cause`.
void check(ExpositionTextFormat format, std::string_view text, std::size_t line, std::size_t column,
           std::string_view cause) {
  auto parsed = parse_exposition(text, format);
  ASSERT_FALSE(parsed) << "parsed without error: " << text;
  const std::string want_prefix =
      "cannot parse exposition at line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  const std::string& got = parsed.error().message;
  EXPECT_EQ(got.substr(0, want_prefix.size()), want_prefix) << "got: " << got << "\ninput: " << text;
  EXPECT_NE(got.find(cause), std::string::npos) << "got: " << got << "\nwant cause: " << cause;
}

// Tests that 0.0.4 syntax errors (truncation, names, labels, escapes, values, timestamps, UTF-8,
// CRLF) are reported at their line and column.
TEST(ExpositionParserErrorsTest, RejectsMalformedText004) {
  check(k004, "a 1", 1, 4, "last line must end with a newline");
  check(k004, "a 1\nb{x=\"1\"", 2, 8, "unexpected end of input");
  check(k004, "a{x=\"1\n", 1, 7, "unterminated label value");
  check(k004, "a{x=\"1\\\"}\n", 1, 10, "unterminated label value");
  check(k004, "a{x=\"1\"\n", 1, 8, "unexpected end of line inside labels");
  check(k004, "a{x=\"a\\tb\"} 1\n", 1, 7, "invalid escape sequence \"\\\\t\"");
  check(k004, "a{x=\"ab\\\"} 1\n", 1, 13, "unterminated label value");
  check(k004, "a{x=\"\\u00e9\"} 1\n", 1, 6, "invalid escape sequence");
  check(k004, "a{x=1} 1\n", 1, 5, "expected '\"' to open the label value");
  check(k004, "a{x\"1\"} 1\n", 1, 4, "expected '=' after label name");
  check(k004, "a{1x=\"1\"} 1\n", 1, 3, "expected a label name");
  check(k004, "a{x=\"1\" y=\"2\"} 1\n", 1, 9, "expected ',' or '}'");
  check(k004, "a{x=\"1\",x=\"2\"} 1\n", 1, 9, "duplicate label name \"x\"");
  check(k004, "a{__name__=\"b\"} 1\n", 1, 3, "reserved");
  std::string many = "a{";
  for (int i = 0; i < 40; ++i) many.append("l").append(std::to_string(i)).append("=\"v\",");
  check(k004, many + "l7=\"w\",l3=\"w\"} 1\n", 1, 313, "duplicate label name \"l7\"");
  check(k004, "a{la.bel=\"1\"} 1\n", 1, 5, "expected '=' after label name");
  check(k004, "1a 1\n", 1, 1, "expected a metric name");
  check(k004, "a-b 1\n", 1, 2, "invalid character \"-\" in metric name");
  check(k004, "a.b 1\n", 1, 2, "invalid character \".\" in metric name");
  check(k004, "{\"a.b\"} 1\n", 1, 1, "expected a metric name");
  check(k004, "a\n", 1, 2, "expected a value");
  check(k004, "a{x=\"1\"}\n", 1, 9, "expected a value");
  check(k004, "ok 1\na 1.2.3\n", 2, 3, "invalid value \"1.2.3\"");
  check(k004, "a 0x1p-2\n", 1, 3, "invalid value");
  check(k004, "a 1_000\n", 1, 3, "invalid value");
  check(k004, "a Nan1\n", 1, 3, "invalid value");
  check(k004, "a 1e999\n", 1, 3, "invalid value");
  check(k004, "a 1 1.5\n", 1, 5, "invalid timestamp \"1.5\"");
  check(k004, "a 1 99999999999999999999\n", 1, 5, "invalid timestamp");
  check(k004, "a 1 2 3\n", 1, 7, "unexpected text after the timestamp");
  check(k004, "a 1 # {t=\"x\"} 1\n", 1, 5, "exemplars exist only in OpenMetrics");
  check(k004, "a 1\r\n", 1, 4, "carriage return");
  check(k004, "a{x=\"\xff\"} 1\n", 1, 6, "invalid UTF-8 byte \"\\xff\"");
  check(k004, "ok 1\n# HELP a caf\xc3\n", 2, 13, "invalid UTF-8");
  check(k004, "a{x=\"\xc0\xaf\"} 1\n", 1, 6, "invalid UTF-8");          // overlong '/'
  check(k004, "a{x=\"\xed\xa0\x80\"} 1\n", 1, 6, "invalid UTF-8");      // surrogate
  check(k004, "a{x=\"\xf4\x90\x80\x80\"} 1\n", 1, 6, "invalid UTF-8");  // above U+10FFFF
}

// Tests that 0.0.4 metadata errors (duplicates, TYPE after samples, unknown types, bad HELP
// escapes) are reported at their line and column.
TEST(ExpositionParserErrorsTest, RejectsBadText004Metadata) {
  check(k004, "# TYPE a counter\n# TYPE a gauge\n", 2, 3, "second TYPE line for \"a\"");
  check(k004, "# HELP a x\n# HELP a y\n", 2, 3, "second HELP line for \"a\"");
  check(k004, "a 1\n# TYPE a gauge\n", 2, 3, "TYPE line for \"a\" after its samples");
  check(k004, "# TYPE a Counter\n", 1, 10, "unknown metric type \"Counter\"");
  check(k004, "# TYPE a unknown\n", 1, 10, "unknown metric type \"unknown\"");
  check(k004, "# TYPE a info\n", 1, 10, "unknown metric type");
  check(k004, "# TYPE a\n", 1, 9, "unknown metric type \"\"");
  check(k004, "# HELP a say \\\"x\\\"\n", 1, 14, "invalid escape sequence \"\\\\\\\"\" in HELP");
  check(k004, "# HELP a trailing \\\n", 1, 19, "invalid escape sequence");
  check(k004, "# HELP\n", 1, 7, "expected a metric name after # HELP");
  check(k004, "# TYPE 9a gauge\n", 1, 8, "expected a metric name after # TYPE");
  check(k004, "# TYPE a-b gauge\n", 1, 9, "invalid character \"-\" in metric name");
}

// Tests that OpenMetrics-only errors (# EOF, blank lines, comments, spacing, family rules,
// exemplars) are reported at their line and column.
TEST(ExpositionParserErrorsTest, RejectsMalformedOpenMetrics) {
  check(kOm, "", 1, 1, "missing # EOF");
  check(kOm, "a 1\n", 2, 1, "missing # EOF");
  check(kOm, "a 1\n# EOF\nb 2\n", 3, 1, "unexpected content after # EOF");
  check(kOm, "# EOF\n\n", 2, 1, "unexpected content after # EOF");
  check(kOm, "a 1\n#EOF\n", 2, 1, "unexpected comment");
  check(kOm, "a 1", 1, 4, "must end with # EOF");
  check(kOm, "a 1\n\n# EOF\n", 2, 1, "empty line");
  check(kOm, "# a comment\n# EOF\n", 1, 1, "unexpected comment");
  check(kOm, "a  1\n# EOF\n", 1, 3, "unexpected second space");
  check(kOm, " a 1\n# EOF\n", 1, 1, "expected a metric name");
  check(kOm, "a 1 \n# EOF\n", 1, 5, "expected a timestamp or exemplar after the space");
  check(kOm, "a\t1\n# EOF\n", 1, 2, "expected a space before a value");
  check(kOm, "a{x=\"1\",} 1\n# EOF\n", 1, 9, "expected a label name after ','");
  check(kOm, "a{x = \"1\"} 1\n# EOF\n", 1, 4, "expected '=' after label name");
  check(kOm, "a{x=\"1\"}1\n# EOF\n", 1, 9, "expected a space before a value");
  check(kOm, "# TYPE a untyped\n# EOF\n", 1, 10, "unknown metric type \"untyped\"");
  check(kOm, "# TYPE a counter\na 1\n# EOF\n", 2, 1, "does not fit counter family \"a\"");
  check(kOm, "# TYPE a counter\na_total 1\nb 1\na_total{x=\"1\"} 2\n# EOF\n", 4, 1,
        "of family \"a\" after other families");
  check(kOm, "a 1\nb 1\na{x=\"1\"} 2\n# EOF\n", 3, 1, "after other families");
  check(kOm, "# TYPE a gauge\na 1\n# HELP a late\n# EOF\n", 3, 3, "# HELP for family \"a\" after its samples");
  check(kOm, "# TYPE a gauge\nb 1\n# HELP a other\n# EOF\n", 3, 8, "metadata for family \"a\" after other families");
  check(kOm, "# UNIT a_seconds seconds\n# UNIT a_seconds seconds\n# EOF\n", 2, 3, "second UNIT line");
  check(kOm, "# UNIT a_seconds bytes\n# EOF\n", 1, 18, "unit \"bytes\" is not the suffix");
  check(kOm, "# UNIT seconds seconds\n# EOF\n", 1, 16, "is not the suffix");
  check(kOm, "# HELP a \\t\n# EOF\n", 1, 10, "invalid escape sequence");
  check(kOm, "a 1 1.5e3 \n# EOF\n", 1, 11, "expected an exemplar after the space");
  check(kOm, "a 1 NaN\n# EOF\n", 1, 5, "invalid timestamp \"NaN\"");
  check(kOm, "a 1 1e20\n# EOF\n", 1, 5, "invalid timestamp");
  check(kOm, "a_total 1 # {t=\"x\"}\n# EOF\n", 1, 20, "expected a space and an exemplar value");
  check(kOm, "a_total 1 # t=\"x\" 1\n# EOF\n", 1, 13, "expected '{' to open the exemplar labels");
  check(kOm, "a_total 1 # {t=\"x\"} 1 2 3\n# EOF\n", 1, 24, "unexpected text after the exemplar");
  check(kOm, "a_total 1 #{t=\"x\"} 1\n# EOF\n", 1, 12, "expected a space before exemplar labels");
  check(kOm, "a_total 1 # {t=\"x\"} one\n# EOF\n", 1, 21, "invalid exemplar value");
  const std::string long_exemplar = "a_total 1 # {trace_id=\"" + std::string(121, 'x') + "\"} 1\n# EOF\n";
  check(kOm, long_exemplar, 1, 13, "exemplar labels have 129 code points");
}

// Tests that errors on later lines count lines correctly past comments and long bodies.
TEST(ExpositionParserErrorsTest, CountsLinesAcrossTheBody) {
  std::string body;
  for (int i = 0; i < 100; ++i) body += "# HELP m" + std::to_string(i) + " h\nm" + std::to_string(i) + " 1\n";
  check(k004, body + "m 1 x\n", 201, 5, "invalid timestamp \"x\"");
  check(kOm, body + "m{a=\"\\x\"} 1\n# EOF\n", 201, 6, "invalid escape");
}

}  // namespace
}  // namespace inferscope::metrics
