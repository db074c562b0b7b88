// File: otlp_json.h
// OTLP/HTTP JSON for traces: decode an ExportTraceServiceRequest sent as `application/json` (what
// the OpenTelemetry JS exporter-trace-otlp-http sends by default) into the ExportRequest that
// otlp.h's protobuf decoder yields, so the receiver, store and waterfall see one model.
// The encoding is opentelemetry-proto docs/specification.md "JSON Protobuf Encoding": proto3's
// JSON mapping with lowerCamelCase keys, trace and span ids as case-insensitive hex (not base64),
// enums as integers only, 64-bit integers as decimal strings or numbers, unknown keys ignored,
// null as the field's default. Values span.h has no room for are skipped as the protobuf decoder
// skips them (kvlist and bytes values, arrays holding anything but strings).
// Example: Result<ExportRequest> r = decode_export_request_json(R"({"resourceSpans":[]})");
// Pure function, thread-safe; parses into a DOM (nlohmann-json), so it costs several times the
// body's size in memory: the receiver's path, never a request's hot path. Never throws.
#pragma once

#include <string_view>

#include <inferscope/common/result.h>

#include "trace/otlp.h"

namespace inferscope::trace {

// decode_export_request_json reads the OTLP JSON form. Fails, with one line starting "cannot
// decode OTLP JSON traces: " and naming the field, on text that is not JSON, a field of the wrong
// JSON type, a trace id that is not 32 hex digits or a span id that is not 16 (a parent id may be
// empty), an enum given by name or outside its range, and a time or integer that is not a whole
// number in range.
Result<ExportRequest> decode_export_request_json(std::string_view body);

}  // namespace inferscope::trace
