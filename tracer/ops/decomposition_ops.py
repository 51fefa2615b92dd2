"""Decompositions through LAPACK, as in `tf.linalg`: three primitives of several results

    qr     (q, r) with A = q r, q orthonormal columns, r upper triangular (geqrf, orgqr)
    eigh   (e, v) of a symmetric A = v diag(e) v^T, e ascending, from A's lower triangle
           (syevd)
    svd    (s, u, v) with A = u diag(s) v^T, s descending: TensorFlow's order, not numpy's
           (u, s, vh) (gesdd)

batched over the leading axes, float32 and float64. Their gradients are TensorFlow's
formulas written with tracer ops (so every order follows); eigh's forward mode has a rule
of its own, qr's and svd's differentiate their gradient rules (TRANSPOSED_VJP), which cover
the same shapes as TensorFlow's gradients.

A matrix holding a NaN or an infinity (in the part the op reads: eigh's lower triangle)
gives NaN for all of its results, in every backend: the iterations of LAPACK (and of the
plain C) are undefined there, where numpy raises, or returns values from the finite part.

Vectors are defined up to sign (and within repeated eigen- or singular values, up to a
rotation): backends may return different signs, so functions of them should not depend on
one (reconstructions, projections, squares). TensorFlow's gradients divide by differences
of eigenvalues (of squared singular values) through x / (x^2 + 1e-20): an exact tie adds
nothing, a near tie gives very large values.
"""

import collections

import numpy as np

from runtime.kernels import quiet
from tracer.ir import dims
from tracer.ops import array_ops
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.factorization_ops import (
    apply_triangular_solve,
    batch_rule,
    check_matrices,
    lapack_context,
    lapack_template,
    lower_half_diagonal,
)
from tracer.ops.linalg_ops import matmul
from tracer.ops.math_ops import where
from tracer.ops.matrix_ops import band_mask, band_part, diag, diag_part, matrix_transpose
from tracer.ops.registry import OPS, primitive
from tracer.ops.structure_ops import concat
from tracer.ops.tangent_rules import TRANSPOSED_VJP
from tracer.ops.tuple_ops import TupleCotangent, TupleValue, get, tuple_type, unpack


def _safe_reciprocal(x):
    """TensorFlow's x / (x^2 + 1e-20): 1/x away from 0, and 0 at 0."""
    return x / (x * x + 1e-20)


def _reciprocal_gaps(values):
    """F[..., i, j] = 1 / (values[j] - values[i]) off the diagonal, 0 on it.

    NOTE: the diagonal is set to 0, as TensorFlow's set_diag does, not left at the safe
    reciprocal of the gap 0 (also 0): the derivative there is 1e20, and a second-order
    gradient would sum such terms to cancel, and lose every digit."""
    gaps = array_ops.expand_dims(values, -2) - array_ops.expand_dims(values, -1)
    return where(band_mask(gaps.shape, 0, 0), 0.0, _safe_reciprocal(gaps))


def _finite_part(x, read=None):
    """(x with every matrix holding a NaN or Inf, in its part `read`, replaced by zeros; the
    mask of those matrices, over the batch axes), for kernels that give them NaN results."""
    bad = ~np.isfinite(x if read is None else read).all(axis=(-2, -1))
    return np.where(bad[..., None, None], 0, x), bad


def _nan_where(bad, results):
    """`results` (each batched like the mask `bad`) with NaN in the matrices `bad` marks."""
    return TupleValue(
        [np.where(bad.reshape(bad.shape + (1,) * (r.ndim - bad.ndim)), np.nan, r) for r in results]
    )


def _eps(dtype):
    return repr(float(np.finfo(dtype.as_numpy_dtype).eps))


# --- qr ----------------------------------------------------------------------------------


def _again(node, a):
    """The results of `node`, computed again from its input `a`, for its gradient rule.

    NOTE: a tape keeps the input rather than the results (a tuple of values of several
    shapes): compiled code merges the two decompositions into one (common-subexpression
    elimination); an eager gradient computes it twice, by the same kernel, so that its
    vectors have the signs the forward's had."""
    return unpack(apply(OPS[node.op], (a,), node.attrs))


