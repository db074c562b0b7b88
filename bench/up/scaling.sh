#!/usr/bin/env bash
# bench/up/scaling.sh — the numbers behind docs/scaling.md, measured on this machine:
#  1. series per target: sample lines in one `inferscope serve` exposition after some traffic
#     (and what Prometheus stores for the job, scrape series included);
#  2. ingestion of one Prometheus run by `inferscope up`: N scrape jobs (all pointing at the same
#     serve, so each job is a full target's worth of series) at a 1 s interval, with up's
#     generated rules; samples/s appended, Prometheus CPU (cores) and RSS over a 30 s window.
# Peer baseline in the same run: the same stack with no inference target (N=0: Prometheus,
# Alertmanager, up and node-exporter scraped).
# Usage: bench/up/scaling.sh [path/to/inferscope]   (TARGETS="0 10 40 100" by default)
set -euo pipefail
BIN=${1:-build/release/src/cli/inferscope}
TARGETS=${TARGETS:-"0 10 40 100"}
WINDOW=${WINDOW:-30}
source "$(dirname "$0")/common.sh"
bench_workdir scaling-bench
wait_for() {  # file pattern timeout_s
  local deadline=$(( $(date +%s) + $3 ))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "timed out waiting for '$2' in $1" >&2; tail -20 "$1" >&2; exit 1; fi
    sleep 0.1
  done
}
query() {  # prometheus_url promql -> first value
  curl -sf --get "$1/api/v1/query" --data-urlencode "query=$2" | sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p'
}

"$BIN" serve --port 0 --time-scale 20 --model sim >"$work/serve.log" 2>"$work/serve.err" &
pids+=($!)
wait_for "$work/serve.log" "listening on" 20
serve_url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1)
"$BIN" bench --base-url "$serve_url" --model sim --num-prompts 200 --request-rate 50 --random-input-len 128 \
  --random-output-len 32 --no-progress >"$work/bench.log" 2>&1
exposition=$(curl -sf "$serve_url/metrics")
series=$(grep -cv '^#' <<<"$exposition" || true)
families=$(grep -c '^# TYPE' <<<"$exposition" || true)
echo "serve exposition after 200 requests (1 model, dialects inferscope+vllm): $series series in $families families, $(wc -c <<<"$exposition") bytes"

for n in $TARGETS; do
  {
    echo "scrape_interval: 1s"
    [ "$n" -gt 0 ] && echo "targets:"
    for i in $(seq 1 "$n"); do
      printf '  - {name: sim%03d, url: %s/metrics, kind: inferscope}\n' "$i" "$serve_url"
    done
  } >"$work/up-$n.yaml"
  log="$work/up-$n.log"
  extra=()
  # The baseline has no inference target; up then needs something to scrape: node-exporter.
  [ "$n" = 0 ] && extra=(--node-exporter)
  "$BIN" up --config "$work/up-$n.yaml" --port 0 --prometheus-port 0 --alertmanager-port 0 \
    --state-dir "$work/state-$n" "${extra[@]}" >"$log" 2>"$work/up-$n.err" &
  up_pid=$!
  pids+=("$up_pid")
  wait_for "$log" "inferscope up: ready" 120
  prom=$(grep -o 'prometheus=http://[0-9.:]*' "$log" | cut -d= -f2)
  sleep $(( WINDOW + 5 ))
  samples=$(query "$prom" "sum(rate(prometheus_tsdb_head_samples_appended_total{job=\"prometheus\"}[${WINDOW}s]))")
  cpu=$(query "$prom" "rate(process_cpu_seconds_total{job=\"prometheus\"}[${WINDOW}s])")
  head_series=$(query "$prom" "prometheus_tsdb_head_series{job=\"prometheus\"}")
  per_job=$(query "$prom" "count({job=\"sim001\"})")
  rss=$(query "$prom" "process_resident_memory_bytes{job=\"prometheus\"}")
  up_ratio=$(query "$prom" "avg(avg_over_time(up{job=~\"sim.*\"}[${WINDOW}s]))")
  scrape_s=$(query "$prom" "avg(avg_over_time(scrape_duration_seconds{job=~\"sim.*\"}[${WINDOW}s]))")
  printf 'targets=%-3s samples/s=%8.0f  prometheus CPU=%.2f cores  head series=%s  RSS=%.0f MiB  series stored per target=%s  scrapes up=%s  mean scrape=%s s\n' \
    "$n" "$samples" "$cpu" "$head_series" "$(echo "$rss / 1048576" | bc -l)" "${per_job:-n/a}" "${up_ratio:-n/a}" "${scrape_s:-n/a}"
  kill "$up_pid"
  wait "$up_pid" || true
done
