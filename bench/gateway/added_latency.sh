#!/usr/bin/env bash
# Added latency of the gateway: `inferscope bench` against `inferscope serve --profile zero-cost`
# directly, then through the gateway, same seed, same open-loop rate, same script. "Added latency"
# here is (through the gateway) - (direct) of the client-measured E2E and TTFT at the median and
# p99: it includes the gateway's parse, admission, upstream connection reuse, relay and the extra
# loopback hop (two extra socket writes and reads per event), and nothing else. Debian's nginx
# (one worker, proxy_buffering off) in front of the same server is the peer: its added latency in
# the same run is what the extra hop costs a proxy that only forwards bytes. Also non-streaming
# throughput through each at a fixed concurrency, with the direct figure beside it.
# The machine is shared: read the ratios, not the absolute numbers.
# Usage: bench/gateway/added_latency.sh [seconds=10] [rate=1000] [concurrency=64]
source "$(dirname "$0")/common.sh"
SECS="${1:-10}"; RATE="${2:-1000}"; CONC="${3:-64}"
start_proxied_serve
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --no-progress --ignore-eos --seed 1 --random-input-len 16)
for target in direct gateway nginx; do
  port="$PORT"; [[ "$target" == gateway ]] && port="$GPORT"; [[ "$target" == nginx ]] && port="$NPORT"
  "${B[@]}" --base-url "http://127.0.0.1:$port" --request-rate "$RATE" --duration "${SECS}s" \
    --random-output-len 8 --json "$WORK/$target-stream.json" > /dev/null
  "${B[@]}" --base-url "http://127.0.0.1:$port" --no-stream --max-concurrency "$CONC" --duration "${SECS}s" \
    --random-output-len 1 --json "$WORK/$target-whole.json" > /dev/null
done
python3 - "$WORK" "$RATE" <<'PY'
import json, sys
w, rate = sys.argv[1], sys.argv[2]
run = {t: json.load(open(f"{w}/{t}-stream.json")) for t in ("direct", "gateway", "nginx")}
d = run["direct"]
print(f"streaming at {rate} req/s: completed " + " / ".join(f"{t} {r['completed']}" for t, r in run.items())
      + ", failed " + " / ".join(str(r["failed"]) for r in run.values()))
for q in ("median", "p99"):
    for m in ("ttft", "e2el"):
        k = f"{q}_{m}_ms"
        print(f"  {k:16s} direct {d[k]*1000:9.1f} us  added: gateway {(run['gateway'][k]-d[k])*1000:8.1f} us"
              f"  nginx {(run['nginx'][k]-d[k])*1000:8.1f} us")
whole = {t: json.load(open(f"{w}/{t}-whole.json")) for t in ("direct", "gateway", "nginx")}
dw = whole["direct"]
for t in ("gateway", "nginx"):
    r = whole[t]
    print(f"non-streaming closed loop via {t}: {r['request_throughput']:.0f} req/s against direct {dw['request_throughput']:.0f} "
          f"(ratio {r['request_throughput']/max(dw['request_throughput'],1):.2f}); p99 e2el added "
          f"{(r['p99_e2el_ms']-dw['p99_e2el_ms'])*1000:.0f} us over direct {dw['p99_e2el_ms']*1000:.0f} us; failed {r['failed']}")
PY
