// File: up_rules.h
// make_up_rules settles each target's dialect (its configured kind, or for `auto` the dialect
// detected from one scrape of it) and produces the rule files for the stack from the rules
// generator; generate_up_rules does the same for kinds already settled (no scrape), which is how
// kind_follower.h regenerates the rules when a target's kind becomes known or changes.
// Example: Result<UpRules> r = make_up_rules(config); write r->files.
// Thread-compatible; blocking (one short scrape per `auto` target). A target that cannot be
// scraped or speaks no known dialect is not an error: it keeps kind "auto", gets only the
// generic rules (target down, watchdog) and `up --status` says so.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "up/generated_files.h"
#include "config/stack_config.h"

namespace inferscope::up {

// TargetProbe is what one scrape of a target says about its kind.
struct TargetProbe {
  bool answered = false;            // HTTP 200 with an exposition that parses
  std::optional<std::string> kind = {};  // the primary dialect's config spelling; nullopt: none known
  std::set<std::string> families = {};  // family names of the exposition (when answered)
  // expected_missing: the expected (always/lazy) metrics of `checked_kind` the exposition lacks.
  std::string checked_kind = {};
  std::vector<std::string> expected_missing = {};
  std::string error = {};  // why there is no kind: connect error, HTTP status, no known dialect
};

// UpRules are the rule files plus what `--status` shows per target.
struct UpRules {
  std::vector<RuleFile> files;
  std::map<std::string, std::string> dialects;                     // job -> dialect used
  std::map<std::string, std::vector<std::string>> missing_alerts;  // job -> alerts it cannot have
  std::map<std::string, int> alert_counts;                         // job -> alerting rules in its file
  std::vector<std::string> warnings;                               // one line each, for up's output
  std::map<std::string, TargetProbe> probes;                       // job -> start-up probe of an `auto` target
};

// probe_target scrapes `target.url` once (3 s), detects its dialect and, when `expected_kind`
// names a dialect, lists the expected metrics of that dialect the exposition lacks. The one place
// up fetches a target's /metrics itself.
TargetProbe probe_target(const config::TargetConfig& target, const std::string& expected_kind = "auto");

// make_up_rules resolves `auto` kinds in `config.targets` (in place) and generates the rules.
Result<UpRules> make_up_rules(config::StackConfig& config);

// generate_up_rules generates the rules for the kinds in `config.targets` as they are (a target
// still "auto" gets the generic rules only). Fails on an unknown alerts.for name.
Result<UpRules> generate_up_rules(const config::StackConfig& config);

}  // namespace inferscope::up
