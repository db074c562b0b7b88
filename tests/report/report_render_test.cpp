// Unit tests of the report's renderers and derivations on hand-built Reports: Markdown tables,
// self-contained and escaped HTML, "no data" never printed as 0, hour-of-day derivation with its
// thresholds, the worst-hour choice, and the CLI's time flags.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cctype>

#include "report/report.h"
#include "report/report_flags.h"
#include "report/report_derive.h"
#include "relay/channel.h"
#include "relay/document.h"
#include "relay/robot_payload.h"

namespace inferscope::report {
namespace {

constexpr double kDay = 1796083200;  // 2026-12-01T00:00:00Z, a whole day

// Hourly points (t = hour end) for one day with the given per-hour values; NaN = no sample.
std::vector<Point> day(const std::array<double, 24>& v, double base = kDay) {
  std::vector<Point> out;
  for (int h = 0; h < 24; ++h)
    if (!std::isnan(v[h])) out.push_back({base + (h + 1) * 3600.0, v[h]});
  return out;
}

constexpr std::array<double, 24> kLoad = {4, 4, 1, 1, 1, 1, 3, 3, 6, 6, 6, 6, 6, 6, 10, 6, 6, 6, 6, 6, 4, 4, 4, 4};

Report sample_report() {
  Report r;
  r.request.prometheus_url = "http://127.0.0.1:9090";
  r.since = kDay;
  r.until = kDay + 86400;
  r.previous_since = kDay - 86400;
  r.dialects = "inferscope";
  GroupReport g;
  g.job = "sim";
  g.model = "m1";
  g.dialect = "inferscope";
  g.current.requests = 396000;
  g.previous.requests = 316800;
  g.current.e2e = {.p50 = 0.2, .p95 = 0.9, .p99 = 2.1, .mean = 0.3, .has_histogram = true, .note = ""};
  g.current.peak_rate = 10;
  g.current.peak_rate_at = kDay + 14 * 3600 + 300;
  g.current.error_ratio = 0.01;
  // previous: no latency, no errors known (missing, not zero)
  r.groups.push_back(g);
  r.rate = {{kDay + 300, 4}, {kDay + 600, 5}};
  r.p95_e2e = {{kDay + 300, 0.8}};
  r.hours = derive_hour_profile(day(kLoad), {}, 0);
  r.alerts.note = "no alert history (no state dir)";
  r.has_data = true;
  return r;
}

std::array<double, 24> filled(double v) {
  std::array<double, 24> a;
  a.fill(v);
  return a;
}

TEST(HourProfile, PeakTroughAndStatedThresholds) {
  auto p95 = filled(0.8);
  p95[10] = 2.0;
  HourProfile p = derive_hour_profile(day(kLoad), day(p95), 0);
  EXPECT_TRUE(p.hours[14].peak);
  for (int h = 0; h < 24; ++h) {
    EXPECT_EQ(p.hours[h].trough, h >= 2 && h <= 5) << h;
    EXPECT_EQ(p.hours[h].over_slo, h == 10) << h;
  }
  ASSERT_TRUE(p.latency_limit_s);
  EXPECT_DOUBLE_EQ(*p.latency_limit_s, 1.2);  // 1.5 x median 0.8
  std::string all;
  for (const auto& c : p.conclusions) all += c + "\n";
  EXPECT_NE(all.find("peak load at 14:00 UTC"), std::string::npos) << all;
  EXPECT_NE(all.find("capacity can shrink 02:00-06:00 UTC (load < 30 % of peak)"), std::string::npos) << all;
  EXPECT_NE(all.find("capacity must grow at 10:00 UTC"), std::string::npos) << all;
  EXPECT_NE(all.find("1.5 x the median hourly p95"), std::string::npos) << all;
}

TEST(HourProfile, SloGivenAndRunOverMidnight) {
  std::array<double, 24> load = filled(10);
  load[22] = load[23] = load[0] = load[1] = load[2] = 2;
  auto p95 = filled(0.5);
  p95[13] = p95[14] = 0.9;
  HourProfile p = derive_hour_profile(day(load), day(p95), 0.7);
  std::string all;
  for (const auto& c : p.conclusions) all += c + "\n";
  EXPECT_NE(all.find("capacity can shrink 22:00-03:00 UTC"), std::string::npos) << all;
  EXPECT_NE(all.find("capacity must grow at 13:00-15:00 UTC"), std::string::npos) << all;
  EXPECT_NE(all.find("SLO (--slo-p95 0.7 s)"), std::string::npos) << all;
}

TEST(HourProfile, MeanOverDaysAndMissingHoursStayMissing) {
  auto a = kLoad, b = kLoad;
  b[14] = 20;  // second day's 14:00 doubles: the mean is 15
  a[3] = b[3] = std::nan("");
  std::vector<Point> pts = day(a);
  for (const auto& pt : day(b, kDay + 86400)) pts.push_back(pt);
  HourProfile p = derive_hour_profile(pts, {}, 0);
  ASSERT_TRUE(p.hours[14].mean_rate);
  EXPECT_DOUBLE_EQ(*p.hours[14].mean_rate, 15);
  EXPECT_FALSE(p.hours[3].mean_rate);
  EXPECT_FALSE(p.hours[3].trough);
  EXPECT_FALSE(p.latency_limit_s);  // no p95 at all: no limit, said so
  EXPECT_NE(p.conclusions.back().find("cannot say when capacity must grow"), std::string::npos);
}

TEST(WorstHour, HighestP99ElseP95) {
  std::vector<Point> p99 = {{1000, 1.0}, {4600, 3.0}, {8200, 2.0}};
  std::vector<Point> p95 = {{1000, 5.0}};
  WorstHour w = choose_worst_hour(p99, p95);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.end, 4600);
  EXPECT_EQ(w.start, 1000);
  EXPECT_EQ(w.quantile, "p99");
  WorstHour f = choose_worst_hour({{1000, std::nan("")}}, {{1000, 0.5}, {4600, 0.7}});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.quantile, "p95");
  EXPECT_EQ(f.end, 4600);
  EXPECT_FALSE(choose_worst_hour({}, {}).found);
}

