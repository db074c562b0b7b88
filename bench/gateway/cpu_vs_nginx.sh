#!/usr/bin/env bash
# CPU time per streamed SSE event: the gateway vs Debian's nginx (proxy_buffering off, HTTP/1.1
# keep-alive upstream) in front of the same `inferscope serve --profile zero-cost`, same bench run
# (same seed, same request count). CPU (ns) is read from /proc/<pid>/task/*/schedstat before and after each run.
# nginx gets one worker (the gateway one io thread). The machine is shared: compare the ratio.
# Usage: bench/gateway/cpu_vs_nginx.sh [requests=2000] [output_tokens=64]
source "$(dirname "$0")/common.sh"
N="${1:-2000}"; TOKENS="${2:-64}"
start_proxied_serve
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --no-progress --ignore-eos --seed 1 --random-input-len 16
   --random-output-len "$TOKENS" --num-prompts "$N" --max-concurrency 32)
run() {  # run NAME PORT PID
  local before after
  before="$(cpu_ns "$3")"
  "${B[@]}" --base-url "http://127.0.0.1:$2" --json "$WORK/$1.json" > /dev/null
  after="$(cpu_ns "$3")"
  echo "$1 $((after - before)) $(json_get "$WORK/$1.json" completed) $(json_get "$WORK/$1.json" failed)"
}
{ run gateway "$GPORT" "$GATEWAY_PID"; run nginx "$NPORT" "$NGINX_WORKER"; } > "$WORK/cpu.txt"
python3 - "$WORK/cpu.txt" "$TOKENS" <<'PY'
import sys
rows = {l.split()[0]: l.split()[1:] for l in open(sys.argv[1])}
tokens = int(sys.argv[2])
per = {}
for name, (ns, completed, failed) in rows.items():
    events = int(completed) * (tokens + 3)  # role chunk, content chunks, finish chunk, [DONE]
    per[name] = int(ns) / 1e3 / max(events, 1)
    print(f"{name:8s} cpu {int(ns)/1e9:.3f} s for {completed} streams ({failed} failed), {per[name]:.2f} us per event")
print(f"gateway/nginx cpu per event: {per['gateway']/per['nginx']:.2f}  (goal <= 2)")
PY
