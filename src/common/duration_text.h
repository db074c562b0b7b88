// File: duration_text.h
// Human durations and numbers: parses the duration flags bench takes ("250ms", "1.5s", "2m",
// "90us") and prints seconds and plain numbers the way every report, table and diagnosis shows
// them ("900 ms", "1.20 s", "12.3"). Example:
//   Result<std::chrono::nanoseconds> d = parse_duration("500ms", "--slo ttft");
//   std::string t = format_seconds_readable(1.2);  // "1.20 s"
// Pure functions, thread-safe. The Prometheus syntax ("1m30s") is prom_duration.h's. Never
// accepts a negative or unit-less duration (a bare number is ambiguous between seconds and a
// request count, so callers decide that case themselves).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "inferscope/common/result.h"

namespace inferscope::common {

// parse_duration reads "<number><unit>" with unit ns|us|ms|s|m|h. `what` names the flag in the
// error message ("cannot parse duration from --warmup: ...").
Result<std::chrono::nanoseconds> parse_duration(std::string_view text, std::string_view what);

// has_duration_unit reports whether `text` ends in a unit parse_duration understands.
bool has_duration_unit(std::string_view text);

// format_seconds_readable prints a duration given in seconds with the unit a person reads at a
// glance: "12 us" below 1 ms, "5.00 ms" below 10 ms, "900 ms" below 1 s, else "1.20 s"
// (negative values alike, by magnitude). NaN prints "n/a".
std::string format_seconds_readable(double seconds);

// format_number_readable prints a plain number for a sentence or a table cell: no decimals from
// 100 on ("1234"), one from 10 ("12.3"), else three significant digits ("1.23", "5", "0.0123").
// NaN prints "n/a", infinities "inf"/"-inf".
std::string format_number_readable(double value);

// format_printf prints one number with a printf format of the caller's ("%.2f", "%+.0f %%") for
// the figures whose precision a sentence or a column fixes. The text is cut at 63 bytes.
std::string format_printf(const char* printf_format, double value);

}  // namespace inferscope::common
