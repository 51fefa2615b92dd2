"""Python's cyclic garbage collector, paused while a tape records or a gradient is built.

A tape records a few Python objects per op (its node, the node's inputs, the result, the
values the gradient rule keeps), all alive until the tape is done with them. The collector
counts such objects as they survive, and every time their number grows by a quarter of
what lived before it walks everything alive (a full collection), finding nothing, since a
tape's records hold no reference cycles; building a gradient graph of as many nodes walks
them all again. So while any tape records, builds a gradient graph and its program (a
tape's first gradient of its structure), computes a jacobian, or a tt.function traces and
compiles, in any thread, the collector is off, and it is back on when the last one stops
(if it was on before the first). A gradient found in the caches runs with the collector
as the user left it: it makes few objects, so pausing would only add to its time.
Acyclic garbage is freed at once as always; reference cycles that the user's code makes
inside a tape are collected after it. A program that keeps one tape recording for its
whole run, or threads whose tapes always overlap, have no automatic collection meanwhile:
`gc.collect()` still works. A `gc.disable()` inside a tape is undone when the last tape
stops, if the collector was on before the first.

What survives a tape until the collector resumes is walked once then, by the collection of
its youngest generation. So the records that cannot be part of a cycle are untracked:
every graph node made in Python that holds only numbers, strings, arrays, shapes and
dtypes and reads only such nodes (the C op path's `untrack_node`, which `untrack_with`
installs as the IR's hook on Node.__init__), and, once a tape has 4,096 records, the nodes
and signature entries it records, as the C op path records them and what is left when the
tape stops (`untrack_records`; fast_apply.c says why no cycle can pass through them). A
node holding a function (a custom gradient's) stays tracked. Measurements:
benchmarks/RESULTS.md, "Measurements moved from docstrings".
"""

import functools
import gc
import os
import threading

from tracer.ir import graph


def untrack_records(recording):
    """Nothing, until `untrack_with` gives the C module's."""


def untrack_with(node_function, records_function):
    """Untrack through these functions of the C op path (tracer.ops.core's, once checked):
    `node_function` becomes the IR's hook on every node made in Python (the IR sits below the
    front end and imports none of it); until then the collector walks every node."""
    global untrack_records
    graph.on_node_made(node_function)
    untrack_records = records_function


_lock = threading.RLock()  # reentrant: a finalizer may run tracer code while it is held
_recording = 0  # tapes recording now, in every thread
_resume = False  # whether the collector was on when the first of them started


def pause():
    """A tape starts recording: the collector stops if this is the only one."""
    global _recording, _resume
    with _lock:
        if _recording == 0:
            _resume = gc.isenabled()
            gc.disable()
        _recording += 1


def resume():
    """A tape stops recording: the collector goes on again if it was the last one."""
    global _recording
    with _lock:
        _recording = max(0, _recording - 1)  # 0 after a fork (below), whatever was open
        if _recording == 0 and _resume:
            gc.enable()


def _after_fork_in_child():
    """A child process has only the thread that forked: tapes that other threads were
    recording never stop there, so it starts with none and the collector as it was."""
    global _lock, _recording
    _lock, _recording = threading.RLock(), 0
    if _resume:
        gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def paused(method):
    """`method`, run with the collector paused (building a gradient, a jacobian, a compile)."""

    @functools.wraps(method)
    def run(*args, **kwargs):
        pause()
        try:
            return method(*args, **kwargs)
        finally:
            resume()

    return run
