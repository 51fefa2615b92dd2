"""Gradient checking along random directions, to any order (after HIPS autograd's test_util).

For f: inputs -> output, with a fixed random cotangent w, L(x) = sum(f(x) * w). First order:
<grad L(x), v> against the central difference (L(x + eps v) - L(x - eps v)) / 2 eps for a
random direction v. Second order: the same check applied to x -> <grad L(x), v>, whose
gradient the nested tapes compute.
"""

import numpy as np

import tracer as tt

# step and tolerances by the arguments' dtype: float64 checks tightly, float32 loosely
SETTINGS = {
    np.dtype(np.float64): {"eps": 1e-6, "rtol": 1e-6, "atol": 1e-8},
    np.dtype(np.float32): {"eps": 1e-2, "rtol": 2e-2, "atol": 1e-3},
}


def _settings(args):
    return SETTINGS[np.result_type(*args)]


def _shifted(args, direction, step):
    return [
        tt.constant(np.asarray(a + step * d, dtype=np.asarray(a).dtype))
        for a, d in zip(args, direction)
    ]


def _directional(function, xs, direction):
    """<grad function(xs), direction>, with the gradient taken on a tape; and the gradient."""
    xs = [tt.constant(x, dtype=np.asarray(x).dtype) for x in xs]
    with tt.GradientTape() as tape:
        tape.watch(xs)
        value = function(*xs)
    grads = tape.gradient(value, xs)
    total = sum(
        0.0 if g is None else float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, direction)
    )
    return total, grads


def _scalarize(f, cotangent):
    return lambda *xs: tt.reduce_sum(f(*xs) * cotangent)


def check_first_order(f, args, seed=0):
    eps, rtol, atol = _settings(args).values()
    rng = np.random.default_rng(seed)
    out = np.asarray(f(*[tt.constant(a, dtype=np.asarray(a).dtype) for a in args]))
    loss = _scalarize(f, tt.constant(rng.standard_normal(out.shape).astype(out.dtype)))
    direction = [rng.standard_normal(np.shape(a)) for a in args]
    analytic, _ = _directional(loss, args, direction)
    plus = float(loss(*_shifted(args, direction, eps)))
    minus = float(loss(*_shifted(args, direction, -eps)))
    numeric = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol, err_msg="first order")


def check_second_order(f, args, seed=1):
    """Check d/dx <grad L(x), v> (computed by nested tapes) against differences of <grad L, v>."""
    eps, rtol, atol = _settings(args).values()
    rtol, atol = rtol * 10, atol * 10
    rng = np.random.default_rng(seed)
    out = np.asarray(f(*[tt.constant(a, dtype=np.asarray(a).dtype) for a in args]))
    loss = _scalarize(f, tt.constant(rng.standard_normal(out.shape).astype(out.dtype)))
    v = [rng.standard_normal(np.shape(a)) for a in args]
    u = [rng.standard_normal(np.shape(a)) for a in args]

    def grad_along_v(*xs):
        with tt.GradientTape() as inner:
            inner.watch(list(xs))
            value = loss(*xs)
        grads = inner.gradient(value, list(xs))
        terms = [
            tt.reduce_sum(tt.cast(g, tt.float64) * d) for g, d in zip(grads, v) if g is not None
        ]
        return tt.add_n(terms) if terms else tt.constant(0.0, dtype=tt.float64)

    analytic, _ = _directional(grad_along_v, args, u)
    plus = float(grad_along_v(*_shifted(args, u, eps)))
    minus = float(grad_along_v(*_shifted(args, u, -eps)))
    numeric = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol, err_msg="second order")
