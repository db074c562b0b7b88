#!/usr/bin/env bash
# How long `inferscope report` takes for 24 h (vs the 24 h before) against a local Prometheus:
# 48 h of one inferscope serve target are backfilled with promtool by the integration test's
# generator (known daily profile, one hour with decode x3), Prometheus serves them, and the report
# runs 5 times (JSON, with the worst hour's doctor run). Prints the median wall time and the number
# of Prometheus queries one report makes. Usage: bench/report/one_day.sh [path/to/inferscope]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/release/src/cli/inferscope}
[ -x "$bin" ] || { echo "one_day.sh: no inferscope binary at $bin (build it or pass its path)" >&2; exit 2; }
work=$(mktemp -d /tmp/inferscope-report-bench-XXXXXX)
prom_pid=""
cleanup() { if [ -n "$prom_pid" ]; then kill "$prom_pid" 2>/dev/null; wait "$prom_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
end=$(( $(date +%s) / 3600 * 3600 ))
awk -v end="$end" -v slow_hour=10 -v slow=3 -f "$here/../../tests/report/gen_report_history.awk" > "$work/history.om"
promtool tsdb create-blocks-from openmetrics "$work/history.om" "$work/data" > "$work/backfill.log"
rm "$work/history.om"
printf 'global:\n  scrape_interval: 15s\n' > "$work/prometheus.yml"
/usr/bin/prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address=127.0.0.1:0 > "$work/prom.log" 2>&1 &
prom_pid=$!
port=""
for _ in $(seq 300); do
  port=$(grep -o 'msg="Listening on" address=127.0.0.1:[0-9]*' "$work/prom.log" | grep -o '[0-9]*$' || true)
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/-/ready" > /dev/null && break
  sleep 0.1
done
url="http://127.0.0.1:$port"
"$bin" report --prometheus "$url" --until "$end" --format json > "$work/first.json"
queries=$(grep -o '"queries": [0-9]*' "$work/first.json" | grep -o '[0-9]*$')
times=()
for _ in 1 2 3 4 5; do
  s=$(date +%s%N)
  "$bin" report --prometheus "$url" --until "$end" --format json > /dev/null
  e=$(date +%s%N)
  times+=("$(( (e - s) / 1000000 ))")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
echo "report, 24 h vs the 24 h before (with the worst hour's doctor run): median ${median} ms of 5 runs (${times[*]})"
echo "Prometheus queries per report: ${queries} (the doctor's own queries not counted)"
