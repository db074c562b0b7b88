#!/usr/bin/env bash
# Accuracy: at low load, the client's TTFT and E2E agree with `inferscope serve`'s own histograms
# (inferscope_time_to_first_token_seconds, inferscope_request_duration_seconds) within 2 ms.
# Compares means (exact on both sides: the server's _sum/_count) and checks that the client's median
# lies in the server histogram's median bucket (the buckets are 5-50 ms wide, so a median
# interpolated inside one says nothing at the 2 ms level).
# Usage: bench/loadgen/serve_agreement.sh [requests=200] [profile=llama-3.1-8b-h100-bf16]
source "$(dirname "$0")/common.sh"
N="${1:-200}"; PROFILE="${2:-llama-3.1-8b-h100-bf16}"
PORT="$(free_port)"
start_serve "$PORT" --profile "$PROFILE"
"$INFERSCOPE" bench --base-url "http://127.0.0.1:$PORT" --no-progress --max-concurrency 1 --num-prompts "$N" \
  --random-input-len 256 --random-output-len 32 --ignore-eos --json "$WORK/a.json" > "$WORK/a.txt"
python3 - "$WORK/a.json" "$(scrape_hist "http://127.0.0.1:$PORT/metrics" inferscope_time_to_first_token_seconds)" \
  "$(scrape_hist "http://127.0.0.1:$PORT/metrics" inferscope_request_duration_seconds)" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
def server(text):
    parts = text.split(); count, total = float(parts[0]), float(parts[1])
    b = [(float(k), float(v)) for k, v in (p.split(":") for p in parts[2:])]
    lo = 0.0
    for le, cum in b:
        if cum >= count / 2:
            return count, total / count * 1e3, lo * 1e3, le * 1e3
        lo = le
    return count, total / count * 1e3, float("nan"), float("nan")
if "--" in sys.argv[2] or float(sys.argv[2].split()[0]) == 0:
    sys.exit("the server histogram is empty: did the requests fail? see the bench output")
for name, key, text in (("TTFT", "ttft", sys.argv[2]), ("E2E", "e2el", sys.argv[3])):
    n, mean, lo, hi = server(text)
    cm, cmed = c[f"mean_{key}_ms"], c[f"median_{key}_ms"]
    inside = "yes" if lo < cmed <= hi else "NO"
    print(f"{name}: client mean {cm:8.3f} ms | server mean {mean:8.3f} ms (n={n:.0f}) | diff {cm - mean:+.3f} ms "
          f"(target |diff| <= 2 ms) | client median {cmed:.3f} ms in server median bucket ({lo:g}, {hi:g}] ms: {inside}")
PY