TEST(RenderMarkdown, TablesAndNoDataNeverZero) {
  std::string md = render_markdown(sample_report());
  EXPECT_NE(md.find("## inferscope report 2026-12-01 00:00 - 2026-12-02 00:00 UTC"), std::string::npos) << md;
  EXPECT_NE(md.find("| | this period | previous | change |"), std::string::npos);
  EXPECT_NE(md.find("| requests | 396000 | 316800 | +25 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| e2e p50 / p95 / p99 | 200 ms / 900 ms / 2.10 s | no data |"), std::string::npos) << md;
  EXPECT_NE(md.find("| error ratio | 1.00 % | no data |"), std::string::npos) << md;
  EXPECT_NE(md.find("| peak rate (5 min) | 10 req/s at 12-01 14:05 |"), std::string::npos) << md;
  EXPECT_NE(md.find("no alert history (no state dir)"), std::string::npos);
  EXPECT_NE(md.find("| 14 | 10 | no data | peak"), std::string::npos) << md;
  EXPECT_EQ(md.find("0.00 %"), std::string::npos);  // a missing error ratio is not 0
  EXPECT_LT(md.size(), 8000u);
}

// Tests the no-data path (derive_hour_profile never runs): hours stay labelled 00..23 in every
// format, and the Markdown says "no data for any hour" instead of 24 empty rows.
TEST(RenderMarkdown, NoDataHasNoEmptyHourTable) {
  Report r;
  r.since = kDay;
  r.until = kDay + 86400;
  r.previous_since = kDay - 86400;
  r.notes = {"no data: no series of a known server matched anything"};
  for (int h = 0; h < 24; ++h) EXPECT_EQ(r.hours.hours[h].hour, h);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("### Hour of day (UTC)\n\nno data for any hour\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("| 00 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| hour |"), std::string::npos) << md;
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["hour_of_day"]["hours"][23]["hour"], 23);
  EXPECT_NE(render_html(r).find("<td>23:00</td>"), std::string::npos);
  // One hour with data: the table is back, each row under its own hour.
  r.hours.hours[23].mean_rate = 2;
  const std::string one = render_markdown(r);
  EXPECT_NE(one.find("| 23 | 2 | no data |"), std::string::npos) << one;
  EXPECT_NE(one.find("| 00 | no data | no data |"), std::string::npos) << one;
  EXPECT_EQ(one.find("no data for any hour"), std::string::npos) << one;
}

