"""tracer's GradBench `particle` tool: the four mode combinations agree, and the miss
distance the descent minimises agrees with numpy's Euler integration and its derivative
in w with finite differences."""

import numpy as np
import pytest

import tracer as tt
from benchmarks.gradbench.tracer_tool import particle
from benchmarks.gradbench.tracer_tool.saddle import grad_reverse


def _miss(w):
    charges = np.array([[10.0, 10.0 - w], [10.0, 0.0]])
    x, xdot = np.array([0.0, 8.0]), np.array([0.75, 0.0])
    while True:
        d = x - charges
        xddot = np.sum(d / np.linalg.norm(d, axis=1, keepdims=True) ** 3, axis=0)
        x_new = x + 0.1 * xdot
        if x_new[1] <= 0:
            break
        x, xdot = x_new, xdot + 0.1 * xddot
    return (x + (-x[1] / xdot[1]) * xdot)[0] ** 2


def test_miss_and_its_derivative():
    w = tt.constant(0.3, tt.float64)
    assert abs(float(particle._miss(grad_reverse, w)) - _miss(0.3)) < 1e-12
    slope = grad_reverse(lambda v: particle._miss(grad_reverse, v[0]), tt.reshape(w, [1]))
    fd = (_miss(0.3 + 1e-6) - _miss(0.3 - 1e-6)) / 2e-6
    assert abs(float(slope[0]) - fd) < 1e-6 * max(1.0, abs(fd))


@pytest.mark.parametrize("name", ["rr", "rf", "fr", "ff"])
def test_variants_agree(name):
    result, timings = getattr(particle, name)({"w": 0.0})
    assert len(timings) == 1
    reference, _ = particle.rr({"w": 0.0})
    assert abs(result - reference) < 1e-10
    # the descent ends near a w where the path (nearly) meets the origin
    assert _miss(result) < _miss(0.0)
