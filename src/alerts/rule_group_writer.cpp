#include "alerts/rule_group_writer.h"

#include "common/prom_duration.h"

namespace inferscope::alerts {

std::string yaml_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "''";
    } else if (c == '\n') {
      out += ' ';  // single-quoted YAML folds newlines anyway; keep each rule on its lines
    } else {
      out += c;
    }
  }
  return out + "'";
}

RuleGroupWriter::RuleGroupWriter(std::string_view name, std::optional<std::chrono::milliseconds> interval) {
  text_ += "  - name: " + yaml_quote(name) + "\n";
  if (interval) text_ += "    interval: " + common::format_prom_duration(*interval) + "\n";
  text_ += "    rules:\n";
}

void RuleGroupWriter::comment(std::string_view text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    text_ += "      # " + std::string(text.substr(start, end - start)) + "\n";
    start = end + 1;
  }
}

void RuleGroupWriter::record(std::string_view name, std::string_view expr,
                             const std::map<std::string, std::string>& labels) {
  text_ += "      - record: " + std::string(name) + "\n";
  text_ += "        expr: " + yaml_quote(expr) + "\n";
  if (labels.empty()) return;
  text_ += "        labels:\n";
  for (const auto& [key, value] : labels) text_ += "          " + key + ": " + yaml_quote(value) + "\n";
}

void RuleGroupWriter::alert(const AlertRule& rule) {
  text_ += "      - alert: " + rule.name + "\n";
  text_ += "        expr: " + yaml_quote(rule.expr) + "\n";
  text_ += "        for: " + common::format_prom_duration(rule.for_duration) + "\n";
  text_ += "        labels:\n";
  text_ += "          severity: " + yaml_quote(rule.severity) + "\n";
  for (const auto& [key, value] : rule.labels) text_ += "          " + key + ": " + yaml_quote(value) + "\n";
  text_ += "        annotations:\n";
  text_ += "          summary: " + yaml_quote(rule.summary) + "\n";
  text_ += "          description: " + yaml_quote(rule.description) + "\n";
  text_ += "          runbook: " + yaml_quote(rule.runbook) + "\n";
}

}  // namespace inferscope::alerts
