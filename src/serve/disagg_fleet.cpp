// The router and the KV link of a disaggregated serve (docs/disaggregation.md). Dynamo's and
// TensorRT-LLM's series keep the names and labels of ../shared/reference/serving-topologies.md §4.
#include "serve/disagg_fleet.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <unordered_set>

#include "serve/engine/engine.h"
#include "serve/engine/hashing.h"
#include "serve/serve_metrics.h"

namespace inferscope::serve {
namespace {

using DisaggLabels = std::vector<std::string>;

metrics::GaugeFamily& disagg_gauge(metrics::Registry& r, std::string name, std::string help, DisaggLabels labels) {
  metrics::MetricOptions o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.label_names = std::move(labels);
  return r.gauge(o);
}

metrics::CounterFamily& disagg_counter(metrics::Registry& r, std::string name, std::string help, DisaggLabels labels) {
  metrics::MetricOptions o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.label_names = std::move(labels);
  return r.counter(o);
}

metrics::HistogramFamily& disagg_histogram(metrics::Registry& r, std::string name, std::string help,
                                           DisaggLabels labels, std::vector<double> buckets) {
  metrics::HistogramOptions o;
  o.name = std::move(name);
  o.help = std::move(help);
  o.label_names = std::move(labels);
  o.buckets = std::move(buckets);
  return r.histogram(o);
}

// Buckets. The reference gives Dynamo's first and last bounds (and e2e's whole list); the ones
// between are a 1-2.2-4.7 progression, not Dynamo's exact list. trtllm's bytes buckets are exact.
const std::vector<double> kDisaggE2eBuckets = {0, 2, 4, 8, 16, 32, 64, 130, 260, 510};
const std::vector<double> kDisaggTtftBuckets = {0,   0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47,
                                                1,   2.2,    4.7,    10,   22,    47,    100, 220, 480};
const std::vector<double> kDisaggItlBuckets = {0, 0.0019, 0.004, 0.0085, 0.018, 0.038, 0.08, 0.17, 0.36, 0.75, 1.0, 2.0};
const std::vector<double> kDisaggStageBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                 0.05,   0.1,     0.25,   0.5,   1,      2.5,   5};
const std::vector<double> kDisaggTokenBuckets = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
const std::vector<double> kDisaggBytesBuckets = {1e5, 5e5, 1e6, 5e6, 1e7, 5e7, 1e8, 5e8, 1e9, 5e9};
const std::vector<double> kDisaggLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

std::vector<double> disagg_ratio_buckets() {
  std::vector<double> out;
  for (int i = 1; i <= 20; ++i) out.push_back(i * 0.05);
  return out;
}

}  // namespace

std::string pool_endpoint(std::string_view pool, std::uint32_t index) {
  return std::string(pool) + "-" + std::to_string(index);
}

std::uint32_t active_workers(const FaultSet& faults, std::string_view pool, std::uint32_t size) {
  for (const PoolWorkers& cut : faults.pool_workers)
    if (cut.pool == pool) return std::clamp<std::uint32_t>(cut.count, 1, size);
  return size;
}

struct DisaggFleet::State {
  DisaggOptions options;
  std::vector<Engine*> engines;
  std::uint32_t block_size = 16;
  double kv_bytes_per_token = 0;
  std::uint64_t capacity_blocks = 0;
  std::vector<std::string> models;

  // Router state (mu): per decode worker, the block hashes it holds (FIFO-bounded by its KV
  // capacity, as Dynamo's indexer learns them from KV events) and its active blocks.
  std::mutex mu;
  std::vector<std::unordered_set<std::uint64_t>> cached;
  std::vector<std::deque<std::uint64_t>> cached_order;
  std::vector<std::uint64_t> active_blocks;
  std::vector<std::int64_t> queued_prefill_tokens;  // per prefill worker
  std::uint32_t rotate = 0;
  std::atomic<std::int64_t> routing{0};  // requests in the router now

  // Series.
  metrics::GaugeFamily *pool_waiting, *pool_running, *pool_workers, *endpoint_requests;
  metrics::HistogramFamily *kv_bytes, *prefix_hit;
  metrics::CounterFamily *decisions;
  metrics::Counter kv_failures;
  metrics::GaugeFamily *dyn_pending, *dyn_decode_blocks, *dyn_prefill_tokens, *dyn_active;
  metrics::CounterFamily *dyn_requests, *dyn_output_tokens;
  metrics::HistogramFamily *dyn_e2e, *dyn_ttft, *dyn_itl, *dyn_isl, *dyn_osl, *dyn_stage, *dyn_kv_hit;
  metrics::HistogramFamily *trt_latency, *trt_bytes;
  metrics::CounterFamily *trt_success;
  FaultSet last_faults;  // for refresh from the collect hook (mu)

