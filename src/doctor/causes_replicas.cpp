// Where: one replica of several. Summed over a fleet, one slow replica is a moderate rise with no
// clear stage; localize() (localize.cpp) diagnoses each replica against its own baseline and,
// when one diverges from the peers that did not move, far beyond their spread, this family names
// it: replica_slowdown, its per-instance evidence and next steps for that replica.
#include <algorithm>
#include <cmath>

#include "doctor/cause_family.h"
#include "doctor/localize.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kReplicaCauses[] = {
    {.id = CauseId::kReplicaSlowdown, .name = "replica_slowdown",
     .next_steps = {"Drain the slow replica (take it out of the load balancer) and check that the fleet's latency "
                    "recovers.",
                    "Check its GPU: clocks, temperature and XID errors (DCGM_FI_DEV_SM_CLOCK, DCGM_FI_DEV_GPU_TEMP, "
                    "DCGM_FI_DEV_XID_ERRORS of its node; nvidia-smi -q -d CLOCK,TEMPERATURE,ECC).",
                    "Compare its server version, flags and model revision with its peers'."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kReplicaCauses, INFERSCOPE_DOCTOR_REPLICA_CAUSES);

std::span<const CauseSpec> replica_causes() { return kReplicaCauses; }

namespace {

std::string host_of(const std::string& instance) {
  if (!instance.empty() && instance.front() == '[') return instance.substr(0, instance.find(']') + 1);
  return instance.substr(0, instance.rfind(':'));
}

}  // namespace

std::string replica_group_name(const Where& w) {
  if (!w.engine.empty()) {
    // The data-parallel ranks of one server: one API server, N engines (vLLM's `engine` label).
    std::string out = "engines (data-parallel ranks) of " + (w.instance.empty() ? std::string("the server") : w.instance);
    if (!w.model.empty()) out += " serving model " + w.model;
    return out;
  }
  std::string out = w.model.empty() ? std::string("replicas") : "replicas of model " + w.model;
  if (!w.job.empty()) out += " (job " + w.job + ")";
  return out;
}

namespace {

// Served is the share of the replicas' finished requests one replica served, in both windows.
struct Served {
  double baseline = kNaN, incident = kNaN;
};

Served served_by(const Slice& slow, const std::vector<const Slice*>& group) {
  double group_base = 0, group_inc = 0;
  for (const Slice* peer : group) {
    const Quantity* e2e = peer->snapshot.find(SignalId::kE2e);
    group_base += e2e ? e2e->baseline.count : 0;
    group_inc += e2e ? e2e->incident.count : 0;
  }
  const Quantity* e2e = slow.snapshot.find(SignalId::kE2e);
  return {e2e && group_base > 0 ? e2e->baseline.count / group_base : kNaN,
          e2e && group_inc > 0 ? e2e->incident.count / group_inc : kNaN};
}

// replica_base starts a replica_slowdown finding: where, stage, its share of the fleet's change
// (its share of the requests times its own e2e change; null without a baseline of its own) and
// the next steps naming it.
Finding replica_base(const Diagnosis& whole, const Slice& slow, const std::string& stage, const Served& served) {
  const Where& where = slow.where;
  Finding f;
  f.cause = std::string(to_string(CauseId::kReplicaSlowdown));
  f.stage = stage;
  f.where = where;
  const Quantity* e2e = slow.snapshot.find(SignalId::kE2e);
  if (e2e && whole.e2e_change_s > 0 && !std::isnan(served.incident)) {
    const double share = served.incident * (e2e->incident.mean - e2e->baseline.mean) / whole.e2e_change_s;
    if (!std::isnan(share)) f.share = std::clamp(share, 0.0, 1.0);
  }
  const std::string host = host_of(where.instance);
  const bool dcgm = whole.snapshot.dialect.find("dcgm") != std::string::npos;
  const std::string device =
      dcgm ? "Check the GPU of " + host + " in its DCGM series (DCGM_FI_DEV_SM_CLOCK, DCGM_FI_DEV_GPU_TEMP, "
                                          "DCGM_FI_DEV_XID_ERRORS of that node): a throttled or failing GPU slows one "
                                          "replica alone."
      : gpu_visible(whole.snapshot)
          ? "Check the GPU of " + host + ": clocks, temperature, ECC and XID errors (nvidia-smi -q -d "
                                         "CLOCK,TEMPERATURE,ECC; no DCGM series here): a throttled or failing GPU "
                                         "slows one replica alone."
          : "Check the host of " + where.instance + ": other processes on its cores (top -H, pidstat -t 1), its "
                                                    "clocks and thermal limits: a starved or throttled host slows one "
                                                    "replica alone (no GPU series here).";
  f.next_steps = {
      "Drain " + where.instance + " (take it out of the load balancer) and check that the fleet's latency recovers.",
      device,
      "Compare " + where.instance + "'s server version, flags and model revision with its peers'."};
  if (!where.engine.empty()) {
    // One rank of a data-parallel server: its own GPU, behind the same API server as its peers.
    f.next_steps = {
        "Check the GPU that runs engine " + where.engine + " of " + where.instance +
            ": clocks, temperature, ECC and XID errors (DCGM_FI_DEV_SM_CLOCK, DCGM_FI_DEV_GPU_TEMP of that device; "
            "nvidia-smi -q -d CLOCK,TEMPERATURE,ECC): a throttled or failing GPU slows one rank alone.",
        "Compare the rank's series with its peers' (vllm:e2e_request_latency_seconds, "
        "vllm:iteration_tokens_total by engine): a rank that also runs fewer tokens per step shares its GPU with "
        "another process.",
        "Until it is fixed, restart the server with --data-parallel-size one lower on the healthy GPUs "
        "(CUDA_VISIBLE_DEVICES without the bad one): one slow rank raises the tail of every request sent to it."};
  }
  return f;
}

// add_instance_rows adds the stage's mean and p95 on each replica, the slow one first, and the
// share of requests the slow one serves.
void add_instance_rows(Finding& f, const Slice& slow, const std::vector<const Slice*>& group, const Served& served) {
  std::vector<const Slice*> rows{&slow};
  for (const Slice* peer : group)
    if (peer != &slow) rows.push_back(peer);
  for (const Slice* row : rows) {
    const Quantity* r = find_stage_or_latency(row->snapshot, f.stage);
    if (!r) continue;
    const std::string at = " at " + where_name(row->where);
    f.evidence.push_back({f.stage + " mean (" + r->metric + ")" + at, r->baseline.mean, r->incident.mean, "s"});
    f.evidence.push_back({f.stage + " p95 (" + r->metric + ")" + at, r->baseline.p95, r->incident.p95, "s"});
  }
  if (!std::isnan(served.incident))
    f.evidence.push_back({"share of the replicas' finished requests served by " + where_name(slow.where),
                          served.baseline, served.incident, "ratio"});
}

std::string served_text(const Served& served) {
  return std::isnan(served.incident) ? std::string() : "; it serves " + percent(served.incident) + " of their requests";
}

}  // namespace

// replica_finding names one replica that slowed while its peers did not.
Finding replica_finding(const Diagnosis& whole, const Slice& slow, const Finding* slow_top,
                        const std::vector<const Slice*>& group, const std::string& stage, double peer_median,
                        double peer_spread) {
  const Where& where = slow.where;
  const Quantity* q = find_stage_or_latency(slow.snapshot, stage);
  const Served served = served_by(slow, group);
  Finding f = replica_base(whole, slow, stage, served);
  f.score = slow_top ? slow_top->score : 0.5;
  f.summary = where_name(where) + " is 1 of " + std::to_string(group.size()) + " " + replica_group_name(where) +
              " and slowed alone: " + stage + " mean " + seconds(q ? q->baseline.mean : kNaN) + " -> " +
              seconds(q ? q->incident.mean : kNaN) + " while its peers stayed at " + seconds(peer_median) +
              " (spread " + seconds(peer_spread) + ")" +
              (slow_top ? "; on it alone the doctor reads " + slow_top->cause : std::string()) + served_text(served);
  add_instance_rows(f, slow, group, served);
  return f;
}

// replica_gap_finding names one replica whose engine works slower per unit of work than its peers
// in the same window. No baseline is needed: peers behind one balancer serve the same model to
// the same kind of traffic, so a per-token cost several times theirs is that replica's own.
Finding replica_gap_finding(const Diagnosis& whole, const Slice& slow, const std::vector<const Slice*>& group,
                            const PeerGap& gap) {
  const Where& where = slow.where;
  const Served served = served_by(slow, group);
  Finding f = replica_base(whole, slow, gap.stage, served);
  // x2 over the peers is where the rule starts (0.5), x3 and beyond is certain.
  f.score = std::clamp((gap.ratio() - 1) / 2, 0.5, 1.0);
  f.summary = where_name(where) + " is 1 of " + std::to_string(group.size()) + " " + replica_group_name(where) +
              " and its " + gap.measure + " is " + seconds(gap.mine) + " in the window, " +
              common::format_printf("x%.1f", gap.ratio()) + " its peers' median " + seconds(gap.peer_median) +
              " (spread " + seconds(gap.peer_spread) + ")" +
              (std::isnan(gap.baseline_ratio())
                   ? std::string("; compared within the window (no baseline of its own)")
                   : common::format_printf("; in the baseline it ran at x%.1f theirs", gap.baseline_ratio())) +
              served_text(served);
  f.evidence.push_back({gap.measure + " at " + where_name(where), gap.mine_baseline, gap.mine, "s"});
  f.evidence.push_back({gap.measure + ", median of its peers", gap.peer_median_baseline, gap.peer_median, "s"});
  add_instance_rows(f, slow, group, served);
  return f;
}

}  // namespace inferscope::doctor::detail
