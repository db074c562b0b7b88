#!/usr/bin/env bash
# Added latency of the gateway: `inferscope bench` against `inferscope serve --profile zero-cost`
# directly, then through the gateway, same seed, same open-loop rate, same script. "Added latency"
# here is (through the gateway) - (direct) of the client-measured E2E and TTFT at the median and
# p99: it includes the gateway's parse, admission, upstream connection reuse, relay and the extra
# loopback hop (two extra socket writes and reads per event), and nothing else. Also non-streaming
# throughput through the gateway at a fixed concurrency, with the direct figure beside it.
# The machine is shared: read the ratios, not the absolute numbers.
# Usage: bench/gateway/added_latency.sh [seconds=10] [rate=1000] [concurrency=64]
source "$(dirname "$0")/common.sh"
SECS="${1:-10}"; RATE="${2:-1000}"; CONC="${3:-64}"
PORT="$(free_port)"; GPORT="$(free_port)"
start_serve "$PORT" --profile zero-cost --max-num-seqs 16384 --max-waiting 16384 --io-threads 1
start_gateway "$GPORT" "http://127.0.0.1:$PORT"
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --no-progress --ignore-eos --seed 1 --random-input-len 16)
for target in direct gateway; do
  port="$PORT"; [[ "$target" == gateway ]] && port="$GPORT"
  "${B[@]}" --base-url "http://127.0.0.1:$port" --request-rate "$RATE" --duration "${SECS}s" \
    --random-output-len 8 --json "$WORK/$target-stream.json" > /dev/null
  "${B[@]}" --base-url "http://127.0.0.1:$port" --no-stream --max-concurrency "$CONC" --duration "${SECS}s" \
    --random-output-len 1 --json "$WORK/$target-whole.json" > /dev/null
done
python3 - "$WORK" "$RATE" <<'PY'
import json, sys
w, rate = sys.argv[1], sys.argv[2]
d = json.load(open(f"{w}/direct-stream.json")); g = json.load(open(f"{w}/gateway-stream.json"))
print(f"streaming at {rate} req/s: completed direct {d['completed']} / gateway {g['completed']}, failed {d['failed']} / {g['failed']}")
for q in ("median", "p99"):
    for m in ("ttft", "e2el"):
        k = f"{q}_{m}_ms"
        print(f"  {k:16s} direct {d[k]*1000:9.1f} us  gateway {g[k]*1000:9.1f} us  added {(g[k]-d[k])*1000:8.1f} us")
dw = json.load(open(f"{w}/direct-whole.json")); gw = json.load(open(f"{w}/gateway-whole.json"))
print(f"non-streaming closed loop: direct {dw['request_throughput']:.0f} req/s, gateway {gw['request_throughput']:.0f} req/s "
      f"(ratio {gw['request_throughput']/max(dw['request_throughput'],1):.2f}); p99 e2el direct {dw['p99_e2el_ms']*1000:.0f} us, "
      f"gateway {gw['p99_e2el_ms']*1000:.0f} us, added {(gw['p99_e2el_ms']-dw['p99_e2el_ms'])*1000:.0f} us; failed {gw['failed']}")
PY
