#include "doctor/sampled_roles.h"

#include "doctor/fleet_pools.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace inferscope::doctor {
namespace {

using dialect::Role;

// Increments turns cumulative values into per-step increases: a drop is a counter reset (count
// from zero). Like Prometheus' rate(), the first value seen is not an increase: a series that
// appears mid-range may have counted for long before anyone scraped it.
std::vector<double> increments(const std::vector<double>& values) {
  std::vector<double> out(values.size(), kNaN);
  double prev = kNaN;
  for (std::size_t j = 0; j < values.size(); ++j) {
    double v = values[j];
    if (std::isnan(v)) continue;
    if (!std::isnan(prev)) out[j] = v >= prev ? v - prev : v;
    prev = v;
  }
  return out;
}

// steps_in returns the grid indices j whose step (times[j-1], times[j]] lies in the window.
std::vector<std::size_t> steps_in(const std::vector<double>& times, TimeRange w) {
  std::vector<std::size_t> out;
  for (std::size_t j = 1; j < times.size(); ++j)
    if (times[j - 1] >= w.start - 1e-6 && times[j] <= w.end + 1e-6) out.push_back(j);
  return out;
}

std::vector<std::size_t> points_in(const std::vector<double>& times, TimeRange w) {
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < times.size(); ++j)
    if (times[j] > w.start - 1e-6 && times[j] <= w.end + 1e-6) out.push_back(j);
  return out;
}

WindowStat histogram_stat(const SampledRoles& s, const RoleSamples& r, TimeRange w) {
  WindowStat out;
  auto sums = increments(r.primary), counts = increments(r.secondary);
  std::map<double, std::vector<double>> bucket_inc;
  for (auto& [le, values] : r.buckets) bucket_inc[le] = increments(values);
  double total_sum = 0, total_count = 0;
  std::map<double, double> by_le;
  const auto steps = steps_in(s.times, w);
  constexpr std::size_t kChunks = 4;
  std::vector<std::map<double, double>> chunk_le(steps.size() >= kChunks ? kChunks : 0);
  std::vector<double> chunk_n(chunk_le.size(), 0);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::size_t j = steps[k];
    double c = counts[j], sm = sums[j];
    bool ok = !std::isnan(c) && !std::isnan(sm);
    out.intervals.push_back(ok && c > 0 ? sm / c : kNaN);
    out.interval_weights.push_back(ok ? c : 0);
    if (!ok) continue;
    total_sum += sm;
    total_count += c;
    const std::size_t chunk = chunk_le.empty() ? 0 : k * kChunks / steps.size();
    if (!chunk_le.empty()) chunk_n[chunk] += c;
    for (auto& [le, inc] : bucket_inc)
      if (!std::isnan(inc[j])) {
        by_le[le] += inc[j];
        if (!chunk_le.empty()) chunk_le[chunk][le] += inc[j];
      }
  }
  for (std::size_t i = 0; i < chunk_le.size(); ++i) {
    out.chunk_p50.push_back(chunk_n[i] > 0 ? histogram_quantile(0.5, chunk_le[i]) : kNaN);
    out.chunk_counts.push_back(chunk_n[i]);
  }
  out.count = total_count;
  if (total_count > 0) {
    out.mean = total_sum / total_count;
    out.p50 = histogram_quantile(0.5, by_le);
    out.p95 = histogram_quantile(0.95, by_le);
    out.p99 = histogram_quantile(0.99, by_le);
    // Upper bound of the highest bucket that gained observations.
    double prev = 0;
    for (auto& [le, c] : by_le) {
      if (c > prev && std::isfinite(le)) out.max = le;
      prev = c;
    }
  }
  return out;
}

WindowStat counter_stat(const SampledRoles& s, const RoleSamples& r, TimeRange w) {
  WindowStat out;
  auto inc = increments(r.primary);
  double total = 0, seconds = 0;
  bool any = false;
  for (std::size_t j : steps_in(s.times, w)) {
    double dt = s.times[j] - s.times[j - 1];
    if (std::isnan(inc[j]) || dt <= 0) {
      out.intervals.push_back(kNaN);
      continue;
    }
    any = true;
    total += inc[j];
    seconds += dt;
    out.intervals.push_back(inc[j] / dt);
  }
  if (any && seconds > 0) {
    out.mean = total / seconds;
    out.count = total;
  }
  return out;
}

