// Tests for Histogram::observe_with_exemplar (include/inferscope/metrics/histogram.h): bucket
// placement, the kept timestamp, OpenMetrics-only output, the 128-code-point limit and concurrent use.
// Every OpenMetrics text is read back with the library's strict parser, not by string search.
#include <inferscope/metrics/exposition.h>
#include <inferscope/metrics/exposition_parser.h>
#include <inferscope/metrics/histogram.h>
#include <inferscope/metrics/registry.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace inferscope::metrics {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

// Times whose milliseconds are exact binary fractions, so "S.mmm" parses back to the same ms.
const system_clock::time_point kT1{milliseconds(1796140000125)};
const system_clock::time_point kT2{milliseconds(1796140005500)};

Histogram make_histogram(Registry& registry) {
  return registry.histogram({{.name = "lat_seconds", .help = "Latency."}, {0.1, 0.5, 1}}).with({});
}

// open_metrics renders the registry as OpenMetrics and parses and validates it strictly.
ParsedExposition open_metrics(const Registry& registry) {
  std::string text;
  render(registry, ExpositionFormat::kOpenMetrics100, text);
  auto parsed = parse_exposition(text, ExpositionTextFormat::kOpenMetrics100);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message) << "\n" << text;
  if (!parsed.ok()) return {};
  const auto valid = validate_exposition(*parsed);
  EXPECT_TRUE(valid.ok()) << (valid.ok() ? "" : valid.error().message) << "\n" << text;
  return std::move(parsed).value();
}

const ParsedSample& bucket(const ParsedExposition& e, const char* le) {
  const ParsedSample* sample = find_sample(e, "lat_seconds_bucket", {{"le", le}});
  if (sample == nullptr) throw std::runtime_error(std::string("no bucket le=") + le);
  return *sample;
}

std::string trace_id_of(const ParsedSample& sample) {
  if (!sample.exemplar || sample.exemplar->labels.size() != 1 || sample.exemplar->labels[0].name != "trace_id") return "";
  return sample.exemplar->labels[0].value;
}

// Tests that each exemplar sits on the bucket its value falls in (upper-inclusive, +Inf too), with
// its value and timestamp, and that the observation itself is counted like observe() counts it.
TEST(HistogramExemplarTest, ExemplarGoesToTheValuesBucket) {
  Registry registry;
  Histogram h = make_histogram(registry);
  h.observe_with_exemplar(0.3, {{"trace_id", "aaaa"}}, kT1);
  h.observe_with_exemplar(0.1, {{"trace_id", "bbbb"}}, kT1);
  h.observe_with_exemplar(7, {{"trace_id", "cccc"}, {"span_id", "00f067aa0ba902b7"}}, kT2);
  const ParsedExposition e = open_metrics(registry);
  EXPECT_EQ(trace_id_of(bucket(e, "0.1")), "bbbb");
  EXPECT_EQ(trace_id_of(bucket(e, "0.5")), "aaaa");
  EXPECT_FALSE(bucket(e, "1.0").exemplar.has_value());
  const ParsedSample& inf = bucket(e, "+Inf");
  ASSERT_TRUE(inf.exemplar.has_value());
  EXPECT_EQ(inf.exemplar->labels, (std::vector<ParsedLabel>{{"trace_id", "cccc"}, {"span_id", "00f067aa0ba902b7"}}));
  EXPECT_EQ(inf.exemplar->value, 7);
  EXPECT_EQ(inf.exemplar->timestamp_ms, 1796140005500);
  EXPECT_EQ(bucket(e, "0.5").exemplar->value, 0.3);
  EXPECT_EQ(bucket(e, "0.5").exemplar->timestamp_ms, 1796140000125);
  EXPECT_EQ(bucket(e, "0.1").value, 1);
  EXPECT_EQ(bucket(e, "0.5").value, 2);
  EXPECT_EQ(inf.value, 3);
  EXPECT_EQ(value_of(e, "lat_seconds_sum"), 7.4);
  EXPECT_EQ(h.snapshot().count, 3u);
}

