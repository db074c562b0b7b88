// File: completion_scan.cpp
// A recursive-descent walk for the four levels the gateway reads (root, usage/choices, a choice,
// its delta or message) and an iterative skip for every other value, with a bit per nesting level
// instead of a stack of frames. Where simdjson's DOM parser is stricter than RFC 8259 (integers
// beyond 64 bits, doubles that overflow, lone surrogates, depth) the scanner follows simdjson,
// which the gateway used before, so the same streams are called malformed.
#include "gateway/completion_scan.h"

#include <bitset>
#include <charconv>
#include <cstring>
#include <limits>
#include <span>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace inferscope::gateway {

namespace {

constexpr int kMaxDepth = 1024;  // simdjson's default: 1024 nested containers parse, 1025 do not

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// read_hex4 reads the four hex digits at `p` (at least four bytes must be readable).
bool read_hex4(const char* p, std::uint32_t& out) {
  out = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = hex_digit(p[i]);
    if (d < 0) return false;
    out = out << 4 | static_cast<std::uint32_t>(d);
  }
  return true;
}

// utf8_length returns the length of the well-formed UTF-8 sequence at p (p < end, *p >= 0x80),
// or 0: no overlongs, no surrogates, nothing above U+10FFFF.
std::size_t utf8_length(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  }
  return n;
}

// next_code_point decodes one character of a validated raw JSON string at `i`.
std::uint32_t next_code_point(std::string_view raw, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(raw[k]); };
  if (raw[i] != '\\') {
    const unsigned char c = byte(i);
    if (c < 0x80) return raw[i++];
    const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    std::uint32_t cp = c & (0x3F >> (n - 1));
    for (std::size_t k = 1; k < n; ++k) cp = cp << 6 | (byte(i + k) & 0x3F);
    i += n;
    return cp;
  }
  const char e = raw[i + 1];
  i += 2;
  switch (e) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': {
      std::uint32_t cp = 0;
      read_hex4(raw.data() + i, cp);
      i += 4;
      if (cp >= 0xD800 && cp < 0xDC00) {
        std::uint32_t low = 0;
        read_hex4(raw.data() + i + 2, low);
        i += 6;
        cp = ((cp - 0xD800) << 10 | (low - 0xDC00)) + 0x10000;
      }
      return cp;
    }
    default: return static_cast<unsigned char>(e);  // '"', '\\', '/'
  }
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | cp >> 6));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | cp >> 12));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | cp >> 18));
    out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// key_is compares a validated raw key with an ASCII name, decoding escapes ("con\u0074ent").
inline bool key_is(std::string_view raw, bool escaped, std::string_view name) {
  if (!escaped) return raw == name;
  std::size_t i = 0;
  for (const char want : name) {
    if (i >= raw.size() || next_code_point(raw, i) != static_cast<unsigned char>(want)) return false;
  }
  return i == raw.size();
}

#if defined(__SSE2__)
// special_mask returns a bit per byte of the 16 at p that is '"', '\\', a control character or
// non-ASCII (a signed compare with 0x20 catches the last two at once): the bytes a string scan
// must look at one by one.
unsigned special_mask(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  const __m128i below_space_or_high = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), below_space_or_high)));
}
#endif

class Scanner {
 public:
  Scanner(std::string_view json, CompletionShape shape, CompletionScan& out)
      : p_(json.data()), end_(json.data() + json.size()), shape_(shape), out_(out) {}

  bool document() {
    if (peek() != '{' || !object([this](std::string_view key, bool escaped) { return root_member(key, escaped); })) {
      return false;
    }
    return peek_end();
  }

 private:
  // peek returns the next byte after whitespace, or '\0' at the end (a NUL byte itself is never
  // valid where peek is used, so the two need not be told apart).
  char peek() {
    while (p_ != end_ && is_space(*p_)) ++p_;
    return p_ == end_ ? '\0' : *p_;
  }
  bool peek_end() {
    peek();
    return p_ == end_;
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }

