#include "doctor/diagnosis_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "common/duration_text.h"

namespace inferscope::doctor {
namespace {

std::string value(double v, const std::string& unit) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return "inf";
  if (unit == "s" || unit == "s/token") return common::format_seconds_readable(v);
  if (unit == "ratio") return common::format_printf("%.1f%%", v * 100);
  std::string n = common::format_number_readable(v);
  return unit.empty() || unit == "absent" || unit == "renamed" ? n : n + " " + unit;
}

nlohmann::json format_json_number(double v) {
  if (std::isnan(v) || std::isinf(v)) return nullptr;
  return v;
}

nlohmann::json window_json(const WindowStat& w, bool per_request) {
  nlohmann::json j = {{"mean", format_json_number(w.mean)}, {"p50", format_json_number(w.p50)}, {"p95", format_json_number(w.p95)},
                      {"p99", format_json_number(w.p99)}, {"count", format_json_number(w.count)}};
  if (per_request) j["per_request"] = format_json_number(w.per_request);
  return j;
}

// where_json: null when not localized, else only the axes it is localized on.
nlohmann::json where_json(const Where& w) {
  if (w.empty()) return nullptr;
  nlohmann::json j = nlohmann::json::object();
  if (!w.job.empty()) j["job"] = w.job;
  if (!w.instance.empty()) j["instance"] = w.instance;
  if (!w.model.empty()) j["model"] = w.model;
  if (!w.engine.empty()) j["engine"] = w.engine;
  if (!w.pool.empty()) j["pool"] = w.pool;
  if (!w.endpoint.empty()) j["endpoint"] = w.endpoint;
  return j;
}

// where_text: "job=serve instance=127.0.0.1:8001 model=sim-a", the axes it is localized on.
std::string where_text(const Where& w) {
  std::string out;
  auto add = [&](const char* key, const std::string& v) {
    if (v.empty()) return;
    if (!out.empty()) out += ' ';
    out.append(key).append("=").append(v);
  };
  add("job", w.job);
  add("instance", w.instance);
  add("model", w.model);
  add("engine", w.engine);
  add("pool", w.pool);
  add("endpoint", w.endpoint);
  return out;
}

nlohmann::json examples_json(const std::vector<TraceExample>& examples) {
  nlohmann::json out = nlohmann::json::array();
  for (const TraceExample& e : examples) {
    nlohmann::json stages = nlohmann::json::object();
    for (const auto& [stage, seconds] : e.stages) stages[stage] = format_json_number(seconds);
    out.push_back({{"trace_id", e.trace_id}, {"duration_s", format_json_number(e.duration_s)}, {"stages", stages}});
  }
  return out;
}

// stages_text: "decode 3.90 s, prefill 120 ms, queue 2 ms", longest first.
std::string stages_text(const TraceExample& e) {
  std::vector<std::pair<std::string, double>> order(e.stages.begin(), e.stages.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [stage, seconds] : order) out += (out.empty() ? "" : ", ") + stage + " " + value(seconds, "s");
  return out;
}

// pad left-aligns a cell in its column; a value as wide as the column still gets one space, so it
// never runs into the next one ("upstream_connect 24 us").
std::string pad(std::string s, std::size_t width) {
  s.append(s.size() < width ? width - s.size() : 1, ' ');
  return s;
}

// share_text prints a share in whole percent; a share that rounds to zero is "0%", not "-0%".
std::string share_text(double share) {
  const double rounded = std::round(share * 100);
  return common::format_printf("%.0f%%", rounded == 0 ? 0.0 : rounded);
}

}  // namespace

