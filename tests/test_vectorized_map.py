"""tt.vectorized_map: equal to stacking the function's results over the elements, eagerly
and compiled, with gradients through it and per-example gradients inside it."""

import io

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]
rng = np.random.default_rng(11)


def looped(fn, elems):
    return tt.stack([fn(e) for e in elems])


FUNCTIONS = {
    "sum of squares": lambda r: tt.reduce_sum(r * r),
    "softmax": lambda r: tt.nn.softmax(r * 2.0),
    "outer product": lambda r: tt.matmul(r[:, None], r[None, :]),
    "constant result": lambda r: tt.constant([1.0, 2.0], tt.float64),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_equals_the_loop_eagerly_and_compiled(name):
    fn = FUNCTIONS[name]
    elems = tt.constant(rng.standard_normal((5, 3)))
    want = looped(fn, elems).numpy()
    np.testing.assert_allclose(tt.vectorized_map(fn, elems).numpy(), want, rtol=1e-14)
    for backend in BACKENDS:
        run = tt.function(lambda e: tt.vectorized_map(fn, e), backend=backend)
        np.testing.assert_allclose(run(elems).numpy(), want, rtol=1e-14)


def test_nested_elements_and_results():
    xs, ys = tt.constant(rng.standard_normal((4, 2))), tt.constant(rng.standard_normal((4,)))
    out = tt.vectorized_map(
        lambda e: {"scaled": e[0] * e[1], "norm": tt.reduce_sum(e[0] ** 2)}, (xs, ys)
    )
    np.testing.assert_allclose(out["scaled"].numpy(), xs.numpy() * ys.numpy()[:, None])
    np.testing.assert_allclose(out["norm"].numpy(), np.sum(xs.numpy() ** 2, axis=1))


def test_gradients_flow_through_it_to_elements_and_variables():
    w = tt.Variable(rng.standard_normal((3, 2)))
    xs = tt.constant(rng.standard_normal((4, 3)))

    def loss(xs, mapped):
        rows = (
            tt.vectorized_map(lambda r: tt.tanh(tt.matmul(r[None, :], w))[0], xs)
            if mapped
            else tt.tanh(tt.matmul(xs, w))
        )
        return tt.reduce_sum(rows * rows)

    def grads(xs, mapped=True):
        with tt.GradientTape() as tape:
            tape.watch(xs)
            y = loss(xs, mapped)
        return tape.gradient(y, [xs, w])

    want = grads(xs, mapped=False)
    for run in [grads] + [tt.function(grads, backend=b) for b in BACKENDS]:
        for got, expected in zip(run(xs), want):
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-13)


def test_per_example_gradients():
    w = tt.Variable(rng.standard_normal((3, 2)))
    xs = tt.constant(rng.standard_normal((6, 3)))

    def example_gradient(x):
        with tt.GradientTape() as tape:
            y = tt.reduce_sum(tt.sin(tt.matmul(x[None, :], w)))
        return tape.gradient(y, w)

    want = looped(example_gradient, xs).numpy()
    np.testing.assert_allclose(tt.vectorized_map(example_gradient, xs).numpy(), want, rtol=1e-13)
    compiled = tt.function(lambda xs: tt.vectorized_map(example_gradient, xs))
    np.testing.assert_allclose(compiled(xs).numpy(), want, rtol=1e-13)


def test_an_op_without_a_batching_rule_falls_back_to_a_loop():
    @tt.custom_gradient
    def fn(x):  # a custom gradient has no batching rule (its gradient is the user's Python)
        return x * x * x, lambda upstream: upstream * 3.0 * x * x

    elems = tt.constant([1.0, 2.0, 3.0])
    np.testing.assert_allclose(tt.vectorized_map(fn, elems).numpy(), [1.0, 8.0, 27.0])
    compiled = tt.function(lambda e: tt.vectorized_map(fn, e))
    np.testing.assert_allclose(compiled(elems).numpy(), [1.0, 8.0, 27.0])
    with pytest.raises(Exception, match="custom_gradient|gradient function"):
        tt.function(lambda e: tt.vectorized_map(fn, e, fallback_to_while_loop=False))(elems)


def test_elements_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="same first dimension"):
        tt.vectorized_map(lambda e: e[0], (tt.ones(3), tt.ones(4)))


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_a_function_that_prints_or_assigns_runs_once_per_element_in_order(backend):
    out, total = io.StringIO(), tt.Variable(0.0, dtype=tt.float64)

    def f(row):
        tt.print("row", row, output_stream=out)
        total.assign_add(tt.reduce_sum(row))
        return row * 2.0

    x = np.arange(6.0).reshape(3, 2)
    y = tt.function(lambda x: tt.vectorized_map(f, x), backend=backend)(tt.constant(x))
    np.testing.assert_array_equal(y.numpy(), x * 2.0)
    assert out.getvalue() == "row [0 1]\nrow [2 3]\nrow [4 5]\n"
    assert float(total.numpy()) == 15.0


def test_forward_mode_reaches_what_the_function_reads_from_outside_eagerly_too():
    """Eagerly, a value the function reads from outside is a constant of its traced graph:
    under a ForwardAccumulator, tt.vectorized_map runs its loop, whose ops carry tangents."""
    x = tt.constant([0.3, 0.5], dtype=tt.float64)
    v = tt.constant([1.0, 0.5], dtype=tt.float64)

    def f(x, v):
        with tt.autodiff.ForwardAccumulator(x, v) as accumulator:
            rows = tt.vectorized_map(lambda e: e * tt.reduce_sum(x), x * 2.0)
            total = tt.reduce_sum(rows)  # 2 sum(x)^2
        return accumulator.jvp(total)

    want = 4.0 * float(np.sum(x.numpy())) * float(np.sum(v.numpy()))
    assert abs(float(f(x, v)) - want) < 1e-12
    assert abs(float(tt.function(f)(x, v)) - want) < 1e-12
