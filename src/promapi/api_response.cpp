// Parsing of the Prometheus HTTP API's JSON (nlohmann-json: these answers are small and off the
// hot path; simdjson would buy nothing measurable next to the HTTP round trip).
#include "promapi/api_response.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/prom_duration.h"
#include "inferscope/metrics/exposition_parser.h"

namespace inferscope::promapi {
namespace {

using nlohmann::json;

Error fail(std::string cause) { return make_error("cannot parse Prometheus response: " + cause); }

// parse_envelope checks the JSON and the status field and returns "data".
Result<json> parse_envelope(std::string_view body) {
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return fail("body is not JSON");
  if (!doc.is_object()) return fail("body is not a JSON object");
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_string()) return fail("no status field");
  if (*status != "success") {
    std::string type = doc.value("errorType", std::string("unknown"));
    std::string message = doc.contains("error") && doc["error"].is_string() ? doc["error"].get<std::string>()
                                                                             : std::string("no message");
    return fail("server answered " + type + ": " + message);
  }
  auto data = doc.find("data");
  if (data == doc.end()) return fail("no data field");
  json out = std::move(*data);
  if (doc.contains("warnings") && doc["warnings"].is_array()) out["__warnings"] = doc["warnings"];
  return out;
}

Result<Labels> parse_labels(const json& object) {
  if (!object.is_object()) return fail("label set is not an object");
  Labels labels;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!it.value().is_string()) return fail("label " + it.key() + " is not a string");
    labels.emplace(it.key(), it.value().get<std::string>());
  }
  return labels;
}

Result<Point> parse_point(const json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string())
    return fail("sample is not [time, \"value\"]");
  auto value = parse_sample_value(pair[1].get_ref<const std::string&>());
  if (!value) return fail("bad sample value " + pair[1].get<std::string>());
  return Point{pair[0].get<double>(), *value};
}

Result<Series> parse_series(const json& item, bool matrix) {
  if (!item.is_object()) return fail("result item is not an object");
  Series series;
  if (auto metric = item.find("metric"); metric != item.end()) {
    auto labels = parse_labels(*metric);
    if (!labels) return labels.error();
    series.labels = std::move(*labels);
  }
  if (matrix) {
    auto values = item.find("values");
    if (values == item.end() || !values->is_array()) return fail("matrix item has no values array");
    series.points.reserve(values->size());
    for (const auto& pair : *values) {
      auto point = parse_point(pair);
      if (!point) return point.error();
      series.points.push_back(*point);
    }
  } else {
    auto value = item.find("value");
    if (value == item.end()) return fail("vector item has no value");
    auto point = parse_point(*value);
    if (!point) return point.error();
    series.points.push_back(*point);
  }
  return series;
}

}  // namespace

std::optional<double> parse_sample_value(std::string_view text) noexcept {
  return metrics::parse_exposition_float(text);
}

Result<QueryResult> parse_query_response(std::string_view body) {
  auto data = parse_envelope(body);
  if (!data) return data.error();
  if (!data->is_object()) return fail("data is not an object");
  QueryResult out;
  auto type = data->find("resultType");
  if (type == data->end() || !type->is_string()) return fail("no resultType");
  out.result_type = type->get<std::string>();
  auto result = data->find("result");
  if (result == data->end()) return fail("no result");
  if (out.result_type == "vector" || out.result_type == "matrix") {
    if (!result->is_array()) return fail("result is not an array");
    out.series.reserve(result->size());
    for (const auto& item : *result) {
      auto series = parse_series(item, out.result_type == "matrix");
      if (!series) return series.error();
      out.series.push_back(std::move(*series));
    }
  } else if (out.result_type == "scalar" || out.result_type == "string") {
    if (!result->is_array() || result->size() != 2 || !(*result)[0].is_number() || !(*result)[1].is_string())
      return fail("scalar result is not [time, \"value\"]");
    Series series;
    double value = std::numeric_limits<double>::quiet_NaN();
    if (out.result_type == "scalar") {
      auto parsed = parse_sample_value((*result)[1].get_ref<const std::string&>());
      if (!parsed) return fail("bad scalar value");
      value = *parsed;
    }
    series.points.push_back({(*result)[0].get<double>(), value});
    out.series.push_back(std::move(series));
  } else {
    return fail("unknown resultType " + out.result_type);
  }
  if (auto warnings = data->find("__warnings"); warnings != data->end()) {
    for (const auto& w : *warnings)
      if (w.is_string()) out.warnings.push_back(w.get<std::string>());
  }
  return out;
}

