#!/usr/bin/env python3
"""Checks the queue alert's messages of scripts/demo.sh's phase 4, as the robot received them.

    demo_check_queue.py FIRING_FILE RESOLVED_FILE

FIRING (the workers stopped, jobs keep coming at one a second): the ageing rate of the oldest
job is about a second per second (nothing consumes the queue); the diagnosis' headline and its
evidence print the same depth; the depth the diagnosis read agrees with the alert's description
(both read the same queue, at most a few seconds apart); the depth before the workers stopped is
a figure (the queue existed and was consumed then), not n/a. RESOLVED: a "Recovered" part that
says how many jobs waited when it fired and when it resolved (fewer), agreeing with the FIRING
message, and no line made only of "no data". Prints one line; exits 1 when a check fails.
"""
import re
import sys

# The producer adds one job a second; the alert's description is rendered at a rule evaluation
# up to Alertmanager's group_wait (2 s) after the firing the diagnosis reads, plus one evaluation
# interval (1 s): at most this many jobs apart.
DEPTH_SLACK = 3
AGEING_MIN, AGEING_MAX = 0.8, 1.2


def fail(why):
    print(f"demo: FAILED: the queue alert's messages: {why}", file=sys.stderr)
    sys.exit(1)


def number(text):
    """A figure as the messages print it ("15", "15.0", "1.2k"); None for n/a, no data."""
    m = re.fullmatch(r"(-?[0-9]+(?:\.[0-9]+)?)([kM]?)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6}[m.group(2)]


def main():
    firing = open(sys.argv[1], encoding="utf-8").read()
    resolved = open(sys.argv[2], encoding="utf-8").read()
    if "FIRING" not in firing:
        fail("no FIRING message received")
    if "RESOLVED" not in resolved:
        fail("no RESOLVED message received")

    desc = re.search(r"\*Description\*: ([0-9.]+) jobs wait", firing)
    if not desc:
        fail("the FIRING description names no number of waiting jobs")
    described = float(desc.group(1))

    rate = re.search(r"the oldest job ages (-?[0-9.]+) s per s", firing)
    if not rate:
        fail("the FIRING diagnosis names no ageing rate of the oldest job")
    ageing = float(rate.group(1))
    if not AGEING_MIN <= ageing <= AGEING_MAX:
        fail(f"the oldest job ages {ageing} s per s in a queue nothing consumes (expected about 1)")

    head = re.search(r"peak depth (\S+) -> (\S+),", firing)
    if not head:
        fail("the FIRING headline names no peak depth")
    evidence = re.search(r"`inferscope_queue_depth \(jobs waiting, peak\)` (\S+)(?: jobs)? → (\S+) jobs", firing)
    if not evidence:
        fail("the FIRING diagnosis has no depth evidence")
    if [number(x) for x in head.groups()] != [number(x) for x in evidence.groups()]:
        fail(f"headline depth {' -> '.join(head.groups())} vs evidence {' → '.join(evidence.groups())}")
    before, during = (number(x) for x in head.groups())
    if before is None:
        fail(f"the depth before the workers stopped reads '{head.group(1)}' (the queue was consumed then)")
    if during is None or abs(during - described) > DEPTH_SLACK:
        fail(f"the diagnosis' peak depth {head.group(2)} vs the description's {desc.group(1)} jobs")
    waiting = re.search(r"workers_down\*\* \(queue_wait\) score [0-9.]+: ([0-9.]+) jobs wait", firing)
    if not waiting or abs(float(waiting.group(1)) - described) > DEPTH_SLACK:
        fail(f"the workers_down finding's waiting jobs vs the description's {desc.group(1)}")

    lines = resolved.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if re.fullmatch(r"\*{1,2}Recovered\*{1,2}.*", l.strip()))
    except StopIteration:
        fail("the RESOLVED message has no Recovered part")
    figures = {}
    for line in lines[start + 1:]:
        m = re.fullmatch(r"- (.+): before (.+), during (.+), after (.+)", line.strip())
        if not m:
            continue
        values = m.groups()[1:]
        if all(v == "no data" for v in values):
            fail(f"a Recovered line made only of 'no data': {line.strip()}")
        figures[m.group(1)] = values
    if not figures:
        fail("the Recovered part has no before / during / after figure")
    depth = figures.get("jobs waiting (at each span's end)")
    if not depth:
        fail("the Recovered part names no waiting jobs")
    fired, after = number(depth[1]), number(depth[2])
    if fired is None or abs(fired - described) > DEPTH_SLACK:
        fail(f"Recovered says {depth[1]} jobs waited when it fired, the FIRING description {desc.group(1)}")
    if after is None or not after < fired:
        fail(f"Recovered says {depth[2]} jobs wait at the resolve, {depth[1]} when it fired")
    print(f"demo: the queue alert's messages agree: {desc.group(1)} jobs described, peak depth "
          f"{head.group(1)} -> {head.group(2)}, ageing {ageing} s per s; recovered: jobs waiting "
          f"{depth[0]} / {depth[1]} / {depth[2]}")


if __name__ == "__main__":
    main()
