// File: otlp.cpp
// Protobuf wire format by hand (field numbers: otlp_wire.h). Spans are written by SpanWriter
// (span_writer.h); this file writes the envelope around them and decodes whole requests.
#include "trace/otlp.h"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "metrics/detail/text_format.h"
#include "trace/otlp_wire.h"
#include "trace/span_writer.h"

namespace inferscope::trace {
namespace {

using namespace wire;


// ---- encoding ----
// Two passes over the same templated encode_* code. The SizeCounter pass counts the bytes and
// records each nested message's length in `sizes`, in the order the messages open (pre-order),
// so every length is computed once however deep its message. The ByteWriter pass then writes
// into a buffer of exactly the counted size through a raw pointer, taking each length prefix
// from `sizes` in the same order: no capacity check per byte, no temporary per sub-message.

class SizeCounter {
 public:
  explicit SizeCounter(std::vector<std::size_t>& sizes) : sizes_(sizes) {}
  void varint(std::uint64_t v) noexcept { size_ += varint_size(v); }
  void tag(std::uint32_t field, WireType type) noexcept { size_ += tag_size(field, type); }
  void bytes(std::uint32_t field, std::string_view b) noexcept {
    tag(field, kLengthDelimited);
    varint(b.size());
    size_ += b.size();
  }
  void fixed64(std::uint32_t field, std::uint64_t) noexcept {
    tag(field, kFixed64);
    size_ += 8;
  }
  void fixed32(std::uint32_t field, std::uint32_t) noexcept {
    tag(field, kFixed32);
    size_ += 4;
  }
  void raw(std::string_view encoded) noexcept { size_ += encoded.size(); }
  template <class Fill>
  void message(std::uint32_t field, Fill&& fill) {
    const std::size_t slot = sizes_.size();
    sizes_.push_back(0);
    const std::size_t before = size_;
    fill(*this);
    const std::size_t inner = size_ - before;
    sizes_[slot] = inner;
    size_ += tag_size(field, kLengthDelimited) + varint_size(inner);
  }
  std::size_t size() const noexcept { return size_; }

 private:
  std::vector<std::size_t>& sizes_;
  std::size_t size_ = 0;
};

class ByteWriter {
 public:
  // `out` has room for exactly what the SizeCounter pass counted; `sizes` is that pass's record.
  ByteWriter(char* out, const std::vector<std::size_t>& sizes) : out_(out), sizes_(sizes) {}
  void varint(std::uint64_t v) noexcept { write_varint(out_, v); }
  void tag(std::uint32_t field, WireType type) noexcept { varint(wire::tag(field, type)); }
  void bytes(std::uint32_t field, std::string_view b) noexcept {
    tag(field, kLengthDelimited);
    varint(b.size());
    raw(b);
  }
  void fixed64(std::uint32_t field, std::uint64_t v) noexcept {
    tag(field, kFixed64);
    write_little_endian(out_, v, 8);
  }
  void fixed32(std::uint32_t field, std::uint32_t v) noexcept {
    tag(field, kFixed32);
    write_little_endian(out_, v, 4);
  }
  void raw(std::string_view encoded) noexcept {
    if (encoded.empty()) return;  // memcpy from an empty view's null data is undefined
    std::memcpy(out_, encoded.data(), encoded.size());
    out_ += encoded.size();
  }
  template <class Fill>
  void message(std::uint32_t field, Fill&& fill) {
    tag(field, kLengthDelimited);
    varint(sizes_[next_size_++]);
    fill(*this);
  }
  const char* position() const noexcept { return out_; }

 private:
  char* out_;
  const std::vector<std::size_t>& sizes_;
  std::size_t next_size_ = 0;
};

template <class Sink>
void encode_string_if(Sink& out, std::uint32_t field, std::string_view text) {
  if (!text.empty()) out.bytes(field, text);
}

template <class Sink>
void encode_any_value(Sink& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out.bytes(kAnyString, v);  // an empty string is still a string value
        } else if constexpr (std::is_same_v<T, bool>) {
          out.tag(kAnyBool, kVarint);
          out.varint(v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out.tag(kAnyInt, kVarint);
          out.varint(static_cast<std::uint64_t>(v));
        } else if constexpr (std::is_same_v<T, double>) {
          out.fixed64(kAnyDouble, std::bit_cast<std::uint64_t>(v));
        } else {
          out.message(kAnyArray, [&v](auto& array) {
            for (const std::string& item : v) {
              array.message(kArrayValues, [&item](auto& any) { any.bytes(kAnyString, item); });
            }
          });
        }
      },
      value);
}

