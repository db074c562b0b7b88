#include "doctor/scrape_collector.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "doctor/role_spec.h"
#include "net/blocking_client.h"
#include "common/unix_time.h"

namespace inferscope::doctor {
namespace {

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

const char* const kGroups[] = {"latency", "stages", "signals", "dependencies", "pools", "endpoints"};

std::map<std::string, Quantity>& group(Snapshot& s, const std::string& name) {
  if (name == "latency") return s.latency;
  if (name == "stages") return s.stages;
  if (name == "signals") return s.signals;
  if (name == "pools") return s.pools;
  if (name == "endpoints") return s.endpoints;
  return s.dependencies;
}

bool derived(const std::string& group_name, const std::string& id, const Quantity& q) {
  if (group_name == "signals" && (id == "error_ratio" || id == "prefix_hit_rate" || id == "spec_acceptance" ||
                                  id == "client_error_ratio" || id == "kv_transfer_time_per_mb" ||
                                  id == "endpoint_load_spread" ||
                                  id == "arrival_rate")) return true;
  return q.metric.find(" - ") != std::string::npos;
}

// sources_of lists the instance / model combinations of one target's e2e series.
std::set<Where> sources_of(const metrics::ParsedExposition& exposition, const std::string& instance) {
  const std::set<std::string> names = metric_names(exposition);
  std::set<Where> out;
  const std::vector<std::string> dialects = detect_dialects(names);
  std::vector<RoleSpec> specs = role_specs_for(dialects);
  // vLLM's e2e series carry the data-parallel rank (`engine`) even where another dialect's e2e
  // metric is read: they say which engines an instance runs.
  if (std::find(dialects.begin(), dialects.end(), "vllm") != dialects.end()) {
    auto vllm = role_specs_for(std::vector<std::string>{"vllm"});
    specs.insert(specs.end(), vllm.begin(), vllm.end());
  }
  for (const RoleSpec& spec : specs) {
    if (spec.id != "e2e") continue;
    bool renamed = false;
    const std::string metric = choose_metric(spec, names, renamed);
    if (metric.empty()) continue;
    const auto series = series_names(spec, metric);
    for (const auto& family : exposition.families)
      for (const auto& sample : family.samples) {
        if (std::find(series.begin(), series.end(), sample.name) == series.end()) continue;
        std::string model, engine;
        for (const auto& label : sample.labels) {
          if (!spec.model_label.empty() && label.name == spec.model_label) model = label.value;
          if (label.name == "engine") engine = label.value;  // vLLM's data-parallel rank
        }
        out.insert({"", instance, model, engine});
      }
  }
  return out;
}

// only_engine keeps the samples of one data-parallel rank (engine="<rank>") in every scrape:
// what is left reads as one vLLM engine (series without an engine label are the whole server's).
ScrapeResult only_engine(ScrapeResult result, const std::string& engine) {
  for (ScrapeRound& round : result.rounds)
    for (metrics::ParsedExposition& exposition : round.expositions) {
      for (auto& family : exposition.families)
        std::erase_if(family.samples, [&](const auto& sample) {
          for (const auto& label : sample.labels)
            if (label.name == "engine") return label.value != engine;
          return true;
        });
      std::erase_if(exposition.families, [](const auto& family) { return family.samples.empty(); });
    }
  return result;
}

// only_url keeps one URL's scrapes of a run.
ScrapeResult only_url(const ScrapeResult& result, std::size_t url) {
  ScrapeResult out;
  out.last_errors = {result.last_errors[url]};
  out.failures = {result.failures[url]};
  for (const ScrapeRound& round : result.rounds) {
    ScrapeRound mine;
    mine.time = round.time;
    for (std::size_t k = 0; k < round.expositions.size(); ++k)
      if (k < round.sources.size() && round.sources[k] == url) {
        mine.expositions.push_back(round.expositions[k]);
        mine.sources.push_back(0);
      }
    mine.failed = mine.expositions.empty() ? 1 : 0;
    out.rounds.push_back(std::move(mine));
  }
  return out;
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
    round.time = common::unix_now_s();
    // Targets are scraped concurrently so one slow target does not skew the others' timing.
    std::vector<std::optional<Result<FetchedExposition>>> got(options.urls.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < options.urls.size(); ++i)
      threads.emplace_back([&, i] { got[i].emplace(fetch_exposition(options.urls[i], options.timeout, options.tls)); });
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (*got[i]) {
        round.expositions.push_back(std::move((*got[i])->parsed));
        round.sources.push_back(i);
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
  // Each URL is one instance: its e2e series' models, from its last answered scrape.
  std::set<Where> sources;
  for (std::size_t i = 0; i < options.urls.size(); ++i)
    for (auto round = result.rounds.rbegin(); round != result.rounds.rend(); ++round) {
      auto k = std::find(round->sources.begin(), round->sources.end(), i);
      if (k == round->sources.end()) continue;
      auto found = sources_of(round->expositions[static_cast<std::size_t>(k - round->sources.begin())],
                              instance_of(options.urls[i]));
      sources.insert(found.begin(), found.end());
      break;
    }
  snap.sources.assign(sources.begin(), sources.end());
  for (std::size_t i = 0; i < options.urls.size(); ++i) {
    // A target is down when its last scrapes failed (it stopped), not when one blip happened.
    if (!result.last_errors[i].empty() && result.failures[i] * 2 >= static_cast<int>(result.rounds.size()))
      snap.targets_down.push_back(options.urls[i] + ": " + result.last_errors[i]);
  }
  return snap;
}

namespace {

// slice_of is one instance (a URL) or one model of a run: first half vs second half without a
// baseline; the whole run against `baseline` with one (an empty Snapshot: no baseline of its own).
Snapshot slice_of(const ScrapeOptions& options, const ScrapeResult& result, const Where& where,
                  const Snapshot* baseline) {
  if (where.instance.empty()) {
    Snapshot snapshot = snapshot_from_scrapes(options, result, where.model, baseline);
    snapshot.targets_down.clear();  // the whole run's diagnosis reports down targets
    return snapshot;
  }
  for (std::size_t i = 0; i < options.urls.size(); ++i) {
    if (instance_of(options.urls[i]) != where.instance) continue;
    ScrapeOptions one = options;
    one.urls = {options.urls[i]};
    ScrapeResult mine = only_url(result, i);
    if (!where.engine.empty()) mine = only_engine(std::move(mine), where.engine);
    Snapshot snapshot = snapshot_from_scrapes(one, mine, where.model, baseline);
    snapshot.targets_down.clear();
    return snapshot;
  }
  return {};
}

SlicePlan plan_for(const std::vector<Where>& all_sources, const std::string& model) {
  std::vector<Where> sources;
  for (const Where& s : all_sources)
    if (model.empty() || s.model == model) sources.push_back(s);
  SlicePlan plan = plan_slices(sources);
  if (!model.empty()) plan.models.clear();
  return plan;
}

// A baseline of nothing: a slice built against it holds the whole run on its incident side.
const Snapshot kNoBaseline;

}  // namespace

std::vector<Slice> whole_run_slices(const ScrapeOptions& options, const ScrapeResult& result, const std::string& model,
                                    const std::vector<Where>& sources) {
  const SlicePlan plan = plan_for(sources, model);
  std::vector<Slice> out;
  for (const auto* wanted : {&plan.instances, &plan.models})
    for (const Where& where : *wanted) out.push_back({where, slice_of(options, result, where, &kNoBaseline)});
  return out;
}

void localize_scrapes(const ScrapeOptions& options, const ScrapeResult& result, const std::string& model,
                      Diagnosis& d, const SavedBaseline* saved) {
  SlicePlan plan = plan_for(d.snapshot.sources, model);
  auto baseline_of = [&](const Where& where) -> const Snapshot* {
    if (!saved) return nullptr;
    for (const Slice& s : saved->targets)
      if (s.where == where) return &s.snapshot;
    return &kNoBaseline;
  };
  std::vector<Slice> instances, models;
  for (const Where& where : plan.instances)
    instances.push_back({where, slice_of(options, result, where, baseline_of(where))});
  for (const Where& where : plan.models) models.push_back({where, slice_of(options, result, where, baseline_of(where))});
  for (auto& n : plan.notes) d.notes.push_back(std::move(n));
  localize(d, instances, models);
}

namespace {

nlohmann::json groups_json(const Snapshot& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const char* g : kGroups) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [id, q] : group(const_cast<Snapshot&>(s), g)) {
      if (derived(g, id, q)) continue;
      out[id] = {{"metric", q.metric}, {"unit", q.unit}, {"stat", stat_json(q.incident)}};
    }
    j[g] = out;
  }
  return j;
}

Result<void> read_groups(const nlohmann::json& j, Snapshot& s, const std::string& path, const std::string& at) {
  for (const char* g : kGroups) {
    if (!j.contains(g) || !j[g].is_object()) continue;
    for (auto it = j[g].begin(); it != j[g].end(); ++it) {
      if (!it.value().is_object() || !it.value().contains("stat"))
        return make_error("cannot read baseline file " + path + ": " + at + g + "." + it.key() + " has no stat");
      Quantity q;
      q.metric = it.value().value("metric", "");
      q.unit = it.value().value("unit", "");
      q.incident = stat_from(it.value()["stat"]);
      group(s, g)[it.key()] = std::move(q);
    }
  }
  return {};
}

}  // namespace

