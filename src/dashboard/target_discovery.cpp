#include "dashboard/target_discovery.h"

#include <algorithm>
#include <map>
#include <set>

#include "dialect/promql.h"

namespace inferscope::dashboard {
namespace {

using dialect::DialectId;

// Precedence of dialect/detect.h: the serving software first, exporters last.
constexpr const auto& kPrecedence = dialect::kAllDialects;

std::set<std::string> dialect_names(DialectId id) {
  std::set<std::string> names;
  for (const auto& b : dialect::dialect(id).bindings) {
    names.insert(dialect::presence_series(b.kind, b.metric));
    for (const auto& old : b.legacy) names.insert(dialect::presence_series(b.kind, old.name));
  }
  return names;
}

std::string name_regex(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += '|';
    out += n;  // metric names are [a-zA-Z0-9_:], nothing to escape in a regex
  }
  return out;
}

// classify picks a job's dialect from the metric names it exposes.
std::optional<DialectId> classify(const std::set<std::string>& present) {
  auto has_any = [&present](DialectId id) {
    for (const auto& n : dialect_names(id)) {
      if (present.count(n)) return true;
    }
    return false;
  };
  // inferscope serve has engine gauges a gateway lacks; both share the other inferscope_* names.
  const auto gateway = dialect_names(DialectId::kGateway);
  for (const auto& n : dialect_names(DialectId::kInferscope)) {
    if (present.count(n) && !gateway.count(n)) return DialectId::kInferscope;
  }
  for (DialectId id : kPrecedence) {
    if (id != DialectId::kInferscope && has_any(id)) return id;
  }
  return std::nullopt;
}

std::size_t rank(const JobInfo& job) {
  if (!job.dialect) return std::size(kPrecedence);
  const DialectId order[] = {DialectId::kInferscope, DialectId::kVllm,    DialectId::kSglang,
                             DialectId::kTgi,        DialectId::kLlamaCpp, DialectId::kTriton,
                             DialectId::kDynamo,     DialectId::kLlmd,     DialectId::kGateway,
                             DialectId::kLitellm,    DialectId::kDcgm,     DialectId::kNode};
  static_assert(std::size(order) == dialect::kAllDialects.size(), "rank every dialect");
  return static_cast<std::size_t>(std::find(std::begin(order), std::end(order), *job.dialect) - std::begin(order));
}

}  // namespace

bool is_serving_dialect(DialectId id) noexcept { return !dialect::is_exporter(id); }

Result<Targets> discover_targets(const promapi::PrometheusClient& client, double now) {
  std::set<std::string> all_names;
  for (DialectId id : kPrecedence) {
    auto names = dialect_names(id);
    all_names.insert(names.begin(), names.end());
  }
  std::vector<promapi::QueryRequest> requests;
  requests.push_back({"up", now});
  requests.push_back({"count by (job, __name__) ({__name__=~\"" + name_regex(all_names) + "\"})", now});
  // Model names: one query per model label spelling (inferscope and Triton "model", vLLM "model_name").
  std::map<std::string, std::set<std::string>> names_by_model_label;
  for (DialectId id : kPrecedence) {
    const auto& d = dialect::dialect(id);
    if (d.model_label.empty()) continue;
    auto names = dialect_names(id);
    names_by_model_label[std::string(d.model_label)].insert(names.begin(), names.end());
  }
  std::vector<std::string> model_labels;
  for (const auto& [label, names] : names_by_model_label) {
    model_labels.push_back(label);
    requests.push_back({"count by (job, " + label + ") ({__name__=~\"" + name_regex(names) + "\"})", now});
  }
  auto results = client.query_all(requests);
  for (const auto& r : results) {
    if (!r) return r.error();
  }

  std::map<std::string, JobInfo> jobs;
  for (const auto& s : results[0]->series) {
    auto job_it = s.labels.find("job");
    if (job_it == s.labels.end()) continue;
    JobInfo& info = jobs[job_it->second];
    info.job = job_it->second;
    info.instances++;
    if (!s.points.empty() && s.points.back().value == 1) info.instances_up++;
  }
  std::map<std::string, std::set<std::string>> present;
  for (const auto& s : results[1]->series) {
    auto job_it = s.labels.find("job");
    auto name_it = s.labels.find("__name__");
    if (job_it != s.labels.end() && name_it != s.labels.end()) present[job_it->second].insert(name_it->second);
  }
  std::set<std::string> all_models;
  for (std::size_t i = 0; i < model_labels.size(); ++i) {
    for (const auto& s : results[2 + i]->series) {
      auto job_it = s.labels.find("job");
      auto model_it = s.labels.find(model_labels[i]);
      if (job_it == s.labels.end() || model_it == s.labels.end() || model_it->second.empty()) continue;
      auto& models = jobs[job_it->second].models;
      if (std::find(models.begin(), models.end(), model_it->second) == models.end()) models.push_back(model_it->second);
      all_models.insert(model_it->second);
    }
  }
  Targets out;
  for (auto& [name, info] : jobs) {
    info.job = name;
    info.dialect = classify(present[name]);
    std::sort(info.models.begin(), info.models.end());
    out.jobs.push_back(std::move(info));
  }
  std::stable_sort(out.jobs.begin(), out.jobs.end(), [](const JobInfo& a, const JobInfo& b) { return rank(a) < rank(b); });
  out.models.assign(all_models.begin(), all_models.end());
  return out;
}

const JobInfo* default_job(const Targets& targets) {
  for (const auto& job : targets.jobs) {
    if (job.dialect && is_serving_dialect(*job.dialect)) return &job;
  }
  return nullptr;
}

const JobInfo* find_job(const Targets& targets, std::string_view job) {
  for (const auto& j : targets.jobs) {
    if (j.job == job) return &j;
  }
  return nullptr;
}

}  // namespace inferscope::dashboard
