"""tracer's GradBench `llsq` tool: the least-squares objective against a numpy loop over
the sample points, its gradient against central differences, and the exact zero sample
point of an odd `n`."""

import numpy as np

from benchmarks.gradbench.tracer_tool import llsq


def _objective(x, n):
    total = 0.0
    for i in range(n):
        t = -1 + i * 2 / (n - 1)
        residual = np.sign(t) - sum(xj * t**j for j, xj in enumerate(x))
        total += residual * residual
    return total / 2


def test_primal_matches_a_loop_over_the_points():
    x, n = np.random.default_rng(0).random(4), 7  # t = 0 exactly at i = 3, where sign is 0
    value, timings = llsq.primal({"x": x.tolist(), "n": n})
    assert isinstance(value, float) and len(timings) == 1
    np.testing.assert_allclose(value, _objective(x, n), rtol=1e-12)


def test_gradient_matches_central_differences():
    x, n = np.random.default_rng(1).random(5), 9
    gradient, _ = llsq.gradient({"x": x.tolist(), "n": n, "min_runs": 2})
    assert isinstance(gradient, list) and len(gradient) == 5
    h = 1e-6
    expected = [(_objective(x + h * e, n) - _objective(x - h * e, n)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
