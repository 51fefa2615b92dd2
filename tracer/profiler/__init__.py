"""tt.profiler: where the time of compiled functions and eager ops goes, by the user's lines.

    with tt.profiler.profile() as prof:
        for batch in data:
            step(batch)
    print(prof.table())                      # by source line, IR node and kernel
    prof.export_chrome_trace("step.json")    # for Perfetto or chrome://tracing

Compiled functions run, while a profile is on, on modules built with timing probes (the
profiled C target, codegen/probes.py), so that an unprofiled call never pays for them.
`TRACER_PROFILE=FILE python program.py` profiles a whole program: at its end the table goes
to standard error and the trace to FILE. docs/profiler.md says how times are shared out.
"""

import atexit
import os
import sys

from tracer.profiler.session import MAX_EVENTS, FunctionRecord, Profile

__all__ = ["MAX_EVENTS", "FunctionRecord", "Profile", "profile", "profile_program"]


def profile(max_events=MAX_EVENTS):
    """A Profile, to use as `with tt.profiler.profile() as prof:`."""
    return Profile(max_events)


def profile_program(path):
    """Profile from now to the end of the program; then print the table to standard error
    and write the Chrome trace to `path` (TRACER_PROFILE)."""
    running = Profile()
    running.start()

    def report():
        running.stop()
        sys.stderr.write(running.table())
        running.export_chrome_trace(path)
        sys.stderr.write(f"tt.profiler: the trace is in {os.path.abspath(path)}\n")

    atexit.register(report)
    return running
