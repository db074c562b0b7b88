#!/usr/bin/env python3
"""Checks the queue alert's messages of scripts/demo.sh's phase 4, as the robot received them,
against each other and against the dashboard's page.

    demo_check_queue.py FIRING_FILE RESOLVED_FILE PAGE_JSON

FIRING (the workers stopped, jobs keep coming at one a second): the ageing rate of the oldest
job is about a second per second (nothing consumes the queue); the diagnosis' headline and its
evidence print the same depth; the depth the diagnosis read agrees with the alert's description
(both read the same queue, at most a few seconds apart); the depth before the workers stopped is
a figure (the queue existed and was consumed then), not n/a. RESOLVED: a "Recovered" part that
says how many jobs waited when it fired and when it resolved (fewer), agreeing with the FIRING
message, and no line made only of "no data".

PAGE_JSON is the page's data answer (GET /api/dashboard/data?range=15m, what the browser draws),
read after the resolve. At the end of each span the Recovered part names (before, during, after;
their times are in the message), the jobs waiting and the oldest job's age it prints are the
page's at that time (its point within a second, else between its two points around it), give or
take a scrape's slack; the page draws a value there (not a gap); and the workers chart shows no
live worker when it fired, as the diagnosis says.
Prints one line; exits 1 when a check fails.
"""
import datetime
import json
import re
import sys

# The producer adds one job a second; the alert's description is rendered at a rule evaluation
# up to Alertmanager's group_wait (2 s) after the firing the diagnosis reads, plus one evaluation
# interval (1 s): at most this many jobs apart.
DEPTH_SLACK = 3
AGEING_MIN, AGEING_MAX = 0.8, 1.2
# The page's points are Prometheus' last samples at or before each step (5 s at 15m); a message's
# figure "at a span's end" is the last sample up to a whole second, so the two can be a few scrapes
# apart (one job and one second of age each in a queue nothing consumes): runs on the shared 2-core
# machine put them 0-2 apart, and a loaded machine delays scrapes more. A wrong series, unit or
# queue is tens of jobs or seconds off.
PAGE_DEPTH_SLACK = 5
PAGE_AGE_SLACK_S = 5.0


def fail(why):
    print(f"demo: FAILED: the queue alert's messages: {why}", file=sys.stderr)
    sys.exit(1)


