"""The Celery app of the tests (broker given with `celery --broker`). Late acks and a prefetch of
one keep exactly one message per worker process out of the broker lists: the one it runs."""
from celery import Celery

import queue_tasks

app = Celery("inferscope_queue_test")
app.conf.task_acks_late = True
app.conf.worker_prefetch_multiplier = 1


@app.task(name="call_serve")
def call_serve(url, hold, started_path):
    return queue_tasks.call_serve(url, hold, started_path)
