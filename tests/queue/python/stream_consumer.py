"""A Redis Streams consumer-group worker for the tests: reads one entry at a time with
XREADGROUP, runs queue_tasks.call_serve with the entry's fields, then XACKs it.
usage: stream_consumer.py REDIS_URL STREAM GROUP CONSUMER"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from redis import Redis

import queue_tasks


def main():
    redis_url, stream, group, consumer = sys.argv[1:5]
    r = Redis.from_url(redis_url)
    print("consuming", flush=True)
    while True:
        batch = r.xreadgroup(group, consumer, {stream: ">"}, count=1, block=200)
        for _, entries in batch or []:
            for entry_id, fields in entries:
                queue_tasks.call_serve(fields[b"url"].decode(), float(fields[b"hold"]),
                                       fields[b"started"].decode())
                r.xack(stream, group, entry_id)


if __name__ == "__main__":
    main()