  // object walks the object at '{'; member(key, escaped) is called with the
  // value next and must consume it. Keys are validated strings.
  template <class Member>
  bool object(Member&& member) {
    ++p_;
    if (consume('}')) return true;
    for (;;) {
      std::string_view key;
      bool escaped = false;
      if (peek() != '"' || !string(key, escaped) || !consume(':')) return false;
      if (!member(key, escaped)) return false;
      if (consume(',')) continue;
      return consume('}');
    }
  }

  // array walks the array at '['; element() is called with each value next and must consume it.
  template <class Element>
  bool array(Element&& element) {
    ++p_;
    if (consume(']')) return true;
    for (;;) {
      if (!element()) return false;
      if (consume(',')) continue;
      return consume(']');
    }
  }

  bool root_member(std::string_view key, bool escaped) {
    if (!seen_error_ && key_is(key, escaped, "error")) {
      seen_error_ = true;
      if (peek() == 'n') return literal("null");
      out_.error = true;
      return skip_value(1);
    }
    if (!seen_usage_ && key_is(key, escaped, "usage")) {
      seen_usage_ = true;
      if (peek() != '{') return skip_value(1);
      out_.usage = true;
      return usage();
    }
    if (!seen_choices_ && key_is(key, escaped, "choices")) {
      seen_choices_ = true;
      if (peek() != '[') return skip_value(1);
      out_.choices = true;
      out_.choices_empty = true;
      return array([this] {
        out_.choices_empty = false;
        return peek() == '{' ? choice() : skip_value(2);
      });
    }
    if (!seen_timings_ && key_is(key, escaped, "timings")) {
      seen_timings_ = true;
      if (peek() != '{') return skip_value(1);
      out_.timings = true;
      return timings();
    }
    return skip_value(1);
  }

  bool timings() {
    bool seen[4] = {false, false, false, false};
    EngineTimings& t = out_.engine_timings;
    return object([&](std::string_view key, bool escaped) {
      const char c = peek();
      const bool is_number = c == '-' || is_digit(c);
      if (!seen[0] && key_is(key, escaped, "prompt_ms")) {
        seen[0] = true;
        return is_number ? number(nullptr, &t.prompt_ms) : skip_value(2);
      }
      if (!seen[1] && key_is(key, escaped, "predicted_ms")) {
        seen[1] = true;
        return is_number ? number(nullptr, &t.predicted_ms) : skip_value(2);
      }
      if (!seen[2] && key_is(key, escaped, "prompt_n")) {
        seen[2] = true;
        return is_number ? number(&t.prompt_n) : skip_value(2);
      }
      if (!seen[3] && key_is(key, escaped, "predicted_n")) {
        seen[3] = true;
        return is_number ? number(&t.predicted_n) : skip_value(2);
      }
      return skip_value(2);
    });
  }

  bool usage() {
    bool seen_prompt = false, seen_completion = false;
    return object([&](std::string_view key, bool escaped) {
      std::optional<std::uint64_t>* target = nullptr;
      if (!seen_prompt && key_is(key, escaped, "prompt_tokens")) {
        seen_prompt = true;
        target = &out_.prompt_tokens;
      } else if (!seen_completion && key_is(key, escaped, "completion_tokens")) {
        seen_completion = true;
        target = &out_.completion_tokens;
      }
      const char c = peek();
      if (target != nullptr && (c == '-' || is_digit(c))) return number(target);
      return skip_value(2);
    });
  }

  bool choice() {
    bool seen_holder = false, seen_text = false, seen_reason = false;
    const std::string_view holder = shape_ == CompletionShape::kChunk ? "delta" : "message";
    return object([&](std::string_view key, bool escaped) {
      if (!seen_holder && key_is(key, escaped, holder)) {
        seen_holder = true;
        return peek() == '{' ? content_holder() : skip_value(3);
      }
      if (!seen_text && key_is(key, escaped, "text")) {
        seen_text = true;
        if (peek() != '"') return skip_value(3);
        std::string_view text;
        bool text_escaped = false;
        if (!string(text, text_escaped)) return false;
        out_.content = out_.content || !text.empty();
        return true;
      }
      if (!seen_reason && key_is(key, escaped, "finish_reason")) {
        seen_reason = true;
        if (peek() != '"') return skip_value(3);
        if (!string(out_.finish_reason, out_.finish_reason_escaped)) return false;
        out_.finish_reason_seen = true;
        return true;
      }
      return skip_value(3);
    });
  }

