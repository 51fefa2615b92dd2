"""Diagnostics: why a gradient is None (each reason, with its line), where a NaN came from,
and why a function retraced."""

import logging
import os
import sys
import traceback

import numpy as np
import pytest

import tracer as tt


def here(offset=0):
    """`test_diagnostics.py:N` for the caller's line plus `offset`."""
    return f"test_diagnostics.py:{sys._getframe(1).f_lineno + offset}"


# --- the seeds' "gradient of None" cases ------------------------------------------------------


def test_seed_unconnected_variable():
    x, y = tt.Variable(2.0), tt.Variable(3.0)
    with tt.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    assert "was not read while the tape recorded" in tape.explain(z, x)


def test_seed_variable_replaced_by_a_tensor_names_the_rebinding_line():
    x = tt.Variable(2.0)
    explanations = []
    for epoch in range(2):
        with tt.GradientTape() as tape:
            y = x + 1
        explanations.append(tape.explain(y, x))
        x = x + 1
        rebinding = here(-1)
    assert explanations[0] == ""
    assert (
        "computed from the Variable 'Variable:0'" in explanations[1]
        and rebinding in explanations[1]
    )
    assert "assign_add" in explanations[1]


def test_seed_calculation_in_numpy_names_the_line():
    x = tt.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tt.GradientTape() as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)
        numpy_line = here(-1)
        y = tt.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None
    text = tape.explain(y, x)
    assert "went through numpy" in text and numpy_line in text


def test_seed_gradient_through_an_integer():
    x = tt.Variable([[2, 2], [2, 2]])
    with tt.GradientTape() as tape:
        y = tt.cast(x, tt.float32)
        y = tt.reduce_sum(x)
    assert tape.gradient(y, x) is None
    assert "has dtype int32" in tape.explain(y, x)


def test_seed_watched_and_unwatched_sources():
    x0 = tt.Variable(3.0, name="x0")
    x1 = tt.Variable(3.0, name="x1", trainable=False)
    x2 = tt.Variable(2.0, name="x2") + 1.0
    rebinding = here(-1)
    x3 = tt.constant(3.0)
    with tt.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    lines = tape.explain(y, [x0, x1, x2, x3]).splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("x1:0:") and "trainable=False" in lines[0]
    assert lines[1].startswith("source 2") and rebinding in lines[1]
    assert lines[2].startswith("source 3") and "not used while the tape recorded" in lines[2]


def test_seed_watch_accessed_variables_false():
    x0, x1 = tt.Variable(0.0), tt.Variable(10.0)
    with tt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y = tt.reduce_sum(tt.math.sin(x0) + tt.nn.softplus(x1))
    assert "watch_accessed_variables=False" in tape.explain(y, {"x0": x0, "x1": x1})
    assert tape.explain(y, x1) == ""


# --- each reason, with its line ----------------------------------------------------------------


def test_used_inside_the_tape_but_never_watched():
    x = tt.constant(2.0)
    with tt.GradientTape() as tape:
        y = x * x
        used = here(-1)
    text = tape.explain(y, x)
    assert (
        f"it is used at {used} inside the tape but was never watched" in text
        and "tape.watch" in text
    )


def test_stop_gradient_an_op_without_gradient_a_cast_and_stop_recording():
    a = tt.constant(1.5)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        k = tt.cast(a, tt.int32)
        cast_line = here(-1)
        z = tt.cast(k, tt.float32) * 2.0
        s = tt.stop_gradient(a) * 3.0
        stop_line = here(-1)
        f = tt.math.floordiv(a, 2.0) + 1.0
        floordiv_line = here(-1)
        with tape.stop_recording():
            p = a * 5.0
            paused_line = here(-1)
    assert f"through cast at {cast_line}, whose result has dtype int32" in tape.explain(z, a)
    assert f"through tt.stop_gradient at {stop_line}" in tape.explain(s, a)
    assert f"through floordiv at {floordiv_line}, which has no gradient" in tape.explain(f, a)
    assert f"at {paused_line} under tape.stop_recording()" in tape.explain(p, a)
    for target in (z, s, f, p):
        assert tape.gradient(target, a) is None


def test_target_that_does_not_depend_on_the_source_and_explain_after_release():
    a, b = tt.constant(1.0), tt.constant(2.0)
    with tt.GradientTape() as tape:
        tape.watch([a, b])
        y = a * 3.0
    assert tape.gradient(y, [a, b])[1] is None
    assert tape.explain(y, [a, b]) == "source 1 (f32[] tensor): the target does not depend on it"


def test_strict_gradients_raise_with_the_explanation(monkeypatch):
    x = tt.constant(2.0)
    tt.config.strict_gradients(True)
    try:
        with tt.GradientTape() as tape:
            y = x * x
        with pytest.raises(tt.UnconnectedGradientError, match="never watched"):
            tape.gradient(y, x)
        with tt.GradientTape() as tape:
            y = x * x
        assert float(tape.gradient(y, x, unconnected_gradients="zero")) == 0.0
    finally:
        tt.config.strict_gradients(False)


# --- check_numerics -----------------------------------------------------------------------------


