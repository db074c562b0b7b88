// File: trace_flags.h
// The tracing flags of `serve` and `gateway`, registered and checked once for both:
// --otlp-endpoint URL, --trace-sample RATIO, --trace-slow DURATION (trace_settings.h).
// Example: TraceFlags flags; add_trace_flags(*cmd, flags);  // then, in the callback:
//          apply_trace_flags(*cmd, flags, options.tracing);  // throws CLI::ValidationError naming the flag
// Thread-compatible.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "trace/trace_settings.h"

namespace inferscope::trace {

// TraceFlags holds the three flags' text as CLI11 parsed it.
struct TraceFlags {
  std::string otlp_endpoint;
  double sample = 1.0;
  std::string slow;  // a duration ("2s", "500ms")
};

// add_trace_flags registers --otlp-endpoint, --trace-sample and --trace-slow on `cmd`.
void add_trace_flags(CLI::App& cmd, TraceFlags& flags);

// apply_trace_flags writes the flags given on the command line over `settings` (which may come
// from a config file), then checks the result: --trace-sample or --trace-slow without an endpoint,
// an unreadable or non-positive --trace-slow, a ratio outside 0..1 throw CLI::ValidationError
// naming the flag.
void apply_trace_flags(const CLI::App& cmd, const TraceFlags& flags, TraceSettings& settings);

}  // namespace inferscope::trace