def _qr_shapes(shape, full_matrices):
    """(q's shape, r's shape) for matrices of `shape`."""
    batch, (m, n) = tuple(shape[:-2]), tuple(shape[-2:])
    k = m if full_matrices else _shorter(m, n)
    return batch + (m, k), batch + (k, n)


def _shorter(m, n):
    if m == n:
        return m
    if isinstance(m, dims.Dim) or isinstance(n, dims.Dim):
        raise ValueError(
            f"matrices of {m} x {n} have a shorter side known only when the function runs; "
            "give matrices of a known number of rows and columns"
        )
    return min(m, n)


def _infer_qr(attrs, x):
    check_matrices(None, "input", x, square=False)
    q, r = _qr_shapes(x.shape, attrs["full_matrices"])
    return (), tuple_type([(q, x.dtype), (r, x.dtype)])


def _times_r_inverse_transposed(x, r):
    """x r^-T, for upper triangular r: (r^-1 x^T)^T."""
    return matrix_transpose(
        apply_triangular_solve(r, matrix_transpose(x), lower=False, adjoint=False)
    )


def _qr_grad_deep(q, r, dq, dr):
    """TensorFlow's gradient of qr for matrices with at least as many rows as columns."""
    qdq = matmul(q, dq, transpose_a=True)
    rdr = matmul(r, dr, transpose_b=True)
    skew = qdq - matrix_transpose(qdq) + rdr - matrix_transpose(rdr)
    lower = band_part(skew, -1, 0)
    grad_a = matmul(q, dr + _times_r_inverse_transposed(lower, r))
    return grad_a + _times_r_inverse_transposed(dq - matmul(q, qdq), r)


def _qr_grad(node, g, a):
    """TensorFlow's: deep and square matrices directly; wide ones [X | Y] through the square
    X. Not implemented (as in TensorFlow) for full_matrices with more rows than columns."""
    m, n = a.shape[-2:]
    if m > n and node.attrs["full_matrices"]:
        raise NotImplementedError(
            "qr: the gradient with full_matrices=True of matrices with more rows than "
            f"columns ({m} x {n}) is not implemented (nor is it in TensorFlow)"
        )
    q, r = _again(node, a)
    dq, dr = g.dense(node, (0, 1))
    if m >= n:
        return (_qr_grad_deep(q, r, dq, dr),)
    y, u = a[..., :, m:], r[..., :, :m]
    dv, du = dr[..., :, m:], dr[..., :, :m]
    dx = _qr_grad_deep(q, u, dq + matmul(y, dv, transpose_b=True), du)
    return (concat([dx, matmul(q, dv)], axis=-1),)


@quiet
def _qr_kernel(x, full_matrices):
    x, bad = _finite_part(x)
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return _nan_where(bad, [q, r])


def _qr_c(node, blas):
    (x,) = node.inputs
    m, n = x.shape[-2:]
    q_shape, r_shape = _qr_shapes(x.shape, node.attrs["full_matrices"])
    return lapack_context(
        node, blas, m=m, n=n, k=_shorter(m, n), q_cols=q_shape[-1], r_rows=r_shape[-2]
    )


QR = primitive(
    "qr",
    _infer_qr,
    grad=_qr_grad,
    saves=(0,),
    jvp=TRANSPOSED_VJP,
    batch=batch_rule,
    kernel=_qr_kernel,
    c=lapack_template(
        "qr.c.j2", _qr_c, error=lambda node: (MemoryError, "qr: no memory for its scratch space")
    ),
)


Qr = collections.namedtuple("Qr", ["q", "r"])  # TensorFlow's result of qr


def qr(input, full_matrices=False, name=None):
    """(q, r) with input = q r for (batches of) M x N matrices: q has orthonormal columns
    (M x min(M, N), or M x M with `full_matrices`) and r is upper triangular.

    >>> q, r = tt.linalg.qr(tt.constant([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.round(np.abs(r.numpy()), 4)
    array([[5. , 2.2],
           [0. , 0.4]], dtype=float32)
    """
    x = as_tensor(input)
    check_matrices("qr", "input", x, square=False)
    q, r = unpack(apply(QR, (x,), {"full_matrices": bool(full_matrices)}))
    return Qr(q, r)


