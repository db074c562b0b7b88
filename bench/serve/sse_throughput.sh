#!/usr/bin/env bash
# SSE throughput and concurrent-stream benchmark for `inferscope serve` (builds nothing).
#   bench/serve/sse_throughput.sh path/to/inferscope [seconds-per-phase]
# (a) streamed SSE events/s from one server process (--profile zero-cost, so the engine costs 0
#     and the HTTP stack is what is measured); target >= 50,000/s. Baseline for the ratio: wrk's
#     raw request rate against GET /health on the same server.
# (b) 5,000 concurrent streams held open (worker_stall keeps them queued); target: all 5,000.
# Needs wrk (Debian package). Bounded: about 3 phases x seconds-per-phase (default 8) + startup.
set -euo pipefail
bin=${1:?usage: sse_throughput.sh path/to/inferscope [seconds]}
secs=${2:-8}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
command -v wrk >/dev/null || { echo "sse_throughput.sh: cannot run: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# start_server NAME ARGS... starts a server and sets $port (parsed from its listening line).
start_server() {
  local name=$1; shift
  "$bin" serve --port 0 --log-level warn "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 1 200); do
    port=$(sed -n 's|^inferscope serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/$name.out")
    [ -n "$port" ] && return 0
    sleep 0.05
  done
  echo "sse_throughput.sh: cannot start server: $(cat "$work/$name.err")" >&2; exit 1
}
metric() {  # metric PORT NAME -> sum of that sample name over all series
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 ~ "^"n"({|$)" {s+=$NF} END {printf "%.0f\n", s}'
}
stop_last() { local p=${pids[-1]}; kill "$p"; wait "$p" 2>/dev/null || true; unset 'pids[-1]'; }

echo "== (a) SSE events per second, one server process (2 io threads), zero-cost engine"
start_server sse --profile zero-cost --io-threads 2 --max-num-seqs 1024 --max-waiting 100000
t0=$(metric "$port" vllm:generation_tokens_total); r0=$(metric "$port" vllm:e2e_request_latency_seconds_count)
start=$(date +%s.%N)
SSE_MAX_TOKENS=256 wrk -t2 -c64 -d"${secs}s" -s "$here/sse_post.lua" "http://127.0.0.1:$port/v1/chat/completions" >"$work/wrk_sse.txt"
end=$(date +%s.%N)
t1=$(metric "$port" vllm:generation_tokens_total); r1=$(metric "$port" vllm:e2e_request_latency_seconds_count)
grep -E 'Requests/sec|Transfer/sec|Socket errors|Non-2xx' "$work/wrk_sse.txt" | sed 's/^/  wrk: /'
events=$(awk -v t0="$t0" -v t1="$t1" -v r0="$r0" -v r1="$r1" 'BEGIN {print (t1 - t0) + 3 * (r1 - r0)}')
rate=$(awk -v e="$events" -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", e / (b - a)}')
echo "  streamed events: $events in $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s = $rate events/s (target >= 50000)"
wrk -t2 -c64 -d"$((secs / 2 > 0 ? secs / 2 : 1))s" "http://127.0.0.1:$port/health" >"$work/wrk_health.txt"
health=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$work/wrk_health.txt")
echo "  baseline: GET /health $health req/s on the same server; SSE events per /health request = $(awk -v a="$rate" -v b="$health" 'BEGIN {printf "%.2f", a / b}')"
stop_last

echo "== (b) 5,000 concurrent streams held open (worker_stall: the engine schedules nothing)"
start_server idle --max-waiting 20000 --io-threads 2 --fault 'worker_stall={"for_ms":600000,"every_s":100000}'
wrk -t2 -c5000 -d"${secs}s" --timeout 60s -s "$here/sse_post.lua" "http://127.0.0.1:$port/v1/chat/completions" >"$work/wrk_idle.txt" &
wrk_pid=$!
held=0
for _ in $(seq 1 $((secs * 10))); do
  sleep 0.1
  now=$(metric "$port" inferscope_requests_in_flight)
  [ "$now" -gt "$held" ] && held=$now
  [ "$held" -ge 5000 ] && break
done
waiting=$(metric "$port" vllm:num_requests_waiting)
echo "  streams open at once: $held (target 5000); engine waiting queue: $waiting"
wait "$wrk_pid" || true
grep -E 'Socket errors' "$work/wrk_idle.txt" | sed 's/^/  wrk: /' || true
stop_last
