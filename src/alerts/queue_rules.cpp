// The alerts of one queue target (a redis target of up: src/queue's inferscope_queue_* series,
// scraped from up's own API under the target's job). Series a system cannot know are absent
// (docs/queues.md), so every expression is written to stay silent on absence rather than to read
// it as 0: "no job started" is `unless` a start was seen, never `== 0` over a missing counter.
#include "alerts/queue_rules.h"

#include <fmt/format.h>

#include "alerts/rule_group_writer.h"
#include "alerts/target_rules.h"
#include "common/prom_duration.h"
#include "dialect/promql.h"

namespace inferscope::alerts {
namespace {

constexpr const char* kPerQueue = "job, system, queue";

std::string duration_text(double seconds) {
  return common::format_prom_duration(std::chrono::milliseconds(static_cast<long long>(seconds * 1000 + 0.5)));
}

std::string where_queue() { return "queue {{ $labels.queue }} ({{ $labels.system }}) of {{ $labels.job }}"; }

}  // namespace

QueueRules build_queue_rules(const std::string& job, const RulesConfig& config) {
  QueueRules out;
  RuleGroupWriter group("inferscope-queue-" + job, config.evaluation_interval);
  const std::string j = "job=" + dialect::promql_string(job);
  // The target's prometheus-redis-exporter is its own job; alerts on it carry the target's job.
  const std::string exporter_j = "job=" + dialect::promql_string(redis_exporter_job(job));
  const std::string w = common::format_prom_duration(config.rate_window);
  const SloThresholds& slo = config.slo;
  group.comment("Job " + job + ": a redis target, collected by up's queue collector (src/queue).");
  const auto add = [&](AlertRule rule) {
    rule.for_duration = alert_for(config, rule.name);
    group.alert(rule);
  };
  add({.name = kTargetDown,
       .expr = fmt::format("up{{{0}}} == 0 or inferscope_queue_up{{{0}}} == 0 or up{{{1}}} == 0", j, exporter_j),
       .severity = "critical",
       .labels = {{"job", job}},
       .summary = "Queue target " + job + " is down",
       .description = "No queue data for " + job + " (value {{ $value }}): up's collector cannot reach or "
                      "authenticate to Redis, or Prometheus cannot scrape up's /queues/" + job + "/metrics or the "
                      "target's redis exporter (job " + redis_exporter_job(job) + ").",
       .runbook = "`inferscope up --status` shows the collector's last error (unreachable, auth) for the target and "
                  "the exporter child; check that redis-server runs and its password_file/password_env."});
  // No progress: jobs wait, none was seen starting or ending in the window and no worker is busy.
  // Plain lists are left out: LLEN alone cannot tell a consumed list from an abandoned one.
  add({.name = kQueueNotConsumed,
       .expr = fmt::format(
           "(sum by ({1}) (inferscope_queue_depth{{{0},system!=\"list\"}}) > 0)"
           " unless on ({1}) (sum by ({1}) (increase(inferscope_queue_wait_seconds_count{{{0}}}[{2}])) > 0)"
           " unless on ({1}) (sum by ({1}) (increase(inferscope_queue_jobs_total{{{0}}}[{2}])) > 0)"
           " unless on (job, system) (sum by (job, system) (inferscope_queue_workers{{{0},state=\"busy\"}}) > 0)",
           j, kPerQueue, w),
       .severity = "critical",
       .summary = where_queue() + " is not consumed",
       .description = "{{ $value }} jobs wait and no worker started or finished one in the last " + w +
                      ", and none is busy: the workers are gone, stuck or scaled to zero.",
       .runbook = "Check the workers (inferscope_queue_workers by state, `inferscope up --status`): restart crashed "
                  "workers, look for a stuck one (stale), scale up from zero. The model server behind the queue "
                  "sits idle meanwhile."});
  add({.name = kQueueBacklogGrowing,
       .expr = fmt::format("(60 * sum by ({1}) (deriv(inferscope_queue_depth{{{0}}}[{2}])) > 0)"
                           " and on ({1}) (sum by ({1}) (inferscope_queue_depth{{{0}}}) > {3})"
                           " unless on ({1}) (sum by ({1}) (deriv(inferscope_queue_oldest_age_seconds{{{0}}}[{2}])) <= 0)",
                           j, kPerQueue, w, dialect::format_number(slo.queue_depth)),
       .severity = "warning",
       .summary = where_queue() + " is backing up",
       .description = "The queue grows by {{ $value | humanize }} jobs/min while over " +
                      dialect::format_number(slo.queue_depth) + " jobs, and its oldest job keeps ageing.",
       .runbook = "Arrivals outpace completions: compare busy workers with all workers (all busy: add workers or "
                  "model-server capacity; idle ones: they are stuck) and the model server's latency (a slower "
                  "server drains the queue more slowly); `inferscope doctor` names the cause."});
  add({.name = kQueueWaitHigh,
       .expr = fmt::format("max by ({1}) (inferscope_queue_oldest_age_seconds{{{0}}}) > {3}"
                           " or histogram_quantile(0.95, sum by ({1}, le) (rate(inferscope_queue_wait_seconds_bucket{{{0}}}[{2}]))) > {3}",
                           j, kPerQueue, w, dialect::format_number(slo.queue_wait_seconds)),
       .severity = "warning",
       .summary = "Jobs of " + where_queue() + " wait too long",
       .description = "The oldest waiting job (or the wait p95) is {{ $value | humanizeDuration }} (slo.queue_wait " +
                      duration_text(slo.queue_wait_seconds) + ").",
       .runbook = "Waiting time adds to every user's latency before the model server sees the request: check depth "
                  "and workers (backlog or not consumed), then the model server's own latency."});
  add({.name = kQueueJobFailuresHigh,
       .expr = fmt::format("sum by ({1}) (increase(inferscope_queue_jobs_total{{{0},outcome=\"failed\"}}[{2}]))"
                           " / sum by ({1}) (increase(inferscope_queue_jobs_total{{{0}}}[{2}])) > {3}",
                           j, kPerQueue, w, dialect::format_number(slo.queue_failure_ratio)),
       .severity = "warning",
       .summary = "Jobs of " + where_queue() + " fail",
       .description = "{{ $value | humanizePercentage }} of the jobs that ended in the last " + w +
                      " failed (threshold " + dialect::format_number(slo.queue_failure_ratio * 100) + " %).",
       .runbook = "Read the failed jobs' exceptions (RQ: the failed job registry, `rq info`; Celery: the worker "
                  "log); errors from the model server show in its own error ratio too."});
  add({.name = kQueueWorkersStale,
       .expr = fmt::format("sum by (job, system) (inferscope_queue_workers{{{0},state=\"stale\"}}) > 0", j),
       .severity = "warning",
       .summary = "{{ $value }} {{ $labels.system }} workers of {{ $labels.job }} are stale",
       .description = "{{ $value }} workers stopped sending heartbeats (killed, OOM, hung) but are still registered: "
                      "jobs they held may never finish.",
       .runbook = "Find the dead or hung worker processes and restart them; RQ re-queues an abandoned job only when "
                  "a live worker cleans its registries up."});
  // Evictions in a Redis that holds queues drop jobs (or their hashes) without a trace: any is too
  // many. redis_evicted_keys_total is the exporter's counter of INFO stats evicted_keys.
  add({.name = kRedisEvictingKeys,
       .expr = fmt::format("increase(redis_evicted_keys_total{{{0}}}[{1}]) > 0", exporter_j, w),
       .severity = "critical",
       .labels = {{"job", job}},
       .summary = "Redis of queue target " + job + " is evicting keys",
       .description = "Redis evicted {{ $value | humanize }} keys in the last " + w +
                      " (maxmemory reached with an eviction policy): queued jobs and job hashes can vanish silently.",
       .runbook = "Raise maxmemory or free memory (redis_memory_used_bytes vs redis_memory_max_bytes of job " +
                  redis_exporter_job(job) + "), set maxmemory-policy noeviction for a Redis that holds queues, "
                  "and check which jobs were lost (RQ: job hashes missing for queued IDs)."});
  out.group_text = group.text();
  return out;
}

}  // namespace inferscope::alerts
