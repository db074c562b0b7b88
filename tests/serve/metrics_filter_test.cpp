// Tests of drop_metric_families (serve's hide_metrics fault).
#include "serve/metrics_filter.h"

#include <gtest/gtest.h>

namespace inferscope::serve {
namespace {

// Tests that a histogram family and a counter family go whole, while families sharing a prefix stay.
TEST(MetricsFilterTest, DropsWholeFamiliesOnly) {
  const std::string text =
      "# HELP a_seconds A.\n# TYPE a_seconds histogram\n"
      "a_seconds_bucket{le=\"1\"} 1\na_seconds_bucket{le=\"+Inf\"} 2\na_seconds_sum 3\na_seconds_count 2\n"
      "# HELP a_seconds_total_x Other.\n# TYPE a_seconds_total_x counter\na_seconds_total_x 5\n"
      "# HELP r Requests.\n# TYPE r counter\nr_total{m=\"x\"} 7\nr_created 1\n"
      "# HELP g G.\n# TYPE g gauge\ng 1\n# EOF\n";
  EXPECT_EQ(drop_metric_families(text, {"a_seconds", "r"}),
            "# HELP a_seconds_total_x Other.\n# TYPE a_seconds_total_x counter\na_seconds_total_x 5\n"
            "# HELP g G.\n# TYPE g gauge\ng 1\n# EOF\n");
  EXPECT_EQ(drop_metric_families(text, {}), text);
  EXPECT_EQ(drop_metric_families("g 1", {"g"}), "");
}

}  // namespace
}  // namespace inferscope::serve