template <class Sink>
void encode_attributes(Sink& out, std::uint32_t field, const std::vector<Attribute>& attributes) {
  for (const Attribute& a : attributes) {
    out.message(field, [&a](auto& kv) {
      encode_string_if(kv, kKeyValueKey, a.key.view());
      kv.message(kKeyValueValue, [&a](auto& any) { encode_any_value(any, a.value); });
    });
  }
}

// encode_joined_request writes one resource with one scope whose spans are already-encoded
// ScopeSpans.spans fields, joined as they are (repeated fields concatenate).
template <class Sink>
void encode_joined_request(Sink& out, const std::vector<Attribute>& resource_attributes, std::string_view scope_name,
                           std::string_view scope_version, std::string_view span_fields) {
  out.message(kRequestResourceSpans, [&](auto& rs) {
    rs.message(kResourceSpansResource, [&](auto& r) { encode_attributes(r, kResourceAttributes, resource_attributes); });
    rs.message(kResourceSpansScopeSpans, [&](auto& ss) {
      ss.message(kScopeSpansScope, [&](auto& sc) {
        encode_string_if(sc, kScopeName, scope_name);
        encode_string_if(sc, kScopeVersion, scope_version);
      });
      ss.raw(span_fields);
    });
  });
}

// encode_request writes `request` around its scopes' spans, already written (SpanWriter) into
// `scope_spans`, one string per scope in request order.
template <class Sink>
void encode_request(Sink& out, const ExportRequest& request, const std::vector<std::string>& scope_spans) {
  std::size_t next = 0;
  for (const ResourceSpans& resource : request.resources) {
    out.message(kRequestResourceSpans, [&](auto& rs) {
      rs.message(kResourceSpansResource,
                 [&resource](auto& r) { encode_attributes(r, kResourceAttributes, resource.resource_attributes); });
      for (const ScopeSpans& scope : resource.scopes) {
        const std::string& spans = scope_spans[next++];
        rs.message(kResourceSpansScopeSpans, [&scope, &spans](auto& ss) {
          ss.message(kScopeSpansScope, [&scope](auto& sc) {
            encode_string_if(sc, kScopeName, scope.scope_name);
            encode_string_if(sc, kScopeVersion, scope.scope_version);
          });
          ss.raw(spans);
        });
      }
    });
  }
}

// encode_sized_into runs `encode` over a SizeCounter, then over a ByteWriter into `out` resized to
// exactly that size (its capacity kept: the exporter reuses one body buffer for every batch).
template <class Encode>
void encode_sized_into(std::string& out, Encode&& encode) {
  std::vector<std::size_t> sizes;
  sizes.reserve(64);
  SizeCounter counter(sizes);
  encode(counter);
  out.resize(counter.size());
  ByteWriter writer(out.data(), sizes);
  encode(writer);
  // Both passes run the same code over the same data; a mismatch is a bug in this file.
  if (writer.position() != out.data() + out.size()) std::abort();
}

template <class Encode>
std::string encode_sized(Encode&& encode) {
  std::string out;
  encode_sized_into(out, std::forward<Encode>(encode));
  return out;
}

// ---- decoding ----

struct Field {
  std::uint32_t number = 0;
  WireType type = kVarint;
  std::uint64_t number_value = 0;  // varint, fixed64, fixed32
  std::string_view bytes;          // length-delimited
};