// Tests that a bucket keeps its exemplar's original timestamp across scrapes and plain observations,
// that a later exemplar replaces it, and that an older one arriving late does not.
TEST(HistogramExemplarTest, KeepsTheLatestExemplarWithItsOriginalTimestamp) {
  Registry registry;
  Histogram h = make_histogram(registry);
  h.observe_with_exemplar(0.3, {{"trace_id", "first"}}, kT1);
  const std::int64_t first_ms = *bucket(open_metrics(registry), "0.5").exemplar->timestamp_ms;
  h.observe(0.4);  // no exemplar: the bucket's exemplar stays as it was
  const ParsedExposition again = open_metrics(registry);
  EXPECT_EQ(trace_id_of(bucket(again, "0.5")), "first");
  EXPECT_EQ(bucket(again, "0.5").exemplar->timestamp_ms, first_ms);
  EXPECT_EQ(bucket(again, "0.5").value, 2);

  h.observe_with_exemplar(0.45, {{"trace_id", "second"}}, kT2);
  h.observe_with_exemplar(0.2, {{"trace_id", "late"}}, kT1);  // older than "second": dropped silently
  const ParsedExposition later = open_metrics(registry);
  EXPECT_EQ(trace_id_of(bucket(later, "0.5")), "second");
  EXPECT_EQ(bucket(later, "0.5").exemplar->value, 0.45);
  EXPECT_EQ(bucket(later, "0.5").exemplar->timestamp_ms, 1796140005500);
  EXPECT_EQ(bucket(later, "0.5").value, 4);  // the late value is still counted
}

// Tests that of several exemplars in one bucket and millisecond the first stays (Prometheus would
// take no second one at that millisecond), that the next millisecond's replaces it, and that
// every value is counted.
TEST(HistogramExemplarTest, FirstExemplarOfAMillisecondStays) {
  Registry registry;
  Histogram h = make_histogram(registry);
  h.observe_with_exemplar(0.3, {{"trace_id", "first"}}, kT1);
  h.observe_with_exemplar(0.4, {{"trace_id", "same-ms"}}, kT1 + std::chrono::microseconds(900));
  const ParsedExposition e = open_metrics(registry);
  EXPECT_EQ(trace_id_of(bucket(e, "0.5")), "first");
  EXPECT_EQ(bucket(e, "0.5").exemplar->value, 0.3);
  h.observe_with_exemplar(0.45, {{"trace_id", "next-ms"}}, kT1 + milliseconds(1));
  const ParsedExposition later = open_metrics(registry);
  EXPECT_EQ(trace_id_of(bucket(later, "0.5")), "next-ms");
  EXPECT_EQ(bucket(later, "0.5").exemplar->timestamp_ms, 1796140000126);
  EXPECT_EQ(bucket(later, "0.5").value, 3);
}

// Tests that the default timestamp is the wall clock at the call.
TEST(HistogramExemplarTest, DefaultTimestampIsNow) {
  Registry registry;
  Histogram h = make_histogram(registry);
  const auto ms = [](system_clock::time_point t) {
    return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
  };
  const std::int64_t before = ms(system_clock::now());
  h.observe_with_exemplar(0.3, {{"trace_id", "now"}});
  const std::int64_t after = ms(system_clock::now());
  const auto stamp = bucket(open_metrics(registry), "0.5").exemplar->timestamp_ms;
  ASSERT_TRUE(stamp.has_value());
  // Parsing S.mmm as a double may truncate one millisecond below the written one.
  EXPECT_GE(*stamp, before - 1);
  EXPECT_LE(*stamp, after);
}

// Tests that text 0.0.4 never carries an exemplar (one there fails Prometheus' whole scrape).
TEST(HistogramExemplarTest, Text004NeverHasExemplars) {
  Registry registry;
  Histogram h = make_histogram(registry);
  for (double v : {0.05, 0.3, 0.7, 9.0}) h.observe_with_exemplar(v, {{"trace_id", "abcd"}}, kT1);
  std::string text;
  render(registry, ExpositionFormat::kPrometheusText004, text);
  EXPECT_EQ(text.find("abcd"), std::string::npos) << text;
  EXPECT_EQ(text.find(" # "), std::string::npos) << text;
  auto parsed = parse_exposition(text, ExpositionTextFormat::kPrometheus004);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(value_of(*parsed, "lat_seconds_bucket", {{"le", "+Inf"}}), 4);
  // The negotiated scrape follows the same rule.
  EXPECT_EQ(render_scrape(registry, "text/plain;version=0.0.4", "").body.find("abcd"), std::string::npos);
  EXPECT_NE(render_scrape(registry, "application/openmetrics-text;version=1.0.0", "").body.find("abcd"),
            std::string::npos);
}