# --- eigh --------------------------------------------------------------------------------


def _infer_eigh(attrs, x):
    check_matrices(None, "tensor", x)
    return (), tuple_type([(tuple(x.shape[:-1]), x.dtype), (tuple(x.shape), x.dtype)])


def _eigh_grad(node, g, a):
    """TensorFlow's: dA = v (diag(de) + F * (v^T dv)) v^T, on the lower triangle that eigh
    reads (the part above folded onto it, the diagonal halved)."""
    ge, gv = g.parts
    if ge is None and gv is None:
        return (None,)
    e, v = _again(node, a)
    middle = None if ge is None else diag(ge)
    if gv is not None:
        rotation = _reciprocal_gaps(e) * matmul(v, gv, transpose_a=True)
        middle = rotation if middle is None else middle + rotation
    grad = matmul(v, matmul(middle, v, transpose_b=True))
    return (lower_half_diagonal(grad + matrix_transpose(grad)),)


def _eigh_jvp(node, tangents, inputs, out):
    """de = diag(v^T dA v), dv = v (F * (v^T dA v)), dA the symmetric matrix of the lower
    triangle of the tangent (what eigh reads)."""
    (t,) = tangents
    e, v = unpack(out)
    strictly_lower = band_part(t, -1, 0) - band_part(t, 0, 0)
    symmetric = band_part(t, -1, 0) + matrix_transpose(strictly_lower)
    projected = matmul(v, matmul(symmetric, v), transpose_a=True)
    return TupleCotangent([diag_part(projected), matmul(v, _reciprocal_gaps(e) * projected)])


@quiet
def _eigh_kernel(x):
    x, bad = _finite_part(x, read=np.tril(x))
    e, v = np.linalg.eigh(x, UPLO="L")
    return _nan_where(bad, [e, v])


EIGH = primitive(
    "eigh",
    _infer_eigh,
    grad=_eigh_grad,
    saves=(0,),
    jvp=_eigh_jvp,
    batch=batch_rule,
    kernel=_eigh_kernel,
    c=lapack_template(
        "eigh.c.j2",
        lambda node, blas: lapack_context(node, blas, eps=_eps(node.inputs[0].dtype)),
        error=lambda node: (MemoryError, "eigh: no memory for its scratch space"),
    ),
)


def eigh(tensor, name=None):
    """(e, v): the eigenvalues (ascending) and eigenvectors (columns of v) of (batches of)
    symmetric matrices, of which only the lower triangle is read.

    >>> e, v = tt.linalg.eigh(tt.constant([[2.0, 1.0], [1.0, 2.0]]))
    >>> e.numpy()
    array([1., 3.], dtype=float32)
    """
    x = as_tensor(tensor)
    check_matrices("eigh", "tensor", x)
    e, v = unpack(apply(EIGH, (x,), {}))
    return e, v


# --- svd ---------------------------------------------------------------------------------


def _svd_shapes(shape, full_matrices):
    """(s's shape, u's, v's) for matrices of `shape`."""
    batch, (m, n) = tuple(shape[:-2]), tuple(shape[-2:])
    k = _shorter(m, n)
    u_cols, v_cols = (m, n) if full_matrices else (k, k)
    return batch + (k,), batch + (m, u_cols), batch + (n, v_cols)


def _infer_svd(attrs, x):
    check_matrices(None, "tensor", x, square=False)
    s, u, v = _svd_shapes(x.shape, attrs["full_matrices"])
    parts = [(s, x.dtype)] + ([(u, x.dtype), (v, x.dtype)] if attrs["compute_uv"] else [])
    return (), tuple_type(parts)


