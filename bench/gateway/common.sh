# Shared helpers for the gateway end-to-end benchmark scripts (sourced, not run). Builds on
# bench/loadgen/common.sh (INFERSCOPE binary, temp dir, cleanup of every started process).
source "$(dirname "${BASH_SOURCE[0]}")/../loadgen/common.sh"

# start_gateway PORT UPSTREAM_URL ARGS...: start `inferscope gateway` on GATEWAY_CPUS (default 0,
# beside the server) and wait until /health answers.
start_gateway() {
  local port="$1" upstream="$2"; shift 2
  taskset -c "${GATEWAY_CPUS:-0}" "$INFERSCOPE" gateway --host 127.0.0.1 --port "$port" --upstream "$upstream" \
    --max-concurrency 100000 --max-queue 100000 "$@" > "$WORK/gateway.log" 2>&1 &
  PIDS+=($!)
  GATEWAY_PID=$!
  wait_http "http://127.0.0.1:$port/health"
}

# cpu_ns PID: nanoseconds of CPU the process's threads have run so far (the scheduler's own sum,
# /proc/PID/task/*/schedstat, not /proc/PID/stat's 10 ms ticks, which put a few percent of noise
# on a run of a few hundred ms). The processes measured keep their threads for their whole life.
# "%.0f", not "%d": Debian's awk (mawk) clamps %d at 2^31-1, which a process passes after 2.1 s of
# CPU, and every later difference would read 0.
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%.0f\n", s}'; }

# write_nginx_conf DIR HTTP_BLOCK: write DIR/nginx.conf for one foreground nginx worker that keeps
# its pid, logs and temp files under DIR (no access log), with HTTP_BLOCK inside its http {}.
write_nginx_conf() {
  mkdir -p "$1"
  cat > "$1/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $1/body; proxy_temp_path $1/proxy;
  fastcgi_temp_path $1/fcgi; uwsgi_temp_path $1/uwsgi; scgi_temp_path $1/scgi;
$2
}
CONF
}

# start_nginx PORT UPSTREAM_HOST_PORT: start Debian's nginx (one worker on GATEWAY_CPUS, like the
# gateway's one io thread; proxy_buffering off, HTTP/1.1 keep-alive upstream) as the peer proxy and
# wait until /health answers through it; NGINX_WORKER is its worker's pid.
start_nginx() {
  local port="$1" upstream="$2"
  write_nginx_conf "$WORK/nginx" "
  upstream serve { server $upstream; keepalive 64; }
  server {
    listen 127.0.0.1:$port;
    location / {
      proxy_pass http://serve; proxy_http_version 1.1; proxy_set_header Connection \"\";
      proxy_buffering off; proxy_cache off;
    }
    location = /health { proxy_pass http://serve; }
  }"
  taskset -c "${GATEWAY_CPUS:-0}" "${NGINX:-/usr/sbin/nginx}" -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" \
    > "$WORK/nginx/out.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/health"
  NGINX_WORKER="$(pgrep -P "${PIDS[-1]}" | head -1)"
}

# start_proxied_serve: `inferscope serve --profile zero-cost` with the gateway and nginx in front
# of it; sets PORT (serve), GPORT (gateway), NPORT (nginx), SERVE_PID, GATEWAY_PID, NGINX_WORKER.
start_proxied_serve() {
  PORT="$(free_port)"; GPORT="$(free_port)"; NPORT="$(free_port)"
  start_serve "$PORT" --profile zero-cost --max-num-seqs 16384 --max-waiting 16384 --io-threads 1
  SERVE_PID="${PIDS[-1]}"
  start_gateway "$GPORT" "http://127.0.0.1:$PORT"
  start_nginx "$NPORT" "127.0.0.1:$PORT"
}

# start_otlp_receiver: start the OTLP/HTTP peer the traced processes export to and set
# OTLP_ENDPOINT to its /v1/traces URL. OTLP_SINK picks it:
#   up    (default) `inferscope up`'s own receiver (POST /v1/traces on its api port: every batch
#         decoded and its requests kept in the trace store), with its Prometheus and Alertmanager,
#         scraping one target that is never there (up needs one): where serve and the gateway send
#         their spans when they run under the stack;
#   nginx Debian's nginx answering 200 to every POST after reading and discarding its body: the
#         cheapest peer, so that on a 2-core machine the receiver does not take CPU from the load
#         generator it shares a core with (which drives the traced side slower in a closed loop);
#   node  tests/trace/otlp_receiver.js --quiet, the npm-decoder peer: every batch decoded by the
#         OpenTelemetry protobuf definitions in JavaScript (needs NODE_PATH). It reads slowly, and
#         on loopback the kernel's delivery into a slow reader is charged to the sender: serve's
#         CPU per request measures ~2 % higher against it than against the other two.
# Each runs on RECEIVER_CPUS (default: the bench's core).
start_otlp_receiver() {
  local cpus="${RECEIVER_CPUS:-${BENCH_CPUS:-1}}"
  case "${OTLP_SINK:-up}" in
    node)
      : "${NODE_PATH:?set NODE_PATH to a node_modules holding @opentelemetry/otlp-transformer@0.52.1 (web/ after npm ci)}"
      taskset -c "$cpus" node "$ROOT/tests/trace/otlp_receiver.js" --quiet > "$WORK/receiver.out" 2>&1 &
      PIDS+=($!)
      for _ in $(seq 100); do grep -q '"port"' "$WORK/receiver.out" 2>/dev/null && break; sleep 0.1; done
      OTLP_ENDPOINT="http://127.0.0.1:$(python3 -c "import json; print(json.loads(open('$WORK/receiver.out').readline())['port'])")/v1/traces"
      ;;
    nginx)
      local port; port="$(free_port)"
      write_nginx_conf "$WORK/sink" "
  client_max_body_size 16m;
  server {
    listen 127.0.0.1:$port;
    location = /v1/traces { default_type application/x-protobuf; return 200; }
  }"
      taskset -c "$cpus" "${NGINX:-/usr/sbin/nginx}" -c "$WORK/sink/nginx.conf" -p "$WORK/sink" \
        > "$WORK/sink/out.log" 2>&1 &
      PIDS+=($!)
      OTLP_ENDPOINT="http://127.0.0.1:$port/v1/traces"
      for _ in $(seq 100); do curl -s -o /dev/null -X POST "$OTLP_ENDPOINT" && break; sleep 0.1; done
      ;;
    up)
      local port; port="$(free_port)"
      taskset -c "$cpus" "$INFERSCOPE" up --port "$port" --prometheus-port 0 --alertmanager-port 0 \
        --state-dir "$WORK/up" --target unscraped=node@http://127.0.0.1:1/metrics > "$WORK/up.log" 2>&1 &
      PIDS+=($!)
      OTLP_ENDPOINT="http://127.0.0.1:$port/v1/traces"
      for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/api/status" && break; sleep 0.1; done
      curl -sf -o /dev/null "http://127.0.0.1:$port/api/status" || { echo "inferscope up did not start:" >&2; tail -5 "$WORK/up.log" >&2; return 1; }
      ;;
    *) echo "OTLP_SINK must be node, nginx or up, not '$OTLP_SINK'" >&2; return 2 ;;
  esac
}

