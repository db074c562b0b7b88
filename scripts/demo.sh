#!/usr/bin/env bash
# The main demo: builds inferscope, starts `inferscope serve` (simulated 8B model on one H100) on
# an ephemeral loopback port, shows it answering the OpenAI API, drives load with `inferscope bench`,
# then injects a decode slowdown and shows, from /metrics alone, which stage got slower.
# Bounded: about two minutes after the build; every process it starts is stopped on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
step() { printf '\n==== %s ====\n' "$*"; }

step "packages and build"
scripts/install-deps.sh
build=$(scripts/build.sh release inferscope)
bin="$build/src/cli/inferscope"

work=$(mktemp -d)
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step "start inferscope serve"
"$bin" serve --port 0 --enable-admin --max-num-seqs 32 --duration 600 >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^inferscope serve: listening on \(http:[^ ]*\).*/\1/p' "$work/serve.out" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "demo: serve exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "demo: serve did not report its address within 10 s" >&2; exit 1; }
cat "$work/serve.out"
model=$(curl -sf "$url/v1/models" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -n 1)
echo "model: $model"

step "one chat completion"
curl -sf "$url/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}],\"max_tokens\":12}"
echo
step "the same, streamed (SSE)"
curl -sfN "$url/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}],\"max_tokens\":4,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"

# stage_means prints count and mean per stage from inferscope_stage_duration_seconds in /metrics.
stage_means() {
  curl -sf "$url/metrics" | awk '
    /^inferscope_stage_duration_seconds_(sum|count)\{/ {
      match($0, /stage="[^"]*"/); stage = substr($0, RSTART + 7, RLENGTH - 8)
      if ($0 ~ /_sum\{/) sum[stage] += $NF; else count[stage] += $NF
    }
    END { for (s in count) printf "%s %d %.6f\n", s, count[s], sum[s] }' | sort
}
# stage_table prints per-stage count and mean latency between two stage_means snapshots.
stage_table() {
  join -a 2 -e 0 -o 2.1,1.2,1.3,2.2,2.3 "$1" "$2" | awk '
    BEGIN { printf "%-14s %10s %14s\n", "stage", "requests", "mean (ms)" }
    { n = $4 - $2; s = $5 - $3; printf "%-14s %10d %14s\n", $1, n, (n > 0 ? sprintf("%.1f", 1000 * s / n) : "no data") }'
}
bench() {
  "$bin" bench --base-url "$url" --model "$model" --no-progress --seed 7 \
    --random-input-len 512 --random-output-len 64 "$@"
}

step "load: 20 s, normal (3 req/s) then surge (12 req/s)"
stage_means >"$work/s0"
bench --stages 10s:rate=3,10s:rate=12
stage_means >"$work/s1"
step "per-stage latency from /metrics during that load"
stage_table "$work/s0" "$work/s1"

step "inject a fault: decode 4x slower (POST /admin/faults), same normal load for 10 s"
curl -sf -X POST "$url/admin/faults" -H 'Content-Type: application/json' -d '{"decode_slowdown":4}'
echo
bench --stages 10s:rate=3
stage_means >"$work/s2"
curl -sf -X DELETE "$url/admin/faults" >/dev/null
step "per-stage latency from /metrics under the fault: decode is the stage that moved"
stage_table "$work/s1" "$work/s2"

step "a few of the series Prometheus scrapes (vLLM names included)"
curl -sf "$url/metrics" | grep -E '^(vllm:num_requests_running|vllm:kv_cache_usage_perc|vllm:num_preemptions_total|vllm:request_success_total|inferscope_requests_in_flight|DCGM_FI_DEV_GPU_UTIL)' | head -n 20 || true
echo
echo "demo: done (serve stopped on exit)"
