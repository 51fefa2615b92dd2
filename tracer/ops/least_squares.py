"""`tt.linalg.pinv` and `tt.linalg.lstsq`, composed of tracer's decompositions (svd,
cholesky) and products, so they run eagerly, compiled and in exported C and differentiate
through their parts, as TensorFlow's do."""

import numpy as np

from tracer.ops import array_ops, math_ops
from tracer.ops.convert import as_tensor
from tracer.ops.decomposition_ops import svd
from tracer.ops.factorization_ops import cholesky, cholesky_solve
from tracer.ops.linalg_ops import matmul
from tracer.ops.reduction_ops import reduce_max


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of (batches of) M x N matrices, from their SVD:
    v diag(1/s) u^T, singular values at or below `rcond` times the largest counted as 0.
    `rcond` defaults to TensorFlow's 10 * max(M, N) * the dtype's epsilon.

    >>> tt.linalg.pinv(tt.constant([[2.0, 0.0], [0.0, 0.0]])).numpy()
    array([[0.5, 0. ],
           [0. , 0. ]], dtype=float32)
    """
    a = as_tensor(a)
    if a.ndim < 2:
        raise ValueError(f"tt.linalg.pinv takes matrices, not a tensor of shape {tuple(a.shape)}")
    if rcond is None:
        rows, columns = a.shape[-2], a.shape[-1]
        rcond = 10.0 * max(rows, columns) * float(np.finfo(a.dtype.as_numpy_dtype).eps)
    s, u, v = svd(a)
    cutoff = reduce_max(s, axis=-1, keepdims=True) * rcond
    kept = math_ops.greater(s, cutoff)
    inverse = math_ops.where(kept, 1.0 / math_ops.where(kept, s, 1.0), 0.0)
    return matmul(v * inverse[..., None, :], u, transpose_b=True)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """X minimizing ||matrix X - rhs||^2 + l2_regularizer ||X||^2 for (batches of) M x N
    matrices, by the normal equations and a Cholesky factorization, as TensorFlow's `fast`
    path: (A^T A + l2 I)^-1 A^T B where M >= N, A^T (A A^T + l2 I)^-1 B where M < N (the
    least-norm solution). It needs A of full rank (or l2 > 0). With `fast=False`, the
    minimum-norm least-squares solution for any rank, pinv(A) B (TensorFlow's complete
    orthogonal factorization gives the same X; as there, `l2_regularizer` is ignored), and
    differentiable through the SVD, where TensorFlow's gradient raises.
    """
    a, b = as_tensor(matrix), as_tensor(rhs)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(
            "tt.linalg.lstsq takes a matrix and a right-hand side of rank 2 or more, not "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    if not fast:
        return matmul(pinv(a), b)
    rows, columns = a.shape[-2], a.shape[-1]
    tall = not (isinstance(rows, int) and isinstance(columns, int)) or rows >= columns
    size = columns if tall else rows
    gram = matmul(a, a, transpose_a=tall, transpose_b=not tall)
    if not (isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0):  # (a tensor too)
        gram = gram + array_ops.eye(size, dtype=a.dtype) * l2_regularizer
    factor = cholesky(gram)
    if tall:
        return cholesky_solve(factor, matmul(a, b, transpose_a=True))
    return matmul(a, cholesky_solve(factor, b), transpose_a=True)
