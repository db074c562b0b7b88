// File: exposition_parser.h
// Parses Prometheus text 0.0.4 and OpenMetrics 1.0 text into families and samples, and checks them
// with a strict validator (histogram buckets, duplicate series, le/quantile placement, counters).
// Example: auto parsed = parse_exposition(body, ExpositionTextFormat::kPrometheus004);
//          if (parsed) { auto v = value_of(*parsed, "http_requests_total", {{"code", "200"}}); }
// Thread safety: free functions on values; safe to call concurrently on distinct inputs.
// Never crashes or throws on malformed input: every defect becomes an Error with line and column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inferscope/common/result.h"

namespace inferscope::metrics {

// ExpositionTextFormat names the two text dialects the parser understands.
enum class ExpositionTextFormat {
  kPrometheus004,   // text/plain; version=0.0.4 (also used for text/plain version=1.0.0)
  kOpenMetrics100,  // application/openmetrics-text; version=1.0.0 (and 0.0.1)
};

// ParsedMetricType is a family's TYPE. kUnknown is 0.0.4 "untyped" and OpenMetrics "unknown", and
// also the type of a family that has no TYPE line.
enum class ParsedMetricType {
  kCounter,
  kGauge,
  kHistogram,
  kSummary,
  kUnknown,
  kInfo,            // OpenMetrics only
  kStateset,        // OpenMetrics only
  kGaugeHistogram,  // OpenMetrics only
};

// to_string returns the OpenMetrics spelling of a type ("unknown" for kUnknown). Never fails.
std::string_view to_string(ParsedMetricType type) noexcept;

// ParsedLabel is one label pair with its value unescaped (\\, \", \n already decoded).
struct ParsedLabel {
  std::string name;
  std::string value;
  friend bool operator==(const ParsedLabel&, const ParsedLabel&) = default;
};

// ParsedExemplar is an OpenMetrics exemplar (` # {trace_id="x"} 0.5 1700000000.1`).
struct ParsedExemplar {
  std::vector<ParsedLabel> labels;
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;  // seconds in the text, converted like timestamp_ms below
};

// ParsedSample is one sample line. name is the full sample name (foo_bucket, foo_total, ...).
// timestamp_ms: 0.0.4 timestamps are integer milliseconds and kept as they are; OpenMetrics
// timestamps are float seconds, converted to milliseconds truncated toward zero (what Prometheus'
// own OpenMetrics parser stores), so both formats compare the same way.
struct ParsedSample {
  std::string name;
  std::vector<ParsedLabel> labels;  // in text order
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
  std::optional<ParsedExemplar> exemplar;  // OpenMetrics only
  std::size_t line = 0;                    // 1-based line of the sample in the text
};

// ParsedFamily is one metric family: its metadata and its samples in text order.
// In OpenMetrics, name is the family name (counter foo, samples foo_total and foo_created); in
// 0.0.4 it is the TYPE/HELP name, and histogram/summary samples x_bucket, x_sum, x_count join x.
struct ParsedFamily {
  std::string name;
  ParsedMetricType type = ParsedMetricType::kUnknown;
  std::string help;  // unescaped; empty when absent
  std::string unit;  // OpenMetrics UNIT; empty when absent
  std::vector<ParsedSample> samples;
  std::size_t line = 0;     // line where the family first appears
  bool contiguous = true;   // false: a 0.0.4 family was split by other families (see parse_exposition)
};

// ParsedExposition is the whole parsed text; families are in order of first appearance.
struct ParsedExposition {
  ExpositionTextFormat format = ExpositionTextFormat::kPrometheus004;
  std::vector<ParsedFamily> families;
};

// parse_exposition parses `text` in the given format. It keeps no reference to `text`.
// Errors read "cannot parse exposition at line L, column C: <cause>" (1-based; columns count bytes).
// Rejected in both formats: invalid UTF-8, names outside the legacy charset, bad escapes (only \\,
// \" and \n in label values), values outside Go ParseFloat syntax (decimal, exponent, Inf/Infinity/
// NaN in any case; no hex floats, no '_'), duplicate HELP/TYPE, TYPE after the family's samples,
// duplicate label names, CR line ends, a missing final newline (0.0.4) or # EOF (OpenMetrics).
// OpenMetrics additionally rejects blank lines, other comments, extra spaces, trailing commas,
// interleaved families, samples after metadata mismatching the type, UNIT that is not the name's
// suffix and exemplar label sets over 128 code points. A 0.0.4 family split by other lines is
// merged and marked contiguous=false, as promtool/expfmt do (Prometheus' scraper does not care).
// Cost: one pass, allocation per sample/label string only (no per-character work on the heap).
Result<ParsedExposition> parse_exposition(std::string_view text, ExpositionTextFormat format);

// exposition_format_from_content_type maps a Content-Type header value to a text format:
// application/openmetrics-text (any version) -> OpenMetrics; text/plain (version 0.0.4, 1.0.0 or
// none) -> 0.0.4. Anything else (empty, protobuf, HTML) is an Error naming the media type.
Result<ExpositionTextFormat> exposition_format_from_content_type(std::string_view content_type);

// parse_exposition_float parses a value the way Prometheus does (Go ParseFloat without hex floats
// or '_'), e.g. "1e+06", "-Inf", "nan". Returns nullopt on bad syntax or overflow. Never throws.
std::optional<double> parse_exposition_float(std::string_view text) noexcept;

// validate_exposition checks what promtool 2.42 does not: histogram buckets with increasing le,
// non-decreasing integer counts, an le="+Inf" bucket equal to _count; le only on histogram buckets;
// quantile only on summary quantile samples, within [0, 1] and increasing; sample names fitting
// their family's type; no duplicate series; contiguous families; counters neither negative nor
// NaN; info values 1; stateset values 0/1. Errors read "cannot validate exposition at line L: ...".
// Cost: O(samples x labels) with a few allocations per series. Never throws.
Result<void> validate_exposition(const ParsedExposition& exposition);

// LabelSubset is a list of (name, value) pairs a sample must carry (other labels are ignored).
using LabelSubset = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// find_family returns the family with this exact name, or nullptr. Linear in the number of families.
// The pointer stays valid while `exposition` is neither modified nor destroyed.
const ParsedFamily* find_family(const ParsedExposition& exposition, std::string_view name);

// find_samples returns every sample (any family) named `sample_name` that carries all `labels`,
// in text order. Linear in the number of samples. Pointers live as long as `exposition`.
std::vector<const ParsedSample*> find_samples(const ParsedExposition& exposition,
                                              std::string_view sample_name, LabelSubset labels = {});

// find_sample returns the first sample find_samples would return, or nullptr.
const ParsedSample* find_sample(const ParsedExposition& exposition, std::string_view sample_name,
                                LabelSubset labels = {});

// value_of returns the value of the first sample named `sample_name` carrying all `labels`
// (a subset match), or nullopt when there is none. Linear in the number of samples.
std::optional<double> value_of(const ParsedExposition& exposition, std::string_view sample_name,
                               LabelSubset labels = {});

// label_value returns the value of label `name` on `sample`, or nullopt when it has no such label.
std::optional<std::string_view> label_value(const ParsedSample& sample, std::string_view name);

}  // namespace inferscope::metrics
