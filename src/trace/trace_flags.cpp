// File: trace_flags.cpp
#include "trace/trace_flags.h"

#include "common/duration_text.h"

namespace inferscope::trace {

void add_trace_flags(CLI::App& cmd, TraceFlags& flags) {
  cmd.add_option("--otlp-endpoint", flags.otlp_endpoint,
                 "export per-request spans as OTLP/HTTP protobuf to this URL (e.g. "
                 "http://127.0.0.1:4318/v1/traces); off when not given");
  cmd.add_option("--trace-sample", flags.sample,
                 "head sampling ratio 0..1 for requests without a sampled traceparent (an incoming "
                 "traceparent's sampled flag wins)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd.add_option("--trace-slow", flags.slow,
                 "always export requests at least this slow (e.g. 2s, 500ms); failed requests are always exported");
}

void apply_trace_flags(const CLI::App& cmd, const TraceFlags& flags, TraceSettings& settings) {
  if (cmd.count("--otlp-endpoint") > 0) settings.otlp_endpoint = flags.otlp_endpoint;
  if (!settings.enabled()) {
    for (const char* name : {"--trace-sample", "--trace-slow"}) {
      if (cmd.count(name) > 0) throw CLI::ValidationError(name, "needs --otlp-endpoint");
    }
    return;
  }
  if (cmd.count("--trace-sample") > 0) settings.policy.sample_ratio = flags.sample;
  if (cmd.count("--trace-slow") > 0) {
    auto slow = common::parse_duration(flags.slow, "--trace-slow");
    if (!slow) throw CLI::ValidationError("--trace-slow", slow.error().message);
    if (slow->count() <= 0) throw CLI::ValidationError("--trace-slow", "must be positive");
    settings.policy.slow_seconds = std::chrono::duration<double>(*slow).count();
  }
  if (auto valid = validate_trace_settings(settings); !valid) {
    throw CLI::ValidationError(valid.error().message);
  }
}

}  // namespace inferscope::trace
