"""Task bodies shared by the RQ, Celery and Streams workers of tests/queue: each job calls
`inferscope serve` over its OpenAI API (urllib), then holds the job for `hold` seconds so that
the collector sees it in progress. The time the job started is written to `started_path`."""
import json
import time
import urllib.request


def call_serve(url, hold, started_path):
    started = time.time()
    with open(started_path, "w") as out:
        out.write(repr(started))
    body = json.dumps({"model": "sim-a", "max_tokens": 4,
                       "messages": [{"role": "user", "content": "a queued job"}]}).encode()
    request = urllib.request.Request(url + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        reply.read()
    time.sleep(hold)
    return started
