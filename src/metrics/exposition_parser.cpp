// Line-oriented parser for Prometheus text 0.0.4 and OpenMetrics 1.0 (see exposition_parser.h).
// One Parser walks the text once; each line is a string_view and every scan works on offsets in it,
// so the only allocations are the strings and vectors of the result.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "exposition_parser_scan.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::metrics {
namespace {

using detail::EscapeSet;
using detail::printable;
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
// OpenMetrics: "label names and values of an exemplar <= 128 UTF-8 code points".
constexpr std::size_t kMaxExemplarCodePoints = 128;
// Up to this many labels, duplicates are found by comparing with the earlier ones; above it, by
// sorting once at '}' so that a hostile line with thousands of labels stays O(n log n).
constexpr std::size_t kQuadraticLabelCheck = 32;

std::size_t count_code_points(std::string_view text) noexcept {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// Suffixes a sample name may add to its family name, per type.
bool suffix_allowed(ParsedMetricType type, std::string_view suffix, bool openmetrics) noexcept {
  using T = ParsedMetricType;
  if (!openmetrics) {  // 0.0.4 (expfmt): only histograms and summaries absorb suffixed samples
    if (suffix.empty()) return true;
    if (type == T::kSummary) return suffix == "_sum" || suffix == "_count";
    if (type == T::kHistogram) return suffix == "_sum" || suffix == "_count" || suffix == "_bucket";
    return false;
  }
  switch (type) {
    case T::kCounter: return suffix == "_total" || suffix == "_created";
    case T::kHistogram:
      return suffix == "_bucket" || suffix == "_count" || suffix == "_sum" || suffix == "_created";
    case T::kGaugeHistogram: return suffix == "_bucket" || suffix == "_gcount" || suffix == "_gsum";
    case T::kSummary: return suffix.empty() || suffix == "_count" || suffix == "_sum" || suffix == "_created";
    case T::kInfo: return suffix == "_info";
    case T::kGauge:
    case T::kStateset:
    case T::kUnknown: return suffix.empty();
  }
  return false;
}

constexpr std::string_view kSuffixes[] = {"_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info"};

std::optional<ParsedMetricType> type_from_text(std::string_view text, bool openmetrics) {
  using T = ParsedMetricType;
  if (text == "counter") return T::kCounter;
  if (text == "gauge") return T::kGauge;
  if (text == "histogram") return T::kHistogram;
  if (text == "summary") return T::kSummary;
  if (!openmetrics) {
    if (text == "untyped") return T::kUnknown;
    return std::nullopt;
  }
  if (text == "unknown") return T::kUnknown;
  if (text == "info") return T::kInfo;
  if (text == "stateset") return T::kStateset;
  if (text == "gaugehistogram") return T::kGaugeHistogram;
  return std::nullopt;
}

class Parser {
 public:
  Parser(std::string_view text, ExpositionTextFormat format)
      : text_(text), om_(format == ExpositionTextFormat::kOpenMetrics100) {
    out_.format = format;
  }

  Result<ParsedExposition> run();

 private:
  struct FamilyState {
    bool type_set = false;
    bool help_set = false;
    bool unit_set = false;
  };

  bool parse_line(std::string_view line);
  // Metadata is one "# HELP|TYPE|UNIT name rest" line; *_col are 1-based columns.
  struct Metadata {
    std::string_view keyword;
    std::string_view name;
    std::string_view rest;
    std::size_t keyword_col = 0;
    std::size_t name_col = 0;
    std::size_t rest_col = 0;
  };

  bool parse_metadata(std::string_view line, std::size_t keyword_end, std::string_view keyword);
  bool apply_metadata(const Metadata& meta);
  bool apply_unit(const Metadata& meta, ParsedFamily& target);
  bool parse_sample(std::string_view line);
  bool parse_labels(std::string_view line, std::size_t& pos, std::vector<ParsedLabel>& labels);
  bool check_many_label_names();
  bool parse_label_value(std::string_view line, std::size_t& pos, std::string& value);
  bool parse_om_tail(std::string_view line, std::size_t pos, ParsedSample& sample);
  bool parse_om_timestamp(std::string_view line, std::size_t begin, std::size_t end,
                          std::optional<std::int64_t>& out);
  bool family_for_sample(std::string_view name, std::size_t column, std::size_t& family);
  std::size_t add_family(std::string_view name, ParsedMetricType type);
  std::size_t find_family_index(std::string_view name) const;
  bool skip_blanks(std::string_view line, std::size_t& pos) const;
  bool expect_om_space(std::string_view line, std::size_t& pos, const char* what);
  bool fail(std::size_t column, std::string cause);
  bool fail_at_end_of_line(std::string_view line, std::string cause) { return fail(line.size() + 1, std::move(cause)); }

  std::string_view text_;
  bool om_;
  ParsedExposition out_;
  std::vector<FamilyState> states_;
  // Keys view family names in text_, which outlives the parse (ParsedFamily::name may move).
  std::unordered_map<std::string_view, std::size_t> index_;
  std::size_t current_ = kNone;
  std::size_t line_no_ = 0;
  std::size_t error_line_ = 0;
  std::size_t error_column_ = 0;
  std::string error_cause_;
  // Names and columns of the labels being parsed; reused so a sample line allocates nothing here.
  std::vector<std::pair<std::string_view, std::size_t>> label_names_;
};

bool Parser::fail(std::size_t column, std::string cause) {
  error_line_ = line_no_;
  error_column_ = column;
  error_cause_ = std::move(cause);
  return false;
}

bool Parser::skip_blanks(std::string_view line, std::size_t& pos) const {
  const std::size_t start = pos;
  while (pos < line.size() && is_blank(line[pos])) ++pos;
  return pos != start;
}

bool Parser::expect_om_space(std::string_view line, std::size_t& pos, const char* what) {
  if (pos < line.size() && line[pos] == ' ') {
    ++pos;
    if (pos < line.size() && line[pos] != ' ') return true;
    if (pos >= line.size()) return fail(pos + 1, std::string("expected ") + what + " after the space");
    return fail(pos + 1, "unexpected second space (OpenMetrics separates tokens by one space)");
  }
  if (pos >= line.size()) return fail(pos + 1, std::string("expected a space and ") + what);
  return fail(pos + 1, std::string("expected a space before ") + what + ", found " +
                           printable(line.substr(pos, 1)));
}

Result<ParsedExposition> Parser::run() {
  auto error = [&]() {
    return make_error("cannot parse exposition at line " + std::to_string(error_line_) + ", column " +
                      std::to_string(error_column_) + ": " + error_cause_);
  };
  if (auto bad = detail::first_invalid_utf8(text_)) {
    const std::string_view before = text_.substr(0, *bad);
    line_no_ = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
    fail(*bad - line_start + 1, "invalid UTF-8 byte " + printable(text_.substr(*bad, 1)));
    return error();
  }
  std::size_t pos = 0;
  bool saw_eof = false;
  while (pos < text_.size()) {
    ++line_no_;
    const void* nl = std::memchr(text_.data() + pos, '\n', text_.size() - pos);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) : text_.size();
    const std::string_view line = text_.substr(pos, end - pos);
    pos = nl ? end + 1 : end;
    if (om_ && line == "# EOF") {
      saw_eof = true;
      if (pos != text_.size()) {
        ++line_no_;
        fail(1, "unexpected content after # EOF");
        return error();
      }
      break;
    }
    if (!nl) {
      fail_at_end_of_line(line, om_ ? "unexpected end of input: the exposition must end with # EOF"
                                    : "unexpected end of input: the last line must end with a newline");
      return error();
    }
    if (!parse_line(line)) return error();
  }
  if (om_ && !saw_eof) {
    ++line_no_;
    fail(1, "unexpected end of input: missing # EOF");
    return error();
  }
  return std::move(out_);
}

bool Parser::parse_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    return fail(line.size(), "carriage return before the newline (CRLF line ends are not allowed)");
  }
  std::size_t pos = 0;
  if (!om_) skip_blanks(line, pos);
  if (pos == line.size()) {
    if (om_) return fail(1, "empty line (not allowed in OpenMetrics)");
    return true;
  }
  if (line[pos] != '#') return parse_sample(line);
  // Comment or metadata: "# HELP", "# TYPE" (and "# UNIT" in OpenMetrics).
  std::size_t p = pos + 1;
  const bool spaced = om_ ? (p < line.size() && line[p] == ' ' && (++p, true)) : skip_blanks(line, p);
  std::size_t keyword_end = p;
  while (keyword_end < line.size() && !is_blank(line[keyword_end])) ++keyword_end;
  const std::string_view keyword = line.substr(p, keyword_end - p);
  const bool is_metadata = spaced && (keyword == "HELP" || keyword == "TYPE" || (om_ && keyword == "UNIT"));
  if (is_metadata) return parse_metadata(line, keyword_end, keyword);
  if (om_) return fail(1, "unexpected comment (OpenMetrics allows only # HELP, # TYPE, # UNIT and # EOF)");
  return true;  // 0.0.4: any other comment is ignored
}

