#!/usr/bin/env bash
# Non-streamed requests per second through the gateway: wrk (closed loop, one thread on
# BENCH_CPUS, C connections) posts the same small chat completion (stream false, 1 output token)
# to `inferscope serve --profile zero-cost` directly, through the gateway and through Debian's
# nginx (one worker, the gateway's one io thread) in the same script, one after the other.
# Prints each one's requests/s and p50/p99 latency, the gateway's added p99 over direct and its
# CPU per request against nginx's. The machine is shared: read the ratios.
# Usage: bench/gateway/whole_throughput.sh [seconds=10] [connections=64]
source "$(dirname "$0")/common.sh"
SECS="${1:-10}"; CONC="${2:-64}"
start_proxied_serve
cat > "$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"inferscope-sim-8b","messages":[{"role":"user","content":"hello there"}],"max_tokens":1,"stream":false}'
LUA
run() {  # run NAME PORT PID: wrk's report and the CPU nanoseconds PID used
  local before after
  before="$(cpu_ns "$3")"
  taskset -c "${BENCH_CPUS:-1}" wrk -t1 -c"$CONC" -d"${SECS}s" --latency -s "$WORK/post.lua" \
    "http://127.0.0.1:$2/v1/chat/completions" > "$WORK/$1.txt"
  after="$(cpu_ns "$3")"
  echo "cpu_ns $((after - before))" >> "$WORK/$1.txt"
}
run direct "$PORT" "$SERVE_PID"
run gateway "$GPORT" "$GATEWAY_PID"
run nginx "$NPORT" "$NGINX_WORKER"
python3 - "$WORK" <<'PY'
import re, sys
w = sys.argv[1]
def ms(v, unit):
    return float(v) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
rows = {}
for name in ("direct", "gateway", "nginx"):
    text = open(f"{w}/{name}.txt").read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    total = int(re.search(r"(\d+) requests in", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: (.*)", text)
    q = {p: ms(v, u) for p, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)$", text, re.M)}
    ns = int(re.search(r"cpu_ns (\d+)", text).group(1))
    rows[name] = (rps, q["50"], q["99"], ns / 1e3 / max(total, 1))
    print(f"{name:8s} {rps:9.0f} req/s  p50 {q['50']*1000:7.0f} us  p99 {q['99']*1000:7.0f} us  "
          f"proxy cpu {rows[name][3]:6.1f} us/req  non-2xx {bad.group(1) if bad else 0}"
          + (f"  socket errors: {errors.group(1)}" if errors else ""))
d, g, n = rows["direct"], rows["gateway"], rows["nginx"]
print(f"gateway: {g[0]:.0f} req/s (goal >= 10000; {g[0]/d[0]:.2f} of direct, {g[0]/n[0]:.2f} of nginx), "
      f"p99 added over direct {(g[2]-d[2])*1000:.0f} us (goal <= 1000), cpu per request {g[3]/n[3]:.2f} x nginx's")
PY
