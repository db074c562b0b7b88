// File: prom_duration.h
// Parses and prints durations in Prometheus' own syntax ("1m30s", "15d", "500ms"), the form every
// generated prometheus.yml/alertmanager.yml/rule file carries. Example:
//   Result<std::chrono::milliseconds> d = parse_prom_duration("1m30s");  // 90000 ms
// Pure functions, thread-safe. Zero is rejected by parse (Prometheus reads "0s" as "unset").
// Human-readable durations (bench flags, "1.20 s" in reports) are duration_text.h's.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <inferscope/common/result.h>

namespace inferscope::common {

// parse_prom_duration reads one or more "<integer><unit>" parts, units y w d h m s ms, largest
// first, each at most once (Prometheus' model.ParseDuration). Fails with a message naming the
// text for anything else, including 0 and overflow.
Result<std::chrono::milliseconds> parse_prom_duration(std::string_view text);

// format_prom_duration prints `d` in the same syntax, largest units first ("1h30m", "1500ms").
// A non-positive duration prints "0s".
std::string format_prom_duration(std::chrono::milliseconds d);

}  // namespace inferscope::common
