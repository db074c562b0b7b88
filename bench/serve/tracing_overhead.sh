#!/usr/bin/env bash
# CPU per request of `inferscope serve` with per-request tracing at 100 % sampling (every request
# exported as OTLP/HTTP protobuf to the OTLP peer start_otlp_receiver picks: OTLP_SINK=up, the
# default, `inferscope up`'s receiver; OTLP_SINK=nginx, a discarding nginx; OTLP_SINK=node, the npm
# decoder tests/trace/otlp_receiver.js) vs the same server with tracing off: same flags (--profile zero-cost, one io thread, so
# the HTTP path and not the simulated engine is measured), both driven at the same time by two
# identical bench runs (paired rounds: tracing_rounds in ../gateway/common.sh), CPU from
# /proc/<pid>/task/*/schedstat; and the same pair with every request unsampled by its
# traceparent. Closed loop by default, open loop at TRACE_RATE requests/s per side when set.
# The issue's goal: on/off <= 1.05.
# Usage: [OTLP_SINK=up|nginx|node] [TRACE_RATE=R] [NODE_PATH=<web node_modules>] bench/serve/tracing_overhead.sh [requests=3000] [rounds=2]
source "$(dirname "$0")/../gateway/common.sh"
N="${1:-3000}"; ROUNDS="${2:-2}"
start_serve_tracing_pair
B=("${TRACE_BENCH[@]}" --num-prompts "$N")
tracing_rounds "$OFF" "$OFF_PID" "$ON" "$ON_PID" "$ROUNDS" > "$WORK/cpu.txt"
tracing_overhead_report serve "$WORK/cpu.txt" "http://127.0.0.1:$ON/metrics"
