// Fault parsing. Parsing works on a copy so a request with one bad key changes nothing.
#include "serve/engine/faults.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string_view>

namespace inferscope::serve {
namespace {

constexpr std::uint64_t kMaxLoraAdaptersForFaults = 64;  // engine_types.h kMaxLoraAdapters
constexpr double kZ99 = 2.3263478740408408;  // standard normal 99th percentile

Error bad(std::string_view key, std::string_view cause) {
  return make_error("cannot parse faults from request: " + std::string(key) + ": " + std::string(cause));
}

Result<double> number(const nlohmann::json& v, std::string_view key, double lo, double hi,
                      bool lo_open) {
  if (!v.is_number()) return bad(key, "not a number");
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || (lo_open && x == lo) || x > hi)
    return bad(key, "out of range");
  return x;
}

Result<PeriodicPause> pause(const nlohmann::json& v, std::string_view key) {
  if (!v.is_object()) return bad(key, "expected {\"for_ms\": ..., \"every_s\": ...}");
  PeriodicPause p;
  for (const auto& [k, value] : v.items()) {
    auto x = number(value, std::string(key) + "." + k, 0, 1e9, k == "every_s");
    if (!x) return x.error();
    if (k == "for_ms") p.for_ms = *x;
    else if (k == "every_s") p.every_s = *x;
    else return bad(key, "unknown field " + k);
  }
  if (p.for_ms <= 0 || p.every_s <= 0) return bad(key, "for_ms and every_s must both be > 0");
  if (p.for_ms / 1000.0 >= p.every_s) return bad(key, "for_ms must be shorter than every_s");
  return p;
}

Result<DependencyFault> dependency(const nlohmann::json& v) {
  if (!v.is_object()) return bad("dependency", "expected {\"name\", \"mean_ms\", \"p99_ms\"}");
  DependencyFault d;
  for (const auto& [k, value] : v.items()) {
    if (k == "name") {
      if (!value.is_string() || value.get<std::string>().empty()) return bad("dependency.name", "not a name");
      d.name = value.get<std::string>();
      bool ok = std::all_of(d.name.begin(), d.name.end(),
                            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
      if (!ok || d.name.size() > 32) return bad("dependency.name", "use up to 32 of [A-Za-z0-9_-]");
    } else if (k == "mean_ms" || k == "p99_ms") {
      auto x = number(value, "dependency." + k, 0, 3.6e6, false);
      if (!x) return x.error();
      (k == "mean_ms" ? d.mean_ms : d.p99_ms) = *x;
    } else {
      return bad("dependency", "unknown field " + k);
    }
  }
  if (d.name.empty()) return bad("dependency.name", "missing");
  if (d.p99_ms != 0 && d.p99_ms < d.mean_ms) return bad("dependency.p99_ms", "must be >= mean_ms");
  return d;
}

// apply_one sets or clears one key on `f`. Over 40 lines on purpose: one flat branch per fault
// keeps each key's range rules beside its name, which reads like the table in docs/serve-faults.md.
Result<void> apply_one(FaultSet& f, const std::string& key, const nlohmann::json& v) {
  const bool clear = v.is_null();
  auto set_factor = [&](double& field, double def) -> Result<void> {
    if (clear) { field = def; return {}; }
    auto x = number(v, key, 0, 1e6, true);
    if (!x) return x.error();
    field = *x;
    return {};
  };
  if (key == "decode_slowdown") return set_factor(f.decode_slowdown, 1.0);
  if (key == "prefill_slowdown") return set_factor(f.prefill_slowdown, 1.0);
  if (key == "kv_capacity") {
    if (clear) { f.kv_capacity = 1.0; return {}; }
    auto x = number(v, key, 0, 1, true);
    if (!x) return x.error();
    f.kv_capacity = *x;
    return {};
  }
  if (key == "stall" || key == "worker_stall") {
    PeriodicPause& target = key == "stall" ? f.stall : f.worker_stall;
    if (clear) { target = {}; return {}; }
    auto p = pause(v, key);
    if (!p) return p.error();
    target = *p;
    return {};
  }
  if (key == "preprocess_slowdown") {
    if (clear) { f.preprocess_slowdown = {}; return {}; }
    if (v.is_number()) return set_factor(f.preprocess_slowdown.factor, 1.0);
    if (!v.is_object()) return bad(key, "expected a factor or {\"factor\", \"add_ms\"}");
    PreprocessSlowdown p;
    for (const auto& [k, value] : v.items()) {
      auto x = number(value, key + "." + k, 0, 3.6e6, k == "factor");
      if (!x) return x.error();
      if (k == "factor") p.factor = *x;
      else if (k == "add_ms") p.add_ms = *x;
      else return bad(key, "unknown field " + k);
    }
    f.preprocess_slowdown = p;
    return {};
  }
  if (key == "dependency") {
    f.dependencies.clear();
    if (clear) return {};
    const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
    for (const auto& item : list) {
      auto d = dependency(item);
      if (!d) return d.error();
      f.dependencies.push_back(*d);
    }
    return {};
  }
  if (key == "error_rate") {
    if (clear) { f.error_rate = 0; return {}; }
    auto x = number(v, key, 0, 1, false);
    if (!x) return x.error();
    f.error_rate = *x;
    return {};
  }
  if (key == "network_delay_ms") {
    if (clear) { f.network_delay_ms = 0; return {}; }
    auto x = number(v, key, 0, 3.6e6, false);
    if (!x) return x.error();
    f.network_delay_ms = *x;
    return {};
  }
  if (key == "max_num_seqs") {
    if (clear) { f.max_num_seqs = 0; return {}; }
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 1'000'000)
      return bad(key, "not an integer in 0..1000000 (0 = no override)");
    f.max_num_seqs = v.get<std::uint32_t>();
    return {};
  }
  if (key == "max_loras") {
    if (clear) { f.max_loras = 0; return {}; }
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > kMaxLoraAdaptersForFaults)
      return bad(key, "not an integer in 0..64 (0 = no cut)");
    f.max_loras = v.get<std::uint32_t>();
    return {};
  }
  if (key == "prefix_cache_scramble") {
    if (clear) { f.prefix_cache_scramble = 0; return {}; }
    auto x = number(v, key, 0, 1, false);
    if (!x) return x.error();
    f.prefix_cache_scramble = *x;
    return {};
  }
  if (key == "spec_acceptance") {
    if (clear) { f.spec_acceptance = -1; return {}; }
    auto x = number(v, key, 0, 1, false);
    if (!x) return x.error();
    f.spec_acceptance = *x;
    return {};
  }
  if (key == "engine_slowdown") {
    if (clear) { f.engine_slowdown = {}; return {}; }
    if (!v.is_object()) return bad(key, "expected {\"engine\": <rank>, \"factor\": <x>}");
    EngineSlowdown e;
    e.engine = -2;
    for (const auto& [k, value] : v.items()) {
      if (k == "engine") {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > 1024)
          return bad("engine_slowdown.engine", "not a rank in 0..1024");
        e.engine = value.get<int>();
      } else if (k == "factor") {
        auto x = number(value, "engine_slowdown.factor", 0, 1e6, true);
        if (!x) return x.error();
        e.factor = *x;
      } else {
        return bad(key, "unknown field " + k);
      }
    }
    if (e.engine < 0) return bad("engine_slowdown.engine", "missing");
    f.engine_slowdown = e;
    return {};
  }
  if (key == "kv_transfer") return set_factor(f.kv_transfer, 1.0);
  if (key == "kv_transfer_failure") {
    if (clear) { f.kv_transfer_failure = 0; return {}; }
    auto x = number(v, key, 0, 0.95, false);
    if (!x) return x.error();
    f.kv_transfer_failure = *x;
    return {};
  }
  if (key == "kv_link") {
    if (clear) { f.kv_link = {}; return {}; }
    if (!v.is_object()) return bad(key, "expected {\"worker\": <decode index>, \"factor\": <x>}");
    KvLink link;
    for (const auto& [k, value] : v.items()) {
      if (k == "worker") {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > 1024)
          return bad("kv_link.worker", "not a decode worker index in 0..1024");
        link.worker = value.get<int>();
      } else if (k == "factor") {
        auto x = number(value, "kv_link.factor", 0, 1e6, true);
        if (!x) return x.error();
        link.factor = *x;
      } else {
        return bad(key, "unknown field " + k);
      }
    }
    if (link.worker < 0) return bad("kv_link.worker", "missing");
    f.kv_link = link;
    return {};
  }
  if (key == "pool_workers") {
    if (clear) { f.pool_workers.clear(); return {}; }
    if (v.is_array()) {  // one cut per pool, as to_json writes two
      for (const auto& item : v) {
        if (item.is_null()) return bad(key, "null in a list");
        if (auto one = apply_one(f, key, item); !one) return one;
      }
      return {};
    }
    if (!v.is_object()) return bad(key, "expected {\"pool\": \"prefill\"|\"decode\", \"count\": <n>}");
    PoolWorkers cut;
    bool has_count = false;
    for (const auto& [k, value] : v.items()) {
      if (k == "pool") {
        if (!value.is_string() || (value.get<std::string>() != "prefill" && value.get<std::string>() != "decode"))
          return bad("pool_workers.pool", "not \"prefill\" or \"decode\"");
        cut.pool = value.get<std::string>();
      } else if (k == "count") {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > 1024)
          return bad("pool_workers.count", "not a worker count in 1..1024");
        cut.count = value.get<std::uint32_t>();
        has_count = true;
      } else {
        return bad(key, "unknown field " + k);
      }
    }
    if (cut.pool.empty()) return bad("pool_workers.pool", "missing");
    if (!has_count) return bad("pool_workers.count", "missing");
    std::erase_if(f.pool_workers, [&](const PoolWorkers& p) { return p.pool == cut.pool; });
    f.pool_workers.push_back(cut);
    return {};
  }
  if (key == "route_skew") {
    if (clear) { f.route_skew = {}; return {}; }
    if (!v.is_object()) return bad(key, "expected {\"endpoint\": \"decode-<i>\", \"weight\": <0..1>}");
    RouteSkew skew;
    bool has_weight = false;
    for (const auto& [k, value] : v.items()) {
      if (k == "endpoint") {
        const std::string name = value.is_string() ? value.get<std::string>() : std::string();
        if (name.size() < 8 || name.size() > 12 || name.rfind("decode-", 0) != 0 ||
            !std::all_of(name.begin() + 7, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
          return bad("route_skew.endpoint", "not a decode endpoint name (decode-<i>)");
        skew.endpoint = name;
      } else if (k == "weight") {
        auto x = number(value, "route_skew.weight", 0, 1, true);
        if (!x) return x.error();
        skew.weight = *x;
        has_weight = true;
      } else {
        return bad(key, "unknown field " + k);
      }
    }
    if (skew.endpoint.empty()) return bad("route_skew.endpoint", "missing");
    if (!has_weight) return bad("route_skew.weight", "missing");
    f.route_skew = skew;
    return {};
  }
  if (key == "metrics_down") {
    if (clear) { f.metrics_down = false; return {}; }
    if (!v.is_boolean()) return bad(key, "not a boolean");
    f.metrics_down = v.get<bool>();
    return {};
  }
  if (key == "hide_metrics") {
    f.hide_metrics.clear();
    if (clear) return {};
    if (!v.is_array()) return bad(key, "expected a list of metric family names");
    for (const auto& item : v) {
      const std::string name = item.is_string() ? item.get<std::string>() : std::string();
      const bool ok = !name.empty() && name.size() <= 200 && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                      std::all_of(name.begin(), name.end(), [](char c) {
                        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
                      });
      if (!ok) return bad(key, "not a metric family name: " + item.dump());
      f.hide_metrics.push_back(name);
    }
    return {};
  }
  if (key == "gpu_memory_other") {
    if (clear) { f.gpu_memory_other = 0; return {}; }
    auto x = number(v, key, 0, 1, false);
    if (!x) return x.error();
    f.gpu_memory_other = *x;
    return {};
  }
  return bad(key, "unknown fault");
}

nlohmann::json pause_json(const PeriodicPause& p) { return {{"for_ms", p.for_ms}, {"every_s", p.every_s}}; }

}  // namespace

