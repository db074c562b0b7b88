# Shared helpers for the gateway end-to-end benchmark scripts (sourced, not run). Builds on
# bench/loadgen/common.sh (INFERSCOPE binary, temp dir, cleanup of every started process).
source "$(dirname "${BASH_SOURCE[0]}")/../loadgen/common.sh"

# start_gateway PORT UPSTREAM_URL ARGS...: start `inferscope gateway` on GATEWAY_CPUS (default 0,
# beside the server) and wait until /health answers.
start_gateway() {
  local port="$1" upstream="$2"; shift 2
  taskset -c "${GATEWAY_CPUS:-0}" "$INFERSCOPE" gateway --host 127.0.0.1 --port "$port" --upstream "$upstream" \
    --max-concurrency 100000 --max-queue 100000 "$@" > "$WORK/gateway.log" 2>&1 &
  PIDS+=($!)
  GATEWAY_PID=$!
  wait_http "http://127.0.0.1:$port/health"
}

# cpu_ticks PID: user+system clock ticks the process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
