// Where: one replica of several, or one model of several. Summed over a fleet, one slow replica
// is a moderate rise with no clear stage; each slice diagnosed against its own baseline shows it
// plainly. A slice is judged only with enough requests, and a replica is named only when it
// diverges from the peers that did not move, far beyond their spread (with two replicas, each is
// compared with its own baseline, so one slowed and one steady still names the slowed one).
// This file is the flow; what a finding says is its family's (replica_slowdown:
// causes_replicas.cpp; where the one down target is: causes_data_presence.cpp).
#include "doctor/localize.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "doctor/cause_family.h"

namespace inferscope::doctor {
namespace {

using detail::find_stage_or_latency;
using detail::replica_group_name;
using detail::seconds;

// Judged is one slice diagnosed against its own baseline.
struct Judged {
  const Slice* slice = nullptr;
  Diagnosis diagnosis;
  double requests = 0;      // finished requests in the incident window
  bool enough = false;      // enough requests in both windows to judge
  bool slowed = false;      // degraded with a cause beyond data presence
  int top_index = -1;       // its top finding beyond data presence, in diagnosis.findings
  const Finding* top() const { return top_index < 0 ? nullptr : &diagnosis.findings[static_cast<std::size_t>(top_index)]; }
};

Judged judge(const Slice& slice, const DiagnoseOptions& o) {
  Judged j;
  j.slice = &slice;
  j.diagnosis = diagnose(slice.snapshot, o);
  const Quantity* e2e = slice.snapshot.find(SignalId::kE2e);
  j.requests = e2e ? e2e->incident.count : 0;
  j.enough = e2e && e2e->baseline.count >= o.min_requests && e2e->incident.count >= o.min_requests &&
             j.diagnosis.verdict != "no_data";
  if (!j.enough) return j;
  for (std::size_t i = 0; i < j.diagnosis.findings.size(); ++i)
    if (group_of(j.diagnosis.findings[i].cause) != CauseGroup::kDataPresence) {
      j.top_index = static_cast<int>(i);
      break;
    }
  j.slowed = j.diagnosis.verdict == "degraded" && j.top_index >= 0;
  return j;
}

// slices_of: the slices of judged peers.
std::vector<const Slice*> slices_of(const std::vector<const Judged*>& judged) {
  std::vector<const Slice*> slices;
  for (const Judged* j : judged) slices.push_back(j->slice);
  return slices;
}

// stage_of is the stage a slowed slice moved in: its top finding's, else the stage that rose most.
std::string stage_of(const Judged& j) {
  if (j.top() && !j.top()->stage.empty()) return j.top()->stage;
  std::string best = "e2e";
  double most = 0;
  for (const StageRow& r : j.diagnosis.stages)
    if (r.delta_s > most) {
      most = r.delta_s;
      best = r.stage;
    }
  return best;
}

double incident_mean(const Judged& j, const std::string& stage) {
  const Quantity* q = find_stage_or_latency(j.slice->snapshot, stage);
  return q ? q->incident.mean : kNaN;
}

double top_score(const Diagnosis& d) {
  double best = 0;
  for (const Finding& f : d.findings) best = std::max(best, f.score);
  return best;
}

// put_first makes `f` the top finding and says so in the verdict and headline.
void put_first(Diagnosis& d, Finding f, const std::string& headline_detail) {
  f.score = std::max(f.score, top_score(d));
  d.findings.insert(d.findings.begin(), std::move(f));
  const Finding& top = d.findings.front();
  std::string head = d.headline;
  if (d.verdict != "degraded" || head.rfind("degraded", 0) != 0) {
    d.verdict = "degraded";
    head = "degraded: " + headline_detail;
  } else if (auto cut = head.find("; "); cut != std::string::npos) {
    head.resize(cut);
  }
  d.headline = head + "; top cause " + top.cause + (top.stage.empty() ? "" : " (" + top.stage + ")");
  if (!top.where.instance.empty()) d.headline += " at " + top.where.instance;
  else if (!top.where.model.empty()) d.headline += " in model " + top.where.model;
}

void localize_replicas(Diagnosis& d, const std::vector<Slice>& instances, const DiagnoseOptions& o) {
  std::vector<Judged> judged;
  judged.reserve(instances.size());
  for (const Slice& s : instances) judged.push_back(judge(s, o));
  // Replicas are peers when they are instances of one job serving one model.
  std::map<std::pair<std::string, std::string>, std::vector<const Judged*>> groups;
  for (const Judged& j : judged) groups[{j.slice->where.job, j.slice->where.model}].push_back(&j);
  std::vector<Finding> found;
  for (auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    const Where& any = members.front()->slice->where;
    std::vector<const Judged*> ok, slow, steady;
    for (const Judged* j : members) {
      if (!j->enough) {
        d.notes.push_back(j->slice->where.instance + ": " + detail::number(j->requests) +
                          " finished requests in the window, too few to compare with the other " + replica_group_name(any));
        continue;
      }
      ok.push_back(j);
      (j->slowed ? slow : steady).push_back(j);
    }
    if (ok.size() < 2 || slow.empty()) continue;
    const bool minority = slow.size() * 2 < ok.size() || (ok.size() == 2 && slow.size() == 1);
    if (!minority) {
      d.notes.push_back(std::to_string(slow.size()) + " of " + std::to_string(ok.size()) + " " + replica_group_name(any) +
                        " slowed together (" + stage_of(*slow.front()) +
                        "): a fleet-wide change, not one replica");
      continue;
    }
    for (const Judged* j : slow) {
      const std::string stage = stage_of(*j);
      std::vector<double> peers;
      for (const Judged* p : steady)
        if (double m = incident_mean(*p, stage); !std::isnan(m)) peers.push_back(m);
      const double mine = incident_mean(*j, stage);
      if (peers.empty() || std::isnan(mine)) continue;
      std::sort(peers.begin(), peers.end());
      const double median = peers[peers.size() / 2];
      double spread = 0;
      for (double m : peers) spread = std::max(spread, std::fabs(m - median));
      if (!(mine > median + std::max(3 * spread, o.min_relative_change * median))) {
        d.notes.push_back(j->slice->where.instance + " slowed against its own baseline (" + stage +
                          ") but stays within its peers' spread (" + seconds(mine) + " vs " + seconds(median) + ")");
        continue;
      }
      found.push_back(detail::replica_finding(d, *j->slice, j->top(), slices_of(ok), stage, median, spread));
      // The fleet-wide finding of the same cause is this replica's change seen diluted.
      if (slow.size() == 1 && j->top())
        for (Finding& f : d.findings)
          if (f.cause == j->top()->cause && f.where.empty()) f.where = j->slice->where;
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Finding& a, const Finding& b) { return a.score > b.score; });
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    const Quantity* q = nullptr;
    for (const Slice& s : instances)
      if (s.where == it->where) q = find_stage_or_latency(s.snapshot, it->stage);
    put_first(d, *it,
              it->where.instance + " " + it->stage + " mean " + seconds(q ? q->baseline.mean : kNaN) + " -> " +
                  seconds(q ? q->incident.mean : kNaN));
  }
}

void localize_models(Diagnosis& d, const std::vector<Slice>& models, const DiagnoseOptions& o) {
  std::vector<Judged> judged;
  judged.reserve(models.size());
  for (const Slice& s : models) judged.push_back(judge(s, o));
  std::vector<const Judged*> ok, slow;
  for (const Judged& j : judged) {
    if (!j.enough) {
      if (j.requests > 0)
        d.notes.push_back("model " + j.slice->where.model + ": " + detail::number(j.requests) +
                          " finished requests in the window, too few to compare with the other models");
      continue;
    }
    ok.push_back(&j);
    if (j.slowed) slow.push_back(&j);
  }
  if (ok.size() < 2 || slow.empty()) return;
  if (slow.size() == ok.size()) {
    d.notes.push_back("every model slowed (" + std::to_string(ok.size()) + "): not confined to one model");
    return;
  }
  for (const Judged* j : slow) {
    Finding f = *j->top();
    f.where.model = j->slice->where.model;
    // The whole data's finding of the same cause is this model's, seen diluted by the others.
    std::erase_if(d.findings, [&](const Finding& g) { return g.cause == f.cause && g.where.empty(); });
    const Quantity* e2e = j->slice->snapshot.find(SignalId::kE2e);
    put_first(d, f,
              "model " + f.where.model + " mean e2e " + seconds(e2e ? e2e->baseline.mean : kNaN) + " -> " +
                  seconds(e2e ? e2e->incident.mean : kNaN));
  }
}

}  // namespace

