// The doctor against a disaggregated fleet's CONSTRUCTED exposition (tests/doctor/fleet_support.h:
// inferscope serve's disaggregated names, values from the fleet model, not a running fleet) served
// over HTTP and advancing like a busy fleet, read the two ways users read it: through a real
// Prometheus (`--prometheus`: the per-pool and per-endpoint series are selected by their pool and
// endpoint labels; llm-d's pods by pool name and pod) and by direct scrapes (`--scrape`). One
// change half-way: the router piles requests onto decode-0 (routing_imbalance at that endpoint),
// or the prefill pool is cut to one worker (prefill_pool_saturated in pool prefill).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "doctor/diagnosis_format.h"
#include "doctor/doctor_api.h"
#include "doctor/fleet_support.h"
#include "doctor/scrape_collector.h"
#include "net/http_server.h"
#include "net/router.h"
#include "promapi/prometheus_client.h"
#include "support/prometheus_process.h"
#include "support/wait_until.h"

namespace inferscope::doctor {
namespace {

using testing::FleetDialect;
using testing::FleetState;

// FleetReplay serves the fleet's exposition at /metrics and advances it every 50 ms.
class FleetReplay {
 public:
  explicit FleetReplay(FleetState state, FleetDialect dialect = FleetDialect::kInferscope)
      : state_(std::move(state)), renderer_(dialect) {
    router_.get("/metrics", [this](const net::Request&) {
      std::lock_guard lock(mu_);
      net::Response r = net::Response::text(renderer_.render(state_, jitter()));
      r.content_type = "text/plain; version=0.0.4";
      return r;
    });
    auto server = net::HttpServer::start({.port = 0, .io_threads = 1}, router_.handler());
    if (server) server_ = std::move(*server);
    ticker_ = std::thread([this] {
      while (!stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::lock_guard lock(mu_);
        ++ticks_;
        renderer_.advance(state_, 0.05, jitter());
      }
    });
  }
  ~FleetReplay() {
    stop_ = true;
    ticker_.join();
    if (server_) server_->stop();
  }
  bool ok() const { return server_ != nullptr; }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::string url() const { return "http://" + host_port() + "/metrics"; }
  void change(FleetState next) {
    std::lock_guard lock(mu_);
    state_ = std::move(next);
  }

 private:
  // A little noise, alternating every 0.4 s, so a window has some.
  double jitter() const { return 1 + ((ticks_ / 8) % 2 ? 0.03 : -0.03); }

