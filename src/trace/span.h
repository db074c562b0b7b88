// File: span.h
// The span model of src/trace: one timed operation of a trace (ids, parent, name, kind, unix-ns
// start/end, attributes, status), the shape OTLP carries (otlp.h) and `serve`/`gateway` export.
// Example: Span s; s.trace_id = random_trace_id(); s.span_id = random_span_id(); s.name = "decode";
//          s.attributes.push_back({"gen_ai.request.model", std::string("llama")});
// Plain value types (thread-compatible); the id and hex helpers are thread-safe.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace inferscope::trace {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// SpanKind follows OTLP's Span.SpanKind numbering (0 unspecified .. 5 consumer).
enum class SpanKind : std::uint8_t { kUnspecified = 0, kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };

// StatusCode follows OTLP's Status.StatusCode numbering.
enum class StatusCode : std::uint8_t { kUnset = 0, kOk = 1, kError = 2 };

// StringList is a string[] attribute value (gen_ai.response.finish_reasons).
using StringList = std::vector<std::string>;

// AttributeValue is one of the AnyValue kinds inferscope writes and reads back.
using AttributeValue = std::variant<std::string, bool, std::int64_t, double, StringList>;

// AttributeKey is an attribute's name. The names inferscope writes are string literals, held as
// views of their static storage (a request's ~40 attributes copy no name); names read from the
// wire (the decoder, the store) are owned strings. Copies keep whichever they hold.
class AttributeKey {
 public:
  AttributeKey() = default;
  // consteval: only a constant expression converts, so the view always names static storage.
  consteval AttributeKey(const char* literal) : literal_(literal) {}
  AttributeKey(std::string owned) noexcept : owned_(std::move(owned)) {}

  std::string_view view() const noexcept { return owned_ ? std::string_view(*owned_) : literal_; }
  friend bool operator==(const AttributeKey& a, std::string_view b) noexcept { return a.view() == b; }
  // Exactly AttributeKey on the right, so a literal or string compares through the view above.
  template <std::same_as<AttributeKey> Key>
  friend bool operator==(const AttributeKey& a, const Key& b) noexcept {
    return a.view() == b.view();
  }

 private:
  std::string_view literal_;
  // std::optional, not a plain std::string: a consteval-built key must hold no pointer into itself
  // (a string's inline buffer), and an empty optional holds none.
  std::optional<std::string> owned_;
};

struct Attribute {
  AttributeKey key;
  AttributeValue value;
  bool operator==(const Attribute&) const = default;
};

struct SpanStatus {
  StatusCode code = StatusCode::kUnset;
  std::string message;
  bool operator==(const SpanStatus&) const = default;
};

// kSampledFlag is the W3C trace-flags sampled bit, also OTLP Span.flags' low byte.
inline constexpr std::uint32_t kSampledFlag = 0x01;

struct Span {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zero: a root span
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t end_unix_ns = 0;
  std::vector<Attribute> attributes;
  SpanStatus status;
  std::uint32_t flags = 0;  // OTLP Span.flags: W3C trace flags in bits 0-7, 0x100/0x200 is-remote bits

  bool is_root() const noexcept;
  // attribute returns the value of `key`, or nullptr.
  const AttributeValue* attribute(std::string_view key) const noexcept;
  bool operator==(const Span&) const = default;
};

// is_zero reports an all-zero (invalid) id.
bool is_zero(std::span<const std::uint8_t> id) noexcept;

// to_hex writes lowercase hex (32 chars for a trace id, 16 for a span id).
std::string to_hex(std::span<const std::uint8_t> bytes);
// write_hex writes the same 2 * bytes.size() chars at `out` (no allocation).
void write_hex(std::span<const std::uint8_t> bytes, char* out) noexcept;

// TraceIdHex is a trace id's 32 hex chars held by value: a request's exemplar label without a
// heap string. view() is valid while the TraceIdHex lives.
struct TraceIdHex {
  std::array<char, 32> chars{};
  std::string_view view() const noexcept { return {chars.data(), chars.size()}; }
};
TraceIdHex trace_id_hex(const TraceId& id) noexcept;

// random_trace_id/random_span_id draw non-zero ids from a per-thread generator seeded from
// std::random_device (not for secrets: ids only need to be unique).
TraceId random_trace_id();
SpanId random_span_id();

}  // namespace inferscope::trace