// Lines of `text` that a chat robot would show as raw table pipes or heading hashes.
std::vector<std::string> markup_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.find('|') != std::string::npos || line.rfind("#", 0) == 0) out.push_back(line);
    start = end + 1;
  }
  return out;
}

// Tests the chat text as each robot kind receives it (its style, its default size limit): no table
// or heading line, within the limit, whole, and the figures of every model kept as short lines.
TEST(RenderChat, EachRobotGetsShortLinesWithTheFigures) {
  Report r = sample_report();
  GroupReport m2 = r.groups[0];
  m2.model = "m2";
  m2.current.e2e.p95 = 1.2;
  m2.previous.e2e = {.p50 = 0.3, .p95 = 0.9, .p99 = 1.5, .mean = 0.4, .has_histogram = true, .note = ""};
  r.groups.push_back(m2);
  r.alerts.available = true;
  relay::FiredAlert a;
  a.alertname = "HighLatency";
  r.alerts.alerts = {a, a};
  const relay::Document d{report_title(r), render_markdown(r), render_html(r), render_chat(r)};
  ASSERT_FALSE(markup_lines(d.markdown).empty());  // the Markdown does have tables
  for (auto kind : {relay::ChannelKind::kDingTalk, relay::ChannelKind::kFeishu, relay::ChannelKind::kWeCom,
                    relay::ChannelKind::kSlack}) {
    const std::size_t limit = relay::default_max_message_bytes(kind);
    const relay::ComposedMessage m = relay::compose_document(d, limit, relay::markup_style(kind));
    EXPECT_EQ(markup_lines(m.text), std::vector<std::string>{}) << m.text;
    EXPECT_LE(m.text.size(), limit);
    EXPECT_FALSE(m.truncated);
    EXPECT_EQ(m.text, d.chat);
  }
  const std::string& chat = d.chat;
  EXPECT_EQ(chat.rfind("inferscope report 2026-12-01 00:00 - 2026-12-02 00:00 UTC\n", 0), 0u) << chat;
  EXPECT_NE(chat.find("m1 — inferscope\n\n- requests 396000 (was 316800, +25 %)\n"), std::string::npos) << chat;
  EXPECT_NE(chat.find("- e2e p95 900 ms\n- e2e p99 2.10 s\n"), std::string::npos) << chat;  // nothing before
  EXPECT_NE(chat.find("m2 — inferscope\n"), std::string::npos) << chat;
  EXPECT_NE(chat.find("- e2e p95 1.20 s (was 900 ms, +33 %)\n"), std::string::npos) << chat;
  EXPECT_NE(chat.find("- errors 1.00 %\n"), std::string::npos) << chat;
  EXPECT_NE(chat.find("- peak 10 req/s at 12-01 14:05\n"), std::string::npos) << chat;
  EXPECT_NE(chat.find("Alerts fired: 2 (HighLatency x2)"), std::string::npos) << chat;
  EXPECT_EQ(chat.find("TTFT"), std::string::npos) << chat;  // no data in either period: no line
  EXPECT_EQ(chat.find("0.00 %"), std::string::npos);          // missing is never 0
  // The email and the generic webhook keep the full tables.
  EXPECT_EQ(relay::compose_document(d, 0, relay::MarkupStyle::kPlain).text, d.markdown);
}

// Tests that a hostile model name stays on its line and cannot open Slack mentions or WeCom tags,

