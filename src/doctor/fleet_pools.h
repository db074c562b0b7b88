// File: fleet_pools.h
// A disaggregated fleet's pools and endpoints as the doctor reads them (docs/disaggregation.md):
// which pool is the prefill and which the decode pool, which endpoints are peers, how unevenly
// the load spreads over them, and the signals derived from them (time per transferred MB, the
// spread). Read from Snapshot::pools / Snapshot::endpoints, which both collectors fill by the
// dialect's pool and endpoint labels (inferscope `pool`/`endpoint`, Dynamo `worker_type`/
// `worker_id`, llm-d `name`/`model_server_pod`).
// Example: for (const EndpointSpread& s : endpoint_spreads(snapshot)) if (s.spread() > 2) ...
// Pure functions on values; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/snapshot.h"

namespace inferscope::doctor {

// PoolKind is what a pool (or an endpoint) does in a disaggregated fleet.
enum class PoolKind { kPrefill, kDecode, kOther };

// pool_kind reads it from a name: "prefill" or "decode" in it (inferscope's pool, Dynamo's
// worker_type, an llm-d pod such as "qwen3-decode-1"); kOther for anything else ("aggregated",
// an InferencePool's name).
PoolKind pool_kind(std::string_view name);

// peer_group names the endpoints an endpoint is compared with: its pool when the pool's name says
// prefill or decode, else "prefill" / "decode" from the endpoint's own name (one llm-d
// InferencePool holds both kinds of pods), else its pool.
std::string peer_group(const std::string& pool, const std::string& endpoint);

// EndpointSpread is one peer group's load in both windows: its busiest endpoint in the incident
// window against the group's mean.
struct EndpointSpread {
  std::string group;     // peer_group of its endpoints
  std::string pool;      // the busiest endpoint's pool label value
  std::string endpoint;  // the busiest endpoint in the incident window
  std::string metric, unit;
  int peers = 0;         // endpoints in the group (the busiest included)
  double busiest = kNaN, mean = kNaN;                    // incident: its load, the group's mean load
  double busiest_baseline = kNaN, mean_baseline = kNaN;  // baseline: the same endpoint, the group's mean
  double baseline_spread = kNaN;  // baseline: the group's own busiest / mean (whichever endpoint)
  // Endpoints that carried load in the baseline and none in the incident (under 5 % of it): out
  // of rotation (a pool cut to fewer workers), or (waiting-only loads) idle beside a hot one.
  int dropped = 0;
  double spread() const { return mean > 0 ? busiest / mean : kNaN; }
};

// endpoint_spreads: one per peer group of two or more endpoints with load in the incident
// window, most uneven first.
std::vector<EndpointSpread> endpoint_spreads(const Snapshot& s);

// out_of_rotation: an endpoint that carried load in the baseline and, in the incident window,
// none (under 5 % of its baseline on average), or none in any sample of the window's last third:
// a worker the router stopped sending to finishes what it holds and then idles, so its window
// mean keeps the requests it finished after the change while its last samples read 0.
bool out_of_rotation(const Quantity& q);

// PoolLoad is a pool's requests in its workers (waiting + running) per worker in rotation, from
// its endpoints where their load counts requests (inferscope's waiting + running; llm-d's per-pod
// queue, waiting only): at a steady rate it is the rate times the time a request spends in the
// pool, so it grows when the pool saturates, whichever of the queue or the batch holds it.
struct PoolLoad {
  double baseline = kNaN, incident = kNaN;  // requests per endpoint in rotation
  int endpoints = 0, in_rotation = 0;       // the pool's endpoints; those still in rotation now
};

// pool_load: the pool of `kind`'s load from its endpoints; nullopt when fewer than one endpoint
// of it counts requests or a window has no data.
std::optional<PoolLoad> pool_load(const Snapshot& s, PoolKind kind);

// pool_waiting finds the waiting of the pool of `kind`: the pools entry whose name says so, else
// (an llm-d pool of both kinds) the derived one add_fleet_quantities made. nullptr when neither.
const Quantity* pool_waiting(const Snapshot& s, PoolKind kind, std::string* name = nullptr);

// add_fleet_quantities adds the derived fleet signals: kv_transfer_time_per_mb (the kv_transfer
// stage's mean over the mean MB per transfer) and endpoint_load_spread (the most uneven group's),
// and, when no pool's name says prefill or decode but endpoints' names do and their load is in
// requests (llm-d's per-pod queue), a "prefill" and a "decode" pool summed from them.
// Called by add_derived_quantities; idempotent.
void add_fleet_quantities(Snapshot& s);

}  // namespace inferscope::doctor
