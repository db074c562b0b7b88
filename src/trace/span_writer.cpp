// File: span_writer.cpp
// Every field's size is known before it is written except the span's own length, so each write
// grows the buffer once by the field's exact size and fills it through a pointer; the span's
// length prefix is reserved at open() (two bytes: spans up to 16 KiB, the usual case) and moved
// at close() only when the span came out shorter than 128 bytes or longer than 16 KiB.
#include "trace/span_writer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <variant>

#include "trace/otlp_wire.h"

namespace inferscope::trace {

using namespace wire;

namespace {

constexpr std::size_t kReservedLengthBytes = 2;

void put_tag(char*& p, std::uint32_t field, WireType type) noexcept { write_varint(p, tag(field, type)); }

void put_bytes(char*& p, std::uint32_t field, std::string_view bytes) noexcept {
  put_tag(p, field, kLengthDelimited);
  write_varint(p, bytes.size());
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  p += bytes.size();
}

template <class Id>
std::string_view id_bytes(const Id& id) noexcept {
  return {reinterpret_cast<const char*>(id.data()), id.size()};
}

}  // namespace

void SpanBytes::reserve(std::size_t at_least) {
  if (at_least <= capacity_) return;
  const std::size_t capacity = std::max({at_least, 2 * capacity_, std::size_t{1024}});
  auto grown = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
  data_ = std::move(grown);
  capacity_ = capacity;
}

void SpanBytes::resize_at(std::size_t at, std::size_t from, std::size_t to) {
  const std::size_t tail = size_ - at - from;
  if (to > from) extend(to - from);
  char* base = data_.get() + at;
  std::memmove(base + to, base + from, tail);
  size_ = at + to + tail;
}

void SpanWriter::open(const TraceId& trace_id, const SpanId& span_id, const SpanId& parent_span_id,
                      std::string_view name, SpanKind kind, std::uint64_t start_unix_ns, std::uint64_t end_unix_ns) {
  const bool root = is_zero(parent_span_id);
  const std::size_t size =
      tag_size(kScopeSpansSpans, kLengthDelimited) + kReservedLengthBytes +
      length_delimited_size(kSpanTraceId, trace_id.size()) + length_delimited_size(kSpanSpanId, span_id.size()) +
      (root ? 0 : length_delimited_size(kSpanParentSpanId, parent_span_id.size())) +
      (name.empty() ? 0 : length_delimited_size(kSpanName, name.size())) +
      (kind == SpanKind::kUnspecified ? 0 : tag_size(kSpanKind, kVarint) + 1) +
      2 * (tag_size(kSpanStartTime, kFixed64) + 8);
  char* p = out_.extend(size);
  put_tag(p, kScopeSpansSpans, kLengthDelimited);
  length_at_ = static_cast<std::size_t>(p - out_.data());
  p += kReservedLengthBytes;
  put_bytes(p, kSpanTraceId, id_bytes(trace_id));
  put_bytes(p, kSpanSpanId, id_bytes(span_id));
  if (!root) put_bytes(p, kSpanParentSpanId, id_bytes(parent_span_id));
  if (!name.empty()) put_bytes(p, kSpanName, name);
  if (kind != SpanKind::kUnspecified) {
    put_tag(p, kSpanKind, kVarint);
    write_varint(p, static_cast<std::uint64_t>(kind));
  }
  put_tag(p, kSpanStartTime, kFixed64);
  write_little_endian(p, start_unix_ns, 8);
  put_tag(p, kSpanEndTime, kFixed64);
  write_little_endian(p, end_unix_ns, 8);
}

char* SpanWriter::key_value(std::string_view key, std::size_t any_size) {
  const std::size_t key_field = key.empty() ? 0 : length_delimited_size(kKeyValueKey, key.size());
  const std::size_t kv_size = key_field + length_delimited_size(kKeyValueValue, any_size);
  char* p = out_.extend(length_delimited_size(kSpanAttributes, kv_size));
  put_tag(p, kSpanAttributes, kLengthDelimited);
  write_varint(p, kv_size);
  if (!key.empty()) put_bytes(p, kKeyValueKey, key);
  put_tag(p, kKeyValueValue, kLengthDelimited);
  write_varint(p, any_size);
  return p;
}

void SpanWriter::string_attribute(std::string_view key, std::string_view value) {
  char* p = key_value(key, length_delimited_size(kAnyString, value.size()));
  put_bytes(p, kAnyString, value);
}

void SpanWriter::int_attribute(std::string_view key, std::int64_t value) {
  const auto bits = static_cast<std::uint64_t>(value);
  char* p = key_value(key, tag_size(kAnyInt, kVarint) + varint_size(bits));
  put_tag(p, kAnyInt, kVarint);
  write_varint(p, bits);
}

void SpanWriter::double_attribute(std::string_view key, double value) {
  char* p = key_value(key, tag_size(kAnyDouble, kFixed64) + 8);
  put_tag(p, kAnyDouble, kFixed64);
  write_little_endian(p, std::bit_cast<std::uint64_t>(value), 8);
}

void SpanWriter::bool_attribute(std::string_view key, bool value) {
  char* p = key_value(key, tag_size(kAnyBool, kVarint) + 1);
  put_tag(p, kAnyBool, kVarint);
  write_varint(p, value ? 1 : 0);
}

void SpanWriter::string_array_attribute(std::string_view key, std::span<const std::string_view> values) {
  std::size_t array = 0;
  for (std::string_view v : values) {
    array += length_delimited_size(kArrayValues, length_delimited_size(kAnyString, v.size()));
  }
  char* p = key_value(key, length_delimited_size(kAnyArray, array));
  put_tag(p, kAnyArray, kLengthDelimited);
  write_varint(p, array);
  for (std::string_view v : values) {
    put_tag(p, kArrayValues, kLengthDelimited);
    write_varint(p, length_delimited_size(kAnyString, v.size()));
    put_bytes(p, kAnyString, v);
  }
}

void SpanWriter::attribute(const Attribute& a) {
  const std::string_view key = a.key.view();
  std::visit(
      [this, key](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          string_attribute(key, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          bool_attribute(key, v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          int_attribute(key, v);
        } else if constexpr (std::is_same_v<T, double>) {
          double_attribute(key, v);
        } else {
          std::string_view items[16];
          if (v.size() <= std::size(items)) {
            for (std::size_t i = 0; i < v.size(); ++i) items[i] = v[i];
            string_array_attribute(key, std::span<const std::string_view>(items, v.size()));
          } else {
            const std::vector<std::string_view> many(v.begin(), v.end());
            string_array_attribute(key, many);
          }
        }
      },
      a.value);
}

void SpanWriter::close(StatusCode status, std::string_view status_message, std::uint32_t flags) {
  const bool has_status = status != StatusCode::kUnset || !status_message.empty();
  std::size_t status_size = 0;
  if (has_status) {
    status_size = (status_message.empty() ? 0 : length_delimited_size(kStatusMessage, status_message.size())) +
                  (status == StatusCode::kUnset ? 0 : tag_size(kStatusCode, kVarint) + 1);
  }
  const std::size_t size = (has_status ? length_delimited_size(kSpanStatus, status_size) : 0) +
                           (flags != 0 ? tag_size(kSpanFlags, kFixed32) + 4 : 0);
  char* p = out_.extend(size);
  if (has_status) {
    put_tag(p, kSpanStatus, kLengthDelimited);
    write_varint(p, status_size);
    if (!status_message.empty()) put_bytes(p, kStatusMessage, status_message);
    if (status != StatusCode::kUnset) {
      put_tag(p, kStatusCode, kVarint);
      write_varint(p, static_cast<std::uint64_t>(status));
    }
  }
  if (flags != 0) {
    put_tag(p, kSpanFlags, kFixed32);
    write_little_endian(p, flags, 4);
  }
  // The span's length is now known: fit the reserved prefix to its varint size.
  const std::size_t body = out_.size() - length_at_ - kReservedLengthBytes;
  const std::size_t needed = varint_size(body);
  if (needed != kReservedLengthBytes) out_.resize_at(length_at_, kReservedLengthBytes, needed);
  char* at = out_.data() + length_at_;
  write_varint(at, body);
  ++spans_;
}

void write_span(SpanWriter& out, const Span& span) {
  out.open(span.trace_id, span.span_id, span.parent_span_id, span.name, span.kind, span.start_unix_ns,
           span.end_unix_ns);
  for (const Attribute& a : span.attributes) out.attribute(a);
  out.close(span.status.code, span.status.message, span.flags);
}

SpanBytes& thread_span_buffer() {
  thread_local SpanBytes buffer;
  buffer.clear();
  return buffer;
}

}  // namespace inferscope::trace