std::size_t Parser::find_family_index(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? kNone : it->second;
}

std::size_t Parser::add_family(std::string_view name, ParsedMetricType type) {
  ParsedFamily family;
  family.name.assign(name);
  family.type = type;
  family.line = line_no_;
  out_.families.push_back(std::move(family));
  states_.emplace_back();
  const std::size_t index = out_.families.size() - 1;
  index_.emplace(name, index);
  return index;
}

bool Parser::parse_metadata(std::string_view line, std::size_t keyword_end, std::string_view keyword) {
  Metadata meta;
  meta.keyword = keyword;
  meta.keyword_col = keyword_end - keyword.size() + 1;
  std::size_t pos = keyword_end;
  if (om_) {
    if (!expect_om_space(line, pos, "a metric name")) return false;
  } else if (!skip_blanks(line, pos)) {
    return fail(pos + 1, "expected a metric name after # " + std::string(keyword));
  }
  const std::size_t name_begin = pos;
  if (pos < line.size() && detail::is_metric_name_start(line[pos])) {
    while (pos < line.size() && detail::is_metric_name_char(line[pos])) ++pos;
  }
  if (pos == name_begin) return fail(pos + 1, "expected a metric name after # " + std::string(keyword));
  meta.name = line.substr(name_begin, pos - name_begin);
  meta.name_col = name_begin + 1;
  if (pos < line.size() && !is_blank(line[pos])) {
    return fail(pos + 1, "invalid character " + printable(line.substr(pos, 1)) + " in metric name");
  }
  // Rest of the line after one separator (0.0.4: any blanks) is the HELP text, type or unit.
  if (pos < line.size()) {
    if (om_) {
      if (line[pos] != ' ') return fail(pos + 1, "expected a space after the metric name");
      ++pos;
    } else {
      skip_blanks(line, pos);
    }
    meta.rest = line.substr(pos);
  }
  meta.rest_col = pos + 1;
  return apply_metadata(meta);
}

