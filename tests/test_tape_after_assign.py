"""A tape's gradient with respect to a Variable that traced code assigns: the sum over every
read of the variable, with no gradient through the assigned expression, as in eager code
and in TensorFlow (an assign has no gradient; each read is a read of the variable).

Each program runs eagerly, compiled to C and in the interpreter; the expected values are
the analytic derivatives.
"""

import numpy as np
import pytest

import tracer as tt

RUNS = {
    "eager": lambda f: f,
    "c": lambda f: tt.function(f, backend="c"),
    "interpreter": lambda f: tt.function(f, backend="interpreter"),
}


@pytest.fixture(params=sorted(RUNS))
def run(request):
    return RUNS[request.param]


def test_read_after_an_assign_of_an_expression_of_the_variable(run):
    v = tt.Variable(3.0, dtype=tt.float64)

    def f():
        with tt.GradientTape() as tape:
            y = v * v  # 2 v0 = 6
            v.assign(v * 2.0)  # no gradient through the assign
            z = y + v  # a read of the variable: 1
        return tape.gradient(z, v)

    assert run(f)().numpy() == pytest.approx(7.0)


def test_read_after_an_assign_of_a_constant(run):
    v = tt.Variable(5.0, dtype=tt.float64)

    def f():
        with tt.GradientTape() as tape:
            v.assign(3.0)
            y = v * v
        return tape.gradient(y, v)

    assert run(f)().numpy() == pytest.approx(6.0)


def test_training_steps_unrolled_in_one_function(run):
    """The second step's gradient is at the updated value, not through the first update."""
    v = tt.Variable(3.0, dtype=tt.float64)

    def steps():
        gradients = []
        for _ in range(3):
            with tt.GradientTape() as tape:
                loss = v * v * v
            g = tape.gradient(loss, v)
            gradients.append(g)
            v.assign_sub(0.1 * g)
        return tt.stack(gradients)

    expected, x = [], 3.0
    for _ in range(3):
        expected.append(3 * x * x)
        x -= 0.1 * expected[-1]
    np.testing.assert_allclose(run(steps)().numpy(), expected, rtol=1e-12)
    assert v.numpy() == pytest.approx(x)


def test_optimizer_steps_unrolled_in_one_function(run):
    w = tt.Variable([1.0, -2.0], dtype=tt.float64)
    optimizer = tt.keras.optimizers.SGD(0.1)

    def steps():
        losses = []
        for _ in range(3):
            with tt.GradientTape() as tape:
                loss = tt.reduce_sum((w - 5.0) ** 2)
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            losses.append(loss)
        return tt.stack(losses)

    x, expected = np.array([1.0, -2.0]), []
    rate = float(np.float32(0.1))  # Keras's float32 learning rate, cast up
    for _ in range(3):
        expected.append(np.sum((x - 5.0) ** 2))
        x = x - rate * 2 * (x - 5.0)
    np.testing.assert_allclose(run(steps)().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(w.numpy(), x, rtol=1e-12)


def test_assigns_in_a_loop_then_a_read(run):
    v = tt.Variable(3.0, dtype=tt.float64)

    def f():
        with tt.GradientTape() as tape:
            for _ in tt.range(3):
                v.assign(v * 2.0)
            y = v * v
        return tape.gradient(y, v)

    assert run(f)().numpy() == pytest.approx(2 * 24.0)


def test_jacobian_sums_the_reads(run):
    w = tt.Variable([1.0, 2.0], dtype=tt.float64)

    def f():
        with tt.GradientTape() as tape:
            u = w * 3.0  # d/dw: 3
            w.assign(w * 2.0)
            y = u + w * w  # a read of the new value: 2 w1
        return tape.jacobian(y, w)

    np.testing.assert_allclose(run(f)().numpy(), np.diag([3.0 + 4.0, 3.0 + 8.0]))


def test_second_order_after_an_assign(run):
    v = tt.Variable(3.0, dtype=tt.float64)

    def f():
        with tt.GradientTape() as outer:
            with tt.GradientTape() as inner:
                v.assign(v + 1.0)
                y = v * v * v
            g = inner.gradient(y, v)
        return g, outer.gradient(g, v)

    g, h = run(f)()
    assert (g.numpy(), h.numpy()) == pytest.approx((3 * 16.0, 6 * 4.0))


def test_rows_read_before_and_after_an_assign(run):
    table = tt.Variable(np.arange(6.0).reshape(3, 2))

    def f():
        with tt.GradientTape() as tape:
            a = tt.reduce_sum(tt.gather(table, [0, 2]))
            table.assign(table * 2.0)
            b = tt.reduce_sum(tt.gather(table, [2])) + a
        return tt.convert_to_tensor(tape.gradient(b, table))

    np.testing.assert_allclose(run(f)().numpy(), [[1, 1], [0, 0], [2, 2]])


def test_a_tape_that_does_not_watch_the_variable_is_unchanged(run):
    v = tt.Variable(3.0, dtype=tt.float64)

    def f():
        with tt.GradientTape(watch_accessed_variables=False) as tape:
            v.assign(v * 2.0)
            y = v * v
        return y, tape.gradient(y, v) is None

    y, unconnected = run(f)()
    assert y.numpy() == pytest.approx(36.0) and bool(unconnected)
