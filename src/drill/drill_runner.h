// File: drill/drill_runner.h
// run_drill proves the alerts of a running `inferscope up` really reach its relay: it finds the
// `inferscope serve` targets with the admin API (GET <api>/api/status), keeps load on each with the
// built-in load generator, and per drill case causes the condition (a fault, its own load, or up's
// drill robot refusing messages), waits for the firing notification in the relay
// (GET <api>/api/notifications), clears the condition and waits for the resolved one. With several
// targets the cases are dealt round-robin to one lane per target and the lanes run at once.
// Example: auto report = run_drill({.api = "http://127.0.0.1:9300"});
// Blocking (minutes: each alert's `for` plus Alertmanager's grouping); one drill at a time.
// Always clears the faults it set and the robot's refusal, also when a step fails.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::drill {

struct DrillOptions {
  std::string api = "http://127.0.0.1:9300";  // `inferscope up`'s API
  std::string only;                           // one alert or case name; empty = every case
  std::chrono::seconds fire_timeout{300};     // fault -> firing notification, per case
  std::chrono::seconds resolve_timeout{300};  // clear -> resolved notification, per case
  double load_rate = 8;                       // requests/s kept on the target during the drill
  std::function<void(const std::string&)> progress;  // one line per step (may be empty)
  std::function<bool()> interrupted;                 // polled while waiting: true = stop (may be empty)
};

// DrillRow is one alert's result.
struct DrillRow {
  std::string alert;
  std::string job;        // target job the fault was injected into
  std::string fault;      // drill case name
  std::string how;        // how_name(): "fault", "load", "refusing channel"
  bool fired = false;
  double seconds_to_notification = 0;  // fault -> firing notification stored by the relay
  bool resolved = false;
  double seconds_to_resolve = 0;       // fault cleared -> resolved notification stored
};

// DrillReport is every row plus the alerts the drill skipped at run time (with why: e.g. up runs
// without `drill: {enabled: true}`, or the throughput baseline is longer than --fire-timeout).
struct DrillReport {
  std::vector<DrillRow> rows;
  std::vector<std::pair<std::string, std::string>> skipped;

  // all_fired reports whether every row fired (the drill's exit status).
  bool all_fired() const;
};

// run_drill runs the selected cases. Fails (one line) when up's API is unreachable, no target
// is an inferscope serve with --enable-admin within 30 s (a fresh `up` may not have scraped yet),
// `only` names nothing known, or the load cannot start; when `interrupted` turns true it clears
// the faults it set and fails with "interrupted; the faults set on <job> (<url>)... were cleared".
Result<DrillReport> run_drill(const DrillOptions& options);

// render_table prints the report as a fixed-width table; render_json as JSON
// ({"rows":[{alert, job, fault, how, fired, seconds_to_notification, resolved, seconds_to_resolve}],
// "skipped":[{alert, why}], "all_fired"}).
std::string render_table(const DrillReport& report);
std::string render_json(const DrillReport& report);

}  // namespace inferscope::drill
