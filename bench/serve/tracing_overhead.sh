#!/usr/bin/env bash
# CPU per request of `inferscope serve` with per-request tracing at 100 % sampling (every request
# exported as OTLP/HTTP protobuf to tests/trace/otlp_receiver.js, the npm-decoder peer, run with
# --quiet) vs the same server with tracing off: same flags (--profile zero-cost, one io thread, so
# the HTTP path and not the simulated engine is measured), same bench run (seed, request count),
# CPU from /proc/<pid>/task/*/schedstat around each run; and the traced server with every request
# unsampled by its traceparent (tracing_rounds in ../gateway/common.sh). The issue's goal:
# on/off <= 1.05.
# Usage: NODE_PATH=<web node_modules> bench/serve/tracing_overhead.sh [requests=3000] [rounds=2]
source "$(dirname "$0")/../gateway/common.sh"
N="${1:-3000}"; ROUNDS="${2:-2}"
start_serve_tracing_pair
B=("${TRACE_BENCH[@]}" --num-prompts "$N")
tracing_rounds "$OFF" "$OFF_PID" "$ON" "$ON_PID" "$ROUNDS" > "$WORK/cpu.txt"
tracing_overhead_report serve "$WORK/cpu.txt" "http://127.0.0.1:$ON/metrics"
