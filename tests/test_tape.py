"""GradientTape behaviour, as API.md and the seed documents (TensorFlow 2.x) fix it.

Gradients are checked against analytic derivatives, in float64 where tolerances are tight.
"""

import contextlib
import gc
import logging
import re
import subprocess
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest

import tracer as tt
from tracer.context import state


def f64(value):
    return tt.constant(np.asarray(value, dtype=np.float64))


def _line():
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def assert_grad(grad, expected, rtol=1e-12, atol=1e-12):
    assert isinstance(grad, tt.Tensor), f"expected a Tensor, got {grad!r}"
    expected = np.asarray(expected)
    assert grad.shape == expected.shape
    np.testing.assert_allclose(np.asarray(grad.numpy()), expected, rtol=rtol, atol=atol)


# --- seeds: the basic examples ----------------------------------------------------------


def test_gradient_of_x_squared():
    x = tt.constant(3.0)
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)
    assert str(dy_dx) == "tracer.Tensor(6.0, shape=(), dtype=float32)"


def test_gradient_has_the_source_dtype_and_shape():
    x = f64([[1.0, 2.0], [3.0, 4.0]])
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.reduce_sum(x * x * x)
    grad = g.gradient(y, x)
    assert grad.dtype == tt.float64
    assert_grad(grad, 3 * np.array([[1.0, 2.0], [3.0, 4.0]]) ** 2)


def test_reduce_sum_then_multiply():
    x = tt.ones((2, 2))
    with tt.GradientTape() as t:
        t.watch(x)
        y = tt.reduce_sum(x)
        z = tt.multiply(y, y)
    assert_grad(t.gradient(z, x), np.full((2, 2), 8.0))


def test_gradient_of_a_source_with_respect_to_itself_is_one():
    x = f64([1.0, 2.0])
    with tt.GradientTape() as g:
        g.watch(x)
    assert_grad(g.gradient(x, x), [1.0, 1.0])


def test_composite_function_against_analytic_derivative():
    xs = np.array([0.3, -1.2, 2.5])
    x = f64(xs)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.reduce_sum(tt.sin(x) * tt.exp(x) / (1.0 + x * x) + tt.tanh(x) ** 2)
    expected = (
        (np.cos(xs) * np.exp(xs) + np.sin(xs) * np.exp(xs)) / (1 + xs**2)
        - np.sin(xs) * np.exp(xs) * 2 * xs / (1 + xs**2) ** 2
        + 2 * np.tanh(xs) * (1 - np.tanh(xs) ** 2)
    )
    assert_grad(g.gradient(y, x), expected)


def test_broadcasting_gradients_sum_back_to_source_shape():
    a_val = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b_val = np.array([0.5, -1.0, 2.0])
    a, b = f64(a_val), f64(b_val)
    with tt.GradientTape() as g:
        g.watch([a, b])
        y = tt.reduce_sum(a * b + b)
    da, db = g.gradient(y, [a, b])
    assert_grad(da, np.broadcast_to(b_val, (2, 3)))
    assert_grad(db, a_val.sum(axis=0) + 2.0)


def test_matmul_gradients():
    rng = np.random.default_rng(1)
    x_val, w_val = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    x, w = f64(x_val), tt.Variable(w_val)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.reduce_sum(x @ w)
    dx, dw = g.gradient(y, [x, w])
    assert_grad(dx, np.ones((2, 4)) @ w_val.T)
    assert_grad(dw, x_val.T @ np.ones((2, 4)))


def test_seed_dense_like_example_with_variables():
    w_val = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], dtype=np.float32)
    w = tt.Variable(w_val, name="w")
    b = tt.Variable(tt.zeros(2, dtype=tt.float32), name="b")
    x = [[1.0, 2.0, 3.0]]
    with tt.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tt.reduce_mean(y**2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    y_val = np.array([[1.0, 2.0, 3.0]]) @ w_val
    assert dl_dw.shape == (3, 2) and dl_db.shape == (2,)
    np.testing.assert_allclose(dl_dw.numpy(), np.array([[1.0], [2.0], [3.0]]) @ y_val, rtol=1e-5)
    np.testing.assert_allclose(dl_db.numpy(), y_val[0], rtol=1e-5)


# --- what the tape watches ----------------------------------------------------------------


def test_watch_a_nested_structure_of_tensors_and_variables():
    a, b, c = f64(1.0), f64(2.0), f64(3.0)
    v = tt.Variable(4.0, dtype=tt.float64, trainable=False)
    with tt.GradientTape() as g:
        g.watch([a, {"b": b, "c": (c, [v])}])
        y = a * b * c * v
    grads = g.gradient(y, [a, b, c, v])
    for grad, expected in zip(grads, [24.0, 12.0, 8.0, 6.0]):
        assert_grad(grad, expected)


def test_watch_a_tuple_and_a_dict():
    a, b = f64(2.0), f64(5.0)
    with tt.GradientTape(persistent=True) as g:
        g.watch((a,))
        g.watch({"key": b})
        y = a * a * b
    assert_grad(g.gradient(y, a), 20.0)
    assert_grad(g.gradient(y, b), 4.0)


def test_unwatched_tensors_get_no_gradient():
    x = f64(3.0)
    with tt.GradientTape() as g:
        y = x * x
    assert g.gradient(y, x) is None


def test_a_watched_value_computed_on_an_earlier_tape_is_a_leaf():
    """As in TensorFlow: a tape differentiates only what it recorded; a watched value's
    history from before the tape is not followed (it needs values no one kept)."""
    x = tt.constant(3.0)
    with tt.GradientTape() as earlier:
        earlier.watch(x)
        y = x * x
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        tape.watch(y)
        t = y * 5.0
    assert tape.gradient(t, x) is None
    assert float(tape.gradient(t, y)) == 5.0
    assert [None if g is None else float(g) for g in tape.gradient(t, [x, y])] == [None, 5.0]


def test_trainable_variables_are_watched_automatically():
    # Seed 001, "Controlling what the tape watches".
    x0 = tt.Variable(3.0, name="x0")
    x1 = tt.Variable(3.0, name="x1", trainable=False)
    x2 = tt.Variable(2.0, name="x2") + 1.0
    x3 = tt.constant(3.0, name="x3")
    with tt.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert str(grad[0]) == "tracer.Tensor(6.0, shape=(), dtype=float32)"
    assert grad[1] is None and grad[2] is None and grad[3] is None
    assert [var.name for var in tape.watched_variables()] == ["x0:0"]


def test_watch_accessed_variables_false():
    # Seed 001: only x1 is watched.
    x0 = tt.Variable(0.0)
    x1 = tt.Variable(10.0)
    with tt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tt.sin(x0)
        y1 = tt.nn.softplus(x1)
        y = y0 + y1
        ys = tt.reduce_sum(y)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})
    assert grad["x0"] is None
    np.testing.assert_allclose(grad["x1"].numpy(), 1 / (1 + np.exp(-10.0)), rtol=1e-6)
    assert list(tape.watched_variables()) == [x1]


