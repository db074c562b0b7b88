#!/usr/bin/env bash
# The main demo (README's first command): builds inferscope, then runs the whole chain on loopback:
# `inferscope serve` (a simulated 8B model), `inferscope gateway` in front of it, `inferscope up`
# (real Prometheus, Alertmanager and node-exporter, alert rules, the chat relay, the dashboard) and
# `inferscope bench` driving a scenario: steady traffic, then a decode fault plus a surge of long
# prompts, then recovery; then a job queue in front (Debian's redis-server and RQ workers whose
# jobs call the gateway, scripts/demo_queue.py) whose workers stop and come back. It prints what
# happens as it happens: alerts firing and resolving, the doctor's findings, and each message a
# chat robot receives (a local stand-in robot).
#   bash scripts/demo.sh          about four minutes after the build, then stops everything
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
  # Newest first: the queue's producer and workers, load, then gateway and server, then up (which
  # stops its own children), then redis and the robot.
  local i newest_first=()
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do newest_first+=("${pids[i]}"); done
  stop "${newest_first[@]}"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted, stopping everything"; exit 130' INT TERM

# stop PID...: ends these processes (SIGTERM to all in this order, a bounded wait, then SIGKILL)
# and forgets them; phase 4 stops some before the end, so that cleanup never signals a reused id.
stop() {
  local pid kept=()
  for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do [[ " $* " == *" $pid "* ]] || kept+=("$pid"); done
  pids=("${kept[@]}")
}

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
# Also kept in robot.out: the queue phase checks what the robot received.
node scripts/demo_robot.js "$work/robot.port" > >(tee "$work/robot.out") &
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

step "redis-server on a loopback port (the job queue of phase 4; up collects it from the start)"
# A free port from the kernel, handed to redis-server; a port taken meanwhile is tried again.
for attempt in 1 2 3 4 5; do
  redis_port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  /usr/bin/redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$work" \
    >"$work/redis.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    grep -q 'Ready to accept connections' "$work/redis.out" && break
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  grep -q 'Ready to accept connections' "$work/redis.out" && break
  stop "${pids[-1]}"
  [ "$attempt" = 5 ] && { echo "demo: redis-server did not start; its log:" >&2; tail -n 20 "$work/redis.out" >&2; exit 1; }
done
redis_url="redis://127.0.0.1:$redis_port/0"
echo "redis: $redis_url"

step "inferscope up: Prometheus, Alertmanager, node-exporter, rules, relay, dashboard"
# Demo timing: 1 s scrapes, a 1.5 s e2e p95 SLO held for 15 s, so the scenario fits in minutes;
# the queue's alert fires 2 s after no job started for its 12 s rate window (12 scrapes).
cat >"$work/up.yaml" <<EOF
scrape_interval: 1s
targets:
  - name: jobs
    url: $redis_url
    queues:
      systems: [rq]
slo:
  e2e_p95: 1500ms
  e2e_p99: 3s
alerts:
  for:
    InferscopeE2eP95OverSlo: 15s
    InferscopeE2eP99OverSlo: 15s
    InferscopeQueueNotConsumed: 2s
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
grep -E 'inferscope up: (ready|target jobs: redis)' "$work/up.out"
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
recovery_pid=${pids[-1]}
wait_for "$work/up.out" 'alert resolved InferscopeE2eP9' 100 "$up_pid" || echo "demo: the alert had not resolved yet"
sleep 5  # the resolved notification reaches the robot after Alertmanager's group_wait

