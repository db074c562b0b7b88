// Lookups over a parsed exposition, type names and Content-Type detection.
#include <cctype>
#include <string>

#include "detail/text_format.h"
#include "exposition_parser_scan.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::metrics {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has_labels(const ParsedSample& sample, LabelSubset labels) {
  for (const auto& [name, value] : labels) {
    const auto found = label_value(sample, name);
    if (!found || *found != value) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(ParsedMetricType type) noexcept {
  switch (type) {
    case ParsedMetricType::kCounter: return "counter";
    case ParsedMetricType::kGauge: return "gauge";
    case ParsedMetricType::kHistogram: return "histogram";
    case ParsedMetricType::kSummary: return "summary";
    case ParsedMetricType::kUnknown: return "unknown";
    case ParsedMetricType::kInfo: return "info";
    case ParsedMetricType::kStateset: return "stateset";
    case ParsedMetricType::kGaugeHistogram: return "gaugehistogram";
  }
  return "unknown";
}

Result<ExpositionTextFormat> exposition_format_from_content_type(std::string_view content_type) {
  const std::string_view media = detail::trim_header_blanks(content_type.substr(0, content_type.find(';')));
  const std::string media_lower = lower(media);
  if (media_lower == "application/openmetrics-text") return ExpositionTextFormat::kOpenMetrics100;
  if (media_lower == "text/plain") return ExpositionTextFormat::kPrometheus004;
  return make_error("cannot detect exposition format from Content-Type " + detail::printable(content_type) +
                    ": unsupported media type (expected text/plain or application/openmetrics-text)");
}

const ParsedFamily* find_family(const ParsedExposition& exposition, std::string_view name) {
  for (const ParsedFamily& family : exposition.families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

std::vector<const ParsedSample*> find_samples(const ParsedExposition& exposition, std::string_view sample_name,
                                              LabelSubset labels) {
  std::vector<const ParsedSample*> found;
  for (const ParsedFamily& family : exposition.families) {
    for (const ParsedSample& sample : family.samples) {
      if (sample.name == sample_name && has_labels(sample, labels)) found.push_back(&sample);
    }
  }
  return found;
}

const ParsedSample* find_sample(const ParsedExposition& exposition, std::string_view sample_name, LabelSubset labels) {
  for (const ParsedFamily& family : exposition.families) {
    for (const ParsedSample& sample : family.samples) {
      if (sample.name == sample_name && has_labels(sample, labels)) return &sample;
    }
  }
  return nullptr;
}

std::optional<double> value_of(const ParsedExposition& exposition, std::string_view sample_name, LabelSubset labels) {
  const ParsedSample* sample = find_sample(exposition, sample_name, labels);
  if (!sample) return std::nullopt;
  return sample->value;
}

std::optional<std::string_view> label_value(const ParsedSample& sample, std::string_view name) {
  for (const ParsedLabel& label : sample.labels) {
    if (label.name == name) return std::string_view(label.value);
  }
  return std::nullopt;
}

}  // namespace inferscope::metrics