std::string instance_of(const std::string& url) {
  std::string rest = url;
  if (auto scheme = rest.find("://"); scheme != std::string::npos) rest = rest.substr(scheme + 3);
  return rest.substr(0, rest.find('/'));
}

SlicePlan plan_slices(const std::vector<Where>& sources, std::size_t max_instances, std::size_t max_models) {
  SlicePlan plan;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> replicas;  // job+model -> instances
  std::set<std::string> models;
  for (const Where& w : sources) {
    if (!w.instance.empty()) replicas[{w.job, w.model}].insert(w.instance);
    if (!w.model.empty()) models.insert(w.model);
  }
  std::size_t left_out = 0;
  for (const auto& [key, instances] : replicas) {
    if (instances.size() < 2) continue;
    for (const std::string& instance : instances) {
      if (plan.instances.size() == max_instances) {
        ++left_out;
        continue;
      }
      plan.instances.push_back({key.first, instance, key.second});
    }
  }
  if (left_out)
    plan.notes.push_back(std::to_string(left_out) + " instances beyond the first " + std::to_string(max_instances) +
                         " were not compared one by one (narrow with --selector)");
  if (models.size() >= 2) {
    for (const std::string& m : models) {
      if (plan.models.size() == max_models) break;
      plan.models.push_back({"", "", m});
    }
    if (models.size() > max_models)
      plan.notes.push_back(std::to_string(models.size() - max_models) + " models beyond the first " +
                           std::to_string(max_models) + " were not compared one by one (narrow with --model)");
  }
  return plan;
}

void localize(Diagnosis& d, const std::vector<Slice>& instances, const std::vector<Slice>& models,
              const DiagnoseOptions& options) {
  detail::localize_data_presence(d);
  localize_models(d, models, options);
  localize_replicas(d, instances, options);
}

}  // namespace inferscope::doctor
