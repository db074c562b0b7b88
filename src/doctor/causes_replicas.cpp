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
  std::string out = w.model.empty() ? std::string("replicas") : "replicas of model " + w.model;
  if (!w.job.empty()) out += " (job " + w.job + ")";
  return out;
}

// replica_finding names one replica that slowed while its peers did not.
Finding replica_finding(const Diagnosis& whole, const Slice& slow, const Finding* slow_top,
                        const std::vector<const Slice*>& group, const std::string& stage, double peer_median,
                        double peer_spread) {
  const Where& where = slow.where;
  const Quantity* q = find_stage_or_latency(slow.snapshot, stage);
  double group_base = 0, group_inc = 0;
  for (const Slice* peer : group) {
    const Quantity* e2e = peer->snapshot.find(SignalId::kE2e);
    group_base += e2e ? e2e->baseline.count : 0;
    group_inc += e2e ? e2e->incident.count : 0;
  }
  const Quantity* e2e = slow.snapshot.find(SignalId::kE2e);
  const double served_base = e2e && group_base > 0 ? e2e->baseline.count / group_base : kNaN;
  const double served_inc = e2e && group_inc > 0 ? e2e->incident.count / group_inc : kNaN;

  Finding f;
  f.cause = std::string(to_string(CauseId::kReplicaSlowdown));
  f.stage = stage;
  f.where = where;
  f.score = slow_top ? slow_top->score : 0.5;
  // What this replica adds to the fleet's mean e2e change: its share of the requests times its own change.
  if (e2e && whole.e2e_change_s > 0 && !std::isnan(served_inc))
    f.share = std::clamp(served_inc * (e2e->incident.mean - e2e->baseline.mean) / whole.e2e_change_s, 0.0, 1.0);
  f.summary = where.instance + " is 1 of " + std::to_string(group.size()) + " " + replica_group_name(where) +
              " and slowed alone: " + stage + " mean " + seconds(q ? q->baseline.mean : kNaN) + " -> " +
              seconds(q ? q->incident.mean : kNaN) + " while its peers stayed at " + seconds(peer_median) +
              " (spread " + seconds(peer_spread) + ")" +
              (slow_top ? "; on it alone the doctor reads " + slow_top->cause : std::string()) +
              (std::isnan(served_inc) ? std::string() : "; it serves " + percent(served_inc) + " of their requests");
  // The per-instance table: the stage's mean and p95 on each replica, the slow one first.
  std::vector<const Slice*> rows{&slow};
  for (const Slice* peer : group)
    if (peer != &slow) rows.push_back(peer);
  for (const Slice* row : rows) {
    const Quantity* r = find_stage_or_latency(row->snapshot, stage);
    if (!r) continue;
    const std::string at = " at " + row->where.instance;
    f.evidence.push_back({stage + " mean (" + r->metric + ")" + at, r->baseline.mean, r->incident.mean, "s"});
    f.evidence.push_back({stage + " p95 (" + r->metric + ")" + at, r->baseline.p95, r->incident.p95, "s"});
  }
  if (!std::isnan(served_inc))
    f.evidence.push_back({"share of the replicas' finished requests served by " + where.instance, served_base,
                          served_inc, "ratio"});
  const std::string host = host_of(where.instance);
  const bool dcgm = whole.snapshot.dialect.find("dcgm") != std::string::npos;
  f.next_steps = {
      "Drain " + where.instance + " (take it out of the load balancer) and check that the fleet's latency recovers.",
      std::string(dcgm ? "Check the GPU of " + host + " in its DCGM series (DCGM_FI_DEV_SM_CLOCK, DCGM_FI_DEV_GPU_TEMP, "
                                                      "DCGM_FI_DEV_XID_ERRORS of that node)"
                       : "Check the GPU of " + host + ": clocks, temperature, ECC and XID errors "
                                                      "(nvidia-smi -q -d CLOCK,TEMPERATURE,ECC; no DCGM series here)") +
          ": a throttled or failing GPU slows one replica alone.",
      "Compare " + where.instance + "'s server version, flags and model revision with its peers'."};
  return f;
}

}  // namespace inferscope::doctor::detail