# Phase 4's RQ workers: start_workers starts two (listening on the queue "default"), stop_workers
# ends them as a deploy would (SIGTERM: each finishes its job and deregisters). They import
# scripts/demo_queue.py; no __pycache__ is left in the clone.
export PYTHONDONTWRITEBYTECODE=1
workers=()
start_workers() {
  local i
  workers=()
  for i in 1 2; do
    /usr/bin/rq worker --url "$redis_url" --path "$root/scripts" default >"$work/worker-$i.out" 2>&1 &
    pids+=($!)
    workers+=($!)
  done
  for i in 1 2; do wait_for "$work/worker-$i.out" 'Listening on default' 30 "${workers[i - 1]}"; done
}
stop_workers() {
  stop "${workers[@]}"
  workers=()
}
# robot_got ALERT STATUS PATTERN: whether a message the robot received since phase 4 began shows
# ALERT with STATUS (FIRING / RESOLVED) and a line matching PATTERN.
robot_got() {
  tail -n +"$robot_from" "$work/robot.out" | awk -v alert="$1" -v status="$2" -v pattern="$3" '
    function verdict() { if (has_alert && has_pattern) found = 1; has_alert = has_pattern = 0 }
    /^\[chat robot\] message received/ { verdict(); next }
    index($0, status) && index($0, alert) { has_alert = 1 }
    $0 ~ pattern { has_pattern = 1 }
    END { verdict(); exit found ? 0 : 1 }'
}
# robot_message ALERT STATUS: the lines (without the robot's "    | ") of the last message the robot
# received since phase 4 began that shows ALERT with STATUS.
robot_message() {
  tail -n +"$robot_from" "$work/robot.out" | awk -v alert="$1" -v status="$2" '
    function keep() { if (has_alert) { last = text } has_alert = 0; text = "" }
    /^\[chat robot\] message received/ { keep(); next }
    /^    \| / { line = substr($0, 7); text = text line "\n"; if (index(line, status) && index(line, alert)) has_alert = 1 }
    END { keep(); printf "%s", last }'
}
# check_queue_messages: the queue alert's FIRING and RESOLVED messages carry figures that agree with
# each other and with the page (the queue's depth and age where the dashboard's queue charts draw
# them at the same times, no live worker on its workers chart when it fired), and no "Recovered"
# line made only of "no data" (scripts/demo_check_queue.py). Prints one line either way; fails
# when they do not.
check_queue_messages() {
  local firing resolved
  firing=$(robot_message InferscopeQueueNotConsumed FIRING)
  resolved=$(robot_message InferscopeQueueNotConsumed RESOLVED)
  printf '%s\n' "$firing" >"$work/queue-firing.txt"
  printf '%s\n' "$resolved" >"$work/queue-resolved.txt"
  # The page's data as a browser on $dashboard gets it, once the resolve is a few seconds old (the
  # answer is cached for half a step).
  sleep 4
  curl -sf "$api/api/dashboard/data?range=15m" >"$work/queue-page.json" ||
    { echo "demo: FAILED: the dashboard's data answer ($api/api/dashboard/data)" >&2; return 1; }
  /usr/bin/python3 "$root/scripts/demo_check_queue.py" "$work/queue-firing.txt" "$work/queue-resolved.txt" \
    "$work/queue-page.json"
}
queue_status() {  # the queue target's lines of `up --status`
  "$bin" up --status --port "${api##*:}" | awk '/^queue targets:/ { on = 1; next } on && /^  / { print; next } { on = 0 }' || true
}
jobs_ended() {  # jobs_ended OUTCOME: the collector's count of jobs ended so (finished / failed)
  curl -sf "$api/queues/jobs/metrics" |
    awk -v outcome="$1" '/^inferscope_queue_jobs_total\{/ && index($0, "outcome=\"" outcome "\"") { n += $NF } END { print n + 0 }'
}

robot_from=$(($(wc -l <"$work/robot.out") + 1))
# One job a second keeps the two workers mostly idle: a queue that is consumed, not backed up.
step "phase 4: a job queue in front: 2 RQ workers take jobs off redis and call the gateway, 1 job/s, 12 s"
stop "$recovery_pid"  # phase 3's load ends: the workers are the gateway's only clients from here
start_workers
/usr/bin/python3 scripts/demo_queue.py produce "$redis_url" default "$gateway_url" "$model" 1 >"$work/producer.out" 2>&1 &
pids+=($!)
producer_pid=${pids[-1]}
sleep 12
queue_status
finished=$(jobs_ended finished) failed=$(jobs_ended failed)
echo "jobs ended so far: $finished finished, $failed failed"
[ "$finished" -gt 0 ] && [ "$failed" = 0 ] ||
  { echo "demo: FAILED: the workers did not finish jobs through the gateway; a worker's log:" >&2; tail -n 20 "$work/worker-1.out" >&2; exit 1; }

step "phase 4: the workers stop (jobs keep coming), until InferscopeQueueNotConsumed reaches the robot"
stop_workers
wait_for "$work/up.out" 'alert firing InferscopeQueueNotConsumed job=jobs' 45 "$up_pid" ||
  { echo "demo: FAILED: InferscopeQueueNotConsumed did not fire with the workers stopped" >&2; exit 1; }
for _ in $(seq 1 150); do robot_got InferscopeQueueNotConsumed FIRING 'top cause workers_down' && break; sleep 0.1; done
if ! robot_got InferscopeQueueNotConsumed FIRING 'top cause workers_down'; then
  echo "demo: FAILED: the doctor's diagnosis on the robot's InferscopeQueueNotConsumed message is not workers_down; it received:" >&2
  tail -n +"$robot_from" "$work/robot.out" >&2
  exit 1
fi
queue_status

step "phase 4: the workers come back, until the alert resolves"
start_workers
wait_for "$work/up.out" 'alert resolved InferscopeQueueNotConsumed job=jobs' 45 "$up_pid" ||
  { echo "demo: FAILED: InferscopeQueueNotConsumed did not resolve with the workers back" >&2; exit 1; }
for _ in $(seq 1 50); do robot_got InferscopeQueueNotConsumed RESOLVED . && break; sleep 0.1; done
stop "$producer_pid"
check_queue_messages || exit 1

step "summary"
grep -E 'alert (firing|resolved)' "$work/up.out" | grep -v Watchdog || true
echo "dashboard: $dashboard"
if [ "$keep" = 1 ]; then
  echo "demo: --keep: everything keeps running; open the dashboard above, Ctrl-C to stop"
  while kill -0 "$up_pid" 2>/dev/null; do sleep 1; done
  echo "demo: inferscope up exited"
fi
echo "demo: done (every process stopped on exit)"
