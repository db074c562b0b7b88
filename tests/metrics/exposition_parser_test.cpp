// Tests of parse_exposition on real captures (tests/metrics/testdata, copies of shared/samples),
// a hand-written OpenMetrics exposition, escapes, numbers, lookups and Content-Type detection.
#include "inferscope/metrics/exposition_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "parser_formats.h"

namespace inferscope::metrics {
namespace {

using parser_test::k004;
using parser_test::kOm;

std::string read_testdata(const std::string& name) {
  const std::string path = std::string(INFERSCOPE_SOURCE_DIR) + "/tests/metrics/testdata/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream body;
  body << in.rdbuf();
  return body.str();
}

std::size_t sample_count(const ParsedExposition& exposition) {
  std::size_t n = 0;
  for (const ParsedFamily& family : exposition.families) n += family.samples.size();
  return n;
}

std::size_t family_count(const ParsedExposition& exposition, ParsedMetricType type) {
  std::size_t n = 0;
  for (const ParsedFamily& family : exposition.families) n += family.type == type;
  return n;
}

// Tests that llama.cpp's /metrics parses into 12 unlabelled families with their exact values.
TEST(ExpositionParserTest, ParsesLlamaCppCapture) {
  auto parsed = parse_exposition(read_testdata("llamacpp-b4748-metrics.txt"), k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->families.size(), 12u);
  EXPECT_EQ(sample_count(*parsed), 12u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kCounter), 6u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kGauge), 6u);
  const ParsedFamily* family = find_family(*parsed, "llamacpp:prompt_tokens_total");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->type, ParsedMetricType::kCounter);
  EXPECT_EQ(family->help, "Number of prompt tokens processed.");
  EXPECT_EQ(family->line, 1u);
  ASSERT_EQ(family->samples.size(), 1u);
  EXPECT_EQ(family->samples[0].line, 3u);
  EXPECT_EQ(value_of(*parsed, "llamacpp:prompt_tokens_total"), 129);
  EXPECT_EQ(value_of(*parsed, "llamacpp:n_busy_slots_per_decode"), 1.34286);
  EXPECT_EQ(value_of(*parsed, "llamacpp:kv_cache_usage_ratio"), 0.0737305);
  EXPECT_EQ(value_of(*parsed, "llamacpp:requests_deferred"), 0);
  EXPECT_FALSE(value_of(*parsed, "llamacpp:no_such_metric"));
  EXPECT_TRUE(validate_exposition(*parsed));
}

// Tests that node-exporter's capture parses with its types, labels and untyped families.
TEST(ExpositionParserTest, ParsesNodeExporterCapture) {
  auto parsed = parse_exposition(read_testdata("node-exporter-1.5-metrics.txt"), k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->families.size(), 283u);
  EXPECT_EQ(sample_count(*parsed), 495u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kCounter), 60u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kGauge), 175u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kSummary), 1u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kUnknown), 47u);
  EXPECT_EQ(value_of(*parsed, "node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "idle"}}), 2008.4);
  EXPECT_EQ(value_of(*parsed, "node_cpu_seconds_total", {{"mode", "iowait"}, {"cpu", "0"}}), 2.54);
  EXPECT_EQ(find_samples(*parsed, "node_cpu_seconds_total").size(), 16u);
  EXPECT_EQ(value_of(*parsed, "node_network_receive_bytes_total", {{"device", "eth0"}}), 5.7878038e+07);
  EXPECT_EQ(value_of(*parsed, "node_netstat_Icmp6_InErrors"), 1);
  EXPECT_EQ(find_family(*parsed, "node_netstat_Icmp6_InErrors")->type, ParsedMetricType::kUnknown);
  const ParsedFamily* gc = find_family(*parsed, "go_gc_duration_seconds");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ(gc->type, ParsedMetricType::kSummary);
  ASSERT_EQ(gc->samples.size(), 7u);  // 5 quantiles, _sum, _count joined to the family
  EXPECT_EQ(gc->samples[5].name, "go_gc_duration_seconds_sum");
  EXPECT_EQ(gc->samples[6].name, "go_gc_duration_seconds_count");
  const ParsedSample* disk = find_sample(*parsed, "node_disk_info", {{"device", "vda"}});
  ASSERT_NE(disk, nullptr);
  ASSERT_EQ(disk->labels.size(), 8u);
  EXPECT_EQ(disk->labels[1], (ParsedLabel{"major", "254"}));
  EXPECT_EQ(label_value(*disk, "model"), "");
  EXPECT_FALSE(label_value(*disk, "nope"));
  EXPECT_TRUE(validate_exposition(*parsed));
}

// Tests that Prometheus 2.42's capture parses, histograms keep their buckets and NaN survives.
TEST(ExpositionParserTest, ParsesPrometheusCapture) {
  auto parsed = parse_exposition(read_testdata("prometheus-2.42-metrics.txt"), k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->families.size(), 153u);
  EXPECT_EQ(sample_count(*parsed), 273u + 0u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kHistogram), 5u);
  EXPECT_EQ(family_count(*parsed, ParsedMetricType::kSummary), 8u);
  const ParsedFamily* range = find_family(*parsed, "prometheus_tsdb_compaction_chunk_range_seconds");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->type, ParsedMetricType::kHistogram);
  ASSERT_EQ(range->samples.size(), 13u);
  EXPECT_EQ(label_value(range->samples[7], "le"), "1.6384e+06");
  EXPECT_EQ(label_value(range->samples[10], "le"), "+Inf");
  EXPECT_EQ(range->samples[12].name, "prometheus_tsdb_compaction_chunk_range_seconds_count");
  const auto nan = value_of(*parsed, "prometheus_engine_query_duration_seconds", {{"slice", "inner_eval"}, {"quantile", "0.9"}});
  ASSERT_TRUE(nan);
  EXPECT_TRUE(std::isnan(*nan));
  EXPECT_EQ(label_value(*find_sample(*parsed, "prometheus_build_info"), "revision"), "2.42.0+ds-5+deb12u1");
  EXPECT_TRUE(validate_exposition(*parsed));
}

