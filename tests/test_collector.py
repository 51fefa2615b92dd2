"""The cyclic garbage collector is paused while tapes record or differentiate
(tracer/collector.py), and restored as it was when the last one stops."""

import contextlib
import gc
import os
import threading
import weakref

import numpy as np
import pytest

import tracer as tt
from tracer import backprop, executables
from tracer.ops import core


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_recording_tape_pauses_the_collector_until_the_last_tape_stops():
    x = tt.constant(2.0)
    with tt.GradientTape() as outer:
        outer.watch(x)
        assert not gc.isenabled()
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = x * x
        assert not gc.isenabled()  # the outer tape still records
        with outer.stop_recording():
            assert gc.isenabled()  # no tape records here
        g = inner.gradient(y, x)
    assert gc.isenabled()
    assert outer.gradient(g, x).numpy() == 2.0


def test_building_a_gradient_runs_with_the_collector_paused(monkeypatch):
    """Building a tape's gradient graph and its program makes as many objects as the tape
    records; a gradient found in the caches runs as any code does, the collector on."""
    seen = []

    def spy(function):
        def run(*args):
            seen.append((function.__name__, gc.isenabled()))
            return function(*args)

        return run

    monkeypatch.setattr(backprop, "build_gradient", spy(backprop.build_gradient))
    monkeypatch.setattr(backprop, "straight_line", spy(backprop.straight_line))
    x = tt.constant(np.array([1.0, 2.0]))
    for step in range(2):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x) * x)
        assert gc.isenabled()
        np.testing.assert_allclose(
            tape.gradient(y, x).numpy(), np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0])
        )
        assert gc.isenabled()
    assert seen == [("build_gradient", False), ("straight_line", False)]


def test_a_jacobian_runs_with_the_collector_paused():
    seen = []

    @tt.custom_gradient
    def square(x):
        def grad(upstream):
            seen.append(gc.isenabled())
            return upstream * 2 * x

        return x * x, grad

    x = tt.constant(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    assert tape.jacobian(y, x).numpy() == 6.0
    assert seen and not any(seen) and gc.isenabled()


def test_the_collector_stays_as_the_user_left_it_and_comes_back_after_an_error():
    gc.disable()
    with tt.GradientTape():
        pass
    assert not gc.isenabled()  # it was off before the tape: it stays off
    gc.enable()
    with pytest.raises(ValueError, match="inside"), tt.GradientTape():
        raise ValueError("raised inside the tape")
    assert gc.isenabled()


@contextlib.contextmanager
def _recording_in_another_thread():
    """A thread whose tape records from when this is entered until it is left."""
    started, release = threading.Barrier(2), threading.Event()

    def worker():
        with tt.GradientTape():
            started.wait()
            release.wait()

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait()
    try:
        yield
    finally:
        release.set()
        thread.join()


def test_tapes_in_two_threads_keep_it_paused_until_both_stop():
    with _recording_in_another_thread():
        with tt.GradientTape():
            pass
        recording_elsewhere = gc.isenabled()  # the other thread's tape still records
    assert recording_elsewhere is False and gc.isenabled()


def test_cycles_made_inside_a_tape_are_collected_after_it():
    class Cycle:
        pass

    x = tt.constant(np.ones(3))
    with tt.GradientTape() as tape:
        tape.watch(x)
        garbage = Cycle()
        garbage.me = garbage
        alive = weakref.ref(garbage)
        del garbage
        y = tt.reduce_sum(x * x)
    assert alive() is not None  # a cycle waits for the collector, which was paused
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0, 2.0])
    assert gc.isenabled()
    kept = []
    while alive() is not None and len(kept) < 100_000:  # until the collector runs by itself
        kept.append([])
    assert alive() is None


def test_a_child_forked_while_another_thread_records_collects_again():
    with _recording_in_another_thread():
        pid = os.fork()
        if pid == 0:  # the child: the other thread and its tape are not here
            code = 0 if gc.isenabled() else 1
            with tt.GradientTape():
                code |= 0 if not gc.isenabled() else 2
            code |= 0 if gc.isenabled() else 4
            os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_tracing_a_function_runs_with_the_collector_paused():
    seen = []

    @tt.function
    def double(x):
        seen.append(gc.isenabled())  # Python code runs while the function is traced
        return x * 2.0

    assert double(tt.constant(1.5)).numpy() == 3.0
    assert seen == [False] and gc.isenabled()


needs_fast_apply = pytest.mark.skipif(
    core.fast_apply is None, reason="the eager op path in C (tracer.ops._fast_apply) is not built"
)


