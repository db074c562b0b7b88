// File: otlp_wire.h
// The protobuf field numbers and wire types of the OTLP trace messages, and varint sizes: shared
// by the span writer (span_writer.cpp) and the request encoder and decoder (otlp.cpp). Field
// numbers are opentelemetry-proto's (v1.x, stable for traces):
// opentelemetry/proto/collector/trace/v1/trace_service.proto, opentelemetry/proto/trace/v1/trace.proto,
// opentelemetry/proto/resource/v1/resource.proto and opentelemetry/proto/common/v1/common.proto
// (see ../shared/reference/tracing.md §2). Internal to src/trace.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace inferscope::trace::wire {

// ExportTraceServiceRequest
inline constexpr std::uint32_t kRequestResourceSpans = 1;
// ResourceSpans
inline constexpr std::uint32_t kResourceSpansResource = 1;
inline constexpr std::uint32_t kResourceSpansScopeSpans = 2;
// Resource
inline constexpr std::uint32_t kResourceAttributes = 1;
// ScopeSpans
inline constexpr std::uint32_t kScopeSpansScope = 1;
inline constexpr std::uint32_t kScopeSpansSpans = 2;
// InstrumentationScope
inline constexpr std::uint32_t kScopeName = 1;
inline constexpr std::uint32_t kScopeVersion = 2;
// Span
inline constexpr std::uint32_t kSpanTraceId = 1;
inline constexpr std::uint32_t kSpanSpanId = 2;
inline constexpr std::uint32_t kSpanParentSpanId = 4;
inline constexpr std::uint32_t kSpanName = 5;
inline constexpr std::uint32_t kSpanKind = 6;
inline constexpr std::uint32_t kSpanStartTime = 7;  // fixed64
inline constexpr std::uint32_t kSpanEndTime = 8;    // fixed64
inline constexpr std::uint32_t kSpanAttributes = 9;
inline constexpr std::uint32_t kSpanStatus = 15;
inline constexpr std::uint32_t kSpanFlags = 16;     // fixed32
// Status (field 1 is reserved: the deprecated code)
inline constexpr std::uint32_t kStatusMessage = 2;
inline constexpr std::uint32_t kStatusCode = 3;
// KeyValue
inline constexpr std::uint32_t kKeyValueKey = 1;
inline constexpr std::uint32_t kKeyValueValue = 2;
// AnyValue
inline constexpr std::uint32_t kAnyString = 1;
inline constexpr std::uint32_t kAnyBool = 2;
inline constexpr std::uint32_t kAnyInt = 3;
inline constexpr std::uint32_t kAnyDouble = 4;
inline constexpr std::uint32_t kAnyArray = 5;
// ArrayValue
inline constexpr std::uint32_t kArrayValues = 1;

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

constexpr std::size_t varint_size(std::uint64_t v) noexcept {
  // 1 byte per started 7 bits: (bit width + 6) / 7, with 0 taking one byte.
  return (static_cast<std::size_t>(std::bit_width(v | 1)) + 6) / 7;
}

constexpr std::uint64_t tag(std::uint32_t field, WireType type) noexcept { return std::uint64_t{field} << 3 | type; }

constexpr std::size_t tag_size(std::uint32_t field, WireType type) noexcept { return varint_size(tag(field, type)); }

// length_delimited_size: a field's whole size, tag and length prefix included.
constexpr std::size_t length_delimited_size(std::uint32_t field, std::size_t payload) noexcept {
  return tag_size(field, kLengthDelimited) + varint_size(payload) + payload;
}

// write_varint writes `v` at `out` and advances it.
inline void write_varint(char*& out, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
}

// write_little_endian writes the low `width` bytes of `v` at `out` and advances it.
inline void write_little_endian(char*& out, std::uint64_t v, int width) noexcept {
  for (int i = 0; i < width; ++i) *out++ = static_cast<char>(v >> (8 * i));
}

}  // namespace inferscope::trace::wire
