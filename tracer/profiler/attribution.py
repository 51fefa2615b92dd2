"""Where a profiled function's time went: each probe's self and total time, shared out to
the user's lines and to the IR nodes.

A probe's total is the time its steps took; its self time is that less the time of the
probes within it (a loop's own bookkeeping, where its body's kernels are timed apart). A
kernel that computes the nodes of several lines (a fused kernel) shares its self time
between them by the elements each node reads or writes. A call's own time (checking and
passing arguments, the results, Python) is the call's time less its probes'.
"""

import collections

import numpy as np


def probe_times(record):
    """(self ns, total ns, calls) of each probe of a FunctionRecord, as arrays."""
    totals = record.totals
    total = totals[:, 0].astype(np.float64)
    own = total.copy()
    for probe in record.probes:
        if probe.parent is not None:
            own[probe.parent] -= total[probe.index]
    return own, total, totals[:, 1]


def call_ns(record):
    """The time of the function's calls, in ns."""
    return sum(end - start for start, end, *_ in record.calls)


def outside_ns(record):
    """The part of the calls' time no probe saw (the call's own time)."""
    _, total, _ = probe_times(record)
    top = sum(total[p.index] for p in record.probes if p.parent is None)
    return max(call_ns(record) - top, 0)


def line_key(location):
    """(filename, line) of a node's location (a gradient's too), or None."""
    return None if location is None else (location[0], location[1])


def line_shares(probe):
    """{(filename, line): share} of a probe's self time."""
    weights = collections.Counter()
    for _, location, weight in probe.members:
        weights[line_key(location)] += weight
    whole = sum(weights.values())
    return {key: weight / whole for key, weight in weights.items()}


def add_lines(record, seconds):
    """Add each line's seconds in `record` to `seconds` ({(filename, line): s}); the calls'
    own time under (None, the function's name)."""
    own, _, _ = probe_times(record)
    for probe in record.probes:
        for key, share in line_shares(probe).items():
            seconds[key] = seconds.get(key, 0.0) + float(own[probe.index]) * share / 1e9
    key = (None, record.name)
    seconds[key] = seconds.get(key, 0.0) + outside_ns(record) / 1e9


def lines(record):
    """[(line key, self ns, total ns, calls)] of a function's lines: a line's total counts
    the whole of the regions it made (a loop's line, its body)."""
    own, total, calls = probe_times(record)
    rows = {}
    for probe in record.probes:
        for key, share in line_shares(probe).items():
            row = rows.setdefault(key, [0.0, 0.0, 0])
            row[0] += own[probe.index] * share
            row[1] += total[probe.index] * share
            row[2] = max(row[2], int(calls[probe.index]))
    return [(key, *row) for key, row in rows.items()]


def node_seconds(record):
    """{node name: self seconds} of the steps of a function."""
    own, _, _ = probe_times(record)
    seconds = {}
    for probe in record.probes:
        seconds[probe.node_name] = seconds.get(probe.node_name, 0.0) + own[probe.index] / 1e9
    return seconds