WindowStat ratio_stat(const SampledRoles& s, const RoleSamples& r, TimeRange w) {
  WindowStat out;
  auto num = increments(r.primary), den = increments(r.secondary);
  double tn = 0, td = 0;
  for (std::size_t j : steps_in(s.times, w)) {
    bool ok = !std::isnan(num[j]) && !std::isnan(den[j]);
    out.intervals.push_back(ok && den[j] > 0 ? num[j] / den[j] : kNaN);
    out.interval_weights.push_back(ok ? den[j] : 0);
    if (!ok) continue;
    tn += num[j];
    td += den[j];
  }
  out.count = td;
  if (td > 0) out.mean = tn / td;
  return out;
}

// busy_stat: the busy share of CPUs from idle seconds (primary, mode="idle") and all seconds
// (secondary, every mode) counted by the same counters: 1 - idle increase / total increase.
WindowStat busy_stat(const SampledRoles& s, const RoleSamples& r, TimeRange w) {
  WindowStat out = ratio_stat(s, r, w);
  if (out.has_data()) out.mean = 1 - out.mean;
  for (double& v : out.intervals)
    if (!std::isnan(v)) {
      v = 1 - v;
      out.max = std::isnan(out.max) ? v : std::max(out.max, v);
    }
  return out;
}

WindowStat gauge_stat(const SampledRoles& s, const RoleSamples& r, TimeRange w) {
  WindowStat out;
  double total = 0;
  int n = 0;
  for (std::size_t j : points_in(s.times, w)) {
    double v = r.primary[j];
    out.intervals.push_back(v);
    out.interval_times.push_back(s.times[j]);
    if (std::isnan(v)) continue;
    total += v;
    ++n;
    out.max = std::isnan(out.max) ? v : std::max(out.max, v);
  }
  out.count = n;
  if (n > 0) out.mean = total / n;
  return out;
}

// ratio_of divides two signals interval by interval (error ratio, prefix hit rate).
Quantity ratio_of(const Quantity& num, const Quantity& den, std::string metric, std::string unit) {
  Quantity q;
  q.metric = std::move(metric);
  q.unit = std::move(unit);
  auto one = [](const WindowStat& n, const WindowStat& d) {
    WindowStat out;
    if (d.has_data() && d.mean > 0) out.mean = (n.has_data() ? n.mean : 0) / d.mean;
    out.count = d.count;
    for (std::size_t i = 0; i < d.intervals.size(); ++i) {
      double nv = i < n.intervals.size() && !std::isnan(n.intervals[i]) ? n.intervals[i] : 0;
      double dv = d.intervals[i];
      out.intervals.push_back(!std::isnan(dv) && dv > 0 ? nv / dv : kNaN);
      out.interval_weights.push_back(!std::isnan(dv) ? dv : 0);
    }
    return out;
  };
  q.baseline = one(num.baseline, den.baseline);
  q.incident = one(num.incident, den.incident);
  return q;
}

}  // namespace

double histogram_quantile(double q, const std::map<double, double>& cumulative_by_le) {
  if (cumulative_by_le.empty()) return kNaN;
  double total = cumulative_by_le.rbegin()->second;
  if (!(total > 0)) return kNaN;
  double rank = q * total;
  double lower_le = 0, lower_count = 0;
  double last_finite = 0;
  for (auto& [le, count] : cumulative_by_le) {
    if (count >= rank) {
      if (!std::isfinite(le)) return last_finite;
      if (count == lower_count) return le;
      return lower_le + (le - lower_le) * (rank - lower_count) / (count - lower_count);
    }
    lower_le = le;
    lower_count = count;
    if (std::isfinite(le)) last_finite = le;
  }
  return last_finite;
}

