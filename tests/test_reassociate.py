"""The regrouping pass (tracer/passes/reassociate.py): a product of a large tensor and
broadcast smaller factors multiplies the small factors first, where the inner product is
read by it alone and the factors' product is smaller; the values agree with numpy's to
rounding, in every backend."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(20261130)
BACKENDS = ["interpreter", "c"]


def products(function, *args, ops=("mul",)):
    """The shapes of the `ops` nodes (products) of `function`'s regrouped graph, sorted."""
    graph = tt.function(function, backend="interpreter").get_concrete_function(*args)
    return sorted(n.shape for n in graph.stages["reassociated"].nodes if n.op in ops)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_chain_of_broadcast_factors_multiplies_them_first(backend):
    c, t, w, v = rng.standard_normal((32, 16)), *rng.standard_normal((3, 16))

    def chain(c, t, w, v):
        return ((c * t) * w) * v  # as a gradient writes it: the cotangent first

    assert products(chain, c, t, w, v) == [(16,), (16,), (32, 16)]
    result = tt.function(chain, backend=backend)(c, t, w, v)
    np.testing.assert_allclose(result.numpy(), c * t * w * v, rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_jacobians_backward_step_through_tanh_scales_the_rows_once(backend):
    """The cotangent rows of a vectorized jacobian through `tanh(s * w)` are multiplied by
    (1 - t^2) * w, one vector per step; the jacobian is diag(w (1 - tanh(x w)^2))."""
    x, w = rng.standard_normal(24), rng.standard_normal(24)

    def jacobian(x, w):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.tanh(x * w)
        return tape.jacobian(y, x)

    shapes = products(jacobian, x, w, ops=("mul", "tanh_grad"))
    assert shapes.count((24, 24)) == 1  # the rows times one vector
    result = tt.function(jacobian, backend=backend)(x, w)
    np.testing.assert_allclose(result.numpy(), np.diag(w * (1 - np.tanh(x * w) ** 2)), atol=1e-15)


def test_an_inner_product_read_twice_stays():
    c, t, w = rng.standard_normal((8, 4)), *rng.standard_normal((2, 4))

    def shared(c, t, w):
        scaled = c * t
        return scaled * w + scaled

    assert products(shared, c, t, w) == [(8, 4), (8, 4)]
    result = tt.function(shared, backend="c")(c, t, w)
    np.testing.assert_allclose(result.numpy(), c * t * w + c * t, rtol=1e-15)


def test_factors_whose_product_is_full_size_stay():
    c, row, column = (
        rng.standard_normal((8, 4)),
        rng.standard_normal((1, 4)),
        rng.standard_normal((8, 1)),
    )

    def outer(c, row, column):
        return (c * row) * column

    assert products(outer, c, row, column) == [(8, 4), (8, 4)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gate", ["tanh", "sigmoid"])
def test_a_gates_gradient_times_a_small_factor_scales_the_rows_once(backend, gate):
    """`tanh_grad(y, g) * w` (g the cotangent rows, y and w vectors, as a jacobian's
    backward step through a loop of `tanh(s * w)` has them) is g * tanh_grad(y, w): one
    product at the rows' size; sigmoid's gradient alike."""
    from tracer.ops.core import apply
    from tracer.ops.math_ops import SIGMOID_GRAD, TANH_GRAD

    y, w = rng.uniform(-0.9, 0.9, (2, 24))
    g = rng.standard_normal((24, 24))
    op = {"tanh": TANH_GRAD, "sigmoid": SIGMOID_GRAD}[gate]

    def step(y, g, w):
        return apply(op, (y, g), {}) * w

    ops = ("mul", "tanh_grad", "sigmoid_grad")
    assert products(step, y, g, w, ops=ops) == [(24,), (24, 24)]
    slope = 1 - y * y if gate == "tanh" else y * (1 - y)
    result = tt.function(step, backend=backend)(y, g, w)
    np.testing.assert_allclose(result.numpy(), g * slope * w, rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_a_common_large_factor_comes_out_of_a_sum(backend, op):
    """`c * 0.1 + c * v` (c the rows, v a vector) is c * (0.1 + v): one product at the rows'
    size, the sum over the vector's; `-` alike, and in either order of each product."""
    c, v = rng.standard_normal((32, 16)), rng.standard_normal(16)
    combine = {"add": np.add, "sub": np.subtract}[op]

    def step(c, v):
        return _combined(op, c * 0.1, v * c)

    assert products(step, c, v) == [(32, 16)]
    assert products(step, c, v, ops=(op,)) == [(16,)]
    result = tt.function(step, backend=backend)(c, v)
    np.testing.assert_allclose(result.numpy(), combine(c * 0.1, v * c), rtol=1e-13)


def _combined(op, a, b):
    return a + b if op == "add" else a - b


@pytest.mark.parametrize("case", ["a product read twice", "full-size factors", "no common factor"])
def test_sums_of_products_that_would_not_gain_stay(case):
    c, d, v, w = (
        rng.standard_normal((8, 4)),
        rng.standard_normal((8, 4)),
        rng.standard_normal(4),
        rng.standard_normal(4),
    )

    def step(c, d, v, w):
        if case == "a product read twice":
            scaled = c * v
            return scaled + c * w, scaled
        if case == "full-size factors":
            return c * d + c * (d * 2.0)
        return c * v + d * w

    full = [n for n in products(step, c, d, v, w, ops=("add",)) if n == (8, 4)]
    assert full == [(8, 4)]  # the sum stays at full size
    for got, want in zip(
        tt.nest.flatten(tt.function(step, backend="c")(c, d, v, w)),
        tt.nest.flatten(step(c, d, v, w)),
    ):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14)
