"""Ctrl-C in compiled loops (runtime/interrupts.py): a loop that may run long calls back into
Python now and then, where Python runs its signal handlers; one that raises stops the loop,
and the call raises its exception with a note naming the loop's line. Real Ctrl-C is tested
in a child process; the in-process tests raise from a SIGALRM handler instead."""

import inspect
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import tracer as tt
from runtime import fast_call, interrupts

# ---------------------------------------------------------------------------------------
# Ctrl-C, in a child process

_CHILD = textwrap.dedent(
    """\
    import signal
    import sys
    import threading
    import time
    import traceback

    import numpy as np

    import tracer as tt

    # NOTE: Python installs this handler unless SIGINT was ignored when it started, as it is
    # in a shell's background job (a test run's, say)
    signal.signal(signal.SIGINT, signal.default_int_handler)


    @tt.function(backend="c")
    def spin(x):
        while x > 0.0:  # LOOP while
            x = x + 1.0
        return x


    def step(i, x):
        return i + 1, x * 0.5 + 1.0


    @tt.function(backend="c")
    def loop(n, x):
        return tt.while_loop(lambda i, x: i != n, step, (tt.constant(0, tt.int64), x))  # LOOP while_loop


    @tt.function(backend="c")
    def count(n):
        return tt.while_loop(lambda i: i < n, lambda i: i + 1, [tt.constant(0, tt.int64)])


    def stopped(kind):
        if kind == "while":
            return spin(tt.constant(np.float32(1.0)))
        return loop(tt.constant(-1, tt.int64), tt.constant(np.float32(3.0)))


    def finished(kind, backend):
        if kind == "while":
            x = tt.constant(np.float32(-2.5))
            return tt.function(spin.python_function, backend=backend)(x).numpy()
        n, x = tt.constant(40, tt.int64), tt.constant(np.float32(3.0))
        return tt.function(loop.python_function, backend=backend)(n, x)[1].numpy()


    kind = sys.argv[1]
    finished(kind, "c")  # built before the marker: the loop runs when the signal comes
    finished(kind, "interpreter")
    results = []
    worker = None
    if "thread" in sys.argv:  # a loop on another thread runs through Ctrl-C
        count(tt.constant(1, tt.int64))
        n = tt.constant(20_000_000, tt.int64)
        worker = threading.Thread(target=lambda: results.append(int(count(n)[0])))
        worker.start()
    print("looping", flush=True)
    try:
        stopped(kind)
    except KeyboardInterrupt:
        print("stopped at", time.monotonic(), flush=True)
        traceback.print_exc()
        same = np.array_equal(finished(kind, "c"), finished(kind, "interpreter"))
        print("same values after the interrupt:", same, flush=True)
        if worker is not None:
            worker.join()
            print("the other thread counted:", results, flush=True)
        raise
    """
)


def _line_of(text, marker):
    return next(k for k, line in enumerate(text.splitlines(), 1) if marker in line)


def _interrupted_child(tmp_path, *arguments):
    """(exit status, stdout, stderr, seconds from SIGINT to the KeyboardInterrupt, seconds
    from SIGINT to the end) of the child, sent SIGINT half a second after its loop started."""
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script), *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    try:
        first = child.stdout.readline()
        assert first == "looping\n", first + child.stderr.read()
        time.sleep(0.5)
        start = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=10)
        ended = time.monotonic() - start
        stopped = [float(line.split()[-1]) for line in out.splitlines() if "stopped at" in line]
        return child.returncode, first + out, err, (stopped or [float("inf")])[0] - start, ended
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


@pytest.mark.parametrize("kind", ["while", "while_loop"])
def test_ctrl_c_stops_a_compiled_loop_with_keyboard_interrupt_naming_its_line(tmp_path, kind):
    # with tt.while_loop, a loop on another thread runs at the same time, through Ctrl-C
    arguments = [kind] if kind == "while" else [kind, "thread"]
    status, out, err, stopped, ended = _interrupted_child(tmp_path, *arguments)
    assert status != 0 and stopped < 1.0 and ended < 3.0, (status, stopped, ended, out, err)
    assert "KeyboardInterrupt" in err
    line = _line_of(_CHILD, f"# LOOP {kind}")
    lines = [line, line + 1] if kind == "while" else [line]  # (autograph: a line of the loop)
    assert any(f"the compiled loop at child.py:{k} stopped" in err for k in lines), err
    assert "same values after the interrupt: True" in out, out + err
    if kind == "while_loop":
        assert "the other thread counted: [20000000]" in out, out + err


# ---------------------------------------------------------------------------------------
# Python's signal handlers during a compiled loop, in this process (SIGALRM)


class Stop(Exception):
    pass


# (a bound, far above what runs before the alarm, so that a loop that is not stopped makes the
# test fail rather than hang)
LONG = 2**30


def _spin(x):
    return tt.while_loop(lambda x: x > 0.0, lambda x: x + 1.0, [x], maximum_iterations=LONG)


