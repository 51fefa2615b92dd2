"""tracer's GradBench `det` tool: the determinant by minors and its gradient, against numpy's
determinant and adjugate, and finite differences."""

import numpy as np
import pytest

from benchmarks.gradbench.tracer_tool import det


def _input(a):
    return {"A": a.reshape(-1).tolist(), "ell": a.shape[0]}


@pytest.mark.parametrize("ell", [1, 2, 4, 6])
def test_primal_and_gradient_match_numpy(ell):
    a = np.random.default_rng(ell).random((ell, ell))
    value, timings = det.primal(_input(a))
    gradient, _ = det.gradient(_input(a))
    assert len(timings) == 1
    np.testing.assert_allclose(value, np.linalg.det(a), rtol=1e-12, atol=1e-14)
    adjugate = np.linalg.det(a) * np.linalg.inv(a).T
    np.testing.assert_allclose(gradient, adjugate.reshape(-1), rtol=1e-10, atol=1e-14)


def test_gradient_matches_finite_differences():
    a = np.random.default_rng(0).random((5, 5))
    gradient, _ = det.gradient(_input(a))
    eps = 1e-6
    for k in (0, 7, 24):
        step = np.zeros(25)
        step[k] = eps
        up, _ = det.primal(_input(a + step.reshape(5, 5)))
        down, _ = det.primal(_input(a - step.reshape(5, 5)))
        assert abs((up - down) / (2 * eps) - gradient[k]) < 1e-7
