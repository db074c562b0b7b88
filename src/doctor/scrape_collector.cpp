#include "doctor/scrape_collector.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "net/blocking_client.h"

namespace inferscope::doctor {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

nlohmann::json stat_json(const WindowStat& w) {
  auto num = [](double v) { return std::isnan(v) || std::isinf(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json intervals = nlohmann::json::array(), weights = nlohmann::json::array();
  for (double v : w.intervals) intervals.push_back(num(v));
  for (double v : w.interval_weights) weights.push_back(num(v));
  return {{"mean", num(w.mean)}, {"p50", num(w.p50)}, {"p95", num(w.p95)}, {"p99", num(w.p99)}, {"max", num(w.max)},
          {"count", num(w.count)}, {"intervals", intervals}, {"interval_weights", weights}};
}

WindowStat stat_from(const nlohmann::json& j) {
  auto num = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : kNaN; };
  WindowStat w;
  w.mean = num("mean");
  w.p50 = num("p50");
  w.p95 = num("p95");
  w.p99 = num("p99");
  w.max = num("max");
  w.count = std::isnan(num("count")) ? 0 : num("count");
  for (const char* key : {"intervals", "interval_weights"}) {
    if (!j.contains(key) || !j[key].is_array()) continue;
    auto& out = std::string(key) == "intervals" ? w.intervals : w.interval_weights;
    for (const auto& v : j[key]) out.push_back(v.is_number() ? v.get<double>() : kNaN);
  }
  return w;
}

const char* const kGroups[] = {"latency", "stages", "signals", "dependencies"};

std::map<std::string, Quantity>& group(Snapshot& s, const std::string& name) {
  if (name == "latency") return s.latency;
  if (name == "stages") return s.stages;
  if (name == "signals") return s.signals;
  return s.dependencies;
}

bool derived(const std::string& group_name, const std::string& id, const Quantity& q) {
  if (group_name == "signals" && (id == "error_ratio" || id == "prefix_hit_rate" || id == "client_error_ratio" ||
                                  id == "arrival_rate")) return true;
  return q.metric.find(" - ") != std::string::npos;
}

}  // namespace

Result<FetchedExposition> fetch_exposition(const std::string& url, std::chrono::milliseconds timeout,
                                           const net::TlsOptions& tls) {
  auto client = net::BlockingClient::create(
      url,
      {.timeout = timeout,
       .tls = tls,
       .accept = "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.9"},
      "--scrape");
  if (!client) return make_error("cannot scrape " + url + ": " + client.error().message);
  // The URL's path is the metrics path itself (/metrics when it has none).
  auto answer = client->request("GET", client->url().base_path.empty() ? "/metrics" : "");
  if (!answer) return make_error("cannot scrape " + url + ": " + answer.error().message);
  if (answer->status != 200)
    return make_error("cannot scrape " + url + ": HTTP " + std::to_string(answer->status));
  FetchedExposition out;
  out.text = std::move(answer->body);
  out.content_type = answer->content_type;
  auto format = metrics::exposition_format_from_content_type(out.content_type.empty() ? "text/plain" : out.content_type);
  if (!format) return make_error("cannot scrape " + url + ": " + format.error().message);
  auto parsed = metrics::parse_exposition(out.text, *format);
  if (!parsed) return make_error("cannot scrape " + url + ": " + parsed.error().message);
  out.parsed = std::move(*parsed);
  return out;
}

Result<ScrapeResult> scrape_rounds(const ScrapeOptions& options) {
  if (options.urls.empty()) return make_error("cannot scrape: no --scrape URL given");
  if (!(options.interval_s > 0) || !(options.duration_s >= options.interval_s))
    return make_error("cannot scrape: --interval must be > 0 and not longer than --duration");
  ScrapeResult result;
  result.last_errors.resize(options.urls.size());
  result.failures.assign(options.urls.size(), 0);
  const auto start = std::chrono::steady_clock::now();
  const int rounds = static_cast<int>(std::floor(options.duration_s / options.interval_s + 1e-9)) + 1;
  for (int k = 0; k < rounds; ++k) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(k * options.interval_s)));
    ScrapeRound round;
    round.time = now_s();
    // Targets are scraped concurrently so one slow target does not skew the others' timing.
    std::vector<std::optional<Result<FetchedExposition>>> got(options.urls.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < options.urls.size(); ++i)
      threads.emplace_back([&, i] { got[i].emplace(fetch_exposition(options.urls[i], options.timeout, options.tls)); });
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (*got[i]) {
        round.expositions.push_back(std::move((*got[i])->parsed));
        result.last_errors[i].clear();
      } else {
        ++round.failed;
        ++result.failures[i];
        result.last_errors[i] = got[i]->error().message;
      }
    }
    result.rounds.push_back(std::move(round));
  }
  return result;
}

