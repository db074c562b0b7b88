# Shared helpers for the loadgen end-to-end benchmark scripts (sourced, not run).
# INFERSCOPE: path to the inferscope binary (default: build-loadgen or build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ -z "${INFERSCOPE:-}" ]]; then
  for b in "$ROOT"/build/release/src/cli/inferscope "$ROOT"/build-loadgen/src/cli/inferscope "$ROOT"/build/src/cli/inferscope; do
    [[ -x "$b" ]] && INFERSCOPE="$b" && break
  done
fi
[[ -x "${INFERSCOPE:-}" ]] || { echo "set INFERSCOPE to the inferscope binary" >&2; exit 2; }
WORK="$(mktemp -d /tmp/inferscope-loadgen-bench.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# free_port prints a loopback port that was free a moment ago.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_http URL: poll until the URL answers (bounded: 10 s).
wait_http() {
  for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "no answer from $1" >&2; return 1
}

# json_get FILE KEY prints one number from a bench --json summary.
json_get() { python3 -c "import json,sys; print(json.load(open('$1'))['$2'])"; }

# start_serve PORT ARGS...: start `inferscope serve` on 127.0.0.1:PORT (server on core 0 when
# SERVE_CPUS is unset) and wait until /health answers.
start_serve() {
  local port="$1"; shift
  taskset -c "${SERVE_CPUS:-0}" "$INFERSCOPE" serve --host 127.0.0.1 --port "$port" "$@" > "$WORK/serve.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/health"
}

# scrape_hist URL FAMILY: print "count sum median_s" of a Prometheus histogram family (all series
# summed), median by linear interpolation inside the bucket, as histogram_quantile does.
scrape_hist() {
  curl -s "$1" | python3 -c '
import sys, re
fam = sys.argv[1]; buckets = {}; count = 0.0; total = 0.0
for line in sys.stdin:
    if line.startswith("#"): continue
    m = re.match(r"(\S+?)(\{[^}]*\})?\s+(\S+)", line)
    if not m: continue
    name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
    if name == fam + "_bucket":
        le = re.search(r"le=\"([^\"]+)\"", labels).group(1)
        buckets[float("inf") if le == "+Inf" else float(le)] = buckets.get(float("inf") if le == "+Inf" else float(le), 0) + value
    elif name == fam + "_count": count += value
    elif name == fam + "_sum": total += value
print(count, total, " ".join(f"{k}:{v}" for k, v in sorted(buckets.items())))
' "$2"
}
