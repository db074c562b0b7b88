#include "doctor/fleet_pools.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "dialect/dialect.h"

namespace inferscope::doctor {
namespace {

// fleet_sum_into adds one endpoint's window to a pool's (means and maxima add: the pool's waiting
// is the sum of its endpoints'; its max is an upper bound).
void fleet_sum_into(WindowStat& into, const WindowStat& add, bool first) {
  if (first) {
    into = add;
    into.per_request = kNaN;
    return;
  }
  auto plus = [](double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : a + b; };
  into.mean = plus(into.mean, add.mean);
  into.max = plus(into.max, add.max);
  into.count = std::min(into.count, add.count);
  if (into.intervals.size() < add.intervals.size()) into.intervals.resize(add.intervals.size(), kNaN);
  for (std::size_t i = 0; i < add.intervals.size(); ++i) into.intervals[i] = plus(into.intervals[i], add.intervals[i]);
}

// kBusyFloor: an endpoint that carried this much load on average in the baseline was in rotation.
constexpr double kBusyFloor = 0.05;

}  // namespace

bool out_of_rotation(const Quantity& q) {
  const double b = q.baseline.mean, i = q.incident.mean;
  if (!(b >= kBusyFloor)) return false;
  if (!(i >= 0.05 * b)) return true;
  const std::vector<double>& samples = q.incident.intervals;
  const std::size_t tail = (samples.size() + 2) / 3;
  int seen = 0;
  for (std::size_t k = samples.size() - tail; k < samples.size(); ++k) {
    if (std::isnan(samples[k])) continue;
    if (samples[k] >= 0.05 * b) return false;
    ++seen;
  }
  return seen >= 2;
}

std::optional<PoolLoad> pool_load(const Snapshot& s, PoolKind kind) {
  PoolLoad load;
  double sum_b = 0, sum_i = 0;
  for (const auto& [key, q] : s.endpoints) {
    auto [pool, endpoint] = split_endpoint_key(key);
    if (pool_kind(peer_group(pool, endpoint)) != kind) continue;
    if (q.unit != "requests" || !q.baseline.has_data() || !q.incident.has_data()) return std::nullopt;
    sum_b += q.baseline.mean;
    sum_i += q.incident.mean;
    ++load.endpoints;
    if (!out_of_rotation(q)) ++load.in_rotation;
  }
  if (load.endpoints == 0) return std::nullopt;
  load.baseline = sum_b / load.endpoints;
  load.incident = sum_i / std::max(load.in_rotation, 1);
  return load;
}

PoolKind pool_kind(std::string_view name) {
  if (name.find("prefill") != std::string_view::npos) return PoolKind::kPrefill;
  if (name.find("decode") != std::string_view::npos) return PoolKind::kDecode;
  return PoolKind::kOther;
}

std::string peer_group(const std::string& pool, const std::string& endpoint) {
  if (pool_kind(pool) != PoolKind::kOther) return pool;
  switch (pool_kind(endpoint)) {
    case PoolKind::kPrefill: return "prefill";
    case PoolKind::kDecode: return "decode";
    case PoolKind::kOther: break;
  }
  return pool;
}

std::vector<EndpointSpread> endpoint_spreads(const Snapshot& s) {
  std::map<std::string, std::vector<std::pair<std::string, const Quantity*>>> groups;
  for (const auto& [key, q] : s.endpoints) {
    auto [pool, endpoint] = split_endpoint_key(key);
    groups[peer_group(pool, endpoint)].push_back({key, &q});
  }
  std::vector<EndpointSpread> out;
  for (const auto& [group, members] : groups) {
    if (members.size() < 2) continue;
    EndpointSpread sp;
    sp.group = group;
    sp.peers = static_cast<int>(members.size());
    double sum_i = 0, sum_b = 0, max_b = -INFINITY;
    int n_b = 0;
    const Quantity* top = nullptr;
    std::string top_key;
    for (const auto& [key, q] : members) {
      const double i = q->incident.mean, b = q->baseline.mean;
      if (!std::isnan(i)) {
        sum_i += i;
        if (!top || i > top->incident.mean) {
          top = q;
          top_key = key;
        }
      }
      if (!std::isnan(b)) {
        sum_b += b;
        ++n_b;
        max_b = std::max(max_b, b);
      }
      if (out_of_rotation(*q)) ++sp.dropped;
    }
    if (!top) continue;
    sp.mean = sum_i / static_cast<double>(members.size());
    if (!(sp.mean > 0)) continue;
    auto [pool, endpoint] = split_endpoint_key(top_key);
    sp.pool = pool;
    sp.endpoint = endpoint;
    sp.metric = top->metric;
    sp.unit = top->unit;
    sp.busiest = top->incident.mean;
    sp.busiest_baseline = top->baseline.mean;
    if (n_b > 0) {
      sp.mean_baseline = sum_b / static_cast<double>(members.size());
      if (sp.mean_baseline > 0) sp.baseline_spread = max_b / sp.mean_baseline;
    }
    out.push_back(std::move(sp));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const EndpointSpread& a, const EndpointSpread& b) { return a.spread() > b.spread(); });
  return out;
}

