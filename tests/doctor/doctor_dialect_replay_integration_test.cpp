// The doctor against TGI and Triton expositions replayed by small test servers (over HTTP, in
// direct-scrape mode): metric names, types, labels and bucket schemes constructed from
// shared/reference/metric-dialects.md §5 and §6 (not recorded from running servers), with counters
// and histograms advancing like a busy server. One change half-way through each run: TGI's time
// per generated token x3 (decode_slowdown on TGI's inference stage), Triton's request rate x3 with
// queueing (load_increase on the queue stage).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "doctor/check_metrics.h"
#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/scrape_collector.h"
#include "promapi/prometheus_client.h"
#include "support/prometheus_process.h"
#include "support/wait_until.h"
#include "net/http_server.h"
#include "net/router.h"

namespace inferscope::doctor {
namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Hist is one cumulative histogram series rendered in the 0.0.4 text format.
struct Hist {
  std::vector<double> bounds;  // finite upper bounds, ascending; +Inf is added when rendering
  std::vector<double> counts = std::vector<double>(bounds.size(), 0);
  double sum = 0, count = 0;
  void observe(double v, double n = 1) {
    for (std::size_t i = 0; i < bounds.size(); ++i)
      if (v <= bounds[i]) counts[i] += n;
    sum += v * n;
    count += n;
  }
  void render(std::string& out, const std::string& name, const std::string& labels) const {
    std::string prefix = labels.empty() ? "" : labels + ",";
    for (std::size_t i = 0; i < bounds.size(); ++i)
      out += name + "_bucket{" + prefix + "le=\"" + num(bounds[i]) + "\"} " + num(counts[i]) + "\n";
    out += name + "_bucket{" + prefix + "le=\"+Inf\"} " + num(count) + "\n";
    std::string braces = labels.empty() ? "" : "{" + labels + "}";
    out += name + "_sum" + braces + " " + num(sum) + "\n" + name + "_count" + braces + " " + num(count) + "\n";
  }
};

// Replay serves render() at /metrics and calls tick() every 50 ms until destroyed.
class Replay {
 public:
  Replay(std::function<void()> tick, std::function<std::string()> render)
      : tick_(std::move(tick)), render_(std::move(render)) {
    router_.get("/metrics", [this](const net::Request&) {
      std::lock_guard lock(mu_);
      net::Response r = net::Response::text(render_());
      r.content_type = "text/plain; version=0.0.4";
      return r;
    });
    auto server = net::HttpServer::start({.port = 0, .io_threads = 1}, router_.handler());
    if (server) server_ = std::move(*server);
    ticker_ = std::thread([this] {
      while (!stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::lock_guard lock(mu_);
        tick_();
      }
    });
  }
  ~Replay() {
    stop_ = true;
    ticker_.join();
    if (server_) server_->stop();
  }
  bool ok() const { return server_ != nullptr; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/metrics"; }
  // change runs `f` under the lock the ticker and the renderer take.
  void change(const std::function<void()>& f) {
    std::lock_guard lock(mu_);
    f();
  }

 private:
  std::function<void()> tick_;
  std::function<std::string()> render_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
  std::mutex mu_;
  std::atomic<bool> stop_{false};
  std::thread ticker_;
};

// TGI's duration buckets: 0.0001 * 1.5^k, k = 1..35 (metrics_exporter_prometheus matchers).
std::vector<double> tgi_duration_buckets() {
  std::vector<double> b;
  for (int k = 1; k <= 35; ++k) b.push_back(0.0001 * std::pow(1.5, k));
  return b;
}

std::vector<double> linear(double width) {
  std::vector<double> b;
  for (int k = 1; k <= 100; ++k) b.push_back(width * k);
  return b;
}

// TgiModel: one request of 200 prompt / 64 generated tokens finishes per tick.
struct TgiModel {
  double tpot = 0.020;
  double requests = 0;
  Hist e2e{tgi_duration_buckets()}, validation{tgi_duration_buckets()}, queue{tgi_duration_buckets()},
      inference{tgi_duration_buckets()}, per_token{tgi_duration_buckets()}, prefill_step{tgi_duration_buckets()},
      decode_step{tgi_duration_buckets()}, input{linear(40.96)}, generated{linear(81.92)};
  void tick() {
    const double v = 0.0008, q = 0.005, pre = 0.040, out = 64;
    const double inf = pre + out * tpot;
    e2e.observe(v + q + inf);
    validation.observe(v);
    queue.observe(q);
    inference.observe(inf);
    per_token.observe(inf / out);
    prefill_step.observe(pre);
    decode_step.observe(tpot, out);
    input.observe(200);
    generated.observe(out);
    requests += 1;
  }
  std::string render() const {
    std::string o;
    o += "# TYPE tgi_request_count counter\ntgi_request_count " + num(requests) + "\n";
    o += "# TYPE tgi_request_success counter\ntgi_request_success " + num(requests) + "\n";
    auto hist = [&](const char* name, const Hist& h) {
      o += std::string("# TYPE ") + name + " histogram\n";
      h.render(o, name, "");
    };
    hist("tgi_request_duration", e2e);
    hist("tgi_request_validation_duration", validation);
    hist("tgi_request_queue_duration", queue);
    hist("tgi_request_inference_duration", inference);
    hist("tgi_request_mean_time_per_token_duration", per_token);
    hist("tgi_request_input_length", input);
    hist("tgi_request_generated_tokens", generated);
    o += "# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 2\n";
    o += "# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n";
    o += "# TYPE tgi_batch_forward_duration histogram\n";
    prefill_step.render(o, "tgi_batch_forward_duration", "method=\"prefill\"");
    decode_step.render(o, "tgi_batch_forward_duration", "method=\"decode\"");
    return o;
  }
};

// TritonModel: `per_tick` requests finish per tick, each waiting `queue_us` in the queue.
struct TritonModel {
  int per_tick = 1;
  double queue_us = 2000, pending = 0;
  double success = 0, request_us = 0, queue_total = 0, input_us = 0, infer_us = 0, output_us = 0;
  void tick() {
    for (int i = 0; i < per_tick; ++i) {
      success += 1;
      queue_total += queue_us;
      input_us += 100;
      infer_us += 30000;
      output_us += 100;
      request_us += queue_us + 100 + 30000 + 100 + 200;
    }
  }
  std::string render() const {
    const std::string l = "{model=\"llama\",version=\"1\"}";
    std::string o;
    auto counter = [&](const char* name, double v) {
      o += std::string("# TYPE ") + name + " counter\n" + name + l + " " + num(v) + "\n";
    };
    counter("nv_inference_request_success", success);
    o += "# TYPE nv_inference_request_failure counter\n"
         "nv_inference_request_failure{model=\"llama\",reason=\"REJECTED\",version=\"1\"} 0\n";
    counter("nv_inference_count", success);
    counter("nv_inference_exec_count", success);
    counter("nv_inference_request_duration_us", request_us);
    counter("nv_inference_queue_duration_us", queue_total);
    counter("nv_inference_compute_input_duration_us", input_us);
    counter("nv_inference_compute_infer_duration_us", infer_us);
    counter("nv_inference_compute_output_duration_us", output_us);
    o += "# TYPE nv_inference_pending_request_count gauge\nnv_inference_pending_request_count" + l + " " +
         num(pending) + "\n";
    o += "# TYPE nv_gpu_utilization gauge\nnv_gpu_utilization{gpu_uuid=\"GPU-0\"} 0.62\n";
    o += "# TYPE nv_cpu_utilization gauge\nnv_cpu_utilization 0.31\n";
    return o;
  }
};

// run_replay scrapes `replay` for 6 s (every 0.25 s), applies `change` after 3 s, and diagnoses
// the second half against the first.
Diagnosis run_replay(Replay& replay, const std::function<void()>& change, std::string& dialect) {
  ScrapeOptions options{{replay.url()}, 6, 0.25};
  auto scraping = std::async(std::launch::async, [&] { return scrape_rounds(options); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  replay.change(change);
  auto result = scraping.get();
  EXPECT_TRUE(result) << result.error().message;
  if (!result) return {};
  Snapshot snap = snapshot_from_scrapes(options, *result, "", nullptr);
  dialect = snap.dialect;
  Diagnosis d = diagnose(snap);
  if (std::getenv("DOCTOR_VERBOSE")) std::cout << to_text(d) << "\n";
  return d;
}

// Tests a TGI exposition: detected as TGI with nothing expected missing, and a tripled time per
// generated token is decode_slowdown on the inference stage (TGI does not split prefill from decode).
TEST(DoctorDialectReplayIntegrationTest, TgiDecodeSlowdown) {
  TgiModel model;
  Replay replay([&] { model.tick(); }, [&] { return model.render(); });
  ASSERT_TRUE(replay.ok());
  std::string dialect;
  Diagnosis d = run_replay(replay, [&] { model.tpot = 0.060; }, dialect);
  EXPECT_EQ(dialect, "tgi");
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "decode_slowdown") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "inference") << to_text(d);

  auto fetched = fetch_exposition(replay.url(), std::chrono::seconds(5));
  ASSERT_TRUE(fetched) << fetched.error().message;
  MetricsCheck check = check_exposition(replay.url(), *fetched);
  EXPECT_EQ(check.dialects, std::vector<std::string>{"tgi"});
  EXPECT_TRUE(check.missing.empty()) << to_text(check);
}

// Tests a Triton exposition: mean stage times from the microsecond counters, and three times the
// requests with queueing is load_increase on the queue stage.
TEST(DoctorDialectReplayIntegrationTest, TritonRateSurge) {
  TritonModel model;
  Replay replay([&] { model.tick(); }, [&] { return model.render(); });
  ASSERT_TRUE(replay.ok());
  std::string dialect;
  Diagnosis d = run_replay(
      replay,
      [&] {
        model.per_tick = 3;
        model.queue_us = 60000;
        model.pending = 6;
      },
      dialect);
  EXPECT_EQ(dialect, "triton");
  ASSERT_EQ(d.verdict, "degraded") << to_text(d);
  ASSERT_FALSE(d.findings.empty()) << to_text(d);
  EXPECT_EQ(d.findings.front().cause, "load_increase") << to_text(d);
  EXPECT_EQ(d.findings.front().stage, "queue") << to_text(d);

  auto fetched = fetch_exposition(replay.url(), std::chrono::seconds(5));
  ASSERT_TRUE(fetched) << fetched.error().message;
  MetricsCheck check = check_exposition(replay.url(), *fetched);
  EXPECT_EQ(check.dialects, std::vector<std::string>{"triton"});
  EXPECT_TRUE(check.missing.empty()) << to_text(check);
}

// NodeModel: node-exporter's CPU counters for 2 CPUs, each `busy` of the time in user mode.
struct NodeModel {
  double busy = 0.30;
  double idle[2] = {1000, 1000}, user[2] = {500, 500};
  void tick() {
    for (int c = 0; c < 2; ++c) {
      idle[c] += 0.05 * (1 - busy);
      user[c] += 0.05 * busy;
    }
  }
  std::string render() const {
    std::string o = "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n"
                    "# TYPE node_cpu_seconds_total counter\n";
    for (int c = 0; c < 2; ++c) {
      std::string cpu = "cpu=\"" + std::to_string(c) + "\"";
      o += "node_cpu_seconds_total{" + cpu + ",mode=\"idle\"} " + num(idle[c]) + "\n";
      o += "node_cpu_seconds_total{" + cpu + ",mode=\"system\"} 40\n";
      o += "node_cpu_seconds_total{" + cpu + ",mode=\"user\"} " + num(user[c]) + "\n";
    }
    return o;
  }
};

// Tests Prometheus mode on TGI with node-exporter as a job of its own: the doctor finds the host
// CPU of the TGI target's host (not of its job), and a slowdown that comes with the host's CPUs
// going from 30 % to 95 % busy carries that as evidence and as its first next step.
TEST(DoctorDialectReplayIntegrationTest, TgiWithHostCpuThroughPrometheus) {
  TgiModel tgi;
  NodeModel node;
  Replay tgi_replay([&] { tgi.tick(); }, [&] { return tgi.render(); });
  Replay node_replay([&] { node.tick(); }, [&] { return node.render(); });
  ASSERT_TRUE(tgi_replay.ok() && node_replay.ok());
  auto target = [](const std::string& url) { return url.substr(7, url.size() - 7 - 8); };  // host:port
  std::string config = "global:\n  scrape_interval: 1s\nscrape_configs:\n"
                       "  - job_name: tgi\n    static_configs:\n      - targets: ['" + target(tgi_replay.url()) + "']\n"
                       "  - job_name: node\n    static_configs:\n      - targets: ['" + target(node_replay.url()) + "']\n";
  inferscope::testing::PrometheusProcess prom(config);
  ASSERT_TRUE(prom.ok()) << prom.error();
  auto client = promapi::PrometheusClient::create(prom.url());
  ASSERT_TRUE(client) << client.error().message;
  ASSERT_TRUE(inferscope::testing::wait_until(
      [&] {
        auto r = client->query("node_cpu_seconds_total{job=\"node\"} and on() tgi_request_count{job=\"tgi\"}");
        return r && !r->series.empty();
      },
      std::chrono::seconds(20), std::chrono::milliseconds(100)));
  std::this_thread::sleep_for(std::chrono::seconds(12));
  double change = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  tgi_replay.change([&] { tgi.tpot = 0.060; });
  node_replay.change([&] { node.busy = 0.95; });
  std::this_thread::sleep_for(std::chrono::milliseconds(11500));
  DoctorRequest request;
  request.prometheus_url = prom.url();
  request.at = change + 10;
  request.window_s = 10;
  request.baseline_s = 12;
  request.selector = "{job=\"tgi\"}";
  auto d = run_doctor(request);
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->verdict, "degraded") << to_text(*d);
  ASSERT_FALSE(d->findings.empty());
  const Finding& top = d->findings.front();
  EXPECT_EQ(top.cause, "decode_slowdown") << to_text(*d);
  EXPECT_EQ(top.stage, "inference") << to_text(*d);
  const Quantity* cpu = d->snapshot.find(SignalId::kHostCpuBusy);
  ASSERT_NE(cpu, nullptr) << to_text(*d);
  // Scrapes are 1 s apart and not aligned with the change, so one of the ten incident intervals
  // (or the last baseline one) may straddle it: 0.885 <= incident <= 0.95, 0.30 <= baseline <= 0.36.
  EXPECT_GE(cpu->baseline.mean, 0.27) << to_text(*d);
  EXPECT_LE(cpu->baseline.mean, 0.40) << to_text(*d);
  EXPECT_GE(cpu->incident.mean, 0.86) << to_text(*d);
  EXPECT_LE(cpu->incident.mean, 0.98) << to_text(*d);
  ASSERT_FALSE(top.next_steps.empty());
  EXPECT_NE(top.next_steps.front().find("CPUs are saturated"), std::string::npos) << to_text(*d);
}

}  // namespace
}  // namespace inferscope::doctor
