#!/usr/bin/env bash
# bench/up/alert_latency.sh — how fast `inferscope up` turns a fault into an alert at its own
# webhook (the relay's intake), and a cleared fault into the resolve; plus up's own memory (RSS).
# Setup: `inferscope serve --enable-admin` under steady load from `inferscope bench`, up scraping it
# every 1 s with rules evaluated every 1 s, Alertmanager group_wait/group_interval 1 s. The fault is
# error_rate=1 through serve's admin API; the alert is InferscopeErrorRatioHigh with `for` set to
# FOR (default: one run with 0s, one with 5s). Times are wall clock from the admin call to the
# "inferscope up: alert firing|resolved" event line, which up prints when the webhook arrives.
# Usage: bench/up/alert_latency.sh [path/to/inferscope]   (ROUNDS=3 by default)
set -euo pipefail
BIN=${1:-build/release/src/cli/inferscope}
ROUNDS=${ROUNDS:-3}
FORS=${FOR:-"0s 5s"}
source "$(dirname "$0")/common.sh"
bench_workdir alert-bench

now() { date +%s.%N; }
wait_for_count() {  # file pattern count timeout_s
  local deadline=$(( $(date +%s) + $4 ))
  while [ "$(grep -c -- "$2" "$1" 2>/dev/null || true)" -lt "$3" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "timed out waiting for '$2' in $1" >&2; tail -20 "$1" >&2; exit 1; fi
    sleep 0.05
  done
}

"$BIN" serve --port 0 --enable-admin --time-scale 20 --model sim >"$work/serve.log" 2>"$work/serve.err" &
pids+=($!)
wait_for_count "$work/serve.log" "listening on" 1 20
serve_url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1)
"$BIN" bench --base-url "$serve_url" --endpoint /v1/completions --model sim --request-rate 20 --duration 900s \
  --random-input-len 64 --random-output-len 16 --no-progress >"$work/bench.log" 2>&1 &
pids+=($!)

for for_value in $FORS; do
  state="$work/state-$for_value"
  cat >"$work/up-$for_value.yaml" <<YAML
targets:
  - name: sim
    url: $serve_url/metrics
    kind: inferscope
scrape_interval: 1s
alertmanager: {group_wait: 1s, group_interval: 1s, repeat_interval: 1h}
alerts:
  for: {InferscopeErrorRatioHigh: $for_value}
YAML
  log="$work/up-$for_value.log"
  "$BIN" up --config "$work/up-$for_value.yaml" --port 0 --prometheus-port 0 --alertmanager-port 0 \
    --state-dir "$state" >"$log" 2>"$work/up-$for_value.err" &
  up_pid=$!
  pids+=("$up_pid")
  wait_for_count "$log" "inferscope up: ready" 1 60
  sleep 5  # healthy samples first, so the error ratio starts at 0
  for round in $(seq 1 "$ROUNDS"); do
    t0=$(now)
    curl -sf -X POST "$serve_url/admin/faults" -d '{"error_rate": 1.0}' >/dev/null
    wait_for_count "$log" "alert firing InferscopeErrorRatioHigh" "$round" 120
    t1=$(now)
    curl -sf -X DELETE "$serve_url/admin/faults" >/dev/null
    wait_for_count "$log" "alert resolved InferscopeErrorRatioHigh" "$round" 180
    t2=$(now)
    printf 'for=%-3s round %d: fault -> firing at up webhook %5.1f s; clear -> resolved %5.1f s\n' \
      "$for_value" "$round" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
    sleep 2
  done
  up_rss=$(awk '/VmRSS/ {print $2}' "/proc/$up_pid/status")
  api_port=$(grep -o 'api=http://[0-9.:]*' "$log" | sed 's/.*://')
  prom_pid=$("$BIN" up --status --port "$api_port" | awk '$1 == "prometheus" && $3 == "pid" {print $4}')
  prom_rss=$(awk '/VmRSS/ {print $2}' "/proc/$prom_pid/status")
  echo "for=$for_value: RSS of inferscope up ${up_rss} KiB (its Prometheus child: ${prom_rss} KiB, for scale)"
  kill "$up_pid"
  wait "$up_pid" || true
done
