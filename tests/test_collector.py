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


def test_differentiation_runs_with_the_collector_paused():
    seen = []

    @tt.custom_gradient
    def square(x):
        def grad(upstream):
            seen.append(gc.isenabled())
            return upstream * 2 * x

        return x * x, grad

    x = tt.constant(3.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = square(x)
    assert gc.isenabled()
    assert tape.gradient(y, x).numpy() == 6.0
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
