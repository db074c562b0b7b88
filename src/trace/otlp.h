// File: otlp.h
// OTLP/HTTP protobuf for traces, by hand (Debian 12 has no OpenTelemetry C++ package): encode an
// ExportTraceServiceRequest for the exporter, and decode one (any OTel SDK's) for a receiver.
// Only the fields of span.h travel; a decoder skips every other field (events, links, trace_state,
// dropped counts, schema URLs) as protobuf's unknown-field rule allows.
// Example: std::string body = encode_export_request(request);
//          Result<ExportRequest> back = decode_export_request(body);
// Pure functions, thread-safe. The decoder never throws or reads past its input; its errors are
// one line starting "cannot decode OTLP traces: ".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

#include "trace/span.h"

namespace inferscope::trace {

// ScopeSpans is the spans of one instrumentation scope (OTLP ScopeSpans + InstrumentationScope).
struct ScopeSpans {
  std::string scope_name;
  std::string scope_version;
  std::vector<Span> spans;
  bool operator==(const ScopeSpans&) const = default;
};

// ResourceSpans is the spans of one resource (a process: service.name and friends).
struct ResourceSpans {
  std::vector<Attribute> resource_attributes;
  std::vector<ScopeSpans> scopes;
  // service_name returns the resource's service.name string, or "" when absent.
  std::string_view service_name() const noexcept;
  bool operator==(const ResourceSpans&) const = default;
};

// ExportRequest mirrors opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.
struct ExportRequest {
  std::vector<ResourceSpans> resources;
  std::size_t span_count() const noexcept;
  bool operator==(const ExportRequest&) const = default;
};

// encode_export_request writes the protobuf wire form (fields in number order, empty strings,
// zero parents and an unset status left out as proto3 does).
std::string encode_export_request(const ExportRequest& request);

// encode_spans_field writes `spans` as ScopeSpans' repeated `spans` field (each a length-delimited
// Span, through SpanWriter): pieces the overload below joins into one body.
std::string encode_spans_field(const std::vector<Span>& spans);

// encode_export_request writes a request of one resource and one scope whose spans are
// `span_fields`, encode_spans_field outputs joined end to end (the exporter's batch buffer): byte
// for byte what the ExportRequest overload writes for the same spans. The fields are copied once,
// after the envelope.
std::string encode_export_request(const std::vector<Attribute>& resource_attributes, std::string_view scope_name,
                                  std::string_view scope_version, std::string_view span_fields);
// The same into `out` (replaced, its capacity reused: no allocation per batch once it has grown).
void encode_export_request(std::string& out, const std::vector<Attribute>& resource_attributes,
                           std::string_view scope_name, std::string_view scope_version, std::string_view span_fields);

// decode_export_request reads the protobuf wire form. Fails on truncated or malformed wire data,
// group wire types, a trace id that is not 16 bytes or a span id that is not 8 (a parent id may be
// empty), an enum value outside its range, and a string (name, key, value) that is not UTF-8.
Result<ExportRequest> decode_export_request(std::string_view body);

// decode_spans_field reads concatenated ScopeSpans.spans fields (what encode_spans_field and
// SpanWriter write), with the same checks.
Result<std::vector<Span>> decode_spans_field(std::string_view fields);

}  // namespace inferscope::trace
