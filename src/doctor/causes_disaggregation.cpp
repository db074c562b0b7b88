// Disaggregation: a fleet that splits each request between a prefill pool and a decode pool, with
// a KV-cache transfer between them and a KV-aware router in front (docs/disaggregation.md). Three
// incidents are its own and none is an engine getting slower: the transfer slows (a degraded link,
// a NIC fallen back to TCP: kv_transfer time per request and per MB up, TTFT up by about as much,
// prefill and decode as they were); one pool saturates while the other has room (a pool cut to
// fewer workers, a mix that needs more prefill or more decode than the P:D ratio gives: that
// pool's waiting grows, the other's does not); the router piles requests onto one endpoint (a hot
// prefix, a skewed scorer: its load far above its pool peers' while they idle). The pools and
// endpoints come from fleet_pools.h; each finding says where (pool, endpoint).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "doctor/cause_family.h"
#include "doctor/fleet_pools.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kDisaggregationCauses[] = {
    {.id = CauseId::kKvTransferSlowdown, .name = "kv_transfer_slowdown", .stage = Stage::kKvTransfer,
     .weights = {{Stage::kKvTransfer, 1}},
     .next_steps = {"Check the transfer path between the prefill and the decode workers: NIXL/UCX backend in use "
                    "(UCX_TLS, a fallback from RDMA or NVLink to TCP shows as a bandwidth cut), NIC link speed and "
                    "errors (ethtool -S, ibstat), and whether the pods landed on nodes without the fast fabric.",
                    "Compare time per MB transferred with the link's bandwidth: bytes per request unchanged and time "
                    "per MB up is the link; bytes up at unchanged time per MB is longer prompts (long_prompts).",
                    "When one decode endpoint stands out, drain it or move it: its link (or its NIC) is the slow one.",
                    "Check transfer failures and retries (inferscope_kv_transfer_failures_total, "
                    "trtllm_kv_transfer_success_total, vllm:nixl_num_failed_transfers_total): each retry adds a "
                    "whole transfer."}},
    {.id = CauseId::kPrefillPoolSaturated, .name = "prefill_pool_saturated", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kPrefill, 0.3}},
     .queues_behind_batch = true,
     .next_steps = {"Rebalance the P:D ratio towards prefill: add prefill workers (or move workers from the decode "
                    "pool, which has room) until the prefill pool's queue stays near zero at this prompt mix.",
                    "Check that every prefill worker takes requests (inferscope_pool_workers{pool=\"prefill\"}, "
                    "Dynamo's worker list, llm-d's pods): a worker out of rotation cuts the pool's capacity.",
                    "Find what changed in the mix: longer prompts or a lower prefix-cache hit need more prefill per "
                    "request; Dynamo's planner or an HPA on the prefill queue can follow it.",
                    "Route short prompts to decode workers (conditional disaggregation: Dynamo's "
                    "max_local_prefill_length, llm-d's decode-only decisions) to take load off the prefill pool."}},
    {.id = CauseId::kDecodePoolSaturated, .name = "decode_pool_saturated", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kDecode, 0.5}},
     .queues_behind_batch = true,
     .next_steps = {"Rebalance the P:D ratio towards decode: add decode workers (or move workers from the prefill "
                    "pool, which has room) until the decode pool's queue stays near zero at this output mix.",
                    "Check that every decode worker takes requests (inferscope_pool_workers{pool=\"decode\"}, "
                    "Dynamo's worker list, llm-d's pods): a worker out of rotation cuts the pool's capacity.",
                    "Find what changed in the mix: longer outputs keep sequences on the decode workers longer and "
                    "fill their KV caches; cap max_tokens or scale the decode pool with it.",
                    "Check the decode workers' KV usage: a full KV cache caps the batch (kv_cache_pressure) before "
                    "the compute does."}},
    {.id = CauseId::kRoutingImbalance, .name = "routing_imbalance", .stage = Stage::kQueue,
     .weights = {{Stage::kQueue, 1}, {Stage::kDecode, 0.5}},
     .queues_behind_batch = true,
     .next_steps = {"Check the router's scorer weights: a prefix (KV overlap) weight far above the load weight "
                    "piles requests onto the endpoint that holds a hot prefix (Dynamo's kv-overlap-score-weight and "
                    "router temperature, llm-d's prefix-cache-scorer vs queue-scorer weights).",
                    "Find the hot prefix: one tenant's system prompt or one long shared document sent by many "
                    "clients; replicate it (more endpoints holding it) or lower its routing preference.",
                    "Compare routing decisions per endpoint (inferscope_router_decisions_total, "
                    "llm_d_inference_scheduler_disagg_decision_total, dynamo_component_router_*): one endpoint "
                    "taking most of them is the router's choice, not the endpoint's speed.",
                    "Once balanced, check whether the overloaded endpoint was also slower per token "
                    "(replica_slowdown) rather than only busier."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kDisaggregationCauses, INFERSCOPE_DOCTOR_DISAGGREGATION_CAUSES);

std::span<const CauseSpec> disaggregation_causes() { return kDisaggregationCauses; }

namespace {

// fleet_standout: how clearly one endpoint of its group got busier than its peers: the group's
// spread (busiest / mean) rose by 0.2 (full at 0.5) and the endpoint's own load rose x1.3 (full
// at x2). Both must hold.
double fleet_standout(const EndpointSpread& sp) {
  const double base_spread = std::isnan(sp.baseline_spread) ? 1.0 : sp.baseline_spread;
  const double rose = ramp(sp.spread() - base_spread, 0.2, 0.5);
  const double busier = log_ramp(sp.busiest / std::max(sp.busiest_baseline, 0.05), 1.3, 2.0);
  return std::min(rose, busier);
}

// fleet_uneven: one endpoint far above its peers' mean now (x1.3 starts, x1.7 full) and, where
// the load counts requests, a real pile: half a request more than the other endpoints' mean
// starts it, one and a half is full. At loads under a request per endpoint a ratio moves by
// chance (0.6 beside 0.2 is x1.5 the mean); a router piling work onto one endpoint leaves
// requests there.
double fleet_uneven(const EndpointSpread& sp) {
  double pile = 1.0;
  if (sp.unit == "requests" && sp.peers > 1) {
    const double others = (sp.mean * sp.peers - sp.busiest) / (sp.peers - 1);
    pile = ramp(sp.busiest - others, 0.5, 1.5);
  }
  return std::min(ramp(sp.spread(), 1.3, 1.7), pile);
}

const EndpointSpread* fleet_group_of(const std::vector<EndpointSpread>& spreads, PoolKind kind) {
  for (const EndpointSpread& sp : spreads)
    if (pool_kind(sp.group) == kind) return &sp;
  return nullptr;
}

Evidence fleet_endpoint_evidence(const EndpointSpread& sp) {
  return {sp.metric + " of " + sp.endpoint + " (busiest of " + std::to_string(sp.peers) + " in " + sp.group + ")",
          sp.busiest_baseline, sp.busiest, sp.unit};
}

Evidence fleet_spread_evidence(const EndpointSpread& sp) {
  return {"busiest / mean load of the " + sp.group + " endpoints", sp.baseline_spread, sp.spread(), "ratio"};
}

void evaluate_kv_transfer(Evaluation& e, const std::vector<EndpointSpread>& spreads) {
  const Quantity* transfer = e.find(Stage::kKvTransfer);
  if (!transfer || !transfer->baseline.has_data() || !transfer->incident.has_data()) return;
  const Quantity* per_mb = e.find(SignalId::kKvTransferTimePerMb);
  const Quantity* bytes = e.find(SignalId::kKvTransferBytes);
  const Quantity* ttft = e.find(SignalId::kTtft);
  const double t_b = transfer->baseline.mean, t_i = transfer->incident.mean;
  const double time_ratio = detail::ratio(t_b, t_i);
  const double mb_ratio = per_mb && per_mb->baseline.has_data() && per_mb->incident.has_data()
                              ? detail::ratio(per_mb->baseline.mean, per_mb->incident.mean)
                              : kNaN;
  // Slower per MB when the bytes are known (longer prompts move more bytes at the same speed),
  // else slower per transfer: x1.4 starts, x2.5 full.
  const double slower = log_ramp(std::isnan(mb_ratio) ? time_ratio : mb_ratio, 1.4, 2.5);
  // The first token waits for the transfer: TTFT rises by a fair part of the transfer's rise.
  const double added = t_i - t_b;
  const double felt = !ttft ? 1.0
                      : added > 0 ? ramp((ttft->incident.mean - ttft->baseline.mean) / added, 0.3, 0.7)
                                  : 0.0;
  // And the other way: the transfer's rise is a fair part of TTFT's (a tenth starts to count,
  // 0.3 is full). A transfer a few ms longer beside a TTFT up by a second (short prompts' short
  // transfers stretched by a busy host's timers, while requests queue for another reason) is not
  // what slowed the first token; a slower link adds its whole rise to TTFT and little beside it.
  const double ttft_rise = ttft ? ttft->incident.mean - ttft->baseline.mean : kNaN;
  const double share = ttft_rise > added && added > 0 ? ramp(added / ttft_rise, 0.1, 0.3) : 1.0;
  // Prefill and decode as they were: a slower engine would move them (its own causes' news).
  const Quantity* prefill = e.find(Stage::kPrefill);
  const PerToken per_token = e.per_token();
  const double engine_moved =
      std::max(prefill ? log_ramp(detail::ratio(prefill->baseline.mean, prefill->incident.mean), 1.3, 2.0) : 0.0,
               per_token.quantity ? log_ramp(per_token.change.ratio, 1.3, 2.0) : 0.0);
  const double strength = slower * felt * share * (1 - 0.5 * engine_moved);
  e.found.kv_transfer = strength;

  Hypothesis& h = e.add(CauseId::kKvTransferSlowdown);
  h.strength = strength;
  h.evidence.push_back(e.ev(transfer, "kv_transfer"));
  if (per_mb) h.evidence.push_back(e.ev(per_mb, "kv transfer time per MB"));
  if (bytes) h.evidence.push_back(e.ev(bytes, "kv bytes per transfer"));
  if (ttft) h.evidence.push_back(e.ev(ttft, "ttft"));
  if (prefill) h.evidence.push_back(e.ev(prefill, "prefill"));
  if (per_token.quantity) h.evidence.push_back(e.ev(per_token.quantity, "time per output token"));
  // One slow link: the decode endpoint whose transfers take longer holds its requests longer, so
  // its load rises (x1.2 starts, x1.6 full) and stands out a little more among the decode
  // endpoints (spread up by 0.1, full 0.25) while the others' does not; every link slower moves
  // them all alike. Where the load counts requests the rise must also be the one a slow link
  // makes (Little's law): if one of n links got slower the fleet's mean transfer rose by 1/n of
  // that link's rise, and the link carries 1/n of the rate, so the endpoint holds about rate x
  // the fleet's transfer rise more requests (half to twice that, at least one request, and the
  // other endpoints' load rising less than half as much). A load that does not hold a
  // request in transfer (inferscope's waiting + running at the engine) does not move, and a
  // chance standout of a few tenths of a request is not a slow link: then the finding is the
  // fleet's. (Dynamo's blocks, booked at the route, count no requests: the standout alone.)
  std::string link;
  const EndpointSpread* decode = fleet_group_of(spreads, PoolKind::kDecode);
  double link_standout =
      decode ? std::min(log_ramp(decode->busiest / std::max(decode->busiest_baseline, 0.05), 1.2, 1.6),
                        ramp(decode->spread() - (std::isnan(decode->baseline_spread) ? 1.0 : decode->baseline_spread), 0.1, 0.25))
             : 0.0;
  if (decode && decode->unit == "requests") {
    const double rate = e.found.rate && e.found.rate->incident.has_data() ? e.found.rate->incident.mean : kNaN;
    const double expected = rate * std::max(added, 0.0);
    const double rise = decode->busiest - decode->busiest_baseline;
    // The others' mean load, which one slow link leaves as it was (every link slower raises it).
    const int others = decode->peers - 1;
    const double others_rise =
        others > 0 ? ((decode->mean * decode->peers - decode->busiest) -
                      (decode->mean_baseline * decode->peers - decode->busiest_baseline)) / others
                   : 0.0;
    // A request's worth at least: a few tenths of a request is within a sampled gauge's noise.
    const bool fits = expected >= 1 && rise >= 0.5 * expected && rise <= 2 * expected && !(others_rise >= 0.5 * rise);
    if (!fits) link_standout = 0;
  }
  if (decode && link_standout >= 0.5) {
    h.where.pool = decode->pool;
    h.where.endpoint = decode->endpoint;
    h.evidence.push_back(fleet_endpoint_evidence(*decode));
    link = "; decode endpoint " + decode->endpoint + " stands out (load " + number(decode->busiest_baseline) + " -> " +
           number(decode->busiest) + " vs its pool's mean " + number(decode->mean) + "): its link is the slow one";
  }
  h.summary = "the KV-cache transfer from prefill to decode workers got slower: " + seconds(t_b) + " -> " +
              seconds(t_i) + " per transfer" +
              (std::isnan(mb_ratio) ? std::string()
                                    : " (" + common::format_printf("x%.2f", mb_ratio) + " per MB, bytes per transfer " +
                                          number(mean_of(bytes, false)) + " -> " + number(mean_of(bytes, true)) + ")") +
              (ttft ? ", TTFT " + seconds(ttft->baseline.mean) + " -> " + seconds(ttft->incident.mean) : std::string()) +
              " while prefill and decode kept their pace" + (link.empty() ? " on every link" : link);
  h.why_not = "kv_transfer " + seconds(t_b) + " -> " + seconds(t_i) +
              (!std::isnan(mb_ratio) && mb_ratio < 1.4 && time_ratio >= 1.4 ? " (more bytes per transfer, same speed)" : "") +
              (share < 1 ? " (a small part of TTFT's rise of " + seconds(ttft_rise) + ")" : "");
}

void evaluate_routing(Evaluation& e, const std::vector<EndpointSpread>& spreads) {
  const EndpointSpread* best = nullptr;
  double core = 0;
  for (const EndpointSpread& sp : spreads) {
    const double c = std::min(fleet_uneven(sp), fleet_standout(sp));
    if (!best || c > core) {
      best = &sp;
      core = c;
    }
  }
  if (!best) return;
  const EndpointSpread& sp = *best;
  const Quantity* hit = e.find(SignalId::kRoutePrefixHit);
  const double hit_b = mean_of(hit, false), hit_i = mean_of(hit, true);
  const double hit_up = ramp(hit_i - hit_b, 0.05, 0.15);
  // Peers out of rotation (no load at all where they had some) are a pool cut to fewer workers
  // (its pool's saturation), not the router's choice. Where the load is a queue only (llm-d's
  // per-pod queue: under one request per endpoint in the baseline) an idle peer reads 0 beside a
  // hot one too: there the router's prefix hit rising (a hot prefix) says routing. A load with
  // the running requests in it (inferscope's, Dynamo's blocks) tells a cut by itself, and one
  // decode worker left holds every prefix, so its hit rises with a cut. A slower transfer to one
  // decode endpoint holds its requests longer (kv_transfer_slowdown).
  const bool queue_only = sp.mean_baseline < 1;
  const bool cut = sp.dropped > 0 && !(queue_only && hit_up >= 0.5);
  const double strength = core * (cut ? 0.2 : 1.0) * (1 - e.found.kv_transfer);
  e.found.routing = strength;
  e.found.routing_group = sp.group;

  Hypothesis& h = e.add(CauseId::kRoutingImbalance);
  h.strength = strength;
  h.where.pool = sp.pool;
  h.where.endpoint = sp.endpoint;
  h.evidence.push_back(fleet_endpoint_evidence(sp));
  h.evidence.push_back(fleet_spread_evidence(sp));
  h.evidence.push_back({"mean load of the " + sp.group + " endpoints", sp.mean_baseline, sp.mean, sp.unit});
  if (hit) h.evidence.push_back(e.ev(hit, "router prefix hit"));
  if (const Quantity* queue = e.find(Stage::kQueue)) h.evidence.push_back(e.ev(queue, "queue"));
  h.summary = "the router piles requests onto " + sp.endpoint + ": its load " + number(sp.busiest_baseline) + " -> " +
              number(sp.busiest) + ", " + common::format_printf("x%.1f", sp.spread()) + " its " +
              std::to_string(sp.peers) + " " + sp.group + " peers' mean of " + number(sp.mean) +
              " (spread " + number(sp.baseline_spread) + " -> " + number(sp.spread()) + ")" +
              (hit_up > 0 ? ", router prefix hit " + percent(hit_b) + " -> " + percent(hit_i) +
                                ": a hot prefix draws the router's choice"
                          : std::string()) +
              "; requests queue there while its peers idle";
  h.why_not = "busiest " + sp.group + " endpoint " + sp.endpoint + " at " + common::format_printf("x%.1f", sp.spread()) +
              " the mean" + (sp.dropped > 0 ? " (peers out of rotation: a pool cut)" : "") +
              (e.found.kv_transfer >= 0.5 ? " (explained by a slower KV transfer)" : "");
}

void evaluate_pool(Evaluation& e, const std::vector<EndpointSpread>& spreads, PoolKind kind) {
  std::string name, other_name;
  const Quantity* mine = pool_waiting(e.snapshot, kind, &name);
  if (!mine || !mine->baseline.has_data() || !mine->incident.has_data()) return;
  const PoolKind other_kind = kind == PoolKind::kPrefill ? PoolKind::kDecode : PoolKind::kPrefill;
  const Quantity* other = pool_waiting(e.snapshot, other_kind, &other_name);
  const double w_b = mine->baseline.mean, w_i = mine->incident.mean;
  const double o_i = mean_of(other, true);
  // The pool's queue grew by half a request (full at 2) and x1.5 (full at x3). Where the
  // endpoints count requests, the same on the requests each worker still in rotation holds
  // (waiting + running): prefill steps are long and a batch's seats fill before its queue does,
  // so a pool can saturate with a queue that moves less than its batch does; a pool cut to fewer
  // workers piles the same rate onto those left. That counts while the pool queues at all now
  // (half a request per worker in rotation starts it, one is full): a bigger batch with no one
  // waiting is more work per request (the mix), not a saturated pool.
  const std::optional<PoolLoad> load = pool_load(e.snapshot, kind);
  const double grew_waiting =
      std::min(ramp(w_i - w_b, 0.5, 2.0), log_ramp(std::max(w_i, 0.0) / std::max(w_b, 0.25), 1.5, 3.0));
  const double grew_load =
      load ? std::min(ramp(load->incident - load->baseline, 0.5, 2.0),
                      log_ramp(std::max(load->incident, 0.0) / std::max(load->baseline, 0.25), 1.5, 3.0)) *
                 ramp(std::max(w_i, 0.0) / std::max(load->in_rotation, 1), 0.5, 1.0)
           : 0.0;
  const double grew = std::max(grew_waiting, grew_load);
  // The other pool has room: it waits far less (a quarter of this pool's queue starts to doubt it).
  const double room = other && o_i >= 0 ? 1 - ramp(o_i / std::max(w_i, 1e-9), 0.25, 0.75) : 0.5;
  const EndpointSpread* sp = fleet_group_of(spreads, kind);
  // A pool whose endpoints are all busy is saturated; one endpoint piled up while its peers idle
  // is the router's (routing_imbalance, weighed first: it tells a cut from a skew).
  const double routed = sp && e.found.routing_group == sp->group ? e.found.routing : 0.0;
  const bool cut_workers = sp && sp->dropped > 0 && routed < 0.5;
  const double strength = grew * room * (1 - 0.5 * e.found.load) * (1 - routed) * (1 - e.found.kv_transfer);
  (kind == PoolKind::kPrefill ? e.found.prefill_pool : e.found.decode_pool) = strength;
  if (kind == PoolKind::kPrefill && cut_workers && sp->peers > sp->dropped)
    e.found.prefill_concentration = double(sp->peers) / (sp->peers - sp->dropped);

  Hypothesis& h = e.add(kind == PoolKind::kPrefill ? CauseId::kPrefillPoolSaturated : CauseId::kDecodePoolSaturated);
  const std::string what = kind == PoolKind::kPrefill ? "prefill" : "decode";
  h.strength = strength;
  h.where.pool = name;
  h.evidence.push_back({mine->metric + " (pool " + name + ")", w_b, w_i, mine->unit});
  if (other) h.evidence.push_back({other->metric + " (pool " + other_name + ")", other->baseline.mean, o_i, other->unit});
  if (load)
    h.evidence.push_back({"requests per " + what + " worker in rotation (waiting + running, " +
                              std::to_string(load->in_rotation) + " of " + std::to_string(load->endpoints) + " now)",
                          load->baseline, load->incident, "requests"});
  if (sp) h.evidence.push_back({"endpoints of " + sp->group + " with no load now (had some)", 0, double(sp->dropped), ""});
  if (e.found.rate) h.evidence.push_back(e.ev(e.found.rate, "request rate"));
  if (const Quantity* queue = e.find(Stage::kQueue)) h.evidence.push_back(e.ev(queue, "queue"));
  h.summary = "the " + what + " pool (" + name + ") saturated: " + number(w_b) + " -> " + number(w_i) +
              " requests waiting" +
              (load ? " (" + number(load->baseline) + " -> " + number(load->incident) +
                          " in each worker in rotation, waiting + running)"
                    : std::string()) +
              " while the " + (other ? other_name + " pool waits " + number(o_i) : std::string("other pool has room")) +
              (cut_workers ? "; " + std::to_string(sp->dropped) + " of its " + std::to_string(sp->peers) +
                                     " endpoints take no requests any more (workers out of rotation)"
                               : std::string()) +
              ": the P:D ratio no longer fits this load";
  if (cut_workers)
    h.next_steps.insert(h.next_steps.begin(),
                        std::to_string(sp->dropped) + " of the " + std::to_string(sp->peers) + " " + what +
                            " workers stopped taking requests (their load fell to none): bring them back "
                            "(pool_workers, crashed or drained pods) before changing the P:D ratio.");
  h.why_not = what + " pool waiting " + number(w_b) + " -> " + number(w_i) +
              (other ? ", " + other_name + " " + number(other->baseline.mean) + " -> " + number(o_i) : std::string()) +
              (routed >= 0.5 ? " (one endpoint piled up: routing)" : "");
}

}  // namespace

void evaluate_disaggregation(Evaluation& e) {
  const std::vector<EndpointSpread> spreads = endpoint_spreads(e.snapshot);
  evaluate_kv_transfer(e, spreads);
  evaluate_routing(e, spreads);
  evaluate_pool(e, spreads, PoolKind::kPrefill);
  evaluate_pool(e, spreads, PoolKind::kDecode);
}

}  // namespace inferscope::doctor::detail