# TRACE_LOAD is how the tracing benchmarks drive the measured processes. By default a closed loop
# of 16 requests in flight: the most requests per second, but the arrival pattern then follows
# the measured process (anything that slows one side also changes how many requests each of its
# wake-ups finds, and so its syscalls per request). With TRACE_RATE=R an open loop at R requests
# per second, constant gaps: every side sees the same arrivals, which is how an overhead is read
# at a given load. Keep R well under the slowest side's capacity: near saturation requests queue,
# each wake-up finds more of them, and CPU per request falls as load rises, so a side that costs
# more can measure cheaper.
if [[ -n "${TRACE_RATE:-}" ]]; then
  TRACE_LOAD=(--request-rate "$TRACE_RATE" --arrival constant --max-concurrency 256)
else
  TRACE_LOAD=(--max-concurrency 16)
fi

# start_serve_tracing_pair: the OTLP receiver and two `inferscope serve --profile zero-cost` (one
# io thread, so the HTTP path and not the simulated engine is measured), OFF without tracing and ON
# exporting every request to the receiver; sets OFF/ON (ports), OFF_PID/ON_PID, and TRACE_BENCH,
# the bench command line both are measured with (seed, sizes; --num-prompts left to the caller).
start_serve_tracing_pair() {
  start_otlp_receiver
  OFF="$(free_port)"; ON="$(free_port)"
  local serve=(--profile zero-cost --max-num-seqs 4096 --max-waiting 4096 --io-threads 1 --log-level warn)
  start_serve "$OFF" "${serve[@]}"
  OFF_PID="${PIDS[-1]}"
  start_serve "$ON" "${serve[@]}" --otlp-endpoint "$OTLP_ENDPOINT" --trace-sample 1
  ON_PID="${PIDS[-1]}"
  TRACE_BENCH=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --no-progress --seed 1 --random-input-len 32
               --random-output-len 16 "${TRACE_LOAD[@]}")
}

# cpu_pair NAME_A PORT_A PID_A NAME_B PORT_B PID_B ROUND [ARGS...]: runs the bench command line in
# the array B (plus ARGS) against 127.0.0.1:PORT_A and, at the same time, a second one against
# PORT_B, and prints "NAME ROUND NS COMPLETED FAILED" for each side, NS being the CPU nanoseconds
# its process used meanwhile, the exporter's last batch included (read after its 1 s batch delay,
# on both sides alike).
cpu_pair() {
  local name_a="$1" port_a="$2" pid_a="$3" name_b="$4" port_b="$5" pid_b="$6" round="$7" before_a before_b after_a after_b
  shift 7
  before_a="$(cpu_ns "$pid_a")"; before_b="$(cpu_ns "$pid_b")"
  "${B[@]}" "$@" --base-url "http://127.0.0.1:$port_a" --json "$WORK/$name_a-$round.json" > /dev/null &
  local bench_a=$!
  "${B[@]}" "$@" --base-url "http://127.0.0.1:$port_b" --json "$WORK/$name_b-$round.json" > /dev/null
  wait "$bench_a"
  sleep 1.2
  after_a="$(cpu_ns "$pid_a")"; after_b="$(cpu_ns "$pid_b")"
  local name
  for name in "$name_a" "$name_b"; do
    local ns=$((after_b - before_b))
    [[ "$name" == "$name_a" ]] && ns=$((after_a - before_a))
    echo "$name $round $ns $(json_get "$WORK/$name-$round.json" completed) $(json_get "$WORK/$name-$round.json" failed)"
  done
}