  FleetState state_;
  testing::FleetRenderer renderer_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> server_;
  std::mutex mu_;
  long ticks_ = 0;
  std::atomic<bool> stop_{false};
  std::thread ticker_;
};

FleetState replay_routed_onto_decode0() {
  FleetState s = testing::healthy_fleet();
  s.endpoint("decode-0") = {"decode", "decode-0", 4, 5};
  s.endpoint("decode-1") = {"decode", "decode-1", 0, 1};
  s.queue += 4 / s.rate;
  s.decode *= 1.15;
  s.prefix_hit = 0.55;
  return s;
}

FleetState replay_prefill_cut() {
  FleetState s = testing::healthy_fleet();
  s.endpoint("prefill-1") = {"prefill", "prefill-1", 0, 0};
  s.endpoint("prefill-0") = {"prefill", "prefill-0", 6, 1};
  s.queue += 6 / s.rate;
  return s;
}

// run_fleet_through_prometheus scrapes `replay` with a real Prometheus every second, waits until
// `ready` (a PromQL query) has `series` series, lets 12 s of baseline pass, applies `incident`,
// waits 11.5 s and runs the doctor over 10 s against 12 s of baseline.
Result<Diagnosis> run_fleet_through_prometheus(FleetReplay& replay, const std::string& ready, std::size_t series,
                                               FleetState incident) {
  inferscope::testing::PrometheusProcess prom(inferscope::testing::scrape_config_for({replay.host_port()}, "1s"));
  if (!prom.ok()) return make_error(prom.error());
  auto client = promapi::PrometheusClient::create(prom.url());
  if (!client) return client.error();
  if (!inferscope::testing::wait_until(
          [&] {
            auto r = client->query(ready);
            return r && r->series.size() == series;
          },
          std::chrono::seconds(20), std::chrono::milliseconds(100)))
    return make_error("Prometheus never had " + std::to_string(series) + " series of " + ready);
  std::this_thread::sleep_for(std::chrono::seconds(12));
  const double change = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  replay.change(std::move(incident));
  std::this_thread::sleep_for(std::chrono::milliseconds(11500));
  DoctorRequest request;
  request.prometheus_url = prom.url();
  request.at = change + 10;
  request.window_s = 10;
  request.baseline_s = 12;
  return run_doctor(request);
}

// Tests Prometheus mode on llm-d's names: one InferencePool's pods are read one series each by
// pool name and pod, grouped into prefill and decode peers by their names, and the skew onto the
// decode-0 pod (with the prefix hit up) is routing_imbalance there.
TEST(DoctorFleetIntegrationTest, LlmdRoutingImbalanceThroughPrometheus) {
  FleetReplay replay(testing::healthy_fleet(), FleetDialect::kLlmd);
  ASSERT_TRUE(replay.ok());
  auto d = run_fleet_through_prometheus(replay, "inference_pool_per_pod_queue_size", 4, replay_routed_onto_decode0());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->snapshot.endpoints.size(), 4u) << to_text(*d);
  EXPECT_EQ(d->snapshot.pools.count("decode"), 1u) << to_text(*d);  // summed from the decode pods
  ASSERT_FALSE(d->findings.empty()) << to_text(*d, true);
  const Finding& top = d->findings.front();
  EXPECT_EQ(top.cause, "routing_imbalance") << to_text(*d, true);
  EXPECT_EQ(top.where.pool, "qwen3-pool") << to_text(*d, true);
  EXPECT_EQ(top.where.endpoint, "qwen3-decode-0") << to_text(*d, true);
}

// Tests Prometheus mode: the endpoints are read one series each by pool and endpoint label, and
// the skew onto decode-0 is routing_imbalance there.
TEST(DoctorFleetIntegrationTest, RoutingImbalanceThroughPrometheus) {
  FleetReplay replay(testing::healthy_fleet());
  ASSERT_TRUE(replay.ok());
  auto d = run_fleet_through_prometheus(replay, "inferscope_endpoint_requests", 4, replay_routed_onto_decode0());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->snapshot.endpoints.size(), 4u) << to_text(*d);
  EXPECT_EQ(d->snapshot.pools.size(), 2u) << to_text(*d);
  ASSERT_EQ(d->verdict, "degraded") << to_text(*d, true);
  ASSERT_FALSE(d->findings.empty());
  const Finding& top = d->findings.front();
  EXPECT_EQ(top.cause, "routing_imbalance") << to_text(*d, true);
  EXPECT_EQ(top.where.pool, "decode") << to_text(*d, true);
  EXPECT_EQ(top.where.endpoint, "decode-0") << to_text(*d, true);
}

// Tests direct scrapes of the same exposition over HTTP: the prefill pool cut to one worker is
// prefill_pool_saturated in pool prefill, and not capacity_drop.
TEST(DoctorFleetIntegrationTest, PrefillPoolSaturatedByScrapes) {
  FleetReplay replay(testing::healthy_fleet());
  ASSERT_TRUE(replay.ok());
  ScrapeOptions options{{replay.url()}, 6, 0.25};
  auto scraping = std::async(std::launch::async, [&] { return scrape_rounds(options); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  replay.change(replay_prefill_cut());
  auto result = scraping.get();
  ASSERT_TRUE(result) << result.error().message;
  Snapshot snap = snapshot_from_scrapes(options, *result, "", nullptr);
  EXPECT_EQ(snap.pools.size(), 2u);
  Diagnosis d = diagnose(snap);
  ASSERT_FALSE(d.findings.empty()) << to_text(d, true);
  EXPECT_EQ(d.findings.front().cause, "prefill_pool_saturated") << to_text(d, true);
  EXPECT_EQ(d.findings.front().where.pool, "prefill") << to_text(d, true);
  for (const Finding& f : d.findings) EXPECT_NE(f.cause, "capacity_drop") << to_text(d, true);
}

}  // namespace
}  // namespace inferscope::doctor
