// File: drill/drill_cases.h
// The fire-drill catalog: for each alert `inferscope drill` can cause on an `inferscope serve`
// target, the fault to inject through its admin API (POST /admin/faults), whether it needs load,
// and the alerts that fault is expected to raise; plus the alerts no drill can cause from outside.
// Example: for (const DrillCase& c : drill_cases()) post(c.inject_json) ... post(kClearFaultsJson);
// Constant data; thread-safe.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace inferscope::drill {

// DrillCase is one fault and the alerts it must raise on the target.
struct DrillCase {
  std::string_view name;          // short id for --only matching and the table ("error_rate")
  std::string_view inject_json;   // body of POST /admin/faults that causes the condition
  std::vector<std::string_view> alerts;  // alert names expected to fire (and resolve after clearing)
  std::string_view why;           // what the fault does to the metrics
};

// kClearFaultsJson resets every fault of the target.
inline constexpr std::string_view kClearFaultsJson = R"({"clear": true})";

// drill_cases returns the catalog in the order the drill runs it.
const std::vector<DrillCase>& drill_cases();

// NotDrillable is an alert the drill cannot cause from outside, and why.
struct NotDrillable {
  std::string_view alert;
  std::string_view why;
};

// not_drillable lists the generated alerts the drill skips.
std::span<const NotDrillable> not_drillable();

// select_cases keeps the cases whose name or one of whose alerts equals `only` (all when empty);
// a case kept for one alert keeps only that alert.
std::vector<DrillCase> select_cases(std::string_view only);

}  // namespace inferscope::drill