# Every measured request carries a traceparent, the same bytes on every side but the sampled
# flag: the traced process honours it (ParentBased), so one process is measured exporting every
# request ("on", flag 01) and exporting none ("unsampled", flag 00), beside the untraced process
# ("off"), which ignores the header.
TRACEPARENT_SAMPLED=(--header "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
TRACEPARENT_UNSAMPLED=(--header "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")

# tracing_rounds OFF_PORT OFF_PID ON_PORT ON_PID ROUNDS: a sampled warm-up run on each process (the
# exporter's batch buffers are first touched there, not in a measured round), then ROUNDS rounds,
# each of two paired runs: the untraced process and the traced one driven at the same time by two
# identical bench runs, every request sampled ("off"/"on"), then every request unsampled
# ("off_unsampled"/"unsampled"). Both processes share a core (SERVE_CPUS / GATEWAY_CPUS), so a slow
# spell of this shared machine (a neighbour, the hypervisor) lands on both sides of a pair at
# once instead of on whichever side happened to run then: on a 2-core VM, runs taken one after
# the other swung by +-5 % and single rounds by up to 60 %, more than the effect measured.
tracing_rounds() {
  local off="$1" off_pid="$2" on="$3" on_pid="$4" rounds="$5"
  "${B[@]}" "${TRACEPARENT_SAMPLED[@]}" --base-url "http://127.0.0.1:$off" > /dev/null
  "${B[@]}" "${TRACEPARENT_SAMPLED[@]}" --base-url "http://127.0.0.1:$on" > /dev/null
  sleep 1.2
  for r in $(seq "$rounds"); do
    cpu_pair off "$off" "$off_pid" on "$on" "$on_pid" "$r" "${TRACEPARENT_SAMPLED[@]}"
    cpu_pair off_unsampled "$off" "$off_pid" unsampled "$on" "$on_pid" "$r" "${TRACEPARENT_UNSAMPLED[@]}"
  done
}

# tracing_overhead_report WHO CPU_FILE METRICS_URL: from the "NAME ROUND NS COMPLETED FAILED"
# lines of CPU_FILE (tracing_rounds) prints each side's CPU per request over all rounds, the spans
# the traced process exported and dropped (from its /metrics), and the ratios, each pooled over
# all rounds and as the median and range of the rounds' own: on/off (the issue's figure: tracing
# on against a process without it, from the same paired runs), unsampled/off (what tracing costs
# a request it does not export) and on/unsampled (the two pairs' ratios divided: what exporting a
# request costs).
tracing_overhead_report() {
  sleep 2  # the exporter's last batch (1 s batch delay)
  local exported dropped
  exported="$(curl -s "$3" | awk '/^inferscope_trace_spans_exported_total/ {print $2}')"
  dropped="$(curl -s "$3" | awk '/^inferscope_traces_dropped_total/ {s += $2} END {print s + 0}')"
  python3 - "$1" "$2" "$exported" "$dropped" <<'PY'
import statistics, sys
who = sys.argv[1]
totals, rounds = {}, {}
for line in open(sys.argv[2]):
    name, rnd, ns, completed, failed = line.split()
    t = totals.setdefault(name, [0, 0, 0])
    t[0] += int(ns); t[1] += int(completed); t[2] += int(failed)
    rounds.setdefault(rnd, {})[name] = int(ns) / 1e3 / max(int(completed), 1)
per = {}
for name, (ns, completed, failed) in totals.items():
    per[name] = ns / 1e3 / max(completed, 1)
    print(f"tracing {name:13s}: {who} cpu {ns / 1e9:.3f} s for {completed} requests ({failed} failed), {per[name]:.2f} us per request")
print(f"spans exported {sys.argv[3]}, dropped {sys.argv[4]}")
def summary(pooled, ratio):
    r = sorted(ratio(x) for x in rounds.values())
    return f"{pooled:.3f}; rounds' median {statistics.median(r):.3f}, range {r[0]:.3f}-{r[-1]:.3f} over {len(r)} rounds"
on_off = lambda x: x["on"] / x["off"]
unsampled_off = lambda x: x["unsampled"] / x["off_unsampled"]
print(f"tracing unsampled/off cpu per request: {summary(per['unsampled'] / per['off_unsampled'], unsampled_off)}")
print(f"tracing on/unsampled cpu per request: {summary(on_off(per) / unsampled_off(per), lambda x: on_off(x) / unsampled_off(x))}")
print(f"tracing on/off cpu per request: {summary(on_off(per), on_off)}  (goal <= 1.05)")
PY
}
