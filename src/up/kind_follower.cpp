// File: kind_follower.cpp
#include "up/kind_follower.h"

#include <algorithm>

#include "dialect/dialect.h"
#include "dialect/promql.h"
#include "promapi/prometheus_client.h"
#include "up/stack_status.h"

namespace inferscope::up {
namespace {

// kListed bounds how many names one event line lists.
constexpr std::size_t kListed = 6;

std::string list_names(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kListed; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kListed) out += " and " + std::to_string(names.size() - kListed) + " more";
  return out;
}

// speaks reports whether `family` carries one of the name prefixes of the kinds in `kinds`. The
// `_created` families Python's prometheus_client adds beside each counter and histogram say
// nothing its own family does not.
bool speaks(const std::string& family, const std::vector<std::string>& kinds) {
  if (family.ends_with("_created")) return false;
  for (const std::string& kind : kinds) {
    const auto id = dialect::parse_dialect(kind);
    if (!id) continue;
    for (std::string_view prefix : dialect::dialect(*id).prefixes) {
      if (family.starts_with(prefix)) return true;
    }
  }
  return false;
}

// family_changes says which families of the kinds involved appeared and disappeared (the rest of
// an exposition, process_* and the like, says nothing about its kind).
std::string family_changes(const std::set<std::string>& before, const std::set<std::string>& after,
                           const std::vector<std::string>& kinds) {
  std::vector<std::string> gained;
  std::vector<std::string> lost;
  for (const std::string& f : after) {
    if (!before.contains(f) && speaks(f, kinds)) gained.push_back(f);
  }
  for (const std::string& f : before) {
    if (!after.contains(f) && speaks(f, kinds)) lost.push_back(f);
  }
  return "families gained: " + list_names(gained) + "; lost: " + list_names(lost);
}

std::string not_answering(std::chrono::system_clock::time_point since) {
  return "kind unknown yet (not answering since " + format_utc(since) + ")";
}

}  // namespace

KindFollower::KindFollower(config::StackConfig config, std::vector<std::string> followed, const UpRules& rules,
                           KindFollowerHooks hooks, KindFollowerOptions options)
    : config_(std::move(config)), hooks_(std::move(hooks)), options_(options) {
  snapshot_.dialects = rules.dialects;
  snapshot_.missing_alerts = rules.missing_alerts;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& job : followed) {
    const auto it = std::find_if(config_.targets.begin(), config_.targets.end(),
                                 [&](const config::TargetConfig& t) { return t.name == job; });
    if (it == config_.targets.end()) continue;
    Followed f;
    f.index = static_cast<std::size_t>(it - config_.targets.begin());
    f.backoff = options_.interval;
    f.next_probe = start + options_.interval;
    if (const auto probe = rules.probes.find(job); probe != rules.probes.end()) {
      f.families = probe->second.families;
      if (it->kind == config::kAutoKind) {
        if (probe->second.answered) {
          f.note = "kind unknown yet (" + probe->second.error + ")";
        } else {
          f.silent_since = std::chrono::system_clock::now();
          f.note = not_answering(*f.silent_since);
        }
      }
    }
    if (!f.note.empty()) snapshot_.notes[job] = f.note;
    followed_.push_back(std::move(f));
  }
}

KindFollower::~KindFollower() { stop(); }

void KindFollower::start() {
  if (followed_.empty() || thread_.joinable()) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, options_.interval, [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      tick(std::chrono::steady_clock::now());
      lock.lock();
    }
  });
}

void KindFollower::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

KindSnapshot KindFollower::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

void KindFollower::tick(std::chrono::steady_clock::time_point now) {
  for (Followed& f : followed_) {
    const std::string& job = config_.targets[f.index].name;
    const std::optional<std::set<std::string>> names = hooks_.scraped_names(job);
    if (config_.targets[f.index].kind == config::kAutoKind) {
      follow_unknown(f, names, now);
    } else {
      follow_known(f, names);
    }
    std::lock_guard lock(mutex_);
    if (f.note.empty()) {
      snapshot_.notes.erase(job);
    } else {
      snapshot_.notes[job] = f.note;
    }
  }
}