@pytest.fixture
def alarm():
    """setitimer(ITIMER_REAL, after, every) with `handler` for SIGALRM, undone at the end."""
    previous = signal.getsignal(signal.SIGALRM)

    def start(handler, after, every=0.0):
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, after, every)

    yield start
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("path", ["C entry", "Python"])
def test_a_handler_that_raises_stops_the_loop_and_the_function_runs_again(alarm, monkeypatch, path):
    if path == "Python":  # the call path in Python (runtime/compiled.py), not fast_call.c
        monkeypatch.setattr(fast_call, "_extension", None)
    spin = tt.function(_spin, backend="c")
    spin(tt.constant(np.float32(-1.0)))

    def stop(signum, frame):
        raise Stop

    alarm(stop, 0.05)
    started = time.monotonic()
    with pytest.raises(Stop) as raised:
        spin(tt.constant(np.float32(1.0)))
    assert time.monotonic() - started < 1.0
    where = f"{os.path.basename(__file__)}:{inspect.getsourcelines(_spin)[1] + 1}"
    assert raised.value.__notes__ == [
        f"the compiled loop at {where} stopped: a Python signal handler raised while it ran"
    ]
    x = tt.constant(np.float32(-3.0))
    assert float(spin(x)[0]) == float(tt.function(_spin, backend="interpreter")(x)[0])


def test_a_handler_that_returns_lets_the_loop_go_on(alarm):
    spin = tt.function(_spin, backend="c")
    spin(tt.constant(np.float32(-1.0)))
    runs = []

    def third_time_stops(signum, frame):
        if len(runs) == 3:  # an alarm that came while the third ran, before the timer was off
            return
        runs.append(signum)
        if len(runs) == 3:
            signal.setitimer(signal.ITIMER_REAL, 0)
            raise Stop

    alarm(third_time_stops, 0.02, 0.02)
    with pytest.raises(Stop):
        spin(tt.constant(np.float32(1.0)))
    assert len(runs) == 3  # two ran and returned, and the same call went on


def test_the_variables_a_stopped_loop_assigns_keep_their_values(alarm):
    v = tt.Variable(np.float32(5.0))

    def body(x):
        v.assign_add(1.0)
        return x - 1.0

    def train(x):
        return tt.while_loop(lambda x: x != 0.0, body, [x], maximum_iterations=LONG)

    train = tt.function(train, backend="c")
    train(tt.constant(np.float32(0.0)))

    def stop(signum, frame):
        raise Stop

    alarm(stop, 0.05)
    with pytest.raises(Stop):
        train(tt.constant(np.float32(0.5)))  # 0.5, -0.5, -1.5, ...: never 0
    assert v.numpy() == 5.0
    assert train(tt.constant(np.float32(2.0)))[0].numpy() == 0.0 and v.numpy() == 7.0


def test_a_stored_plan_keeps_its_loops_watched(alarm):
    from codegen import compile as codegen_compile
    from codegen import plans

    concrete = tt.function(_spin, backend="c").get_concrete_function(tt.constant(np.float32(1.0)))
    plan = concrete._executable.plan
    assert plan.watch
    key = plans.PlanKey(f"{os.getpid()}-watched-{id(plan)}", ())
    plans.store(key, plan, False)
    restored = codegen_compile.compile_stored(key, build_missing=False)  # the module is built
    assert restored.plan.watch and restored.plan.source == plan.source

    def stop(signum, frame):
        raise Stop

    alarm(stop, 0.05)
    with pytest.raises(Stop) as raised:
        restored.run([np.float32(1.0)])
    assert "the compiled loop at test_interrupt.py:" in raised.value.__notes__[0]


def test_the_call_back_answers_quiet_on_other_threads():
    assert interrupts._watch() == interrupts.GO
    answers = []
    thread = threading.Thread(target=lambda: answers.append(interrupts._watch()))
    thread.start()
    thread.join()
    assert answers == [interrupts.QUIET]


# ---------------------------------------------------------------------------------------
# what is watched


def _bounded(limit):
    def f(x):
        return tt.while_loop(lambda x: x > 0.0, lambda x: x - 1.0, [x], maximum_iterations=limit)

    return f


@pytest.mark.parametrize("limit, watched", [(None, True), (10, False), (64, False), (65, True)])
def test_only_loops_that_may_run_long_are_watched(limit, watched):
    concrete = tt.function(_bounded(limit), backend="c").get_concrete_function(
        tt.constant(np.float32(5.0))
    )
    assert ("tr_watch_tick(&" in concrete.c_source()) == watched
    assert concrete(tt.constant(np.float32(5.0)))[0].numpy() == 0.0


def test_a_watched_module_compiled_as_translation_units_links_and_runs(monkeypatch):
    from codegen import units

    monkeypatch.setattr(units, "count", lambda source: 2)
    f = tt.function(lambda x: _spin(x * 1.5), backend="c")  # a graph of its own: built now
    assert float(f(tt.constant(np.float32(-2.0)))[0]) == -3.0


def test_exported_c_has_no_call_back_nor_clock(tmp_path):
    tt.export_c(_spin, [tt.TensorSpec([], tt.float32)], str(tmp_path), prefix="spin")
    source = (tmp_path / "spin.c").read_text()
    assert "/* while (" in source
    assert "watch" not in source and "time.h" not in source and "signal" not in source
