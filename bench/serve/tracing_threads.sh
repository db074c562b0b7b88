#!/usr/bin/env bash
# Where tracing's CPU goes, thread by thread: the CPU per request of each thread of `inferscope
# serve` with every request exported (--trace-sample 1, to the OTLP_SINK peer of
# ../gateway/common.sh, `inferscope up`'s receiver by default) and of the same server with tracing off, same flags and bench runs as tracing_overhead.sh, CPU
# from each thread's /proc/<pid>/task/<tid>/schedstat (scheduler nanoseconds), read after the
# exporter's 1 s batch delay on both sides. Threads are listed by tid with their names (the
# exporter's sending thread is "otlp-exporter"), then the spans the traced server exported and
# dropped.
# Usage: [OTLP_SINK=up|nginx|node] [NODE_PATH=<web node_modules>] bench/serve/tracing_threads.sh [requests=3000] [rounds=2]
source "$(dirname "$0")/../gateway/common.sh"
N="${1:-3000}"; ROUNDS="${2:-2}"
start_serve_tracing_pair
B=("${TRACE_BENCH[@]}")
# threads PID: "tid name ns" for each thread of PID.
threads() { for t in /proc/"$1"/task/*; do echo "$(basename "$t") $(tr ' ' '_' < "$t/comm") $(cut -d' ' -f1 "$t/schedstat")"; done; }
"${B[@]}" --num-prompts 1000 --base-url "http://127.0.0.1:$OFF" > /dev/null  # warm-up, both sides
"${B[@]}" --num-prompts 1000 --base-url "http://127.0.0.1:$ON" > /dev/null
sleep 1.2
for r in $(seq "$ROUNDS"); do
  for side in off on; do
    if [[ "$side" == off ]]; then port="$OFF"; pid="$OFF_PID"; else port="$ON"; pid="$ON_PID"; fi
    threads "$pid" | sed "s/^/$side before /" >> "$WORK/threads.txt"
    "${B[@]}" --num-prompts "$N" --base-url "http://127.0.0.1:$port" --json "$WORK/$side-$r.json" > /dev/null
    sleep 1.2
    threads "$pid" | sed "s/^/$side after /" >> "$WORK/threads.txt"
    echo "$side $(json_get "$WORK/$side-$r.json" completed)" >> "$WORK/completed.txt"
  done
done
sleep 2  # the exporter's last batch
exported="$(curl -s "http://127.0.0.1:$ON/metrics" | awk '/^inferscope_trace_spans_exported_total/ {print $2}')"
dropped="$(curl -s "http://127.0.0.1:$ON/metrics" | awk '/^inferscope_traces_dropped_total/ {s += $2} END {print s + 0}')"
python3 - "$WORK/threads.txt" "$WORK/completed.txt" "$exported" "$dropped" <<'PY'
import sys
spent = {}  # (side, tid) -> [name, ns]
pending = {}
for line in open(sys.argv[1]):
    side, when, tid, name, ns = line.split()
    key = (side, int(tid))
    if when == "before":
        pending[key] = int(ns)
    elif key in pending:
        entry = spent.setdefault(key, [name, 0])
        entry[1] += int(ns) - pending.pop(key)
completed = {}
for line in open(sys.argv[2]):
    side, n = line.split()
    completed[side] = completed.get(side, 0) + int(n)
total = {}
for side in ("off", "on"):
    n = max(completed.get(side, 0), 1)
    print(f"tracing {side} ({completed.get(side, 0)} requests):")
    for (s, tid), (name, ns) in sorted(spent.items()):
        if s == side:
            print(f"  thread {tid:>7} {name:<15} {ns / 1e3 / n:7.2f} us per request")
    total[side] = sum(ns for (s, _), (_, ns) in spent.items() if s == side) / 1e3 / n
    print(f"  all threads             {total[side]:7.2f} us per request")
print(f"spans exported {sys.argv[3]}, dropped {sys.argv[4]}")
print(f"tracing on/off cpu per request: {total['on'] / total['off']:.3f}  (goal <= 1.05)")
PY