  std::uint32_t prefill_count() const { return options.prefill_workers; }
  std::uint32_t decode_count() const { return options.decode_workers; }
  std::string_view model() const { return models.front(); }
  void refresh(const FaultSet& faults);
};

DisaggFleet::DisaggFleet(const DisaggOptions& options, std::vector<Engine*> engines, std::uint32_t block_size,
                         double kv_bytes_per_token, std::uint64_t kv_capacity_blocks,
                         std::vector<std::string> model_names, metrics::Registry& r)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.options = options;
  s.engines = std::move(engines);
  s.block_size = std::max<std::uint32_t>(block_size, 1);
  s.kv_bytes_per_token = kv_bytes_per_token;
  s.capacity_blocks = std::max<std::uint64_t>(kv_capacity_blocks, 1);
  s.models = std::move(model_names);
  s.cached.resize(options.decode_workers);
  s.cached_order.resize(options.decode_workers);
  s.active_blocks.assign(options.decode_workers, 0);
  s.queued_prefill_tokens.assign(options.prefill_workers, 0);

  s.pool_waiting = &disagg_gauge(r, "inferscope_pool_requests_waiting",
                                 "Requests waiting in a pool: its workers' queues plus the router's pending for it.", {"pool"});
  s.pool_running = &disagg_gauge(r, "inferscope_pool_requests_running", "Requests running on a pool's workers.", {"pool"});
  s.pool_workers = &disagg_gauge(r, "inferscope_pool_workers", "Workers of a pool that take requests now.", {"pool"});
  s.endpoint_requests = &disagg_gauge(r, "inferscope_endpoint_requests",
                                      "Requests waiting or running on one worker.", {"pool", "endpoint"});
  s.kv_bytes = &disagg_histogram(r, "inferscope_kv_transfer_bytes", "KV cache bytes per prefill-to-decode transfer.", {},
                                 kDisaggBytesBuckets);
  s.kv_failures = disagg_counter(r, "inferscope_kv_transfer_failures_total",
                                 "Failed KV transfer attempts (each retried).", {}).with({});
  s.prefix_hit = &disagg_histogram(r, "inferscope_router_prefix_hit_ratio",
                                   "Per routing decision: share of the prompt's blocks cached on the chosen decode worker.",
                                   {}, disagg_ratio_buckets());
  s.decisions = &disagg_counter(r, "inferscope_router_decisions_total", "Routing decisions by chosen worker.",
                                {"pool", "endpoint"});
  // Dynamo frontend and router (serving-topologies.md §4.1-4.3).
  s.dyn_requests = &disagg_counter(r, "dynamo_frontend_requests_total", "Completed requests (Dynamo frontend).",
                                   {"endpoint", "model", "request_type", "status", "error_type"});
  s.dyn_active = &disagg_gauge(r, "dynamo_frontend_active_requests", "Requests in the frontend (Dynamo).", {"model"});
  s.dyn_e2e = &disagg_histogram(r, "dynamo_frontend_request_duration_seconds", "Request duration (Dynamo frontend).",
                                {"model"}, kDisaggE2eBuckets);
  s.dyn_ttft = &disagg_histogram(r, "dynamo_frontend_time_to_first_token_seconds", "TTFT (Dynamo frontend).", {"model"},
                                 kDisaggTtftBuckets);
  s.dyn_itl = &disagg_histogram(r, "dynamo_frontend_inter_token_latency_seconds", "ITL (Dynamo frontend).", {"model"},
                                kDisaggItlBuckets);
  s.dyn_isl = &disagg_histogram(r, "dynamo_frontend_input_sequence_tokens", "Input sequence length (Dynamo frontend).",
                                {"model"}, kDisaggTokenBuckets);
  s.dyn_osl = &disagg_histogram(r, "dynamo_frontend_output_sequence_tokens", "Output sequence length (Dynamo frontend).",
                                {"model"}, kDisaggTokenBuckets);
  s.dyn_output_tokens = &disagg_counter(r, "dynamo_frontend_output_tokens_total", "Output tokens (Dynamo frontend).", {"model"});
  s.dyn_stage = &disagg_histogram(r, "dynamo_frontend_stage_duration_seconds", "Frontend pipeline stage (Dynamo).",
                                  {"stage"}, kDisaggStageBuckets);
  s.dyn_pending = &disagg_gauge(r, "dynamo_frontend_router_queue_pending_requests",
                                "Requests pending in the router's scheduler queue (Dynamo).", {"worker_type"});
  s.dyn_decode_blocks = &disagg_gauge(r, "dynamo_frontend_worker_active_decode_blocks",
                                      "Active decode KV blocks per worker (Dynamo).", {"worker_id", "dp_rank", "worker_type"});
  s.dyn_prefill_tokens = &disagg_gauge(r, "dynamo_frontend_worker_active_prefill_tokens",
                                       "Queued prefill tokens per worker (Dynamo).", {"worker_id", "dp_rank", "worker_type"});
  s.dyn_kv_hit = &disagg_histogram(r, "dynamo_component_router_kv_hit_rate",
                                   "Predicted prefix overlap at routing time (Dynamo KV router).",
                                   {"dynamo_namespace", "dynamo_component", "dynamo_endpoint", "router_id"},
                                   disagg_ratio_buckets());
  // TensorRT-LLM backend's KV transfer series (§4.5).
  const DisaggLabels trt = {"model_name", "disaggregation_mode", "engine_type"};
  s.trt_latency = &disagg_histogram(r, "trtllm_kv_transfer_latency_seconds", "KV transfer latency per request (TRT-LLM).",
                                    trt, kDisaggLatencyBuckets);
  s.trt_bytes = &disagg_histogram(r, "trtllm_kv_transfer_bytes", "KV bytes per transfer (TRT-LLM).", trt, kDisaggBytesBuckets);
  s.trt_success = &disagg_counter(r, "trtllm_kv_transfer_success_total", "Successful KV transfers (TRT-LLM, prefill side).", trt);

  // Series present from the start (a pool at 0 is a value, not a missing series).
  for (std::string_view model : s.models) {
    s.dyn_active->with({model});
    s.dyn_output_tokens->with({model});
  }
  for (std::string_view stage : {"preprocess", "route", "postprocess"}) s.dyn_stage->with({stage});
  s.trt_success->with({s.model(), "prefill", "trtllm"});
  for (std::uint32_t i = 0; i < s.prefill_count(); ++i) s.decisions->with({"prefill", pool_endpoint("prefill", i)});
  for (std::uint32_t i = 0; i < s.decode_count(); ++i) s.decisions->with({"decode", pool_endpoint("decode", i)});
  s.prefix_hit->with({});
  s.kv_bytes->with({});
  s.dyn_kv_hit->with({"inferscope", "router", "generate", "0"});
  refresh(FaultSet{});
  r.add_collect_hook([weak = std::weak_ptr<State>(state_)] {
    auto alive = weak.lock();
    if (!alive) return;
    FaultSet faults;
    {
      std::lock_guard lock(alive->mu);
      faults = alive->last_faults;
    }
    alive->refresh(faults);
  });
}

