"""The check that the profiled C target's module is the C module's code with probes around
each step, and nothing else (tests/test_profiler.py, and over the op catalogue
tests/test_backends.py): so the profiled module computes what the C module does. The C
module compared is the one with its own convolution kernels, which a function runs once it
is built (codegen/conv_kernels.py)."""

import re

from codegen import conv_kernels
from codegen.lower import lower
from codegen.probes import ProbeTable, probe_helper
from codegen.targets import PROFILED_C

PROBE_LINE = re.compile(r"\s*TR_PROBE_(START|END)\((\d+)\);$")


def assert_profiled_c_is_c_with_probes(graph, updates=None):
    """Lower `graph` for both targets (no compiler runs) and compare; the probe count."""
    with conv_kernels.own_kernels():
        plain = lower(graph, "f", compact_calls=False, watch=True, updates=updates).source
    table = ProbeTable(graph)
    profiled = lower(
        graph,
        "f",
        compact_calls=False,
        watch=True,
        updates=updates,
        target=PROFILED_C,
        probes=table,
    ).source
    stripped = _normalized(profiled.replace(probe_helper(), ""))
    assert [line for line in stripped if not PROBE_LINE.match(line)] == _normalized(plain)
    numbers = [int(m.group(2)) for m in map(PROBE_LINE.match, profiled.splitlines()) if m]
    assert sorted(numbers) == sorted(2 * list(range(len(table.probes))))
    return len(table.probes)


def _normalized(source):
    """C text without blank lines and the units' work estimates."""
    source = re.sub(r"/\* work \d+ at \d+ of \d+ \*/", "", source)
    return [line.rstrip() for line in source.splitlines() if line.strip()]