// Tests that the "openmetrics" capture, which Prometheus 2.42 actually answered in text 0.0.4
// (no # EOF, counters typed by their _total name), parses as 0.0.4 and is rejected as OpenMetrics.
TEST(ExpositionParserTest, PrometheusOpenMetricsCaptureIsReallyText004) {
  const std::string body = read_testdata("prometheus-2.42-metrics.openmetrics.txt");
  auto as_text = parse_exposition(body, k004);
  ASSERT_TRUE(as_text) << as_text.error().message;
  EXPECT_EQ(as_text->families.size(), 156u);
  EXPECT_EQ(value_of(*as_text, "prometheus_http_request_duration_seconds_bucket", {{"handler", "/metrics"}, {"le", "0.1"}}), 1);
  EXPECT_EQ(value_of(*as_text, "prometheus_http_request_duration_seconds_sum", {{"handler", "/metrics"}}), 0.000981339);
  EXPECT_TRUE(validate_exposition(*as_text));
  auto as_om = parse_exposition(body, kOm);
  ASSERT_FALSE(as_om);
  EXPECT_EQ(as_om.error().message,
            "cannot parse exposition at line 21, column 1: sample name \"go_memstats_alloc_bytes_total\" does not fit "
            "counter family \"go_memstats_alloc_bytes_total\"");
}

