#include "doctor/check_metrics.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "doctor/role_spec.h"

namespace inferscope::doctor {

namespace {

// family_at finds the family a validator message's line belongs to ("... at line L: ...").
const metrics::ParsedFamily* family_at(const metrics::ParsedExposition& exposition, const std::string& message) {
  const auto at = message.find("at line ");
  if (at == std::string::npos) return nullptr;
  const std::size_t line = std::strtoul(message.c_str() + at + 8, nullptr, 10);
  for (const auto& family : exposition.families) {
    if (family.line == line) return &family;
    for (const auto& sample : family.samples)
      if (sample.line == line) return &family;
  }
  return nullptr;
}

// validator_findings runs the library's strict validator on each family alone (it stops at its
// first finding, and one quirk must not hide another family's real problem), then on the whole
// exposition for what spans families (duplicates, split families).
std::vector<std::string> validator_findings(const metrics::ParsedExposition& exposition) {
  std::vector<std::string> found;
  for (const auto& family : exposition.families) {
    metrics::ParsedExposition one{exposition.format, {family}};
    if (auto valid = metrics::validate_exposition(one); !valid) found.push_back(valid.error().message);
  }
  if (auto valid = metrics::validate_exposition(exposition); !valid &&
      std::find(found.begin(), found.end(), valid.error().message) == found.end())
    found.push_back(valid.error().message);
  return found;
}

}  // namespace

MetricsCheck check_exposition(const std::string& url, const FetchedExposition& fetched,
                              const dialect::CustomDialect* custom) {
  MetricsCheck c;
  c.url = url;
  std::set<std::string> names = metric_names(fetched.parsed);
  c.dialects = custom ? std::vector<std::string>{"custom"} : detect_dialects(names);
  if (custom) {
    for (dialect::Role role : custom->unmapped_roles()) c.unmapped.emplace_back(dialect::to_string(role));
  }
  std::set<std::string> read_series;  // the series names the dialect's roles read
  for (const RoleSpec& spec : custom ? role_specs_for(custom->table()) : role_specs_for(c.dialects)) {
    bool renamed = false;
    std::string metric = choose_metric(spec, names, renamed);
    if (!metric.empty()) {
      for (const std::string& series : series_names(spec, metric)) read_series.insert(series);
      std::string per;
      if (!spec.by_label.empty())
        per = " (per " + (spec.group_label.empty() ? std::string() : spec.group_label + " and ") + spec.by_label + ")";
      c.reads.push_back(spec.id + ": " + metric + (spec.matchers.empty() ? "" : "{" + spec.matchers + "}") + per);
    }
    // A mapped name is there because someone said the target exposes it: its absence is a mistake.
    if (metric.empty() && (spec.expected || custom)) c.missing.push_back(spec.id + ": " + spec.metrics.front());
    if (renamed) c.renamed.push_back(metric + " (renamed to " + spec.metrics.front() + ")");
    // Dashboards made for older versions query the old names; say which ones now come back empty.
    if (!metric.empty() && !renamed)
      for (std::size_t i = 1; i < spec.metrics.size(); ++i)
        if (!names.count(series_names(spec, spec.metrics[i]).back()))
          c.dashboard_gaps.push_back(spec.metrics[i] + " (now " + metric + ")");
  }
  for (std::string& finding : validator_findings(fetched.parsed)) {
    const metrics::ParsedFamily* family = family_at(fetched.parsed, finding);
    bool read = false;
    if (family)
      for (const auto& sample : family->samples) read = read || read_series.count(sample.name) > 0;
    // The validator's wording for the one check Prometheus also enforces at ingestion.
    const bool loses_data = finding.find("duplicate series") != std::string::npos;
    if (loses_data) c.problems.push_back(finding + " (Prometheus keeps one sample and drops the others)");
    else if (read) c.problems.push_back(finding + " (" + family->name + " is read by the doctor, rules and panels)");
    else c.warnings.push_back(finding + " (Prometheus ingests it; nothing inferscope reads uses " +
                              (family ? family->name : std::string("this family")) + ")");
  }
  std::vector<std::pair<std::string, std::size_t>> sizes;
  for (const auto& f : fetched.parsed.families) {
    std::set<std::string> series;
    for (const auto& s : f.samples) {
      std::string key = s.name;
      for (const auto& l : s.labels)
        if (l.name != "le" && l.name != "quantile") key += "," + l.name + "=" + l.value;
      series.insert(key);
    }
    sizes.push_back({f.name, series.size()});
    c.series += series.size();
  }
  c.families = fetched.parsed.families.size();
  std::stable_sort(sizes.begin(), sizes.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (sizes.size() > 10) sizes.resize(10);
  c.top_families = sizes;
  if (c.dialects.empty()) c.verdict = "no_data";
  else if (!c.missing.empty() || !c.renamed.empty() || !c.problems.empty()) c.verdict = "degraded";
  else c.verdict = "healthy";
  return c;
}

std::string to_text(const MetricsCheck& c) {
  std::ostringstream out;
  std::string dialects;
  for (const auto& d : c.dialects) dialects += (dialects.empty() ? "" : ", ") + d;
  out << c.verdict << ": " << c.url << " — dialect " << (dialects.empty() ? "unknown (no inferscope, vLLM or llama.cpp metrics)" : dialects)
      << ", " << c.families << " families, " << c.series << " series\n";
  auto list = [&](const char* title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out << title << ":\n";
    for (const auto& i : items) out << "  - " << i << "\n";
  };
  list("expected metrics missing", c.missing);
  list("renamed metrics still in use", c.renamed);
  list("old names dashboards may still query (now empty)", c.dashboard_gaps);
  list("exposition problems", c.problems);
  list("exposition warnings (not counted against the verdict)", c.warnings);
  list("roles the mapping does not name (no rules, panels or doctor evidence for them)", c.unmapped);
  list("roles the doctor reads", c.reads);
  out << "families with the most series:\n";
  for (const auto& [name, n] : c.top_families) out << "  " << n << "\t" << name << "\n";
  return out.str();
}

nlohmann::json to_json(const MetricsCheck& c) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [name, n] : c.top_families) top.push_back({{"family", name}, {"series", n}});
  return {{"url", c.url},         {"verdict", c.verdict},       {"dialects", c.dialects},
          {"missing", c.missing}, {"renamed", c.renamed},       {"dashboard_gaps", c.dashboard_gaps},
          {"problems", c.problems}, {"warnings", c.warnings}, {"unmapped", c.unmapped}, {"reads", c.reads},   {"families", c.families},   {"series", c.series},
          {"top_families", top}};
}

}  // namespace inferscope::doctor
