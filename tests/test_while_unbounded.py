"""Gradients of compiled `tt.while_loop`s without `maximum_iterations`, as TensorFlow gives.

A loop with no bound stacks the states of its first iterations (as many as fit a budget,
`loops.STACK_ITERATIONS` at most); the reverse recomputes a later state from the last one
stored. Tests shrink the budget so both paths run: the values must not depend on it.
"""

import numpy as np
import pytest

import tracer as tt
from tracer.control import loops

BACKENDS = ["c", "interpreter"]


@pytest.fixture(params=[1024, 1], ids=lambda n: f"capacity{n}")
def capacity(request, monkeypatch):
    monkeypatch.setattr(loops, "STACK_ITERATIONS", request.param)
    return request.param


def power_gradient(x):
    """TensorFlow 2.21 gives 32.0 for this at x = 2, inside a tf.function."""
    with tt.GradientTape() as tape:
        tape.watch(x)
        _, y = tt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, x))
    return tape.gradient(y, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensorflows_loop_without_a_bound_has_its_gradient_compiled(backend, capacity):
    assert power_gradient(tt.constant(2.0)).numpy() == 32.0  # eagerly: Python's loop
    assert tt.function(power_gradient, backend=backend)(tt.constant(2.0)).numpy() == 32.0


def grow_until(x):
    """A loop whose length depends on x: y, dy/dx, d2y/dx2."""
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            _, y = tt.while_loop(
                lambda i, y: y < 50.0, lambda i, y: (i + 1, y * x + tt.sin(y)), (0, x)
            )
        dy = inner.gradient(y, x)
    return y, dy, outer.gradient(dy, x)


def test_second_order_through_a_loop_of_data_dependent_length(capacity):
    x = tt.constant(1.7, tt.float64)
    # TensorFlow 2.21's values for grow_until(1.7) inside a tf.function
    expected = [80.01378528935169, 103.17580834038151, -1038.6561555431795]
    eager = [v.numpy() for v in grow_until(x)]
    np.testing.assert_allclose(eager, expected, rtol=1e-12)
    for backend in BACKENDS:
        compiled = [v.numpy() for v in tt.function(grow_until, backend=backend)(x)]
        np.testing.assert_allclose(compiled, expected, rtol=1e-12)


def test_finite_differences_agree_with_the_replayed_reverse(capacity):
    """Seven iterations of a vector state with a captured matrix: the gradient with respect
    to both, against central differences in float64."""
    w = tt.Variable(np.array([[0.9, -0.3], [0.2, 0.7]]))

    def loss(x):
        def body(i, s):
            return i + 1, tt.tanh(tt.linalg.matvec(w, s) + 0.1)

        _, s = tt.while_loop(lambda i, s: i < 7, body, (tt.constant(0), x))
        return tt.reduce_sum(s * s)

    def value_and_grads(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            value = loss(x)
        gx, gw = tape.gradient(value, [x, w])
        return value, gx, gw

    x0 = np.array([0.4, -1.2])
    eps = 1e-6
    numeric_x = [
        (loss(tt.constant(x0 + eps * e)).numpy() - loss(tt.constant(x0 - eps * e)).numpy())
        / (2 * eps)
        for e in np.eye(2)
    ]
    numeric_w = np.zeros((2, 2))
    w0 = w.numpy()
    for index in np.ndindex(2, 2):
        step = np.zeros((2, 2))
        step[index] = eps
        w.assign(w0 + step)
        plus = loss(tt.constant(x0)).numpy()
        w.assign(w0 - step)
        minus = loss(tt.constant(x0)).numpy()
        numeric_w[index] = (plus - minus) / (2 * eps)
    w.assign(w0)
    for backend in BACKENDS:
        _, gx, gw = tt.function(value_and_grads, backend=backend)(tt.constant(x0))
        np.testing.assert_allclose(gx.numpy(), numeric_x, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(gw.numpy(), numeric_w, rtol=1e-7, atol=1e-9)


def test_nested_loops_without_bounds(capacity):
    def f(x):
        def outer(i, s):
            _, t = tt.while_loop(
                lambda j, t: j < i + 1, lambda j, t: (j + 1, tt.sin(t) * x), (0, s)
            )
            return i + 1, t

        return tt.while_loop(lambda i, s: i < 4, outer, (0, x))[1]

    def grad(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)

    x = tt.constant(0.8, tt.float64)
    eps = 1e-6
    numeric = (f(x + eps).numpy() - f(x - eps).numpy()) / (2 * eps)
    assert grad(x).numpy() == pytest.approx(numeric, rel=1e-7)
    for backend in BACKENDS:
        assert tt.function(grad, backend=backend)(x).numpy() == pytest.approx(numeric, rel=1e-7)


def test_forward_mode_through_a_loop_without_a_bound(capacity):
    def f(x):
        return tt.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, tt.sin(s) * s), (0, x))[1]

    x = tt.constant([0.3, 0.9], tt.float64)
    v = tt.constant([1.0, -2.0], tt.float64)
    eps = 1e-6
    numeric = (f(x + eps * v).numpy() - f(x - eps * v).numpy()) / (2 * eps)
    for backend in BACKENDS:
        compiled = tt.function(lambda x, v: tt.jvp(f, [x], [v])[1], backend=backend)
        np.testing.assert_allclose(compiled(x, v).numpy(), numeric, rtol=1e-7)


def test_the_compiled_loop_stacks_only_its_first_iterations(monkeypatch):
    """The C stores a state only while the stack has room: a loop longer than the capacity
    writes nothing past it (the reverse recomputes those states)."""
    monkeypatch.setattr(loops, "STACK_ITERATIONS", 3)
    concrete = tt.function(power_gradient, backend="c").get_concrete_function(
        tt.TensorSpec([], tt.float32)
    )
    assert "< 3) {" in concrete.c_source()
