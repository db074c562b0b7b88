#!/usr/bin/env bash
# bench/up/trace_flood.sh — issue 18's flood: 10,000 spans/s for a minute into `inferscope up`'s
# POST /v1/traces, while its Alertmanager webhook and /metrics are timed every 100 ms; the same
# probes for 20 s before the flood are the peer baseline (up idle). Prints both phases' latencies,
# the flood/idle ratios, what became of the spans (trace_flood) and up's own trace counters.
# Usage: bench/up/trace_flood.sh [build dir]   (RATE=10000 DURATION=60 IDLE=20 by default)
set -euo pipefail
BUILD=${1:-build/release}
BIN=$BUILD/src/cli/inferscope
FLOOD=$BUILD/bench/up/trace_flood
source "$(dirname "$0")/common.sh"
bench_workdir trace-flood

# One target nobody answers: up needs one; its scrapes fail quietly.
"$BIN" up --target sim=inferscope@http://127.0.0.1:1/metrics --port 0 --prometheus-port 0 --alertmanager-port 0 \
  --state-dir "$work/state" >"$work/up.log" 2>&1 &
pids+=($!)
deadline=$(( $(date +%s) + 90 ))
until grep -q "inferscope up: ready" "$work/up.log"; do
  if [ "$(date +%s)" -ge "$deadline" ]; then echo "up did not become ready" >&2; tail -20 "$work/up.log" >&2; exit 1; fi
  sleep 0.2
done
api=$(grep -o 'api=http://[0-9.:]*' "$work/up.log" | head -1 | cut -d= -f2)
echo "up: $api, rate ${RATE:-10000} spans/s for ${DURATION:-60} s after ${IDLE:-20} s idle"
"$FLOOD" --api "$api" --rate "${RATE:-10000}" --duration "${DURATION:-60}" --idle "${IDLE:-20}"
sleep 2  # the writer drains its queue
curl -s "$api/metrics" | grep -E '^inferscope_up_trace|^inferscope_up_traces' || true
du -sh "$work/state/traces.db"* 2>/dev/null || true