// Reader walks the fields of one message; error() is set on the first malformed byte.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  // next reads one field; false at the end or on an error (check error()).
  bool next(Field& field) {
    if (pos_ >= data_.size() || !error_.empty()) return false;
    std::uint64_t tag = 0;
    if (!varint(tag)) return false;
    field.number = static_cast<std::uint32_t>(tag >> 3);
    if (field.number == 0 || (tag >> 3) > 0x1fffffff) return fail("field number 0 or out of range");
    switch (tag & 7) {
      case kVarint:
        field.type = kVarint;
        return varint(field.number_value);
      case kFixed64:
        field.type = kFixed64;
        return fixed(8, field.number_value);
      case kFixed32:
        field.type = kFixed32;
        return fixed(4, field.number_value);
      case kLengthDelimited: {
        field.type = kLengthDelimited;
        std::uint64_t size = 0;
        if (!varint(size)) return false;
        if (size > data_.size() - pos_) return fail("length-delimited field runs past the end");
        field.bytes = data_.substr(pos_, static_cast<std::size_t>(size));
        pos_ += static_cast<std::size_t>(size);
        return true;
      }
      default:
        return fail("unsupported wire type " + std::to_string(tag & 7));
    }
  }

  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message) + " at byte " + std::to_string(pos_);
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  bool varint(std::uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= data_.size()) return fail("truncated varint");
      const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
      if (shift == 63 && byte > 1) return fail("varint longer than 64 bits");
      out |= std::uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return fail("varint longer than 10 bytes");
  }
  bool fixed(std::size_t width, std::uint64_t& out) {
    if (data_.size() - pos_ < width) return fail("truncated fixed-width field");
    out = 0;
    for (std::size_t i = 0; i < width; ++i) out |= std::uint64_t{static_cast<std::uint8_t>(data_[pos_ + i])} << (8 * i);
    pos_ += width;
    return true;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
  std::string error_;
};

// ProtobufDecoder carries the first error out of the nested message readers.
class ProtobufDecoder {
 public:
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // spans reads repeated ScopeSpans.spans fields alone (a ScopeSpans without its scope).
  bool spans(std::string_view data, ScopeSpans& out) { return scope_spans(data, out); }

  bool request(std::string_view data, ExportRequest& out) {
    return each_field(data, "ExportTraceServiceRequest", [&](const Field& f) {
      if (f.number != kRequestResourceSpans) return true;
      if (!expect(f, kLengthDelimited, "resource_spans")) return false;
      return resource_spans(f.bytes, out.resources.emplace_back());
    });
  }

 private:
  // each_field runs `on` for every field of a message; a Reader error or a false from `on` stops it.
  template <class On>
  bool each_field(std::string_view data, std::string_view message, On&& on) {
    Reader reader(data);
    Field field;
    while (reader.next(field)) {
      if (!on(field)) return false;
    }
    if (!reader.error().empty()) return fail(std::string(message) + ": " + reader.error());
    return true;
  }

  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  bool expect(const Field& f, WireType type, std::string_view name) {
    if (f.type == type) return true;
    return fail(std::string(name) + " (field " + std::to_string(f.number) + ") has wire type " +
                std::to_string(f.type) + ", expected " + std::to_string(type));
  }

  bool text(const Field& f, std::string_view name, std::string& out) {
    if (!expect(f, kLengthDelimited, name)) return false;
    if (!metrics::detail::is_valid_utf8(f.bytes)) return fail(std::string(name) + " is not valid UTF-8");
    out.assign(f.bytes);
    return true;
  }

  template <std::size_t N>
  bool id(const Field& f, std::string_view name, std::array<std::uint8_t, N>& out, bool may_be_empty) {
    if (!expect(f, kLengthDelimited, name)) return false;
    if (f.bytes.empty() && may_be_empty) {
      out = {};
      return true;
    }
    if (f.bytes.size() != N) {
      return fail(std::string(name) + " is " + std::to_string(f.bytes.size()) + " bytes, expected " + std::to_string(N));
    }
    std::memcpy(out.data(), f.bytes.data(), N);
    return true;
  }

  bool resource_spans(std::string_view data, ResourceSpans& out) {
    return each_field(data, "ResourceSpans", [&](const Field& f) {
      if (f.number == kResourceSpansResource) {
        if (!expect(f, kLengthDelimited, "resource")) return false;
        return each_field(f.bytes, "Resource", [&](const Field& r) {
          if (r.number != kResourceAttributes) return true;
          return key_value(r, out.resource_attributes);
        });
      }
      if (f.number == kResourceSpansScopeSpans) {
        if (!expect(f, kLengthDelimited, "scope_spans")) return false;
        return scope_spans(f.bytes, out.scopes.emplace_back());
      }
      return true;
    });
  }