bool Parser::apply_metadata(const Metadata& meta) {
  std::size_t family = find_family_index(meta.name);
  if (family != kNone && family != current_) {
    if (om_) {
      return fail(meta.name_col, "metadata for family " + printable(meta.name) +
                                     " after other families (families must not interleave)");
    }
    out_.families[family].contiguous = false;
  }
  if (family == kNone) family = add_family(meta.name, ParsedMetricType::kUnknown);
  current_ = family;
  FamilyState& state = states_[family];
  ParsedFamily& target = out_.families[family];
  const std::string keyword(meta.keyword);
  if (om_ && !target.samples.empty()) {
    return fail(meta.keyword_col, "# " + keyword + " for family " + printable(meta.name) + " after its samples");
  }
  bool& seen = keyword == "TYPE" ? state.type_set : keyword == "HELP" ? state.help_set : state.unit_set;
  if (seen) return fail(meta.keyword_col, "second " + keyword + " line for " + printable(meta.name));
  seen = true;
  if (keyword == "TYPE") {
    if (!target.samples.empty()) return fail(meta.keyword_col, "TYPE line for " + printable(meta.name) + " after its samples");
    std::string_view text = meta.rest;
    if (!om_) while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    const auto type = type_from_text(text, om_);
    if (!type) return fail(meta.rest_col, "unknown metric type " + printable(text));
    target.type = *type;
    return true;
  }
  if (keyword == "HELP") {
    const auto bad = detail::unescape(meta.rest, om_ ? EscapeSet::kLabelValue : EscapeSet::kHelp004, target.help);
    if (bad) {
      return fail(meta.rest_col + *bad, "invalid escape sequence " + printable(meta.rest.substr(*bad, 2)) + " in HELP");
    }
    return true;
  }
  return apply_unit(meta, target);  // UNIT exists only in OpenMetrics
}

