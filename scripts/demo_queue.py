"""The job queue of scripts/demo.sh: jobs on a Redis queue that RQ workers (Debian's python3-rq)
take off and run, each one a chat completion through the demo's gateway, as a service that puts
inference behind a job queue would do.

The job function, ask_gateway, uses the standard library only (urllib), so a worker needs nothing
beyond RQ. The producer enqueues at a fixed rate until it is stopped (SIGTERM):
    /usr/bin/python3 scripts/demo_queue.py produce REDIS_URL QUEUE GATEWAY_URL MODEL JOBS_PER_SECOND
Workers: rq worker --url REDIS_URL --path scripts QUEUE"""
import json
import sys
import time
import urllib.request

# The job's question is fixed here, not passed as an argument: RQ's workers log each job's
# arguments, and prompts stay out of logs.
_QUESTION = "In one sentence: why do jobs wait in a queue?"


def ask_gateway(gateway_url, model, max_tokens):
    """Asks the gateway for one chat completion; returns the completion's token count. An HTTP
    error or a reply without choices raises, so RQ records the job as failed."""
    body = json.dumps({"model": model, "max_tokens": max_tokens,
                       "messages": [{"role": "user", "content": _QUESTION}]}).encode()
    request = urllib.request.Request(gateway_url + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        answer = json.loads(reply.read())
    if not answer.get("choices"):
        raise RuntimeError("the gateway answered without choices")
    return answer.get("usage", {}).get("completion_tokens", 0)


def produce(redis_url, queue_name, gateway_url, model, jobs_per_second):
    """Enqueues ask_gateway jobs at jobs_per_second (open loop: the pace does not follow the
    workers) until the process is stopped."""
    from redis import Redis
    from rq import Queue
    queue = Queue(queue_name, connection=Redis.from_url(redis_url))
    period = 1.0 / jobs_per_second
    next_at = time.monotonic()
    while True:
        # By name: this file runs as __main__ here, and workers import it as demo_queue.
        queue.enqueue("demo_queue.ask_gateway", gateway_url, model, 16)
        next_at += period
        time.sleep(max(0.0, next_at - time.monotonic()))


def main(argv):
    if len(argv) != 7 or argv[1] != "produce":
        sys.exit("usage: demo_queue.py produce REDIS_URL QUEUE GATEWAY_URL MODEL JOBS_PER_SECOND")
    try:
        rate = float(argv[6])
    except ValueError:
        rate = 0.0
    if not rate > 0:
        sys.exit(f"demo_queue.py: JOBS_PER_SECOND must be a number above 0, got '{argv[6]}'")
    produce(argv[2], argv[3], argv[4], argv[5], rate)


if __name__ == "__main__":
    main(sys.argv)
