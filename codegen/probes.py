"""Timing probes of the profiled C target: which step of a module each probe times, and the
C that times it.

Lowering with a ProbeTable (`codegen.lower.lower(..., probes=table)`) puts each step of the
entry point, and each step of the graphs its structured ops hold, between two probe
statements. The module then adds each step's time and count to `tracer_probe_totals`
([ns, calls] per probe) and, while the runtime gives it one, appends an event (probe, start,
end, in ns of CLOCK_MONOTONIC, the clock of Python's `time.monotonic_ns`) to
`tracer_probe_events` ([count, capacity, then the events]): the runtime sets both variables
when it loads the module (codegen/profiled.py). A structured op's probe encloses those of
the steps it runs, so its events enclose theirs.

Each Probe says what its step computes: its kind, its label (the step's comment in the C),
its C kernel, its IR node (named as the printed IR names it) and the nodes of the user's code
it holds (a fused kernel's body), each weighted by the elements it makes, which is how the
profiler shares a kernel's time between the lines of its nodes.
"""

import numpy as np

from codegen.forms import shown_op
from tracer.ir import Subgraph, dims, node_names

KINDS = ("kernel", "blas", "host", "region")


class Probe:
    """One step a module times. `parent` is the index of the structured op's probe whose held
    graph runs it (None at the entry point); `members` lists (op, location, weight) of the IR
    nodes it computes; `bytes` what it reads and writes (None where a size is known only when
    it runs)."""

    def __init__(self, index, node, kind, parent, name):
        self.index = index
        self.kind = kind
        self.parent = parent
        self.node_name = name
        self.op = shown_op(node)
        self.location = node.location
        self.label = None  # the step's comment in the C, set by `close`
        self.kernel = None  # the C name of its kernel, for a kernel's probe
        self.members = _members(node)
        self.bytes = _bytes_moved(node)

    def __repr__(self):
        return f"<Probe {self.index} {self.kind} {self.label}>"


class ProbeTable:
    """The probes of one module, made while it is lowered (one per step, in order)."""

    def __init__(self, graph):
        self.probes = []
        self._names = _names(graph)
        self._open = []  # indices of the probes whose steps are being written

    def open(self, node, kind):
        """A new probe for the step computing `node`: the steps written until `close` are
        within it."""
        parent = self._open[-1] if self._open else None
        probe = Probe(len(self.probes), node, kind, parent, self._names.get(id(node)))
        self.probes.append(probe)
        self._open.append(probe.index)
        return probe

    def close(self, probe, lines, label, kernel=None):
        """`lines` (the step's C statements) between the probe's two statements."""
        assert self._open.pop() == probe.index
        probe.label, probe.kernel = label, kernel
        k = probe.index
        return [f"TR_PROBE_START({k});", *lines, f"TR_PROBE_END({k});"]


def _names(graph, prefix=""):
    """{id(node): name} of every node of `graph` and of the graphs its nodes hold: the printed
    IR's `%k`, a held graph's nodes under their holder's (`%7.body%2`)."""
    names = {key: prefix + name for key, name in node_names(graph).items()}
    for node in graph.nodes:
        for attribute, value in node.attrs.items():
            if isinstance(value, Subgraph):
                names.update(_names(value.graph, f"{names[id(node)]}.{attribute}"))
    return names


def _members(node):
    """(op, location, weight) of the IR nodes a step computes: a fused kernel's body nodes,
    else the node itself."""
    kernel = node.attrs.get("kernel") if node.op == "fused" else None
    if kernel is None:
        return [(node.op, node.location, 1)]
    body = [n for n in kernel.graph.nodes if n.op not in ("input", "const")]
    return [(n.op, n.location or node.location, _work(n)) for n in body] or [
        (node.op, node.location, 1)
    ]


def _work(node):
    """The elements a body node reads or writes, the most of them (a reduction's input)."""
    sizes = [dims.size(v.shape) for v in (node, *node.inputs)]
    return max([1] + [s for s in sizes if isinstance(s, int)])


def _bytes_moved(node):
    """Bytes of the node's inputs and results (each of a kernel of several), or None where
    one's size is not known."""
    total = 0
    for value in (*node.inputs, node):
        parts = value.dtype.parts if getattr(value.dtype, "is_tuple", False) else None
        for shape, dtype in parts or [(value.shape, value.dtype)]:
            size = dims.size(shape)
            if not isinstance(size, int) or getattr(dtype, "is_tuple", False):
                return None
            total += size * np.dtype(dtype.as_numpy_dtype).itemsize
    return total


def probe_helper():
    """The prologue's C of the probes: the two variables the runtime sets, the clock, and the
    statements TR_PROBE_START and TR_PROBE_END."""
    return PROBE_HELPER


PROBE_HELPER = r"""/* timing probes (codegen/probes.py): the runtime points these at its arrays */
#include <time.h>
#if defined(__GNUC__)
__attribute__((weak))  /* one variable for all the module's translation units */
#endif
int64_t *tracer_probe_totals;  /* [ns, calls] per probe */
#if defined(__GNUC__)
__attribute__((weak))
#endif
int64_t *tracer_probe_events;  /* [count, capacity, then (probe, start, end) per event] */
static inline int64_t tr_probe_now(void) {
    struct timespec clock;
    clock_gettime(CLOCK_MONOTONIC, &clock);
    return (int64_t)clock.tv_sec * 1000000000 + clock.tv_nsec;
}
static TR_NOINLINE void tr_probe_end(int64_t probe, int64_t start) {
    const int64_t end = tr_probe_now();
    int64_t *const totals = tracer_probe_totals;
    if (totals != NULL) {
        totals[2 * probe] += end - start;
        totals[2 * probe + 1] += 1;
    }
    int64_t *const events = tracer_probe_events;
    if (events != NULL) {
        const int64_t k = __atomic_fetch_add(&events[0], 1, __ATOMIC_RELAXED);
        if (k < events[1]) {
            events[2 + 3 * k] = probe;
            events[3 + 3 * k] = start;
            events[4 + 3 * k] = end;
        }
    }
}
#define TR_PROBE_START(k) const int64_t tr_probe_start##k = tr_probe_now()
#define TR_PROBE_END(k) tr_probe_end(k, tr_probe_start##k)
"""
