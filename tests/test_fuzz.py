"""Random small programs, each run eagerly, on the interpreter and in C: the values and the
first and second derivatives must agree, and match finite differences in float64.

Programs are chains of steps drawn from tables that together cover the op catalogue:
elementwise ops, broadcasting binary ops, reductions, shape ops and products (`UNARY`,
`BINARY`); control flow (tt.cond, tt.switch_case, tt.while_loop, and autograph's `if` and
`for`); linear algebra (`tt.linalg`, on well-conditioned matrices built from the data);
scatter, gather and segment reductions; convolution and pooling; complex arithmetic, custom
gradients, recompute_grad and a nested tt.function (test_the_steps_reach_every_primitive
checks that their programs hold every primitive but those NOT_DRAWN explains). Elementwise
primitives of one or two floating inputs also get a step each read from the catalogue
(tests/fuzz_catalogue.py): a new one is drawn with no edit here. Inputs have random shapes
(size-0 and size-1 axes, broadcasting) in float64, float32 or float16, holding NaN, Inf and
signed zeros at times. Every step is valid for any input: a step that does not apply to a shape leaves its
input as it is. A step is marked smooth when it is differentiable to second order at every
finite input; finite differences check only programs of smooth steps in float64.

Not drawn: bincount (integer counts, no gradient); convolutions of zero channels and VALID
windows larger than the input (errors here; TensorFlow too refuses the first, and gives an
empty result for the second).

Autograph's loops have a fuzzer of their own: random Python functions of `while` and `for`
loops (over tt.range of an int or of a tensor, over rows), nested, with `break` and
`continue` under tensor `if`s (tests/fuzz_loops.py), whose values and gradients must agree
run as Python, on the interpreter and in C, and match finite differences (loops without a
maximum_iterations included). The CLI's `--args` parser is fuzzed
too: specs written from a grammar parse to the specs they were written from, and corrupted
ones raise its one-line error.

The normal run tries a fixed set of examples (derandomized, so CI is repeatable): one test
draws from every table, and one per family makes sure each program holds a step of that
family. `TRACER_FUZZ_EXAMPLES=2000 python3 -m pytest tests/test_fuzz.py` runs a longer,
random search (that many examples per test).
"""

import argparse
import collections
import os
import re

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is in the test extra")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tracer as tt  # noqa: E402
from tests import fuzz_catalogue, fuzz_loops  # noqa: E402
from tests.catalogue import bitwise as bitwise_cases  # noqa: E402
from tests.catalogue import signal as signal_cases  # noqa: E402
from tests.catalogue import strings as string_cases  # noqa: E402
from tests.gradcheck import check_first_order, check_second_order  # noqa: E402
from tracer.cli import parse_specs  # noqa: E402
from tracer.concrete import GRAD, TRACED  # noqa: E402
from tracer.ops.registry import OPS  # noqa: E402

EXAMPLES = int(os.environ.get("TRACER_FUZZ_EXAMPLES", "20"))
FAMILY_EXAMPLES = int(os.environ.get("TRACER_FUZZ_EXAMPLES", "12"))  # per family, in CI's time
LONG_RUN = "TRACER_FUZZ_EXAMPLES" in os.environ


@tt.custom_gradient
def _clipped_square(x):
    """x^2 whose gradient is clipped to [-1, 1] times the cotangent's: a custom gradient
    written with tracer ops, so it differentiates again (not x^2's: no finite differences)."""

    def grad(upstream):
        return upstream * tt.clip_by_value(2.0 * x, -1.0, 1.0)

    return x * x, grad


def _sparse_cross_entropy(x):
    """The softmax cross-entropy of each row of the last axis against labels 0, 1, 2, ..."""
    if not x.ndim or not x.shape[-1]:
        return x
    labels = np.arange(int(np.prod(x.shape[:-1]))).reshape(x.shape[:-1]) % x.shape[-1]
    return tt.nn.sparse_softmax_cross_entropy_with_logits(labels.astype(np.int32), x)


# a tt.function called inside the one the test traces: one `call` node
_nested = tt.function(lambda x: tt.sin(x) * 2.0 + x)


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
    "sparse_cross_entropy": (lambda x: _sparse_cross_entropy(x), True),
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
    "identity": (tt.identity, True),
    "erf": (tt.math.erf, True),
    "log1p_safe": (lambda x: tt.math.log1p(x * x), True),
    "rsqrt_safe": (lambda x: tt.math.rsqrt(x * x + 1.0), True),
    "pow_safe": (lambda x: tt.pow(x * x + 1.0, 1.5), True),
    "tan_bounded": (lambda x: tt.tan(tt.tanh(x)), True),
    "softsign": (tt.math.softsign, False),
    "tile": (lambda x: tt.tile(x, [2] + [1] * (x.ndim - 1)) if x.ndim else x, True),
    "min_last": (lambda x: tt.reduce_min(x, axis=-1) if x.ndim and x.shape[-1] else x, False),
    "prod_first": (lambda x: tt.reduce_prod(x, axis=0) if x.ndim else x, True),
    "floormod": (lambda x: tt.math.floormod(x, 0.75), False),
    "floordiv": (lambda x: x + tt.math.floordiv(x, 0.5), False),
    # the row of each column's largest and smallest element picks it: ints, no gradient
    "argmax_argmin": (
        lambda x: (
            tt.gather(x, tt.argmax(x, axis=0)) + tt.gather(x, tt.math.argmin(x, axis=0))
            if x.ndim == 2 and x.shape[0]
            else x
        ),
        False,
    ),
    # |z|^2 + Im(z)^3 of z = x + i sin(x), through complex arithmetic
    "complex_square": (
        lambda x: (
            tt.math.real(tt.complex(x, tt.sin(x)) * tt.math.conj(tt.complex(x, tt.sin(x))))
            + tt.math.imag(tt.complex(x, tt.sin(x))) ** 3
            if x.dtype != tt.float16  # TensorFlow has no complex of float16
            else x
        ),
        True,
    ),
    "stateless_noise": (
        lambda x: x + tt.random.stateless_uniform(x.shape, [3, 7], dtype=x.dtype),
        True,
    ),
    "recompute_grad": (tt.recompute_grad(lambda x: tt.sin(x) * tt.tanh(x)), True),
    "custom_gradient": (_clipped_square, False),
    "nested_function": (_nested, True),
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
    "where_logical": (
        lambda a, b: tt.where(
            tt.logical_or(tt.logical_not(a > b), tt.not_equal(a, 1.0)), a + b, a * b
        ),
        False,
    ),
}
# and one step per elementwise primitive of one or two floating inputs, from the catalogue
CATALOGUE_UNARY, CATALOGUE_BINARY = fuzz_catalogue.steps(1), fuzz_catalogue.steps(2)
UNARY.update(CATALOGUE_UNARY)
BINARY.update(CATALOGUE_BINARY)