def _record_a_large_tape(x):
    """A tape of 7,001 nodes, and the objects it left in the collector's youngest generation
    when it stopped (counted with the collector off, so that nothing collects them first)."""
    gc.collect()
    gc.disable()
    try:
        young = len(gc.get_objects(generation=0))
        with tt.GradientTape() as tape:
            tape.watch(x)
            h = x
            for step in range(1000):  # both paths' ops (slices have attributes)
                h = tt.tanh(h[1:] * 0.5 + h[:-1])
                h = tt.concat([h, x[:1]], 0)
            loss = tt.reduce_sum(h)
        made = len(gc.get_objects(generation=0)) - young
    finally:
        gc.enable()
    return tape, loss, made


@needs_fast_apply
def test_a_large_tape_leaves_the_collector_almost_nothing_to_walk_when_it_stops():
    x = tt.constant(np.linspace(0.0, 1.0, 14))
    tape, loss, made = _record_a_large_tape(x)
    recorded = len(tape._recording_state.nodes)
    # what is left are the values kept for the gradient rules: a tuple of tensors for 2 of
    # the 7 ops of a step; each op used to leave 6 (its node, tuples, its attribute dict)
    assert recorded == 7001 and made < recorded * 0.7, made
    assert not any(gc.is_tracked(entry) for entry in tape._recording_state.signature)
    assert not gc.is_tracked(loss._node) and not gc.is_tracked(loss._node.inputs)
    gradient = tape.gradient(loss, x).numpy()
    was = core.fast_apply.set_enabled(False)  # recorded in Python: the same when it stops
    try:
        tape, loss, made = _record_a_large_tape(x)
        assert made < recorded * 0.7 and not gc.is_tracked(loss._node)
        np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), gradient)
    finally:
        core.fast_apply.set_enabled(was)


@needs_fast_apply
def test_a_large_tapes_records_are_untracked_while_it_records():
    """Below 4,096 records the collector's walk of a tape costs less than untracking it; at
    4,096 the records made so far are untracked at once, and each later one as it is made
    (while it is in the caches): the tape has nothing left to untrack when it stops."""
    x, z = tt.constant(np.linspace(0.0, 1.0, 14)), tt.constant(2.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        h = (x * 1.0) * 1.0  # 3 records: 4,095 after 1,364 steps
        for step in range(1500):  # three records a step
            if len(tape._recording_state.order) == 4095:
                tape.watch(z)  # the 4,096th record made by Python
            h = h + tt.sin(x) * 0.001
            if step == 1000:
                assert any(gc.is_tracked(n) for n in tape._recording_state.order)
        recording = tape._recording_state
        assert recording.order[4095] is z._node
        assert not any(gc.is_tracked(n) for n in recording.order)
        assert not any(gc.is_tracked(entry) for entry in recording.signature)
    slope = 1.0 + 1500 * 0.001 * np.cos(x.numpy())
    np.testing.assert_allclose(tape.gradient(h, x).numpy(), slope, rtol=1e-12)


@needs_fast_apply
def test_nodes_that_hold_a_function_and_the_nodes_after_them_stay_tracked():
    x = tt.constant(np.ones(3))

    @tt.custom_gradient
    def f(x):
        return tt.sin(x), lambda dy: dy * tt.cos(x)

    with tt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        z = tt.exp(y * 2.0)
    assert gc.is_tracked(z._node) and gc.is_tracked(z._node.inputs[0])
    np.testing.assert_allclose(
        tape.gradient(z, x).numpy(), np.exp(2 * np.sin(1.0)) * 2 * np.cos(1.0) * np.ones(3)
    )


def test_a_cycle_through_a_custom_gradient_and_the_nodes_after_it_is_collected():
    class Holder:
        pass

    def with_gradient_reading(holder):
        @tt.custom_gradient
        def f(x):
            return tt.sin(x), lambda dy: dy * holder.later  # reaches the node after its own

        return f

    x = tt.constant(np.ones(3))
    holder = Holder()
    f = with_gradient_reading(holder)

    with tt.GradientTape() as tape:  # not differentiated: the gradient caches keep f
        tape.watch(x)
        holder.later = tt.exp(f(x) * 2.0)  # its node reads f's, which holds the function
    alive = weakref.ref(holder)
    del holder, f, tape
    gc.collect()
    assert alive() is None


def test_a_functions_gradient_compiled_at_its_first_run_is_compiled_with_the_collector_paused(
    monkeypatch,
):
    """A tt.function called on a tape is a `call` op whose vjp is compiled when the tape's
    gradient program first runs it: outside the paused build, so the compile pauses too."""
    seen = []
    pipeline = executables.run_pipeline

    def spy(graph, **options):
        seen.append(gc.isenabled())
        return pipeline(graph, **options)

    monkeypatch.setattr(executables, "run_pipeline", spy)
    f = tt.function(lambda v: tt.reduce_sum(tt.exp(v) * v), backend="interpreter")
    x = tt.constant(np.array([1.0, 2.0]))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp([1.0, 2.0]) * [2.0, 3.0])
    assert len(seen) >= 2 and not any(seen) and gc.isenabled()
