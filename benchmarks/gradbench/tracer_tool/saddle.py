"""GradBench's `saddle`: min over x of max over y of |x|² - |y|² (x, y in R²), by gradient
descent in which the outer descent differentiates through the inner one (nested AD).

Each descent is one `tt.while_loop` whose body takes a step, checks the stopping rules and
adapts the step size; the steps' branches are selects, so the loop differentiates like any
other op. The four functions differ in the mode of each derivative: the first letter is the
argmin's (and the final argmax's), the second the inner argmax's; `f` is forward mode (one
`ForwardAccumulator` per coordinate), `r` reverse mode (a `GradientTape`)."""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


def grad_reverse(f, x):
    """∇f(x) by one reverse pass."""
    # NOTE: a fresh tensor, so that `f` reading the same tensor `x` from its closure (the
    # descents all start at one point) does not count as a dependence on the argument.
    x = tt.identity(x)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


def grad_forward(f, x):
    """∇f(x) by one forward pass per coordinate of `x`."""
    x = tt.identity(x)  # as in grad_reverse
    n = x.shape[0]
    columns = []
    for i in range(n):
        with tt.autodiff.ForwardAccumulator(x, tt.one_hot(i, n, dtype=x.dtype)) as acc:
            y = f(x)
        columns.append(acc.jvp(y))
    return tt.stack(columns)


def argmin(grad, f, x):
    """Gradient descent from `x`: stop where the gradient or the step is below 1e-5; halve
    the step size after a step that does not decrease `f`, double it after ten that do."""

    def step(x, fx, gx, eta, i, go):
        small_gradient = tt.norm(gx) <= 1e-5
        widen = i == 10
        x_new = x - eta * gx
        small_step = tt.norm(x - x_new) <= 1e-5
        fx_new = f(x_new)
        better = fx_new < fx
        # The stopping rules are checked in order; the later cases apply only where the
        # earlier do not.
        stop = tt.logical_or(small_gradient, tt.logical_and(tt.logical_not(widen), small_step))
        move = tt.logical_and(tt.logical_not(tt.logical_or(stop, widen)), better)
        x = tt.where(move, x_new, x)
        fx = tt.where(move, fx_new, fx)
        gx = tt.where(move, grad(f, x_new), gx)
        eta = tt.where(stop, eta, tt.where(widen, 2.0 * eta, tt.where(better, eta, eta / 2.0)))
        i = tt.where(move, i + 1, tt.where(stop, i, tt.zeros_like(i)))
        return x, fx, gx, eta, i, tt.logical_not(stop)

    eta = tt.constant(1e-5, x.dtype)
    start = (x, f(x), grad(f, x), eta, tt.constant(0), tt.constant(True))
    return tt.while_loop(lambda *state: state[-1], step, start)[0]


def _objective(x, y):
    """The eval's f(x1, y1, x2, y2) = (x1² + y1²) - (x2² + y2²) at the points (x1, y1) = x
    and (x2, y2) = y."""
    return (x[0] * x[0] + x[1] * x[1]) - (y[0] * y[0] + y[1] * y[1])


def _saddle(outer, inner, start):
    """The argmin x of the inner maximum, and then the argmax y at that x."""

    def inner_max(x):
        y = argmin(inner, lambda y: -_objective(x, y), start)
        return _objective(x, y)

    x = argmin(outer, inner_max, start)
    y = argmin(outer, lambda y: -_objective(x, y), start)
    return tt.concat([x, y], 0)


@tt.function
def _ff(start):
    return _saddle(grad_forward, grad_forward, start)


@tt.function
def _fr(start):
    return _saddle(grad_forward, grad_reverse, start)


@tt.function
def _rf(start):
    return _saddle(grad_reverse, grad_forward, start)


@tt.function
def _rr(start):
    return _saddle(grad_reverse, grad_reverse, start)


def _run(compiled, input):
    start = tt.constant(np.asarray(input["start"], dtype=np.float64))
    result, timings = repeated(input, lambda: compiled(start))
    return result.numpy().tolist(), timings


def ff(input):
    return _run(_ff, input)


def fr(input):
    return _run(_fr, input)


def rf(input):
    return _run(_rf, input)


def rr(input):
    return _run(_rr, input)