Result<void> save_baseline(const Snapshot& s, const std::vector<Slice>& targets, const std::string& path) {
  nlohmann::json j = groups_json(s);
  j["schema"] = "inferscope-doctor-baseline/1";
  j["dialect"] = s.dialect;
  j["start"] = s.incident_start;
  j["end"] = s.incident_end;
  j["interval_s"] = std::isnan(s.interval_s) ? nlohmann::json(nullptr) : nlohmann::json(s.interval_s);
  // Each target's own statistics, so a later run compares each replica with its own past.
  nlohmann::json saved_targets = nlohmann::json::array();
  for (const Slice& t : targets) {
    nlohmann::json one = groups_json(t.snapshot);
    one["where"] = {{"job", t.where.job}, {"instance", t.where.instance}, {"model", t.where.model}};
    if (!t.where.engine.empty()) one["where"]["engine"] = t.where.engine;
    saved_targets.push_back(std::move(one));
  }
  j["targets"] = std::move(saved_targets);
  std::ofstream file(path);
  if (!file) return make_error("cannot write baseline file " + path + ": cannot open it");
  file << j.dump(1) << "\n";
  if (!file) return make_error("cannot write baseline file " + path + ": write failed");
  return {};
}

Result<SavedBaseline> load_baseline(const std::string& path) {
  std::ifstream file(path);
  if (!file) return make_error("cannot read baseline file " + path + ": cannot open it");
  std::stringstream text;
  text << file.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("cannot read baseline file " + path + ": not JSON");
  if (j.value("schema", "") != "inferscope-doctor-baseline/1")
    return make_error("cannot read baseline file " + path + ": not an inferscope doctor baseline (schema)");
  SavedBaseline saved;
  Snapshot& s = saved.whole;
  s.dialect = j.value("dialect", "");
  if (j.contains("start") && j["start"].is_number()) s.incident_start = j["start"].get<double>();
  if (j.contains("end") && j["end"].is_number()) s.incident_end = j["end"].get<double>();
  if (auto read = read_groups(j, s, path, ""); !read) return read.error();
  // A file saved before targets were kept has none: its replicas are compared within the window.
  if (!j.contains("targets")) return saved;
  if (!j["targets"].is_array()) return make_error("cannot read baseline file " + path + ": targets is not a list");
  for (const auto& t : j["targets"]) {
    const std::string at = "targets[" + std::to_string(saved.targets.size()) + "].";
    if (!t.is_object() || !t.contains("where") || !t["where"].is_object())
      return make_error("cannot read baseline file " + path + ": " + at + "where is missing");
    Slice slice;
    slice.where = {t["where"].value("job", ""), t["where"].value("instance", ""), t["where"].value("model", ""),
                   t["where"].value("engine", "")};
    slice.snapshot.dialect = s.dialect;
    slice.snapshot.incident_start = s.incident_start;
    slice.snapshot.incident_end = s.incident_end;
    if (auto read = read_groups(t, slice.snapshot, path, at); !read) return read.error();
    saved.targets.push_back(std::move(slice));
  }
  return saved;
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
