// File: up_rules.h
// make_up_rules settles each target's dialect (its configured kind, or for `auto` the dialect
// detected from one scrape of it) and produces the rule files for the stack from the rules
// generator. Example: Result<UpRules> r = make_up_rules(config); write r->files.
// Thread-compatible; blocking (one short scrape per `auto` target). A target that cannot be
// scraped or speaks no known dialect is not an error: it keeps kind "auto", gets only the
// generic rules (target down, watchdog) and `up --status` says so.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "stack/generated_files.h"
#include "stack/stack_config.h"

namespace inferscope::stack {

// UpRules are the rule files plus what `--status` shows per target.
struct UpRules {
  std::vector<RuleFile> files;
  std::map<std::string, std::string> dialects;                     // job -> dialect used
  std::map<std::string, std::vector<std::string>> missing_alerts;  // job -> alerts it cannot have
  std::vector<std::string> warnings;                               // one line each, for up's output
};

// detect_target_dialect scrapes `target.url` once (3 s) and returns the detected dialect's
// config spelling, or an Error saying why none was found.
Result<std::string> detect_target_dialect(const TargetConfig& target);

// make_up_rules resolves `auto` kinds in `config.targets` (in place) and generates the rules.
Result<UpRules> make_up_rules(StackConfig& config);

}  // namespace inferscope::stack