Snapshot snapshot_from_scrapes(const ScrapeOptions& options, const ScrapeResult& result, const std::string& model,
                               const Snapshot* baseline) {
  SamplingReport report;
  SampledRoles sampled = sample_rounds(result.rounds, model, report, options.custom.get());
  double t0 = result.rounds.empty() ? 0 : result.rounds.front().time;
  double t1 = result.rounds.empty() ? 0 : result.rounds.back().time;
  Snapshot snap;
  if (baseline) {
    snap = build_snapshot(sampled, {t0, t1}, {t0, t1});
    apply_baseline(snap, *baseline);
  } else {
    // Split on a grid point so both halves get whole intervals.
    double mid = t0;
    if (!sampled.times.empty()) mid = sampled.times[sampled.times.size() / 2];
    snap = build_snapshot(sampled, {t0, mid}, {mid, t1});
  }
  snap.source = "scrape";
  for (std::size_t i = 0; i < report.dialects.size(); ++i) snap.dialect += (i ? "+" : "") + report.dialects[i];
  snap.missing = report.missing;
  snap.renamed = report.renamed;
  snap.targets_total = static_cast<int>(options.urls.size());
  for (std::size_t i = 0; i < options.urls.size(); ++i) {
    // A target is down when its last scrapes failed (it stopped), not when one blip happened.
    if (!result.last_errors[i].empty() && result.failures[i] * 2 >= static_cast<int>(result.rounds.size()))
      snap.targets_down.push_back(options.urls[i] + ": " + result.last_errors[i]);
  }
  return snap;
}

Result<void> save_baseline(const Snapshot& s, const std::string& path) {
  nlohmann::json j;
  j["schema"] = "inferscope-doctor-baseline/1";
  j["dialect"] = s.dialect;
  j["start"] = s.incident_start;
  j["end"] = s.incident_end;
  j["interval_s"] = std::isnan(s.interval_s) ? nlohmann::json(nullptr) : nlohmann::json(s.interval_s);
  for (const char* g : kGroups) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [id, q] : group(const_cast<Snapshot&>(s), g)) {
      if (derived(g, id, q)) continue;
      out[id] = {{"metric", q.metric}, {"unit", q.unit}, {"stat", stat_json(q.incident)}};
    }
    j[g] = out;
  }
  std::ofstream file(path);
  if (!file) return make_error("cannot write baseline file " + path + ": cannot open it");
  file << j.dump(1) << "\n";
  if (!file) return make_error("cannot write baseline file " + path + ": write failed");
  return {};
}

Result<Snapshot> load_baseline(const std::string& path) {
  std::ifstream file(path);
  if (!file) return make_error("cannot read baseline file " + path + ": cannot open it");
  std::stringstream text;
  text << file.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("cannot read baseline file " + path + ": not JSON");
  if (j.value("schema", "") != "inferscope-doctor-baseline/1")
    return make_error("cannot read baseline file " + path + ": not an inferscope doctor baseline (schema)");
  Snapshot s;
  s.dialect = j.value("dialect", "");
  if (j.contains("start") && j["start"].is_number()) s.incident_start = j["start"].get<double>();
  if (j.contains("end") && j["end"].is_number()) s.incident_end = j["end"].get<double>();
  for (const char* g : kGroups) {
    if (!j.contains(g) || !j[g].is_object()) continue;
    for (auto it = j[g].begin(); it != j[g].end(); ++it) {
      if (!it.value().is_object() || !it.value().contains("stat"))
        return make_error("cannot read baseline file " + path + ": " + g + "." + it.key() + " has no stat");
      Quantity q;
      q.metric = it.value().value("metric", "");
      q.unit = it.value().value("unit", "");
      q.incident = stat_from(it.value()["stat"]);
      group(s, g)[it.key()] = std::move(q);
    }
  }
  return s;
}

void apply_baseline(Snapshot& snapshot, const Snapshot& saved) {
  for (const char* g : kGroups) {
    auto& mine = group(snapshot, g);
    for (auto it = mine.begin(); it != mine.end();) {
      if (derived(g, it->first, it->second)) {
        it = mine.erase(it);
        continue;
      }
      auto& theirs = group(const_cast<Snapshot&>(saved), g);
      auto found = theirs.find(it->first);
      it->second.baseline = found == theirs.end() ? WindowStat{} : found->second.incident;
      ++it;
    }
  }
  snapshot.baseline_start = saved.incident_start;
  snapshot.baseline_end = saved.incident_end;
  if (!saved.dialect.empty() && saved.dialect != snapshot.dialect)
    snapshot.notes.push_back("baseline was recorded from dialect " + saved.dialect + ", now " + snapshot.dialect);
  add_derived_quantities(snapshot);
}

}  // namespace inferscope::doctor