# --- control flow --------------------------------------------------------------------------


def _cond_same_function(x):
    """Both branches compute sin(x) cos(x), differently: smooth although the branch taken
    depends on the data."""
    return tt.cond(
        tt.reduce_sum(x) > 0.0, lambda: tt.sin(x) * tt.cos(x), lambda: 0.5 * tt.sin(2.0 * x)
    )


def _cond_piecewise(x):
    return tt.cond(tt.reduce_sum(x) > 0.0, lambda: tt.sin(x) * 2.0, lambda: x * x - 1.0)


def _switch_piecewise(x):
    """Three pieces, chosen by the sign of sum(x) and whether it exceeds 1."""
    total = tt.reduce_sum(x)
    index = tt.cast(total > 0.0, tt.int32) + tt.cast(total > 1.0, tt.int32)
    return tt.switch_case(index, [lambda: x * x - 1.0, lambda: tt.sin(x) * 2.0, lambda: tt.exp(-x)])


def _while_fixed(x):
    _, y = tt.while_loop(
        lambda i, y: i < 3, lambda i, y: (i + 1, tt.sin(y) * 0.9), (0, x), maximum_iterations=3
    )
    return y


def _while_accumulates(x):
    def body(i, y, total):
        return i + 1, tt.tanh(y) + 0.1 * x, total + y * y * 0.5

    _, y, total = tt.while_loop(
        lambda i, y, total: i < 2, body, (0, x, tt.zeros_like(x)), maximum_iterations=2
    )
    return y + total


def _while_data_count(x):
    """Halves x while its squares sum to more than 1, at most 4 times."""
    _, y = tt.while_loop(
        lambda i, y: tt.logical_and(i < 4, tt.reduce_sum(y * y) > 1.0),
        lambda i, y: (i + 1, y * 0.5 + 0.1 * tt.sin(y)),
        (0, x),
        maximum_iterations=4,
    )
    return y


def _while_with_cond(x):
    def body(i, y):
        grown = tt.cond(tt.reduce_sum(y) > 0.0, lambda: tt.sin(y), lambda: tt.tanh(y) * 0.5)
        return i + 1, grown + 0.5 * y

    _, y = tt.while_loop(lambda i, y: i < 2, body, (0, x), maximum_iterations=2)
    return y


# Autograph converts only the function tt.function traces, not what it calls: the steps
# below are converted here, so that their `if` and `for` become tt.cond and tt.while_loop
# inside tt.function and stay Python eagerly.
def _autograph_range(x):
    for _ in tt.range(3):
        x = tt.sin(x) * 0.9 + 0.1 * x
    return x


def _autograph_rows(x):
    if not x.ndim:
        return x
    total = tt.zeros(x.shape[1:], x.dtype)
    for row in x:
        total = total * 0.5 + tt.sin(row)
    return total


def _autograph_if(x):
    if tt.reduce_sum(x) > 0.0:
        y = tt.sin(x)
    else:
        y = x * 0.5
    return y


# NOTE: a compiled cond's gradient is a cond of its branches' gradients, in which the branch
# that ran gives zeros for what only the other reads; a NaN or Inf upstream turns such a zero
# into NaN where the eager tape, which never recorded the other branch, has no term at all
# (docs/control-flow-and-autodiff.md). With non-finite inputs, programs with these steps are
# held to eager mode's value only (the interpreter and C still agree on everything).
BRANCHING = {
    "cond_same_function",
    "cond_piecewise",
    "switch_piecewise",
    "while_with_cond",
    "autograph_if",
}
CONTROL_FLOW = {
    "cond_same_function": (_cond_same_function, True),
    "cond_piecewise": (_cond_piecewise, False),
    "switch_piecewise": (_switch_piecewise, False),
    "while_fixed": (_while_fixed, True),
    "while_accumulates": (_while_accumulates, True),
    "while_data_count": (_while_data_count, False),
    "while_with_cond": (_while_with_cond, False),
    "autograph_range": (tt.autograph.convert(_autograph_range), True),
    "autograph_rows": (tt.autograph.convert(_autograph_rows), True),
    "autograph_if": (tt.autograph.convert(_autograph_if), False),
}