def _svd_grad(node, g, a):
    """TensorFlow's gradient of svd (Ionescu et al. 2015, Townsend 2016): for wide matrices
    directly, tall ones through their transpose; with full_matrices only where the numbers
    of rows and columns differ by at most one, as in TensorFlow."""
    gs = g.dense(node, (0,))[0]
    if not node.attrs["compute_uv"]:
        s, u, v = unpack(apply(SVD, (a,), {"full_matrices": False, "compute_uv": True}))
        return (matmul(u * array_ops.expand_dims(gs, -2), v, transpose_b=True),)
    s, u, v = _again(node, a)
    gu, gv = g.dense(node, (1, 2))
    m, n = a.shape[-2:]
    tall = m > n
    if tall:  # A^T = v diag(s) u^T
        m, n, u, v, gu, gv = n, m, v, u, gv, gu
    full = node.attrs["full_matrices"]
    if full and abs(m - n) > 1:
        raise NotImplementedError(
            f"svd: the gradient with full_matrices=True of {a.shape[-2]} x {a.shape[-1]} "
            "matrices (numbers of rows and columns more than one apart) is not implemented "
            "(nor is it in TensorFlow)"
        )
    f = _reciprocal_gaps(s * s)
    rows, columns = array_ops.expand_dims(s, -1), array_ops.expand_dims(s, -2)
    v1, gv1 = v[..., :, :m], gv[..., :, :m]
    f_u = f * matmul(u, gu, transpose_a=True)
    f_v = f * matmul(v1, gv1, transpose_a=True)
    inner = diag(gs) + (f_u + matrix_transpose(f_u)) * columns
    inner = inner + rows * (f_v + matrix_transpose(f_v))
    grad = matmul(u, matmul(inner, v1, transpose_b=True))
    if m != n:
        gv1t = matrix_transpose(gv1)
        across = gv1t - matmul(matmul(gv1t, v1), v1, transpose_b=True)
        if full:
            v2, gv2 = v[..., :, m:n], gv[..., :, m:n]
            across = across - matmul(matmul(v1, gv2, transpose_a=True), v2, transpose_b=True)
        grad = grad + matmul(u * array_ops.expand_dims(_safe_reciprocal(s), -2), across)
    return (matrix_transpose(grad) if tall else grad,)


@quiet
def _svd_kernel(x, full_matrices, compute_uv):
    x, bad = _finite_part(x)
    if not compute_uv:
        return _nan_where(bad, [np.linalg.svd(x, compute_uv=False)])
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return _nan_where(bad, [s, u, np.swapaxes(vh, -1, -2)])


def _svd_c(node, blas):
    (x,) = node.inputs
    m, n = x.shape[-2:]
    _, u, v = _svd_shapes(x.shape, node.attrs["full_matrices"])
    return lapack_context(
        node,
        blas,
        m=m,
        n=n,
        k=_shorter(m, n),
        u_cols=u[-1],
        v_cols=v[-1],
        compute_uv=node.attrs["compute_uv"],
        full=node.attrs["full_matrices"],
        eps=_eps(x.dtype),
    )


SVD = primitive(
    "svd",
    _infer_svd,
    grad=_svd_grad,
    saves=(0,),
    jvp=TRANSPOSED_VJP,
    batch=batch_rule,
    kernel=_svd_kernel,
    c=lapack_template(
        "svd.c.j2", _svd_c, error=lambda node: (MemoryError, "svd: no memory for its scratch")
    ),
)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular values s (descending) of (batches of) M x N matrices and, with
    `compute_uv`, their singular vectors: tensor = u diag(s) v^T. TensorFlow's order: s, u,
    v (v, not numpy's vh = v^T); u is M x min(M, N) and v N x min(M, N), or M x M and N x N
    with `full_matrices`. Without `compute_uv`, s alone.

    >>> s, u, v = tt.linalg.svd(tt.constant([[3.0, 0.0], [0.0, -4.0]]))
    >>> s.numpy()
    array([4., 3.], dtype=float32)
    """
    x = as_tensor(tensor)
    check_matrices("svd", "tensor", x, square=False)
    attrs = {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}
    results = apply(SVD, (x,), attrs)
    if not compute_uv:
        return get(results, 0)
    s, u, v = unpack(results)
    return s, u, v


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of (batches of) symmetric matrices: `eigh`'s first result."""
    return eigh(tensor)[0]