WindowStat window_stat(const SampledRoles& sampled, const RoleSamples& role, TimeRange window) {
  switch (role.spec.kind) {
    case RoleKind::kHistogram: return histogram_stat(sampled, role, window);
    case RoleKind::kCounter: return counter_stat(sampled, role, window);
    case RoleKind::kCounterRatio: return ratio_stat(sampled, role, window);
    case RoleKind::kBusyFromIdle: return busy_stat(sampled, role, window);
    case RoleKind::kGauge: return gauge_stat(sampled, role, window);
  }
  return {};
}

void add_derived_quantities(Snapshot& snap) {
  const Quantity* requests = snap.find(SignalId::kRequestRate);
  const Quantity* errors = snap.find(SignalId::kErrorRate);
  if (requests && !snap.find(SignalId::kErrorRatio)) {
    Quantity zero;
    std::string name = errors ? errors->metric : std::string("errors");
    name.append(" / ").append(requests->metric);
    snap.set(SignalId::kErrorRatio, ratio_of(errors ? *errors : zero, *requests, name, "ratio"));
  }
  const Quantity* client_errors = snap.find(SignalId::kClientErrorRate);
  if (requests && !snap.find(SignalId::kClientErrorRatio)) {
    Quantity zero;
    std::string name = client_errors ? client_errors->metric : std::string("4xx");
    name.append(" (4xx) / ").append(requests->metric);
    if (client_errors) snap.set(SignalId::kClientErrorRatio, ratio_of(*client_errors, *requests, name, "ratio"));
  }
  const Quantity* hits = snap.find(SignalId::kPrefixHits);
  const Quantity* queries = snap.find(SignalId::kPrefixQueries);
  if (hits && queries && !snap.find(SignalId::kPrefixHitRate))
  {
    std::string name = hits->metric;
    name.append(" / ").append(queries->metric);
    snap.set(SignalId::kPrefixHitRate, ratio_of(*hits, *queries, name, "ratio"));
  }
  const Quantity* accepted = snap.find(SignalId::kSpecAcceptedTokens);
  const Quantity* drafted = snap.find(SignalId::kSpecDraftTokens);
  if (accepted && drafted && !snap.find(SignalId::kSpecAcceptance)) {
    std::string name = accepted->metric;
    name.append(" / ").append(drafted->metric);
    snap.set(SignalId::kSpecAcceptance, ratio_of(*accepted, *drafted, name, "ratio"));
  }

  // Offered load: completions alone saturate at capacity, so add the growth of what is pending
  // (in flight, or running + waiting) over the window.
  if (requests && !snap.find(SignalId::kArrivalRate)) {
    const Quantity* in_flight = snap.find(SignalId::kInFlight);
    const Quantity* running = snap.find(SignalId::kRunning);
    const Quantity* waiting = snap.find(SignalId::kWaiting);
    auto growth = [](const WindowStat* w) {
      if (!w) return 0.0;
      double first = kNaN, last = kNaN;
      for (double v : w->intervals)
        if (!std::isnan(v)) {
          if (std::isnan(first)) first = v;
          last = v;
        }
      return std::isnan(first) ? 0.0 : last - first;
    };
    auto arrivals = [&](const WindowStat& done, bool incident) {
      WindowStat out = done;
      double seconds = incident ? snap.incident_end - snap.incident_start : snap.baseline_end - snap.baseline_start;
      if (!done.has_data() || !(seconds > 0)) return out;
      double g = in_flight ? growth(incident ? &in_flight->incident : &in_flight->baseline)
                           : growth(running ? (incident ? &running->incident : &running->baseline) : nullptr) +
                                 growth(waiting ? (incident ? &waiting->incident : &waiting->baseline) : nullptr);
      out.mean = std::max(0.0, done.mean + g / seconds);
      return out;
    };
    Quantity q = *requests;
    // Named as a quantity a reader can check, not as PromQL (it is not one).
    q.metric = "arrivals/s (rate of " + requests->metric + " + rise of " +
               (in_flight ? in_flight->metric : std::string("running + waiting")) + ")";
    q.baseline = arrivals(requests->baseline, false);
    q.incident = arrivals(requests->incident, true);
    snap.set(SignalId::kArrivalRate, q);
  }
  const Quantity* e2e = snap.find(SignalId::kE2e);
  // vLLM-style dialects: no front-end stage, but TTFT - queue - prefill is exactly that time.
  const Quantity* ttft = snap.find(SignalId::kTtft);
  const Quantity* queue = snap.find(Role::kQueue);
  const Quantity* prefill = snap.find(Role::kPrefill);
  if (!snap.find(Role::kPreprocess) && !snap.find(Role::kDependency) && ttft && queue && prefill) {
    Quantity pre;
    pre.metric = ttft->metric;
    pre.metric.append(" - ").append(queue->metric).append(" - ").append(prefill->metric);
    pre.unit.assign(1, 's');  // not = "s": g++ 12 issues a false -Wrestrict for that assignment here
    auto derive = [](const WindowStat& t, const WindowStat& q, const WindowStat& p) {
      WindowStat out;
      if (t.has_data() && q.has_data() && p.has_data()) {
        out.mean = std::max(0.0, t.mean - q.mean - p.mean);
        out.count = t.count;
      }
      return out;
    };
    pre.baseline = derive(ttft->baseline, queue->baseline, prefill->baseline);
    pre.incident = derive(ttft->incident, queue->incident, prefill->incident);
    snap.set(Role::kPreprocess, pre);
  }
  if (e2e) {
    for (auto& [name, stage] : snap.stages) {
      auto per_request = [](WindowStat& st, const WindowStat& whole) {
        if (st.has_data() && whole.count > 0) st.per_request = st.mean * st.count / whole.count;
        else if (whole.count > 0) st.per_request = 0;
      };
      // A job waits once before its request reaches the server: its wait per job is what it adds
      // to the e2e the user sees (NaN while no job started, as when no worker consumes).
      if (name == dialect::to_string(Role::kQueueWait)) {
        stage.baseline.per_request = stage.baseline.mean;
        stage.incident.per_request = stage.incident.mean;
        continue;
      }
      per_request(stage.baseline, e2e->baseline);
      per_request(stage.incident, e2e->incident);
    }
  }
  // A disaggregated fleet's time per transferred MB, per-kind pools of one llm-d pool, load spread.
  add_fleet_quantities(snap);
}