def number(text):
    """A figure as the messages print it ("15", "15.0", "1.2k"); None for n/a, no data."""
    m = re.fullmatch(r"(-?[0-9]+(?:\.[0-9]+)?)([kM]?)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6}[m.group(2)]


def seconds(text):
    """A duration as the messages print it ("2.46 s", "45 ms", "0 s"); None for n/a, no data."""
    m = re.fullmatch(r"(-?[0-9]+(?:\.[0-9]+)?) ?(µs|ms|s|min|h)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * {"µs": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}[m.group(2)]


def span_length(text):
    """A window as Prometheus spells it ("12s", "5m", "1m30s") in seconds."""
    parts = re.findall(r"([0-9]+)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        fail(f"cannot read the span '{text}' in the Recovered part")
    return sum(int(n) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}[u] for n, u in parts)


def page_series(page, panel, label):
    """(timestamps, values) of the page's series `label` in `panel`; fails when the page has none."""
    p = page.get("panels", {}).get(panel)
    if not p or p.get("status") != "ok" or "timeseries" not in p:
        fail(f"the page's {panel} chart has no data ({p.get('status') if p else 'absent'})")
    chart = p["timeseries"]
    for series in chart["series"]:
        if series["label"] == label:
            return chart["timestamps"], series["values"]
    fail(f"the page's {panel} chart has no series '{label}' (it has "
         f"{', '.join(x['label'] for x in chart['series'])})")


def page_around(series, at, what):
    """The page's values around time `at`: its point within a second of it (the messages print
    whole seconds), else the last point before and the first after; fails when the page draws a
    gap there."""
    times, values = series
    close = [i for i, t in enumerate(times) if abs(t - at) <= 1.0]
    if close:
        around = [values[i] for i in close]
    else:
        before = [i for i, t in enumerate(times) if t < at]
        if not before or before[-1] + 1 >= len(times):
            fail(f"the page's range does not hold {what} at {iso(at)}")
        around = [values[before[-1]], values[before[-1] + 1]]
    if any(v is None for v in around):
        fail(f"the page draws no {what} around {iso(at)} (a gap) where the message prints a figure")
    return around


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%H:%M:%SZ")


def check_page(page, firing, resolved, depth, age):
    """Compares the Recovered part's figures with the page's queue charts at each span's end."""
    labels = re.search(r"queue=([^,\s]+),.*system=([^,\s]+)", firing)
    job = re.search(r"\(job=([^)]+)\)", firing)
    if not labels or not job:
        fail("the FIRING message names no queue, system and job")
    queue_name = f"{labels.group(1)} ({labels.group(2)}, {job.group(1)})"
    spans = re.search(r"during: the (\S+) up to (\S+) \(when it fired\); after: the (\S+) up to (\S+?)_?$",
                      resolved, re.M)
    if not spans:
        fail("the Recovered part does not say when its spans end")
    during_end = datetime.datetime.fromisoformat(spans.group(2).replace("Z", "+00:00")).timestamp()
    after_end = datetime.datetime.fromisoformat(spans.group(4).replace("Z", "+00:00")).timestamp()
    ends = {"before": during_end - span_length(spans.group(1)), "during": during_end, "after": after_end}

    charts = [("jobs waiting", depth, number, page_series(page, "jobqueue_depth", f"depth {queue_name}"),
               PAGE_DEPTH_SLACK, "depth", ""),
              ("oldest job's age", age, seconds, page_series(page, "jobqueue_wait", f"oldest age {queue_name}"),
               PAGE_AGE_SLACK_S, "age", " s")]
    checked = []
    for what, printed, read, series, slack, chart, unit in charts:
        for i, span in enumerate(("before", "during", "after")):
            value = read(printed[i])
            if value is None:
                continue
            around = page_around(series, ends[span], what)
            lo, hi = min(around), max(around)
            if not lo - slack <= value <= hi + slack:
                fail(f"Recovered prints {what} {printed[i]} at the {span} span's end ({iso(ends[span])}); "
                     f"the page's {chart} chart shows {lo:.4g}..{hi:.4g}{unit} then")
            if chart == "depth":
                checked.append(f"{span} {printed[i]} in {lo:g}..{hi:g}")
    # "no live worker" when it fired: the page's workers chart at its last point up to then.
    workers = page.get("panels", {}).get("jobqueue_workers", {}).get("timeseries")
    if not workers:
        fail("the page's workers chart has no data")
    at = [i for i, t in enumerate(workers["timestamps"]) if t <= ends["during"]]
    live = [s["values"][at[-1]] for s in workers["series"] if s["label"].split(" ")[0] in ("busy", "idle")] if at else []
    if not live or any(v is None for v in live) or sum(live) != 0:
        fail(f"the diagnosis says no live worker when it fired; the page's workers chart shows busy + idle {live}")
    return ", ".join(checked)


def main():
    firing = open(sys.argv[1], encoding="utf-8").read()
    resolved = open(sys.argv[2], encoding="utf-8").read()
    try:
        page = json.load(open(sys.argv[3], encoding="utf-8"))
    except (OSError, ValueError) as e:
        fail(f"cannot read the page's data answer {sys.argv[3]}: {e}")
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
    age = figures.get("oldest waiting job's age (at each span's end)")
    if not age:
        fail("the Recovered part names no oldest job's age")
    on_page = check_page(page, firing, resolved, depth, age)
    print(f"demo: the queue alert's messages agree with each other and the page: {desc.group(1)} jobs described, "
          f"peak depth {head.group(1)} -> {head.group(2)}, ageing {ageing} s per s; recovered: jobs waiting "
          f"{depth[0]} / {depth[1]} / {depth[2]}; page depth: {on_page}")


if __name__ == "__main__":
    main()