  bool scope_spans(std::string_view data, ScopeSpans& out) {
    return each_field(data, "ScopeSpans", [&](const Field& f) {
      if (f.number == kScopeSpansScope) {
        if (!expect(f, kLengthDelimited, "scope")) return false;
        return each_field(f.bytes, "InstrumentationScope", [&](const Field& s) {
          if (s.number == kScopeName) return text(s, "scope.name", out.scope_name);
          if (s.number == kScopeVersion) return text(s, "scope.version", out.scope_version);
          return true;
        });
      }
      if (f.number == kScopeSpansSpans) {
        if (!expect(f, kLengthDelimited, "spans")) return false;
        return span(f.bytes, out.spans.emplace_back());
      }
      return true;
    });
  }

  bool span(std::string_view data, Span& out) {
    out.kind = SpanKind::kUnspecified;  // proto3: an absent kind is 0, not the model's default
    bool has_trace_id = false;
    bool has_span_id = false;
    const bool ok = each_field(data, "Span", [&](const Field& f) {
      switch (f.number) {
        case kSpanTraceId:
          has_trace_id = true;
          return id(f, "span.trace_id", out.trace_id, false);
        case kSpanSpanId:
          has_span_id = true;
          return id(f, "span.span_id", out.span_id, false);
        case kSpanParentSpanId:
          return id(f, "span.parent_span_id", out.parent_span_id, true);
        case kSpanName:
          return text(f, "span.name", out.name);
        case kSpanKind:
          if (!expect(f, kVarint, "span.kind")) return false;
          if (f.number_value > static_cast<std::uint64_t>(SpanKind::kConsumer)) {
            return fail("span.kind " + std::to_string(f.number_value) + " is not a SpanKind");
          }
          out.kind = static_cast<SpanKind>(f.number_value);
          return true;
        case kSpanStartTime:
          if (!expect(f, kFixed64, "span.start_time_unix_nano")) return false;
          out.start_unix_ns = f.number_value;
          return true;
        case kSpanEndTime:
          if (!expect(f, kFixed64, "span.end_time_unix_nano")) return false;
          out.end_unix_ns = f.number_value;
          return true;
        case kSpanAttributes:
          return key_value(f, out.attributes);
        case kSpanStatus:
          if (!expect(f, kLengthDelimited, "span.status")) return false;
          return each_field(f.bytes, "Status", [&](const Field& s) {
            if (s.number == kStatusMessage) return text(s, "status.message", out.status.message);
            if (s.number != kStatusCode) return true;
            if (!expect(s, kVarint, "status.code")) return false;
            if (s.number_value > static_cast<std::uint64_t>(StatusCode::kError)) {
              return fail("status.code " + std::to_string(s.number_value) + " is not a StatusCode");
            }
            out.status.code = static_cast<StatusCode>(s.number_value);
            return true;
          });
        case kSpanFlags:
          if (!expect(f, kFixed32, "span.flags")) return false;
          out.flags = static_cast<std::uint32_t>(f.number_value);
          return true;
        default:
          return true;
      }
    });
    if (!ok) return false;
    if (!has_trace_id || !has_span_id) return fail("a span has no " + std::string(has_trace_id ? "span_id" : "trace_id"));
    return true;
  }

  // key_value appends one KeyValue; a value of a kind span.h has no room for (kvlist, bytes, an
  // array holding non-strings) or an absent one is skipped, as a receiver may drop attributes.
  bool key_value(const Field& f, std::vector<Attribute>& out) {
    if (!expect(f, kLengthDelimited, "attributes")) return false;
    Attribute attribute;
    bool has_value = false;
    const bool ok = each_field(f.bytes, "KeyValue", [&](const Field& kv) {
      if (kv.number == kKeyValueKey) {
        std::string key;
        if (!text(kv, "attribute key", key)) return false;
        attribute.key = AttributeKey(std::move(key));
        return true;
      }
      if (kv.number != kKeyValueValue) return true;
      if (!expect(kv, kLengthDelimited, "attribute value")) return false;
      return any_value(kv.bytes, attribute.value, has_value);
    });
    if (!ok) return false;
    if (has_value) out.push_back(std::move(attribute));
    return true;
  }

