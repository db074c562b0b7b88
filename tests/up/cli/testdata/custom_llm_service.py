"""A hand-instrumented LLM-style service for the tests of up's `kind: custom` targets.

It is what many teams run: a FastAPI app with prometheus_client metrics under its own names
(llm_request_latency_seconds, llm_requests_total, llm_input_tokens_total, ...), none of which
any inferscope dialect knows. It answers POST /v1/chat/completions (non-streaming, with usage)
well enough for `inferscope bench --no-stream`, spends a fixed time per output token, and takes
a slowdown factor on POST /admin/slowdown {"factor": 4} (1 = none).

Usage: python3 custom_llm_service.py  (binds 127.0.0.1 on an ephemeral port, prints
"listening PORT" on stdout once it accepts connections)
"""
import asyncio
import json
import socket
import sys
import time

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

MODEL = "house-llm"
SECONDS_PER_OUTPUT_TOKEN = 0.008
MAX_CONCURRENT = 32

registry = CollectorRegistry()
REQUEST_LATENCY = Histogram("llm_request_latency_seconds", "Time from request received to response sent",
                            ["model"], registry=registry)
REQUESTS = Counter("llm_requests", "Requests finished", ["model", "status"], registry=registry)
FAILURES = Counter("llm_request_failures", "Requests that failed", ["model"], registry=registry)
INPUT_TOKENS = Counter("llm_input_tokens", "Prompt tokens received", ["model"], registry=registry)
OUTPUT_TOKENS = Counter("llm_output_tokens", "Tokens generated", ["model"], registry=registry)
QUEUE_SIZE = Gauge("llm_queue_size", "Requests waiting for a generation slot", registry=registry)

app = FastAPI()
slots = asyncio.Semaphore(MAX_CONCURRENT)
slowdown = {"factor": 1.0}


def prompt_tokens(body):
    text = " ".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
    return max(1, len(text.split()))


@app.post("/v1/chat/completions")
async def chat_completions(request: Request):
    started = time.perf_counter()
    try:
        body = await request.json()
    except json.JSONDecodeError:
        FAILURES.labels(MODEL).inc()
        REQUESTS.labels(MODEL, "400").inc()
        return JSONResponse({"error": {"message": "body is not JSON", "type": "invalid_request_error"}}, 400)
    output = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
    prompt = prompt_tokens(body)
    QUEUE_SIZE.inc()
    async with slots:
        QUEUE_SIZE.dec()
        await asyncio.sleep(output * SECONDS_PER_OUTPUT_TOKEN * slowdown["factor"])
    INPUT_TOKENS.labels(MODEL).inc(prompt)
    OUTPUT_TOKENS.labels(MODEL).inc(output)
    REQUESTS.labels(MODEL, "200").inc()
    REQUEST_LATENCY.labels(MODEL).observe(time.perf_counter() - started)
    return {
        "id": "chatcmpl-house", "object": "chat.completion", "created": int(time.time()), "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": " ".join(["tok"] * output)}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output},
    }


@app.post("/admin/slowdown")
async def set_slowdown(request: Request):
    body = await request.json()
    slowdown["factor"] = float(body.get("factor", 1))
    return {"factor": slowdown["factor"]}


@app.get("/metrics")
async def metrics():
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


class AnnouncingServer(uvicorn.Server):
    """Prints the port once the socket accepts connections, so the test knows where to connect."""

    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        print(f"listening {sockets[0].getsockname()[1]}", flush=True)


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = AnnouncingServer(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
