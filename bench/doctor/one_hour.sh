#!/usr/bin/env bash
# How long `inferscope doctor --prometheus` takes for a one-hour incident window (plus a 30 min
# baseline) against a local Prometheus: 90 min of inferscope serve metrics at a 15 s scrape
# interval are backfilled with promtool (a decode slowdown in the last hour), Prometheus serves
# them, and the doctor runs 5 times. Peer: the same Prometheus answering ONE p99 range query of
# e2e latency over the window (what a dashboard panel costs), so the ratio says how many panels'
# worth of work one diagnosis is. Usage: bench/doctor/one_hour.sh [path/to/inferscope]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/release/src/cli/inferscope}
[ -x "$bin" ] || { echo "one_hour.sh: no inferscope binary at $bin (build it or pass its path)" >&1; exit 2; }
work=$(mktemp -d /tmp/inferscope-doctor-bench-XXXXXX)
prom_pid=""
cleanup() { [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
end=$(( $(date +%s) / 60 * 60 - 120 ))
awk -v end="$end" -v hours=1.5 -v step=15 -v slow=2 -f "$here/gen_history.awk" > "$work/history.om"
promtool tsdb create-blocks-from openmetrics "$work/history.om" "$work/data" > "$work/backfill.log"
cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: 15s
YML
/usr/bin/prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --storage.tsdb.retention.time=30d --web.listen-address=127.0.0.1:0 > "$work/prom.log" 2>&1 &
prom_pid=$!
for _ in $(seq 200); do
  port=$(grep -o 'msg="Listening on" address=127.0.0.1:[0-9]*' "$work/prom.log" | grep -o '[0-9]*$' || true)
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/-/ready" > /dev/null && break
  sleep 0.05
done
url="http://127.0.0.1:$port"
time_ms() { local s e; s=$(date +%s%N); "$@" > /dev/null || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
"$bin" doctor --prometheus "$url" --at "$end" --window 1h --baseline 30m ${DOCTOR_BENCH_FORMAT:+--format $DOCTOR_BENCH_FORMAT} || true
doctor=() peer=()
for _ in 1 2 3 4 5; do
  doctor+=("$(time_ms "$bin" doctor --prometheus "$url" --at "$end" --window 1h --baseline 30m --format json)")
  peer+=("$(time_ms curl -sf "$url/api/v1/query_range" --data-urlencode \
    'query=histogram_quantile(0.99, sum by (le) (rate(inferscope_request_duration_seconds_bucket[1m])))' \
    --data-urlencode "start=$((end - 3600))" --data-urlencode "end=$end" --data-urlencode step=15)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
d=$(median "${doctor[@]}"); p=$(median "${peer[@]}")
echo "doctor, 1 h window + 30 min baseline: median ${d} ms of 5 runs (${doctor[*]})"
echo "peer, one p99 range query over the hour: median ${p} ms (${peer[*]})"
awk -v d="$d" -v p="$p" 'BEGIN { printf "ratio doctor / one panel query: %.1f\n", (p > 0 ? d / p : 0) }'
