// Integration test of `inferscope report` against a real Prometheus (Debian's) holding 48 h of
// backfilled history with a known daily load profile and one known slow hour
// (gen_report_history.awk, via promtool): request volume, peak, error ratio, GPU utilization,
// hour-of-day peak/trough/over-limit hours, the worst hour and the doctor's cause there, fired
// alerts from a relay database written through the relay's own outbox, per job queue the peak
// depth and wait p95 (and "no data" for a queue that cannot tell its wait), the self-contained HTML,
// and exit 2 with a reason for a period without data. One test: the backfill is the slow part.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "relay/notification.h"
#include "promapi/prometheus_client.h"
#include "relay/outbox.h"
#include "support/prometheus_process.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace inferscope::report {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Shell {
  int code = -1;
  std::string out, err;
};

Shell run_shell(const std::string& command, const std::string& dir) {
  std::string out = dir + "/stdout", err = dir + "/stderr";
  int status = std::system(("(" + command + ") > " + out + " 2> " + err).c_str());
  Shell r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string rfc3339(double t) {
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

relay::Notification firing(const std::string& name, const std::string& fingerprint, double starts, double ends) {
  relay::Alert a;
  a.status = ends > 0 ? "resolved" : "firing";
  a.labels = {{"alertname", name}, {"severity", "warning"}, {"job", "sim"}};
  a.starts_at = rfc3339(starts);
  a.ends_at = ends > 0 ? rfc3339(ends) : "0001-01-01T00:00:00Z";
  a.fingerprint = fingerprint;
  relay::Notification n;
  n.receiver = "inferscope";
  n.status = a.status;
  n.group_key = "{}:{alertname=\"" + name + "\"}";
  n.alerts.push_back(a);
  return n;
}

TEST(ReportIntegration, FiguresMatchTheGeneratorsTruth) {
  testing::TempDir tmp("report");
  ASSERT_FALSE(tmp.path().empty());
  const std::string work = tmp.path().string();
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // The periods end at 14:00 UTC, where the generator's peak hour begins: the peak's first samples
  // lie on the boundary between the two periods and must count in the current one only
  // (Prometheus 2.x range selectors include both ends).
  const double this_hour = std::floor(now / 3600) * 3600;
  const double end = this_hour - ((static_cast<int>(std::fmod(this_hour, 86400) / 3600) - 14 + 24) % 24) * 3600.0;
  // The generator's slow hour: 10:00-11:00 UTC inside [end - 24h, end).
  const int end_hour = static_cast<int>(std::fmod(end, 86400) / 3600);
  const double slow_start = end - 86400 + ((10 - end_hour + 24) % 24) * 3600.0;

  // Backfill, then a Prometheus on it (retention long enough for 48 h old blocks).
  const std::string gen = std::string(INFERSCOPE_SOURCE_DIR) + "/tests/report/gen_report_history.awk";
  Shell backfill = run_shell("awk -v end=" + std::to_string(static_cast<long long>(end)) +
                               " -v slow_hour=10 -v slow=3 -f " + gen + " > " + work + "/history.om && " +
                               "promtool tsdb create-blocks-from openmetrics " + work + "/history.om " +
                               work + "/blocks && rm " + work + "/history.om",
                           work);
  ASSERT_EQ(backfill.code, 0) << backfill.err;
  testing::PrometheusProcess prom("global:\n  scrape_interval: 15s\n", work + "/blocks");
  ASSERT_TRUE(prom.ok()) << prom.error();
  auto client = promapi::PrometheusClient::create(prom.url());
  ASSERT_TRUE(client);
  // The TSDB opens after the listener: wait (bounded) until queries are answered.
  testing::wait_until([&] { return client->query("up").ok(); }, std::chrono::seconds(30),
                      std::chrono::milliseconds(100));

  // Fired-alert history, written through the relay's own outbox: one alert inside the period,
  // one that fired and resolved 3 days before it (must not show).
  const std::string state = work + "/state";
  std::filesystem::create_directories(state);
  {
    auto outbox = relay::Outbox::open(state + "/relay.db", std::chrono::milliseconds(2000));
    ASSERT_TRUE(outbox) << outbox.error().message;
    for (const auto& n : {firing("InferscopeE2eP99High", "f-in", slow_start + 600, slow_start + 3000),
                          firing("InferscopeOldAlert", "f-old", end - 5 * 86400, end - 5 * 86400 + 600)}) {
      auto stored = (*outbox)->store(n, relay::dedupe_key(n), {}, static_cast<std::int64_t>(now * 1000), 0);
      ASSERT_TRUE(stored) << stored.error().message;
    }
  }

  const std::string bin = INFERSCOPE_BINARY;
  const std::string base = bin + " report --prometheus " + prom.url() + " --until " +
                           std::to_string(static_cast<long long>(end));
  Shell r = run_shell(base + " --format json --state-dir " + state, work);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["has_data"], true);
  EXPECT_EQ(j["dialects"], "inferscope+llamacpp+dcgm");
  const json* sim = nullptr;
  const json* gpu = nullptr;
  const json* llama = nullptr;
  for (const auto& g : j["groups"]) {
    if (g["model"] == "sim-a" && g["dialect"] == "inferscope") sim = &g;
    if (g["dialect"] == "dcgm") gpu = &g;
    if (g["job"] == "llama" && g["dialect"] == "llamacpp") llama = &g;
  }
  ASSERT_NE(sim, nullptr) << j.dump(1);
  ASSERT_NE(gpu, nullptr) << j.dump(1);
  ASSERT_NE(llama, nullptr) << j.dump(1);
  // llama.cpp: TPOT is a mean from the counter pair, marked so; no request counter: no data, not 0.
  const json& lc = (*llama)["current"];
  EXPECT_EQ(lc["tpot_s"]["has_histogram"], false);
  EXPECT_NEAR(lc["tpot_s"]["mean"].get<double>(), 0.02, 0.0005);
  EXPECT_TRUE(lc["tpot_s"]["p99"].is_null());
  EXPECT_NE(lc["tpot_s"]["note"].get<std::string>().find("mean only"), std::string::npos);
  EXPECT_TRUE(lc["requests"].is_null());
  EXPECT_TRUE(lc["e2e_s"]["mean"].is_null());
  EXPECT_NEAR(lc["generation_tokens_per_s"].get<double>(), 64, 0.5);
  const json& cur = (*sim)["current"];
  const json& prev = (*sim)["previous"];
  // Volume: the profile sums to 112 req/s-hours a day = 403,200 requests; the day before 0.8 x.
  EXPECT_NEAR(cur["requests"].get<double>(), 403200, 403200 * 0.01);
  EXPECT_NEAR(prev["requests"].get<double>(), 322560, 322560 * 0.01);
  // Peak: 10 req/s during 14:00-15:00.
  EXPECT_NEAR(cur["peak_rate_per_s"].get<double>(), 10, 0.3);
  const std::string peak_at = cur["peak_rate_at"];
  EXPECT_TRUE(peak_at.find("T14:") != std::string::npos || peak_at.find("T15:00") != std::string::npos) << peak_at;
  EXPECT_NEAR(cur["error_ratio"].get<double>(), 0.01, 0.001);
  EXPECT_NEAR(cur["generation_tokens_per_s"].get<double>(), 32 * 112 / 24.0, 1);
  // The slow hour raises this period's p99 e2e; TTFT did not change.
  EXPECT_GT(cur["e2e_s"]["p99"].get<double>(), prev["e2e_s"]["p99"].get<double>());
  EXPECT_NEAR(cur["ttft_s"]["p95"].get<double>(), prev["ttft_s"]["p95"].get<double>(), 0.005);
  // GPU: 8 % per req/s: mean 8 x 112 / 24 %, max 80 %.
  EXPECT_NEAR((*gpu)["current"]["gpu_utilization_mean"].get<double>(), 0.08 * 112 / 24, 0.01);
  EXPECT_NEAR((*gpu)["current"]["gpu_utilization_max"].get<double>(), 0.80, 0.01);
  EXPECT_NEAR((*gpu)["previous"]["gpu_utilization_max"].get<double>(), 0.64, 0.01);

  // Job queues: "default" (rq) peaks at 2 x the peak load and waits 1-2.5 s (0.5-1 s the day
  // before); "bulk" (a plain list) holds 3 and has no wait series: no data, not 0.
  const json* default_queue = nullptr;
  const json* bulk_queue = nullptr;
  for (const auto& q : j["queues"]) {
    if (q["queue"] == "default") default_queue = &q;
    if (q["queue"] == "bulk") bulk_queue = &q;
  }
  ASSERT_NE(default_queue, nullptr) << j["queues"].dump(1);
  ASSERT_NE(bulk_queue, nullptr) << j["queues"].dump(1);
  EXPECT_EQ(j["queues"].size(), 2u);
  EXPECT_EQ((*default_queue)["job"], "jobs");
  EXPECT_EQ((*default_queue)["system"], "rq");
  EXPECT_NEAR((*default_queue)["current"]["peak_depth"].get<double>(), 20, 1e-9);
  EXPECT_NEAR((*default_queue)["previous"]["peak_depth"].get<double>(), 16, 1e-9);
  const std::string depth_peak_at = (*default_queue)["current"]["peak_depth_at"];
  EXPECT_TRUE(depth_peak_at.find("T14:") != std::string::npos || depth_peak_at.find("T15:00") != std::string::npos)
      << depth_peak_at;
  EXPECT_NEAR((*default_queue)["current"]["wait_p95_s"].get<double>(), 2.425, 0.001);
  EXPECT_NEAR((*default_queue)["previous"]["wait_p95_s"].get<double>(), 0.975, 0.001);
  EXPECT_EQ((*bulk_queue)["system"], "list");
  EXPECT_NEAR((*bulk_queue)["current"]["peak_depth"].get<double>(), 3, 1e-9);
  EXPECT_TRUE((*bulk_queue)["current"]["wait_p95_s"].is_null());
  EXPECT_TRUE((*bulk_queue)["previous"]["wait_p95_s"].is_null());

  // Hour of day: peak 14, trough 02-05, only the slow hour over the limit.
  const json& hours = j["hour_of_day"]["hours"];
  for (int h = 0; h < 24; ++h) {
    EXPECT_EQ(hours[h]["peak"], h == 14) << h;
    EXPECT_EQ(hours[h]["trough"], h >= 2 && h <= 5) << h;
    EXPECT_EQ(hours[h]["over_limit"], h == 10) << h;
  }
  std::string conclusions = j["hour_of_day"]["conclusions"].dump();
  EXPECT_NE(conclusions.find("capacity can shrink 02:00-06:00 UTC"), std::string::npos) << conclusions;
  EXPECT_NE(conclusions.find("capacity must grow at 10:00 UTC"), std::string::npos) << conclusions;

  // Worst hour = the slow hour; the doctor names the injected cause there.
  const json& worst = j["worst_hour"];
  ASSERT_EQ(worst["found"], true) << worst.dump(1);
  EXPECT_EQ(worst["start"], rfc3339(slow_start));
  EXPECT_EQ(worst["quantile"], "p99");
  ASSERT_TRUE(worst["diagnosis"].is_object()) << worst["doctor_error"];
  EXPECT_EQ(worst["diagnosis"]["verdict"], "degraded");
  ASSERT_FALSE(worst["diagnosis"]["findings"].empty());
  EXPECT_EQ(worst["diagnosis"]["findings"][0]["cause"], "decode_slowdown");

  // Alerts: the one in the period, not the old one.
  ASSERT_EQ(j["alerts"]["available"], true) << j["alerts"].dump();
  ASSERT_EQ(j["alerts"]["fired"].size(), 1u) << j["alerts"].dump();
  EXPECT_EQ(j["alerts"]["fired"][0]["alertname"], "InferscopeE2eP99High");

  // HTML: one self-contained file; the only URL is the source line printed as text.
  Shell h = run_shell(base + " --format html --output " + work + "/report.html --state-dir " + state, work);
  ASSERT_EQ(h.code, 0) << h.err;
  std::string html = read_file(work + "/report.html");
  EXPECT_NE(html.find("InferscopeE2eP99High"), std::string::npos);
  EXPECT_NE(html.find("decode_slowdown"), std::string::npos);
  EXPECT_NE(html.find("<h2>Job queues</h2>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>bulk</td><td>list</td><td>jobs</td>"), std::string::npos);
  std::istringstream lines(html);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("http://") != std::string::npos || line.find("https://") != std::string::npos) {
      EXPECT_EQ(line, "<p class=\"source\">Source: Prometheus " + prom.url() + "</p>");
    }
  }
  EXPECT_EQ(html.find("src="), std::string::npos);

  // Markdown names the figures too.
  Shell m = run_shell(base, work);
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("no alert history (no state dir"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("decode_slowdown"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("### Job queues"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("| default | rq | jobs | 20 at "), std::string::npos) << m.out;
  EXPECT_NE(m.out.find(" s | 975 ms |"), std::string::npos) << m.out;  // this period 2.42-2.43 s
  EXPECT_NE(m.out.find("| bulk | list | jobs | 3 at "), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("| no data | no data |"), std::string::npos) << m.out;

  // A period without data: exit 2, and the report and stderr say why.
  Shell empty = run_shell(bin + " report --prometheus " + prom.url() + " --until " +
                            std::to_string(static_cast<long long>(end - 10 * 86400)),
                        work);
  EXPECT_EQ(empty.code, 2) << empty.err;
  EXPECT_NE(empty.err.find("no data: no series of a known server"), std::string::npos) << empty.err;
  EXPECT_NE(empty.out.find("no data"), std::string::npos);
  // Data in the period before only (the first day of history): series exist, none in the period.
  Shell before = run_shell(bin + " report --prometheus " + prom.url() + " --until " +
                             std::to_string(static_cast<long long>(end + 86400 * 2)) + " --since " +
                             std::to_string(static_cast<long long>(end + 3600)),
                         work);
  EXPECT_EQ(before.code, 2) << before.err;
  EXPECT_NE(before.err.find("no data: no request finished and no latency was recorded in this period (series found: inferscope+llamacpp+dcgm)"), std::string::npos)
      << before.err;
  // A model that does not exist on the job: no data, naming both. (Without the selector the
  // llama.cpp job, which has no model label, would still be reported, with a note.)
  Shell nomodel = run_shell(base + " --model nope --selector '{job=\"sim\"}'", work);
  EXPECT_EQ(nomodel.code, 2) << nomodel.err;
  EXPECT_NE(nomodel.err.find("for the selector {job=\"sim\"} and model nope"), std::string::npos) << nomodel.err;
}

}  // namespace
}  // namespace inferscope::report
