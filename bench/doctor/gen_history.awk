# Writes OpenMetrics text with timestamps: `hours` of inferscope serve metrics scraped every
# `step` seconds ending at `end`, steady for all but the last hour, during which every decode step
# is `slow` times slower (a decode_slowdown incident). Input for promtool tsdb create-blocks-from.
function hist(name, labels, m1, m2, n, per,    b, le, c, n1) {
  # Cumulative bucket counts of exponential distributions: mean m1 before the incident, m2 during;
  # `per` observations per request.
  n1 = n < count(end - 3600) * per ? n : count(end - 3600) * per
  for (b = 1; b <= nb; b++) {
    le = bounds[b]
    c = n1 * (1 - exp(-le / m1)) + (n - n1) * (1 - exp(-le / m2))
    printf "%s_bucket{%sle=\"%s\"} %.0f %d\n", name, labels, le, c, t
  }
  printf "%s_bucket{%sle=\"+Inf\"} %.0f %d\n", name, labels, n, t
}
BEGIN {
  nb = split("0.001 0.0025 0.005 0.0075 0.01 0.025 0.05 0.075 0.1 0.25 0.5 0.75 1 2.5 5 7.5 10 20 30 60", bounds, " ")
  start = end - hours * 3600
  rate = 8
  n_stages = split("preprocess queue prefill decode postprocess send", stages, " ")
  split("0.0001 0.003 0.032 0.22 0.0004 0.0001", stage_mean, " ")
  # Families must be contiguous: one pass per family, every series through time.
  print "# TYPE inferscope_request_duration_seconds histogram"
  for (t = start; t <= end; t += step) { n = count(t)
    hist("inferscope_request_duration_seconds", "model=\"sim-a\",route=\"chat\",status_class=\"2xx\",", 0.26, 0.26 + 0.22 * (slow - 1), n, 1)
    printf "inferscope_request_duration_seconds_sum{model=\"sim-a\",route=\"chat\",status_class=\"2xx\"} %.3f %d\n", sum_e2e(t), t
    printf "inferscope_request_duration_seconds_count{model=\"sim-a\",route=\"chat\",status_class=\"2xx\"} %.0f %d\n", n, t }
  print "# TYPE inferscope_stage_duration_seconds histogram"
  for (s = 1; s <= n_stages; s++) for (t = start; t <= end; t += step) { n = count(t)
    l = "model=\"sim-a\",stage=\"" stages[s] "\","
    hist("inferscope_stage_duration_seconds", l, stage_mean[s], stage_mean[s] * (stages[s] == "decode" ? slow : 1), n, 1)
    printf "inferscope_stage_duration_seconds_sum{model=\"sim-a\",stage=\"%s\"} %.3f %d\n", stages[s], stage_sum(t, stage_mean[s], stages[s] == "decode"), t
    printf "inferscope_stage_duration_seconds_count{model=\"sim-a\",stage=\"%s\"} %.0f %d\n", stages[s], n, t }
  for (k = 1; k <= 3; k++) {
    name = k == 1 ? "inferscope_time_per_output_token_seconds" : k == 2 ? "inferscope_inter_token_latency_seconds" : "inferscope_time_to_first_token_seconds"
    base = k == 3 ? 0.035 : 0.007
    print "# TYPE " name " histogram"
    for (t = start; t <= end; t += step) { n = count(t) * (k == 2 ? 32 : 1)
      hist(name, "model=\"sim-a\",", base, base * (k == 3 ? 1 : slow), n, k == 2 ? 32 : 1)
      printf "%s_sum{model=\"sim-a\"} %.4f %d\n", name, stage_sum(t, base, k != 3) * (k == 2 ? 32 : 1), t
      printf "%s_count{model=\"sim-a\"} %.0f %d\n", name, n, t } }
  print "# TYPE inferscope_requests counter"
  for (t = start; t <= end; t += step) printf "inferscope_requests_total{model=\"sim-a\",route=\"chat\",status_class=\"2xx\",finish_reason=\"length\"} %.0f %d\n", count(t), t
  print "# TYPE inferscope_request_prompt_tokens histogram"
  for (t = start; t <= end; t += step) { n = count(t)
    printf "inferscope_request_prompt_tokens_bucket{model=\"sim-a\",le=\"+Inf\"} %.0f %d\n", n, t
    printf "inferscope_request_prompt_tokens_sum{model=\"sim-a\"} %.0f %d\n", n * 1016, t
    printf "inferscope_request_prompt_tokens_count{model=\"sim-a\"} %.0f %d\n", n, t }
  print "# TYPE inferscope_request_generation_tokens histogram"
  for (t = start; t <= end; t += step) { n = count(t)
    printf "inferscope_request_generation_tokens_bucket{model=\"sim-a\",le=\"+Inf\"} %.0f %d\n", n, t
    printf "inferscope_request_generation_tokens_sum{model=\"sim-a\"} %.0f %d\n", n * 32, t
    printf "inferscope_request_generation_tokens_count{model=\"sim-a\"} %.0f %d\n", n, t }
  split("inferscope_engine_requests_running inferscope_engine_requests_waiting inferscope_kv_cache_usage_ratio inferscope_engine_busy_ratio", gauges, " ")
  for (g = 1; g <= 4; g++) { print "# TYPE " gauges[g] " gauge"
    for (t = start; t <= end; t += step) { f = factor(t)
      v = g == 1 ? 2 * f : g == 2 ? 0.1 * f : g == 3 ? 0.3 * f : 0.9
      printf "%s{model=\"sim-a\"} %.3f %d\n", gauges[g], v, t } }
  print "# EOF"
}
function factor(t) { return t > end - 3600 ? slow : 1 }
function count(t) { return (t - start) * rate }
# Cumulative sums follow the factor in force over time.
function sum_e2e(t) { return stage_sum(t, 0.22, 1) + (t - start) * rate * 0.04 }
function stage_sum(t, mean, slowed,    split_t) {
  split_t = end - 3600
  if (!slowed || t <= split_t) return (t - start) * rate * mean
  return (split_t - start) * rate * mean + (t - split_t) * rate * mean * slow
}