@pytest.fixture
def numerics():
    tt.debugging.enable_check_numerics()
    yield
    tt.debugging.disable_check_numerics()


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
def test_log_of_a_negative_in_the_forward_pass(numerics, backend):
    def f(x):
        y = x * 2.0
        return tt.math.log(y) + 1.0

    line = f"test_diagnostics.py:{f.__code__.co_firstlineno + 2}"
    run = f if backend == "eager" else tt.function(f, backend=backend)
    with pytest.raises(tt.debugging.NumericsError) as raised:
        run(tt.constant([1.0, -1.0]))
    message = str(raised.value)
    assert message.startswith(f"log made NaN in the forward pass at {line}")
    assert "so this op made it" in message


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
def test_sqrt_at_zero_in_the_backward_pass(numerics, backend):
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sqrt(x))
        return tape.gradient(y, x)

    line = f"test_diagnostics.py:{f.__code__.co_firstlineno + 3}"
    run = f if backend == "eager" else tt.function(f, backend=backend)
    with pytest.raises(tt.debugging.NumericsError) as raised:
        run(tt.constant([4.0, 0.0]))
    assert f"Inf in the backward pass at {line} (grad of sqrt)" in str(raised.value)


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
def test_check_numerics_names_the_op_in_a_loops_body_and_a_branch(numerics, backend):
    """A loop's body and a branch are checked op by op, as the function's own ops are: the
    log in the body is named, at its line, and the loop stops there (a compiled loop named
    the `get` of its result, after running to its end)."""

    def loop(x, n):
        def body(i, s):
            s = tt.math.log(s - 100.0)
            return i + 1, s + 50.0

        return tt.while_loop(lambda i, s: i < n, body, (tt.constant(0), x))[1]

    def branch(x):
        return tt.cond(x > 0, lambda: tt.math.log(x - 100.0), lambda: x)

    first = loop.__code__.co_firstlineno
    for f, line, args in (
        (loop, first + 2, (tt.constant(150.0), tt.constant(10**6))),
        (branch, branch.__code__.co_firstlineno + 1, (tt.constant(50.0),)),
    ):
        run = f if backend == "eager" else tt.function(f, backend=backend)
        with pytest.raises(tt.debugging.NumericsError) as raised:
            run(*args)
        assert str(raised.value).startswith(
            f"log made NaN in the forward pass at test_diagnostics.py:{line}"
        )


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_check_numerics_names_an_input_that_was_already_bad(numerics):
    x = tt.constant([np.inf, 1.0])
    with pytest.raises(tt.debugging.NumericsError, match="its input 0 already held Inf"):
        tt.math.log(x - np.inf)


def test_check_numerics_is_off_by_default():
    assert np.isnan(tt.math.log(tt.constant(-1.0)).numpy())


# --- compiled functions: cache_info, max_retraces, tracing errors --------------------------------


def test_cache_info_counts_hits_misses_and_compile_time():
    f = tt.function(lambda x: x * 2.0)
    f(tt.constant(1.0))
    f(tt.constant(2.0))
    f(tt.constant([1.0, 2.0]))
    info = f.cache_info()
    assert (info.hits, info.misses, info.entries) == (1, 2, 2)
    assert info.compile_seconds > 0


def test_max_retraces_raises_with_every_reason(caplog):
    f = tt.function(lambda x, scale: x * scale, max_retraces=2)
    x = tt.constant(1.0)
    f(x, 1.0)
    f(x, 2.0)
    f(tt.constant([1.0]), 2.0)
    with pytest.raises(tt.RetraceLimitError) as raised:
        f(x, 3.0)
    message = str(raised.value)
    assert "max_retraces=2" in message
    assert "1. argument 1: 1.0 -> 2.0" in message
    assert "2. argument 0: float32[] -> float32[1]" in message
    assert "3. argument 1: " in message and "-> 3.0" in message
    assert f.experimental_get_tracing_count() == 3


def test_errors_while_tracing_point_at_the_users_line_without_tracer_frames():
    @tt.function
    def broken(x):
        y = x * 2.0
        return y @ x

    line = (
        broken.__wrapped__.__code__.co_firstlineno + 3 if hasattr(broken, "__wrapped__") else None
    )
    with pytest.raises(ValueError) as raised:
        broken(tt.constant([1.0, 2.0]))
    frames = traceback.extract_tb(raised.value.__traceback__)
    last = frames[-1]
    assert last.filename.endswith("test_diagnostics.py") and last.line == "return y @ x"
    assert f"(at test_diagnostics.py:{line})" in str(raised.value)
    library = os.path.dirname(tt.__file__)
    inner = frames[[f.name for f in frames].index("broken") :]
    assert not any(f.filename.startswith(library) for f in inner)
    assert "raised while tt.function traced broken" in "".join(
        traceback.format_exception(raised.value)
    )


def test_retrace_log_uses_the_logging_module(caplog):
    f = tt.function(lambda x: x + 1.0)
    with caplog.at_level(logging.INFO, logger="tracer.function"):
        f(tt.constant(1.0))
        f(tt.constant(1.0, dtype=tt.float64))
    assert any("float32[] -> float64[]" in r.getMessage() for r in caplog.records)


def test_gradient_nodes_carry_the_forward_line_and_their_sums_the_gradients_line():
    """A rule's nodes point at the forward op's line ("grad of ..."); the sums of a value's
    cotangents, at the line that asked for the gradient."""

    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            forward_line = sys._getframe().f_lineno + 1
            y = tt.reduce_sum(tt.sin(x) * x)
        gradient_line = sys._getframe().f_lineno + 1
        g = tape.gradient(y, x)
        return g, forward_line, gradient_line

    concrete = tt.function(f, backend="interpreter").get_concrete_function(tt.constant([0.5]))
    _, forward_line, gradient_line = f(tt.constant([0.5]))
    grad = concrete.ir("grad")
    assert f"test_diagnostics.py:{forward_line} (grad of sin)" in grad
    sums = [line for line in grad.splitlines() if "= add " in line]
    assert sums and all(f"test_diagnostics.py:{gradient_line}" in line for line in sums)
