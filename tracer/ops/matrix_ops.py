"""Matrix structure, as in `tf.linalg`: diagonals, bands, traces, transposes and matvec.

Two primitives, both computed inside the loops that read them (never stored on their own):

    diag_part   a view: out[..., i] = x[..., i, i], the main diagonal of the last two axes
    band_mask   a generator of no inputs: mask[i, j] = (i - j <= lower) and (j - i <= upper),
                a negative bound keeping that whole side

and everything else composed of them and existing ops:

    trace(x)                 reduce_sum(diag_part(x), -1)
    diag(d)                  where(band_mask[0, 0], d along rows or columns, padding)
    set_diag(x, d)           where(band_mask[0, 0], d along rows or columns, x)
    band_part(x, lo, up)     where(band_mask[lo, up], x, 0)
    matvec(a, b)             matmul(a, b[..., None])[..., 0]

diag_part's gradient puts the cotangent back on a diagonal of zeros (`_embed_diagonal`, the
composition `diag` is made of); the gradients of the others come from their primitives.
Other diagonals than the main one (TensorFlow's `k`) are tracer/ops/diagonal_bands.py's.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import compute
from codegen.loops import INDEX
from tracer import dtypes
from tracer.ir import dims
from tracer.ops import array_ops, diagonal_bands, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor, as_tensors, static_int
from tracer.ops.core import apply
from tracer.ops.linalg_ops import matmul
from tracer.ops.registry import primitive, unbatchable
from tracer.ops.tangent_rules import LINEAR


def _require_matrices(name, argument, x):
    if x.ndim < 2:
        raise ValueError(
            f"{name}: `{argument}` must be a (batch of) matrices, of rank 2 or more; "
            f"its shape is {x.shape}"
        )


def _shorter(rows, cols):
    """min(rows, cols), for sizes that may be unknown while tracing (then they must be equal)."""
    if rows == cols:
        return rows
    if isinstance(rows, dims.Dim) or isinstance(cols, dims.Dim):
        raise ValueError(
            f"the diagonal of a {rows} x {cols} matrix has a length known only when the "
            "function runs; give matrices of a known number of rows and columns"
        )
    return min(rows, cols)


# --- band_mask --------------------------------------------------------------------------


def _infer_band_mask(attrs):
    if len(attrs["shape"]) < 2:
        raise ValueError(f"the mask must have rank 2 or more, not shape {attrs['shape']}")
    for bound in ("num_lower", "num_upper"):
        if not isinstance(attrs[bound], int):
            raise TypeError(f"{bound} must be an int, not {attrs[bound]!r}")
    return attrs["shape"], dtypes.bool


def _band_mask_kernel(shape, num_lower, num_upper):
    rows, cols = shape[-2:]
    below = np.arange(rows)[:, None] - np.arange(cols)[None, :]  # i - j
    mask = np.ones((rows, cols), dtype=bool)
    if num_lower >= 0:
        mask &= below <= num_lower
    if num_upper >= 0:
        mask &= -below <= num_upper
    return np.broadcast_to(mask, shape).copy()


def _band_mask_c(node, index_map):
    """(i - j <= lower) && (j - i <= upper), each side only where its bound is not negative."""
    row, col = index_map[-2:]
    below = row + col * -1
    terms = []
    if node.attrs["num_lower"] >= 0:
        terms.append(f"({below.c(INDEX)} <= {node.attrs['num_lower']})")
    if node.attrs["num_upper"] >= 0:
        terms.append(f"({(below * -1).c(INDEX)} <= {node.attrs['num_upper']})")
    return f"({compute(node.dtype)})({' && '.join(terms) or '1'})"


BAND_MASK = primitive(
    "band_mask",
    _infer_band_mask,
    fusion="elementwise",
    batch=unbatchable("makes its value from its attributes alone: nothing to batch"),
    kernel=_band_mask_kernel,
    c=forms.Generator(_band_mask_c),
)


def band_mask(shape, num_lower, num_upper):
    """The bool mask of `shape` (..., rows, cols) that holds in the band `num_lower` below and
    `num_upper` above the main diagonal of each matrix (a negative bound: that whole
    triangle). It has the shape of what it selects from, batch axes included, so that fused
    loops compute it where they read it rather than store it to broadcast."""
    attrs = {"shape": tuple(shape), "num_lower": int(num_lower), "num_upper": int(num_upper)}
    return apply(BAND_MASK, (), attrs)


# --- diag_part ---------------------------------------------------------------------------


def _infer_diag_part(attrs, x):
    if len(x.shape) < 2:
        raise ValueError(f"the input must have rank 2 or more, not shape {x.shape}")
    return x.shape[:-2] + (_shorter(*x.shape[-2:]),), x.dtype


def _embed_diagonal(diagonal, rows, cols, background):
    """(..., rows, cols) matrices with `diagonal` (..., min(rows, cols)) on their main diagonal
    and `background` elsewhere (a scalar, or matrices of that shape): the diagonal laid along
    the columns when it is as long as the rows, else along the rows, and picked where the
    band mask of width 0 holds."""
    along = array_ops.expand_dims(diagonal, -1 if diagonal.shape[-1] == rows else -2)
    shape = diagonal.shape[:-1] + (rows, cols)
    return math_ops.where(band_mask(shape, 0, 0), along, background)


def _diag_part_grad(node, g):
    rows, cols = node.inputs[0].shape[-2:]
    return (_embed_diagonal(g, rows, cols, 0),)


def _diag_part_view(node, out_map):
    """x[..., i, i] for the result's [..., i]."""
    return (*out_map[:-1], out_map[-1], out_map[-1])


