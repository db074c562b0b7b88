// File: disagg_fleet.h
// DisaggFleet is the router and the KV link of `serve --prefill-workers N --decode-workers M`
// (docs/disaggregation.md): it picks a decode worker by prefix overlap and load (Dynamo's KV
// router's cost) and the least-loaded prefill worker, times each KV transfer from the bytes the
// decode worker lacks, and exposes the fleet's series (inferscope_pool_*, inferscope_endpoint_*,
// inferscope_kv_transfer_*, inferscope_router_*, and Dynamo's dynamo_frontend_*, dynamo_component_router_*,
// trtllm_kv_transfer_* names). The engines are ServerState::engines: prefill workers 0..N-1,
// decode workers N..N+M-1. Example:
//   auto d = fleet.route(prompt, faults); ... fleet.transfer_seconds(d, faults); ... fleet.release(d);
// Thread-safe (one mutex around the router's index; gauges refreshed by the registry's collect hook).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/metrics/registry.h>
#include <inferscope/timeline/request_timeline.h>
#include <inferscope/timeline/timeline_summary.h>

#include "serve/engine/faults.h"
#include "serve/server_options.h"

namespace inferscope::serve {

class Engine;
struct RequestOutcome;

// RouteDecision is the router's choice for one request.
struct RouteDecision {
  std::uint32_t prefill = 0;         // prefill worker index (engine index too)
  std::uint32_t decode = 0;          // decode worker index (engine index: prefill_workers + decode)
  std::uint32_t prompt_tokens = 0;
  std::uint32_t request_blocks = 0;  // the prompt's full KV blocks
  std::uint32_t overlap_blocks = 0;  // of them, already cached on the chosen decode worker
  std::uint64_t kv_bytes = 0;        // bytes to transfer: the prompt tokens the decode worker lacks
};

// pool_endpoint names worker `index` of `pool` ("prefill-0", "decode-3").
std::string pool_endpoint(std::string_view pool, std::uint32_t index);

class DisaggFleet {
 public:
  // DisaggFleet registers the fleet's families in `registry` (which must outlive it). `engines`
  // are the workers (prefill first) and must outlive it; kv_bytes_per_token and block_size come
  // from the cost profile and the engine options. Throws std::invalid_argument on a name clash.
  DisaggFleet(const DisaggOptions& options, std::vector<Engine*> engines, std::uint32_t block_size,
              double kv_bytes_per_token, std::uint64_t kv_capacity_blocks, std::vector<std::string> model_names,
              metrics::Registry& registry);
  ~DisaggFleet();
  DisaggFleet(const DisaggFleet&) = delete;
  DisaggFleet& operator=(const DisaggFleet&) = delete;

  const DisaggOptions& options() const;

  // begin_routing/end_routing bracket the router's own work (its pending requests).
  void begin_routing();
  void end_routing();
  // route chooses the workers for `prompt` under `faults` (pool_workers, route_skew) and books
  // the prompt's blocks on the decode worker (its prefix index and its active blocks).
  RouteDecision route(const std::vector<std::uint32_t>& prompt, const FaultSet& faults);
  // prefill_done drops the request's prompt tokens from its prefill worker's queued prefill tokens.
  void prefill_done(const RouteDecision& decision);
  // release ends the request's booking on its decode worker (call once, at the request's end).
  void release(const RouteDecision& decision);
  // transfer_seconds is one transfer attempt's model time: link latency + bytes / bandwidth, times
  // the kv_transfer factor and, for the degraded link's decode worker, the kv_link factor.
  double transfer_seconds(const RouteDecision& decision, const FaultSet& faults) const;
  // transfer_failed counts a failed attempt (it is retried); transfer_done records one transfer.
  void transfer_failed();
  void transfer_done(const RouteDecision& decision, double real_seconds);
  // record_request observes one finished request in Dynamo's frontend families.
  void record_request(const timeline::RequestTimeline& timeline, const timeline::TimelineSummary& summary,
                      const RequestOutcome& outcome, bool stream);
  // begin_request counts an in-flight request of a served model (dynamo_frontend_active_requests);
  // end_request with the same model ends it.
  void begin_request(std::string_view model);
  void end_request(std::string_view model);
  // set_faults keeps the active faults for the gauges (pool_workers) and refreshes them.
  void set_faults(const FaultSet& faults);
  // refresh updates the pool and endpoint gauges now (the collect hook calls it per scrape).
  void refresh(const FaultSet& faults);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// active_workers returns how many workers of `pool` take requests under `faults` (pool_workers).
std::uint32_t active_workers(const FaultSet& faults, std::string_view pool, std::uint32_t size);

}  // namespace inferscope::serve
