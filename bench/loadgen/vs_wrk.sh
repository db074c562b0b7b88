#!/usr/bin/env bash
# Request rate of `inferscope bench` vs wrk against the same plain HTTP endpoint (nginx returning a
# fixed OpenAI-style JSON body), same cores, same connection count. Target: ratio >= 0.5.
# Usage: bench/loadgen/vs_wrk.sh [seconds=5] [connections=64]
source "$(dirname "$0")/common.sh"
SECS="${1:-5}"; CONNS="${2:-64}"
command -v nginx >/dev/null || { echo "nginx not installed (apt-get install nginx-light)" >&2; exit 2; }
PORT="$(free_port)"
BODY='{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":16,"completion_tokens":1}}'
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 16384; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path $WORK/body;
  server {
    listen 127.0.0.1:$PORT backlog=4096;
    location / { default_type application/json; return 200 '$BODY'; }
  }
}
CONF
taskset -c 0 nginx -c "$WORK/nginx.conf" -p "$WORK" & PIDS+=($!)
wait_http "http://127.0.0.1:$PORT/"
# wrk posts the same kind of body inferscope bench sends (a 16-token chat prompt).
cat > "$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"m","messages":[{"role":"user","content":"the of and to in is it you that he was for on are with as"}],"max_tokens":1,"stream":false}'
LUA
WRK_OUT="$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${SECS}s" -s "$WORK/post.lua" "http://127.0.0.1:$PORT/v1/chat/completions")"
WRK_RPS="$(echo "$WRK_OUT" | awk '/Requests\/sec/ {print $2}')"
taskset -c 1 "$INFERSCOPE" bench --base-url "http://127.0.0.1:$PORT" --no-stream --max-concurrency "$CONNS" \
  --duration "${SECS}s" --random-input-len 16 --random-output-len 1 --no-progress --json "$WORK/s.json" > "$WORK/bench.txt"
OUR_RPS="$(json_get "$WORK/s.json" request_throughput)"
FAILED="$(json_get "$WORK/s.json" failed)"
python3 - "$WRK_RPS" "$OUR_RPS" "$FAILED" <<'PY'
import sys
wrk, ours, failed = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
print(f"wrk:              {wrk:10.0f} req/s")
print(f"inferscope bench: {ours:10.0f} req/s  (failed {failed})")
print(f"ratio bench/wrk:  {ours / wrk:10.2f}  (target >= 0.50)")
PY
