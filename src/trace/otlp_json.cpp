// OTLP JSON decoder: nlohmann-json's DOM walked field by field, each type checked before it is
// read (no get<>() that could throw), the first error carried out as in otlp.cpp's JsonDecoder.
#include "trace/otlp_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace inferscope::trace {
namespace {

using nlohmann::json;

// field returns the member `key` of `object`, or nullptr when absent or null (proto3 JSON: null is
// the field's default). `object` is known to be an object.
const json* field(const json& object, std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// whole_number reads a JSON number that holds an integer in [min, max]: an integer literal, or a
// float literal whose value is whole (a JS exporter may print 1e+21).
template <class Int>
bool whole_number(const json& value, Int& out) {
  if (value.is_number_unsigned()) {
    const auto v = value.get_ref<const json::number_unsigned_t&>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return false;
    out = static_cast<Int>(v);
    return true;
  }
  if (value.is_number_integer()) {
    const auto v = value.get_ref<const json::number_integer_t&>();
    if (v < 0 && !std::numeric_limits<Int>::is_signed) return false;
    if (v < static_cast<std::int64_t>(std::numeric_limits<Int>::min())) return false;
    if (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return false;
    out = static_cast<Int>(v);
    return true;
  }
  if (!value.is_number_float()) return false;
  const double v = value.get_ref<const json::number_float_t&>();
  // 2^63 and 2^64 are exact doubles; the max of Int is not, so compare below the next power of two.
  const double limit = std::ldexp(1.0, std::numeric_limits<Int>::digits);
  const double floor = std::numeric_limits<Int>::is_signed ? -limit : 0.0;
  if (!std::isfinite(v) || v != std::trunc(v) || v < floor || v >= limit) return false;
  out = static_cast<Int>(v);
  return true;
}

// JsonDecoder walks one request; names in its errors are the JSON keys (lowerCamelCase).
class JsonDecoder {
 public:
  const std::string& error() const { return error_; }

  bool request(const json& root, ExportRequest& out) {
    if (!root.is_object()) return fail("the body is not a JSON object (ExportTraceServiceRequest)");
    return each(root, "resourceSpans", [&](const json& r) { return resource_spans(r, out.resources.emplace_back()); });
  }

 private:
  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  // each runs `on` for every element of the array `object[key]` (absent or null: none), each
  // element an object.
  template <class On>
  bool each(const json& object, std::string_view key, On&& on) {
    const json* array = field(object, key);
    if (!array) return true;
    if (!array->is_array()) return fail(std::string(key) + " is not an array");
    for (const json& element : *array) {
      if (!element.is_object()) return fail(std::string(key) + " holds a " + element.type_name() + ", not an object");
      if (!on(element)) return false;
    }
    return true;
  }

  bool text(const json& object, std::string_view key, std::string& out) {
    const json* value = field(object, key);
    if (!value) return true;
    if (!value->is_string()) return fail(std::string(key) + " is not a string");
    out = value->get_ref<const std::string&>();
    return true;
  }

  // object_field returns `object[key]` when it is an object, nullptr when absent; a wrong type fails.
  bool object_field(const json& object, std::string_view key, const json*& out) {
    out = field(object, key);
    if (out && !out->is_object()) return fail(std::string(key) + " is not an object");
    return true;
  }

  template <std::size_t N>
  bool hex_id(const json& object, std::string_view key, std::array<std::uint8_t, N>& out, bool may_be_empty) {
    const json* value = field(object, key);
    if (!value || (value->is_string() && value->get_ref<const std::string&>().empty())) {
      if (may_be_empty) return true;
      return fail("a span has no " + std::string(key));
    }
    if (!value->is_string()) return fail(std::string(key) + " is not a string of hex digits");
    const std::string& hex = value->get_ref<const std::string&>();
    if (hex.size() != 2 * N) {
      return fail(std::string(key) + " has " + std::to_string(hex.size()) + " characters, expected " +
                  std::to_string(2 * N) + " hex digits");
    }
    for (std::size_t i = 0; i < N; ++i) {
      const int high = hex_digit(hex[2 * i]);
      const int low = hex_digit(hex[2 * i + 1]);
      if (high < 0 || low < 0) return fail(std::string(key) + " is not hex (OTLP JSON ids are hex, not base64)");
      out[i] = static_cast<std::uint8_t>(high * 16 + low);
    }
    return true;
  }

  // integer reads a proto3 JSON integer field: a number, or a decimal string (how 64-bit values travel).
  template <class Int>
  bool integer(const json& object, std::string_view key, Int& out) {
    const json* value = field(object, key);
    if (!value) return true;
    if (value->is_string()) {
      const std::string& s = value->get_ref<const std::string&>();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return true;
    } else if (whole_number(*value, out)) {
      return true;
    }
    return fail(std::string(key) + " is not a whole number in range");
  }

  // enumeration reads an enum field: OTLP JSON allows only the integer, never the value's name.
  template <class Enum>
  bool enumeration(const json& object, std::string_view key, Enum last, Enum& out) {
    const json* value = field(object, key);
    if (!value) return true;
    if (value->is_string()) return fail(std::string(key) + " is given by name; OTLP JSON encodes enums as integers");
    int number = 0;
    if (!whole_number(*value, number) || number < 0 || number > static_cast<int>(last)) {
      return fail(std::string(key) + " " + value->dump() + " is out of range");
    }
    out = static_cast<Enum>(number);
    return true;
  }

  bool resource_spans(const json& r, ResourceSpans& out) {
    const json* resource = nullptr;
    if (!object_field(r, "resource", resource)) return false;
    if (resource && !each(*resource, "attributes", [&](const json& kv) { return key_value(kv, out.resource_attributes); })) {
      return false;
    }
    return each(r, "scopeSpans", [&](const json& s) { return scope_spans(s, out.scopes.emplace_back()); });
  }

  bool scope_spans(const json& s, ScopeSpans& out) {
    const json* scope = nullptr;
    if (!object_field(s, "scope", scope)) return false;
    if (scope && !(text(*scope, "name", out.scope_name) && text(*scope, "version", out.scope_version))) return false;
    return each(s, "spans", [&](const json& span_json) { return span(span_json, out.spans.emplace_back()); });
  }

  bool span(const json& s, Span& out) {
    out.kind = SpanKind::kUnspecified;  // proto3: an absent kind is 0, not the model's default
    if (!hex_id(s, "traceId", out.trace_id, false) || !hex_id(s, "spanId", out.span_id, false) ||
        !hex_id(s, "parentSpanId", out.parent_span_id, true) || !text(s, "name", out.name) ||
        !enumeration(s, "kind", SpanKind::kConsumer, out.kind) ||
        !integer(s, "startTimeUnixNano", out.start_unix_ns) || !integer(s, "endTimeUnixNano", out.end_unix_ns) ||
        !integer(s, "flags", out.flags)) {
      return false;
    }
    if (!each(s, "attributes", [&](const json& kv) { return key_value(kv, out.attributes); })) return false;
    const json* status = nullptr;
    if (!object_field(s, "status", status)) return false;
    if (!status) return true;
    return text(*status, "message", out.status.message) &&
           enumeration(*status, "code", StatusCode::kError, out.status.code);
  }

  // key_value appends one KeyValue; a value of a kind span.h has no room for, or none, is skipped.
  bool key_value(const json& kv, std::vector<Attribute>& out) {
    std::string key;
    if (!text(kv, "key", key)) return false;
    const json* value = nullptr;
    if (!object_field(kv, "value", value)) return false;
    if (!value) return true;
    Attribute attribute{.key = AttributeKey(std::move(key)), .value = {}};
    bool has_value = false;
    if (!any_value(*value, attribute.value, has_value)) return false;
    if (has_value) out.push_back(std::move(attribute));
    return true;
  }

  bool any_value(const json& v, AttributeValue& out, bool& has_value);
  bool scalar_value(const json& v, AttributeValue& out, bool& has_value);
  bool string_array(const json& array_value, AttributeValue& out, bool& has_value);

  std::string error_;
};

// any_value reads an AnyValue object (one of its value keys set; none: no value).
bool JsonDecoder::any_value(const json& v, AttributeValue& out, bool& has_value) {
  const json* array = nullptr;
  if (!object_field(v, "arrayValue", array)) return false;
  if (array) return string_array(*array, out, has_value);
  return scalar_value(v, out, has_value);
}

bool JsonDecoder::scalar_value(const json& v, AttributeValue& out, bool& has_value) {
  if (const json* s = field(v, "stringValue")) {
    if (!s->is_string()) return fail("stringValue is not a string");
    out = s->get_ref<const std::string&>();
  } else if (const json* b = field(v, "boolValue")) {
    if (!b->is_boolean()) return fail("boolValue is not true or false");
    out = b->get<bool>();
  } else if (field(v, "intValue")) {
    std::int64_t i = 0;
    if (!integer(v, "intValue", i)) return false;
    out = i;
  } else if (const json* d = field(v, "doubleValue")) {
    // proto3 JSON: a number, or a string ("NaN", "Infinity", "-Infinity", or a number's text).
    double number = 0;
    if (d->is_number()) {
      number = d->get<double>();
    } else if (!d->is_string()) {
      return fail("doubleValue is not a number");
    } else if (const std::string& s = d->get_ref<const std::string&>(); s == "NaN") {
      number = std::numeric_limits<double>::quiet_NaN();
    } else if (s == "Infinity" || s == "-Infinity") {
      number = s[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    } else {
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
      if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return fail("doubleValue is not a number");
    }
    out = number;
  } else {
    return true;  // kvlistValue, bytesValue or nothing: not kept
  }
  has_value = true;
  return true;
}

// string_array reads ArrayValue{values}: kept when every element is a string (a string[]
// attribute), dropped otherwise, never recursed into.
bool JsonDecoder::string_array(const json& array_value, AttributeValue& out, bool& has_value) {
  StringList items;
  bool all_strings = true;
  const bool ok = each(array_value, "values", [&](const json& element) {
    const json* s = field(element, "stringValue");
    if (!s) {
      all_strings = false;
      return true;
    }
    if (!s->is_string()) return fail("stringValue is not a string");
    items.push_back(s->get_ref<const std::string&>());
    return true;
  });
  if (!ok) return false;
  has_value = all_strings;
  if (all_strings) out = std::move(items);
  return true;
}

}  // namespace

Result<ExportRequest> decode_export_request_json(std::string_view body) {
  constexpr std::string_view kPrefix = "cannot decode OTLP JSON traces: ";
  // nlohmann-json checks UTF-8 and surrogate pairs while it parses. Its exception stays in here,
  // and the error keeps only the position, never the body's bytes.
  json root;
  try {
    root = json::parse(body);
  } catch (const json::parse_error& e) {
    return make_error(std::string(kPrefix) + "not valid JSON at byte " + std::to_string(e.byte));
  } catch (const json::exception&) {  // out_of_range: a number past a double's range
    return make_error(std::string(kPrefix) + "a number is out of range");
  }
  ExportRequest request;
  JsonDecoder decoder;
  if (!decoder.request(root, request)) return make_error(std::string(kPrefix) + decoder.error());
  return request;
}

}  // namespace inferscope::trace
