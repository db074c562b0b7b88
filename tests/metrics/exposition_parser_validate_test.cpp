// Tests of validate_exposition: the strict checks promtool 2.42 does not make.
#include <gtest/gtest.h>

#include <string>

#include "inferscope/metrics/exposition_parser.h"

#include "parser_formats.h"

namespace inferscope::metrics {
namespace {

using parser_test::k004;
using parser_test::kOm;

// invalid parses `text` (which must parse) and expects the validator to fail at `line` with `cause`.
void invalid(ExpositionTextFormat format, std::string_view text, std::size_t line, std::string_view cause) {
  auto parsed = parse_exposition(text, format);
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto checked = validate_exposition(*parsed);
  ASSERT_FALSE(checked) << "validated: " << text;
  const std::string want_prefix = "cannot validate exposition at line " + std::to_string(line) + ": ";
  const std::string& got = checked.error().message;
  EXPECT_EQ(got.substr(0, want_prefix.size()), want_prefix) << "got: " << got;
  EXPECT_NE(got.find(cause), std::string::npos) << "got: " << got << "\nwant cause: " << cause;
}

void valid(ExpositionTextFormat format, std::string_view text) {
  auto parsed = parse_exposition(text, format);
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto checked = validate_exposition(*parsed);
  EXPECT_TRUE(checked) << checked.error().message << "\ninput: " << text;
}

constexpr std::string_view kGoodHistogram =
    "# TYPE h histogram\n"
    "h_bucket{a=\"1\",le=\"0.1\"} 1\nh_bucket{a=\"1\",le=\"1\"} 3\nh_bucket{a=\"1\",le=\"+Inf\"} 3\n"
    "h_sum{a=\"1\"} 1.5\nh_count{a=\"1\"} 3\n"
    "h_bucket{a=\"2\",le=\"0.1\"} 0\nh_bucket{a=\"2\",le=\"1\"} 0\nh_bucket{a=\"2\",le=\"+Inf\"} 0\n"
    "h_sum{a=\"2\"} 0\nh_count{a=\"2\"} 0\n";

// Tests that well-formed histograms, summaries, counters and gauges pass in both formats.
TEST(ExpositionParserValidateTest, AcceptsWellFormedExpositions) {
  valid(k004, kGoodHistogram);
  valid(k004, "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns{quantile=\"0.99\"} NaN\ns_sum 3\ns_count 2\n");
  valid(k004, "# TYPE c counter\nc{x=\"1\"} 0\nc{x=\"2\"} +Inf\n# TYPE g gauge\ng -5\ng{x=\"1\"} NaN\n");
  valid(kOm, "# TYPE h histogram\nh_bucket{le=\"1.0\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_created 1.7e9\n# EOF\n");
  valid(kOm, "# TYPE c counter\nc_total 1\nc_created 1.7e9\n# EOF\n");
}

// Tests that histogram bucket rules hold: +Inf present, increasing le, cumulative integers,
// _count == +Inf.
TEST(ExpositionParserValidateTest, RejectsBrokenHistograms) {
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n", 2, "no le=\"+Inf\" bucket");
  invalid(k004, "# TYPE h histogram\nh_sum 1\nh_count 1\n", 2, "no le=\"+Inf\" bucket");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n", 3,
          "lower than the previous bucket");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 1\n", 3,
          "does not increase");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"1.0\"} 1\nh_bucket{le=\"+Inf\"} 1\n", 3,
          "does not increase");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_bucket{le=\"2\"} 1\n", 3, "after the +Inf bucket");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_count 4\n", 3, "differs from the +Inf bucket");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1.5\n", 2, "not a non-negative integer");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} NaN\n", 2, "not a non-negative integer");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count -1\n", 3, "not a non-negative integer");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"fast\"} 1\n", 2, "le=\"fast\" is not a number");
  invalid(k004, "# TYPE h histogram\nh_bucket 1\n", 2, "without an le label");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count{le=\"+Inf\"} 1\n", 3, "not a _bucket sample");
  invalid(k004, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum NaN\nh_count 1\n", 3, "sum \"h_sum\" is NaN");
  invalid(k004, "# TYPE h histogram\nh 1\n", 2, "does not fit histogram family");
  invalid(kOm, "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\n# EOF\n", 3, "a sum but no count");
  // Only the second series is broken; the first series' buckets must not leak into it.
  std::string two(kGoodHistogram);
  two.replace(two.find("h_count{a=\"2\"} 0"), 16, "h_count{a=\"2\"} 1");
  invalid(k004, two, 11, "differs from the +Inf bucket");
}

// Tests that summary rules hold: quantile only on quantile samples, numeric, in [0, 1], increasing.
TEST(ExpositionParserValidateTest, RejectsBrokenSummaries) {
  invalid(k004, "# TYPE s summary\ns 1\n", 2, "without a quantile label");
  invalid(k004, "# TYPE s summary\ns{quantile=\"1.5\"} 1\n", 2, "not a number in [0, 1]");
  invalid(k004, "# TYPE s summary\ns{quantile=\"high\"} 1\n", 2, "not a number in [0, 1]");
  invalid(k004, "# TYPE s summary\ns{quantile=\"0.9\"} 1\ns{quantile=\"0.5\"} 1\n", 3, "does not increase");
  invalid(k004, "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum{quantile=\"0.5\"} 1\n", 3, "not a quantile sample");
}

// Tests that label placement, duplicate series, counters, contiguity, info and stateset values
// are checked.
TEST(ExpositionParserValidateTest, RejectsMisplacedLabelsAndBadValues) {
  invalid(k004, "# TYPE g gauge\ng{le=\"1\"} 1\n", 2, "label le on \"g\" of a non-histogram family");
  invalid(k004, "x_bucket{le=\"1\"} 1\n", 1, "non-histogram family");
  invalid(k004, "# TYPE c counter\nc{quantile=\"0.5\"} 1\n", 2, "label quantile on \"c\" of a non-summary family");
  invalid(k004, "# TYPE c counter\nc -1\n", 2, "counter \"c\" is negative or NaN");
  invalid(k004, "# TYPE c counter\nc NaN\n", 2, "negative or NaN");
  invalid(kOm, "# TYPE c counter\nc_total NaN\n# EOF\n", 2, "negative or NaN");
  invalid(k004, "g{a=\"1\",b=\"2\"} 1\ng{b=\"2\",a=\"1\"} 2\n", 2, "duplicate series \"g\"");
  invalid(k004, "g 1\ng 2\n", 2, "duplicate series");
  invalid(k004, "a 1\nb 1\na{x=\"1\"} 1\n", 1, "family \"a\" is split by other families");
  invalid(kOm, "# TYPE i info\ni_info{v=\"1\"} 2\n# EOF\n", 2, "info sample \"i_info\" is not 1");
  invalid(kOm, "# TYPE s stateset\ns{s=\"a\"} 0.5\n# EOF\n", 2, "is not 0 or 1");
  invalid(kOm, "# TYPE s stateset\ns{t=\"a\"} 1\n# EOF\n", 2, "without a label named \"s\"");
  // Label values holding separators must not make distinct series collide.
  valid(k004, "g{a=\"1:2\",b=\"3\"} 1\ng{a=\"1\",b=\"2:3\"} 1\ng{a=\"\"} 1\ng 1\n");
}

}  // namespace
}  // namespace inferscope::metrics
