// File: alerts/rule_group_writer.h
// RuleGroupWriter renders one Prometheus rule group (recording and alerting rules, comments) as
// YAML text, quoting every expression and template so no PromQL or {{ }} can break the file.
// Example: RuleGroupWriter g("inferscope-vllm", std::nullopt); g.record("a:b:c", "sum(x)"); g.text();
// Not thread-safe (one builder, one thread); never fails: validation is promtool's job in tests.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace inferscope::alerts {

// AlertRule is one alerting rule before rendering.
struct AlertRule {
  std::string name = {};
  std::string expr = {};
  std::chrono::milliseconds for_duration{0};
  std::string severity = {};                       // "critical", "warning" or "none"
  std::map<std::string, std::string> labels = {};  // extra labels (besides severity)
  std::string summary = {};                        // Go templates allowed ({{ $labels.job }}, {{ $value }})
  std::string description = {};
  std::string runbook = {};                        // what to look at next
};

// yaml_quote returns `text` as a single-quoted YAML scalar ('' escapes a quote; newlines kept out).
std::string yaml_quote(std::string_view text);

class RuleGroupWriter {
 public:
  // RuleGroupWriter starts group `name`; `interval` becomes the group's `interval:` when set.
  RuleGroupWriter(std::string_view name, std::optional<std::chrono::milliseconds> interval);

  // comment adds `# text` lines (one per line of `text`) before the next rule.
  void comment(std::string_view text);

  // record adds a recording rule; `labels` are set on its result (e.g. a fixed stage).
  void record(std::string_view name, std::string_view expr, const std::map<std::string, std::string>& labels = {});

  // alert adds an alerting rule.
  void alert(const AlertRule& rule);

  // text returns the group's YAML, indented to sit under a top-level `groups:` key.
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace inferscope::alerts
