// File: trace_examples.cpp
#include "doctor/trace_examples.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/duration_text.h"
#include "doctor/cause_spec.h"
#include "promapi/prometheus_client.h"

namespace inferscope::doctor {
namespace {

constexpr int kListingLimit = 1000;  // up's maximum page

// longest_stage returns the name of the trace's longest stage ("" when it has none).
std::string_view longest_stage(const TraceListing& t) {
  std::string_view best;
  double longest = -1;
  for (const auto& [stage, seconds] : t.stages) {
    if (seconds > longest) {
      longest = seconds;
      best = stage;
    }
  }
  return best;
}

double baseline_mean(const Diagnosis& d, const std::string& stage) {
  for (const StageRow& row : d.stages) {
    if (row.stage == stage) return row.baseline.mean;
  }
  return kNaN;
}

TraceExample example_of(const TraceListing& t) { return {t.trace_id, t.duration_s, t.stages}; }

}  // namespace

Result<std::vector<TraceListing>> parse_trace_listing(std::string_view body) {
  const auto fail = [](const std::string& cause) { return make_error("cannot read the trace list: " + cause); };
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("traces") || !j["traces"].is_array()) {
    return fail("not a JSON object with a \"traces\" array");
  }
  std::vector<TraceListing> out;
  for (const nlohmann::json& row : j["traces"]) {
    if (!row.is_object() || !row.contains("trace_id") || !row["trace_id"].is_string() || !row.contains("start") ||
        !row["start"].is_number() || !row.contains("duration_s") || !row["duration_s"].is_number()) {
      return fail("a row without trace_id, start or duration_s");
    }
    TraceListing t;
    t.trace_id = row["trace_id"].get<std::string>();
    t.job = row.value("job", "");
    t.model = row.value("model", "");
    t.start = row["start"].get<double>();
    t.duration_s = row["duration_s"].get<double>();
    t.failed = row.value("status", "") == "error";
    if (row.contains("stages") && row["stages"].is_object()) {
      for (const auto& [stage, seconds] : row["stages"].items()) {
        if (seconds.is_number()) t.stages[stage] = seconds.get<double>();
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<TraceListing>> fetch_trace_listing(const std::string& api_url, double since,
                                                      const std::string& model, const net::TlsOptions& tls,
                                                      std::string_view where) {
  auto client = net::BlockingClient::create(api_url, {.tls = tls}, where);
  if (!client) return client.error();
  std::string target = "/api/traces?since=" + common::format_printf("%.3f", since) +
                       "&limit=" + std::to_string(kListingLimit);
  if (!model.empty()) target += "&model=" + promapi::url_encode(model);
  auto reply = client->request("GET", target);
  if (!reply) return reply.error();
  if (reply->status != 200) {
    return make_error("cannot GET " + api_url + "/api/traces: HTTP " + std::to_string(reply->status));
  }
  return parse_trace_listing(reply->body);
}

void attach_examples(Diagnosis& d, const std::vector<TraceListing>& traces) {
  const double start = d.snapshot.incident_start;
  const double end = d.snapshot.incident_end;
  std::vector<const TraceListing*> in_window;
  for (const TraceListing& t : traces) {
    if (!(t.start >= start && t.start <= end)) continue;
    in_window.push_back(&t);
  }
  for (Finding& f : d.findings) {
    f.examples.clear();
    std::vector<std::pair<double, const TraceListing*>> shown;  // (how strongly it shows, trace)
    if (!f.stage.empty()) {
      const double usual = baseline_mean(d, f.stage);
      for (const TraceListing* t : in_window) {
        const auto stage = t->stages.find(f.stage);
        if (stage == t->stages.end() || longest_stage(*t) != f.stage) continue;
        if (!std::isnan(usual) && !(stage->second > usual)) continue;  // its stage did not grow
        shown.emplace_back(stage->second, t);
      }
    } else if (const CauseSpec* cause = spec_named(f.cause); cause && cause->examples == ExampleRequests::kFailed) {
      for (const TraceListing* t : in_window) {
        if (t->failed) shown.emplace_back(t->duration_s, t);
      }
    }
    std::stable_sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < shown.size() && i < kMaxExamples; ++i) f.examples.push_back(example_of(*shown[i].second));
  }
}

void add_trace_examples(Diagnosis& d, const std::string& api_url, const std::string& page_url,
                        const std::string& model, const net::TlsOptions& tls) {
  if (d.findings.empty() || std::isnan(d.snapshot.incident_start)) return;
  auto listing = fetch_trace_listing(api_url, d.snapshot.incident_start, model, tls);
  if (!listing) {
    d.notes.push_back("example traces unavailable: " + listing.error().message);
    return;
  }
  attach_examples(d, *listing);
  std::string_view base = page_url;
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  d.trace_page_url = std::string(base);
}

}  // namespace inferscope::doctor
