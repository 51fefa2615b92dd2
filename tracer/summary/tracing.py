"""`tt.summary.trace_on` and `trace_export`: the graphs of the compiled functions called in
between, with each node's measured time when asked, written for TensorBoard's graph view.

    tt.summary.trace_on(graph=True, profiler=True)
    train_step(x, y)
    with writer.as_default():
        tt.summary.trace_export("train_step", step=0)

While the trace is on, a tt.profiler profile runs (so compiled functions run their modules
with timing probes; a profile started meanwhile takes the calls until it stops). `trace_export` stops it and writes, to
the default writer, one `GraphDef` event holding the optimized graph of every function
called (summary/graphs.py) and, with `profiler=True`, a `TaggedRunMetadata` event tagged
`name` with each node's mean time a call; with `profiler_outdir`, the profile's Chrome trace
goes there too. TensorFlow 2 writes the graph inside a summary of the graph plugin instead;
TensorBoard's graph view and its reader (`EventAccumulator.Graph()`, `.RunMetadata(tag)`)
take both.
"""

import os
import time
import warnings

from tracer.profiler.session import Profile
from tracer.summary import events, graphs
from tracer.summary.writer import state

_tracing = None  # {"profile": ..., "profiler": bool, "outdir": ...} while a trace is on


def trace_on(graph=True, profiler=False, profiler_outdir=None):
    """Start recording the compiled functions called from now on (their graphs, and with
    `profiler` their nodes' times)."""
    global _tracing
    if _tracing is not None:
        warnings.warn("tt.summary.trace_on: a trace is on already; it goes on", stacklevel=2)
        return
    profile = Profile()
    profile.start()
    _tracing = {"profile": profile, "graph": graph, "profiler": profiler, "outdir": profiler_outdir}


def trace_off():
    """Stop recording, writing nothing."""
    global _tracing
    if _tracing is not None:
        _tracing["profile"].stop()
        _tracing = None


def trace_export(name, step=None, profiler_outdir=None):
    """Write what was recorded since `trace_on` to the default writer at `step` (the default
    step when None), and stop recording."""
    global _tracing
    if _tracing is None:
        warnings.warn("tt.summary.trace_export: call trace_on first; nothing written", stacklevel=2)
        return
    traced, _tracing = _tracing, None
    profile = traced["profile"]
    profile.stop()
    step = state.step if step is None else step
    writer = state.writer
    if writer is None:
        warnings.warn("tt.summary.trace_export: no default writer; nothing written", stacklevel=2)
        return
    if step is None:
        raise ValueError(
            "No step set: pass `step=` to trace_export, or set a default one with "
            "tt.summary.experimental.set_step(step) or writer.as_default(step)"
        )
    step = int(getattr(step, "numpy", lambda: step)())
    called = profile.called()
    if traced["graph"] and called:
        definition = graphs.graph_def([(c.stages.final, c.name) for c, _ in called])
        writer.write_event(events.event(time.time(), step, graph_def=definition))
    if traced["profiler"]:
        for concrete, record in called:
            names = graphs.names_by_printed(concrete.stages.final, concrete.name)
            metadata = graphs.run_metadata(record, names, profile.start_ns)
            tag = name if len(called) == 1 else f"{name}/{concrete.name}"
            tagged = graphs.tagged_run_metadata(tag, metadata)
            writer.write_event(events.event(time.time(), step, tagged_run_metadata=tagged))
    outdir = profiler_outdir or traced["outdir"]
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        profile.export_chrome_trace(os.path.join(outdir, f"{safe}.trace.json"))
    writer.flush()
