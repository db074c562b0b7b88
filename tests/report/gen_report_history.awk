# Writes OpenMetrics text with timestamps for promtool tsdb create-blocks-from openmetrics: 48 h
# (plus 10 min) of one inferscope serve target (job="sim", model="sim-a") ending at `end` (a whole
# hour), with a KNOWN daily load profile and one known slow hour. Truth for the report test:
# - request rate by hour of day (UTC), req/s: 00-01 4, 02-05 1, 06-07 4, 08-13 6, 14 10, 15-19 6,
#   20-23 4 (peak 14:00; below 30 % of the peak: 02:00-06:00); the period before `end - 24h` runs
#   at 0.8 x that profile;
# - 1 % of requests fail (finish_reason="error", status_class="5xx");
# - the hour of day `slow_hour` inside the last 24 h has every decode step `slow` times slower
#   (decode_slowdown: e2e, decode, TPOT, ITL up; TTFT unchanged);
# - GPU utilization (DCGM_FI_DEV_GPU_UTIL, percent) = 8 x the request rate;
# - a llama.cpp job "llama": 64 generated tokens/s at 20 ms per token (counters, no histograms);
# - a queue target "jobs" (inferscope_queue_*): see the queue block below.
# Samples every 60 s, every 15 s from 2 h before the slow hour to its end (the doctor's windows).
# Usage: awk -v end=UNIX -v slow_hour=10 -v slow=3 -f gen_report_history.awk > history.om
function hour_of(t) { return int((t % 86400) / 3600) }
function load(t) { return profile[hour_of(t)] * (t < end - 86400 ? 0.8 : 1) }
function cdf(le, m) { return 1 - exp(-le / m) }
function hist(name, labels, i, m1, m2, per,    b, le) {
  for (b = 1; b <= nb; b++) {
    le = bounds[b]
    printf "%s_bucket{%sle=\"%s\"} %.0f %d\n", name, labels, le, per * (N0[i] * cdf(le, m1) + N1[i] * cdf(le, m2)), T[i]
  }
  printf "%s_bucket{%sle=\"+Inf\"} %.0f %d\n", name, labels, per * (N0[i] + N1[i]), T[i]
  printf "%s_sum{%s} %.4f %d\n", name, substr(labels, 1, length(labels) - 1), per * (N0[i] * m1 + N1[i] * m2), T[i]
  printf "%s_count{%s} %.0f %d\n", name, substr(labels, 1, length(labels) - 1), per * (N0[i] + N1[i]), T[i]
}
BEGIN {
  split("4 4 1 1 1 1 4 4 6 6 6 6 6 6 10 6 6 6 6 6 4 4 4 4", p, " ")
  for (h = 0; h < 24; h++) profile[h] = p[h + 1]
  nb = split("0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 30", bounds, " ")
  start = end - 48 * 3600 - 600
  # The slow hour: the occurrence of slow_hour in [end - 24h, end).
  slow_start = end - 86400 + ((slow_hour - hour_of(end - 86400) + 24) % 24) * 3600
  slow_end = slow_start + 3600
  # Time grid and cumulative request counts in the normal (N0) and slow (N1) regimes.
  M = 0; T[0] = start; N0[0] = 0; N1[0] = 0
  while (T[M] < end) {
    t = T[M]
    step = (t >= slow_start - 7200 && t < slow_end) ? 15 : 60
    M++; T[M] = t + step
    n = load(t) * step
    if (t >= slow_start && t < slow_end) { N0[M] = N0[M - 1]; N1[M] = N1[M - 1] + n }
    else { N0[M] = N0[M - 1] + n; N1[M] = N1[M - 1] }
  }
  L = "job=\"sim\",instance=\"sim:8000\",model=\"sim-a\","
  n_stages = split("preprocess queue prefill decode postprocess send", stages, " ")
  split("0.0001 0.003 0.032 0.22 0.0004 0.0001", stage_mean, " ")
  print "# TYPE inferscope_request_duration_seconds histogram"
  for (i = 0; i <= M; i++) hist("inferscope_request_duration_seconds", L "route=\"chat\",", i, 0.26, 0.26 + 0.22 * (slow - 1), 1)
  print "# TYPE inferscope_stage_duration_seconds histogram"
  for (s = 1; s <= n_stages; s++) for (i = 0; i <= M; i++)
    hist("inferscope_stage_duration_seconds", L "stage=\"" stages[s] "\",", i, stage_mean[s],
         stage_mean[s] * (stages[s] == "decode" ? slow : 1), 1)
  print "# TYPE inferscope_time_per_output_token_seconds histogram"
  for (i = 0; i <= M; i++) hist("inferscope_time_per_output_token_seconds", L, i, 0.007, 0.007 * slow, 1)
  print "# TYPE inferscope_inter_token_latency_seconds histogram"
  for (i = 0; i <= M; i++) hist("inferscope_inter_token_latency_seconds", L, i, 0.007, 0.007 * slow, 32)
  print "# TYPE inferscope_time_to_first_token_seconds histogram"
  for (i = 0; i <= M; i++) hist("inferscope_time_to_first_token_seconds", L, i, 0.035, 0.035, 1)
  print "# TYPE inferscope_requests counter"
  for (i = 0; i <= M; i++) {
    n = N0[i] + N1[i]
    printf "inferscope_requests_total{%sroute=\"chat\",status_class=\"2xx\",finish_reason=\"length\"} %.0f %d\n", L, 0.99 * n, T[i]
    printf "inferscope_requests_total{%sroute=\"chat\",status_class=\"5xx\",finish_reason=\"error\"} %.0f %d\n", L, 0.01 * n, T[i]
  }
  print "# TYPE inferscope_prompt_tokens counter"
  for (i = 0; i <= M; i++) printf "inferscope_prompt_tokens_total{%s} %.0f %d\n", substr(L, 1, length(L) - 1), 1016 * (N0[i] + N1[i]), T[i]
  print "# TYPE inferscope_generation_tokens counter"
  for (i = 0; i <= M; i++) printf "inferscope_generation_tokens_total{%s} %.0f %d\n", substr(L, 1, length(L) - 1), 32 * (N0[i] + N1[i]), T[i]
  split("inferscope_request_prompt_tokens inferscope_request_generation_tokens", lengths, " ")
  split("1016 32", length_mean, " ")
  for (k = 1; k <= 2; k++) { print "# TYPE " lengths[k] " histogram"
    for (i = 0; i <= M; i++) { n = N0[i] + N1[i]
      printf "%s_bucket{%sle=\"+Inf\"} %.0f %d\n", lengths[k], L, n, T[i]
      printf "%s_sum{%s} %.0f %d\n", lengths[k], substr(L, 1, length(L) - 1), n * length_mean[k], T[i]
      printf "%s_count{%s} %.0f %d\n", lengths[k], substr(L, 1, length(L) - 1), n, T[i] } }
  split("inferscope_engine_requests_running inferscope_engine_requests_waiting inferscope_kv_cache_usage_ratio inferscope_engine_busy_ratio", gauges, " ")
  for (g = 1; g <= 4; g++) { print "# TYPE " gauges[g] " gauge"
    for (i = 0; i <= M; i++) { t = T[i]; f = (t > slow_start && t <= slow_end) ? slow : 1
      v = g == 1 ? 2 * f : g == 2 ? 0.1 * f : g == 3 ? 0.3 * f : 0.9
      printf "%s{%s} %.3f %d\n", gauges[g], substr(L, 1, length(L) - 1), v, t } }
  print "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"
  for (i = 0; i < M; i++) printf "DCGM_FI_DEV_GPU_UTIL{job=\"sim\",instance=\"sim:9400\",gpu=\"0\"} %.1f %d\n", 8 * load(T[i]), T[i + 1]
  # up's queue collector on a redis target "jobs": queue "default" (rq) holds 2 x the load in jobs
  # (peak 20 at 14:00, 16 the day before); one job per request starts after 0.5-1 s in the period
  # before `end - 24h` (wait p95 0.975 s) and 1-2.5 s after (wait p95 2.425 s); queue "bulk" (a plain
  # list) holds 3 jobs and has no wait series (LLEN cannot tell).
  Q = "job=\"jobs\",instance=\"up:9300\","
  print "# TYPE inferscope_queue_depth gauge"
  for (i = 0; i <= M; i++) printf "inferscope_queue_depth{%squeue=\"default\",system=\"rq\"} %.0f %d\n", Q, 2 * load(T[i]), T[i]
  for (i = 0; i <= M; i++) printf "inferscope_queue_depth{%squeue=\"bulk\",system=\"list\"} 3 %d\n", Q, T[i]
  print "# TYPE inferscope_queue_wait_seconds histogram"
  QW = Q "queue=\"default\",system=\"rq\""
  for (i = 0; i <= M; i++) {
    n = N0[i] + N1[i]
    if (T[i] <= end - 86400) n_before = n
    printf "inferscope_queue_wait_seconds_bucket{%s,le=\"0.5\"} 0 %d\n", QW, T[i]
    printf "inferscope_queue_wait_seconds_bucket{%s,le=\"1\"} %.0f %d\n", QW, n_before, T[i]
    printf "inferscope_queue_wait_seconds_bucket{%s,le=\"2.5\"} %.0f %d\n", QW, n, T[i]
    printf "inferscope_queue_wait_seconds_bucket{%s,le=\"+Inf\"} %.0f %d\n", QW, n, T[i]
  }
  for (i = 0; i <= M; i++) { n = N0[i] + N1[i]; if (T[i] <= end - 86400) n_before = n
    printf "inferscope_queue_wait_seconds_sum{%s} %.2f %d\n", QW, 0.75 * n_before + 1.75 * (n - n_before), T[i] }
  for (i = 0; i <= M; i++) printf "inferscope_queue_wait_seconds_count{%s} %.0f %d\n", QW, N0[i] + N1[i], T[i]
  # A second job: llama.cpp (counters only, no model label), steady 64 generated tokens/s at
  # 20 ms per token and 2,000 prompt tokens/s at 0.25 ms per token.
  split("llamacpp:tokens_predicted llamacpp:tokens_predicted_seconds llamacpp:prompt_tokens llamacpp:prompt_seconds", lc, " ")
  split("64 1.28 2000 0.5", lc_rate, " ")
  for (k = 1; k <= 4; k++) { print "# TYPE " lc[k] " counter"
    for (i = 0; i <= M; i++) printf "%s_total{job=\"llama\",instance=\"llama:8080\"} %.3f %d\n", lc[k], lc_rate[k] * (T[i] - start), T[i] }
  print "# EOF"
}