DisaggFleet::~DisaggFleet() = default;

const DisaggOptions& DisaggFleet::options() const { return state_->options; }

void DisaggFleet::begin_routing() { state_->routing.fetch_add(1); }
void DisaggFleet::end_routing() { state_->routing.fetch_sub(1); }

// route follows Dynamo's KV router (KvScheduler with temperature 0): for each decode worker,
//   cost = overlap_weight * (request_blocks - overlap_blocks)   (prefill work the worker would redo)
//        + load_weight * (active_blocks + request_blocks)        (its decode load after taking it)
// with overlap_weight = 1 (Dynamo's default overlap_score_weight) and load_weight = 1, or
// 1 - weight for the endpoint a route_skew fault favours; the lowest cost wins, ties go to the
// first from a start index that rotates per request. The prefill worker is the least loaded
// (waiting*4 + running, the data-parallel dispatcher's rule) among the pool's active workers.
RouteDecision DisaggFleet::route(const std::vector<std::uint32_t>& prompt, const FaultSet& faults) {
  State& s = *state_;
  RouteDecision d;
  d.prompt_tokens = static_cast<std::uint32_t>(prompt.size());
  std::vector<std::uint64_t> hashes;
  std::uint64_t h = 0x1234'5678'9ABC'DEF0ULL;
  for (std::size_t b = 0; (b + 1) * s.block_size <= prompt.size(); ++b) {
    for (std::size_t t = b * s.block_size; t < (b + 1) * s.block_size; ++t) h = mix64(h ^ prompt[t]);
    hashes.push_back(h);
  }
  d.request_blocks = static_cast<std::uint32_t>(hashes.size());
  const std::uint32_t prefill_active = active_workers(faults, "prefill", s.prefill_count());
  const std::uint32_t decode_active = active_workers(faults, "decode", s.decode_count());
  std::lock_guard lock(s.mu);
  const std::uint32_t start = s.rotate++;
  double best_cost = 0;
  bool have = false;
  for (std::uint32_t i = 0; i < decode_active; ++i) {
    const std::uint32_t w = (start + i) % decode_active;
    std::uint32_t overlap = 0;
    while (overlap < hashes.size() && s.cached[w].count(hashes[overlap])) ++overlap;
    double load_weight = 1.0;
    if (faults.route_skew.active() && faults.route_skew.endpoint == pool_endpoint("decode", w))
      load_weight = 1.0 - faults.route_skew.weight;
    const double cost = static_cast<double>(d.request_blocks - overlap) +
                        load_weight * static_cast<double>(s.active_blocks[w] + d.request_blocks);
    if (!have || cost < best_cost) {
      have = true;
      best_cost = cost;
      d.decode = w;
      d.overlap_blocks = overlap;
    }
  }
  std::uint64_t best_load = UINT64_MAX;
  for (std::uint32_t i = 0; i < prefill_active; ++i) {
    const std::uint32_t w = (start + i) % prefill_active;
    const auto [waiting, running] = s.engines[w]->load();
    const std::uint64_t load = std::uint64_t{waiting} * 4 + running;
    if (load < best_load) {
      best_load = load;
      d.prefill = w;
    }
  }
  // Book the prompt on the decode worker: it will hold these blocks after the transfer.
  auto& cached = s.cached[d.decode];
  auto& order = s.cached_order[d.decode];
  for (std::uint64_t hash : hashes) {
    if (cached.insert(hash).second) order.push_back(hash);
  }
  while (order.size() > s.capacity_blocks) {
    cached.erase(order.front());
    order.pop_front();
  }
  s.active_blocks[d.decode] += d.request_blocks + 1;
  s.queued_prefill_tokens[d.prefill] += d.prompt_tokens;
  const std::uint64_t lacking = d.prompt_tokens - std::uint64_t{d.overlap_blocks} * s.block_size;
  d.kv_bytes = static_cast<std::uint64_t>(static_cast<double>(lacking) * s.kv_bytes_per_token);
  const double hit = d.request_blocks ? static_cast<double>(d.overlap_blocks) / d.request_blocks : 0.0;
  s.prefix_hit->with({}).observe(hit);
  s.dyn_kv_hit->with({"inferscope", "router", "generate", "0"}).observe(hit);
  s.decisions->with({"prefill", pool_endpoint("prefill", d.prefill)}).inc();
  s.decisions->with({"decode", pool_endpoint("decode", d.decode)}).inc();
  return d;
}