// Tests that the hand-written OpenMetrics file parses: family names, every type, units, exemplars, timestamps
// converted from seconds to milliseconds, and HELP/label escapes.
TEST(ExpositionParserTest, ParsesOpenMetricsFamiliesAndExemplars) {
  auto parsed = parse_exposition(read_testdata("openmetrics-handwritten.txt"), kOm);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->format, kOm);
  ASSERT_EQ(parsed->families.size(), 9u);
  const ParsedFamily& requests = parsed->families[0];
  EXPECT_EQ(requests.name, "inferscope_requests");
  EXPECT_EQ(requests.type, ParsedMetricType::kCounter);
  EXPECT_EQ(requests.help, "Requests answered, by \"code\".");
  ASSERT_EQ(requests.samples.size(), 3u);
  const ParsedSample& first = requests.samples[0];
  EXPECT_EQ(first.name, "inferscope_requests_total");
  EXPECT_EQ(first.value, 1027);
  EXPECT_EQ(first.timestamp_ms, 1700000000250);
  ASSERT_TRUE(first.exemplar);
  EXPECT_EQ(first.exemplar->labels, (std::vector<ParsedLabel>{{"trace_id", "4bf92f3577b34da6"}}));
  EXPECT_EQ(first.exemplar->value, 1);
  EXPECT_EQ(first.exemplar->timestamp_ms, 1700000000123);
  EXPECT_EQ(requests.samples[1].name, "inferscope_requests_created");
  EXPECT_EQ(requests.samples[1].value, 1699990000.5);
  EXPECT_FALSE(requests.samples[2].timestamp_ms);

  const ParsedFamily* queue = find_family(*parsed, "inferscope_queue_depth_requests");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(queue->unit, "requests");
  EXPECT_EQ(queue->help, "Requests waiting.\nSecond line with a backslash \\.");
  EXPECT_EQ(label_value(queue->samples[0], "note"), "say \"hi\"\\n");
  EXPECT_EQ(label_value(queue->samples[1], "note"), "two\nlines");
  EXPECT_EQ(queue->samples[1].value, -INFINITY);

  const ParsedFamily* ttft = find_family(*parsed, "inferscope_ttft_seconds");
  ASSERT_NE(ttft, nullptr);
  EXPECT_EQ(ttft->type, ParsedMetricType::kHistogram);
  EXPECT_EQ(ttft->samples.size(), 7u);
  EXPECT_EQ(ttft->samples[2].exemplar->labels.size(), 2u);
  EXPECT_EQ(ttft->samples[2].exemplar->timestamp_ms, 1700000001000);
  EXPECT_EQ(value_of(*parsed, "inferscope_ttft_seconds_created", {{"model", "m"}}), 1699990000);

  EXPECT_EQ(find_family(*parsed, "inferscope_kv_blocks")->type, ParsedMetricType::kGaugeHistogram);
  EXPECT_EQ(find_family(*parsed, "inferscope_build")->samples[0].name, "inferscope_build_info");
  EXPECT_EQ(find_family(*parsed, "inferscope_engine_state")->type, ParsedMetricType::kStateset);
  EXPECT_EQ(value_of(*parsed, "inferscope_mystery"), 1e6);
  const ParsedFamily* bare = find_family(*parsed, "inferscope_no_metadata");
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->type, ParsedMetricType::kUnknown);
  EXPECT_EQ(label_value(bare->samples[0], "utf8"), "h\xc3\xa9llo \xe2\x9c\x93");
  EXPECT_EQ(bare->samples[0].value, INFINITY);
  EXPECT_TRUE(validate_exposition(*parsed));
}

// Tests that escapes decode exactly: \\ \" \n in label values, and 0.0.4 HELP keeping quotes literal.
TEST(ExpositionParserTest, DecodesEscapes) {
  auto parsed = parse_exposition(
      "# HELP a Say \"x\" \\\\ and \\n.\n"
      "a{v=\"back\\\\slash \\\"quoted\\\" new\\nline\",w=\"\"} 1\n",
      k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->families[0].help, "Say \"x\" \\ and \n.");
  EXPECT_EQ(label_value(parsed->families[0].samples[0], "v"), "back\\slash \"quoted\" new\nline");
  EXPECT_EQ(label_value(parsed->families[0].samples[0], "w"), "");
}