std::string format_time(double t) {
  if (std::isnan(t)) return "";
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json to_json(const Diagnosis& d) {
  const Snapshot& s = d.snapshot;
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;
  j["verdict"] = d.verdict;
  j["headline"] = d.headline;
  j["source"] = s.source;
  j["dialect"] = s.dialect;
  j["window"] = {{"start", format_time(s.incident_start)}, {"end", format_time(s.incident_end)},
                 {"seconds", format_json_number(s.incident_end - s.incident_start)}};
  j["baseline"] = {{"start", format_time(s.baseline_start)}, {"end", format_time(s.baseline_end)},
                   {"seconds", format_json_number(s.baseline_end - s.baseline_start)}};
  j["e2e"] = {{"baseline", window_json(d.e2e_baseline, false)},
              {"incident", window_json(d.e2e_incident, false)},
              {"change_seconds", format_json_number(d.e2e_change_s)},
              {"noise_seconds", format_json_number(d.e2e_noise_s)},
              {"unexplained_share", format_json_number(d.unexplained_share)}};
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : d.findings) {
    nlohmann::json evidence = nlohmann::json::array();
    for (const auto& e : f.evidence)
      evidence.push_back({{"metric", e.metric}, {"baseline", format_json_number(e.baseline)}, {"incident", format_json_number(e.incident)},
                          {"unit", e.unit}});
    findings.push_back({{"cause", f.cause},
                        {"stage", f.stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.stage)},
                        {"score", std::round(f.score * 1000) / 1000},
                        {"share", format_json_number(f.share)},
                        {"summary", f.summary},
                        {"evidence", evidence},
                        {"next_steps", f.next_steps},
                        {"where", where_json(f.where)},
                        {"examples", examples_json(f.examples)}});
  }
  j["findings"] = findings;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& r : d.stages)
    stages.push_back({{"stage", r.stage},
                      {"baseline", window_json(r.baseline, true)},
                      {"incident", window_json(r.incident, true)},
                      {"delta_seconds", format_json_number(r.delta_s)},
                      {"share", format_json_number(r.share)}});
  j["stages"] = stages;
  nlohmann::json considered = nlohmann::json::array();
  for (const auto& c : d.considered)
    considered.push_back({{"cause", c.cause}, {"score", std::round(c.score * 1000) / 1000}, {"reason", c.reason}});
  j["considered"] = considered;
  // Every signal the reasoning looked at, so a reader can check what a finding did not use.
  nlohmann::json signals = nlohmann::json::array();
  for (const auto* group : {&s.signals, &s.latency}) {
    for (const auto& [id, q] : *group)
      signals.push_back({{"id", id}, {"metric", q.metric}, {"unit", q.unit},
                         {"baseline", format_json_number(q.baseline.mean)}, {"incident", format_json_number(q.incident.mean)},
                         {"baseline_max", format_json_number(q.baseline.max)}, {"incident_max", format_json_number(q.incident.max)},
                         {"baseline_p50", format_json_number(q.baseline.p50)}, {"incident_p50", format_json_number(q.incident.p50)}});
  }
  // A disaggregated fleet's per-pool waiting and per-endpoint load, as signals named by their slice.
  for (const auto& [pool, q] : s.pools)
    signals.push_back({{"id", "pool_waiting"}, {"pool", pool}, {"metric", q.metric}, {"unit", q.unit},
                       {"baseline", format_json_number(q.baseline.mean)}, {"incident", format_json_number(q.incident.mean)},
                       {"baseline_max", format_json_number(q.baseline.max)}, {"incident_max", format_json_number(q.incident.max)}});
  for (const auto& [key, q] : s.endpoints) {
    auto [pool, endpoint] = split_endpoint_key(key);
    signals.push_back({{"id", "endpoint_load"}, {"pool", pool}, {"endpoint", endpoint}, {"metric", q.metric},
                       {"unit", q.unit}, {"baseline", format_json_number(q.baseline.mean)}, {"incident", format_json_number(q.incident.mean)},
                       {"baseline_max", format_json_number(q.baseline.max)}, {"incident_max", format_json_number(q.incident.max)}});
  }
  j["signals"] = signals;
  j["notes"] = d.notes;
  return j;
}

