#!/usr/bin/env bash
# Client capacity against `inferscope serve --profile zero-cost` (the server does no simulated
# work): (1) non-streaming requests per second with keep-alive, target >= 20,000 req/s;
# (2) concurrent SSE streams held open at once, target >= 5,000. The client runs on one core
# (BENCH_CPUS, default 1), the server on another (SERVE_CPUS, default 0) - 2 cores in all.
# Usage: bench/loadgen/serve_throughput.sh [seconds=10] [streams=5000]
source "$(dirname "$0")/common.sh"
SECS="${1:-10}"; STREAMS="${2:-5000}"
PORT="$(free_port)"
start_serve "$PORT" --profile zero-cost --max-num-seqs 16384 --max-waiting 16384 --io-threads 1
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --base-url "http://127.0.0.1:$PORT" --no-progress --ignore-eos)
"${B[@]}" --no-stream --max-concurrency 128 --duration "${SECS}s" --random-input-len 16 --random-output-len 1 \
  --json "$WORK/rps.json" > "$WORK/rps.txt"
echo "non-streaming: $(json_get "$WORK/rps.json" request_throughput) req/s, failed $(json_get "$WORK/rps.json" failed), schedule lag p99 $(json_get "$WORK/rps.json" p99_schedule_lag_ms) ms   (target >= 20000 req/s)"
# Streams must stay open while the rest connect: a second server with the real 8B cost model
# (decode steps slow down with 5,000 sequences in the batch) keeps each 32-token stream open for
# seconds; peak concurrency is the figure.
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
PORT="$(free_port)"
start_serve "$PORT" --profile llama-3.1-8b-h100-bf16 --max-num-seqs 16384 --max-waiting 16384 --io-threads 1
B=(taskset -c "${BENCH_CPUS:-1}" "$INFERSCOPE" bench --base-url "http://127.0.0.1:$PORT" --no-progress --ignore-eos)
"${B[@]}" --max-concurrency "$STREAMS" --num-prompts "$STREAMS" --random-input-len 16 --random-output-len 32 \
  --timeout 300s --json "$WORK/streams.json" > "$WORK/streams.txt"
echo "streaming: peak concurrent $(json_get "$WORK/streams.json" max_concurrent_requests) streams, completed $(json_get "$WORK/streams.json" completed), failed $(json_get "$WORK/streams.json" failed), output $(json_get "$WORK/streams.json" output_throughput) tok/s   (target >= 5000 streams)"
