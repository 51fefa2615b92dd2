"""GradBench's `llsq`: a linear least-squares objective and its gradient.

    y(x) = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2,   t_i = -1 + 2i/(n-1),   s_i = sign(t_i)

The sample points are built inside the compiled function from `n`, a Python int (tracer
cannot yet make a tensor whose length is a traced value, so each `n` is traced once, as
jax.jit's static arguments are).
"""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


def objective(x, n):
    """y(x) for the `n` sample points, vectorised as the residuals s - V x of the
    Vandermonde matrix V[i, j] = t_i^j, whose rows are running products of t_i."""
    # 2i - (n - 1) is an exact integer, so the middle point of an odd n is exactly 0.
    t = (tt.range(n, dtype=tt.float64) * 2.0 - (n - 1)) / (n - 1)
    columns = tt.ones_like(x)[None, :] * t[:, None]
    vandermonde = tt.math.cumprod(columns, axis=1, exclusive=True)
    residual = tt.sign(t) - tt.linalg.matvec(vandermonde, x)
    return 0.5 * tt.reduce_sum(residual * residual)


@tt.function
def _primal(x, n):
    return objective(x, n)


@tt.function
def _gradient(x, n):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = objective(x, n)
    return tape.gradient(y, x)


def _arguments(input):
    return tt.constant(np.asarray(input["x"], dtype=np.float64)), int(input["n"])


def primal(input):
    x, n = _arguments(input)
    result, timings = repeated(input, lambda: _primal(x, n))
    return float(result), timings


def gradient(input):
    x, n = _arguments(input)
    result, timings = repeated(input, lambda: _gradient(x, n))
    return result.numpy().tolist(), timings
