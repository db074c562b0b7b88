#!/usr/bin/env bash
# Accuracy: at low load, the client's TTFT and E2E agree with `inferscope serve`'s own histograms
# (inferscope_time_to_first_token_seconds, inferscope_request_duration_seconds) within 2 ms.
# Compares means (exact: _sum/_count) and medians (server median interpolated in its buckets).
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
    half, lo, prev = count / 2, 0.0, 0.0
    for le, cum in b:
        if cum >= half:
            med = le if le == float("inf") else lo + (le - lo) * (half - prev) / max(cum - prev, 1e-12)
            return count, total / count * 1e3, med * 1e3
        lo, prev = le, cum
    return count, total / count * 1e3, float("nan")
for name, key, text in (("TTFT", "ttft", sys.argv[2]), ("E2E", "e2el", sys.argv[3])):
    n, mean, med = server(text)
    cm, cmed = c[f"mean_{key}_ms"], c[f"median_{key}_ms"]
    print(f"{name}: client mean {cm:8.3f} ms median {cmed:8.3f} ms | server mean {mean:8.3f} ms "
          f"median~{med:8.3f} ms (n={n:.0f}) | mean diff {cm - mean:+.3f} ms, median diff {cmed - med:+.3f} ms (target |diff| <= 2 ms)")
PY