  // content_holder reads a delta (chunk) or message (whole body) object.
  bool content_holder() {
    constexpr std::string_view kChunkTexts[] = {"content", "reasoning_content", "reasoning"};
    constexpr std::string_view kWholeTexts[] = {"content"};
    const std::span<const std::string_view> texts =
        shape_ == CompletionShape::kChunk ? std::span<const std::string_view>(kChunkTexts)
                                          : std::span<const std::string_view>(kWholeTexts);
    unsigned seen = 0;  // bit i: texts[i]; the bit after them: tool_calls
    const unsigned tool_calls_bit = 1u << texts.size();
    return object([&](std::string_view key, bool escaped) {
      for (std::size_t i = 0; i < texts.size(); ++i) {
        if ((seen & 1u << i) != 0 || !key_is(key, escaped, texts[i])) continue;
        seen |= 1u << i;
        if (peek() != '"') return skip_value(4);
        std::string_view text;
        bool text_escaped = false;
        if (!string(text, text_escaped)) return false;
        out_.content = out_.content || !text.empty();
        return true;
      }
      if ((seen & tool_calls_bit) == 0 && key_is(key, escaped, "tool_calls")) {
        seen |= tool_calls_bit;
        if (peek() == '[') {
          const char* open = p_;
          ++p_;
          out_.content = out_.content || peek() != ']';
          p_ = open;
        }
      }
      return skip_value(4);
    });
  }

  // skip_value validates and skips one value of any kind held by a container at nesting `depth`.
  bool skip_value(int depth) {
    std::bitset<kMaxDepth + 1>& in_object = skip_in_object_;
    int level = 0;
    for (;;) {
      const char c = peek();
      if (c == '{' || c == '[') {
        if (depth + level + 1 > kMaxDepth) return false;
        ++p_;
        ++level;
        in_object[static_cast<std::size_t>(level)] = c == '{';
        if (!consume(c == '{' ? '}' : ']')) {
          if (c == '{' && !member_key()) return false;
          continue;  // the container's first value
        }
        --level;
      } else if (!scalar(c)) {
        return false;
      }
      // A value ended: close containers until one goes on with another value.
      for (;;) {
        if (level == 0) return true;
        const bool obj = in_object[static_cast<std::size_t>(level)];
        if (consume(',')) {
          if (obj && !member_key()) return false;
          break;
        }
        if (!consume(obj ? '}' : ']')) return false;
        --level;
      }
    }
  }

  bool member_key() {
    std::string_view key;
    bool escaped = false;
    return peek() == '"' && string(key, escaped) && consume(':');
  }