bool Parser::apply_unit(const Metadata& meta, ParsedFamily& target) {
  const std::string_view unit = meta.rest;
  const std::string_view name = meta.name;
  for (std::size_t i = 0; i < unit.size(); ++i) {
    if (!detail::is_metric_name_char(unit[i])) return fail(meta.rest_col + i, "invalid character in unit " + printable(unit));
  }
  if (!unit.empty() && (name.size() <= unit.size() || !name.ends_with(unit) || name[name.size() - unit.size() - 1] != '_')) {
    return fail(meta.rest_col, "unit " + printable(unit) + " is not the suffix of metric name " + printable(name));
  }
  target.unit.assign(unit);
  return true;
}

bool Parser::family_for_sample(std::string_view name, std::size_t column, std::size_t& family) {
  if (current_ != kNone) {
    const ParsedFamily& cur = out_.families[current_];
    if (name.starts_with(cur.name) && suffix_allowed(cur.type, name.substr(cur.name.size()), om_) &&
        (om_ || name.size() == cur.name.size() || find_family_index(name) == kNone)) {
      family = current_;
      return true;
    }
  }
  // Not the current family: look it up the way expfmt does (exact name, then the base of a
  // histogram/summary suffix); in OpenMetrics any hit means the family was interrupted.
  std::size_t found = find_family_index(name);
  if (found == kNone) {
    for (std::string_view suffix : kSuffixes) {
      if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
      const std::size_t base = find_family_index(name.substr(0, name.size() - suffix.size()));
      if (base != kNone && suffix_allowed(out_.families[base].type, suffix, om_)) {
        found = base;
        break;
      }
    }
  }
  if (found != kNone && om_) {
    const ParsedFamily& hit = out_.families[found];
    if (found == current_) {
      return fail(column, "sample name " + printable(name) + " does not fit " + std::string(to_string(hit.type)) +
                              " family " + printable(hit.name));
    }
    return fail(column, "sample " + printable(name) + " of family " + printable(hit.name) +
                            " after other families (families must not interleave)");
  }
  if (found != kNone) {
    if (found != current_) out_.families[found].contiguous = false;
  } else {
    found = add_family(name, ParsedMetricType::kUnknown);
  }
  current_ = found;
  family = found;
  return true;
}

// parse_sample reads "name[{labels}] value [timestamp]" (+ OpenMetrics tail). One function on
// purpose: the grammar reads top to bottom and every branch reports its own column.
bool Parser::parse_sample(std::string_view line) {
  std::size_t pos = 0;
  if (!om_) skip_blanks(line, pos);
  const std::size_t name_begin = pos;
  if (pos < line.size() && detail::is_metric_name_start(line[pos])) {
    while (pos < line.size() && detail::is_metric_name_char(line[pos])) ++pos;
  }
  if (pos == name_begin) return fail(pos + 1, "expected a metric name, found " + printable(line.substr(pos, 1)));
  const std::string_view name = line.substr(name_begin, pos - name_begin);
  ParsedSample sample;
  sample.line = line_no_;
  // 0.0.4 (expfmt) allows blanks around the labels and none between '}' and the value.
  bool separated = !om_ && skip_blanks(line, pos);
  if (pos < line.size() && line[pos] == '{') {
    if (!parse_labels(line, pos, sample.labels)) return false;
    separated = true;
  }
  // Value.
  if (om_) {
    if (!expect_om_space(line, pos, "a value")) return false;
  } else {
    skip_blanks(line, pos);
    if (pos >= line.size()) return fail(pos + 1, "expected a value after the metric name and labels");
    if (!separated) {
      return fail(pos + 1, "invalid character " + printable(line.substr(pos, 1)) + " in metric name");
    }
  }
  const std::size_t value_begin = pos;
  while (pos < line.size() && !is_blank(line[pos])) ++pos;
  const std::string_view value_text = line.substr(value_begin, pos - value_begin);
  const auto value = parse_exposition_float(value_text);
  if (!value) return fail(value_begin + 1, "invalid value " + printable(value_text));
  sample.value = *value;
  if (om_) {
    if (!parse_om_tail(line, pos, sample)) return false;
  } else {
    skip_blanks(line, pos);
    if (pos < line.size()) {
      const std::size_t ts_begin = pos;
      if (line[pos] == '#') return fail(pos + 1, "unexpected '#' after the value (exemplars exist only in OpenMetrics)");
      while (pos < line.size() && !is_blank(line[pos])) ++pos;
      const auto ts = detail::parse_int64(line.substr(ts_begin, pos - ts_begin));
      if (!ts) return fail(ts_begin + 1, "invalid timestamp " + printable(line.substr(ts_begin, pos - ts_begin)) + " (0.0.4 timestamps are integer milliseconds)");
      sample.timestamp_ms = *ts;
      skip_blanks(line, pos);
      if (pos < line.size()) return fail(pos + 1, "unexpected text after the timestamp");
    }
  }
  std::size_t family = kNone;
  if (!family_for_sample(name, name_begin + 1, family)) return false;
  sample.name.assign(name);
  out_.families[family].samples.push_back(std::move(sample));
  return true;
}

