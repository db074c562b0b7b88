#!/usr/bin/env bash
# The main demo (README's first command): builds inferscope, then runs the whole chain on loopback:
# `inferscope serve` (a simulated 8B model), `inferscope gateway` in front of it, `inferscope up`
# (real Prometheus, Alertmanager and node-exporter, alert rules, the chat relay, the dashboard) and
# `inferscope bench` driving a scenario: steady traffic, then a decode fault plus a surge of long
# prompts, then recovery. It prints what happens as it happens: alerts firing and resolving, the
# doctor's finding, and each message a chat robot receives (a local stand-in robot).
#   bash scripts/demo.sh          about five minutes after the build, then stops everything
#   bash scripts/demo.sh --keep   leaves the stack and the dashboard running until Ctrl-C
# Every exit path (end, error, Ctrl-C) stops every process it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
keep=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    *) echo "demo: unknown argument '$arg' (--keep)" >&2; exit 2 ;;
  esac
done
step() { printf '\n==== %s ====\n' "$*"; }

if [ -n "${INFERSCOPE_BIN:-}" ]; then
  bin=$INFERSCOPE_BIN  # an already built binary (e.g. a developer's build dir): no install, no build
else
  step "packages and build"
  scripts/install-deps.sh
  build=$(scripts/build.sh release inferscope)
  bin="$build/src/cli/inferscope"
fi