# --- linear algebra ------------------------------------------------------------------------
# Matrices come from the data x (viewed as a batch of m x n matrices): G = T T^T / (mn + 1)
# with T = tanh(x) has ||G|| < 1, so I + G is symmetric positive definite with eigenvalues in
# [1, 2), and I + 0.6 (G * C), C a fixed pattern in [0.5, 1.5], is a general matrix with
# singular values in (0.1, 1.9). diag(1, ..., m) + 0.4 G has eigenvalues at least 0.2 apart
# (Weyl), so eigenvalue and singular value derivatives exist to every order.


def _matrix(x):
    """x as a batch of matrices: a scalar as 1 x 1, a vector as a column."""
    return tt.reshape(x, [1, 1]) if x.ndim == 0 else tt.expand_dims(x, -1) if x.ndim == 1 else x


def _pattern(shape, seed, dtype, low=0.5, high=1.5):
    values = np.random.default_rng(seed).uniform(low, high, shape)
    return tt.constant(values.astype(tt.as_dtype(dtype).as_numpy_dtype))


def _gram(x):
    m, n = x.shape[-2:]
    t = tt.tanh(x)
    return tt.matmul(t, t, transpose_b=True) / float(m * n + 1)


def _spd(x):
    return tt.eye(x.shape[-2], dtype=x.dtype) + _gram(x)


def _general(x):
    """A nonsymmetric, well-conditioned matrix whose first row is negated (a negative
    determinant)."""
    m = x.shape[-2]
    flip = np.eye(m)
    flip[:1] *= -1.0
    signs = tt.constant(flip.astype(x.dtype.as_numpy_dtype))
    return tt.matmul(
        signs, tt.eye(m, dtype=x.dtype) + 0.6 * _gram(x) * _pattern((m, m), 3, x.dtype)
    )


def _spread(x):
    """diag(1, ..., m) + 0.4 G: distinct eigenvalues."""
    m = x.shape[-2]
    return tt.constant(np.diag(np.arange(1.0, m + 1)).astype(x.dtype.as_numpy_dtype)) + 0.4 * _gram(
        x
    )


def _strictly(x, lower):
    return (
        tt.linalg.band_part(x, -1, 0) - tt.linalg.band_part(x, 0, 0)
        if lower
        else (tt.linalg.band_part(x, 0, -1) - tt.linalg.band_part(x, 0, 0))
    )


def _lapack(function):
    """`function` of a batch of matrices, on x viewed as one; LAPACK's ops take float32 and
    float64, so float16 goes through float32 and back."""

    def step(x):
        x = _matrix(x)
        if x.dtype != tt.float16:
            return function(x)
        return tt.cast(function(tt.cast(x, tt.float32)), tt.float16)

    return step


def _triangular_lower(x):
    """A solve with the Cholesky factor, given with junk above its diagonal (never read)."""
    chol = tt.linalg.cholesky(_spd(x))
    return tt.linalg.triangular_solve(chol + _strictly(_gram(x), lower=False), x, lower=True)


def _triangular_upper_adjoint(x):
    upper = tt.linalg.adjoint(tt.linalg.cholesky(_spd(x))) + _strictly(_gram(x), lower=True)
    return tt.linalg.triangular_solve(upper, x, lower=False, adjoint=True)


def _slogdet(x):
    sign, log_abs = tt.linalg.slogdet(_general(x))
    return sign * log_abs


def _eigh_vectors_squared(x):
    _, v = tt.linalg.eigh(_spread(x))
    return v * v


def _svd(x):
    m = x.shape[-2]
    pattern = _pattern((m, m), 4, x.dtype)
    spread = _spread(x) - 0.4 * _gram(x) + 0.4 * _gram(x) * pattern / 1.5
    s, u, v = tt.linalg.svd(spread)
    return tt.concat([tt.expand_dims(s, -1), u * v], axis=-1)


def _qr(x):
    q, r = tt.linalg.qr(_general(x))
    return q * q + r * r


def _matvec(x):
    n = x.shape[-1]
    return tt.linalg.matvec(x, _pattern((n,), 5, x.dtype))


LINEAR_ALGEBRA = {
    "cholesky": (_lapack(lambda x: tt.linalg.cholesky(_spd(x))), True),
    "solve": (_lapack(lambda x: tt.linalg.solve(_general(x), x)), True),
    "solve_adjoint": (_lapack(lambda x: tt.linalg.solve(_general(x), x, adjoint=True)), True),
    "inv": (_lapack(lambda x: tt.linalg.inv(_general(x))), True),
    "det": (_lapack(lambda x: tt.linalg.det(_general(x))), True),
    "slogdet": (_lapack(_slogdet), True),
    "logdet": (_lapack(lambda x: tt.linalg.logdet(_spd(x))), True),
    "triangular_solve": (_lapack(_triangular_lower), True),
    "triangular_solve_upper_adjoint": (_lapack(_triangular_upper_adjoint), True),
    "cholesky_solve": (
        _lapack(lambda x: tt.linalg.cholesky_solve(tt.linalg.cholesky(_spd(x)), x)),
        True,
    ),
    "eigh_values": (_lapack(lambda x: tt.linalg.eigh(_spread(x))[0]), True),
    "eigh_vectors_squared": (_lapack(_eigh_vectors_squared), True),
    "svd": (_lapack(_svd), True),
    "qr": (_lapack(_qr), True),
    "trace": (lambda x: tt.linalg.trace(_matrix(x)), True),
    "diag_part": (lambda x: tt.linalg.diag_part(_matrix(x)), True),
    "set_diag": (
        lambda x: tt.linalg.set_diag(_matrix(x), tt.sin(tt.linalg.diag_part(_matrix(x)))),
        True,
    ),
    "diag": (lambda x: tt.linalg.diag(x) if x.ndim else x, True),
    # num_lower may not exceed the rows (as in TensorFlow)
    "band_part_lower": (
        lambda x: tt.linalg.band_part(_matrix(x), min(1, _matrix(x).shape[-2]), 0),
        True,
    ),
    "band_part_upper": (lambda x: tt.linalg.band_part(_matrix(x), 0, -1), True),
    "matrix_transpose": (lambda x: tt.linalg.matrix_transpose(_matrix(x)), True),
    "matvec": (lambda x: _matvec(_matrix(x)), True),
    "norm": (lambda x: tt.linalg.norm(x), False),
}


