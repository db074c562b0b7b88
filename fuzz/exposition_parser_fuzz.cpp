// libFuzzer target for the exposition parser: feeds the input as text 0.0.4 and as OpenMetrics,
// runs the validator on every successful parse, checks structural invariants, round-trips 0.0.4
// results through a minimal writer (parse(render(parse(x))) must equal parse(x)), and round-trips
// every OpenMetrics exemplar through a one-line exposition.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "inferscope/metrics/exposition_parser.h"

namespace {

using inferscope::metrics::ExpositionTextFormat;
using inferscope::metrics::ParsedExposition;
using inferscope::metrics::ParsedMetricType;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  __builtin_trap();
}

void check_structure(const ParsedExposition& parsed, std::string_view text) {
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& family : parsed.families) {
    if (family.name.empty()) violated("family with an empty name");
    if (family.line == 0 || family.line > lines) violated("family line out of range");
    for (const auto& sample : family.samples) {
      if (sample.name.empty()) violated("sample with an empty name");
      if (sample.name.compare(0, family.name.size(), family.name) != 0) violated("sample name does not start with its family name");
      if (sample.line < family.line || sample.line > lines) violated("sample line out of range");
      for (const auto& label : sample.labels) {
        if (label.name.empty()) violated("label with an empty name");
      }
      if (sample.exemplar && parsed.format != ExpositionTextFormat::kOpenMetrics100) violated("exemplar in 0.0.4");
    }
  }
  (void)inferscope::metrics::validate_exposition(parsed);
}

void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out.push_back(c);
  }
}

