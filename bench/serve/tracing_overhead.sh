#!/usr/bin/env bash
# CPU per request of `inferscope serve` with per-request tracing at 100 % sampling (every request
# exported as OTLP/HTTP protobuf to tests/trace/otlp_receiver.js, the npm-decoder peer, run with
# --quiet) vs the same server with tracing off: same flags (--profile zero-cost, one io thread, so
# the HTTP path and not the simulated engine is measured), same bench run (seed, request count),
# CPU read from /proc/<pid>/stat around each run. Rounds alternate off/on to spread the machine's
# noise over both. The issue's goal: on/off <= 1.05.
# Usage: NODE_PATH=<web node_modules> bench/serve/tracing_overhead.sh [requests=3000] [rounds=2]
source "$(dirname "$0")/../gateway/common.sh"
N="${1:-3000}"; ROUNDS="${2:-2}"
: "${NODE_PATH:?set NODE_PATH to a node_modules holding @opentelemetry/otlp-transformer@0.52.1 (web/ after npm ci)}"
node "$ROOT/tests/trace/otlp_receiver.js" --quiet > "$WORK/receiver.out" 2>&1 &
PIDS+=($!)
RECEIVER_PID=$!
for _ in $(seq 100); do grep -q '"port"' "$WORK/receiver.out" 2>/dev/null && break; sleep 0.1; done
RPORT="$(python3 -c "import json; print(json.loads(open('$WORK/receiver.out').readline())['port'])")"
OFF="$(free_port)"; ON="$(free_port)"
SERVE=(--profile zero-cost --max-num-seqs 4096 --max-waiting 4096 --io-threads 1 --log-level warn)
start_serve "$OFF" "${SERVE[@]}"
OFF_PID="${PIDS[-1]}"
start_serve "$ON" "${SERVE[@]}" --otlp-endpoint "http://127.0.0.1:$RPORT/v1/traces" --trace-sample 1
ON_PID="${PIDS[-1]}"
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --no-progress --seed 1 --random-input-len 32
   --random-output-len 16 --num-prompts "$N" --max-concurrency 16)
run() {  # run NAME PORT PID ROUND
  local before after
  before="$(cpu_ticks "$3")"
  "${B[@]}" --base-url "http://127.0.0.1:$2" --json "$WORK/$1-$4.json" > /dev/null
  after="$(cpu_ticks "$3")"
  echo "$1 $((after - before)) $(json_get "$WORK/$1-$4.json" completed) $(json_get "$WORK/$1-$4.json" failed)"
}
for r in $(seq "$ROUNDS"); do run off "$OFF" "$OFF_PID" "$r"; run on "$ON" "$ON_PID" "$r"; done > "$WORK/cpu.txt"
sleep 2  # the exporter's last batch (1 s batch delay)
EXPORTED="$(curl -s "http://127.0.0.1:$ON/metrics" | awk '/^inferscope_trace_spans_exported_total/ {print $2}')"
DROPPED="$(curl -s "http://127.0.0.1:$ON/metrics" | awk '/^inferscope_traces_dropped_total/ {s += $2} END {print s + 0}')"
python3 - "$WORK/cpu.txt" "$(getconf CLK_TCK)" "$EXPORTED" "$DROPPED" <<'PY'
import sys
hz = int(sys.argv[2])
totals = {}
for line in open(sys.argv[1]):
    name, ticks, completed, failed = line.split()
    t = totals.setdefault(name, [0, 0, 0])
    t[0] += int(ticks); t[1] += int(completed); t[2] += int(failed)
per = {}
for name, (ticks, completed, failed) in totals.items():
    per[name] = ticks / hz / max(completed, 1) * 1e6
    print(f"tracing {name:3s}: serve cpu {ticks / hz:.2f} s for {completed} requests ({failed} failed), {per[name]:.1f} us per request")
print(f"spans exported {sys.argv[3]}, dropped {sys.argv[4]}")
print(f"tracing on/off cpu per request: {per['on'] / per['off']:.3f}  (goal <= 1.05)")
PY