void DisaggFleet::prefill_done(const RouteDecision& d) {
  std::lock_guard lock(state_->mu);
  state_->queued_prefill_tokens[d.prefill] -= d.prompt_tokens;
}

void DisaggFleet::release(const RouteDecision& d) {
  std::lock_guard lock(state_->mu);
  auto& active = state_->active_blocks[d.decode];
  active -= std::min<std::uint64_t>(active, d.request_blocks + 1);
}

double DisaggFleet::transfer_seconds(const RouteDecision& d, const FaultSet& faults) const {
  const State& s = *state_;
  double seconds = s.options.kv_link_latency_ms / 1000.0 +
                   static_cast<double>(d.kv_bytes) / (s.options.kv_link_gb_per_s * 1e9);
  seconds *= faults.kv_transfer;
  if (faults.kv_link.active() && static_cast<std::uint32_t>(faults.kv_link.worker) == d.decode) seconds *= faults.kv_link.factor;
  return seconds;
}

void DisaggFleet::transfer_failed() { state_->kv_failures.inc(); }

void DisaggFleet::transfer_done(const RouteDecision& d, double real_seconds) {
  State& s = *state_;
  const auto bytes = static_cast<double>(d.kv_bytes);
  s.kv_bytes->with({}).observe(bytes);
  s.trt_bytes->with({s.model(), "prefill", "trtllm"}).observe(bytes);
  s.trt_latency->with({s.model(), "prefill", "trtllm"}).observe(real_seconds);
  s.trt_success->with({s.model(), "prefill", "trtllm"}).inc();
}