const Quantity* pool_waiting(const Snapshot& s, PoolKind kind, std::string* name) {
  for (const auto& [pool, q] : s.pools)
    if (pool_kind(pool) == kind) {
      if (name) *name = pool;
      return &q;
    }
  return nullptr;
}

void add_fleet_quantities(Snapshot& s) {
  // Time per transferred MB: the link's speed whatever the prompt length.
  const Quantity* transfer = s.find(dialect::Role::kKvTransfer);
  const Quantity* bytes = s.find(SignalId::kKvTransferBytes);
  if (transfer && bytes) {
    Quantity q;
    q.metric = transfer->metric + " / (" + bytes->metric + " / 1e6)";
    q.unit = "s/MB";
    auto per_mb = [](const WindowStat& t, const WindowStat& b) {
      WindowStat w;
      if (t.has_data() && b.mean > 0) w.mean = t.mean / (b.mean / 1e6);
      w.count = std::min(t.count, b.count);
      return w;
    };
    q.baseline = per_mb(transfer->baseline, bytes->baseline);
    q.incident = per_mb(transfer->incident, bytes->incident);
    s.set(SignalId::kKvTransferTimePerMb, std::move(q));
  }
  // One llm-d InferencePool holds prefill and decode pods: their waiting, from the per-pod queues.
  bool pools_named = false;
  for (const auto& [pool, q] : s.pools) pools_named |= pool_kind(pool) != PoolKind::kOther;
  if (!pools_named) {
    std::map<std::string, std::pair<Quantity, int>> derived;
    for (const auto& [key, q] : s.endpoints) {
      auto [pool, endpoint] = split_endpoint_key(key);
      const PoolKind kind = pool_kind(endpoint);
      if (kind == PoolKind::kOther || q.unit != "requests") continue;
      auto& [sum, n] = derived[kind == PoolKind::kPrefill ? "prefill" : "decode"];
      fleet_sum_into(sum.baseline, q.baseline, n == 0);
      fleet_sum_into(sum.incident, q.incident, n == 0);
      sum.metric = "sum of " + q.metric + " over the pool's " + std::string(kind == PoolKind::kPrefill ? "prefill" : "decode") + " endpoints";
      sum.unit = q.unit;
      ++n;
    }
    for (auto& [name, entry] : derived) s.pools[name] = std::move(entry.first);
  }
  const std::vector<EndpointSpread> spreads = endpoint_spreads(s);
  if (!spreads.empty()) {
    const EndpointSpread& top = spreads.front();
    Quantity q;
    q.metric = "max / mean of " + top.metric + " in pool " + top.group;
    q.unit = "ratio";
    q.incident.mean = top.spread();
    q.incident.count = top.peers;
    q.baseline.mean = top.baseline_spread;
    q.baseline.count = top.peers;
    s.set(SignalId::kEndpointLoadSpread, std::move(q));
  }
}

}  // namespace inferscope::doctor
