"""tracer's GradBench `ode` tool: Runge-Kutta's solution and the gradient of its last
component, against a numpy solver and finite differences."""

import numpy as np

from benchmarks.gradbench.tracer_tool import ode


def _solve(x, s):
    def rate(y):
        return np.concatenate([x[:1], x[1:] * y[:-1]])

    h, y = 2.0 / s, np.zeros_like(x)
    for _ in range(s):
        k1 = rate(y)
        k2 = rate(y + h / 2 * k1)
        k3 = rate(y + h / 2 * k2)
        k4 = rate(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def test_primal_matches_numpy():
    x = np.random.default_rng(0).random(8)
    for s in (1, 3):
        y, timings = ode.primal({"x": x.tolist(), "s": s, "min_runs": 2})
        assert len(timings) == 2
        np.testing.assert_allclose(y, _solve(x, s), rtol=1e-13)


def test_gradient_matches_finite_differences():
    x = np.random.default_rng(1).random(6) + 0.5
    gradient, _ = ode.gradient({"x": x.tolist(), "s": 4})
    eps = 1e-6
    for k in range(6):
        step = np.zeros(6)
        step[k] = eps
        fd = (_solve(x + step, 4)[-1] - _solve(x - step, 4)[-1]) / (2 * eps)
        assert abs(fd - gradient[k]) < 1e-8 * max(1.0, abs(fd))