Result<std::vector<Labels>> parse_series_response(std::string_view body) {
  auto data = parse_envelope(body);
  if (!data) return data.error();
  if (!data->is_array()) return fail("series data is not an array");
  std::vector<Labels> out;
  out.reserve(data->size());
  for (const auto& item : *data) {
    auto labels = parse_labels(item);
    if (!labels) return labels.error();
    out.push_back(std::move(*labels));
  }
  return out;
}

Result<std::vector<AlertInfo>> parse_alerts_response(std::string_view body) {
  auto data = parse_envelope(body);
  if (!data) return data.error();
  if (!data->is_object()) return fail("alerts data is not an object");
  std::vector<AlertInfo> out;
  auto alerts = data->find("alerts");
  if (alerts == data->end()) return fail("no alerts field");
  if (!alerts->is_array()) return fail("alerts is not an array");
  for (const auto& item : *alerts) {
    if (!item.is_object()) return fail("alert is not an object");
    AlertInfo alert;
    for (auto [key, target] : {std::pair{"labels", &alert.labels}, std::pair{"annotations", &alert.annotations}}) {
      auto it = item.find(key);
      if (it == item.end()) continue;
      auto parsed = parse_labels(*it);
      if (!parsed) return parsed.error();
      *target = std::move(*parsed);
    }
    auto text = [&](const char* key) {
      auto it = item.find(key);
      return it != item.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    alert.state = text("state");
    alert.active_at = text("activeAt");
    alert.value = text("value");
    out.push_back(std::move(alert));
  }
  return out;
}

Result<std::vector<ExemplarSeries>> parse_exemplars_response(std::string_view body) {
  auto data = parse_envelope(body);
  if (!data) return data.error();
  std::vector<ExemplarSeries> out;
  if (data->is_null()) return out;  // Prometheus answers null when no series matched
  if (!data->is_array()) return fail("exemplars data is not an array");
  for (const auto& item : *data) {
    if (!item.is_object()) return fail("exemplar series is not an object");
    ExemplarSeries series;
    if (auto labels = item.find("seriesLabels"); labels != item.end()) {
      auto parsed = parse_labels(*labels);
      if (!parsed) return parsed.error();
      series.series_labels = std::move(*parsed);
    }
    auto list = item.find("exemplars");
    if (list == item.end() || !list->is_array()) return fail("exemplars is not an array");
    for (const auto& e : *list) {
      if (!e.is_object()) return fail("exemplar is not an object");
      Exemplar exemplar;
      if (auto labels = e.find("labels"); labels != e.end()) {
        auto parsed = parse_labels(*labels);
        if (!parsed) return parsed.error();
        exemplar.labels = std::move(*parsed);
      }
      auto value = e.find("value");
      auto time = e.find("timestamp");
      if (value == e.end() || !value->is_string()) return fail("exemplar value is not a string");
      if (time == e.end() || !time->is_number()) return fail("exemplar timestamp is not a number");
      auto parsed_value = parse_sample_value(value->get_ref<const std::string&>());
      if (!parsed_value) return fail("bad exemplar value " + value->get<std::string>());
      exemplar.value = *parsed_value;
      exemplar.time = time->get<double>();
      series.exemplars.push_back(std::move(exemplar));
    }
    out.push_back(std::move(series));
  }
  return out;
}

Result<std::vector<TargetHealth>> parse_targets_response(std::string_view body) {
  auto data = parse_envelope(body);
  if (!data) return data.error();
  if (!data->is_object()) return fail("targets data is not an object");
  std::vector<TargetHealth> out;
  auto active = data->find("activeTargets");
  if (active == data->end()) return out;
  if (!active->is_array()) return fail("activeTargets is not an array");
  for (const auto& item : *active) {
    if (!item.is_object()) return fail("target is not an object");
    TargetHealth target;
    if (auto labels = item.find("labels"); labels != item.end()) {
      auto parsed = parse_labels(*labels);
      if (!parsed) return parsed.error();
      target.labels = std::move(*parsed);
    }
    auto text = [&](const char* key) {
      auto it = item.find(key);
      return it != item.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    target.scrape_url = text("scrapeUrl");
    target.health = text("health");
    target.last_error = text("lastError");
    target.last_scrape = text("lastScrape");
    if (auto interval = common::parse_prom_duration(text("scrapeInterval"))) {
      target.scrape_interval_s = static_cast<double>(interval->count()) / 1000;
    }
    out.push_back(std::move(target));
  }
  return out;
}

}  // namespace inferscope::promapi