double DependencyFault::lognormal_sigma() const {
  if (mean_ms <= 0 || p99_ms <= mean_ms) return 0;
  double gap = std::log(p99_ms / mean_ms);  // = kZ99*s - s^2/2
  double disc = kZ99 * kZ99 - 2 * gap;
  return disc <= 0 ? kZ99 : kZ99 - std::sqrt(disc);
}

Result<FaultSet> parse_faults(const nlohmann::json& json, FaultSet base) {
  if (!json.is_object()) return bad("body", "expected a JSON object");
  FaultSet f = std::move(base);
  if (auto it = json.find("clear"); it != json.end()) {
    if (!it->is_boolean()) return bad("clear", "not a boolean");
    if (it->get<bool>()) f = FaultSet{};
  }
  for (const auto& [key, value] : json.items()) {
    if (key == "clear") continue;
    auto applied = apply_one(f, key, value);
    if (!applied) return applied.error();
  }
  return f;
}

FaultSet faults_for_rank(const FaultSet& faults, std::uint32_t rank) {
  FaultSet out = faults;
  if (faults.engine_slowdown.active() && static_cast<std::uint32_t>(faults.engine_slowdown.engine) == rank) {
    out.decode_slowdown *= faults.engine_slowdown.factor;
    out.prefill_slowdown *= faults.engine_slowdown.factor;
  }
  out.engine_slowdown = {};
  return out;
}

