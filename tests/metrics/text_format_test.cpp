// Tests for src/metrics/detail/text_format.h: float formatting, escaping, UTF-8 and names.
#include "metrics/detail/text_format.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace inferscope::metrics::detail {
namespace {

std::string dbl(double v) {
  std::string out;
  append_double(out, v);
  return out;
}
std::string go(double v, bool dot_zero) {
  std::string out;
  append_go_float(out, v, dot_zero);
  return out;
}

// Tests shortest round-trip formatting and the Prometheus spellings of special values.
TEST(TextFormatTest, DoublesAreShortestRoundTrip) {
  const auto check = [](double v, const std::string& want) { EXPECT_EQ(dbl(v), want) << "value " << v; };
  check(0.1 + 0.2, "0.30000000000000004");
  check(1e300, "1e+300");
  check(-0.0, "-0");
  check(0.0, "0");
  check(1.0, "1");
  check(5e-324, "5e-324");                  // smallest subnormal
  check(2.2250738585072014e-308, "2.2250738585072014e-308");
  check(123456789.0, "123456789");
  check(std::numeric_limits<double>::infinity(), "+Inf");
  check(-std::numeric_limits<double>::infinity(), "-Inf");
  check(std::nan(""), "NaN");
  check(-std::nan(""), "NaN");
}

// Tests that every formatted double parses back to the same bits.
TEST(TextFormatTest, DoublesRoundTrip) {
  for (double v : {0.1 + 0.2, 1e300, 4.9e-324, 1.7976931348623157e308, 1.0 / 3.0, 2.5e-7, 123.456}) {
    const std::string s = dbl(v);
    double back = 0;
    std::from_chars(s.data(), s.data() + s.size(), back);
    EXPECT_EQ(back, v) << s;
  }
}

// Tests Go %g style le formatting, with and without the OpenMetrics/Python ".0".
TEST(TextFormatTest, GoStyleLe) {
  const auto check = [](double v, const std::string& plain, const std::string& dotted) {
    EXPECT_EQ(go(v, false), plain) << v;
    EXPECT_EQ(go(v, true), dotted) << v;
  };
  check(1, "1", "1.0");
  check(0, "0", "0.0");
  check(0.005, "0.005", "0.005");
  check(2.5, "2.5", "2.5");
  check(100000, "100000", "100000.0");
  check(1e6, "1e+06", "1e+06");
  check(2.5e6, "2.5e+06", "2.5e+06");
  check(0.0001, "0.0001", "0.0001");
  check(0.00001, "1e-05", "1e-05");
  check(INFINITY, "+Inf", "+Inf");
}

// Tests label-value and HELP escaping rules of both formats.
TEST(TextFormatTest, Escaping) {
  std::string label;
  append_escaped_label_value(label, "a\\b\"c\nd\te");
  EXPECT_EQ(label, "a\\\\b\\\"c\\nd\te");
  std::string help004;
  append_escaped_help(help004, "a\\b\"c\nd", false);
  EXPECT_EQ(help004, "a\\\\b\"c\\nd");
  std::string help_om;
  append_escaped_help(help_om, "a\\b\"c\nd", true);
  EXPECT_EQ(help_om, "a\\\\b\\\"c\\nd");
}

// Tests UTF-8 validation on valid and malformed sequences.
TEST(TextFormatTest, Utf8Validation) {
  const auto check = [](std::string_view s, bool want) { EXPECT_EQ(is_valid_utf8(s), want) << s; };
  check("", true);
  check("plain ascii", true);
  check("caf\xc3\xa9", true);
  check("\xe2\x82\xac", true);           // euro sign
  check("\xf0\x9f\x9a\x80", true);       // U+1F680
  check("\xf4\x8f\xbf\xbf", true);       // U+10FFFF
  check("\xf4\x90\x80\x80", false);      // above U+10FFFF
  check("\xc0\x80", false);              // overlong NUL
  check("\xe0\x80\xaf", false);          // overlong
  check("\xed\xa0\x80", false);          // surrogate
  check("\x80", false);                  // stray continuation
  check("\xc3", false);                  // truncated
  check("\xf8\x88\x80\x80\x80", false);  // 5-byte form
}

// Tests metric and label name validation.
TEST(TextFormatTest, Names) {
  EXPECT_TRUE(is_valid_metric_name("a:b_c9"));
  EXPECT_TRUE(is_valid_metric_name(":x"));
  EXPECT_FALSE(is_valid_metric_name("9a"));
  EXPECT_FALSE(is_valid_metric_name("a.b"));
  EXPECT_TRUE(is_valid_label_name("_a9"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
  EXPECT_FALSE(is_valid_label_name("__name"));
  EXPECT_FALSE(is_valid_label_name(""));
}

}  // namespace
}  // namespace inferscope::metrics::detail
