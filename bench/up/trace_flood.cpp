// trace_flood: floods a running `inferscope up` with OTLP spans (src/trace's encoder, serve-shaped
// traces: a root with six stage children) at --rate spans/s for --duration, while a probe thread
// times up's GET /metrics and POST /api/alertmanager/webhook (a distinct alert each time, so the
// relay stores it) every 100 ms. The same probes run first for --idle with no spans: the peer
// baseline. Prints per phase the probes' p50/p99/max, then flood/idle ratios, and what became of
// the spans (sent, answered 200, partial success = dropped by up's queue, 503 = lane full).
// Usage: trace_flood --api http://127.0.0.1:PORT [--rate 10000] [--duration 60] [--idle 20] [--batch 500]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "net/blocking_client.h"
#include "trace/otlp.h"

namespace {

using namespace inferscope;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string api;
  double rate = 10000;
  double duration_s = 60;
  double idle_s = 20;
  int batch = 500;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const char* value = argv[i + 1];
    if (name == "--api") f.api = value;
    else if (name == "--rate") f.rate = std::atof(value);
    else if (name == "--duration") f.duration_s = std::atof(value);
    else if (name == "--idle") f.idle_s = std::atof(value);
    else if (name == "--batch") f.batch = std::atoi(value);
    else {
      std::fprintf(stderr, "trace_flood: unknown flag %s\n", name.c_str());
      std::exit(2);
    }
  }
  if (f.api.empty() || f.rate <= 0 || f.duration_s <= 0 || f.batch < 7) {
    std::fprintf(stderr, "usage: trace_flood --api URL [--rate N] [--duration S] [--idle S] [--batch N>=7]\n");
    std::exit(2);
  }
  return f;
}

std::uint64_t unix_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// body builds one request of `spans` spans: whole traces of a root and six stage children.
std::string body(int spans) {
  static const char* kStages[] = {"preprocess", "queue", "prefill", "decode", "postprocess", "send"};
  trace::ScopeSpans scope{.scope_name = "inferscope", .scope_version = "flood", .spans = {}};
  const std::uint64_t now = unix_ns();
  for (int t = 0; t < spans / 7; ++t) {
    trace::Span root;
    root.trace_id = trace::random_trace_id();
    root.span_id = trace::random_span_id();
    root.name = "chat sim";
    root.kind = trace::SpanKind::kServer;
    root.start_unix_ns = now - 900'000'000 - static_cast<std::uint64_t>(std::rand() % 500'000'000);
    root.end_unix_ns = now;
    root.attributes = {{"gen_ai.operation.name", std::string("chat")},
                       {"gen_ai.request.model", std::string("sim")},
                       {"gen_ai.usage.output_tokens", std::int64_t{64}},
                       {"gen_ai.latency.e2e", 0.9},
                       {"http.response.status_code", std::int64_t{200}}};
    std::uint64_t at = root.start_unix_ns;
    const std::uint64_t step = (root.end_unix_ns - root.start_unix_ns) / 6;
    for (const char* stage : kStages) {
      trace::Span s;
      s.trace_id = root.trace_id;
      s.span_id = trace::random_span_id();
      s.parent_span_id = root.span_id;
      s.name = stage;
      s.start_unix_ns = at;
      s.end_unix_ns = at + step;
      at += step;
      s.attributes = {{"inferscope.stage", std::string(stage)}};
      scope.spans.push_back(std::move(s));
    }
    scope.spans.push_back(std::move(root));
  }
  trace::ExportRequest r;
  r.resources.push_back({.resource_attributes = {{"service.name", std::string("flood")}}, .scopes = {std::move(scope)}});
  return trace::encode_export_request(r);
}

struct Probes {
  std::vector<double> metrics_ms, webhook_ms;
  int failures = 0;
};