std::string to_text(const Diagnosis& d, bool explain) {
  std::ostringstream out;
  const Snapshot& s = d.snapshot;
  out << d.headline << "\n";
  if (!std::isnan(s.incident_start))
    out << "window " << format_time(s.incident_start) << " .. " << format_time(s.incident_end) << ", baseline "
        << format_time(s.baseline_start) << " .. " << format_time(s.baseline_end)
        << (s.dialect.empty() ? "" : ", dialect " + s.dialect) << "\n";
  if (!d.findings.empty()) out << "\nFindings (ranked):\n";
  int rank = 0;
  for (const auto& f : d.findings) {
    out << " " << ++rank << ". " << f.cause << (f.stage.empty() ? "" : " [" + f.stage + "]")
        << common::format_printf("  score %.2f", f.score) << (std::isnan(f.share) ? "" : "  explains " + share_text(f.share)) << "\n";
    if (!f.where.empty()) out << "    where: " << where_text(f.where) << "\n";
    out << "    " << f.summary << "\n";
    for (const auto& e : f.evidence)
      out << "    - " << e.metric << ": " << value(e.baseline, e.unit) << " -> " << value(e.incident, e.unit) << "\n";
    for (const auto& n : f.next_steps) out << "    > " << n << "\n";
    for (const auto& e : f.examples)
      out << "    trace " << e.trace_id << " " << value(e.duration_s, "s") << ": " << stages_text(e) << "\n";
  }
  if (!d.stages.empty()) {
    std::size_t stage_width = 16;  // the longest stage name and a space
    for (const auto& r : d.stages) stage_width = std::max(stage_width, r.stage.size() + 1);
    out << "\n" << pad("stage", stage_width) << pad("base mean", 12) << pad("inc mean", 12) << pad("base p95", 12)
        << pad("inc p95", 12) << pad("delta/req", 12) << "share\n";
    for (const auto& r : d.stages)
      out << pad(r.stage, stage_width) << pad(value(r.baseline.mean, "s"), 12) << pad(value(r.incident.mean, "s"), 12)
          << pad(value(r.baseline.p95, "s"), 12) << pad(value(r.incident.p95, "s"), 12)
          << pad(value(r.delta_s, "s"), 12) << (std::isnan(r.share) ? "" : share_text(r.share)) << "\n";
    if (!std::isnan(d.e2e_change_s))
      out << pad("e2e", stage_width) << pad(value(d.e2e_baseline.mean, "s"), 12) << pad(value(d.e2e_incident.mean, "s"), 12)
          << pad(value(d.e2e_baseline.p95, "s"), 12) << pad(value(d.e2e_incident.p95, "s"), 12)
          << pad(value(d.e2e_change_s, "s"), 12)
          << (std::isnan(d.unexplained_share) ? "" : "unexplained " + share_text(d.unexplained_share)) << "\n";
  }
  if (explain && !d.considered.empty()) {
    std::vector<const Considered*> order;
    for (const Considered& c : d.considered) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(),
                     [](const Considered* a, const Considered* b) { return a->score > b->score; });
    out << "\nConsidered and not reported (strongest first):\n";
    for (const Considered* c : order) out << common::format_printf("  %.2f  ", c->score) << c->cause << ": " << c->reason << "\n";
  }
  for (const auto& n : d.notes) out << "note: " << n << "\n";
  return out.str();
}

std::string to_markdown(const Diagnosis& d, std::size_t max_bytes) {
  std::vector<std::string> lines;
  lines.push_back("**Doctor: " + d.headline + "**");
  int rank = 0;
  for (const auto& f : d.findings) {
    if (rank == 3) break;
    lines.push_back(std::to_string(++rank) + ". **" + f.cause + "**" + (f.stage.empty() ? "" : " (" + f.stage + ")") +
                    common::format_printf(" score %.2f", f.score) + (std::isnan(f.share) ? "" : ", explains " + share_text(f.share)) +
                    (f.where.empty() ? "" : " at `" + where_text(f.where) + "`") + ": " + f.summary);
    int shown = 0;
    for (const auto& e : f.evidence) {
      if (shown++ == 3) break;
      lines.push_back("   - `" + e.metric + "` " + value(e.baseline, e.unit) + " → " + value(e.incident, e.unit));
    }
    if (!f.next_steps.empty()) lines.push_back("   - next: " + f.next_steps.front());
    for (const auto& e : f.examples) {
      const std::string id = "`" + e.trace_id.substr(0, 8) + "`";
      const std::string link = d.trace_page_url.empty() ? id : "[" + id + "](" + d.trace_page_url + "/?trace=" + e.trace_id + ")";
      lines.push_back("   - trace " + link + " " + value(e.duration_s, "s") + ": " + stages_text(e));
    }
  }
  std::string changed;
  for (const auto& r : d.stages)
    if (!std::isnan(r.share) && std::fabs(r.share) >= 0.05)
      changed += (changed.empty() ? "" : ", ") + r.stage + " " + value(r.delta_s, "s") + " (" + share_text(r.share) + ")";
  if (!changed.empty()) lines.push_back("Stages: " + changed);
  for (const auto& n : d.notes) lines.push_back("_" + n + "_");
  std::string out;
  for (const auto& l : lines) {
    if (out.size() + l.size() + 1 > max_bytes) break;
    out += l + "\n";
  }
  return out;
}

}  // namespace inferscope::doctor
