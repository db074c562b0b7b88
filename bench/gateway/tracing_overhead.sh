#!/usr/bin/env bash
# CPU per request of `inferscope gateway` with per-request tracing at 100 % sampling (every request
# exported as OTLP/HTTP protobuf to the peer OTLP_SINK picks, see ../serve/tracing_overhead.sh,
# and a traceparent forwarded upstream) vs a second gateway with tracing off, both in front of
# the same `inferscope serve --profile zero-cost` (tracing off, so only the gateway's work
# differs), both driven at the same time by two identical bench runs (paired rounds:
# tracing_rounds in common.sh), CPU of each gateway from /proc/<pid>/task/*/schedstat; and the
# same pair with every request unsampled by its traceparent. TRACE_RATE as in the serve script.
# The issue's goal: on/off <= 1.05.
# Usage: [OTLP_SINK=up|nginx|node] [TRACE_RATE=R] [NODE_PATH=<web node_modules>] bench/gateway/tracing_overhead.sh [requests=3000] [rounds=2]
source "$(dirname "$0")/common.sh"
N="${1:-3000}"; ROUNDS="${2:-2}"
start_otlp_receiver
PORT="$(free_port)"; OFF="$(free_port)"; ON="$(free_port)"; MPORT="$(free_port)"
start_serve "$PORT" --profile zero-cost --max-num-seqs 4096 --max-waiting 4096 --io-threads 1 --log-level warn
start_gateway "$OFF" "http://127.0.0.1:$PORT" --log-level warn
OFF_PID="$GATEWAY_PID"
start_gateway "$ON" "http://127.0.0.1:$PORT" --log-level warn --metrics-port "$MPORT" \
  --otlp-endpoint "$OTLP_ENDPOINT" --trace-sample 1
ON_PID="$GATEWAY_PID"
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --no-progress --seed 1 --random-input-len 32
   --random-output-len 16 --num-prompts "$N" "${TRACE_LOAD[@]}")
tracing_rounds "$OFF" "$OFF_PID" "$ON" "$ON_PID" "$ROUNDS" > "$WORK/cpu.txt"
tracing_overhead_report gateway "$WORK/cpu.txt" "http://127.0.0.1:$MPORT/metrics"
