"""tracer's GradBench `saddle` tool: the four mode combinations agree with each other and
with the same descent written in numpy with exact gradients; the derivative helpers agree
with finite differences."""

import numpy as np
import pytest

import tracer as tt
from benchmarks.gradbench.tracer_tool import saddle


def _argmin(grad, f, x):
    fx, gx, eta, i = f(x), grad(x), 1e-5, 0
    while np.linalg.norm(gx) > 1e-5:
        if i == 10:
            eta, i = 2 * eta, 0
            continue
        x_new = x - eta * gx
        if np.linalg.norm(x - x_new) <= 1e-5:
            break
        fx_new = f(x_new)
        if fx_new < fx:
            x, fx, gx, i = x_new, fx_new, grad(x_new), i + 1
        else:
            eta, i = eta / 2, 0
    return x


def _expected(start):
    # The inner maximum over y does not depend on x, so the outer gradient is 2x.
    inner = _argmin(lambda y: 2 * y, lambda y: y @ y, start)
    x = _argmin(lambda x: 2 * x, lambda x: x @ x - inner @ inner, start)
    y = _argmin(lambda y: 2 * y, lambda y: y @ y - x @ x, start)
    return np.concatenate([x, y])


@pytest.mark.parametrize("name", ["rr", "rf", "fr", "ff"])
def test_variants_match_numpy_descent(name):
    result, timings = getattr(saddle, name)({"start": [1.0, 1.0]})
    assert len(timings) == 1
    np.testing.assert_allclose(result, _expected(np.array([1.0, 1.0])), rtol=1e-9, atol=1e-15)


def test_gradients_match_finite_differences():
    def f(x):
        return tt.sin(x[0]) * x[1] * x[1]

    x = np.array([0.3, -1.2])
    eps = 1e-6
    fd = [
        (f(tt.constant(x + e)).numpy() - f(tt.constant(x - e)).numpy()) / (2 * eps)
        for e in np.eye(2) * eps
    ]
    for grad in (saddle.grad_reverse, saddle.grad_forward):
        np.testing.assert_allclose(grad(f, tt.constant(x)).numpy(), fd, rtol=1e-8)