def test_watch_accessed_variables_false_persistent_seed():
    # Seed 000: w is read but not watched.
    x = tt.Variable(2.0)
    w = tt.Variable(5.0)
    with tt.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x**2
        z = w**3
    assert str(tape.gradient(y, x)) == "tracer.Tensor(4.0, shape=(), dtype=float32)"
    assert tape.gradient(z, w) is None
    assert list(tape.watched_variables()) == [x]


def test_a_non_trainable_variable_can_be_watched_explicitly():
    v = tt.Variable(3.0, dtype=tt.float64, trainable=False)
    with tt.GradientTape() as tape:
        tape.watch(v)
        y = v * v
    assert_grad(tape.gradient(y, v), 6.0)


def test_watched_variables_are_in_construction_order():
    first = tt.Variable(1.0, name="first")
    second = tt.Variable(2.0, name="second")
    third = tt.Variable(3.0, name="third")
    frozen = tt.Variable(4.0, name="frozen", trainable=False)
    with tt.GradientTape() as tape:
        y = third * frozen
        y = y + first
        tape.watch(second)
        y = y * second
    watched = list(tape.watched_variables())
    assert len(watched) == 3
    assert watched[0] is first and watched[1] is second and watched[2] is third
    assert [v.name for v in watched] == ["first:0", "second:0", "third:0"]


def test_watched_variables_lists_each_variable_once():
    v = tt.Variable(2.0)
    with tt.GradientTape() as tape:
        y = v * v + v
        tape.watch(v)
    assert len(tape.watched_variables()) == 1
    assert tape.watched_variables()[0] is v
    assert_grad(tape.gradient(y, v), 5.0, rtol=1e-6)


def test_variable_read_outside_the_tape_gives_none():
    v = tt.Variable(2.0)
    y = v * 3.0
    with tt.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, v) is None


def test_integer_variables_get_no_gradient():
    v = tt.Variable([1, 2])
    with tt.GradientTape() as tape:
        y = v * 2
    assert tape.gradient(y, v) is None


# --- persistent tapes ---------------------------------------------------------------------


def test_persistent_tape_allows_several_gradient_calls():
    x = tt.constant(3.0)
    with tt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    assert str(g.gradient(z, x)) == "tracer.Tensor(108.0, shape=(), dtype=float32)"
    assert str(g.gradient(y, x)) == "tracer.Tensor(6.0, shape=(), dtype=float32)"
    assert str(g.gradient(z, x)) == "tracer.Tensor(108.0, shape=(), dtype=float32)"
    np.testing.assert_allclose(g.jacobian(y, x).numpy(), 6.0)


def test_persistent_tape_vector():
    x = tt.constant([1, 3.0])
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [4.0, 108.0])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 6.0])


def test_non_persistent_tape_allows_one_gradient_call():
    x = f64(3.0)
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.gradient(y, x)
    with pytest.raises(RuntimeError):
        g.gradient(y, x)


# --- targets, sources and their structures -------------------------------------------------


def test_nested_targets_are_summed():
    x = f64(2.0)
    with tt.GradientTape(persistent=True) as g:
        g.watch(x)
        a = x * x
        b = x * x * x
        c = tt.sin(x)
    assert_grad(g.gradient([a, b], x), 4.0 + 12.0)
    assert_grad(g.gradient((a, [b, {"c": c}]), x), 4.0 + 12.0 + np.cos(2.0))
    assert_grad(g.gradient({"a": a, "c": c}, x), 4.0 + np.cos(2.0))


def test_nested_targets_with_an_unconnected_one():
    x = f64(2.0)
    other = f64(5.0)
    with tt.GradientTape() as g:
        g.watch(x)
        a = x * x
    assert_grad(g.gradient([a, other], x), 4.0)


def test_sources_as_list_tuple_and_dict_keep_their_structure():
    a, b, c = f64(1.0), f64(2.0), f64(3.0)
    with tt.GradientTape(persistent=True) as g:
        g.watch([a, b, c])
        y = a * b * c + c
    as_list = g.gradient(y, [a, b, c])
    assert type(as_list) is list and len(as_list) == 3
    as_tuple = g.gradient(y, (a, b))
    assert type(as_tuple) is tuple and len(as_tuple) == 2
    as_dict = g.gradient(y, {"z": c, "a": a})
    assert type(as_dict) is dict and set(as_dict) == {"z", "a"}
    for grads in (as_list, as_tuple):
        assert_grad(grads[0], 6.0)
        assert_grad(grads[1], 3.0)
    assert_grad(as_list[2], 3.0)
    assert_grad(as_dict["z"], 3.0)
    assert_grad(as_dict["a"], 6.0)


def test_sources_as_a_mixed_nested_structure():
    a, b, c, d = f64(1.0), f64(2.0), f64(3.0), f64(4.0)
    v = tt.Variable(0.5, dtype=tt.float64)
    with tt.GradientTape() as g:
        g.watch([a, b, c, d])
        y = a + 2 * b + 3 * c + 4 * d + 5 * v
    grads = g.gradient(y, {"first": [a, (b, {"deep": c})], "second": (d,), "var": v})
    assert set(grads) == {"first", "second", "var"}
    assert type(grads["first"]) is list and type(grads["first"][1]) is tuple
    assert type(grads["first"][1][1]) is dict and type(grads["second"]) is tuple
    assert_grad(grads["first"][0], 1.0)
    assert_grad(grads["first"][1][0], 2.0)
    assert_grad(grads["first"][1][1]["deep"], 3.0)
    assert_grad(grads["second"][0], 4.0)
    assert_grad(grads["var"], 5.0)


def test_the_same_source_twice():
    x = f64(3.0)
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    first, second = g.gradient(y, [x, x])
    assert_grad(first, 6.0)
    assert_grad(second, 6.0)


def test_output_gradients_weight_the_target():
    xs = np.array([1.0, 2.0, 3.0])
    weights = np.array([0.5, -1.0, 2.0])
    x = f64(xs)
    with tt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = tt.sin(x)
    assert_grad(g.gradient(y, x, output_gradients=f64(weights)), 2 * xs * weights)
    assert_grad(g.gradient(y, x, output_gradients=[f64(weights)]), 2 * xs * weights)
    both = g.gradient([y, z], x, output_gradients=[f64(weights), f64(2 * weights)])
    assert_grad(both, 2 * xs * weights + np.cos(xs) * 2 * weights)