  bool scalar(char c) {
    std::string_view ignored;
    bool escaped = false;
    switch (c) {
      case '"': return string(ignored, escaped);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return (c == '-' || is_digit(c)) && number(nullptr);
    }
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  // string reads the string at '"': `raw` gets its inside as written, `escaped` whether it has a
  // backslash. Rejects control characters, bad escapes, lone surrogates and invalid UTF-8.
  bool string(std::string_view& raw, bool& escaped) {
    const char* start = ++p_;
    escaped = false;
    for (;;) {
#if defined(__SSE2__)
      // Sixteen bytes at a time, to the first one worth a look (measured: gateway_sse_relay_bench).
      if (end_ - p_ >= 16) {
        const unsigned special = special_mask(p_);
        if (special == 0) {
          p_ += 16;
          continue;
        }
        p_ += __builtin_ctz(special);
      } else if (p_ == end_) {
        return false;
      }
#else
      if (p_ == end_) return false;
#endif
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        raw = std::string_view(start, static_cast<std::size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\') {
        escaped = true;
        if (!escape()) return false;
      } else if (c < 0x20) {
        return false;
      } else if (c < 0x80) {
        ++p_;
      } else {
        const std::size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p_),
                                          reinterpret_cast<const unsigned char*>(end_));
        if (n == 0) return false;
        p_ += n;
      }
    }
  }

  // escape checks the escape at the backslash under p_ and moves past it.
  bool escape() {
    if (end_ - p_ < 2) return false;
    switch (p_[1]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        p_ += 2;
        return true;
      case 'u': break;
      default: return false;
    }
    std::uint32_t cp = 0;
    if (end_ - p_ < 6 || !read_hex4(p_ + 2, cp)) return false;
    p_ += 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate without its high half
    if (cp < 0xD800 || cp >= 0xDC00) return true;
    std::uint32_t low = 0;  // a high surrogate must be followed by \u and a low one
    if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u' || !read_hex4(p_ + 2, low) || low < 0xDC00 || low > 0xDFFF) {
      return false;
    }
    p_ += 6;
    return true;
  }

  // number reads an RFC 8259 number. Integers must fit int64 (negative) or uint64 (else) and
  // doubles must not overflow, as in simdjson. `as_uint`, when given, gets the value when it is
  // an integer >= 0 (-0 included), else nothing; `as_double`, when given, gets every valid value.
  bool number(std::optional<std::uint64_t>* as_uint, std::optional<double>* as_double = nullptr) {
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    const char* int_start = p_;
    if (p_ == end_ || !is_digit(*p_)) return false;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    const char* int_end = p_;
    bool is_float = false;
    if (p_ != end_ && *p_ == '.') {
      is_float = true;
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) return false;
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    const char* mantissa_end = p_;
    long exponent = 0;
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_float = true;
      ++p_;
      bool exponent_negative = false;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) exponent_negative = *p_++ == '-';
      if (p_ == end_ || !is_digit(*p_)) return false;
      for (; p_ != end_ && is_digit(*p_); ++p_) {
        if (exponent < 100000000) exponent = exponent * 10 + (*p_ - '0');
      }
      if (exponent_negative) exponent = -exponent;
    }
    if (as_uint != nullptr) as_uint->reset();
    if (as_double != nullptr) as_double->reset();
    if (!is_float) {
      std::uint64_t value = 0;
      for (const char* d = int_start; d != int_end; ++d) {
        if (__builtin_mul_overflow(value, 10u, &value) ||
            __builtin_add_overflow(value, static_cast<std::uint64_t>(*d - '0'), &value)) {
          return false;
        }
      }
      if (negative && value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) return false;
      if (as_uint != nullptr && (!negative || value == 0)) *as_uint = value;
      if (as_double != nullptr) *as_double = negative ? -static_cast<double>(value) : static_cast<double>(value);
      return true;
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(start, p_, value);
    if (ec != std::errc::result_out_of_range) {
      const bool ok = ec == std::errc() && end == p_;
      if (ok && as_double != nullptr) *as_double = value;
      return ok;
    }
    // Out of range: an underflow (to zero or a subnormal) is a valid number, an overflow is not.
    long magnitude = exponent;  // the decimal exponent of the first non-zero digit
    if (int_end - int_start > 1 || *int_start != '0') {
      magnitude += int_end - int_start - 1;
    } else {
      const char* d = int_end + 1;
      while (d < mantissa_end && *d == '0') ++d;
      magnitude -= d - int_end;
    }
    if (magnitude < 0 && as_double != nullptr) *as_double = negative ? -0.0 : 0.0;
    return magnitude < 0;
  }

  const char* p_;
  const char* end_;
  std::bitset<kMaxDepth + 1> skip_in_object_;  // skip_value's levels: an object (else an array)
  CompletionShape shape_;
  CompletionScan& out_;
  bool seen_error_ = false;
  bool seen_usage_ = false;
  bool seen_choices_ = false;
  bool seen_timings_ = false;
};

}  // namespace

CompletionScan scan_completion(std::string_view json, CompletionShape shape) {
  CompletionScan out;
  Scanner scanner(json, shape, out);
  if (!scanner.document()) return CompletionScan{};
  out.valid = true;
  return out;
}

void assign_json_string(std::string_view raw, bool escaped, std::string& out) {
  if (!escaped) {
    out.assign(raw);
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < raw.size();) append_utf8(next_code_point(raw, i), out);
}

}  // namespace inferscope::gateway