// Tests the 128-code-point limit (names and values together, counted in code points, not bytes)
// and that escaped values read back unchanged.
TEST(HistogramExemplarTest, LimitIs128CodePointsAndValuesAreEscaped) {
  Registry registry;
  Histogram h = make_histogram(registry);
  std::string two_byte;  // 120 x U+00E9: 240 bytes, 120 code points; with "trace_id" exactly 128
  for (int i = 0; i < 120; ++i) two_byte += "\xc3\xa9";
  h.observe_with_exemplar(0.05, {{"trace_id", two_byte}}, kT1);
  h.observe_with_exemplar(0.3, {{"trace_id", "q\"uote\\back\nline"}}, kT1);
  h.observe_with_exemplar(0.7, {{"trace_id", std::string(121, 'x')}}, kT1);  // 129: dropped
  const ParsedExposition e = open_metrics(registry);
  EXPECT_EQ(trace_id_of(bucket(e, "0.1")), two_byte);
  EXPECT_EQ(trace_id_of(bucket(e, "0.5")), "q\"uote\\back\nline");
  EXPECT_FALSE(bucket(e, "1.0").exemplar.has_value());
  EXPECT_EQ(bucket(e, "1.0").value, 3);  // the value of the dropped exemplar is kept
  EXPECT_EQ(value_of(e, "inferscope_metrics_values_rejected_total", {{"family", "lat_seconds"}, {"reason", "exemplar"}}),
            1);
}

// Tests that label sets OpenMetrics forbids drop the exemplar (counted) but keep the value.
TEST(HistogramExemplarTest, InvalidLabelsDropTheExemplarOnly) {
  Registry registry;
  Histogram h = make_histogram(registry);
  h.observe_with_exemplar(0.3, {{"__reserved", "x"}}, kT1);
  h.observe_with_exemplar(0.3, {{"1st", "x"}}, kT1);
  h.observe_with_exemplar(0.3, {{"", "x"}}, kT1);
  h.observe_with_exemplar(0.3, {{"trace_id", "a"}, {"trace_id", "b"}}, kT1);
  h.observe_with_exemplar(0.3, {{"trace_id", "\xff"}}, kT1);
  h.observe_with_exemplar(std::nan(""), {{"trace_id", "nan"}}, kT1);  // NaN: counted as nan, as observe does
  const ParsedExposition e = open_metrics(registry);
  EXPECT_FALSE(bucket(e, "0.5").exemplar.has_value());
  EXPECT_EQ(bucket(e, "0.5").value, 5);
  EXPECT_EQ(value_of(e, "inferscope_metrics_values_rejected_total", {{"family", "lat_seconds"}, {"reason", "exemplar"}}),
            5);
  EXPECT_EQ(value_of(e, "inferscope_metrics_values_rejected_total", {{"family", "lat_seconds"}, {"reason", "nan"}}), 1);
}

