#include "bench/client_metrics.h"

#include <array>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

#include "bench/slo.h"

namespace inferscope::bench {

namespace m = inferscope::metrics;

struct ClientMetrics::Impl {
  m::Registry registry;
  std::unique_ptr<m::MetricsServer> server;
  std::array<m::Counter, loadgen::kErrorKindCount> requests;  // by outcome (none = ok)
  m::Counter output_tokens;
  m::Gauge in_flight, dispatched;
  m::Histogram ttft_start, ttft_intended, e2e_start, e2e_intended, tpot, itl, lag;
};

ClientMetrics::ClientMetrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientMetrics::~ClientMetrics() {
  if (impl_->server) impl_->server->stop();
}

Result<std::unique_ptr<ClientMetrics>> ClientMetrics::start(std::uint16_t port) {
  auto impl = std::make_unique<Impl>();
  m::Registry& r = impl->registry;
  auto& requests = r.counter({.name = "inferscope_bench_requests_total",
                              .help = "Requests finished by the load generator, by outcome (ok or error kind).",
                              .label_names = {"outcome"}});
  for (int k = 0; k < loadgen::kErrorKindCount; ++k) {
    std::string_view name = k == 0 ? std::string_view("ok") : to_string(static_cast<loadgen::ErrorKind>(k));
    impl->requests[static_cast<std::size_t>(k)] = requests.with({name});
  }
  impl->output_tokens = r.counter({.name = "inferscope_bench_output_tokens_total",
                                   .help = "Output tokens received (usage when sent, else counted)."}).with({});
  impl->in_flight = r.gauge({.name = "inferscope_bench_in_flight", .help = "Requests in flight."}).with({});
  impl->dispatched = r.gauge({.name = "inferscope_bench_dispatched", .help = "Requests dispatched so far."}).with({});
  auto histogram = [&](const char* name, const char* help, std::vector<std::string> labels) -> m::HistogramFamily& {
    m::HistogramOptions o;
    o.name = name;
    o.help = help;
    o.label_names = std::move(labels);
    o.unit = "seconds";
    o.buckets = m::default_latency_buckets();
    return r.histogram(o);
  };
  auto& ttft = histogram("inferscope_bench_ttft_seconds",
                         "Client TTFT (first output event), from the actual start or the intended send.", {"from"});
  impl->ttft_start = ttft.with({"start"});
  impl->ttft_intended = ttft.with({"intended"});
  auto& e2e = histogram("inferscope_bench_e2e_seconds",
                        "Client end-to-end latency (last output event), from the actual start or the intended send.", {"from"});
  impl->e2e_start = e2e.with({"start"});
  impl->e2e_intended = e2e.with({"intended"});
  impl->tpot = histogram("inferscope_bench_tpot_seconds", "Client time per output token, per request.", {}).with({});
  impl->itl = histogram("inferscope_bench_itl_seconds", "Client gap between output events.", {}).with({});
  impl->lag = histogram("inferscope_bench_schedule_lag_seconds", "Dispatcher lateness against the intended send time.", {}).with({});
  m::MetricsServerOptions options;
  options.port = port;
  auto server = m::MetricsServer::start(r, options);
  if (!server) return server.error();
  impl->server = std::move(*server);
  return std::unique_ptr<ClientMetrics>(new ClientMetrics(std::move(impl)));
}

std::uint16_t ClientMetrics::port() const { return impl_->server->port(); }

void ClientMetrics::on_complete(const loadgen::RequestRecord& r) {
  Impl& i = *impl_;
  i.requests[static_cast<std::size_t>(r.error)].inc();
  if (r.dispatched_ns != loadgen::kNoTime) i.lag.observe(static_cast<double>(r.dispatched_ns - r.intended_ns) / 1e9);
  if (!r.ok()) return;
  i.output_tokens.add(r.output_tokens);
  i.ttft_start.observe(static_cast<double>(r.ttft_anchor_ns() - r.started_ns) / 1e9);
  i.ttft_intended.observe(static_cast<double>(r.ttft_anchor_ns() - r.intended_ns) / 1e9);
  i.e2e_start.observe(static_cast<double>(r.e2e_anchor_ns() - r.started_ns) / 1e9);
  i.e2e_intended.observe(static_cast<double>(r.e2e_anchor_ns() - r.intended_ns) / 1e9);
  if (double t = tpot_ns(r); t > 0) i.tpot.observe(t / 1e9);
  for (std::size_t k = 1; k < r.token_event_us.size(); ++k) {
    i.itl.observe(static_cast<double>(r.token_event_us[k] - r.token_event_us[k - 1]) / 1e6);
  }
}

void ClientMetrics::on_tick(const loadgen::RunStatus& s) {
  impl_->in_flight.set(static_cast<double>(s.in_flight));
  impl_->dispatched.set(static_cast<double>(s.dispatched));
}

}  // namespace inferscope::bench
