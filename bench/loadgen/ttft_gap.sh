#!/usr/bin/env bash
# Client-vs-server TTFT gap at scale: for each number of concurrent streams (default 100 1000
# 5000), a fresh `inferscope serve` (default profile), one closed-loop wave of that many streamed
# requests (128-token prompts, 32-token outputs, --ignore-eos), then the client's mean TTFT minus
# the server's own (inferscope_time_to_first_token_seconds _sum/_count over the same requests).
# The gap is connection setup + the server's read, queue-independent write lag + loopback + the
# client's read lag; sent_gap leaves out connection setup, and io_lag (the client's io-loop lag
# probe) bounds the client's own read lag. docs/bench.md has the findings. Bounded: one wave of N requests per step, 300 s timeout each.
# Usage: bench/loadgen/ttft_gap.sh [streams...]   (SERVE_CPUS / BENCH_CPUS pin the two sides;
#        BENCH_IO_THREADS sets bench --io-threads, default 1: give BENCH_CPUS as many cores)
source "$(dirname "$0")/common.sh"
STEPS=("$@")
[[ ${#STEPS[@]} -gt 0 ]] || STEPS=(100 1000 5000)
printf "%8s %11s %11s %9s %13s %13s %13s %7s\n" streams client_ms server_ms gap_ms sent_gap_ms io_lag_p99_ms io_lag_max_ms failed
for N in "${STEPS[@]}"; do
  PORT="$(free_port)"
  start_serve "$PORT" --max-waiting 16384
  taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --base-url "http://127.0.0.1:$PORT" --no-progress --ignore-eos \
    --io-threads "${BENCH_IO_THREADS:-1}" --max-concurrency "$N" --num-prompts "$N" --random-input-len 128 --random-output-len 32 --timeout 300s \
    --json "$WORK/gap-$N.json" --jsonl "$WORK/gap-$N.jsonl" > "$WORK/gap-$N.txt" || true
  python3 - "$WORK/gap-$N.json" "$WORK/gap-$N.jsonl" "$N" "$(scrape_hist "http://127.0.0.1:$PORT/metrics" inferscope_time_to_first_token_seconds)" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); n = sys.argv[3]
count, total = (float(x) for x in sys.argv[4].split()[:2])
if count == 0:
    sys.exit(f"{n}: the server histogram is empty: did the requests fail?")
server = total / count * 1e3
# sent_gap: from the request fully written (the server's clock starts when it has read it), so
# connection setup and the server's accept backlog are left out.
sent = [r["first_content_ms"] - r["sent_ms"] for r in map(json.loads, open(sys.argv[2]))
        if r["error"] == "none" and r["first_content_ms"] is not None and r["sent_ms"] is not None]
sent_gap = sum(sent) / len(sent) - server if sent else float("nan")
print(f"{n:>8} {c['mean_ttft_ms']:11.3f} {server:11.3f} {c['mean_ttft_ms'] - server:+9.3f} {sent_gap:+13.3f} "
      f"{c['p99_io_loop_lag_ms']:13.3f} {c['max_io_loop_lag_ms']:13.3f} {c['failed']:7d}")
PY
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
done