// Tests that one PreparedExemplar serves several histograms exactly as the labels given each time
// would (bucket, value, timestamp, escaping), and that a forbidden set drops every exemplar it is
// used for (each counted) and keeps the values.
TEST(HistogramExemplarTest, PreparedExemplarMatchesTheUnpreparedCall) {
  Registry registry;
  Histogram a = registry.histogram({{.name = "a_seconds", .help = "A."}, {0.1, 0.5, 1}}).with({});
  Histogram b = registry.histogram({{.name = "b_seconds", .help = "B."}, {0.1, 0.5, 1}}).with({});
  Histogram c = registry.histogram({{.name = "c_seconds", .help = "C."}, {0.1, 0.5, 1}}).with({});
  const PreparedExemplar prepared({{"trace_id", "4bf9"}, {"note", "say \"hi\"\n"}});
  ASSERT_TRUE(prepared.valid());
  a.observe_with_exemplar(0.3, prepared, kT1);
  b.observe_with_exemplar(7, prepared, kT2);
  c.observe_with_exemplar(0.3, {{"trace_id", "4bf9"}, {"note", "say \"hi\"\n"}}, kT1);

  const PreparedExemplar forbidden({{"trace_id", "a"}, {"trace_id", "b"}});
  EXPECT_FALSE(forbidden.valid());
  a.observe_with_exemplar(0.05, forbidden, kT2);
  b.observe_with_exemplar(0.05, forbidden, kT2);

  const ParsedExposition e = open_metrics(registry);
  const ParsedSample* a_bucket = find_sample(e, "a_seconds_bucket", {{"le", "0.5"}});
  const ParsedSample* b_bucket = find_sample(e, "b_seconds_bucket", {{"le", "+Inf"}});
  const ParsedSample* c_bucket = find_sample(e, "c_seconds_bucket", {{"le", "0.5"}});
  ASSERT_TRUE(a_bucket && b_bucket && c_bucket);
  ASSERT_TRUE(a_bucket->exemplar && b_bucket->exemplar && c_bucket->exemplar);
  EXPECT_EQ(a_bucket->exemplar->labels, c_bucket->exemplar->labels);
  EXPECT_EQ(a_bucket->exemplar->labels,
            (std::vector<ParsedLabel>{{"trace_id", "4bf9"}, {"note", "say \"hi\"\n"}}));
  EXPECT_EQ(a_bucket->exemplar->value, 0.3);
  EXPECT_EQ(a_bucket->exemplar->timestamp_ms, 1796140000125);
  EXPECT_EQ(b_bucket->exemplar->labels, c_bucket->exemplar->labels);
  EXPECT_EQ(b_bucket->exemplar->value, 7);
  EXPECT_EQ(b_bucket->exemplar->timestamp_ms, 1796140005500);
  const ParsedSample* a_low = find_sample(e, "a_seconds_bucket", {{"le", "0.1"}});
  ASSERT_NE(a_low, nullptr);
  EXPECT_FALSE(a_low->exemplar.has_value());
  EXPECT_EQ(a_low->value, 1);
  for (const char* family : {"a_seconds", "b_seconds"}) {
    EXPECT_EQ(value_of(e, "inferscope_metrics_values_rejected_total", {{"family", family}, {"reason", "exemplar"}}), 1)
        << family;
  }
}

// Tests concurrent observe_with_exemplar from several threads (mixed with plain observe) while
// another thread renders: every render parses with well-formed exemplars whose value lies in its
// bucket, and the final counts are exact. Built with -fsanitize=thread, this also checks the
// exemplar slots for data races.
TEST(HistogramExemplarTest, ConcurrentObserveAndRender) {
  Registry registry;
  Histogram h = make_histogram(registry);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  const double values[] = {0.05, 0.3, 0.7, 3.0};
  const double lower[] = {-INFINITY, 0.1, 0.5, 1.0};
  std::atomic<bool> done{false};
  // The writers start once the reader has rendered: on a busy machine they would otherwise finish
  // before the reader's thread first runs, and nothing would be rendered while they write.
  std::atomic<bool> reading{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      const std::string trace_id = "thread-" + std::to_string(t);
      while (!reading.load()) std::this_thread::yield();
      for (int i = 0; i < kPerThread; ++i) {
        const double v = values[(i + t) % 4];
        if (i % 2 == 0) {
          h.observe_with_exemplar(v, {{"trace_id", trace_id}});
        } else {
          h.observe(v);
        }
      }
    });
  }
  int renders = 0;
  std::thread reader([&] {
    do {
      const ParsedExposition e = open_metrics(registry);
      ++renders;
      reading = true;
      const char* les[] = {"0.1", "0.5", "1.0", "+Inf"};
      for (int b = 0; b < 4; ++b) {
        const ParsedSample* s = find_sample(e, "lat_seconds_bucket", {{"le", les[b]}});
        if (s == nullptr || !s->exemplar) continue;
        const std::string id = trace_id_of(*s);
        EXPECT_TRUE(id.rfind("thread-", 0) == 0 && id.size() == 8) << id;
        EXPECT_GT(s->exemplar->value, lower[b]);
      }
    } while (!done.load());
  });
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  EXPECT_GT(renders, 0);
  const ParsedExposition e = open_metrics(registry);
  EXPECT_EQ(bucket(e, "+Inf").value, kThreads * kPerThread);
  for (const char* le : {"0.1", "0.5", "1.0", "+Inf"}) {
    EXPECT_TRUE(bucket(e, le).exemplar.has_value()) << le;
  }
}

}  // namespace
}  // namespace inferscope::metrics
