"""A profile: what ran while it was on, with the time of each step.

A compiled function called during a profile runs its module built for the profiled C target
(codegen/probes.py: each kernel, BLAS or LAPACK call, host call and region timed), built at
its first call in the profile, outside the timed run. Each call is timed as a whole too, so
that what the probes do not see (checking and passing the arguments, the results, Python)
is counted as the call's own time. Eager ops run their kernels through the profile's timer,
each at the user's line that ran it (an eager gradient's ops: the line of the forward op).
"""

import threading
import time
import warnings

import numpy as np

from codegen.errors import BuildFailure
from codegen.targets import PROFILED_C
from tracer.context import state as context_state
from tracer.ir import user_location
from tracer.ops import core
from tracer.profiler import attribution, chrome, state, tables

MAX_EVENTS = 1_000_000  # step events kept for the trace; the totals count every step


class FunctionRecord:
    """What a profile saw of one compiled function (a ConcreteFunction): its calls, as
    (start ns, end ns, thread, first event, end of its events), and the time and count of
    each of its module's probes while the profile ran (`totals`: [ns, calls] per probe)."""

    def __init__(self, name, compiled):
        self.name = name
        self.probes = getattr(compiled, "probes", None) or []
        self._compiled = compiled
        self._before = self._now()
        self._final = None
        self.calls = []

    def _now(self):
        totals = getattr(self._compiled, "probe_totals", None)
        return np.zeros((0, 2), np.int64) if totals is None else totals.copy()

    def finish(self):
        """The profile stopped: later runs of the module are not this profile's."""
        self._final = self.totals
        if self.probes:
            self._compiled.record_events(None)

    @property
    def totals(self):
        return self._final if self._final is not None else self._now() - self._before


class Profile:
    """`with tt.profiler.profile() as prof:` runs the block with every compiled function and
    eager op timed; then `prof.table()` and `prof.export_chrome_trace(path)` say where the
    time went. `max_events` bounds the step events the trace keeps (the tables count all)."""

    def __init__(self, max_events=MAX_EVENTS):
        if not isinstance(max_events, int) or max_events < 0:
            raise ValueError(f"max_events must be an int >= 0, got {max_events!r}")
        self.functions = []  # FunctionRecord of each profiled function, in order of first call
        self.eager = []  # (op name, location, start ns, end ns, thread) of each eager op
        self.events = np.zeros(2 + 3 * max_events, np.int64)
        self.events[1] = max_events
        self.start_ns = self.end_ns = None
        self._records = {}  # id(concrete) -> (concrete, its FunctionRecord)
        self._lock = threading.Lock()

    # --- running ----------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """Start profiling; a profile that runs already pauses until this one stops."""
        if self.end_ns is not None:
            raise RuntimeError("this tt.profiler profile has stopped; make a new one")
        state.start(self)
        self.start_ns = time.monotonic_ns()
        core.time_ops(self._time_op)

    def stop(self):
        """Stop profiling (the tables and the trace read what ran until now)."""
        if self.end_ns is not None or self.start_ns is None:
            return
        state.stop(self)
        core.time_ops(None if state.active is None else state.active._time_op)
        self.end_ns = time.monotonic_ns()
        for record in self.functions:
            record.finish()

    def runner(self, concrete):
        """The function that runs `concrete`'s arrays while this profile is on (its
        `_run_arrays`): the profiled module, built at the first call."""
        run = None

        def profiled_run(arrays):
            nonlocal run
            if run is None:
                run = self._profiled(concrete)
            return run(arrays)

        return profiled_run

    def _profiled(self, concrete):
        """The timed run of `concrete`'s profiled module (its own where it cannot be built:
        then only whole calls are timed)."""
        known = self._records.get(id(concrete))
        if known is None:
            compiled = _profiled_executable(concrete)
            if getattr(compiled, "probes", None) is not None:
                compiled.record_events(self.events)
            record = FunctionRecord(concrete.name, compiled)
            with self._lock:
                self._records[id(concrete)] = (concrete, record)
                self.functions.append(record)
        else:
            record = known[1]
        compiled = record._compiled
        run, events, calls = compiled.run, self.events, record.calls
        claim = compiled.claim_probes if record.probes else lambda: None
        now, ident = time.monotonic_ns, threading.get_ident

        def timed(arrays):
            claim()  # (another graph of the same C, or another profile, may hold the module)
            first = int(events[0])
            start = now()
            results = run(arrays)
            end = now()
            calls.append((start, end, ident(), first, int(events[0])))
            return results

        return timed

    def _time_op(self, op, kernel, values, attrs):
        where = context_state.location or user_location()
        start = time.monotonic_ns()
        result = kernel(*values, **attrs)
        end = time.monotonic_ns()
        self.eager.append((op.name, where, start, end, threading.get_ident()))
        return result

    # --- what it saw ------------------------------------------------------------------------

    def called(self):
        """[(ConcreteFunction, its FunctionRecord)] of the functions that ran, in order."""
        return list(self._records.values())

    def record_of(self, concrete):
        """The FunctionRecord of a ConcreteFunction (None if it did not run)."""
        known = self._records.get(id(concrete))
        return None if known is None else known[1]

    def line_seconds(self, concrete=None):
        """{(filename, line): seconds} of the user's lines, for one ConcreteFunction or for
        everything profiled (eager ops included); a call's own time (arguments, results,
        Python) is under (None, the function's name)."""
        records = self.functions if concrete is None else [self.record_of(concrete)]
        seconds = {}
        for record in records:
            if record is not None:
                attribution.add_lines(record, seconds)
        if concrete is None:
            for _, where, start, end, _ in self.eager:
                key = attribution.line_key(where)
                seconds[key] = seconds.get(key, 0.0) + (end - start) / 1e9
        return seconds

    def node_seconds(self, concrete):
        """{IR node name (as the printed final IR names it): self seconds} of one
        ConcreteFunction's steps."""
        record = self.record_of(concrete)
        return {} if record is None else attribution.node_seconds(record)

    def table(self, by=("line", "node", "kernel"), top=20):
        """The time of each profiled function by the user's source line, by IR node and by
        kernel (self and total, calls, bytes moved, share of the function), and of eager ops
        by line and by op, most first, `top` rows each; as text."""
        return tables.table(self, (by,) if isinstance(by, str) else tuple(by), top)

    def export_chrome_trace(self, path):
        """Write the profile as Chrome trace-event JSON (Perfetto, chrome://tracing): each
        call, the regions and kernels within it, and the eager ops, with the user's line and
        the IR nodes of each in its arguments."""
        chrome.write(self, path)
        return path


def _profiled_executable(concrete):
    """`concrete`'s module for the profiled C target, or its own executable where that
    cannot be built (a function on the interpreter, no compiler)."""
    own = concrete._executable
    current = getattr(own, "current", own)  # a tiered build's module, once built
    if getattr(current, "backend", None) != "c":
        return current
    try:
        return PROFILED_C.emit(concrete.stages.final, concrete.name, concrete._updates)
    except BuildFailure as error:
        warnings.warn(
            f"tt.profiler: {concrete.name}'s profiled module could not be built ({error}); "
            "its calls are timed whole",
            stacklevel=2,
        )
        return current