nlohmann::json to_json(const FaultSet& f) {
  nlohmann::json out = nlohmann::json::object();
  if (f.decode_slowdown != 1.0) out["decode_slowdown"] = f.decode_slowdown;
  if (f.prefill_slowdown != 1.0) out["prefill_slowdown"] = f.prefill_slowdown;
  if (f.kv_capacity != 1.0) out["kv_capacity"] = f.kv_capacity;
  if (f.stall.active()) out["stall"] = pause_json(f.stall);
  if (f.worker_stall.active()) out["worker_stall"] = pause_json(f.worker_stall);
  if (f.preprocess_slowdown.active())
    out["preprocess_slowdown"] = {{"factor", f.preprocess_slowdown.factor}, {"add_ms", f.preprocess_slowdown.add_ms}};
  if (!f.dependencies.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : f.dependencies) {
      nlohmann::json item = {{"name", d.name}, {"mean_ms", d.mean_ms}};
      if (d.p99_ms > 0) item["p99_ms"] = d.p99_ms;
      list.push_back(std::move(item));
    }
    out["dependency"] = std::move(list);
  }
  if (f.error_rate != 0) out["error_rate"] = f.error_rate;
  if (f.network_delay_ms != 0) out["network_delay_ms"] = f.network_delay_ms;
  if (f.max_num_seqs != 0) out["max_num_seqs"] = f.max_num_seqs;
  if (f.prefix_cache_scramble != 0) out["prefix_cache_scramble"] = f.prefix_cache_scramble;
  if (f.max_loras != 0) out["max_loras"] = f.max_loras;
  if (f.spec_acceptance >= 0) out["spec_acceptance"] = f.spec_acceptance;
  if (f.engine_slowdown.active())
    out["engine_slowdown"] = {{"engine", f.engine_slowdown.engine}, {"factor", f.engine_slowdown.factor}};
  if (f.kv_transfer != 1.0) out["kv_transfer"] = f.kv_transfer;
  if (f.kv_link.active()) out["kv_link"] = {{"worker", f.kv_link.worker}, {"factor", f.kv_link.factor}};
  if (f.kv_transfer_failure != 0) out["kv_transfer_failure"] = f.kv_transfer_failure;
  if (f.pool_workers.size() == 1) {
    out["pool_workers"] = {{"pool", f.pool_workers[0].pool}, {"count", f.pool_workers[0].count}};
  } else if (!f.pool_workers.empty()) {
    nlohmann::json cuts = nlohmann::json::array();
    for (const auto& p : f.pool_workers) cuts.push_back({{"pool", p.pool}, {"count", p.count}});
    out["pool_workers"] = std::move(cuts);
  }
  if (f.route_skew.active()) out["route_skew"] = {{"endpoint", f.route_skew.endpoint}, {"weight", f.route_skew.weight}};
  if (f.metrics_down) out["metrics_down"] = true;
  if (!f.hide_metrics.empty()) out["hide_metrics"] = f.hide_metrics;
  if (f.gpu_memory_other != 0) out["gpu_memory_other"] = f.gpu_memory_other;
  return out;
}

}  // namespace inferscope::serve
