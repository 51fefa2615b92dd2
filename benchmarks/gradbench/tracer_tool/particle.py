"""GradBench's `particle`: the control `w` that steers a charged particle, pushed by two
charges at (10, 10 - w) and (10, 0), through the origin; gradient descent on w whose
objective integrates the motion by Euler steps, each taking the gradient of the potential
(nested AD).

The Euler integration is one `tt.while_loop` that runs until the particle would cross the
x axis; the descent is `saddle.argmin`'s. The first letter of each function is the mode of
the descent's derivative, the second that of the potential's gradient (`f` forward, `r`
reverse)."""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated
from benchmarks.gradbench.tracer_tool.saddle import argmin, grad_forward, grad_reverse

_DT = 0.1


def _miss(grad, w):
    """The square of the x coordinate where the particle's path, integrated by Euler steps
    of 0.1 and interpolated linearly over the last one, meets the x axis."""
    charges = tt.stack(
        [tt.stack([tt.constant(10.0, w.dtype), 10.0 - w]), tt.constant([10.0, 0.0], w.dtype)]
    )

    def potential(x):
        return tt.reduce_sum(1.0 / tt.norm(x - charges, axis=1))

    def step(x, xdot, go):
        xddot = -grad(potential, x)
        x_new = x + _DT * xdot
        go = x_new[1] > 0.0
        return tt.where(go, x_new, x), tt.where(go, xdot + _DT * xddot, xdot), go

    start = (tt.constant([0.0, 8.0], w.dtype), tt.constant([0.75, 0.0], w.dtype), tt.constant(True))
    x, xdot, _ = tt.while_loop(lambda x, xdot, go: go, step, start)
    x_final = x + (-x[1] / xdot[1]) * xdot
    return x_final[0] * x_final[0]


def _particle(outer, inner, w0):
    return argmin(outer, lambda w: _miss(inner, w[0]), tt.reshape(w0, [1]))[0]


@tt.function
def _ff(w0):
    return _particle(grad_forward, grad_forward, w0)


@tt.function
def _fr(w0):
    return _particle(grad_forward, grad_reverse, w0)


@tt.function
def _rf(w0):
    return _particle(grad_reverse, grad_forward, w0)


@tt.function
def _rr(w0):
    return _particle(grad_reverse, grad_reverse, w0)


def _run(compiled, input):
    w0 = tt.constant(np.float64(input["w"]))
    result, timings = repeated(input, lambda: compiled(w0))
    return float(result), timings


def ff(input):
    return _run(_ff, input)


def fr(input):
    return _run(_fr, input)


def rf(input):
    return _run(_rf, input)


def rr(input):
    return _run(_rr, input)
