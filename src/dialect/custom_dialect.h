// File: dialect/custom_dialect.h
// CustomDialect is the table of a hand-instrumented target (`kind: custom` in up's config): the
// roles of the one dialect table mapped to the target's own metric names, with a unit where the
// exposed one is not the role's (milliseconds, percent, MB ...). Rules, the dashboard and the
// doctor read it through find_binding(table, role) exactly like a built-in dialect.
// Example: auto d = make_custom_dialect({{"e2e", "llm_request_latency_seconds", ""},
//                                        {"gpu_utilization", "gpu_utilization_percent", "percent"}});
//          const MetricBinding* e2e = find_binding((*d)->table(), Role::kE2e);
// Immutable once made; share it by shared_ptr across threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

#include "dialect/dialect.h"

namespace inferscope::dialect {

// CustomRole is one mapping line as written: role id (dialect.h's spelling: "e2e", "requests",
// "prompt_tokens", "waiting", "gpu_utilization" ...), the exposed name (histograms: base name,
// counters: the series as exposed, e.g. llm_requests_total) and an optional unit ("" = the role's own).
struct CustomRole {
  std::string role = {};
  std::string metric = {};
  std::string unit = {};
};

class CustomDialect {
 public:
  CustomDialect(const CustomDialect&) = delete;
  CustomDialect& operator=(const CustomDialect&) = delete;

  // table is the mapping as a Dialect (id kCustom, title "custom target <what>"): bindings in the
  // order given, model label as configured.
  const Dialect& table() const noexcept { return table_; }

  // roles returns the mapping as written (for status output and the doctor's --roles file).
  const std::vector<CustomRole>& roles() const noexcept { return roles_; }

  // model_label is the label carrying the model ("" = none).
  const std::string& model_label() const noexcept { return model_label_; }

  // unmapped_roles lists the roles a serving target usually has that this mapping lacks
  // (e2e, ttft, queue, prefill, decode, requests, errors, tokens, waiting, running, kv_usage,
  // gpu_utilization), for "what a mapping lacks, listed as such".
  std::vector<Role> unmapped_roles() const;

 private:
  friend Result<std::shared_ptr<const CustomDialect>> make_custom_dialect(std::vector<CustomRole> roles,
                                                                          std::string model_label);
  CustomDialect() = default;

  std::vector<CustomRole> roles_;
  std::string model_label_;
  std::vector<MetricBinding> bindings_;  // string_views into roles_ (never resized after make)
  Dialect table_;
};

// mappable_roles lists the roles a mapping may name, with the metric kind each one needs: latency
// stages and lengths are histograms, requests/errors/tokens/preemptions counters, load, cache, GPU
// and host figures gauges. Roles whose reading needs more than one name (stage-labelled
// histograms, counter ratios, idle-CPU counters) are not mappable.
std::string mappable_role_list();

// unit_choices names the units `role` accepts ("seconds, milliseconds, microseconds").
std::string unit_choices(Role role);

// make_custom_dialect validates `roles` (known, mappable role; each role once; a metric name in
// Prometheus syntax, histograms without _bucket/_sum/_count; a unit the role accepts) and builds
// the table. `model_label` names the label carrying the model ("" = none). The error is one
// line naming the role: `role "e2e": ...`.
Result<std::shared_ptr<const CustomDialect>> make_custom_dialect(std::vector<CustomRole> roles,
                                                                 std::string model_label);

}  // namespace inferscope::dialect
