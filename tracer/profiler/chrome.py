"""A profile as Chrome trace-event JSON, which Perfetto and chrome://tracing open.

Every event is a complete event ("ph": "X", a start `ts` and a duration `dur` in
microseconds from the profile's start) on the thread that ran it: each compiled call, the
regions and kernels it ran (a loop's event encloses its body's), and each eager op. Their
`args` hold the user's line, the IR node and the nodes a kernel computes.
"""

import json
import os
import threading

from tracer.ir import format_location

PROCESS = 1  # one process in the trace: this one (pids are named by a metadata event)


def trace_events(profile):
    """The trace's events, as dicts."""
    origin = profile.start_ns
    threads = {}

    def thread(ident):
        return threads.setdefault(ident, len(threads) + 1)

    def timed(name, category, start, end, ident, args):
        return {
            "name": name,
            "cat": category,
            "ph": "X",
            "ts": (start - origin) / 1e3,
            "dur": (end - start) / 1e3,
            "pid": PROCESS,
            "tid": thread(ident),
            "args": args,
        }

    events = []
    stored = profile.events[2 : 2 + 3 * min(int(profile.events[0]), int(profile.events[1]))]
    steps = stored.reshape(-1, 3)
    for record in profile.functions:
        for k, (start, end, ident, first, last) in enumerate(record.calls):
            events.append(timed(record.name, "function", start, end, ident, {"call": k}))
            for probe, step_start, step_end in steps[first:last].tolist():
                events.append(
                    timed(
                        *_step(record.probes[probe]),
                        step_start,
                        step_end,
                        ident,
                        _args(record.probes[probe]),
                    )
                )
    for op, where, start, end, ident in profile.eager:
        events.append(timed(op, "eager op", start, end, ident, {"line": format_location(where)}))
    metadata = [
        {
            "name": "process_name",
            "ph": "M",
            "pid": PROCESS,
            "args": {"name": f"tracer (pid {os.getpid()})"},
        }
    ]
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, tid in threads.items():
        metadata.append(
            {
                "name": "thread_name",
                "ph": "M",
                "pid": PROCESS,
                "tid": tid,
                "args": {"name": names.get(ident, f"thread {tid}")},
            }
        )
    return metadata + sorted(events, key=lambda e: (e["tid"], e["ts"], -e["dur"]))


def _step(probe):
    """(name, category) of a step's event."""
    name = probe.kernel or probe.op
    return name, probe.kind


def _args(probe):
    return {
        "line": format_location(probe.location),
        "node": probe.node_name,
        "step": probe.label,
        "nodes": [f"{op} {format_location(where)}".rstrip() for op, where, _ in probe.members],
        "bytes": probe.bytes,
    }


def write(profile, path):
    dropped = max(int(profile.events[0]) - int(profile.events[1]), 0)
    document = {
        "traceEvents": trace_events(profile),
        "displayTimeUnit": "ms",
        "otherData": {"producer": "tracer.profiler", "dropped_step_events": dropped},
    }
    with open(path, "w") as file:
        json.dump(document, file)
