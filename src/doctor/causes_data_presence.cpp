// Data presence: a down target or a missing metric is a finding before any latency is compared,
// because an empty panel must never read as healthy.
#include <string>

#include "doctor/cause_family.h"
#include "doctor/localize.h"

namespace inferscope::doctor::detail {

constexpr CauseSpec kDataPresenceCauses[] = {
    {.id = CauseId::kTargetDown, .name = "target_down", .group = CauseGroup::kDataPresence, .needs_slowdown = false,
     .next_steps = {"Check that the server process is running and listening (systemd/kubectl status, its log).",
                    "Check that Prometheus can reach it: the Targets page shows the last scrape error.",
                    "Until it is back, its latency is unknown: do not read an empty panel as healthy."}},
    // Missing metrics say nothing of what slowed down: the headline does not name them.
    {.id = CauseId::kMetricsMissing, .name = "metrics_missing", .group = CauseGroup::kDataPresence,
     .needs_slowdown = false, .headline = {.names = ""},
     .next_steps = {"Check that the server exposes its metrics (vLLM: /metrics on the API port; llama.cpp: start it "
                    "with --metrics; inferscope gateway in front of servers without latency histograms).",
                    "Update dashboards and rules that still query renamed metrics (inferscope doctor --check-metrics URL).",
                    "Check relabeling/metric_relabel_configs that may drop the families."}},
};
INFERSCOPE_DOCTOR_CHECK_CAUSE_TABLE(kDataPresenceCauses, INFERSCOPE_DOCTOR_DATA_PRESENCE_CAUSES);

std::span<const CauseSpec> data_presence_causes() { return kDataPresenceCauses; }

namespace {

// finding starts a data-presence finding from its spec.
Finding finding(CauseId id) {
  Finding f;
  f.cause = std::string(to_string(id));
  f.next_steps = next_steps_of(id);
  return f;
}

}  // namespace

bool evaluate_data_presence(const Snapshot& s, std::vector<Finding>& findings) {
  bool all_down = false;
  if (s.targets_total > 0 && !s.targets_down.empty()) {
    Finding f = finding(CauseId::kTargetDown);
    all_down = static_cast<int>(s.targets_down.size()) >= s.targets_total;
    f.score = all_down ? 1.0 : 0.8;
    f.summary = std::to_string(s.targets_down.size()) + " of " + std::to_string(s.targets_total) +
                " scrape targets are down: " + s.targets_down.front();
    f.evidence.push_back({"up", static_cast<double>(s.targets_total),
                          static_cast<double>(s.targets_total - static_cast<int>(s.targets_down.size())), "targets"});
    findings.push_back(f);
  }
  if (all_down || (s.missing.empty() && s.renamed.empty())) return all_down;
  Finding f = finding(CauseId::kMetricsMissing);
  f.score = s.missing.empty() ? 0.5 : 0.9;
  std::string list;
  for (const auto& m : s.missing) list += (list.empty() ? "" : ", ") + m;
  for (const auto& r : s.renamed) list += (list.empty() ? "renamed: " : "; renamed: ") + r;
  f.summary = (s.missing.empty() ? "deprecated metric names still in use: " : "expected metrics are missing: ") + list;
  for (const auto& m : s.missing) f.evidence.push_back({m, kNaN, kNaN, "absent"});
  for (const auto& r : s.renamed) f.evidence.push_back({r, kNaN, kNaN, "renamed"});
  findings.push_back(f);
  return false;
}

// A single down target is where target_down is (Prometheus: "job/instance: error"; scrapes: "URL: error").
void localize_data_presence(Diagnosis& d) {
  if (d.snapshot.targets_down.size() != 1) return;
  const std::string& line = d.snapshot.targets_down.front();
  const std::string target = line.substr(0, line.find(": "));
  Where w;
  if (target.find("://") != std::string::npos) {
    w.instance = instance_of(target);
  } else if (auto slash = target.find('/'); slash != std::string::npos) {
    w.job = target.substr(0, slash);
    w.instance = target.substr(slash + 1);
  }
  for (Finding& f : d.findings)
    if (f.cause == to_string(CauseId::kTargetDown)) f.where = w;
}

}  // namespace inferscope::doctor::detail
