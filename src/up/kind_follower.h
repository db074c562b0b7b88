// File: kind_follower.h
// KindFollower keeps the kind of each `auto` target current while `inferscope up` runs, so a
// server that starts after up (vLLM answers /metrics only once its weights are loaded) or is
// upgraded into other metric names gets the alert rules of what it speaks now, without a restart.
//   * kind unknown: probe the target (one bounded scrape) with back-off, starting at the interval
//     and doubling up to max_backoff; at once when Prometheus starts holding series of the job
//     (it scraped the target). Once a probe detects a dialect: regenerate the rules, reload
//     Prometheus, print "target demo: detected vllm, 17 alerts".
//   * kind known: each interval, ask Prometheus which metric names the job has (what it scrapes
//     anyway); only when that set changes, probe the target once. A probe that detects another
//     dialect regenerates and reloads ("... detected vllm, 17 alerts (was inferscope; families
//     gained: ...; lost: ...)"); one that finds the kind's expected metrics missing, or matching no
//     dialect any more, keeps the rules (InferscopeLatencyMetricsAbsent fires meanwhile) and says so.
// Targets with an explicit kind are never probed. Example:
//   KindFollower f(config, rules, hooks, {.interval = 5s}); f.start(); ... f.snapshot(); f.stop();
// Thread-safe: snapshot() from any thread while the follower's own thread runs tick().
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <inferscope/common/result.h>

#include "up/generated_files.h"
#include "config/stack_config.h"
#include "up/up_rules.h"

namespace inferscope::up {

// KindFollowerHooks are the follower's ways out; up wires the real ones (up_command.cpp), tests fakes.
struct KindFollowerHooks {
  // probe scrapes a target once (probe_target).
  std::function<TargetProbe(const config::TargetConfig&, const std::string& expected_kind)> probe;
  // scraped_names returns the metric names Prometheus holds now for a job (up, scrape_* and rule
  // output left out; empty while the target is down), or nullopt when Prometheus cannot be asked.
  std::function<std::optional<std::set<std::string>>(const std::string& job)> scraped_names;
  // apply writes the files for the config and loads the rules (MonitoringStack::apply_rules).
  std::function<Result<void>(const config::StackConfig&, const std::vector<RuleFile>&)> apply;
  // print prints one event line (without the "inferscope up: " prefix).
  std::function<void(const std::string&)> print;
};

struct KindFollowerOptions {
  std::chrono::milliseconds interval{std::chrono::seconds(5)};      // the scrape interval
  std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};  // between probes of an unknown kind
};

// KindSnapshot is what `up --status` and the dashboard show per target.
struct KindSnapshot {
  std::map<std::string, std::string> dialects;                     // job -> kind its rules use
  std::map<std::string, std::vector<std::string>> missing_alerts;  // job -> alerts it cannot have
  // notes: job -> "kind unknown yet (not answering since 2026-12-01T18:00:03Z)" and the like;
  // only for targets whose kind is unknown or whose metrics no longer fit it.
  std::map<std::string, std::string> notes;
};

class KindFollower {
 public:
  // `config` has the kinds as settled at start (make_up_rules), `followed` the names of the
  // targets whose kind was `auto` in the config, `rules` what make_up_rules produced.
  KindFollower(config::StackConfig config, std::vector<std::string> followed, const UpRules& rules, KindFollowerHooks hooks,
               KindFollowerOptions options);
  ~KindFollower();
  KindFollower(const KindFollower&) = delete;
  KindFollower& operator=(const KindFollower&) = delete;

  // start runs tick() every interval on the follower's thread (nothing to do: no thread).
  void start();
  // stop ends the thread (waits for a tick in progress). Idempotent.
  void stop();
  // tick does one round for every followed target (the thread's body; tests call it directly).
  void tick(std::chrono::steady_clock::time_point now);

  KindSnapshot snapshot() const;

 private:
  struct Followed {
    std::size_t index = 0;  // into config_.targets
    std::optional<std::set<std::string>> last_names;
    std::chrono::steady_clock::time_point next_probe{};
    std::chrono::milliseconds backoff{0};
    std::set<std::string> families;                            // at the probe that settled the kind
    std::optional<std::vector<std::string>> expected_missing;  // of the kind, at the last probe
    std::string note;
    std::optional<std::chrono::system_clock::time_point> silent_since;  // not answering since
  };

  void follow_unknown(Followed& f, const std::optional<std::set<std::string>>& names,
                      std::chrono::steady_clock::time_point now);
  void follow_known(Followed& f, const std::optional<std::set<std::string>>& names);
  // switch_kind regenerates and applies the rules with the target's new kind; false (kind
  // reverted, error printed) when that fails.
  bool switch_kind(Followed& f, const std::string& kind, const std::string& detail);

  config::StackConfig config_;  // only the follower's thread changes it
  std::vector<Followed> followed_;
  KindFollowerHooks hooks_;
  KindFollowerOptions options_;
  mutable std::mutex mutex_;  // guards snapshot_ and stopping_
  KindSnapshot snapshot_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// prometheus_scraped_names asks Prometheus at `prometheus_url` for the metric names of `job`
// (count by (__name__)), leaving out up, scrape_* and what up's rules record (inferscope:*,
// ALERTS*); nullopt when the query fails.
std::optional<std::set<std::string>> prometheus_scraped_names(const std::string& prometheus_url, const std::string& job);

}  // namespace inferscope::up