void KindFollower::follow_unknown(Followed& f, const std::optional<std::set<std::string>>& names,
                                  std::chrono::steady_clock::time_point now) {
  // Prometheus holding series of the job means the target answered its scrape: probe at once.
  const bool scraped = names && !names->empty() && names != f.last_names;
  if (names) f.last_names = names;
  if (now < f.next_probe && !scraped) return;
  const config::TargetConfig& target = config_.targets[f.index];
  const TargetProbe probe = hooks_.probe(target, std::string(config::kAutoKind));
  if (probe.kind) {
    if (switch_kind(f, *probe.kind, "")) {
      f.families = probe.families;
      f.expected_missing.reset();
      f.silent_since.reset();
      f.note.clear();
      return;
    }
  } else if (!probe.answered) {
    if (!f.silent_since) f.silent_since = std::chrono::system_clock::now();
    f.note = not_answering(*f.silent_since);
  } else {
    f.silent_since.reset();
    f.note = "kind unknown yet (" + probe.error + ")";
  }
  f.backoff = std::min(f.backoff * 2, std::max(options_.max_backoff, options_.interval));
  f.next_probe = now + f.backoff;
}

void KindFollower::follow_known(Followed& f, const std::optional<std::set<std::string>>& names) {
  if (!names) return;
  const bool changed = f.last_names && *names != *f.last_names;
  f.last_names = names;
  // No names: the target is down (its series went stale); InferscopeTargetDown speaks for it.
  if (!changed || names->empty()) return;
  const config::TargetConfig& target = config_.targets[f.index];
  const std::string kind = target.kind;
  const TargetProbe probe = hooks_.probe(target, kind);
  if (!probe.answered) return;
  if (probe.kind && *probe.kind != kind) {
    const std::string detail = " (was " + kind + "; " + family_changes(f.families, probe.families, {kind, *probe.kind}) + ")";
    if (switch_kind(f, *probe.kind, detail)) {
      f.families = probe.families;
      f.expected_missing.reset();
      f.note.clear();
    }
    return;
  }
  const std::string job = target.name;
  if (!probe.kind) {
    const std::string note = "metrics match no known dialect any more: its " + kind + " rules stay";
    if (f.note != note) {
      hooks_.print("target " + job + ": " + probe.error + " (" + family_changes(f.families, probe.families, {kind}) +
                   "); keeping its " + kind + " rules: InferscopeLatencyMetricsAbsent fires while its latency "
                   "metrics are gone");
      f.note = note;
    }
    f.families = probe.families;
    return;
  }
  // Same kind. Its rules already read the older names the dialect table knows, so regenerating
  // them would change nothing; what changed is worth a line when expected metrics come or go.
  if (f.expected_missing && probe.expected_missing != *f.expected_missing) {
    hooks_.print("target " + job + ": " + kind + " metrics changed (" +
                 family_changes(f.families, probe.families, {kind}) + "); expected " + kind +
                 " metrics missing now: " + list_names(probe.expected_missing) + "; its " + kind +
                 " rules stay (InferscopeLatencyMetricsAbsent fires while a latency metric is missing)");
  }
  f.expected_missing = probe.expected_missing;
  f.families = probe.families;
  f.note = probe.expected_missing.empty() ? "" : "lacks expected " + kind + " metrics: " + list_names(probe.expected_missing);
}

bool KindFollower::switch_kind(Followed& f, const std::string& kind, const std::string& detail) {
  config::TargetConfig& target = config_.targets[f.index];
  const std::string previous = target.kind;
  target.kind = kind;
  auto rules = generate_up_rules(config_);
  Result<void> applied = rules ? hooks_.apply(config_, rules->files) : Result<void>(rules.error());
  if (!applied) {
    target.kind = previous;
    hooks_.print("target " + target.name + ": detected " + kind + " but cannot load its rules: " +
                 applied.error().message);
    return false;
  }
  {
    std::lock_guard lock(mutex_);
    snapshot_.dialects = rules->dialects;
    snapshot_.missing_alerts = rules->missing_alerts;
  }
  hooks_.print("target " + target.name + ": detected " + kind + ", " + std::to_string(rules->alert_counts[target.name]) +
               " alerts" + detail);
  return true;
}

std::optional<std::set<std::string>> prometheus_scraped_names(const std::string& prometheus_url, const std::string& job) {
  auto client = promapi::PrometheusClient::create(prometheus_url, {.timeout = std::chrono::seconds(3)});
  if (!client) return std::nullopt;
  auto result = client->query("count by (__name__) ({job=" + dialect::promql_string(job) + "})");
  if (!result) return std::nullopt;
  std::set<std::string> names;
  for (const promapi::Series& s : result->series) {
    const auto name = s.labels.find("__name__");
    if (name == s.labels.end()) continue;
    const std::string& n = name->second;
    // Only what the target exposes: not Prometheus' per-scrape series, not up's own rules' output.
    if (n == "up" || n.starts_with("scrape_") || n.starts_with("ALERTS") || n.starts_with("inferscope:")) continue;
    names.insert(n);
  }
  return names;
}

}  // namespace inferscope::up
