"""Enqueues jobs for the tests and prints one line per job: `<index> <enqueue time>`.
usage: enqueue.py rq REDIS_URL QUEUE COUNT SERVE_URL HOLD STARTED_DIR
       enqueue.py celery REDIS_URL QUEUE COUNT SERVE_URL HOLD STARTED_DIR [PRIORITY...]
"celery" adds the opt-in header inferscope_enqueued_at; "celery-plain" sends the messages as Celery
does by itself, with no enqueue time."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    system, redis_url, queue, count, serve_url, hold, started_dir = sys.argv[1:8]
    priorities = [int(p) for p in sys.argv[8:]]
    count, hold = int(count), float(hold)
    if system == "rq":
        from redis import Redis
        from rq import Queue
        import queue_tasks
        q = Queue(queue, connection=Redis.from_url(redis_url))
        for i in range(count):
            q.enqueue(queue_tasks.call_serve, serve_url, hold, os.path.join(started_dir, str(i)))
            print(i, repr(time.time()), flush=True)
    else:
        import celery_app
        celery_app.app.conf.broker_url = redis_url
        for i in range(count):
            priority = priorities[i] if i < len(priorities) else 0
            now = time.time()
            headers = {"inferscope_enqueued_at": now} if system == "celery" else {}
            celery_app.call_serve.apply_async((serve_url, hold, os.path.join(started_dir, str(i))), queue=queue,
                                              priority=priority, headers=headers)
            print(i, repr(now), flush=True)


if __name__ == "__main__":
    main()
