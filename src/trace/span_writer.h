// File: span_writer.h
// SpanWriter appends OTLP Span messages, as ScopeSpans' repeated `spans` field (field 2, each
// length-delimited), to a byte string: the one encoder of a span. A served or proxied request
// writes its spans straight from its timeline through it, with no Span object, attribute vector
// or string built per request (that building was most of tracing's CPU per request); the Span
// model (span.h) is written through it too (otlp.h encode_spans_field).
// Fields go in field-number order, proto3 defaults (empty parent, empty name, unset kind, unset
// status, zero flags) left out, so the bytes equal what any conformant encoder writes.
// Example: SpanBytes out; SpanWriter w(out);
//          w.open(trace_id, span_id, parent_id, "decode", SpanKind::kInternal, start_ns, end_ns);
//          w.string_attribute("inferscope.stage", "decode");
//          w.int_attribute("gen_ai.usage.output_tokens", 16);
//          w.close(StatusCode::kUnset, "", kSampledFlag);  // out holds one spans field; w.spans() == 1
// Thread-compatible (one writer per thread); the buffer is only appended to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "trace/span.h"

namespace inferscope::trace {

// SpanBytes is the byte buffer SpanWriter appends to: grown by doubling without zero-filling
// (std::string::resize fills every byte it adds, out of line), so each field costs one capacity
// check and its own bytes.
class SpanBytes {
 public:
  SpanBytes() = default;
  SpanBytes(SpanBytes&&) noexcept = default;
  SpanBytes& operator=(SpanBytes&&) noexcept = default;

  std::string_view view() const noexcept { return {data_.get(), size_}; }
  std::size_t size() const noexcept { return size_; }
  char* data() noexcept { return data_.get(); }
  void clear() noexcept { size_ = 0; }
  // extend adds `n` bytes at the end, for the caller to write, and returns where they start.
  char* extend(std::size_t n) {
    if (capacity_ - size_ < n) reserve(size_ + n);
    char* at = data_.get() + size_;
    size_ += n;
    return at;
  }
  // reserve makes room for `at_least` bytes in all (at least doubling).
  void reserve(std::size_t at_least);
  // resize_at moves the bytes from `at` to the end so that `from` bytes there become `to` bytes
  // (shrinking or widening a length prefix); the new bytes are the caller's to write.
  void resize_at(std::size_t at, std::size_t from, std::size_t to);

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class SpanWriter {
 public:
  explicit SpanWriter(SpanBytes& out) noexcept : out_(out) {}
  SpanWriter(const SpanWriter&) = delete;
  SpanWriter& operator=(const SpanWriter&) = delete;

  // open starts a span: ids, parent (all zero: a root), name, kind and unix-ns times. Attributes
  // follow, then close(). Spans do not nest: open after close.
  void open(const TraceId& trace_id, const SpanId& span_id, const SpanId& parent_span_id, std::string_view name,
            SpanKind kind, std::uint64_t start_unix_ns, std::uint64_t end_unix_ns);

  // One attribute of the open span each. Distinct names, not overloads: a string literal would
  // otherwise convert to bool before it converts to std::string_view.
  void string_attribute(std::string_view key, std::string_view value);
  void int_attribute(std::string_view key, std::int64_t value);
  void double_attribute(std::string_view key, double value);
  void bool_attribute(std::string_view key, bool value);
  void string_array_attribute(std::string_view key, std::span<const std::string_view> values);
  // attribute writes a Span model attribute (any AttributeValue kind).
  void attribute(const Attribute& attribute);

  // close writes the status (left out when unset with no message) and the flags, and ends the span.
  void close(StatusCode status, std::string_view status_message, std::uint32_t flags);

  // spans counts the spans this writer closed.
  std::size_t spans() const noexcept { return spans_; }
  // bytes is the whole buffer written to (what was there before this writer included).
  std::string_view bytes() const noexcept { return out_.view(); }

 private:
  // key_value adds a whole attribute: its KeyValue prefix and key written, then `any_size` bytes
  // returned for the AnyValue's payload after the AnyValue length it writes.
  char* key_value(std::string_view key, std::size_t any_size);

  SpanBytes& out_;
  std::size_t length_at_ = 0;  // where the open span's length prefix is reserved
  std::size_t spans_ = 0;
};

// write_span writes one Span model span.
void write_span(SpanWriter& out, const Span& span);

// thread_span_buffer is this thread's byte buffer for a request's spans, emptied: its capacity
// stays from request to request, so writing a request's spans allocates nothing once it has grown.
// Valid until this thread's next call.
SpanBytes& thread_span_buffer();

}  // namespace inferscope::trace