DIAG_PART = primitive(
    "diag_part",
    _infer_diag_part,
    grad=_diag_part_grad,
    jvp=LINEAR,
    fusion="view",
    batch=lambda node, args, flags, size: apply(DIAG_PART, tuple(args), {}),
    kernel=lambda x: np.diagonal(x, axis1=-2, axis2=-1).copy(),
    c=forms.View(_diag_part_view),
)


def diag_part(input, name=None, k=0, padding_value=0, align="RIGHT_LEFT"):
    """The main diagonal of the last two axes: (..., M, N) -> (..., min(M, N)); with `k`,
    diagonal k (x[..., i, i + k]), or diagonals k[1] down to k[0] as rows padded with
    `padding_value` where `align` says (tracer/ops/diagonal_bands.py), as TensorFlow's.

    >>> tt.linalg.diag_part(tt.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([1., 4.], dtype=float32)
    >>> tt.linalg.diag_part(tt.constant([[1.0, 2.0], [3.0, 4.0]]), k=(-1, 1)).numpy()
    array([[0., 2.],
           [1., 4.],
           [3., 0.]], dtype=float32)
    """
    lo, hi = diagonal_bands.diagonal_range("diag_part", k)
    diagonal_bands.check_align("diag_part", align)
    x = as_tensor(input)
    _require_matrices("diag_part", "input", x)
    if (lo, hi) != (0, 0):
        return diagonal_bands.part("diag_part", x, lo, hi, padding_value, align)
    return apply(DIAG_PART, (x,), {})


# --- compositions ------------------------------------------------------------------------


def trace(x, name=None):
    """The sum of the main diagonal of the last two axes: (..., M, N) -> (...).

    >>> float(tt.linalg.trace(tt.constant([[1.0, 2.0], [3.0, 4.0]])))
    5.0
    """
    x = as_tensor(x)
    _require_matrices("trace", "x", x)
    return reduce_sum(apply(DIAG_PART, (x,), {}), axis=-1)


def diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Matrices with `diagonal` (..., K) on their main diagonal and `padding_value` elsewhere:
    (..., K, K), or (..., num_rows, num_cols) where one of them is K and the other at least K.
    With `k`, on diagonal k, or `diagonal` (..., k[1] - k[0] + 1, K) on diagonals k[1] down
    to k[0] (`align` as diag_part's), the matrices' sides TensorFlow's.

    >>> tt.linalg.diag(tt.constant([1.0, 2.0])).numpy()
    array([[1., 0.],
           [0., 2.]], dtype=float32)
    """
    lo, hi = diagonal_bands.diagonal_range("diag", k)
    diagonal_bands.check_align("diag", align)
    d = as_tensor(diagonal)
    if d.ndim < 1:
        raise ValueError(f"diag: `diagonal` must have rank 1 or more; its shape is {d.shape}")
    length = d.shape[-1]
    if (lo, hi) != (0, 0):
        if isinstance(length, dims.Dim):
            raise ValueError(f"diag: the diagonals' length {length} must be known when tracing")
        sides = diagonal_bands.matrix_sides("diag", length, lo, hi, num_rows, num_cols)
        _, padding = as_tensors(d, padding_value)
        return diagonal_bands.embed("diag", d, lo, hi, *sides, padding, align)
    rows, cols = (static_int(v) for v in (num_rows, num_cols))
    if rows is None or cols is None:
        raise ValueError("diag: num_rows and num_cols must be known when the function is traced")
    rows, cols = (rows if rows >= 0 else length), (cols if cols >= 0 else length)
    if isinstance(length, dims.Dim) or min(rows, cols) != length:
        raise ValueError(
            f"diag: a diagonal of length {length} does not fit {rows} x {cols} matrices "
            f"(num_rows={num_rows}, num_cols={num_cols}): the shorter side must be {length}"
        )
    _, padding = as_tensors(d, padding_value)
    return _embed_diagonal(d, rows, cols, padding)


def set_diag(input, diagonal, name=None, k=0, align="RIGHT_LEFT"):
    """`input` (..., M, N) with its main diagonal replaced by `diagonal` (..., min(M, N)); with
    `k`, diagonal k or diagonals k[1] down to k[0] (as diag_part gives them).

    >>> tt.linalg.set_diag(tt.zeros((2, 2)), tt.constant([1.0, 2.0])).numpy()
    array([[1., 0.],
           [0., 2.]], dtype=float32)
    """
    lo, hi = diagonal_bands.diagonal_range("set_diag", k)
    diagonal_bands.check_align("set_diag", align)
    x, d = as_tensors(input, diagonal)
    _require_matrices("set_diag", "input", x)
    if d.dtype != x.dtype:
        raise TypeError(
            f"set_diag: `input` is {x.dtype.name} but `diagonal` is {d.dtype.name}; "
            "they must have the same dtype"
        )
    if (lo, hi) != (0, 0):
        return diagonal_bands.set_part("set_diag", x, d, lo, hi, align)
    rows, cols = x.shape[-2:]
    expected = x.shape[:-2] + (_shorter(rows, cols),)
    if d.shape != expected:
        raise ValueError(
            f"set_diag: `diagonal` must have shape {expected} for an input of shape {x.shape}, "
            f"not {d.shape}"
        )
    return _embed_diagonal(d, rows, cols, x)


def band_part(input, num_lower, num_upper, name=None):
    """`input` (..., M, N) with zeros outside the band of `num_lower` subdiagonals and
    `num_upper` superdiagonals (a negative number keeps that whole triangle).

    >>> tt.linalg.band_part(tt.ones((3, 3)), 0, -1).numpy()  # the upper triangle
    array([[1., 1., 1.],
           [0., 1., 1.],
           [0., 0., 1.]], dtype=float32)
    """
    x = as_tensor(input)
    _require_matrices("band_part", "input", x)
    bounds = []
    for argument, value, extent in (
        ("num_lower", num_lower, x.shape[-2]),
        ("num_upper", num_upper, x.shape[-1]),
    ):
        bound = static_int(value)
        if bound is None:
            raise ValueError(f"band_part: `{argument}` must be known when the function is traced")
        if not isinstance(extent, dims.Dim) and bound > extent:
            raise ValueError(
                f"band_part: `{argument}` must be negative or at most {extent} for matrices of "
                f"shape {x.shape[-2:]}, not {bound}"
            )
        bounds.append(bound)
    if bounds[0] < 0 and bounds[1] < 0:
        return array_ops.identity(x)
    return math_ops.where(band_mask(x.shape, *bounds), x, 0)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """The last two axes swapped (and the values conjugated, with `conjugate`)."""
    x = as_tensor(a)
    _require_matrices("matrix_transpose", "a", x)
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    swapped = array_ops.transpose(x, perm)
    return math_ops.conj(swapped) if conjugate and x.dtype.is_complex else swapped


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two axes."""
    return matrix_transpose(matrix, conjugate=True)


def matvec(
    a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None
):
    """The product of matrices `a` (..., M, N) and vectors `b` (..., N): (..., M), the batch
    axes broadcast; `transpose_a` or `adjoint_a` uses a's (conjugate) transpose.

    >>> tt.linalg.matvec(tt.ones((2, 3)), tt.constant([1.0, 2.0, 3.0])).numpy()
    array([6., 6.], dtype=float32)
    """
    if transpose_a and adjoint_a:
        raise ValueError("matvec: only one of `transpose_a` and `adjoint_a` can be True")
    a, b = as_tensors(a, b)
    _require_matrices("matvec", "a", a)
    if b.ndim < 1:
        raise ValueError(f"matvec: `b` must be a (batch of) vectors; its shape is {b.shape}")
    if adjoint_a:
        a = math_ops.conj(a) if a.dtype.is_complex else a
    column = array_ops.expand_dims(b, -1)
    product = matmul(a, column, transpose_a=bool(transpose_a or adjoint_a))
    return array_ops.squeeze(product, -1)