// Tests the job queues' section in every format: peak depth with its time, wait p95, "no data"
// (null in JSON) where a queue had none, never 0; hostile queue names stay inside their cell.
TEST(RenderQueues, PeakDepthAndWaitPerQueueNoDataNeverZero) {
  Report r = sample_report();
  QueueReport rq{.job = "jobs", .queue = "default", .system = "rq"};
  rq.current = {.peak_depth = 42, .peak_depth_at = kDay + 14 * 3600, .wait_p95 = 2.5};
  rq.previous = {.peak_depth = 7, .peak_depth_at = kDay - 3600, .wait_p95 = std::nullopt};
  QueueReport list{.job = "jobs", .queue = "a|b<x>", .system = "list"};
  list.current = {.peak_depth = 3, .peak_depth_at = kDay + 600, .wait_p95 = std::nullopt};
  r.queues = {rq, list};

  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("### Job queues"), std::string::npos) << md;
  EXPECT_NE(md.find("| default | rq | jobs | 42 at 12-01 14:00 | 7 at 11-30 23:00 | 2.50 s | no data |"), std::string::npos) << md;
  EXPECT_NE(md.find("| a\\|b\\<x\\> | list | jobs | 3 at 12-01 00:10 | no data | no data | no data |"), std::string::npos) << md;

  const std::string html = render_html(r);
  EXPECT_NE(html.find("<h2>Job queues</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>a|b&lt;x&gt;</td>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<x>"), std::string::npos);

  const std::string chat = render_chat(r);
  EXPECT_NE(chat.find("- queue default (rq) peak depth 42 (was 7, +500 %)"), std::string::npos) << chat;
  EXPECT_NE(chat.find("- queue default wait p95 2.50 s\n"), std::string::npos) << chat;

  const auto j = nlohmann::json::parse(render_json(r));
  ASSERT_EQ(j["queues"].size(), 2u);
  EXPECT_EQ(j["queues"][0]["current"]["peak_depth"], 42);
  EXPECT_EQ(j["queues"][0]["current"]["peak_depth_at"], "2026-12-01T14:00:00Z");
  EXPECT_TRUE(j["queues"][0]["previous"]["wait_p95_s"].is_null());
  EXPECT_TRUE(j["queues"][1]["previous"]["peak_depth"].is_null());
  EXPECT_TRUE(j["queues"][1]["previous"]["peak_depth_at"].is_null());

  r.queues.clear();  // no queue target: no section at all
  EXPECT_EQ(render_markdown(r).find("Job queues"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(render_json(r))["queues"].empty());
}

// and that a day of 8 models still fits WeCom's 4096 bytes whole.
TEST(RenderChat, HostileNamesAndManyModels) {
  Report r = sample_report();
  r.groups[0].model = "<!channel>\n# x";
  std::string chat = render_chat(r);
  EXPECT_EQ(chat.find("<!"), std::string::npos) << chat;
  EXPECT_NE(chat.find("\xe2\x80\xb9!channel\xe2\x80\xba # x"), std::string::npos) << chat;
  EXPECT_EQ(chat.find("\n# x"), std::string::npos) << chat;
  r = sample_report();
  for (int i = 2; i <= 8; ++i) {
    GroupReport g = r.groups[0];
    g.model = "model-" + std::to_string(i);
    g.current.ttft = {.p50 = 0.05, .p95 = 0.2, .p99 = 0.4, .mean = 0.08, .has_histogram = true, .note = ""};
    g.previous.ttft = g.current.ttft;
    g.current.generation_tokens_per_s = 1234;
    r.groups.push_back(g);
  }
  chat = render_chat(r);
  EXPECT_LE(chat.size(), relay::default_max_message_bytes(relay::ChannelKind::kWeCom)) << chat.size();
  EXPECT_NE(chat.find("model-8"), std::string::npos);
}

TEST(RenderMarkdown, LabelValuesCannotBreakTheTable) {
  Report r = sample_report();
  r.groups[0].model = "a|b\n## injected";
  std::string md = render_markdown(r);
  EXPECT_NE(md.find("a\\|b ## injected"), std::string::npos) << md;
  EXPECT_EQ(md.find("\n## injected"), std::string::npos);
}

