#include "bench/run_stats.h"

#include <algorithm>
#include <map>

namespace inferscope::bench {
namespace {

constexpr double kNsPerMs = 1e6;
constexpr std::int64_t kLateNs = 1'000'000;

double ms(std::int64_t ns) { return static_cast<double>(ns) / kNsPerMs; }

// Samples collects one vector per metric, in kMetricNames order.
struct Samples {
  std::vector<std::vector<double>> v{std::size(kMetricNames)};
  std::vector<double>& at(std::string_view name) {
    for (std::size_t i = 0; i < std::size(kMetricNames); ++i) {
      if (name == kMetricNames[i].first) return v[i];
    }
    return v[0];
  }
};

void add_request(const loadgen::RequestRecord& r, Samples& s) {
  if (r.dispatched_ns != loadgen::kNoTime) {
    s.at("schedule_lag").push_back(ms(r.dispatched_ns - r.intended_ns));
    s.at("queue_time").push_back(ms(r.started_ns - r.dispatched_ns));
  }
  if (r.dns_ns != loadgen::kNoTime) s.at("dns").push_back(ms(r.dns_ns));
  if (r.connect_ns != loadgen::kNoTime) s.at("connect").push_back(ms(r.connect_ns));
  if (r.tls_ns != loadgen::kNoTime) s.at("tls").push_back(ms(r.tls_ns));
  if (!r.ok()) return;
  s.at("ttft").push_back(ms(r.ttft_anchor_ns() - r.started_ns));
  s.at("ttft_corrected").push_back(ms(r.ttft_anchor_ns() - r.intended_ns));
  if (r.first_event_ns != loadgen::kNoTime) s.at("ttft_first_event").push_back(ms(r.first_event_ns - r.started_ns));
  if (r.headers_ns != loadgen::kNoTime) s.at("ttft_headers").push_back(ms(r.headers_ns - r.started_ns));
  s.at("e2el").push_back(ms(r.e2e_anchor_ns() - r.started_ns));
  s.at("e2el_corrected").push_back(ms(r.e2e_anchor_ns() - r.intended_ns));
  if (r.output_tokens > 1 && r.first_content_ns != loadgen::kNoTime) s.at("tpot").push_back(tpot_ns(r) / kNsPerMs);
  // Tokens per event: exact when counted; from usage spread evenly over the events otherwise.
  double tokens_per_event = r.token_events > 0 && r.output_tokens > 0
                                ? static_cast<double>(r.output_tokens) / static_cast<double>(r.token_events)
                                : 1.0;
  for (std::size_t i = 1; i < r.token_event_us.size(); ++i) {
    double gap_ms = static_cast<double>(r.token_event_us[i] - r.token_event_us[i - 1]) / 1e3;
    s.at("itl").push_back(gap_ms);
    s.at("itl_token").push_back(gap_ms / std::max(1.0, tokens_per_event));
  }
}

// peak_concurrency sweeps [started, end) intervals of measured requests.
std::uint32_t peak_concurrency(const std::vector<const loadgen::RequestRecord*>& rs) {
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const loadgen::RequestRecord* r : rs) {
    if (r->started_ns == loadgen::kNoTime || r->end_ns == loadgen::kNoTime) continue;
    edges.emplace_back(r->started_ns, +1);
    edges.emplace_back(r->end_ns, -1);
  }
  std::sort(edges.begin(), edges.end());  // ends (-1) sort before starts at the same time
  int now = 0, peak = 0;
  for (auto [t, d] : edges) peak = std::max(peak, now += d);
  return static_cast<std::uint32_t>(peak);
}

double peak_token_rate(const std::vector<const loadgen::RequestRecord*>& rs, std::int64_t origin) {
  std::map<std::int64_t, double> buckets;
  for (const loadgen::RequestRecord* r : rs) {
    if (!r->ok() || r->output_tokens == 0) continue;
    if (r->token_event_us.empty()) {
      buckets[(r->end_ns - origin) / 1'000'000'000] += r->output_tokens;
      continue;
    }
    double per_event = static_cast<double>(r->output_tokens) / static_cast<double>(r->token_event_us.size());
    for (std::uint32_t us : r->token_event_us) {
      buckets[(r->started_ns + static_cast<std::int64_t>(us) * 1000 - origin) / 1'000'000'000] += per_event;
    }
  }
  double peak = 0;
  for (auto& [k, v] : buckets) peak = std::max(peak, v);
  return peak;
}

bool is_connection_failure(loadgen::ErrorKind k) {
  return k == loadgen::ErrorKind::kRefused || k == loadgen::ErrorKind::kConnect || k == loadgen::ErrorKind::kReset ||
         k == loadgen::ErrorKind::kTruncatedStream;
}

// target_loss walks the records from the last to end backwards while they failed at the connection
// level. The target went away when that tail holds a failed connection attempt (a server that
// only resets streams is misbehaving, not gone).
TargetLoss target_loss(const std::vector<const loadgen::RequestRecord*>& all) {
  std::vector<const loadgen::RequestRecord*> ended;
  for (const loadgen::RequestRecord* r : all) {
    if (r->end_ns != loadgen::kNoTime) ended.push_back(r);
  }
  std::sort(ended.begin(), ended.end(), [](const loadgen::RequestRecord* a, const loadgen::RequestRecord* b) { return a->end_ns < b->end_ns; });
  TargetLoss loss;
  std::size_t tail = ended.size();
  bool connect_failed = false;
  while (tail > 0 && is_connection_failure(ended[tail - 1]->error)) {
    --tail;
    connect_failed |= ended[tail]->error == loadgen::ErrorKind::kRefused || ended[tail]->error == loadgen::ErrorKind::kConnect;
  }
  if (tail == ended.size() || !connect_failed) return loss;
  loss.lost = true;
  loss.failed_after = ended.size() - tail;
  loss.at_s = static_cast<double>(ended[tail]->end_ns) / 1e9;
  for (std::size_t i = tail; i-- > 0;) {
    if (ended[i]->ok()) {
      loss.last_success_s = static_cast<double>(ended[i]->end_ns) / 1e9;
      return loss;
    }
  }
  loss.never_reached = true;
  return loss;
}

}  // namespace

const Summary& RunStats::metric(std::string_view name) const {
  static const Summary kEmpty;
  for (const auto& [n, s] : metrics) {
    if (n == name) return s;
  }
  return kEmpty;
}

RunStats compute_stats(const loadgen::RunResult& run, const SloSpec& slo) {
  RunStats st;
  std::vector<const loadgen::RequestRecord*> measured;
  for (const loadgen::RequestRecord& r : run.records) {
    if (r.warmup) {
      ++st.warmup;
    } else {
      measured.push_back(&r);
    }
  }
  Samples samples;
  std::int64_t first = INT64_MAX, last = 0;
  std::size_t good = 0, late = 0;
  for (const loadgen::RequestRecord* r : measured) {
    first = std::min(first, r->intended_ns);
    if (r->end_ns != loadgen::kNoTime) last = std::max(last, r->end_ns);
    if (r->dispatched_ns != loadgen::kNoTime && r->dispatched_ns - r->intended_ns > kLateNs) ++late;
    ++st.errors[static_cast<std::size_t>(r->error)];
    ++st.token_sources[static_cast<std::size_t>(r->token_source)];
    if (r->ok()) {
      ++st.completed;
      st.total_input_tokens += r->input_tokens;
      ++st.input_token_sources[static_cast<std::size_t>(r->input_token_source)];
      st.total_output_tokens += r->output_tokens;
    } else {
      ++st.failed;
    }
    if (!slo.empty() && slo.met(*r)) ++good;
    add_request(*r, samples);
  }
  for (std::uint32_t us : run.io_loop_lag_us) samples.at("io_loop_lag").push_back(static_cast<double>(us) / 1e3);
  st.duration_s = measured.empty() || last <= first ? 0 : static_cast<double>(last - first) / 1e9;
  if (st.duration_s > 0) {
    st.request_throughput = static_cast<double>(st.completed) / st.duration_s;
    st.output_throughput = static_cast<double>(st.total_output_tokens) / st.duration_s;
    st.total_token_throughput = static_cast<double>(st.total_input_tokens + st.total_output_tokens) / st.duration_s;
    st.request_goodput = static_cast<double>(good) / st.duration_s;
  }
  st.has_slo = !slo.empty();
  if (!measured.empty()) {
    st.slo_attainment = static_cast<double>(good) / static_cast<double>(measured.size());
    st.late_fraction = static_cast<double>(late) / static_cast<double>(measured.size());
  }
  st.client_fell_behind = st.late_fraction > 0.01;
  std::vector<const loadgen::RequestRecord*> all;  // warm-up included: the target may go away during it
  for (const loadgen::RequestRecord& r : run.records) all.push_back(&r);
  st.target_loss = target_loss(all);
  st.peak_concurrency = peak_concurrency(measured);
  st.peak_output_throughput = measured.empty() ? 0 : peak_token_rate(measured, first);
  for (std::size_t i = 0; i < std::size(kMetricNames); ++i) {
    st.metrics.emplace_back(kMetricNames[i].first, summarize(std::move(samples.v[i])));
  }
  return st;
}

}  // namespace inferscope::bench