work=$(mktemp -d)
pids=()
cleanup() {
  trap - EXIT INT TERM
  # Newest first: load, then gateway and server, then up (which stops its own children), then the
  # robot. SIGTERM, bounded wait, then SIGKILL.
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted, stopping everything"; exit 130' INT TERM

# wait_for FILE PATTERN SECONDS PID: waits until FILE has a line matching PATTERN; fails when PID
# exits first or time runs out.
wait_for() {
  local file=$1 pattern=$2 seconds=$3 pid=$4
  for _ in $(seq 1 $((seconds * 10))); do
    grep -qE "$pattern" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { echo "demo: process $pid exited; its log:" >&2; tail -n 20 "$file" "$file.err" 2>/dev/null >&2; return 1; }
    sleep 0.1
  done
  echo "demo: no '$pattern' in $file within ${seconds}s" >&2
  return 1
}

step "a stand-in chat robot (prints what a team chat would receive)"
node scripts/demo_robot.js "$work/robot.port" &
pids+=($!)
for _ in $(seq 1 50); do [ -s "$work/robot.port" ] && break; sleep 0.1; done
robot_url="http://127.0.0.1:$(cat "$work/robot.port")/hooks/chat"
echo "robot: $robot_url"

step "inferscope serve (simulated model) and inferscope gateway in front of it"
"$bin" serve --port 0 --enable-admin --max-num-seqs 32 --duration 1800 >"$work/serve.out" 2>"$work/serve.out.err" &
pids+=($!)
wait_for "$work/serve.out" 'listening on http' 20 "${pids[-1]}"
serve_url=$(sed -n 's/^inferscope serve: listening on \(http:[^ ]*\).*/\1/p' "$work/serve.out" | head -n 1)
"$bin" gateway --upstream "$serve_url" --port 0 --metrics-port 0 >"$work/gateway.out" 2>"$work/gateway.out.err" &
pids+=($!)
wait_for "$work/gateway.out" 'listening on http' 20 "${pids[-1]}"
wait_for "$work/gateway.out.err" '/metrics on http' 20 "${pids[-1]}"
gateway_url=$(sed -n 's/^inferscope gateway: listening on \(http:[^ ]*\).*/\1/p' "$work/gateway.out" | head -n 1)
gateway_metrics=$(grep -o 'http://[0-9.:]*/metrics' "$work/gateway.out.err" | head -n 1)
model=$(curl -sf "$serve_url/v1/models" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -n 1)
echo "serve:   $serve_url (model $model)"
echo "gateway: $gateway_url (metrics $gateway_metrics)"

step "inferscope up: Prometheus, Alertmanager, node-exporter, rules, relay, dashboard"
# Demo timing: 1 s scrapes, a 1.5 s e2e p95 SLO held for 15 s, so the scenario fits in minutes.
cat >"$work/up.yaml" <<EOF
scrape_interval: 1s
slo:
  e2e_p95: 1500ms
  e2e_p99: 3s
alerts:
  for:
    InferscopeE2eP95OverSlo: 15s
    InferscopeE2eP99OverSlo: 15s
alertmanager:
  group_wait: 2s
  group_interval: 10s
notifications:
  channels:
    - name: team-chat
      kind: slack
      url: {env: DEMO_ROBOT_URL}
EOF
DEMO_ROBOT_URL="$robot_url" "$bin" up --config "$work/up.yaml" --target "serve=$serve_url/metrics" \
  --target "gateway=$gateway_metrics" --node-exporter --port 0 --prometheus-port 0 --alertmanager-port 0 \
  --state-dir "$work/state" >"$work/up.out" 2>"$work/up.out.err" &
pids+=($!)
up_pid=${pids[-1]}
wait_for "$work/up.out" 'inferscope up: ready' 90 "$up_pid"
grep 'inferscope up: ready' "$work/up.out"
api=$(sed -n 's/.*api=\(http[^ ]*\).*/\1/p' "$work/up.out" | head -n 1)
prometheus=$(sed -n 's/.*ready prometheus=\(http[^ ]*\).*/\1/p' "$work/up.out" | head -n 1)
# The page's doctor panel compares the last minute with the two before (a young stack has no
# 30 min baseline yet).
dashboard="$api/?range=15m&refresh=5&doctor_window=1m&doctor_baseline=2m"
echo
echo "dashboard: $dashboard"
# Events as they happen: up's alert and notification lines (the robot prints its own messages).
tail --pid=$$ -n +1 -F "$work/up.out" 2>/dev/null |
  grep --line-buffered -E 'alert (firing|resolved)|notification (delivered|failed)' |
  sed -u 's/^/[event] /' &

load() {  # load NAME DURATION RATE INPUT_LEN: one bench run through the gateway, in the background
  "$bin" bench --base-url "$gateway_url" --model "$model" --no-progress --seed 7 \
    --random-input-len "$4" --random-output-len 64 --stages "$2:rate=$3" >"$work/bench-$1.out" 2>&1 &
  pids+=($!)
}

step "phase 1: steady traffic for 60 s (3 req/s, 512-token prompts)"
load steady 60s 3 512
wait "${pids[-1]}" || true

step "phase 2: decode fault (4x slower) + a surge of long prompts (4096 tokens), 90 s"
curl -sf -X POST "$serve_url/admin/faults" -H 'Content-Type: application/json' -d '{"decode_slowdown":4}'
echo
load steady2 90s 3 512
load surge 90s 3 4096
surge_pid=${pids[-1]}
if wait_for "$work/up.out" 'alert firing InferscopeE2eP9' 80 "$up_pid"; then
  step "the doctor, asked while the alert fires (last 1 min vs the 2 min before)"
  timeout 60 "$bin" doctor --prometheus "$prometheus" --window 1m --baseline 2m --selector '{job="serve"}' || true
fi
wait "$surge_pid" || true

step "phase 3: recovery (fault cleared, steady traffic), until the alert resolves"
curl -sf -X DELETE "$serve_url/admin/faults" >/dev/null
load recovery 90s 3 512
wait_for "$work/up.out" 'alert resolved InferscopeE2eP9' 100 "$up_pid" || echo "demo: the alert had not resolved yet"
sleep 5  # the resolved notification reaches the robot after Alertmanager's group_wait

step "summary"
grep -E 'alert (firing|resolved)' "$work/up.out" | grep -v Watchdog || true
echo "dashboard: $dashboard"
if [ "$keep" = 1 ]; then
  echo "demo: --keep: everything keeps running; open the dashboard above, Ctrl-C to stop"
  while kill -0 "$up_pid" 2>/dev/null; do sleep 1; done
  echo "demo: inferscope up exited"
fi
echo "demo: done (every process stopped on exit)"