void DisaggFleet::begin_request(std::string_view model) {
  if (!model.empty()) state_->dyn_active->with({model}).inc();
}

void DisaggFleet::end_request(std::string_view model) {
  if (!model.empty()) state_->dyn_active->with({model}).dec();
}

void DisaggFleet::record_request(const timeline::RequestTimeline& t, const timeline::TimelineSummary& summary,
                                 const RequestOutcome& outcome, bool stream) {
  State& s = *state_;
  std::string_view model = outcome.model.empty() ? std::string_view("other") : outcome.model;
  const bool ok = outcome.http_status == 200 && (summary.reason == timeline::FinishReason::kStop ||
                                                 summary.reason == timeline::FinishReason::kLength);
  std::string_view error_type;
  if (!ok) {
    if (outcome.http_status == 404) error_type = "not_found";
    else if (outcome.http_status == 400) error_type = "validation";
    else if (outcome.http_status == 503 || outcome.http_status == 429) error_type = "overload";
    else if (summary.reason == timeline::FinishReason::kAbort) error_type = "cancelled";
    else error_type = "internal";
  }
  const std::string_view endpoint = outcome.route == "/v1/chat/completions" ? "chat_completions" : "completions";
  s.dyn_requests->with({endpoint, model, stream ? "stream" : "unary", ok ? "success" : "error", error_type}).inc();
  s.dyn_e2e->with({model}).observe(summary.e2e_seconds);
  if (summary.ttft_seconds) s.dyn_ttft->with({model}).observe(*summary.ttft_seconds);
  auto itl = s.dyn_itl->with({model});
  timeline::for_each_output_gap(t, [&](double gap, std::uint32_t) { itl.observe(gap); });
  s.dyn_isl->with({model}).observe(summary.prompt_tokens);
  if (ok) s.dyn_osl->with({model}).observe(summary.output_tokens);
  s.dyn_output_tokens->with({model}).add(summary.output_tokens);
  const auto stage = [&](timeline::Stage st) { return summary.stage_seconds[static_cast<std::size_t>(st)]; };
  if (auto v = stage(timeline::Stage::kPreprocess)) s.dyn_stage->with({"preprocess"}).observe(*v);
  if (auto v = stage(timeline::Stage::kRoute)) s.dyn_stage->with({"route"}).observe(*v);
  if (auto v = stage(timeline::Stage::kPostprocess)) s.dyn_stage->with({"postprocess"}).observe(*v);
}

void DisaggFleet::refresh(const FaultSet& faults) { state_->refresh(faults); }

void DisaggFleet::set_faults(const FaultSet& faults) {
  {
    std::lock_guard lock(state_->mu);
    state_->last_faults = faults;
  }
  state_->refresh(faults);
}

void DisaggFleet::State::refresh(const FaultSet& faults) {
  State& s = *this;
  const std::int64_t routing = s.routing.load();
  std::vector<std::int64_t> prefill_tokens;
  std::vector<std::uint64_t> active;
  {
    std::lock_guard lock(s.mu);
    prefill_tokens = s.queued_prefill_tokens;
    active = s.active_blocks;
  }
  for (std::string_view pool : {"prefill", "decode"}) {
    const bool prefill = pool == "prefill";
    const std::uint32_t size = prefill ? s.prefill_count() : s.decode_count();
    const std::uint32_t first = prefill ? 0 : s.prefill_count();
    std::uint64_t waiting = 0, running = 0;
    for (std::uint32_t i = 0; i < size; ++i) {
      const auto [w, r] = s.engines[first + i]->load();
      waiting += w;
      running += r;
      s.endpoint_requests->with({pool, pool_endpoint(pool, i)}).set(static_cast<double>(w + r));
      const std::string worker_id = std::to_string(first + i);
      s.dyn_decode_blocks->with({worker_id, "0", pool})
          .set(prefill ? 0.0 : static_cast<double>(active[i]));
      s.dyn_prefill_tokens->with({worker_id, "0", pool})
          .set(prefill ? static_cast<double>(std::max<std::int64_t>(prefill_tokens[i], 0)) : 0.0);
    }
    const double pending = prefill ? static_cast<double>(std::max<std::int64_t>(routing, 0)) : 0.0;
    s.pool_waiting->with({pool}).set(static_cast<double>(waiting) + pending);
    s.pool_running->with({pool}).set(static_cast<double>(running));
    s.pool_workers->with({pool}).set(active_workers(faults, pool, size));
    s.dyn_pending->with({pool}).set(pending);
  }
}

}  // namespace inferscope::serve
