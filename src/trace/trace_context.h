// File: trace_context.h
// W3C Trace Context (Level 1, version 00): the `traceparent` header a request arrives with and the
// one a proxy forwards. An invalid header is ignored (the caller starts a new trace) and never
// returned or logged, so outside bytes cannot reach logs or labels through it.
// Example: auto parent = parse_traceparent(request["traceparent"]);  // nullopt: start a new trace
//          std::string header = format_traceparent(trace_id, my_client_span_id, kSampledFlag);
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trace/span.h"

namespace inferscope::trace {

// TraceParent is a valid incoming `traceparent`: the caller's trace, its span and its flags.
struct TraceParent {
  TraceId trace_id{};
  SpanId parent_id{};
  std::uint8_t flags = 0;  // bit 0 sampled, bit 1 random (Level 2)
  bool sampled() const noexcept { return (flags & kSampledFlag) != 0; }
  bool operator==(const TraceParent&) const = default;
};

// parse_traceparent accepts `00-<32 lowercase hex>-<16 lowercase hex>-<2 hex>` with non-zero ids,
// and a later version (not ff) that starts the same way (the spec's forward compatibility: its
// extra fields after a '-' are ignored). Anything else, including surrounding spaces added by a
// sloppy client, is nullopt.
std::optional<TraceParent> parse_traceparent(std::string_view header) noexcept;

// format_traceparent writes a version-00 header; only the sampled and random flag bits are kept.
std::string format_traceparent(const TraceId& trace_id, const SpanId& span_id, std::uint8_t flags);

// head_sampled is the ParentBased(TraceIdRatioBased) decision: an incoming parent's sampled flag
// wins; without one, the trace id's low 8 bytes (as a big-endian number) below ratio * 2^64.
bool head_sampled(const TraceId& trace_id, const std::optional<TraceParent>& parent, double ratio) noexcept;

}  // namespace inferscope::trace
