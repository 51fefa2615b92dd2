"""Random small programs, each run eagerly, on the interpreter and in C: the values and the
first and second derivatives must agree, and match finite differences in float64.

Programs are chains of ops drawn from a table (elementwise, broadcasting binary ops,
reductions, shape ops, products) over inputs of random shapes (size-0 and size-1 axes,
broadcasting) in float64, float32 or float16, holding NaN, Inf and signed zeros at times.
The normal run tries a fixed set of examples (derandomized, so CI is repeatable);
`TRACER_FUZZ_EXAMPLES=2000 python3 -m pytest tests/test_fuzz.py` runs a longer, random search.
"""

import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is in the test extra")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tracer as tt  # noqa: E402
from tests.gradcheck import check_first_order, check_second_order  # noqa: E402

EXAMPLES = int(os.environ.get("TRACER_FUZZ_EXAMPLES", "30"))
LONG_RUN = "TRACER_FUZZ_EXAMPLES" in os.environ

# name -> (function of one tensor, smooth everywhere on finite inputs)
UNARY = {
    "sin": (tt.sin, True),
    "tanh": (tt.tanh, True),
    "sigmoid": (tt.sigmoid, True),
    "exp_bounded": (lambda x: tt.exp(tt.tanh(x)), True),
    "log_safe": (lambda x: tt.log(x * x + 1.0), True),
    "sqrt_safe": (lambda x: tt.sqrt(x * x + 1.0), True),
    "square": (tt.square, True),
    "negative": (tt.negative, True),
    "softplus": (tt.nn.softplus, True),
    "relu": (tt.nn.relu, False),
    "abs": (tt.abs, False),
    "sum_last": (lambda x: tt.reduce_sum(x, axis=-1, keepdims=True) if x.ndim else x, True),
    "mean_all": (lambda x: tt.reduce_mean(x) + x, True),
    "max_first": (lambda x: tt.reduce_max(x, axis=0) if x.ndim and x.shape[0] else x, False),
    "transpose": (lambda x: tt.transpose(x), True),
    "flatten": (lambda x: tt.reshape(x, [-1]), True),
    "every_other": (lambda x: x[::2] if x.ndim else x, True),
    "concat_self": (lambda x: tt.concat([x, x * 2.0], axis=0) if x.ndim else x, True),
    "expand": (lambda x: tt.expand_dims(x, 0), True),
    "softmax": (lambda x: tt.nn.softmax(x) if x.ndim else x, True),
    "gather_rows": (
        lambda x: tt.gather(x, [0, 0, 1][: x.shape[0]]) if x.ndim and x.shape[0] else x,
        True,
    ),
    "gram": (lambda x: tt.matmul(x, x, transpose_b=True) if x.ndim >= 2 else x, True),
    "cumsum": (lambda x: tt.math.cumsum(x, axis=-1, reverse=True) if x.ndim else x, True),
    "cumprod": (lambda x: tt.math.cumprod(x, axis=0, exclusive=True) if x.ndim else x, True),
    "reverse": (lambda x: tt.reverse(x, [0]) if x.ndim else x, True),
    "pad": (lambda x: tt.pad(x, [[1, 2]] + [[0, 0]] * (x.ndim - 1)) if x.ndim else x, True),
    "sort": (lambda x: tt.sort(x) if x.ndim else x, False),
    "clip": (lambda x: tt.clip_by_value(x, -1.0, 1.0), False),
    "segment_sum": (
        lambda x: (
            tt.math.unsorted_segment_sum(
                x, tt.constant([i % 2 for i in range(x.shape[0])], tt.int32), 2
            )
            if x.ndim
            else x
        ),
        True,
    ),
    "outer_einsum": (lambda x: tt.einsum("...i,...j->...ij", x, x) if x.ndim else x, True),
}
# name -> (function of two tensors that broadcast, smooth everywhere on finite inputs)
BINARY = {
    "add": (tt.add, True),
    "subtract": (tt.subtract, True),
    "multiply": (tt.multiply, True),
    "divide_safe": (lambda a, b: a / (b * b + 1.0), True),
    "maximum": (tt.maximum, False),
    "minimum": (tt.minimum, False),
    "where": (lambda a, b: tt.where(a > b, a * b, a - b), False),
}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0]
TOLERANCE = {np.float64: 1e-9, np.float32: 2e-4, np.float16: 2e-2}


@st.composite
def programs(draw):
    """(function, input arrays, whether finite differences apply)."""
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32, np.float16]))
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=rank, max_size=rank)))
    if 0 in shape and draw(st.booleans()):  # size-0 axes now and then, not most of the time
        shape = tuple(d or 2 for d in shape)
    other = tuple(d if draw(st.booleans()) else 1 for d in shape)[draw(st.integers(0, rank)) :]
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, s).astype(dtype) for s in (shape, other)]
    special = draw(st.booleans()) and draw(st.booleans())
    if special:
        for array in inputs:
            if array.size:
                array.flat[rng.integers(0, array.size)] = draw(st.sampled_from(SPECIAL))
    steps = draw(st.lists(st.sampled_from(sorted(UNARY) + sorted(BINARY)), min_size=1, max_size=5))

    def program(a, b):
        x = a
        for name in steps:
            if name in BINARY:
                if _broadcasts(x.shape, b.shape):
                    x = BINARY[name][0](x, b)
            else:
                x = UNARY[name][0](x)
        return x

    smooth = all((UNARY.get(n) or BINARY.get(n))[1] for n in steps)
    return program, inputs, steps, smooth and not special and dtype == np.float64


def _broadcasts(*shapes):
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


def derivatives(function):
    """f, the gradient of <f, w> and the gradient of <that gradient, v>, for fixed w, v."""

    def run(a, b):
        with tt.GradientTape(persistent=True) as outer:
            outer.watch([a, b])
            with tt.GradientTape() as inner:
                inner.watch([a, b])
                value = function(a, b)
                loss = tt.reduce_sum(value * _fixed(value.shape, 1, value.dtype))
            grads = inner.gradient(loss, [a, b], unconnected_gradients="zero")
            along = tt.add_n(
                [
                    tt.reduce_sum(tt.cast(g, tt.float64) * _fixed(g.shape, 2, tt.float64))
                    for g in grads
                ]
            )
        second = outer.gradient(along, [a, b], unconnected_gradients="zero")
        return [value, *grads, *second]

    return run


def _fixed(shape, seed, dtype):
    values = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
    return tt.constant(values.astype(tt.as_dtype(dtype).as_numpy_dtype))


def _agree(got, want, dtype, what):
    tolerance = TOLERANCE[dtype]
    for index, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        assert g.shape == w.shape, (what, index)
        np.testing.assert_allclose(
            g, w, rtol=tolerance, atol=tolerance, equal_nan=True, err_msg=f"{what}, result {index}"
        )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not LONG_RUN,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
@given(programs())
def test_random_programs_agree_in_every_backend_to_second_order(case):
    program, inputs, steps, finite_differences = case
    dtype = inputs[0].dtype.type
    tensors = [tt.constant(a) for a in inputs]
    run = derivatives(program)
    with np.errstate(all="ignore"):
        eager = run(*tensors)
        interpreted = tt.function(run, backend="interpreter")(*tensors)
        compiled = tt.function(run, backend="c")(*tensors)
    _agree(interpreted, eager, dtype, f"interpreter vs eager for {steps}")
    _agree(compiled, eager, dtype, f"C vs eager for {steps}")
    if finite_differences and all(a.size for a in inputs):
        check_first_order(program, inputs)
        check_second_order(program, inputs)