Snapshot build_snapshot(const SampledRoles& sampled, TimeRange baseline, TimeRange incident) {
  Snapshot snap;
  snap.baseline_start = baseline.start;
  snap.baseline_end = baseline.end;
  snap.incident_start = incident.start;
  snap.incident_end = incident.end;
  if (sampled.times.size() > 1)
    snap.interval_s = (sampled.times.back() - sampled.times.front()) / static_cast<double>(sampled.times.size() - 1);
  for (const auto& role : sampled.roles) {
    Quantity q;
    q.metric = role.metric;
    q.unit = role.spec.unit;
    q.baseline = window_stat(sampled, role, baseline);
    q.incident = window_stat(sampled, role, incident);
    switch (role.spec.group) {
      case RoleGroup::kLatency: snap.latency[role.spec.id] = std::move(q); break;
      case RoleGroup::kStage: snap.stages[role.spec.id] = std::move(q); break;
      case RoleGroup::kSignal: snap.signals[role.spec.id] = std::move(q); break;
      case RoleGroup::kDependency: snap.dependencies[role.key] = std::move(q); break;
      case RoleGroup::kPool: snap.pools[role.key] = std::move(q); break;
      case RoleGroup::kEndpoint: snap.endpoints[endpoint_key(role.group, role.key)] = std::move(q); break;
    }
  }
  // A stage without observations in either window did not happen; keep the table short.
  for (auto it = snap.stages.begin(); it != snap.stages.end();) {
    if (it->second.baseline.count == 0 && it->second.incident.count == 0) it = snap.stages.erase(it);
    else ++it;
  }
  add_derived_quantities(snap);
  return snap;
}

}  // namespace inferscope::doctor