TEST(RenderMarkdown, JobsWhenSeveralAndMeansWhereNoHistogram) {
  Report r = sample_report();
  GroupReport llama;
  llama.job = "llama";
  llama.dialect = "llamacpp";
  llama.current.tpot.mean = 0.012;
  llama.current.tpot.note = "mean only: llamacpp has no histogram for it";
  llama.current.generation_tokens_per_s = 40;
  r.groups.push_back(llama);
  std::string md = render_markdown(r);
  EXPECT_NE(md.find("### m1 (job sim) — inferscope"), std::string::npos) << md;
  EXPECT_NE(md.find("### (no model label) (job llama) — llamacpp"), std::string::npos) << md;
  EXPECT_NE(md.find("| TPOT p50 / p95 / p99 | mean 12 ms | no data |"), std::string::npos) << md;
  EXPECT_NE(md.find("mean only: llamacpp has no histogram for it"), std::string::npos) << md;
  // One job only: no job in the headings.
  r.groups.pop_back();
  EXPECT_NE(render_markdown(r).find("### m1 — inferscope"), std::string::npos);
}

TEST(RenderHtml, SelfContainedAndEscaped) {
  Report r = sample_report();
  r.groups[0].model = "<script>alert(1)</script>";
  r.groups[0].job = "\"><img src=x onerror=alert(1)>";
  r.groups.push_back(r.groups[0]);  // two jobs: the job is printed in the headings
  r.groups[1].job = "other";
  relay::FiredAlert a;
  a.alertname = "<b>E2eHigh</b>";
  a.labels = {{"alertname", "<b>E2eHigh</b>"}, {"severity", "page"}, {"model", "<i>m</i>"}};
  a.starts_at = std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<long long>(kDay) + 7200));
  r.alerts.available = true;
  r.alerts.alerts.push_back(a);
  std::string html = render_html(r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>E2eHigh"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;E2eHigh&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("(job &quot;&gt;&lt;img src=x onerror=alert(1)&gt;)"), std::string::npos) << html;
  // No URL of any kind except the Prometheus source printed as text; no src= attribute.
  std::istringstream lines(html);
  std::string line;
  int urls = 0;
  while (std::getline(lines, line)) {
    if (line.find("http://") == std::string::npos && line.find("https://") == std::string::npos) continue;
    EXPECT_EQ(line, "<p class=\"source\">Source: Prometheus http://127.0.0.1:9090</p>");
    ++urls;
  }
  EXPECT_EQ(urls, 1);
  // No tag carries a src attribute (escaped text may say "src=", a tag may not).
  for (std::size_t open = html.find('<'); open != std::string::npos; open = html.find('<', open + 1)) {
    std::string tag = html.substr(open, html.find('>', open) - open);
    EXPECT_EQ(tag.find(" src"), std::string::npos) << tag;
  }
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("class=\"nodata\">no data</td>"), std::string::npos);
}

TEST(RenderJson, MissingIsNull) {
  auto j = nlohmann::json::parse(render_json(sample_report()));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["groups"][0]["current"]["requests"], 396000);
  EXPECT_TRUE(j["groups"][0]["previous"]["error_ratio"].is_null());
  EXPECT_TRUE(j["groups"][0]["previous"]["e2e_s"]["p99"].is_null());
  EXPECT_EQ(j["hour_of_day"]["hours"][14]["peak"], true);
}

TEST(ReportFlags, TimesAndRelativeSince) {
  ReportFlags f;
  f.prometheus = "http://127.0.0.1:9090";
  auto r = request_from_flags(f, 1796000000.5);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->until, 1796000000);
  EXPECT_EQ(r->since, 1796000000 - 86400);
  f.until = "2026-12-01T00:00:00Z";
  f.since = "7d";
  r = request_from_flags(f, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->since, kDay - 7 * 86400);
  f.since = "1796083100";
  EXPECT_EQ(request_from_flags(f, 0)->since, 1796083100);
  f.since = "yesterday";
  auto bad = request_from_flags(f, 0);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--since"), std::string::npos);
  f.since = "2026-12-02T00:00:00Z";
  EXPECT_FALSE(request_from_flags(f, 0));
  f.since = "";
  f.until = "noon";
  bad = request_from_flags(f, 0);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--until"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::report
