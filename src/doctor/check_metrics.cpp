#include "doctor/check_metrics.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "doctor/role_spec.h"

namespace inferscope::doctor {

MetricsCheck check_exposition(const std::string& url, const FetchedExposition& fetched,
                              const dialect::CustomDialect* custom) {
  MetricsCheck c;
  c.url = url;
  std::set<std::string> names = metric_names(fetched.parsed);
  c.dialects = custom ? std::vector<std::string>{"custom"} : detect_dialects(names);
  if (custom) {
    for (dialect::Role role : custom->unmapped_roles()) c.unmapped.emplace_back(dialect::to_string(role));
  }
  for (const RoleSpec& spec : custom ? role_specs_for(custom->table()) : role_specs_for(c.dialects)) {
    bool renamed = false;
    std::string metric = choose_metric(spec, names, renamed);
    // A mapped name is there because someone said the target exposes it: its absence is a mistake.
    if (metric.empty() && (spec.expected || custom)) c.missing.push_back(spec.id + ": " + spec.metrics.front());
    if (renamed) c.renamed.push_back(metric + " (renamed to " + spec.metrics.front() + ")");
    // Dashboards made for older versions query the old names; say which ones now come back empty.
    if (!metric.empty() && !renamed)
      for (std::size_t i = 1; i < spec.metrics.size(); ++i)
        if (!names.count(series_names(spec, spec.metrics[i]).back()))
          c.dashboard_gaps.push_back(spec.metrics[i] + " (now " + metric + ")");
  }
  if (auto valid = metrics::validate_exposition(fetched.parsed); !valid) c.problems.push_back(valid.error().message);
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
  list("roles the mapping does not name (no rules, panels or doctor evidence for them)", c.unmapped);
  out << "families with the most series:\n";
  for (const auto& [name, n] : c.top_families) out << "  " << n << "\t" << name << "\n";
  return out.str();
}

nlohmann::json to_json(const MetricsCheck& c) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [name, n] : c.top_families) top.push_back({{"family", name}, {"series", n}});
  return {{"url", c.url},         {"verdict", c.verdict},       {"dialects", c.dialects},
          {"missing", c.missing}, {"renamed", c.renamed},       {"dashboard_gaps", c.dashboard_gaps},
          {"problems", c.problems}, {"unmapped", c.unmapped},   {"families", c.families},   {"series", c.series},
          {"top_families", top}};
}

}  // namespace inferscope::doctor