// Tests that the 0.0.4 leniencies expfmt has are accepted: blank lines, comments, tabs, spaces around labels, a
// trailing comma, no space after '}', ms timestamps with a sign, and TYPE coming after HELP.
TEST(ExpositionParserTest, AcceptsText004Leniencies) {
  auto parsed = parse_exposition(
      "\n# a free comment\n  \t\n# HELP x Help.\n# TYPE x gauge\n"
      "x { a = \"1\" , b=\"2\", } 3 -1700000000000\n"
      "x{a=\"2\"}4\t \n"
      "#\n",
      k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->families.size(), 1u);
  const ParsedFamily& x = parsed->families[0];
  EXPECT_EQ(x.type, ParsedMetricType::kGauge);
  ASSERT_EQ(x.samples.size(), 2u);
  EXPECT_EQ(x.samples[0].labels, (std::vector<ParsedLabel>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(x.samples[0].timestamp_ms, -1700000000000);
  EXPECT_EQ(x.samples[1].value, 4);
  EXPECT_EQ(x.samples[1].line, 7u);
  EXPECT_TRUE(parse_exposition("", k004));
}

// Tests that a 0.0.4 family split by another family is merged and flagged, like promtool does.
TEST(ExpositionParserTest, MergesInterleavedText004Families) {
  auto parsed = parse_exposition("# TYPE a counter\na 1\nb 2\na{x=\"y\"} 3\n", k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->families.size(), 2u);
  EXPECT_EQ(parsed->families[0].samples.size(), 2u);
  EXPECT_FALSE(parsed->families[0].contiguous);
  EXPECT_TRUE(parsed->families[1].contiguous);
  EXPECT_FALSE(validate_exposition(*parsed));
}

// Tests that 0.0.4 summary/histogram samples join the family only for the right suffixes, and an
// exact family name wins (expfmt's lookup order).
TEST(ExpositionParserTest, GroupsText004SuffixesByType) {
  auto parsed = parse_exposition(
      "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\nh_sum 2\nh_total 5\n"
      "# TYPE g gauge\ng_sum 1\n",
      k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->families.size(), 4u);
  EXPECT_EQ(parsed->families[0].samples.size(), 3u);
  EXPECT_EQ(parsed->families[1].name, "h_total");
  EXPECT_EQ(parsed->families[3].name, "g_sum");
  EXPECT_EQ(parsed->families[3].type, ParsedMetricType::kUnknown);
}

// Tests that values follow Go ParseFloat syntax as Prometheus accepts it, and refuse the rest.
TEST(ExpositionParserTest, ParsesFloatsLikePrometheus) {
  auto check = [](std::string_view text, double want) {
    const auto got = parse_exposition_float(text);
    ASSERT_TRUE(got) << text;
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(*got)) << text;
    } else {
      EXPECT_EQ(*got, want) << text;
    }
  };
  check("0", 0);
  check("-0.5", -0.5);
  check("+3", 3);
  check("1e+06", 1e6);
  check("1E-3", 1e-3);
  check(".5", 0.5);
  check("5.", 5);
  check("007", 7);
  check("+Inf", INFINITY);
  check("-inf", -INFINITY);
  check("Infinity", INFINITY);
  check("-INFINITY", -INFINITY);
  check("NaN", NAN);
  check("nan", NAN);
  check("1e-400", 0);
  check("0.0000001e-330", 0);
  check("1.7976931348623157e308", 1.7976931348623157e308);
  for (std::string_view bad : {"", "+", "-", ".", "e5", "1e", "1e+", "0x1p-2", "0x10", "1_000", "+NaN", "-nan",
                               "inf1", "infin", "1.2.3", "1e400", " 1", "1 ", "--1", "1,5", "∞"}) {
    EXPECT_FALSE(parse_exposition_float(bad)) << bad;
  }
}

// Tests that Content-Type detection finds both formats and refuses anything else.
TEST(ExpositionParserTest, DetectsFormatFromContentType) {
  auto check = [](std::string_view content_type, ExpositionTextFormat want) {
    auto got = exposition_format_from_content_type(content_type);
    ASSERT_TRUE(got) << content_type;
    EXPECT_EQ(*got, want) << content_type;
  };
  check("text/plain; version=0.0.4; charset=utf-8", k004);
  check("text/plain", k004);
  check("Text/Plain;version=1.0.0;escaping=underscores", k004);
  check("application/openmetrics-text; version=1.0.0; charset=utf-8", kOm);
  check(" application/openmetrics-text;version=0.0.1", kOm);
  for (std::string_view bad : {"", "text/html", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily",
                               "text/plainx"}) {
    auto got = exposition_format_from_content_type(bad);
    ASSERT_FALSE(got) << bad;
    EXPECT_NE(got.error().message.find("cannot detect exposition format from Content-Type"), std::string::npos);
  }
}

// Tests that the lookup helpers match label subsets, return every match in order, and miss cleanly.
TEST(ExpositionParserTest, LooksUpSamplesByLabelSubset) {
  auto parsed = parse_exposition("m{a=\"1\",b=\"x\"} 1\nm{a=\"2\",b=\"x\"} 2\nm{a=\"1\",b=\"y\"} 3\n", k004);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(value_of(*parsed, "m"), 1);
  EXPECT_EQ(value_of(*parsed, "m", {{"b", "y"}}), 3);
  EXPECT_EQ(value_of(*parsed, "m", {{"b", "x"}, {"a", "2"}}), 2);
  EXPECT_FALSE(value_of(*parsed, "m", {{"a", "3"}}));
  EXPECT_FALSE(value_of(*parsed, "m", {{"c", ""}}));
  const auto ones = find_samples(*parsed, "m", {{"a", "1"}});
  ASSERT_EQ(ones.size(), 2u);
  EXPECT_EQ(ones[0]->value, 1);
  EXPECT_EQ(ones[1]->value, 3);
  EXPECT_EQ(find_family(*parsed, "nope"), nullptr);
  EXPECT_EQ(to_string(ParsedMetricType::kGaugeHistogram), "gaugehistogram");
}

}  // namespace
}  // namespace inferscope::metrics
