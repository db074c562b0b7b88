// Tests of the server stage table of `bench --server-metrics`: parsing the stage histogram from an
// exposition, the rows in request order with unknown stages last, means per request that add up
// to e2e, and nothing printed when no request ended between the scrapes.
#include "bench/server_stages.h"

#include <gtest/gtest.h>

#include <string>

namespace inferscope::bench {
namespace {

std::string stage_exposition(double route_sum, double kv_sum, double decode_sum, double count, double e2e_sum) {
  const auto stage = [&](const char* name, double sum) {
    return "inferscope_stage_duration_seconds_sum{model=\"m\",stage=\"" + std::string(name) + "\"} " +
           std::to_string(sum) + "\ninferscope_stage_duration_seconds_count{model=\"m\",stage=\"" + name + "\"} " +
           std::to_string(count) + "\n";
  };
  return "# TYPE inferscope_stage_duration_seconds histogram\n" + stage("decode", decode_sum) +
         stage("route", route_sum) + stage("kv_transfer", kv_sum) + stage("zz_new", 0) +
         "# TYPE inferscope_request_duration_seconds histogram\n"
         "inferscope_request_duration_seconds_sum{model=\"m\",route=\"/v1/completions\",status_class=\"2xx\"} " +
         std::to_string(e2e_sum) +
         "\ninferscope_request_duration_seconds_count{model=\"m\",route=\"/v1/completions\",status_class=\"2xx\"} " +
         std::to_string(count) + "\n";
}

// Tests the table between two scrapes: 4 requests with route 2 ms, kv_transfer 8 ms, decode 90 ms
// each (e2e 100 ms): rows in request order, the means, their shares and their sum.
TEST(ServerStagesTest, RowsInRequestOrderAddUpToE2e) {
  auto before = parse_server_stages(stage_exposition(0.010, 0.020, 0.5, 5, 0.53), "");
  auto after = parse_server_stages(stage_exposition(0.018, 0.052, 0.86, 9, 0.93), "text/plain; version=0.0.4");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(after->stages.at("route").second, 9);
  EXPECT_DOUBLE_EQ(after->e2e_count, 9);
  const std::string table = format_server_stages(*before, *after);
  const auto route = table.find("\nroute"), kv = table.find("\nkv_transfer"), decode = table.find("\ndecode");
  ASSERT_NE(route, std::string::npos) << table;
  EXPECT_LT(route, kv);
  EXPECT_LT(kv, decode);
  EXPECT_NE(table.find("2.000"), std::string::npos) << table;
  EXPECT_NE(table.find("8.000"), std::string::npos) << table;
  EXPECT_NE(table.find("90.000"), std::string::npos) << table;
  EXPECT_NE(table.find("90.0%"), std::string::npos) << table;
  const auto line_of = [&table](const std::string& start) {
    const std::size_t at = table.find("\n" + start);
    return at == std::string::npos ? std::string() : table.substr(at + 1, table.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of("Sum of stages").find(" 100.000"), std::string::npos) << table;
  EXPECT_NE(line_of("Server e2e (mean)").find(" 100.000  (4 requests)"), std::string::npos) << table;
  EXPECT_GT(table.find("\nzz_new"), decode) << table;  // a stage this bench does not know: after the known ones
}

// Tests that nothing is printed without a request between the scrapes, and a bad exposition fails.
TEST(ServerStagesTest, NoRequestsNoTableAndBadTextFails) {
  auto same = parse_server_stages(stage_exposition(0.01, 0.02, 0.5, 5, 0.53), "");
  ASSERT_TRUE(same);
  EXPECT_EQ(format_server_stages(*same, *same), "");
  auto bad = parse_server_stages("not an exposition {", "");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--server-metrics"), std::string::npos);
  auto html = parse_server_stages("<html></html>", "text/html");
  EXPECT_FALSE(html);
}

}  // namespace
}  // namespace inferscope::bench
