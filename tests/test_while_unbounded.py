"""Gradients of compiled `tt.while_loop`s without `maximum_iterations`, as TensorFlow gives.

A loop with no bound stacks its states in a fixed number of rows (as many as fit a budget,
`loops.STACK_ITERATIONS` at most): when the rows are full, every other one is dropped and
the loop stacks every second iteration from then on, and so on; the reverse recomputes a
state that is not held from the row before it. Tests shrink the budget so that the rows
halve many times: the values must not depend on it.
"""

import numpy as np
import pytest

import tracer as tt
from tracer.control import loops

BACKENDS = ["c", "interpreter"]


@pytest.fixture(params=[1024, 2], ids=lambda n: f"capacity{n}")
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


def recurrence(x, n):
    """n iterations of a vector state: the state, its gradient (of a weighted sum) and that
    gradient's derivative along a direction."""
    weights = tt.constant([1.0, -0.5, 2.0], tt.float64)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            _, y = tt.while_loop(
                lambda i, y: i < n, lambda i, y: (i + 1, tt.sin(y) * x + 0.3), (0, x)
            )
            total = tt.reduce_sum(y * weights)
        gradient = inner.gradient(total, x)
        along = tt.reduce_sum(gradient * weights)
    return y, gradient, outer.gradient(along, x, unconnected_gradients="zero")


@pytest.mark.parametrize("backend", BACKENDS)
def test_loops_many_times_longer_than_their_stacks_have_every_gradient(backend, monkeypatch):
    """Stacks of two rows, the fewest there are, and loops of up to 37 iterations: the rows
    halve up to five times (the stride reaches 32), and every state the reverse needs is
    recomputed from the right row: values and two orders of derivatives as eagerly."""
    monkeypatch.setattr(loops, "STACK_ITERATIONS", 2)
    x = tt.constant([0.9, -0.4, 0.6], tt.float64)
    compiled = tt.function(recurrence, backend=backend)
    for n in (0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 37):
        eager = [t.numpy() for t in recurrence(x, n)]
        got = [t.numpy() for t in compiled(x, tt.constant(n))]
        for g, e in zip(got, eager):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=f"{n} iterations")
    assert compiled.experimental_get_tracing_count() == 1


def test_the_stacks_of_a_loop_without_a_bound_have_a_power_of_two_rows_within_the_budget():
    """64 MiB of rows (65,536 at most), rounded down to a power of two so that they halve
    evenly, and never fewer than two: a loop whose state is larger than the budget still
    stacks two."""
    spec = tt.TensorSpec
    assert loops._capacity([spec([], tt.float64)]) == 65536
    assert loops._capacity([spec([1000], tt.float32)]) == 16384  # 16,777 rows fit
    assert loops._capacity([spec([3, 1000], tt.float32), spec([], tt.int32)]) == 4096  # 5,590
    assert loops._capacity([spec([2**25], tt.float64)]) == 2  # none fits


def test_a_mapped_gradient_through_loops_of_each_rows_length_is_each_rows_gradient(monkeypatch):
    """tt.vectorized_map of a gradient through a loop whose length depends on the row, with
    stacks of two rows: each row's gradient as alone (the map runs the rows one by one: the
    reverse reads a stack at each row's own iteration, a gather that does not batch)."""
    monkeypatch.setattr(loops, "STACK_ITERATIONS", 2)

    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            _, y = tt.while_loop(
                lambda i, y: y < 50.0, lambda i, y: (i + 1, y * 1.3 + tt.sin(y)), (0, x)
            )
        return tape.gradient(y, x)

    xs = tt.constant([0.2, 1.7, 3.0, 40.0], tt.float64)  # 17, 14, 14 and 1 iterations
    alone = [gradient(x).numpy() for x in xs]
    for backend in BACKENDS:
        batched = tt.function(lambda xs: tt.vectorized_map(gradient, xs), backend=backend)(xs)
        np.testing.assert_allclose(batched.numpy(), alone, rtol=1e-12)


def halve_three_times(x):
    """h * 0.5**3 by a loop without a bound, and its gradient with respect to x: 0.125."""
    with tt.GradientTape() as tape:
        tape.watch(x)
        _, h = tt.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * 0.5), (0, x))
        total = tt.reduce_sum(h * h)
    return h, tape.gradient(total, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_without_a_bound_over_a_batch_of_any_size_and_its_gradient(backend):
    """A loop variable whose batch is known only when the function runs: its stacks' rows
    are budgeted for a stand-in size (the trace failed on the unknown size instead), and
    each batch size gives the values of a function traced for it."""
    spec = tt.TensorSpec([None, 3], tt.float64)
    any_batch = tt.function(halve_three_times, input_signature=[spec], backend=backend)
    for rows in (4, 1, 300):
        x = tt.constant(np.arange(rows * 3, dtype=np.float64).reshape(rows, 3))
        h, dx = any_batch(x)
        np.testing.assert_array_equal(h.numpy(), x.numpy() * 0.125)
        np.testing.assert_array_equal(dx.numpy(), 2 * x.numpy() * 0.125**2)
    assert any_batch.experimental_get_tracing_count() == 1