void append_number(std::string& out, double value) {
  if (std::isnan(value)) { out += "NaN"; return; }
  if (std::isinf(value)) { out += value > 0 ? "+Inf" : "-Inf"; return; }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

std::string render_text004(const ParsedExposition& parsed) {
  std::string out;
  for (const auto& family : parsed.families) {
    if (!family.help.empty()) {
      out += "# HELP " + family.name + " ";
      append_escaped(out, family.help, false);
      out += "\n";
    }
    const auto type = family.type == ParsedMetricType::kUnknown ? std::string_view("untyped") : to_string(family.type);
    out += "# TYPE " + family.name + " " + std::string(type) + "\n";
    for (const auto& sample : family.samples) {
      out += sample.name;
      if (!sample.labels.empty()) {
        out += "{";
        for (std::size_t i = 0; i < sample.labels.size(); ++i) {
          out += (i ? ",": "") + sample.labels[i].name + "=\"";
          append_escaped(out, sample.labels[i].value, true);
          out += "\"";
        }
        out += "}";
      }
      out += " ";
      append_number(out, sample.value);
      if (sample.timestamp_ms) out += " " + std::to_string(*sample.timestamp_ms);
      out += "\n";
    }
  }
  return out;
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// check_exemplars holds each OpenMetrics exemplar to the 128-code-point limit and writes it back
// the way the library prints one (labels re-escaped, timestamp as seconds with milliseconds) on a
// one-line exposition that must parse to the same labels and value, and the same timestamp up to
// the millisecond the float seconds may lose.
void check_exemplars(const ParsedExposition& parsed) {
  for (const auto& family : parsed.families) {
    for (const auto& sample : family.samples) {
      if (!sample.exemplar) continue;
      const auto& exemplar = *sample.exemplar;
      std::size_t points = 0;
      std::string line = "a_total 1 # {";
      for (std::size_t i = 0; i < exemplar.labels.size(); ++i) {
        const auto& label = exemplar.labels[i];
        if (label.name.empty()) violated("exemplar label with an empty name");
        points += code_points(label.name) + code_points(label.value);
        line += (i ? "," : "") + label.name + "=\"";
        append_escaped(line, label.value, true);
        line += "\"";
      }
      if (points > 128) violated("exemplar labels over 128 code points accepted");
      line += "} ";
      append_number(line, exemplar.value);
      if (exemplar.timestamp_ms) {
        const std::int64_t ms = *exemplar.timestamp_ms;
        const std::uint64_t magnitude = ms < 0 ? 0 - static_cast<std::uint64_t>(ms) : static_cast<std::uint64_t>(ms);
        char millis[8];
        std::snprintf(millis, sizeof millis, ".%03u", static_cast<unsigned>(magnitude % 1000));
        line += std::string(ms < 0 ? " -" : " ") + std::to_string(magnitude / 1000) + millis;
      }
      line += "\n# EOF\n";
      auto again = inferscope::metrics::parse_exposition(line, ExpositionTextFormat::kOpenMetrics100);
      if (!again) {
        std::fprintf(stderr, "%s\n%s", again.error().message.c_str(), line.c_str());
        violated("rewritten exemplar does not parse");
      }
      const auto& back = again->families.at(0).samples.at(0).exemplar;
      if (!back || back->labels != exemplar.labels || !same_value(back->value, exemplar.value)) {
        violated("exemplar round trip changed labels or value");
      }
      // Beyond ~30,000 years the seconds float has less than millisecond resolution.
      const bool exact = !exemplar.timestamp_ms || std::llabs(*exemplar.timestamp_ms) < 1'000'000'000'000'000;
      if (back->timestamp_ms.has_value() != exemplar.timestamp_ms.has_value() ||
          (exact && back->timestamp_ms && std::llabs(*back->timestamp_ms - *exemplar.timestamp_ms) > 1)) {
        violated("exemplar round trip changed the timestamp");
      }
    }
  }
}

void check_round_trip(const ParsedExposition& parsed) {
  const std::string rendered = render_text004(parsed);
  auto again = inferscope::metrics::parse_exposition(rendered, ExpositionTextFormat::kPrometheus004);
  if (!again) {
    std::fprintf(stderr, "%s\n", again.error().message.c_str());
    violated("rendered 0.0.4 does not parse");
  }
  if (again->families.size() != parsed.families.size()) violated("round trip changed the family count");
  for (std::size_t f = 0; f < parsed.families.size(); ++f) {
    const auto& a = parsed.families[f];
    const auto& b = again->families[f];
    if (a.name != b.name || a.type != b.type || a.help != b.help) violated("round trip changed family metadata");
    if (a.samples.size() != b.samples.size()) violated("round trip changed a family's samples");
    for (std::size_t s = 0; s < a.samples.size(); ++s) {
      const auto& x = a.samples[s];
      const auto& y = b.samples[s];
      if (x.name != y.name || x.labels != y.labels || !same_value(x.value, y.value) || x.timestamp_ms != y.timestamp_ms) {
        violated("round trip changed a sample");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto text004 = inferscope::metrics::parse_exposition(text, ExpositionTextFormat::kPrometheus004);
  if (text004) {
    if (text004->format != ExpositionTextFormat::kPrometheus004) violated("format not recorded");
    check_structure(*text004, text);
    check_round_trip(*text004);
  } else if (text004.error().message.rfind("cannot parse exposition at line ", 0) != 0) {
    violated("error message without a position");
  }
  auto openmetrics = inferscope::metrics::parse_exposition(text, ExpositionTextFormat::kOpenMetrics100);
  if (openmetrics) {
    check_structure(*openmetrics, text);
    check_exemplars(*openmetrics);
  } else if (openmetrics.error().message.rfind("cannot parse exposition at line ", 0) != 0) {
    violated("error message without a position");
  }
  if (size <= 64) {
    // Differential check: whatever parse_exposition_float accepts, strtod (C locale) reads the same.
    if (const auto value = inferscope::metrics::parse_exposition_float(text)) {
      const std::string copy(text);
      char* end = nullptr;
      const double expected = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size() || !same_value(expected, *value)) violated("float differs from strtod");
    }
    (void)inferscope::metrics::exposition_format_from_content_type(text);
  }
  return 0;
}