# --- scatter, gather and segments ----------------------------------------------------------


def _rows(function):
    """`function` of x with at least one row; otherwise x as it is."""
    return lambda x: function(x, x.shape[0]) if x.ndim and x.shape[0] else x


def _elements(function):
    """`function` of x with a first element (rank >= 2); otherwise x as it is."""
    return lambda x: function(x, *x.shape[:2]) if x.ndim >= 2 and x.shape[0] and x.shape[1] else x


def _ids(values):
    return tt.constant(np.array(values, np.int32).reshape(-1))


def _scatter_nd(x):
    if not x.ndim:
        return x
    rows = x.shape[0]
    indices = _ids([(2 * i) % (rows + 1) for i in range(rows)])[:, None]  # repeats add
    return tt.scatter_nd(indices, x, [rows + 1, *x.shape[1:]])


def _update_corners(x, rows, cols):
    corners = sorted({(0, 0), (rows - 1, cols - 1)})
    updates = tt.sin(tt.gather_nd(x, corners)) * 2.0
    return tt.tensor_scatter_nd_update(x, corners, updates)


SCATTER_GATHER = {
    "gather_nd_rows": (
        _rows(lambda x, rows: tt.gather_nd(x, [[rows - 1], [0], [rows - 1]])),
        True,
    ),
    "gather_nd_elements": (
        _elements(lambda x, rows, cols: tt.gather_nd(x, [[0, cols - 1], [rows - 1, 0]])),
        True,
    ),
    "gather_nd_batch": (
        lambda x: (
            tt.gather_nd(x, _ids([i % x.shape[1] for i in range(x.shape[0])])[:, None], 1)
            if x.ndim >= 2 and x.shape[1]
            else x
        ),
        True,
    ),
    "gather_last_axis": (
        lambda x: tt.gather(x, [x.shape[-1] - 1, 0], axis=-1) if x.ndim and x.shape[-1] else x,
        True,
    ),
    "scatter_nd": (_scatter_nd, True),
    "tensor_scatter_add": (
        _rows(
            lambda x, rows: tt.tensor_scatter_nd_add(
                x, [[rows - 1], [0], [rows - 1]], tt.sin(tt.gather(x, [0, rows - 1, 0]))
            )
        ),
        True,
    ),
    "tensor_scatter_sub": (
        _rows(lambda x, rows: tt.tensor_scatter_nd_sub(x, [[0]], x[-1:] * x[:1])),
        True,
    ),
    "tensor_scatter_update": (_elements(_update_corners), True),
    "segment_max": (
        _rows(lambda x, rows: tt.math.segment_max(x, _ids([i // 2 for i in range(rows)]))),
        False,
    ),
    "segment_min": (
        _rows(lambda x, rows: tt.math.segment_min(x, _ids([i // 2 for i in range(rows)]))),
        False,
    ),
    "segment_mean": (
        _rows(lambda x, rows: tt.math.segment_mean(x, _ids([i // 3 for i in range(rows)]))),
        True,
    ),
    "segment_prod": (
        _rows(lambda x, rows: tt.math.segment_prod(x, _ids([i // 2 for i in range(rows)]))),
        True,
    ),
    # segment 1 is empty or not depending on the rows; a negative id drops its row
    "unsorted_segment_mean": (
        _rows(
            lambda x, rows: tt.math.unsorted_segment_mean(
                x, _ids([-1 if i == 1 else (2 * i) % 3 for i in range(rows)]), 3
            )
        ),
        True,
    ),
    "unsorted_segment_prod": (
        _rows(
            lambda x, rows: tt.math.unsorted_segment_prod(
                x, _ids([(2 * i) % 3 for i in range(rows)]), 3
            )
        ),
        True,
    ),
    "unsorted_segment_max": (
        _rows(
            lambda x, rows: tt.math.unsorted_segment_max(x, _ids([i % 2 for i in range(rows)]), 2)
        ),
        False,
    ),
    "unsorted_segment_min": (
        _rows(
            lambda x, rows: tt.math.unsorted_segment_min(
                x, _ids([(i + 1) % 2 for i in range(rows)]), 2
            )
        ),
        False,
    ),
}


# --- convolution and pooling ---------------------------------------------------------------


def _images(x):
    """x as a batch of images (N, H, W, C), or None for rank 5 and more."""
    if x.ndim > 4:
        return None
    shape = {0: [1, 1, 1, 1], 1: [1, 1, -1, 1], 2: [1, *x.shape, 1], 3: [1, *x.shape]}
    return x if x.ndim == 4 else tt.reshape(x, shape[x.ndim])


def _signals(x):
    """x as a batch of 1-D signals (N, W, C), or None for rank 4 and more."""
    if x.ndim > 3:
        return None
    shape = {0: [1, 1, 1], 1: [1, -1, 1], 2: [1, *x.shape]}
    return x if x.ndim == 3 else tt.reshape(x, shape[x.ndim])


def _filter(shape, dtype):
    """Fixed weights of `shape`, scaled by the fan-in so values stay of order one."""
    fan_in = max(1, int(np.prod(shape[:-1])))
    values = np.random.default_rng(11).uniform(-1.0, 1.0, shape) / np.sqrt(fan_in)
    return tt.constant(values.astype(tt.as_dtype(dtype).as_numpy_dtype))


def _fits(x, *window):
    """Whether a VALID window (its extent along each spatial axis) fits in x.

    NOTE: tracer refuses a window larger than the input; TensorFlow gives an empty output
    while (size - window + stride) / stride, truncated, is not negative."""
    return all(size >= extent for size, extent in zip(x.shape[1:], window))


def _conv(name, layout="images"):
    """A step that views x as `layout` and applies CONVOLUTION's op `name`."""
    view = _images if layout == "images" else _signals

    channels = 1 if name.endswith("nchw") else -1

    def step(x):
        y = view(x)
        if y is None or (not y.shape[channels] and "pool" not in name):
            return x  # NOTE: as in TensorFlow, a convolution needs at least one channel
        return _CONVOLUTIONS[name](y)

    return step


_CONVOLUTIONS = {
    "conv2d_same": lambda x: tt.nn.conv2d(
        x, _filter((3, 3, x.shape[3], 2), x.dtype), strides=1, padding="SAME"
    ),
    "conv2d_strided": lambda x: tt.nn.conv2d(
        x,
        _filter((2, 2, x.shape[3], 3), x.dtype),
        strides=2,
        padding="VALID" if _fits(x, 2, 2) else "SAME",
    ),
    "conv2d_dilated": lambda x: tt.nn.conv2d(
        x, _filter((2, 2, x.shape[3], 1), x.dtype), strides=1, padding="SAME", dilations=2
    ),
    # filters that depend on x: its gradient holds the weight gradient's product
    "conv2d_weighted_by_x": lambda x: tt.nn.conv2d(
        x, _filter((2, 3, x.shape[3], 2), x.dtype) * tt.reduce_mean(x), strides=1, padding="SAME"
    ),
    "conv2d_nchw": lambda x: tt.nn.conv2d(
        x, _filter((2, 1, x.shape[1], 2), x.dtype), 1, "SAME", data_format="NCHW"
    ),
    "depthwise_conv2d": lambda x: tt.nn.depthwise_conv2d(
        x, _filter((3, 3, x.shape[3], 2), x.dtype), strides=[1, 2, 2, 1], padding="SAME"
    ),
    # one filter per channel, weighted by x: the three depthwise primitives (a multiplier
    # of 2 is a grouped convolution)
    "depthwise_conv2d_one": lambda x: tt.nn.depthwise_conv2d(
        x,
        _filter((3, 2, x.shape[3], 1), x.dtype) * tt.reduce_mean(x),
        strides=[1, 1, 1, 1],
        padding="SAME",
    ),
    "max_pool_same": lambda x: tt.nn.max_pool2d(x, 2, 2, "SAME"),
    "max_pool_valid": lambda x: tt.nn.max_pool2d(x, 2, 1, "VALID") if _fits(x, 2, 2) else x,
    "avg_pool_same": lambda x: tt.nn.avg_pool2d(x, 3, 2, "SAME"),
    "avg_pool_valid": lambda x: tt.nn.avg_pool2d(x, [2, 1], 1, "VALID") if _fits(x, 2, 1) else x,
    "conv1d_same": lambda x: tt.nn.conv1d(x, _filter((3, x.shape[2], 2), x.dtype), 2, "SAME"),
    "conv1d_valid": lambda x: (
        tt.nn.conv1d(x, _filter((2, x.shape[2], 1), x.dtype), 1, "VALID") if _fits(x, 2) else x
    ),
}
CONVOLUTION = {
    name: (_conv(name, "signals" if name.startswith("conv1d") else "images"), "max" not in name)
    for name in _CONVOLUTIONS
}

FAMILIES = {
    "catalogue": {**CATALOGUE_UNARY, **CATALOGUE_BINARY},
    "control_flow": CONTROL_FLOW,
    "linear_algebra": LINEAR_ALGEBRA,
    "scatter_gather": SCATTER_GATHER,
    "convolution": CONVOLUTION,
}
STEPS = {**UNARY, **BINARY, **CONTROL_FLOW, **LINEAR_ALGEBRA, **SCATTER_GATHER, **CONVOLUTION}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0]
TOLERANCE = {np.float64: 1e-9, np.float32: 2e-4, np.float16: 2e-2}


@st.composite
def programs(draw, family=None):
    """(function, input arrays, step names, whether finite differences apply); with a
    `family`, at least one step comes from that table."""
    steps = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5))
    if family is not None:
        forced = draw(st.sampled_from(sorted(FAMILIES[family])))
        steps.insert(draw(st.integers(0, len(steps))), forced)
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32, np.float16]))
    images = any(name in CONVOLUTION for name in steps)
    rank = draw(st.integers(0, 4 if images else 3))  # batches of images now and then
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=rank, max_size=rank)))
    if 0 in shape and draw(st.booleans()):  # size-0 axes now and then, not most of the time
        shape = tuple(d or 2 for d in shape)
    other = tuple(d if draw(st.booleans()) else 1 for d in shape)[draw(st.integers(0, rank)) :]
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    # float16 holds 11 bits: values of order 2 grow through the products of a long chain
    # until second derivatives lose more than the tolerance to rounding alone
    scale = 1.0 if dtype == np.float16 else 2.0
    inputs = [rng.uniform(-scale, scale, s).astype(dtype) for s in (shape, other)]
    special = draw(st.booleans()) and draw(st.booleans())
    if special:
        for array in inputs:
            if array.size:
                array.flat[rng.integers(0, array.size)] = draw(st.sampled_from(SPECIAL))

    def program(a, b):
        x = a
        for name in steps:
            if name in BINARY:
                if _broadcasts(x.shape, b.shape):
                    x = BINARY[name][0](x, b)
            else:
                x = STEPS[name][0](x)
        return x

    smooth = all(STEPS[n][1] for n in steps)
    finite_differences = smooth and not special and dtype == np.float64
    eager_results = 1 if special and BRANCHING.intersection(steps) else None
    return Case(program, inputs, steps, finite_differences, eager_results)


# eager_results: how many of the results eager mode must give as the graphs do (None: all)
Case = collections.namedtuple(
    "Case", ["program", "inputs", "steps", "finite_differences", "eager_results"]
)


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


def _check(case):
    program, inputs, steps, finite_differences, eager_results = case
    dtype = inputs[0].dtype.type
    tensors = [tt.constant(a) for a in inputs]
    run = derivatives(program)
    with np.errstate(all="ignore"):
        eager = run(*tensors)
        interpreted = tt.function(run, backend="interpreter")(*tensors)
        compiled = tt.function(run, backend="c")(*tensors)
    _agree(compiled, interpreted, dtype, f"C vs interpreter for {steps}")
    _agree(interpreted[:eager_results], eager, dtype, f"interpreter vs eager for {steps}")
    _agree(compiled[:eager_results], eager, dtype, f"C vs eager for {steps}")
    if finite_differences and all(a.size for a in inputs):
        check_first_order(program, inputs)
        check_second_order(program, inputs)


def _search(examples):
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=not LONG_RUN,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


@_search(EXAMPLES)
@given(programs())
def test_random_programs_agree_in_every_backend_to_second_order(case):
    _check(case)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_programs_of_each_family_agree_in_every_backend_to_second_order(family):
    @_search(FAMILY_EXAMPLES)
    @given(programs(family))
    def check(case):
        _check(case)

    check()


# primitives no step's traced program holds, and why
NOT_DRAWN = {
    "band_mask": "band_part's mask of a static shape is folded into a constant",
    "fill": "zeros and ones of static shapes are folded into constants",
    "stateless_random_uniform_unit": "a draw of a constant seed is folded into a constant",
    "call": "recorded by eager tapes alone (the eager run of nested_function holds one)",
    "custom_gradient_vjp": "recorded by eager tapes alone (the eager run of custom_gradient)",
    "dims_value": "sizes known only when a function runs: the fuzzer's shapes are static",
    "one_hot_seeds": "the seeds of vectorized jacobians (tests/test_jacobian.py)",
    "print": "a side effect: tests/test_control_flow.py compares what each backend prints",
    "py_function_result": "runs Python: tests/test_py_function.py runs it in each backend",
    "philox_sample": "a Generator's draw: tests/test_random_generator.py runs it in each backend",
}
# a collective of processes under mpiexec (tests/test_distribute.py), in OPS only where
# something imported tracer.distribute before: set aside whatever ran before in the process
COLLECTIVES = {"allreduce"}
# the fuzzer's programs compute on numbers; tests/test_strings.py checks the string ops
NOT_DRAWN |= {name: "an op of tt.string tensors" for name in string_cases.NO_GRADIENT}
# WAV files are strings too: tests/test_audio.py checks them eagerly and compiled
NOT_DRAWN |= {name: "an op of WAV files (strings)" for name in signal_cases.NO_GRADIENT}
# tests/test_integer_dtypes.py runs them in each backend, over every integer dtype
NOT_DRAWN |= {name: "an op of integer tensors" for name in bitwise_cases.NO_GRADIENT}


def test_the_steps_reach_every_primitive():
    """The traced programs of the steps, with their first and second derivatives, hold every
    primitive of the catalogue but those of NOT_DRAWN: the fuzzer covers the catalogue. A new
    elementwise primitive of one or two floating inputs has its step from the catalogue
    (tests/fuzz_catalogue.py); any other needs a step in a table here, or a reason in
    NOT_DRAWN."""
    held = set()
    rng = np.random.default_rng(0)
    # a matrix reaches the argmax and index checks, four dimensions the image patches and the
    # depthwise filter's gradient; everything else either does
    for shape in [(3, 3), (2, 3, 3, 2)]:
        a, b = (tt.constant(rng.uniform(-1.0, 1.0, shape)) for _ in range(2))
        for name, (step, _) in STEPS.items():
            function = step if name in BINARY else (lambda a, b, step=step: step(a))
            traced = tt.function(derivatives(function), backend="interpreter")
            concrete = traced.get_concrete_function(a, b)
            text = concrete.ir(TRACED) + concrete.ir(GRAD) + concrete.ir()
            held |= set(re.findall(r"= ([a-z_0-9]+)", text))
    assert sorted(set(OPS) - held - set(NOT_DRAWN) - COLLECTIVES) == []
    assert sorted(set(NOT_DRAWN) - set(OPS)) == []


# --- autograph's loops ------------------------------------------------------------------------

LOOP_EXAMPLES = int(os.environ.get("TRACER_FUZZ_EXAMPLES", "12"))


def _finite_differences(function, x, n, step=1e-6):
    """The gradient of the scalar function(x, n) by central differences, element by element."""
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        shift = np.zeros_like(x)
        shift[index] = step
        plus, minus = (float(function(tt.constant(x + s), n)) for s in (shift, -shift))
        gradient[index] = (plus - minus) / (2 * step)
    return gradient


@_search(LOOP_EXAMPLES)
@given(fuzz_loops.programs())
def test_autograph_loops_agree_eagerly_on_the_interpreter_and_in_c(program):
    """A random function of `while` and `for` loops (tests/fuzz_loops.py) gives the same
    value and gradient run as Python (eager tensors), on the interpreter and in C, and the
    gradient matches finite differences, loops without a maximum_iterations (a `while` on a
    tensor, `for` over tt.range of a tensor) included."""
    x, n = tt.constant(program.x), tt.constant(program.n, tt.int32)
    program.margins.clear()
    value, gradient = (t.numpy() for t in program.value_and_gradient(x, n))
    # a condition this close to its edge could flip under the finite differences' step
    assume(min(program.margins, default=1.0) > 1e-3)
    numeric = _finite_differences(program.value, program.x, n)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6, err_msg=program.source)
    for backend in ("interpreter", "c"):
        got = tt.function(program.value_and_gradient, backend=backend)(x, n)
        for g, w in zip(got, [value, gradient]):
            np.testing.assert_allclose(
                g.numpy(), w, rtol=1e-10, atol=1e-12, err_msg=f"{backend}\n{program.source}"
            )


def _bound_after_a_break(x):
    a = x
    for _ in tt.range(3):
        if a > 1.0:
            break
        t = tt.sin(a)
        a = t + 1.0
    return a


def test_a_name_first_bound_after_a_tensor_break_converts():
    """The fuzzer's find: the statements after a tensor `break` run under an `if` on the jump
    flags, which refused `t` (first bound there) as bound in one branch only."""
    x = tt.constant(0.5, tt.float64)
    want = _bound_after_a_break(x).numpy()
    for backend in ("interpreter", "c"):
        assert tt.function(_bound_after_a_break, backend=backend)(x).numpy() == want


# --- export specs (the CLI's --args) ----------------------------------------------------------

SPEC_EXAMPLES = int(os.environ.get("TRACER_FUZZ_EXAMPLES", "200"))
SPEC_DTYPES = {
    "f16": tt.float16,
    "f32": tt.float32,
    "f64": tt.float64,
    "i32": tt.int32,
    "i64": tt.int64,
    "bool": tt.bool,
    "c64": tt.complex64,
    "c128": tt.complex128,
}
_spaces = st.sampled_from(["", "", " ", "  ", "\t", "\n"])
_size = st.one_of(st.none(), st.integers(0, 9), st.integers(0, 2**63 - 1))
_sizes = st.lists(_size, max_size=4)


def _specs(min_size=0):
    """[(dtype name, sizes)], a size None for ?."""
    spec = st.tuples(st.sampled_from(sorted(SPEC_DTYPES)), _sizes)
    return st.lists(spec, min_size=min_size, max_size=4)


def _size_text(draw, size):
    return draw(_spaces) + ("?" if size is None else str(size)) + draw(_spaces)


def _spec_text(draw, dtype, sizes):
    return f"{dtype}[{','.join(_size_text(draw, size) for size in sizes)}]"


def _joined(draw, parts, separators=None):
    """The parts separated by commas with spaces around, or by `separators` where given."""
    separators = separators or {}
    text = draw(_spaces)
    for k, part in enumerate(parts):
        if k:
            text += separators.get(k, draw(_spaces) + "," + draw(_spaces))
        text += part
    return text + draw(_spaces)


@st.composite
def valid_specs(draw):
    """(text, [(dtype name, sizes)]) for a valid --args text."""
    specs = draw(_specs())
    return _joined(draw, [_spec_text(draw, d, s) for d, s in specs]), specs


def _corrupt_part(corrupt):
    """A corruption of spec k's text (`corrupt(draw, dtype, sizes)`) among valid ones."""

    def build(draw, specs, k):
        parts = [_spec_text(draw, d, s) for d, s in specs]
        parts[k] = corrupt(draw, *specs[k])
        return _joined(draw, parts)

    return build


def _sizes_text(draw, sizes):
    return ",".join(_size_text(draw, size) for size in sizes)


def _with_size(text):
    """A corruption that writes the first size of a spec (it has one) as `text` draws it."""

    def corrupt(draw, dtype, sizes):
        written = [draw(text) if k == 0 else _size_text(draw, s) for k, s in enumerate(sizes)]
        return f"{dtype}[{','.join(written)}]"

    return _corrupt_part(corrupt)


def _missing_bracket(draw, dtype, sizes):
    inside = _sizes_text(draw, sizes)
    return draw(st.sampled_from([f"{dtype}{inside}]", f"{dtype}[{inside}"]))


def _sizes_without_comma(draw, dtype, sizes):
    """`3 4` for `3,4`: one comma of a spec of two sizes or more written as spaces."""
    k = draw(st.integers(1, len(sizes) - 1))
    gap = draw(st.sampled_from([" ", "  ", "\t", " \n "]))
    before, after = _sizes_text(draw, sizes[:k]), _sizes_text(draw, sizes[k:])
    return f"{dtype}[{before}{gap}{after}]"


def _junk_in_part(draw, dtype, sizes):
    junk = draw(st.sampled_from(["x", ";", "0", "?", "[]", "f32", "-", "#", "()", "...", "=1"]))
    spec, space = _spec_text(draw, dtype, sizes), draw(_spaces)
    return draw(
        st.sampled_from([junk + space + spec, spec + space + junk, f"{spec},{space}{junk}"])
    )


def _unknown_dtype(draw, dtype, sizes):
    name = draw(
        st.sampled_from(["f8", "f31", "F32", "float32", "i16", "u8", "b", "bool_", "", "f 32"])
    )
    return _spec_text(draw, name, sizes)


def _empty_size(draw, dtype, sizes):
    """An empty size among the others: `f32[3,]`, `f32[,3]`, `f32[3,,4]`."""
    entries = [_size_text(draw, s) for s in sizes]
    entries.insert(draw(st.integers(0, len(entries))), draw(_spaces))
    return f"{dtype}[{','.join(entries)}]"


def _nested_brackets(draw, dtype, sizes):
    inside = _sizes_text(draw, sizes)
    return draw(
        st.sampled_from([f"{dtype}[[{inside}]]", f"{dtype}[{inside}][1]", f"[{dtype}[{inside}]]"])
    )


def _no_comma_between_specs(draw, specs, k):
    parts = [_spec_text(draw, d, s) for d, s in specs]
    return _joined(draw, parts, {max(k, 1): draw(st.sampled_from(["", " ", "\t", " \n"]))})


def _empty_part(draw, specs, k):
    parts = [_spec_text(draw, d, s) for d, s in specs]
    parts.insert(draw(st.integers(0, len(parts))), draw(_spaces))
    return _joined(draw, parts)


def _digits(texts):
    """One of `texts(d)`, the ways to write a drawn number d (0-99)."""
    return st.builds(str, st.integers(0, 99)).flatmap(lambda d: st.sampled_from(texts(d)))


_UNICODE_ZEROS = [0xFF10, 0x0660, 0x0966, 0x09E6, 0x1D7CE]  # fullwidth, Arabic-Indic, ... digits

# name -> (corruption of spec k, how many specs it needs, how many sizes spec k needs)
CORRUPTIONS = {
    "missing_bracket": (_corrupt_part(_missing_bracket), 1, 0),
    "no_comma_between_specs": (_no_comma_between_specs, 2, 0),
    "junk_between_specs": (_corrupt_part(_junk_in_part), 1, 0),
    "sizes_without_comma": (_corrupt_part(_sizes_without_comma), 1, 2),
    "question_glued_to_digits": (_with_size(_digits(lambda d: [f"?{d}", f"{d}?", "??"])), 1, 1),
    "unknown_dtype": (_corrupt_part(_unknown_dtype), 1, 0),
    "not_an_integer": (
        _with_size(
            st.sampled_from(["-1", "+3", "3.0", "1e3", "0x10", "1_000", ".5", "½", "3a", "None"])
        ),
        1,
        1,
    ),
    "empty_spec": (_empty_part, 1, 0),
    "empty_size": (_corrupt_part(_empty_size), 1, 1),
    "nested_brackets": (_corrupt_part(_nested_brackets), 1, 0),
    "unicode_digits": (
        _with_size(
            st.tuples(st.integers(0, 99), st.sampled_from(_UNICODE_ZEROS)).map(
                lambda t: "".join(chr(t[1] + int(c)) for c in str(t[0]))
            )
        ),
        1,
        1,
    ),
    "beyond_int64": (_with_size(st.integers(2**63, 10**30).map(str)), 1, 1),
}


# corruptions parse_specs accepts today (test_spec_corruptions_the_parser_accepts)
@st.composite
def corrupted_specs(draw, names):
    """(corruption name, text) for an invalid --args text."""
    name = draw(st.sampled_from(names))
    corrupt, specs_needed, sizes_needed = CORRUPTIONS[name]
    specs = draw(_specs(min_size=specs_needed))
    k = draw(st.integers(0, len(specs) - 1))
    dtype, sizes = specs[k]
    if len(sizes) < sizes_needed:  # the corrupted spec has the sizes its corruption needs
        specs[k] = (
            dtype,
            sizes + draw(st.lists(_size, min_size=sizes_needed, max_size=sizes_needed)),
        )
    return name, corrupt(draw, specs, k)


@_search(SPEC_EXAMPLES)
@given(valid_specs())
def test_valid_argument_specs_parse_to_the_specs_written(case):
    text, specs = case
    got = [(spec.dtype, list(spec.shape)) for spec in parse_specs(text)]
    assert got == [(SPEC_DTYPES[dtype], sizes) for dtype, sizes in specs], text


def _refused(name, text):
    with pytest.raises(argparse.ArgumentTypeError) as error:
        parse_specs(text)
    message = str(error.value)
    assert "argument spec" in message and "\n" not in message, (name, text, message)


@_search(SPEC_EXAMPLES)
@given(corrupted_specs(sorted(CORRUPTIONS)))
def test_corrupted_argument_specs_raise_the_parsers_one_line_error(case):
    _refused(*case)
