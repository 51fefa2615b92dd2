"""A loop that runs exactly once is its body (tracer/control/loops.py `_run_once`, the
simplification pass's `resolve`): at most one iteration and a condition its initial
values make a known True. The compiled values and gradients, to the second order, are the
interpreter's and finite differences'; loops that may run zero times stay loops."""

import numpy as np
import pytest

import tracer as tt

RNG = np.random.default_rng(11)


def _solve(x, steps, start=0):
    """Two Runge-Kutta-like stages of y' = shifted x * y, `steps` times from `start`."""
    h = 2.0 / max(steps, 1)

    def rate(y):
        return tt.concat([x[:1], x[1:] * y[:-1]], 0)

    def step(i, y):
        k1 = rate(y)
        return i + 1, y + h * rate(y + h / 2 * k1)

    loop_vars = (tt.constant(start), tt.zeros_like(x) + 0.5)
    return tt.while_loop(lambda i, y: i < steps, step, loop_vars, maximum_iterations=steps)[1]


def _solve_numpy(x, steps, start=0):
    h, y = 2.0 / max(steps, 1), np.zeros_like(x) + 0.5

    def rate(y):
        return np.concatenate([x[:1], x[1:] * y[:-1]])

    for _ in range(start, steps):
        y = y + h * rate(y + h / 2 * rate(y))
    return y


def _loops(function, *arguments):
    graph = function.get_concrete_function(*arguments).stages.final
    return sum(1 for node in graph.nodes if node.op == "while")


def _weighted_last(x):
    return tt.reduce_sum(_solve(x, 1) * tt.range(0.0, 12.0, dtype=tt.float64))


def test_a_loop_of_one_iteration_is_its_body_with_the_same_values_and_gradients():
    x = RNG.uniform(0.2, 1.0, size=12)

    def gradient_and_hessian(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                value = _weighted_last(x)
            grad = inner.gradient(value, x)
        return value, grad, outer.jacobian(grad, x)

    compiled = tt.function(gradient_and_hessian, backend="c")
    interpreted = tt.function(gradient_and_hessian, backend="interpreter")
    got = [t.numpy() for t in compiled(tt.constant(x))]
    wanted = [t.numpy() for t in interpreted(tt.constant(x))]
    weights = np.arange(12.0)

    def value(x):
        return float(np.sum(_solve_numpy(x, 1) * weights))

    eps, differences = 1e-6, np.empty(12)
    for k in range(12):
        step = np.zeros(12)
        step[k] = eps
        differences[k] = (value(x + step) - value(x - step)) / (2 * eps)
    np.testing.assert_allclose(got[0], value(x), rtol=1e-14)
    np.testing.assert_allclose(got[1], differences, rtol=1e-7, atol=1e-9)
    for a, b in zip(got, wanted):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    assert np.abs(got[2]).max() > 0  # the body is not linear in x: a Hessian of its own
    assert _loops(compiled, tt.constant(x)) == 0


@pytest.mark.parametrize(("steps", "start", "runs"), [(1, 1, 0), (2, 0, 2)])
def test_a_loop_that_may_not_run_exactly_once_stays_a_loop(steps, start, runs):
    x = RNG.uniform(0.2, 1.0, size=9)
    compiled = tt.function(lambda x: _solve(x, steps, start), backend="c")
    np.testing.assert_allclose(
        compiled(tt.constant(x)).numpy(), _solve_numpy(x, steps, start), rtol=1e-14
    )
    assert _loops(compiled, tt.constant(x)) == 1
    if runs == 0:  # zero iterations: the initial value
        np.testing.assert_array_equal(compiled(tt.constant(x)).numpy(), np.full(9, 0.5))


def test_a_condition_known_only_when_the_function_runs_keeps_the_loop():
    def once_if(x, flag):
        return tt.while_loop(lambda y: flag, lambda y: [y * 3.0], [x], maximum_iterations=1)[0]

    compiled = tt.function(once_if, backend="c")
    x = tt.constant([1.0, 2.0])
    np.testing.assert_array_equal(compiled(x, tt.constant(True)).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(compiled(x, tt.constant(False)).numpy(), [1.0, 2.0])
    assert _loops(compiled, x, tt.constant(True)) == 1


def test_effects_of_a_body_that_runs_once_happen_once_per_call(capsys):
    counter = tt.Variable(0.0, dtype=tt.float64)

    @tt.function(backend="c")
    def f(x):
        def body(i, y):
            tt.print("iteration", i)
            counter.assign_add(1.0)
            return i + 1, y * 2.0 + counter

        return tt.while_loop(lambda i, y: i < 1, body, (tt.constant(0), x), maximum_iterations=1)

    for call in (1, 2):
        _, y = f(tt.constant(3.0, dtype=tt.float64))
        assert float(y) == 6.0 + call and float(counter.numpy()) == call
    assert capsys.readouterr().err.count("iteration 0") == 2  # (tt.print: stderr)
    assert _loops(f, tt.constant(3.0, dtype=tt.float64)) == 0


def test_gather_at_a_known_position_is_a_slice_and_one_out_of_range_still_raises():
    params = RNG.normal(size=(3, 4, 5))

    def pick(params, k):
        return tt.gather(params, k, axis=1) * 2.0

    compiled = tt.function(lambda p: pick(p, 2), backend="c")
    np.testing.assert_array_equal(compiled(tt.constant(params)).numpy(), params[:, 2] * 2.0)
    graph = compiled.get_concrete_function(tt.constant(params)).stages["simplified"]
    assert not any(node.op == "gather" for node in graph.nodes)
    outside = tt.function(lambda p: pick(p, 4), backend="c")
    with pytest.raises(IndexError, match="out of range"):
        outside(tt.constant(params))