def test_output_gradients_with_a_matrix_target():
    rng = np.random.default_rng(2)
    a_val, w_val, g_val = rng.normal(size=(2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(2, 4))
    a = f64(a_val)
    with tt.GradientTape() as g:
        g.watch(a)
        y = a @ f64(w_val)
    assert_grad(g.gradient(y, a, output_gradients=f64(g_val)), g_val @ w_val.T)


@pytest.mark.parametrize("mode", [tt.UnconnectedGradients.NONE, "none"])
def test_unconnected_gradients_none(mode):
    x, z = f64(2.0), f64([1.0, 2.0])
    v = tt.Variable([[1.0, 2.0]])
    with tt.GradientTape() as g:
        g.watch([x, z])
        y = x * x
    grads = g.gradient(y, [x, z, v], unconnected_gradients=mode)
    assert_grad(grads[0], 4.0)
    assert grads[1] is None and grads[2] is None


@pytest.mark.parametrize("mode", [tt.UnconnectedGradients.ZERO, "zero"])
def test_unconnected_gradients_zero(mode):
    x, z = f64(2.0), f64([1.0, 2.0])
    v = tt.Variable([[1.0, 2.0]])
    with tt.GradientTape() as g:
        g.watch([x, z])
        y = x * x
    grads = g.gradient(y, [x, z, v], unconnected_gradients=mode)
    assert_grad(grads[0], 4.0)
    assert_grad(grads[1], [0.0, 0.0])
    assert grads[1].dtype == tt.float64
    assert_grad(grads[2], [[0.0, 0.0]])
    assert grads[2].dtype == tt.float32


def test_unconnected_gradients_unknown_value_raises_value_error():
    x = f64(2.0)
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        g.gradient(y, x, unconnected_gradients="nonsense")


def test_unconnected_when_target_is_not_on_the_tape():
    # Seed 001: "When a target is not connected to a source you will get a gradient of None."
    x = tt.Variable(2.0)
    y = tt.Variable(3.0)
    with tt.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None


def test_gradient_with_respect_to_an_intermediate_value():
    x = tt.constant(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0


def test_gradient_with_respect_to_an_intermediate_value_after_reduce():
    x = tt.ones((2, 2))
    with tt.GradientTape() as t:
        t.watch(x)
        y = tt.reduce_sum(x)
        z = tt.multiply(y, y)
    assert t.gradient(z, y).numpy() == 8.0


def test_gradient_of_a_variable_target():
    v = tt.Variable([1.0, 2.0], dtype=tt.float64)
    with tt.GradientTape() as tape:
        y = v * 2.0
    assert_grad(tape.gradient([y, v], v), [3.0, 3.0])


def test_gradient_of_a_variable_target_with_respect_to_an_unrelated_source():
    v = tt.Variable(1.0, dtype=tt.float64)
    x = f64(2.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        _ = v * x
    assert tape.gradient(v, x) is None


# --- gradient() inside the tape's context ----------------------------------------------------


def test_gradient_inside_a_non_persistent_context_stops_recording():
    x = f64(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        assert tape in state.tapes
        dy = tape.gradient(y, x)
        assert tape not in state.tapes  # the tape stopped recording
        after = x * x * x
        assert state.tapes == []
    assert_grad(dy, 6.0)
    assert "mul" not in tape.ir()
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_gradient_inside_a_persistent_context_records_it():
    xs = 1.5
    x = f64(xs)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x**3
        dy = tape.gradient(y, x)
        assert tape in state.tapes  # still recording
    assert_grad(dy, 3 * xs**2)
    assert_grad(tape.gradient(dy, x), 6 * xs)
    assert_grad(tape.gradient(y, x), 3 * xs**2)


def test_gradient_inside_a_persistent_context_third_order():
    x = f64(2.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tt.sin(x) * x
        d1 = tape.gradient(y, x)
        d2 = tape.gradient(d1, x)
    d3 = tape.gradient(d2, x)
    # y = x sin x; y' = sin + x cos; y'' = 2 cos - x sin; y''' = -3 sin - x cos
    assert_grad(d1, np.sin(2.0) + 2.0 * np.cos(2.0))
    assert_grad(d2, 2 * np.cos(2.0) - 2.0 * np.sin(2.0))
    assert_grad(d3, -3 * np.sin(2.0) - 2.0 * np.cos(2.0))


def test_a_used_non_persistent_tape_can_be_entered_again():
    # As in TensorFlow: entering a tape whose recording was released starts a fresh one.
    x = f64(3.0)
    tape = tt.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    assert_grad(tape.gradient(y, x), 6.0)
    with tape:
        tape.watch(x)
        z = x * x * x
    assert_grad(tape.gradient(z, x), 27.0)


# --- stop_recording, reset, re-entry --------------------------------------------------------


def test_stop_recording_excludes_ops_inside():
    x = f64(3.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            hidden = x * x * x
            assert tape not in state.tapes
        assert tape in state.tapes
        total = y + hidden
        after = x * 4.0
    assert tape.gradient(hidden, x) is None
    assert_grad(tape.gradient(total, x), 6.0)
    assert_grad(tape.gradient(after, x), 4.0)


def test_stop_recording_seed_example():
    x = tt.constant(4.0)
    with tt.GradientTape() as tape:
        with tape.stop_recording():
            y = x**2
    assert tape.gradient(y, x) is None


def test_stop_recording_around_a_gradient_call():
    x = f64(2.0)
    with tt.GradientTape(persistent=True) as t:
        t.watch(x)
        loss = x**3
        with t.stop_recording():
            grads = t.gradient(loss, x)
    assert_grad(grads, 12.0)
    assert t.gradient(grads, x) is None


def test_stop_recording_only_affects_its_own_tape():
    x = f64(3.0)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
    assert inner.gradient(y, x) is None
    assert_grad(outer.gradient(y, x), 6.0)


def test_stop_recording_on_a_tape_never_entered_raises_runtime_error():
    tape = tt.GradientTape()
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_stop_recording_after_the_context_exited_raises_value_error():
    tape = tt.GradientTape()
    with tape:
        pass
    with pytest.raises(ValueError):
        with tape.stop_recording():
            pass


def test_stop_recording_after_a_released_gradient_raises_runtime_error():
    x = f64(1.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_reset_forgets_what_was_recorded():
    v = tt.Variable(3.0, dtype=tt.float64)
    w = tt.Variable(5.0, dtype=tt.float64)
    with tt.GradientTape(persistent=True) as t:
        loss = w * w
        t.reset()
        assert list(t.watched_variables()) == []
        loss += v * 3.0
    assert_grad(t.gradient(loss, v), 3.0)
    assert t.gradient(loss, w) is None
    assert list(t.watched_variables()) == [v]


def test_reset_forgets_watched_tensors():
    x = f64(2.0)
    with tt.GradientTape() as t:
        t.watch(x)
        t.reset()
        y = x * x
    assert t.gradient(y, x) is None


def test_reset_in_control_flow():
    x = f64(2.0)
    with tt.GradientTape() as t:
        t.watch(x)
        loss = x * x
        if loss > 3.0:
            t.reset()
            t.watch(x)
            loss = x * 10.0
    assert_grad(t.gradient(loss, x), 10.0)


def test_entering_a_recording_tape_raises_value_error():
    tape = tt.GradientTape()
    with tape:
        with pytest.raises(ValueError):
            with tape:
                pass
        assert tape in state.tapes  # still recording after the failed re-entry
    assert tape not in state.tapes


# --- higher orders --------------------------------------------------------------------------


def test_nested_tapes_seed_example():
    x = tt.constant(5.0)
    with tt.GradientTape() as g:
        g.watch(x)
        with tt.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
    assert str(dy_dx) == "tracer.Tensor(10.0, shape=(), dtype=float32)"
    assert str(d2y_dx2) == "tracer.Tensor(2.0, shape=(), dtype=float32)"


def test_outer_tape_that_does_not_watch_gives_none():
    # API.md: only the inner tape watches x, so TensorFlow 2 gives None for the second derivative.
    x = tt.constant(3.0)
    with tt.GradientTape() as g:
        with tt.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)
    assert dy_dx.numpy() == 6.0
    assert g.gradient(dy_dx, x) is None


def test_nested_tapes_with_a_variable():
    # Seed 004: both tapes watch the variable automatically.
    x = tt.Variable(1.0)
    with tt.GradientTape() as t:
        with tt.GradientTape() as t2:
            y = x * x * x
        dy_dx = t2.gradient(y, x)
    d2y_dx2 = t.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0


def test_nested_persistent_inner_tape():
    x = f64(3.0)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = x * x * tt.sin(x)
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    s, c = np.sin(3.0), np.cos(3.0)
    assert_grad(dy_dx, 6 * s + 9 * c)
    assert_grad(d2y_dx2, 2 * s + 12 * c - 9 * s)


def _derivatives(f, x_value, order):
    """[f'(x), f''(x), ...] up to `order`, with one tape per order, nested."""
    x = f64(x_value)
    with contextlib.ExitStack() as stack:
        tapes = [stack.enter_context(tt.GradientTape()) for _ in range(order)]
        for tape in tapes:
            tape.watch(x)
        y = f(x)
        results = []
        for tape in reversed(tapes):
            y = tape.gradient(y, x)
            results.append(y)
    return results


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_nth_derivative_of_x_to_the_fifth(order):
    x = 2.0
    expected = [5 * x**4, 20 * x**3, 60 * x**2, 120 * x][:order]
    for got, want in zip(_derivatives(lambda t: t**5, x, order), expected):
        assert_grad(got, want)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_nth_derivative_of_sin(order):
    x = 0.7
    expected = [np.cos(x), -np.sin(x), -np.cos(x), np.sin(x)][:order]
    for got, want in zip(_derivatives(tt.sin, x, order), expected):
        assert_grad(got, want)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_nth_derivative_of_a_product_with_exp(order):
    # f = x^2 e^x: f' = (x^2 + 2x) e^x, f'' = (x^2 + 4x + 2) e^x, f''' = (x^2 + 6x + 6) e^x
    x = 0.6
    e = np.exp(x)
    expected = [(x**2 + 2 * x) * e, (x**2 + 4 * x + 2) * e, (x**2 + 6 * x + 6) * e][:order]
    for got, want in zip(_derivatives(lambda t: t * t * tt.exp(t), x, order), expected):
        assert_grad(got, want)


def test_fourth_derivative_written_out():
    x = f64(1.3)
    with tt.GradientTape() as t4:
        t4.watch(x)
        with tt.GradientTape() as t3:
            t3.watch(x)
            with tt.GradientTape() as t2:
                t2.watch(x)
                with tt.GradientTape() as t1:
                    t1.watch(x)
                    y = tt.sin(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
    d4 = t4.gradient(d3, x)
    assert_grad(d1, np.cos(1.3))
    assert_grad(d2, -np.sin(1.3))
    assert_grad(d3, -np.cos(1.3))
    assert_grad(d4, np.sin(1.3))


def test_second_order_with_vector_and_reduction():
    xs = np.array([0.5, -1.0, 2.0])
    x = f64(xs)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.reduce_sum(tt.exp(x) * x)
        g = inner.gradient(y, x)  # (1 + x) e^x
        h = tt.reduce_sum(g)
    assert_grad(g, (1 + xs) * np.exp(xs))
    assert_grad(outer.gradient(h, x), (2 + xs) * np.exp(xs))


# --- Python control flow and things that block gradients -------------------------------------


def _f(x, y):
    output = 1.0
    for i in range(y):
        if i > 1 and i < 5:
            output = tt.multiply(output, x)
    return output


def _grad(x, y):
    with tt.GradientTape() as t:
        t.watch(x)
        out = _f(x, y)
    return t.gradient(out, x)


def test_python_control_flow():
    x = tt.convert_to_tensor(2.0)
    assert _grad(x, 6).numpy() == 12.0
    assert _grad(x, 4).numpy() == 4.0


def test_branching_on_a_tensor_value():
    def f(x):
        return x * x if x > 0 else -3.0 * x

    for value, expected in [(2.0, 4.0), (-2.0, -3.0)]:
        x = f64(value)
        with tt.GradientTape() as t:
            t.watch(x)
            y = f(x)
        assert_grad(t.gradient(y, x), expected)


def test_while_loop():
    x = f64(1.1)
    with tt.GradientTape() as t:
        t.watch(x)
        y = x
        steps = 0
        while y < 10.0:
            y = y * x
            steps += 1
    n = steps + 1  # y = x ** n
    assert_grad(t.gradient(y, x), n * 1.1 ** (n - 1))


def test_integer_path_gives_none():
    # Seed 001: the path to x is blocked by the int dtype.
    x = tt.Variable([[2, 2], [2, 2]])
    with tt.GradientTape() as tape:
        y = tt.cast(x, tt.float32)
        y = tt.reduce_sum(x)
    assert tape.gradient(y, x) is None


def test_cast_to_int_and_back_gives_none():
    x = f64([1.5, 2.5])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.cast(tt.cast(x, tt.int32), tt.float64) * x
        z = tt.reduce_sum(tt.cast(tt.cast(x * 2.0, tt.int32), tt.float64))
    grads = tape.gradient([y, z], x)
    assert_grad(grads, [1.0, 2.0])  # only the direct factor x carries a gradient


def test_cast_between_floats_passes_the_gradient():
    x = f64([1.5, 2.5])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.cast(x * x, tt.float32))
    grad = tape.gradient(y, x)
    assert grad.dtype == tt.float64
    np.testing.assert_allclose(grad.numpy(), [3.0, 5.0], rtol=1e-6)


def test_numpy_round_trip_gives_none():
    # Seed 001: "Did calculations outside of TensorFlow".
    x = tt.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tt.float32)
    with tt.GradientTape() as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)
        y = tt.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None


def test_numpy_round_trip_through_constant_gives_none():
    x = f64(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.constant((x * x).numpy()) * x
    assert_grad(tape.gradient(y, x), 9.0)


def test_stop_gradient():
    x = f64(3.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tt.stop_gradient(x * x) + x
        z = tt.stop_gradient(x)
    assert_grad(tape.gradient(y, x), 1.0)
    assert tape.gradient(z, x) is None
    np.testing.assert_allclose(y.numpy(), 12.0)


def test_variable_replaced_by_a_tensor():
    # Seed 001: `x = x + 1` turns x into a Tensor that no tape watches.
    x = tt.Variable(2.0)
    results = []
    for _ in range(2):
        with tt.GradientTape() as tape:
            y = x + 1
        results.append((type(x), tape.gradient(y, x)))
        x = x + 1
    assert results[0][0] is tt.Variable
    assert str(results[0][1]) == "tracer.Tensor(1.0, shape=(), dtype=float32)"
    assert results[1][0] is tt.Tensor
    assert results[1][1] is None


def test_assign_add_keeps_the_variable_watched():
    x = tt.Variable(2.0, dtype=tt.float64)
    for step in range(2):
        with tt.GradientTape() as tape:
            y = x * x
        assert_grad(tape.gradient(y, x), 2 * (2.0 + step))
        x.assign_add(1.0)


def test_watching_an_int_tensor_logs_a_warning_and_gives_none(caplog):
    """TensorFlow logs this (WARNING:tensorflow:The dtype of the watched tensor must be
    floating ...) rather than warn; so does tracer, on tt.get_logger()'s child."""
    x = tt.constant(3)
    with tt.GradientTape() as tape:
        with caplog.at_level(logging.WARNING, logger="tracer"):
            tape.watch(x)
        y = x * x
    assert tape.gradient(y, x) is None
    [record] = caplog.records
    assert record.name == "tracer.tape" and record.levelno == logging.WARNING
    assert "must be floating" in record.getMessage() and "int32" in record.getMessage()


def test_watching_an_int_variable_logs_a_warning(caplog):
    v = tt.Variable([1, 2], dtype=tt.int64)
    with tt.GradientTape() as tape:
        with caplog.at_level(logging.WARNING, logger="tracer"):
            tape.watch(v)
        y = v + v
    assert tape.gradient(y, v) is None
    assert "int64" in caplog.records[0].getMessage()


def test_the_log_writes_tensorflow_s_lines_to_stderr_until_its_level_is_raised():
    """With logging not configured, tracer's log lines read as TensorFlow's do
    (`WARNING:tensorflow:...`), on standard error as it is when written; setLevel silences."""
    program = """
import io, sys
import tracer as tt
sys.stderr = io.StringIO()
with tt.GradientTape() as tape:
    tape.watch(tt.constant(3))
tt.get_logger().setLevel("ERROR")
with tt.GradientTape() as tape:
    tape.watch(tt.constant(4))
sys.__stdout__.write(sys.stderr.getvalue())
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        "WARNING:tracer.tape:The dtype of the watched tensor must be floating or complex "
        "(e.g. tt.float32), got int32: its gradients will be None\n"
    )
    assert tt.get_logger() is logging.getLogger("tracer")


def test_watching_a_float_tensor_does_not_warn():
    x = tt.constant(1.0)
    with tt.GradientTape() as tape:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tape.watch(x)


def test_comparisons_are_not_differentiable():
    x = f64([1.0, -2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.cast(x > 0.0, tt.float64) * x
    assert_grad(tape.gradient(y, x), [1.0, 0.0])


def test_where_routes_the_gradient():
    xs = np.array([-1.0, 2.0, 3.0])
    x = f64(xs)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.where(x > 0.0, x * x, -x))
    assert_grad(tape.gradient(y, x), np.where(xs > 0, 2 * xs, -1.0))


def test_sqrt_under_where_has_no_nan_gradient():
    xs = np.array([-1.0, 0.0, 4.0])
    x = f64(xs)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.where(x > 0.0, tt.sqrt(tt.maximum(x, 0.0)), 0.0)
    assert_grad(tape.gradient(y, x), [0.0, 0.0, 0.25])


def test_indexing_is_differentiable():
    xs = np.arange(12.0).reshape(3, 4)
    x = f64(xs)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(x[1:, ::2] * 3.0) + x[0, -1] * x[0, -1] + tt.reduce_sum(x[None, ..., 1])
    expected = np.zeros((3, 4))
    expected[1:, ::2] += 3.0
    expected[0, -1] += 2 * xs[0, -1]
    expected[:, 1] += 1.0
    assert_grad(tape.gradient(y, x), expected)


def test_iteration_is_differentiable():
    xs = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = f64(xs)
    with tt.GradientTape() as tape:
        tape.watch(x)
        total = 0.0
        for i, row in enumerate(x):
            total = total + tt.reduce_sum(row * row) * (i + 1)
    assert_grad(tape.gradient(total, x), 2 * xs * np.array([[1.0], [2.0]]))


# --- threads ----------------------------------------------------------------------------------


def test_a_tape_does_not_record_ops_of_another_thread():
    x = f64(3.0)
    results = {}

    def work():
        results["y"] = x * x
        results["tapes"] = list(state.tapes)

    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        here = x * x
    assert results["tapes"] == []
    assert tape.gradient(results["y"], x) is None
    assert_grad(tape.gradient(here, x), 6.0)


def test_a_tape_in_another_thread_does_not_record_this_thread():
    x = f64(2.0)
    entered, computed = threading.Event(), threading.Event()
    results = {}

    def work():
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            entered.set()
            computed.wait(10)
            results["y"] = x * 5.0
        results["tape"] = tape

    worker = threading.Thread(target=work)
    worker.start()
    assert entered.wait(10)
    main = x * x
    computed.set()
    worker.join()
    tape = results["tape"]
    assert tape.gradient(main, x) is None
    assert_grad(tape.gradient(results["y"], x), 5.0)


def test_tapes_in_two_threads_at_once():
    barrier = threading.Barrier(2)
    results = {}

    def work(name, value):
        x = f64(value)
        with tt.GradientTape() as tape:
            tape.watch(x)
            barrier.wait(10)
            y = x**3
            barrier.wait(10)
        results[name] = tape.gradient(y, x)

    threads = [threading.Thread(target=work, args=(n, v)) for n, v in (("a", 1.0), ("b", 2.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_grad(results["a"], 3.0)
    assert_grad(results["b"], 12.0)


# --- memory: what the tape keeps ------------------------------------------------------------


def test_non_persistent_tape_releases_saved_values_after_gradient():
    x = f64(np.linspace(0.0, 1.0, 100_000))
    with tt.GradientTape() as tape:
        tape.watch(x)
        big = tt.exp(x)
        y = tt.reduce_sum(big * big)
    ref = weakref.ref(big)
    del big
    gc.collect()
    assert ref() is not None  # kept for the gradient of exp and mul
    grad = tape.gradient(y, x)
    expected = 2 * np.exp(2 * np.linspace(0.0, 1.0, 100_000))
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-12)
    gc.collect()
    assert ref() is None
    text = tape.ir()
    assert "exp" not in text and "mul" not in text


def test_persistent_tape_keeps_saved_values_until_it_is_dropped():
    x = f64(np.linspace(0.0, 1.0, 1000))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        big = tt.exp(x)
        y = tt.reduce_sum(big * big)
    ref = weakref.ref(big)
    del big
    tape.gradient(y, x)
    gc.collect()
    assert ref() is not None
    tape.gradient(y, x)
    del tape
    gc.collect()
    assert ref() is None


def test_relu_keeps_only_its_output():
    x = f64([-1.0, 2.0, 3.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        h = x * 2.0
        y = tt.nn.relu(h)
        rec = tape._recording_state
        saved = rec.saved[rec.tracked[y._node]]
        assert len(saved) == 1
        assert saved[0] is y
        assert not any(s is h for s in saved)
        total = tt.reduce_sum(y)
    assert_grad(tape.gradient(total, x), [0.0, 2.0, 2.0])


def test_ops_on_unwatched_values_are_not_recorded():
    x = f64(2.0)
    c = f64(5.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        unrelated = tt.cos(c) * c
        y = x * x
    text = tape.ir()
    assert "cos" not in text
    assert len([line for line in text.splitlines() if re.search(r"= mul\b", line)]) == 1
    assert tape.gradient(unrelated, x) is None
    assert_grad(tape.gradient(y, x), 4.0)


# --- jacobian and batch_jacobian -------------------------------------------------------------


def test_jacobian_seed_example():
    x = tt.constant([1.0, 2.0])
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    jacobian = g.jacobian(y, x)
    np.testing.assert_allclose(jacobian.numpy(), [[2.0, 0.0], [0.0, 4.0]])
    assert jacobian.dtype == tt.float32


def test_jacobian_elementwise():
    xs = np.array([[0.1, -0.4, 1.2], [2.0, -3.0, 0.5]])
    x = f64(xs)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.sin(x) * x
    expected = np.zeros((2, 3, 2, 3))
    for i in range(2):
        for j in range(3):
            expected[i, j, i, j] = np.cos(xs[i, j]) * xs[i, j] + np.sin(xs[i, j])
    assert_grad(g.jacobian(y, x), expected)


def test_jacobian_matmul_both_operands():
    rng = np.random.default_rng(3)
    xs, ws = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    x, w = f64(xs), f64(ws)
    with tt.GradientTape() as g:
        g.watch([x, w])
        y = x @ w
    jx, jw = g.jacobian(y, [x, w])
    assert_grad(jx, np.einsum("ik,lj->ijkl", np.eye(2), ws))
    assert_grad(jw, np.einsum("ik,jl->ijkl", xs, np.eye(4)))


def test_jacobian_of_reductions():
    xs = np.array([[1.0, 5.0, 2.0], [4.0, -1.0, 3.0]])
    x = f64(xs)
    with tt.GradientTape(persistent=True) as g:
        g.watch(x)
        row_sums = tt.reduce_sum(x * x, axis=1)
        col_max = tt.reduce_max(x, axis=0)
        mean = tt.reduce_mean(x)
    assert_grad(g.jacobian(row_sums, x), np.einsum("ik,kl->ikl", np.eye(2), 2 * xs))
    expected_max = np.zeros((3, 2, 3))
    for j, i in enumerate(np.argmax(xs, axis=0)):
        expected_max[j, i, j] = 1.0
    assert_grad(g.jacobian(col_max, x), expected_max)
    assert_grad(g.jacobian(mean, x), np.full((2, 3), 1 / 6))


def test_jacobian_against_finite_differences():
    rng = np.random.default_rng(4)
    xs, ws = rng.normal(size=(3,)), rng.normal(size=(3, 2))

    def f_np(v):
        return np.tanh(v @ ws) * np.sum(v**2)

    x = f64(xs)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.tanh(tt.reshape(x, (1, 3)) @ f64(ws))[0] * tt.reduce_sum(x * x)
    eps = 1e-6
    numeric = np.stack(
        [(f_np(xs + eps * e) - f_np(xs - eps * e)) / (2 * eps) for e in np.eye(3)], axis=-1
    )
    assert_grad(g.jacobian(y, x), numeric, rtol=1e-6, atol=1e-8)


def test_jacobian_unconnected_sources():
    x, z = f64([1.0, 2.0]), f64([[1.0, 2.0, 3.0]])
    with tt.GradientTape(persistent=True) as g:
        g.watch([x, z])
        y = x * 3.0
    jx, jz = g.jacobian(y, [x, z])
    assert_grad(jx, 3.0 * np.eye(2))
    assert jz is None
    jx, jz = g.jacobian(y, [x, z], unconnected_gradients=tt.UnconnectedGradients.ZERO)
    assert_grad(jx, 3.0 * np.eye(2))
    assert_grad(jz, np.zeros((2, 1, 3)))
    assert jz.dtype == tt.float64
    jz = g.jacobian(y, {"z": z}, unconnected_gradients="zero")
    assert_grad(jz["z"], np.zeros((2, 1, 3)))


def test_jacobian_with_a_variable_source():
    v = tt.Variable([1.0, 2.0, 3.0], dtype=tt.float64)
    with tt.GradientTape() as g:
        y = v * v
    assert_grad(g.jacobian(y, v), np.diag([2.0, 4.0, 6.0]))


def test_jacobian_of_a_scalar_is_the_gradient():
    xs = np.array([1.0, 2.0])
    x = f64(xs)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.reduce_sum(tt.exp(x))
    assert_grad(g.jacobian(y, x), np.exp(xs))


def test_jacobian_without_pfor_on_a_persistent_tape():
    x = f64([1.0, 2.0])
    with tt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
    assert_grad(g.jacobian(y, x, experimental_use_pfor=False), np.diag([2.0, 4.0]))


def test_jacobian_is_vectorized(monkeypatch):
    """API.md: with experimental_use_pfor=True, one batched backward pass, not a loop."""
    from runtime import kernels

    calls = []
    real_cos = kernels.KERNELS["cos"]
    x = f64(np.linspace(0.0, 1.0, 40))
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.sin(x)
    monkeypatch.setitem(kernels.KERNELS, "cos", lambda v: calls.append(1) or real_cos(v))
    jacobian = g.jacobian(y, x)
    assert_grad(jacobian, np.diag(np.cos(np.linspace(0.0, 1.0, 40))))
    assert len(calls) <= 2, f"the backward pass ran {len(calls)} times, once per output element"


def test_batch_jacobian_seed_example():
    with tt.GradientTape() as g:
        x = tt.constant([[1.0, 2.0], [3.0, 4.0]], dtype=tt.float32)
        g.watch(x)
        y = x * x
    batch_jacobian = g.batch_jacobian(y, x)
    np.testing.assert_allclose(batch_jacobian.numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_batch_jacobian_of_a_dense_layer():
    rng = np.random.default_rng(5)
    xs, ws = rng.normal(size=(3, 2)), rng.normal(size=(2, 4))
    x = f64(xs)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.tanh(x @ f64(ws))
    ys = np.tanh(xs @ ws)
    expected = np.einsum("bi,ji->bij", 1 - ys**2, ws)
    result = g.batch_jacobian(y, x)
    assert result.shape == (3, 4, 2)
    assert_grad(result, expected)


def test_batch_jacobian_with_higher_rank_examples():
    xs = np.arange(12.0).reshape(2, 2, 3) / 10
    x = f64(xs)
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.reduce_sum(x * x, axis=2)  # shape (2, 2)
    expected = np.zeros((2, 2, 2, 3))
    for b in range(2):
        for i in range(2):
            expected[b, i, i, :] = 2 * xs[b, i]
    assert_grad(g.batch_jacobian(y, x), expected)


def test_batch_jacobian_equals_stacked_jacobians():
    rng = np.random.default_rng(6)
    xs = rng.normal(size=(4, 3))
    x = f64(xs)
    with tt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = tt.sin(x) * tt.reduce_sum(x, axis=1, keepdims=True)
    full = g.jacobian(y, x).numpy()
    batched = g.batch_jacobian(y, x)
    assert_grad(batched, np.stack([full[i, :, i, :] for i in range(4)]))


def test_batch_jacobian_unconnected_source_gives_zeros():
    # API.md: zeros even with unconnected_gradients='none', as TensorFlow's does.
    x, z = f64([[1.0, 2.0], [3.0, 4.0]]), f64([[1.0], [2.0]])
    with tt.GradientTape(persistent=True) as g:
        g.watch([x, z])
        y = x * 2.0
    assert_grad(g.batch_jacobian(y, z), np.zeros((2, 2, 1)))
    assert_grad(g.batch_jacobian(y, z, unconnected_gradients="none"), np.zeros((2, 2, 1)))
    assert_grad(
        g.batch_jacobian(y, z, unconnected_gradients=tt.UnconnectedGradients.ZERO),
        np.zeros((2, 2, 1)),
    )


def test_batch_jacobian_is_vectorized(monkeypatch):
    from runtime import kernels

    calls = []
    real_cos = kernels.KERNELS["cos"]
    x = f64(np.linspace(0.0, 1.0, 40).reshape(2, 20))
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.sin(x)
    monkeypatch.setitem(kernels.KERNELS, "cos", lambda v: calls.append(1) or real_cos(v))
    result = g.batch_jacobian(y, x)
    expected = np.stack([np.diag(row) for row in np.cos(np.linspace(0.0, 1.0, 40).reshape(2, 20))])
    assert_grad(result, expected)
    assert len(calls) <= 2, f"the backward pass ran {len(calls)} times, once per output element"


def test_jacobian_second_order_with_nested_tapes():
    xs = np.array([0.5, 1.5])
    x = f64(xs)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.reduce_sum(x * x * x)
        g = inner.gradient(y, x)  # 3 x^2
    hessian = outer.jacobian(g, x)
    assert_grad(hessian, np.diag(6 * xs))


# --- tape.ir() --------------------------------------------------------------------------------


def test_ir_has_one_line_per_recorded_op_with_type_and_user_line():
    x = tt.constant(np.ones((2, 3), dtype=np.float32))
    with tt.GradientTape() as tape:
        watch_line = _line() + 1
        tape.watch(x)
        first = _line() + 1
        y = tt.exp(x)
        z = y * 2.0
        _ = tt.cos(tt.constant(1.0))  # not recorded: nothing watched
        s = tt.reduce_sum(z)
    text = tape.ir()
    lines = text.splitlines()
    ops = [re.search(r"= (\w+)", line).group(1) for line in lines]
    assert [op for op in ops if op not in ("input", "const")] == ["exp", "mul", "reduce_sum"]

    def only(op):
        found = [line for line in lines if re.search(rf"= {op}\b", line)]
        assert len(found) == 1, text
        return found[0]

    exp_format = rf"%\d+: f32\[2,3\] = exp %\d+\s+# test_tape\.py:{first}"
    assert re.fullmatch(exp_format, only("exp")), text
    assert "f32[2,3]" in only("mul") and only("mul").endswith(f"test_tape.py:{first + 1}")
    assert "f32[]" in only("reduce_sum")
    assert only("reduce_sum").endswith(f"test_tape.py:{first + 3}")
    assert only("input").endswith(f"test_tape.py:{watch_line}")
    assert "cos" not in text
    assert_grad(tape.gradient(s, x), np.full((2, 3), 2 * np.e), rtol=1e-6)


def test_ir_of_variable_reads_and_line_of_a_helper():
    def helper(t):
        return tt.tanh(t)  # the line the tanh node points at

    helper_line = helper.__code__.co_firstlineno + 1
    v = tt.Variable(np.zeros((4,), dtype=np.float64), name="weights")
    with tt.GradientTape() as tape:
        y = helper(v * 3.0)
    text = tape.ir()
    tanh_lines = [line for line in text.splitlines() if re.search(r"= tanh\b", line)]
    assert len(tanh_lines) == 1
    assert "f64[4]" in tanh_lines[0]
    assert tanh_lines[0].endswith(f"test_tape.py:{helper_line}")
    assert "weights" in text
    assert_grad(tape.gradient(y, v), np.full(4, 3.0))


# --- more corner cases ------------------------------------------------------------------------


def test_variable_assigned_inside_the_tape_uses_each_read_value():
    v = tt.Variable(2.0, dtype=tt.float64)
    with tt.GradientTape(persistent=True) as tape:
        y = v * v
        v.assign(3.0)
        z = v * v
    assert_grad(tape.gradient(y, v), 4.0)
    assert_grad(tape.gradient(z, v), 6.0)
    assert_grad(tape.gradient([y, z], v), 10.0)


def test_watch_an_intermediate_of_another_tape():
    x = f64(2.0)
    with tt.GradientTape() as first:
        first.watch(x)
        y = x * x
    with tt.GradientTape() as second:
        second.watch(y)
        z = y * y * 3.0
    assert_grad(second.gradient(z, y), 6.0 * 4.0)
    assert_grad(first.gradient(y, x), 4.0)


def test_two_tapes_watching_the_same_tensor():
    x = f64(3.0)
    with tt.GradientTape() as a, tt.GradientTape() as b:
        a.watch(x)
        b.watch(x)
        y = x * x
    assert_grad(a.gradient(y, x), 6.0)
    assert_grad(b.gradient(y, x), 6.0)


def test_unconnected_target_with_zero():
    x = f64([1.0, 2.0])
    other = f64(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
    assert_grad(tape.gradient(other, x, unconnected_gradients="zero"), [0.0, 0.0])


def test_watched_variables_survive_a_released_gradient():
    v = tt.Variable(1.0)
    w = tt.Variable(2.0)
    with tt.GradientTape() as tape:
        y = w * v
    tape.gradient(y, [v, w])
    assert list(tape.watched_variables()) == [v, w]


def test_an_exception_inside_the_context_stops_recording():
    x = f64(1.0)
    tape = tt.GradientTape()
    with pytest.raises(KeyError):
        with tape:
            tape.watch(x)
            raise KeyError("boom")
    assert state.tapes == []


def test_an_exception_inside_stop_recording_resumes_recording():
    x = f64(2.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(KeyError):
            with tape.stop_recording():
                raise KeyError("boom")
        assert tape in state.tapes
        y = x * x
    assert_grad(tape.gradient(y, x), 4.0)


def test_pow_gradients_with_respect_to_base_and_exponent():
    x, y = f64(2.0), f64(3.0)
    with tt.GradientTape() as tape:
        tape.watch([x, y])
        z = x**y
    dx, dy = tape.gradient(z, [x, y])
    assert_grad(dx, 3.0 * 4.0)
    assert_grad(dy, 8.0 * np.log(2.0))


def test_divide_gradients():
    x, y = f64(3.0), f64(4.0)
    with tt.GradientTape() as tape:
        tape.watch([x, y])
        z = x / y
    dx, dy = tape.gradient(z, [x, y])
    assert_grad(dx, 0.25)
    assert_grad(dy, -3.0 / 16.0)


def test_reduce_max_splits_the_gradient_between_ties():
    x = f64([1.0, 3.0, 3.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_max(x)
    assert_grad(tape.gradient(y, x), [0.0, 0.5, 0.5, 0.0])


def test_maximum_sends_ties_to_the_first_operand():
    x, y = f64([1.0, 2.0, 3.0]), f64([2.0, 2.0, 1.0])
    with tt.GradientTape() as tape:
        tape.watch([x, y])
        z = tt.maximum(x, y)
    dx, dy = tape.gradient(z, [x, y])
    assert_grad(dx, [0.0, 1.0, 1.0])
    assert_grad(dy, [1.0, 0.0, 0.0])


def test_floordiv_has_no_gradient():
    x = f64([3.5, 4.5])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x // 2.0
    assert tape.gradient(y, x) is None


def test_sign_has_a_zero_gradient():
    x = f64([-3.0, 4.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.sign(x)
    assert_grad(tape.gradient(y, x), [0.0, 0.0])  # a zero tensor, not None


# --- complex sources: TensorFlow's convention, the gradient is the conjugate ----------------
# For a real loss L(z), TensorFlow gives dL/dRe(z) + i dL/dIm(z); for a holomorphic f this is
# conj(f'(z)) (e.g. its MulGrad is `grad * conj(y)`).


def test_complex_product_gradient_is_conjugated():
    zs = np.array([3 + 4j, -1 + 0.5j])
    z = tt.constant(zs)
    with tt.GradientTape() as tape:
        tape.watch(z)
        y = z * z
    grad = tape.gradient(y, z)
    assert grad.dtype == tt.complex128
    np.testing.assert_allclose(grad.numpy(), 2 * np.conj(zs), rtol=1e-12)


def test_complex_exp_gradient_is_conjugated():
    zs = np.array([0.3 + 0.4j])
    z = tt.constant(zs)
    with tt.GradientTape() as tape:
        tape.watch(z)
        y = tt.exp(z)
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), np.conj(np.exp(zs)), rtol=1e-12)


def test_complex_abs_is_real_and_differentiable():
    zs = np.array([3 + 4j, -6 + 8j])
    z = tt.constant(zs)
    with tt.GradientTape() as tape:
        tape.watch(z)
        y = abs(z)
    assert y.dtype == tt.float64
    np.testing.assert_allclose(y.numpy(), [5.0, 10.0])
    abs_lines = [line for line in tape.ir().splitlines() if re.search(r"= abs\b", line)]
    assert len(abs_lines) == 1 and "f64[2]" in abs_lines[0], tape.ir()
    grad = tape.gradient(y, z)  # TensorFlow's _ComplexAbsGrad: z / |z|
    assert grad.dtype == tt.complex128
    np.testing.assert_allclose(grad.numpy(), zs / np.abs(zs), rtol=1e-12)


# --- jacobians of gradients, and more thread-locality ------------------------------------------


def test_hessian_from_a_persistent_tape_jacobian_of_its_own_gradient():
    xs = np.array([0.5, -1.0, 2.0])
    x = f64(xs)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tt.reduce_sum(x**3) + x[0] * x[1]
        g = tape.gradient(y, x)
    expected_g = 3 * xs**2 + np.array([xs[1], xs[0], 0.0])
    assert_grad(g, expected_g)
    hessian = np.diag(6 * xs)
    hessian[0, 1] = hessian[1, 0] = 1.0
    assert_grad(tape.jacobian(g, x), hessian)


@pytest.mark.parametrize("parallel_iterations", [None, 1, 3])
def test_jacobian_parallel_iterations_does_not_change_the_result(parallel_iterations):
    xs = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    x = f64(xs)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tt.exp(x) * 2.0
    expected = np.zeros((3, 2, 3, 2))
    for i in range(3):
        for j in range(2):
            expected[i, j, i, j] = 2 * np.exp(xs[i, j])
    assert_grad(tape.jacobian(y, x, parallel_iterations=parallel_iterations), expected)
    batched = tape.batch_jacobian(y, x, parallel_iterations=parallel_iterations)
    assert_grad(batched, np.stack([np.diag(2 * np.exp(row)) for row in xs]))


def test_a_variable_read_in_another_thread_is_not_watched():
    v = tt.Variable(2.0)
    w = tt.Variable(3.0)
    results = {}

    def work():
        results["y"] = v * v

    with tt.GradientTape() as tape:
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        z = w * w
    assert list(tape.watched_variables()) == [w]
    grads = tape.gradient([results["y"], z], [v, w])
    assert grads[0] is None
    np.testing.assert_allclose(grads[1].numpy(), 6.0)


def test_a_source_computed_from_another_passes_its_gradient_on():
    """Asked for x and h = 2x together, h's gradient is the targets' with respect to h's
    value and x's passes through h, as TensorFlow gives them (x's was None before): eagerly
    (twice: the sweep, then the cached graph), traced, by jacobian and by tt.gradients."""
    x = tt.constant([[1.0, 2.0]])
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * 2.0
        k = h * 3.0
        y = tt.reduce_sum(h * h) + tt.reduce_sum(k)
    for _ in range(2):
        gx, gh, gk = tape.gradient(y, [x, h, k])
        np.testing.assert_array_equal(gx.numpy(), [[14.0, 22.0]])  # 8x + 6
        np.testing.assert_array_equal(gh.numpy(), [[7.0, 11.0]])  # 2h + 3
        np.testing.assert_array_equal(gk.numpy(), [[1.0, 1.0]])
    gk, gx = tape.gradient(y, [k, x])
    np.testing.assert_array_equal(gx.numpy(), [[14.0, 22.0]])

    @tt.function
    def traced(x):
        with tt.GradientTape() as inner:
            inner.watch(x)
            h = x * 2.0
            y = tt.reduce_sum(h * h)
        return inner.gradient(y, [x, h]) + tt.gradients(y, [x, h])

    for g, want in zip(traced(x), [[[8.0, 16.0]], [[4.0, 8.0]]] * 2):
        np.testing.assert_array_equal(g.numpy(), want)
    v = tt.constant([1.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(v)
        h = v * 2.0
        y = h * h + v
    jx, jh = tape.jacobian(y, [v, h])
    np.testing.assert_array_equal(jx.numpy(), [[9.0, 0.0], [0.0, 17.0]])
    np.testing.assert_array_equal(jh.numpy(), [[4.0, 0.0], [0.0, 8.0]])
