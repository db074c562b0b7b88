# Shared helpers for the loadgen end-to-end benchmark scripts (sourced, not run).
# INFERSCOPE: path to the inferscope binary (default: build-loadgen or build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ -z "${INFERSCOPE:-}" ]]; then
  for b in "$ROOT"/build-loadgen/src/cli/inferscope "$ROOT"/build/src/cli/inferscope; do
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
