// File: drill/drill_cases.h
// The fire-drill catalog: for each generated alert, how `inferscope drill` causes it on an
// `inferscope serve --enable-admin` target and clears it again: a fault through serve's admin API
// (POST /admin/faults), a change of the drill's own load (shorter outputs at the same request
// rate), or up's drill robot refusing messages (channel "drill", POST <up>/api/drill) while a
// fault produces notifications. Example:
//   for (const DrillCase& c : select_cases("")) { post(c.inject_json); ...; post(kClearFaultsJson); }
// Constant data; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace inferscope::drill {

// DrillHow is how a case causes its alerts.
enum class DrillHow {
  kFault,            // POST /admin/faults inject_json; cleared with kClearFaultsJson
  kLoad,             // the drill's load cuts each output to kShortOutputTokens, same request rate
  kRefusingChannel,  // up's drill robot refuses (503) while inject_json makes notifications
};

// how_name is the table's spelling: "fault", "load", "refusing channel".
std::string_view how_name(DrillHow how);

// DrillCase is one way of causing alerts on a target and the alerts it must raise.
struct DrillCase {
  std::string name;         // short id for --only and the table ("error_rate")
  DrillHow how = DrillHow::kFault;
  std::string inject_json;  // body of POST /admin/faults (kFault, kRefusingChannel); empty for kLoad
  std::vector<std::string> alerts;  // alert names expected to fire (and resolve after clearing)
  std::string why;          // what it does to the metrics
};

// kClearFaultsJson resets every fault of the target.
inline constexpr std::string_view kClearFaultsJson = R"({"clear": true})";

// The drill's load asks for kFullOutputTokens per request; the throughput case cuts that to
// kShortOutputTokens (30 %: below the alert's 50 %) at the same request rate.
inline constexpr unsigned kFullOutputTokens = 40;
inline constexpr unsigned kShortOutputTokens = 12;

// hidden_latency_families lists the metric families the latency_absent case hides: the latency
// families of the inferscope dialect that LatencyMetricsAbsent expects (from the dialect table).
std::vector<std::string> hidden_latency_families();

// drill_cases returns the catalog in the order the drill runs it (the throughput case first: its
// baseline is steady load with no fault before it).
const std::vector<DrillCase>& drill_cases();

// select_cases keeps the cases whose name or one of whose alerts equals `only` (all when empty);
// a case kept for one alert keeps only that alert.
std::vector<DrillCase> select_cases(std::string_view only);

}  // namespace inferscope::drill