// parse_om_tail reads what may follow an OpenMetrics value: " timestamp" and/or " # {labels} value [ts]".
bool Parser::parse_om_tail(std::string_view line, std::size_t pos, ParsedSample& sample) {
  if (pos >= line.size()) return true;
  if (!expect_om_space(line, pos, "a timestamp or exemplar")) return false;
  if (line[pos] != '#') {
    const std::size_t ts_begin = pos;
    while (pos < line.size() && line[pos] != ' ') ++pos;
    if (!parse_om_timestamp(line, ts_begin, pos, sample.timestamp_ms)) return false;
    if (pos >= line.size()) return true;
    if (!expect_om_space(line, pos, "an exemplar")) return false;
    if (line[pos] != '#') return fail(pos + 1, "unexpected text after the timestamp");
  }
  // Exemplar: "# {labels} value [timestamp]".
  ++pos;
  if (!expect_om_space(line, pos, "exemplar labels")) return false;
  if (line[pos] != '{') return fail(pos + 1, "expected '{' to open the exemplar labels");
  ParsedExemplar exemplar;
  const std::size_t labels_begin = pos;
  if (!parse_labels(line, pos, exemplar.labels)) return false;
  std::size_t code_points = 0;
  for (const ParsedLabel& label : exemplar.labels) code_points += count_code_points(label.name) + count_code_points(label.value);
  if (code_points > kMaxExemplarCodePoints) {
    return fail(labels_begin + 1, "exemplar labels have " + std::to_string(code_points) + " code points, over the limit of 128");
  }
  if (!expect_om_space(line, pos, "an exemplar value")) return false;
  const std::size_t value_begin = pos;
  while (pos < line.size() && line[pos] != ' ') ++pos;
  const std::string_view value_text = line.substr(value_begin, pos - value_begin);
  const auto value = parse_exposition_float(value_text);
  if (!value) return fail(value_begin + 1, "invalid exemplar value " + printable(value_text));
  exemplar.value = *value;
  if (pos < line.size()) {
    if (!expect_om_space(line, pos, "an exemplar timestamp")) return false;
    const std::size_t ts_begin = pos;
    while (pos < line.size() && line[pos] != ' ') ++pos;
    if (!parse_om_timestamp(line, ts_begin, pos, exemplar.timestamp_ms)) return false;
    if (pos < line.size()) return fail(pos + 1, "unexpected text after the exemplar");
  }
  sample.exemplar = std::move(exemplar);
  return true;
}

bool Parser::parse_om_timestamp(std::string_view line, std::size_t begin, std::size_t end,
                                std::optional<std::int64_t>& out) {
  const std::string_view text = line.substr(begin, end - begin);
  const auto seconds = parse_exposition_float(text);
  // 9.2e15 s is the int64 millisecond range; NaN and Inf are refused like Prometheus does.
  if (!seconds || !std::isfinite(*seconds) || std::fabs(*seconds) >= 9.2e15) {
    return fail(begin + 1, "invalid timestamp " + printable(text) + " (OpenMetrics timestamps are seconds)");
  }
  out = static_cast<std::int64_t>(*seconds * 1000.0);
  return true;
}

