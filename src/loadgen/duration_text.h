// File: duration_text.h
// Parses and prints the human durations the bench flags use ("250ms", "1.5s", "2m", "90us").
// Example: Result<std::chrono::nanoseconds> d = parse_duration("500ms", "--slo ttft");
// Pure functions, thread-safe. Never accepts a negative or unit-less value (a bare number is
// ambiguous between seconds and a request count, so callers decide that case themselves).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "inferscope/common/result.h"

namespace inferscope::loadgen {

// parse_duration reads "<number><unit>" with unit ns|us|ms|s|m|h. `what` names the flag in the
// error message ("cannot parse duration from --warmup: ...").
Result<std::chrono::nanoseconds> parse_duration(std::string_view text, std::string_view what);

// has_duration_unit reports whether `text` ends in a unit parse_duration understands.
bool has_duration_unit(std::string_view text);

// format_seconds prints a duration as seconds with 3 decimals ("12.345s").
std::string format_seconds(std::chrono::nanoseconds d);

}  // namespace inferscope::loadgen