  bool any_value(std::string_view data, AttributeValue& out, bool& has_value) {
    return each_field(data, "AnyValue", [&](const Field& f) {
      switch (f.number) {
        case kAnyString: {
          std::string s;
          if (!text(f, "string_value", s)) return false;
          out = std::move(s);
          has_value = true;
          return true;
        }
        case kAnyBool:
          if (!expect(f, kVarint, "bool_value")) return false;
          out = f.number_value != 0;
          has_value = true;
          return true;
        case kAnyInt:
          if (!expect(f, kVarint, "int_value")) return false;
          out = static_cast<std::int64_t>(f.number_value);
          has_value = true;
          return true;
        case kAnyDouble:
          if (!expect(f, kFixed64, "double_value")) return false;
          out = std::bit_cast<double>(f.number_value);
          has_value = true;
          return true;
        case kAnyArray: {
          if (!expect(f, kLengthDelimited, "array_value")) return false;
          StringList items;
          bool all_strings = true;
          const bool ok = each_field(f.bytes, "ArrayValue", [&](const Field& item) {
            if (item.number != kArrayValues) return true;
            if (!expect(item, kLengthDelimited, "array value")) return false;
            AttributeValue element;
            bool element_set = false;
            // Elements are read flat: a nested array or kvlist is skipped, never recursed into.
            const bool element_ok = each_field(item.bytes, "AnyValue", [&](const Field& e) {
              if (e.number != kAnyString) {
                all_strings = false;
                return true;
              }
              std::string s;
              if (!text(e, "string_value", s)) return false;
              element = std::move(s);
              element_set = true;
              return true;
            });
            if (!element_ok) return false;
            if (element_set) items.push_back(std::get<std::string>(std::move(element)));
            else all_strings = false;
            return true;
          });
          if (!ok) return false;
          if (all_strings) {
            out = std::move(items);
            has_value = true;
          } else {
            has_value = false;  // an array of other kinds: dropped, not misread
          }
          return true;
        }
        default:
          return true;  // kvlist_value, bytes_value: not kept
      }
    });
  }

  std::string error_;
};

}  // namespace

std::string_view ResourceSpans::service_name() const noexcept {
  for (const Attribute& a : resource_attributes) {
    if (a.key == "service.name") {
      if (const auto* name = std::get_if<std::string>(&a.value)) return *name;
    }
  }
  return {};
}

std::size_t ExportRequest::span_count() const noexcept {
  std::size_t n = 0;
  for (const ResourceSpans& r : resources) {
    for (const ScopeSpans& s : r.scopes) n += s.spans.size();
  }
  return n;
}

std::string encode_export_request(const ExportRequest& request) {
  std::vector<std::string> scope_spans;
  for (const ResourceSpans& resource : request.resources) {
    for (const ScopeSpans& scope : resource.scopes) scope_spans.push_back(encode_spans_field(scope.spans));
  }
  // Written once, before both encode_sized passes, which then see the same bytes.
  return encode_sized([&](auto& sink) { encode_request(sink, request, scope_spans); });
}

std::string encode_spans_field(const std::vector<Span>& spans) {
  SpanBytes out;
  SpanWriter writer(out);
  for (const Span& span : spans) write_span(writer, span);
  return std::string(out.view());
}

void encode_export_request(std::string& out, const std::vector<Attribute>& resource_attributes,
                           std::string_view scope_name, std::string_view scope_version, std::string_view span_fields) {
  encode_sized_into(out, [&](auto& sink) {
    encode_joined_request(sink, resource_attributes, scope_name, scope_version, span_fields);
  });
}

std::string encode_export_request(const std::vector<Attribute>& resource_attributes, std::string_view scope_name,
                                  std::string_view scope_version, std::string_view span_fields) {
  std::string out;
  encode_export_request(out, resource_attributes, scope_name, scope_version, span_fields);
  return out;
}

Result<ExportRequest> decode_export_request(std::string_view body) {
  ExportRequest request;
  ProtobufDecoder decoder;
  if (!decoder.request(body, request)) return make_error("cannot decode OTLP traces: " + decoder.error());
  return request;
}

Result<std::vector<Span>> decode_spans_field(std::string_view fields) {
  // Repeated spans fields alone are a ScopeSpans message without a scope.
  ScopeSpans scope;
  ProtobufDecoder decoder;
  if (!decoder.spans(fields, scope)) return make_error("cannot decode OTLP traces: " + decoder.error());
  return std::move(scope.spans);
}

}  // namespace inferscope::trace
