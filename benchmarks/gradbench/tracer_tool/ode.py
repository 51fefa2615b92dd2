"""GradBench's `ode`: the chain ODE y0' = x0, yi' = xi y(i-1) from y(0) = 0 to t = 2 by `s`
classic fourth-order Runge-Kutta steps, and the gradient of its last component.

The steps are one `tt.while_loop`, so the compiled code holds one step whatever `s` is; the
gradient is reverse mode (one output, `n` inputs)."""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


def _rate(x, y):
    """The right-hand side: each component grows with its own `x` times the previous `y`."""
    return tt.concat([x[:1], x[1:] * y[:-1]], 0)


def _solve(x, s):
    """y(2), by `s` Runge-Kutta steps of equal size."""
    h = 2.0 / s

    def step(i, y):
        k1 = _rate(x, y)
        k2 = _rate(x, y + h / 2 * k1)
        k3 = _rate(x, y + h / 2 * k2)
        k4 = _rate(x, y + h * k3)
        return i + 1, y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    start = (tt.constant(0), tt.zeros_like(x))
    _, y = tt.while_loop(lambda i, y: i < s, step, start, maximum_iterations=s)
    return y


@tt.function
def _primal(x, s):
    return _solve(x, s)


@tt.function
def _gradient(x, s):
    with tt.GradientTape() as tape:
        tape.watch(x)
        last = _solve(x, s)[-1]
    return tape.gradient(last, x)


def _arguments(input):
    return tt.constant(np.asarray(input["x"], dtype=np.float64)), int(input["s"])


def primal(input):
    x, s = _arguments(input)
    result, timings = repeated(input, lambda: _primal(x, s))
    return result.numpy().tolist(), timings


def gradient(input):
    x, s = _arguments(input)
    result, timings = repeated(input, lambda: _gradient(x, s))
    return result.numpy().tolist(), timings
