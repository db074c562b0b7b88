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
#include <tuple>

#include "doctor/cause_family.h"

namespace inferscope::doctor {
namespace {

using detail::find_stage_or_latency;
using detail::PeerGap;
using detail::replica_group_name;
using detail::seconds;

// Judged is one slice diagnosed against its own baseline.
struct Judged {
  const Slice* slice = nullptr;
  Diagnosis diagnosis;
  double requests = 0;      // finished requests in the incident window
  bool has_baseline = false;  // the slice has a baseline of its own (not so for a target a saved baseline lacks)
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
  j.has_baseline = e2e && e2e->baseline.has_data();
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
  if (!top.where.instance.empty()) d.headline += " at " + where_name(top.where);
  else if (!top.where.model.empty()) d.headline += " in model " + top.where.model;
}

// WorkCost is one slice's engine seconds per unit of work in both windows: what a slower replica
// changes whatever its load or request mix (decode per output token, prefill per prompt token).
struct WorkCost {
  double baseline = kNaN, incident = kNaN;
  std::string measure;
};

double per_unit(double seconds_per_request, double units_per_request) {
  return units_per_request > 0 ? seconds_per_request / units_per_request : kNaN;
}

WorkCost work_cost(const Snapshot& s, Stage stage) {
  if (stage == Stage::kDecode) {
    if (const Quantity* q = s.find(SignalId::kTpot))
      return {q->baseline.mean, q->incident.mean, "time per output token (" + q->metric + ")"};
    const Quantity* decode = s.find(Stage::kDecode);
    const Quantity* out = s.find(SignalId::kOutputTokens);
    if (decode && out)
      return {per_unit(decode->baseline.mean, out->baseline.mean), per_unit(decode->incident.mean, out->incident.mean),
              "decode time per output token (" + decode->metric + " / " + out->metric + ")"};
    if (const Quantity* q = s.find(SignalId::kItl))
      return {q->baseline.mean, q->incident.mean, "inter-token latency (" + q->metric + ")"};
    return {};
  }
  const Quantity* prefill = s.find(Stage::kPrefill);
  const Quantity* prompt = s.find(SignalId::kPromptTokens);
  if (prefill && prompt)
    return {per_unit(prefill->baseline.mean, prompt->baseline.mean),
            per_unit(prefill->incident.mean, prompt->incident.mean),
            "prefill time per prompt token (" + prefill->metric + " / " + prompt->metric + ")"};
  if (const Quantity* q = s.find(SignalId::kPrefillTimePerToken))
    return {q->baseline.mean, q->incident.mean, "prefill time per prompt token (" + q->metric + ")"};
  return {};
}

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A replica's per-token time grows with its batch, and peers behind one balancer carry alike
// batches; twice the peers' median (and far beyond their spread) is more than an uneven share of
// the load makes.
constexpr double kPeerGapRatio = 2;
// Already this close to its present gap in the baseline: the replica was as slow before (other
// hardware, other flags), which is how the fleet is, not what changed.
constexpr double kGapAlreadyThere = 0.75;

// peer_gaps compares each replica's engine cost per unit of work with its peers' in the incident
// window alone: needs three replicas with enough requests (with two, the window cannot say which
// one is odd). Returns the replicas far above their peers, a minority, each at its largest gap.
std::vector<std::pair<const Judged*, PeerGap>> peer_gaps(const std::vector<const Judged*>& members,
                                                        const DiagnoseOptions& o) {
  std::vector<const Judged*> busy;
  for (const Judged* j : members)
    if (j->requests >= o.min_requests) busy.push_back(j);
  std::map<const Judged*, PeerGap> widest;
  if (busy.size() < 3) return {};
  for (Stage stage : {Stage::kDecode, Stage::kPrefill}) {
    std::vector<WorkCost> costs;
    for (const Judged* j : busy) costs.push_back(work_cost(j->slice->snapshot, stage));
    std::vector<std::size_t> far;
    std::size_t compared = 0;
    std::vector<PeerGap> gaps(busy.size());
    for (std::size_t i = 0; i < busy.size(); ++i) {
      if (!(costs[i].incident > 0)) continue;
      ++compared;
      std::vector<double> peers, peers_baseline;
      for (std::size_t k = 0; k < busy.size(); ++k) {
        if (k == i) continue;
        if (costs[k].incident > 0) peers.push_back(costs[k].incident);
        if (costs[k].baseline > 0) peers_baseline.push_back(costs[k].baseline);
      }
      if (peers.size() < 2) continue;
      PeerGap& g = gaps[i];
      g.stage = std::string(dialect::to_string(stage));
      g.measure = costs[i].measure;
      g.mine = costs[i].incident;
      g.peer_median = median_of(peers);
      g.peer_spread = 0;
      for (double m : peers) g.peer_spread = std::max(g.peer_spread, std::fabs(m - g.peer_median));
      if (costs[i].baseline > 0 && peers_baseline.size() >= 2) {
        g.mine_baseline = costs[i].baseline;
        g.peer_median_baseline = median_of(peers_baseline);
      }
      if (g.ratio() >= kPeerGapRatio && g.mine > g.peer_median + 3 * g.peer_spread) far.push_back(i);
    }
    // Half the fleet or more above the others is two kinds of replica, not one slowed.
    if (far.empty() || far.size() * 2 >= compared) continue;
    for (std::size_t i : far) {
      auto [it, fresh] = widest.try_emplace(busy[i], gaps[i]);
      if (!fresh && gaps[i].ratio() > it->second.ratio()) it->second = gaps[i];
    }
  }
  std::vector<std::pair<const Judged*, PeerGap>> out(widest.begin(), widest.end());
  return out;
}

void localize_replicas(Diagnosis& d, const std::vector<Slice>& instances, const DiagnoseOptions& o) {
  std::vector<Judged> judged;
  judged.reserve(instances.size());
  for (const Slice& s : instances) judged.push_back(judge(s, o));
  // Replicas are peers when they are instances of one job serving one model; the engines
  // (data-parallel ranks) of one instance are peers of one another.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Judged*>> groups;
  for (const Judged& j : judged) {
    const Where& w = j.slice->where;
    groups[{w.job, w.model, w.engine.empty() ? std::string() : w.instance}].push_back(&j);
  }
  std::vector<std::pair<Finding, std::string>> found;  // and its headline detail
  std::vector<std::string> without_baseline;
  for (auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    const Where& any = members.front()->slice->where;
    std::vector<const Judged*> ok, slow, steady;
    for (const Judged* j : members) {
      if (!j->has_baseline && j->requests >= o.min_requests) {
        without_baseline.push_back(where_name(j->slice->where));
        continue;
      }
      if (!j->enough) {
        d.notes.push_back(where_name(j->slice->where) + ": " + detail::number(j->requests) +
                          " finished requests in the window, too few to compare with the other " + replica_group_name(any));
        continue;
      }
      ok.push_back(j);
      (j->slowed ? slow : steady).push_back(j);
    }
    std::set<const Slice*> named;
    const bool minority = slow.size() * 2 < ok.size() || (ok.size() == 2 && slow.size() == 1);
    if (ok.size() >= 2 && !slow.empty() && !minority)
      d.notes.push_back(std::to_string(slow.size()) + " of " + std::to_string(ok.size()) + " " + replica_group_name(any) +
                        " slowed together (" + stage_of(*slow.front()) +
                        "): a fleet-wide change, not one replica");
    if (ok.size() < 2 || !minority) slow.clear();
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
        d.notes.push_back(where_name(j->slice->where) + " slowed against its own baseline (" + stage +
                          ") but stays within its peers' spread (" + seconds(mine) + " vs " + seconds(median) + ")");
        continue;
      }
      const Quantity* q = find_stage_or_latency(j->slice->snapshot, stage);
      found.emplace_back(detail::replica_finding(d, *j->slice, j->top(), slices_of(ok), stage, median, spread),
                         where_name(j->slice->where) + " " + stage + " mean " + seconds(q ? q->baseline.mean : kNaN) +
                             " -> " + seconds(q ? q->incident.mean : kNaN));
      named.insert(j->slice);
      // The fleet-wide finding of the same cause is this replica's change seen diluted.
      if (slow.size() == 1 && j->top())
        for (Finding& f : d.findings)
          if (f.cause == j->top()->cause && f.where.empty()) f.where = j->slice->where;
    }
    // Within the window alone: a replica whose engine is far slower per unit of work than its
    // peers' is named whether or not it has a baseline of its own, and whether or not the fleet
    // changed with it (longer prompts for all, one replica's prefill x5 besides).
    std::vector<const Judged*> all_peers;
    for (const Judged* j : members)
      if (j->requests >= o.min_requests) all_peers.push_back(j);
    for (const auto& [j, gap] : peer_gaps(members, o)) {
      if (named.count(j->slice)) continue;
      const double before = gap.baseline_ratio();
      if (before >= kPeerGapRatio && before >= kGapAlreadyThere * gap.ratio()) {
        d.notes.push_back(where_name(j->slice->where) + "'s " + gap.measure + " is " +
                          common::format_printf("x%.1f", gap.ratio()) + " its peers' (" + seconds(gap.mine) + " vs " +
                          seconds(gap.peer_median) + "), as in the baseline (" +
                          common::format_printf("x%.1f", before) + "): how this fleet is, not what changed");
        continue;
      }
      found.emplace_back(detail::replica_gap_finding(d, *j->slice, slices_of(all_peers), gap),
                         where_name(j->slice->where) + " " + gap.stage + " time per token " +
                             common::format_printf("x%.1f", gap.ratio()) + " its peers'");
      named.insert(j->slice);
    }
  }
  if (!without_baseline.empty()) {
    std::string list;
    for (const std::string& i : without_baseline) list += (list.empty() ? "" : ", ") + i;
    d.notes.push_back("no baseline of their own for " + list +
                      " (the baseline file does not hold them): compared with their peers within the window only");
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first.score > b.first.score; });
  for (auto it = found.rbegin(); it != found.rend(); ++it) put_first(d, it->first, it->second);
  // The whole data's `unexplained` stood for the fleet's diluted change, which a named replica now explains.
  if (!found.empty())
    std::erase_if(d.findings, [](const Finding& f) { return group_of(f.cause) == CauseGroup::kUnexplained; });
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

std::string where_name(const Where& where) {
  if (where.engine.empty()) return where.instance;
  return (where.instance.empty() ? std::string() : where.instance + " ") + "engine " + where.engine;
}

std::string instance_of(const std::string& url) {
  std::string rest = url;
  if (auto scheme = rest.find("://"); scheme != std::string::npos) rest = rest.substr(scheme + 3);
  return rest.substr(0, rest.find('/'));
}

SlicePlan plan_slices(const std::vector<Where>& sources, std::size_t max_instances, std::size_t max_models) {
  SlicePlan plan;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> replicas;  // job+model -> instances
  std::map<Where, std::set<std::string>> ranks;  // job+instance+model -> engines
  std::set<std::string> models;
  for (const Where& w : sources) {
    if (!w.instance.empty()) replicas[{w.job, w.model}].insert(w.instance);
    if (!w.engine.empty()) ranks[{w.job, w.instance, w.model}].insert(w.engine);
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
  for (const auto& [at, engines] : ranks) {
    if (engines.size() < 2) continue;
    for (const std::string& engine : engines) {
      if (plan.instances.size() == max_instances) {
        ++left_out;
        continue;
      }
      plan.instances.push_back({at.job, at.instance, at.model, engine});
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