// parse_labels reads "{name="value",...}" from pos (at '{') to after '}'. Shared by samples and
// exemplars; one loop so that the 0.0.4 blank tolerance and OpenMetrics strictness sit side by side.
bool Parser::parse_labels(std::string_view line, std::size_t& pos, std::vector<ParsedLabel>& labels) {
  ++pos;  // '{'
  label_names_.clear();
  bool after_comma = false;
  while (true) {
    if (!om_) skip_blanks(line, pos);
    if (pos >= line.size()) return fail_at_end_of_line(line, "unexpected end of line inside labels");
    if (line[pos] == '}') {
      if (om_ && after_comma) return fail(pos + 1, "expected a label name after ','");
      ++pos;
      return labels.size() <= kQuadraticLabelCheck || check_many_label_names();
    }
    const std::size_t name_begin = pos;
    if (detail::is_label_name_start(line[pos])) {
      while (pos < line.size() && detail::is_label_name_char(line[pos])) ++pos;
    }
    if (pos == name_begin) return fail(pos + 1, "expected a label name, found " + printable(line.substr(pos, 1)));
    const std::string_view name = line.substr(name_begin, pos - name_begin);
    if (name == "__name__") return fail(name_begin + 1, "label name \"__name__\" is reserved");
    label_names_.emplace_back(name, name_begin + 1);
    if (labels.size() < kQuadraticLabelCheck) {
      for (const ParsedLabel& other : labels) {
        if (other.name == name) return fail(name_begin + 1, "duplicate label name " + printable(name));
      }
    }
    if (!om_) skip_blanks(line, pos);
    if (pos >= line.size() || line[pos] != '=') {
      if (pos >= line.size()) return fail_at_end_of_line(line, "expected '=' after label name");
      return fail(pos + 1, "expected '=' after label name, found " + printable(line.substr(pos, 1)));
    }
    ++pos;
    if (!om_) skip_blanks(line, pos);
    if (pos >= line.size() || line[pos] != '"') {
      if (pos >= line.size()) return fail_at_end_of_line(line, "expected '\"' to open the label value");
      return fail(pos + 1, "expected '\"' to open the label value, found " + printable(line.substr(pos, 1)));
    }
    ParsedLabel& label = labels.emplace_back();
    label.name.assign(name);
    if (!parse_label_value(line, pos, label.value)) return false;
    if (!om_) skip_blanks(line, pos);
    if (pos >= line.size()) return fail_at_end_of_line(line, "unexpected end of line inside labels");
    if (line[pos] == ',') {
      ++pos;
      after_comma = true;
    } else if (line[pos] != '}') {
      return fail(pos + 1, "expected ',' or '}' after a label value, found " + printable(line.substr(pos, 1)));
    } else {
      after_comma = false;
    }
  }
}

bool Parser::check_many_label_names() {
  std::sort(label_names_.begin(), label_names_.end());
  std::size_t column = kNone;
  for (std::size_t i = 1; i < label_names_.size(); ++i) {
    if (label_names_[i].first == label_names_[i - 1].first) column = std::min(column, label_names_[i].second);
  }
  if (column == kNone) return true;
  for (const auto& [name, col] : label_names_) {
    if (col == column) return fail(column, "duplicate label name " + printable(name));
  }
  return true;  // unreachable: column came from label_names_
}

bool Parser::parse_label_value(std::string_view line, std::size_t& pos, std::string& value) {
  const std::size_t begin = ++pos;  // after the opening quote
  while (pos < line.size() && line[pos] != '"') {
    pos += line[pos] == '\\' ? 2 : 1;  // skip the escaped byte; unescape() validates it below
  }
  if (pos >= line.size()) return fail_at_end_of_line(line, "unterminated label value");
  const std::string_view raw = line.substr(begin, pos - begin);
  if (auto bad = detail::unescape(raw, EscapeSet::kLabelValue, value)) {
    return fail(begin + *bad + 1, "invalid escape sequence " + printable(raw.substr(*bad, 2)) + " in label value");
  }
  ++pos;  // closing quote
  return true;
}

}  // namespace

Result<ParsedExposition> parse_exposition(std::string_view text, ExpositionTextFormat format) {
  Parser parser(text, format);
  return parser.run();
}

}  // namespace inferscope::metrics