void probe_until(net::BlockingClient& client, Clock::time_point end, Probes& out, int& alert_number) {
  while (Clock::now() < end) {
    const auto next = Clock::now() + std::chrono::milliseconds(100);
    auto t0 = Clock::now();
    auto m = client.request("GET", "/metrics");
    auto t1 = Clock::now();
    if (m && m->status == 200) out.metrics_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    else ++out.failures;
    const std::string n = std::to_string(++alert_number);
    const std::string webhook =
        R"({"receiver":"inferscope","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"FloodProbe)" + n +
        R"(","severity":"info","job":"flood"},"annotations":{},"startsAt":"2026-12-01T00:00:00Z","endsAt":"0001-01-01T00:00:00Z",)"
        R"("generatorURL":"http://127.0.0.1:0/graph","fingerprint":"f100d)" + n +
        R"("}],"groupLabels":{},"commonLabels":{"alertname":"FloodProbe)" + n +
        R"("},"commonAnnotations":{},"externalURL":"http://127.0.0.1:0","version":"4","groupKey":"flood)" + n +
        R"(","truncatedAlerts":0})";
    t0 = Clock::now();
    auto w = client.request("POST", "/api/alertmanager/webhook", webhook, "application/json");
    t1 = Clock::now();
    if (w && w->status == 200) out.webhook_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    else ++out.failures;
    std::this_thread::sleep_until(next);
  }
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

void print_phase(const char* name, const Probes& p) {
  std::printf("%-6s /metrics  n=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms\n", name, p.metrics_ms.size(),
              quantile(p.metrics_ms, 0.5), quantile(p.metrics_ms, 0.99), quantile(p.metrics_ms, 1.0));
  std::printf("%-6s webhook   n=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms (failed probes: %d)\n", name,
              p.webhook_ms.size(), quantile(p.webhook_ms, 0.5), quantile(p.webhook_ms, 0.99),
              quantile(p.webhook_ms, 1.0), p.failures);
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = parse(argc, argv);
  auto probe_client = net::BlockingClient::create(f.api);
  if (!probe_client) {
    std::fprintf(stderr, "trace_flood: %s\n", probe_client.error().message.c_str());
    return 2;
  }
  int alert_number = 0;
  Probes idle, flood;
  probe_until(*probe_client, Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f.idle_s)),
              idle, alert_number);

  std::atomic<bool> flooding{true};
  std::atomic<long> sent{0}, ok{0}, partial{0}, unavailable{0}, other{0};
  std::thread sender([&] {
    auto client = probe_client->sibling();
    const int per_body = f.batch / 7 * 7;
    const auto interval = std::chrono::duration<double>(per_body / f.rate);
    // Bodies are built ahead (fresh ids each), so the sender's own CPU does not set the rate.
    std::vector<std::string> bodies;
    for (int i = 0; i < 64; ++i) bodies.push_back(body(per_body));
    auto next = Clock::now();
    std::size_t i = 0;
    while (flooding.load()) {
      auto r = client.request("POST", "/v1/traces", bodies[i++ % bodies.size()], "application/x-protobuf");
      sent += per_body;
      if (!r) ++other;
      else if (r->status == 200 && r->body.empty()) ok += per_body;
      else if (r->status == 200) partial += per_body;
      else if (r->status == 503) unavailable += per_body;
      else ++other;
      next += std::chrono::duration_cast<Clock::duration>(interval);
      std::this_thread::sleep_until(next);  // behind schedule: send at once (no coordinated omission)
    }
  });
  const auto flood_start = Clock::now();
  probe_until(*probe_client, flood_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f.duration_s)),
              flood, alert_number);
  flooding = false;
  sender.join();
  const double flood_s = std::chrono::duration<double>(Clock::now() - flood_start).count();

  print_phase("idle", idle);
  print_phase("flood", flood);
  auto ratio = [](const std::vector<double>& a, const std::vector<double>& b, double q) {
    const double base = quantile(b, q);
    return base > 0 ? quantile(a, q) / base : 0;
  };
  std::printf("ratio flood/idle: /metrics p50 %.2f p99 %.2f; webhook p50 %.2f p99 %.2f\n",
              ratio(flood.metrics_ms, idle.metrics_ms, 0.5), ratio(flood.metrics_ms, idle.metrics_ms, 0.99),
              ratio(flood.webhook_ms, idle.webhook_ms, 0.5), ratio(flood.webhook_ms, idle.webhook_ms, 0.99));
  std::printf("spans sent %ld in %.1f s (%.0f/s): accepted %ld, dropped by up's queue (partial success) %ld, "
              "503 lane full %ld, other failures %ld requests\n",
              sent.load(), flood_s, static_cast<double>(sent.load()) / flood_s, ok.load(), partial.load(),
              unavailable.load(), other.load());
  return 0;
}
