"""Square-matrix factorizations through LAPACK, as in `tf.linalg`: four primitives

    cholesky          L with A = L L^T, from A's lower triangle (LAPACK potrf)
    triangular_solve  X with op(A) X = B, A lower or upper triangular (BLAS trsm)
    solve             X with op(A) X = B, by LU with partial pivoting (getrf, getrs)
    slogdet           (sign, log |det A|), by LU (getrf); a node of two results

and their compositions: cholesky_solve (two triangular solves), inv (a solve of the
identity), det (sign * exp(log |det|)) and logdet (2 sum log diag(cholesky)). Matrices are
the last two axes, batched over the leading ones; float32 and float64.

Every gradient is written with these primitives and matmul (TensorFlow's formulas), so
gradients of every order follow. The numpy kernels call np.linalg; the C calls LAPACKE and
CBLAS from the BLAS the module links (scipy-openblas32), or plain C where none is linked
(exported C without `<PREFIX>_USE_LAPACKE`, a build without scipy-openblas32).

Errors: a matrix that is not positive definite (cholesky, logdet) or exactly singular
(solve, inv) raises np.linalg.LinAlgError (also tt.errors.InvalidArgumentError), eagerly from the kernel and in compiled code
through the kernel's error code, with the same message (compiled code adds the line).

A NaN gives TensorFlow's values in every backend, whatever LAPACK makes of it: slogdet's
sign and log |det| are both NaN, and solve and inv give all-NaN solutions (TensorFlow raises
instead where the NaN is at [0, 0], its first pivot; see `_solve_kernel`).
"""

import collections

import numpy as np

from codegen import array_blas, array_linalg, forms
from codegen.ctypes import MATH_SUFFIX, compute, storage
from runtime.kernels import quiet
from tracer.errors import as_tf
from tracer.ir import dims
from tracer.ops import array_ops, math_ops, shapes
from tracer.ops.broadcast_ops import broadcast_to, reduce_sum
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.core import apply
from tracer.ops.linalg_ops import GEMM_PARALLEL_MIN, matmul
from tracer.ops.matrix_ops import band_mask, band_part, diag_part, matrix_transpose
from tracer.ops.registry import OPS, OUT, primitive
from tracer.ops.tuple_ops import TupleCotangent, TupleValue, get, tuple_type

FLOATING = ("float32", "float64")
NOT_POSITIVE_DEFINITE = "cholesky: the input is not positive definite"
NOT_INVERTIBLE = "solve: the input matrix is not invertible"
LinAlgError = np.linalg.LinAlgError


# --- checks, shared by the shape rules and the public functions ---------------------------


def _fail(name, error, message):
    """Raise `error(message)`, prefixed with the public function's `name` where one is given
    (a shape rule gives none: `apply` adds the op's name and the user's line)."""
    raise error(_named(name, message))


def _named(name, message):
    return f"{name}: {message}" if name else message


def _check_same(name, first, second, message):
    """`_fail` with ValueError(message()) where the sizes `first` and `second` differ
    (dims.SizesDiffer where one is unknown: a trace may take them for equal)."""
    dims.check_same(first, second, lambda: _named(name, message()))


def check_floating(name, argument, x):
    if x.dtype.name not in FLOATING:
        _fail(name, TypeError, f"`{argument}` must be float32 or float64, not {x.dtype.name}")


def check_matrices(name, argument, x, square=True):
    """`x` is a (batch of) floating matrices, square unless `square` is False."""
    check_floating(name, argument, x)
    if len(x.shape) < 2:
        _fail(
            name,
            ValueError,
            f"`{argument}` must be a (batch of) matrices, of rank 2 or more; its shape is "
            f"{tuple(x.shape)}",
        )
    if square:
        _check_same(
            name,
            x.shape[-1],
            x.shape[-2],
            lambda: (
                f"`{argument}` must be a (batch of) square matrices; its shape is {tuple(x.shape)}"
            ),
        )


def _check_system(name, a, b, same_batch):
    """`a` square matrices and `b` right-hand sides of as many rows, of one dtype; with
    `same_batch`, of the same batch shape."""
    check_matrices(name, "matrix", a)
    check_matrices(name, "rhs", b, square=False)
    if a.dtype != b.dtype:
        _fail(
            name,
            TypeError,
            f"`matrix` is {a.dtype.name} but `rhs` is {b.dtype.name}; they must have the "
            "same dtype",
        )
    _check_same(
        name,
        a.shape[-1],
        b.shape[-2],
        lambda: (
            f"`rhs` has {b.shape[-2]} rows where `matrix` of shape {tuple(a.shape)} needs "
            f"{a.shape[-1]}"
        ),
    )
    if same_batch and a.shape[:-2] != b.shape[:-2]:
        _fail(
            name,
            ValueError,
            f"`matrix` and `rhs` must have the same batch shape, not {tuple(a.shape[:-2])} "
            f"and {tuple(b.shape[:-2])}",
        )


def _infer_square(attrs, x):
    check_matrices(None, "input", x)
    return x.shape, x.dtype


def _infer_system(attrs, a, b):
    _check_system(None, a, b, same_batch=True)
    return b.shape, b.dtype


# --- helpers of the rules --------------------------------------------------------------


def lower_half_diagonal(m):
    """Phi(M): the lower triangle of M with its diagonal halved (the map of Cholesky's
    derivative, L^-1 dL = Phi(L^-1 dA L^-T))."""
    return band_part(m, -1, 0) - 0.5 * band_part(m, 0, 0)


def _triangle(m, lower):
    return band_part(m, -1, 0) if lower else band_part(m, 0, -1)


def identity_like(x):
    """Identity matrices of x's shape and dtype, made where they are read (never stored)."""
    return array_ops.cast(band_mask(x.shape, 0, 0), x.dtype)


def _expand_matrix(x):
    """(...) -> (..., 1, 1): a value per matrix, broadcast over its elements."""
    return array_ops.expand_dims(array_ops.expand_dims(x, -1), -1)


def _each_batched(node, args, flags, size):
    """Operands of an op whose inputs share one batch shape: the unbatched ones broadcast
    to the batch (a jacobian's leading axis is one more batch axis)."""
    return tuple(
        arg if batched else broadcast_to(arg, (size,) + tuple(arg.shape))
        for arg, batched in zip(args, flags)
    )


def batch_rule(node, args, flags, size):
    """The batching rule of an op batched over its leading axes."""
    return apply(OPS[node.op], _each_batched(node, args, flags, size), node.attrs)


# --- the C forms -----------------------------------------------------------------------


def lapack_context(node, blas, **values):
    """What every LAPACK template reads: the storage type, LAPACK's type letter, libm's
    suffix, the batch count and the order `n` of the (first input's) square matrices; `values`
    add to them (or replace `n`)."""
    matrix = node.inputs[0]
    context = dict(
        T=storage(matrix.dtype),
        f=MATH_SUFFIX[compute(matrix.dtype)],
        letter={"float32": "s", "float64": "d"}[matrix.dtype.name],
        lapack=bool(blas),
        batch=dims.size(matrix.shape[:-2]),
        n=matrix.shape[-1],
    )
    return {**context, **values}


def _system_context(node, blas):
    adjoint = node.attrs.get("adjoint", False)
    lower = node.attrs.get("lower", True)
    if not array_blas.fits_ints(*node.shape[-2:]):
        blas = None  # the substitution's indices are int64
    context = lapack_context(
        node,
        blas,
        k=node.shape[-1],
        adjoint=adjoint,
        lower=lower,
        # the triangular system op(A) is lower triangular: solved first row first
        forward=lower != adjoint,
        parallel_min=GEMM_PARALLEL_MIN,
    )
    letter = context["letter"]
    halves = dict(T=context["T"], letter=letter, base=SOLVE_BY_TRSM_ROWS)
    context["shared_kernel"] = (f"tr_solve_halves_{letter}", "solve_halves.c.j2", halves)
    # where a module calls the installed kernels' triangular_solves instead
    # (codegen/conv_kernels.py, `_solve_parts`): its place in their table
    context.update(table_variable=None, table_index=None)
    return context


# a triangle of at most these rows is trsm's; a larger one is solved by halves, a GEMM
# between them (templates/solve_halves.c.j2; runtime/conv_kernels.c's SOLVE_BY_TRSM_ROWS
# repeats it)
SOLVE_BY_TRSM_ROWS = 64


def lapack_template(template, context, error=None):
    """A template of a LAPACK op: it links the module's BLAS (scipy-openblas32's LAPACKE)."""
    return forms.Template(template, context, error=error, uses_blas=True)


# --- cholesky ----------------------------------------------------------------------------


def _cholesky_grad(node, g, chol):
    """TensorFlow's: dA = sym(L^-T Phi(L^T dL) L^-1), with two triangular solves in place
    of L's inverse, and symmetrized (the forward reads the lower triangle of a symmetric A)."""
    middle = lower_half_diagonal(matmul(chol, g, transpose_a=True))
    left = apply_triangular_solve(chol, middle, lower=True, adjoint=True)  # L^-T Phi
    both = matrix_transpose(apply_triangular_solve(chol, matrix_transpose(left), True, True))
    return (0.5 * (both + matrix_transpose(both)),)


def _cholesky_jvp(node, tangents, inputs, out):
    """dL = L Phi(L^-1 dA L^-T), with dA symmetrized as the gradient rule assumes."""
    (t,), chol = tangents, out
    t = 0.5 * (t + matrix_transpose(t))
    left = apply_triangular_solve(chol, t, lower=True, adjoint=False)  # L^-1 dA
    inner = matrix_transpose(apply_triangular_solve(chol, matrix_transpose(left), True, False))
    return matmul(chol, lower_half_diagonal(inner))


def symmetric_from_lower(x):
    """The symmetric matrices of x's lower triangles (what LAPACK's 'L' routines read)."""
    lower = np.tril(x)
    return lower + np.swapaxes(np.tril(x, -1), -1, -2)


def _cholesky_kernel(x):
    """LAPACK's potrf as the compiled backend calls it, the same bits
    (codegen/array_linalg.py), or numpy's factorization where that library is not there."""
    factors = array_linalg.cholesky(x)
    if factors is None:
        try:
            return np.linalg.cholesky(symmetric_from_lower(x))
        except LinAlgError:
            factors = False
    if factors is False:
        raise as_tf(LinAlgError)(NOT_POSITIVE_DEFINITE)
    return factors


CHOLESKY = primitive(
    "cholesky",
    _infer_square,
    grad=_cholesky_grad,
    saves=(OUT,),
    jvp=_cholesky_jvp,
    batch=batch_rule,
    kernel=_cholesky_kernel,
    c=lapack_template(
        "cholesky.c.j2",
        lapack_context,
        error=lambda node: (LinAlgError, NOT_POSITIVE_DEFINITE),
    ),
)


def cholesky(input, name=None):
    """The lower-triangular L with L L^T = input, for (batches of) symmetric positive
    definite matrices; only the lower triangle of `input` is read.

    >>> tt.linalg.cholesky(tt.constant([[4.0, 2.0], [2.0, 5.0]])).numpy()
    array([[2., 0.],
           [1., 2.]], dtype=float32)
    """
    x = as_tensor(input)
    check_matrices("cholesky", "input", x)
    return apply(CHOLESKY, (x,), {})


# --- triangular_solve --------------------------------------------------------------------


def _triangular_solve_grad(node, g, a, x):
    """TensorFlow's: dB = op(A)^-T g by the transposed solve; dA = -dB X^T (or -X dB^T for
    the adjoint), on A's triangle only."""
    lower, adjoint = node.attrs["lower"], node.attrs["adjoint"]
    gb = apply_triangular_solve(a, g, lower, not adjoint)
    if adjoint:
        ga = -matmul(x, gb, transpose_b=True)
    else:
        ga = -matmul(gb, x, transpose_b=True)
    return _triangle(ga, lower), gb


def _triangular_solve_jvp(node, tangents, inputs, out):
    """dX = op(A)^-1 (dB - op(dA) X), dA on A's triangle."""
    (ta, tb), (a, _) = tangents, inputs
    lower, adjoint = node.attrs["lower"], node.attrs["adjoint"]
    rhs = tb
    if ta is not None:
        moved = matmul(_triangle(ta, lower), out, transpose_a=adjoint)
        rhs = -moved if rhs is None else rhs - moved
    return apply_triangular_solve(a, rhs, lower, adjoint)


TRIANGLE_BLOCK = 64  # rows; a triangle this small goes to np.linalg.solve whole


def _solve_triangle(a, b, lower):
    """x with a x = b for a (..., n, n) triangular with a finite, nonzero diagonal: the two
    diagonal blocks by recursion, the block beside them once, through a matrix product. That
    is n^2 k multiply-adds in BLAS, where np.linalg.solve's LU would factor the triangle
    again (n^3 more)."""
    n = a.shape[-1]
    if n <= TRIANGLE_BLOCK:
        return np.linalg.solve(a, b)
    h = n // 2
    if lower:
        top = _solve_triangle(a[..., :h, :h], b[..., :h, :], lower)
        bottom = _solve_triangle(a[..., h:, h:], b[..., h:, :] - a[..., h:, :h] @ top, lower)
    else:
        bottom = _solve_triangle(a[..., h:, h:], b[..., h:, :], lower)
        top = _solve_triangle(a[..., :h, :h], b[..., :h, :] - a[..., :h, h:] @ bottom, lower)
    return np.concatenate([top, bottom], axis=-2)


@quiet
def _triangular_solve_kernel(a, b, lower, adjoint):
    """BLAS's trsm, as the compiled code calls it (codegen/array_linalg.py), for float32 and
    float64. Where that library is not there: the triangle solved by blocks (`_solve_triangle`)
    where every value is finite and the diagonal has no zero; otherwise substitution, as
    trsm and the plain C compute it: a zero on the diagonal gives TensorFlow's inf and NaN
    where np.linalg.solve would raise, and a NaN or Inf reaches only the rows that depend on
    it (np.linalg.solve's pivoting would spread it to every row)."""
    solved = array_linalg.triangular_solve(np.asarray(a), np.asarray(b), lower, adjoint)
    if solved is not None:
        return solved
    a = np.tril(a) if lower else np.triu(a)
    if adjoint:
        a = np.swapaxes(a, -1, -2)
    diagonal = np.diagonal(a, axis1=-2, axis2=-1)
    if np.all(diagonal != 0) and np.isfinite(a).all() and np.isfinite(b).all():
        return _solve_triangle(a, b, lower != adjoint)
    n = a.shape[-1]
    # NOTE: the diagonal stays out of the products (an infinite a_ii times the unknown x_i,
    # still 0, would be NaN), and the products are elementwise: no BLAS skips a zero factor
    off_diagonal = np.where(np.eye(n, dtype=bool), 0, a)
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], b.dtype)
    rows = range(n) if lower != adjoint else range(n - 1, -1, -1)
    for i in rows:
        known = np.sum(off_diagonal[..., i, :, None] * x, axis=-2)
        x[..., i, :] = (b[..., i, :] - known) / diagonal[..., i, None]
    return x


TRIANGULAR_SOLVE = primitive(
    "triangular_solve",
    _infer_system,
    grad=_triangular_solve_grad,
    saves=(0, OUT),
    jvp=_triangular_solve_jvp,
    batch=batch_rule,
    kernel=_triangular_solve_kernel,
    c=lapack_template("triangular_solve.c.j2", _system_context),
)


def apply_triangular_solve(a, b, lower, adjoint):
    return apply(TRIANGULAR_SOLVE, (a, b), {"lower": bool(lower), "adjoint": bool(adjoint)})


def _broadcast_batches(name, a, b):
    """`a` and `b` broadcast to one batch shape (the matrices' own axes kept)."""
    try:
        batch = shapes.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        _fail(
            name,
            ValueError,
            f"the batch shapes of `matrix` {tuple(a.shape[:-2])} and `rhs` "
            f"{tuple(b.shape[:-2])} cannot be broadcast together",
        )
    return (
        broadcast_to(a, batch + tuple(a.shape[-2:])),
        broadcast_to(b, batch + tuple(b.shape[-2:])),
    )


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with `matrix` X = `rhs` (or `matrix`^T X = `rhs` with `adjoint`), for triangular
    matrices: only the lower (`lower`) or upper triangle is read. The batch axes broadcast.
    A zero on the diagonal gives inf and NaN, as in TensorFlow (no error).

    >>> a = tt.constant([[2.0, 0.0], [1.0, 4.0]])
    >>> tt.linalg.triangular_solve(a, tt.constant([[2.0], [5.0]])).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    a, b = as_tensors(matrix, rhs)
    _check_system("triangular_solve", a, b, same_batch=False)
    a, b = _broadcast_batches("triangular_solve", a, b)
    return apply_triangular_solve(a, b, lower, adjoint)


def cholesky_solve(chol, rhs, name=None):
    """X with A X = `rhs`, for A = `chol` `chol`^T given by its Cholesky factor (lower):
    two triangular solves. The batch axes broadcast.

    >>> chol = tt.linalg.cholesky(tt.constant([[4.0, 2.0], [2.0, 5.0]]))
    >>> tt.linalg.cholesky_solve(chol, tt.constant([[6.0], [7.0]])).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    a, b = as_tensors(chol, rhs)
    _check_system("cholesky_solve", a, b, same_batch=False)
    a, b = _broadcast_batches("cholesky_solve", a, b)
    return apply_triangular_solve(a, apply_triangular_solve(a, b, True, False), True, True)


# --- solve, inv --------------------------------------------------------------------------


def _solve_grad(node, g, a, x):
    """TensorFlow's: dB = solve(A, g) with the other adjoint; dA = -dB X^T (or -X dB^T)."""
    adjoint = node.attrs["adjoint"]
    gb = _solve(a, g, not adjoint)
    if adjoint:
        return -matmul(x, gb, transpose_b=True), gb
    return -matmul(gb, x, transpose_b=True), gb


def _solve_jvp(node, tangents, inputs, out):
    """dX = op(A)^-1 (dB - op(dA) X)."""
    (ta, tb), (a, _) = tangents, inputs
    adjoint = node.attrs["adjoint"]
    rhs = tb
    if ta is not None:
        moved = matmul(ta, out, transpose_a=adjoint)
        rhs = -moved if rhs is None else rhs - moved
    return _solve(a, rhs, adjoint)


def _solve_kernel(a, b, adjoint):
    """np.linalg.solve, where a NaN in a matrix makes all of its X NaN, as in TensorFlow and
    the C form (templates/lu_solve.c.j2): LAPACK would spread it to some rows only, or read
    it as a zero pivot and raise.

    NOTE: TensorFlow raises "not invertible" where the NaN is at [0, 0] (its first pivot,
    which its smallest-pivot check then reads); tracer gives NaN there too, so that a NaN
    flows through a program and its gradients (det's solves with its matrix), the same in
    every backend."""
    has_nan = np.isnan(a).any(axis=(-2, -1))
    if has_nan.any():
        a = np.where(has_nan[..., None, None], np.eye(a.shape[-1], dtype=a.dtype), a)
    try:
        x = np.linalg.solve(np.swapaxes(a, -1, -2) if adjoint else a, b)
    except LinAlgError:
        raise as_tf(LinAlgError)(NOT_INVERTIBLE) from None
    return np.where(has_nan[..., None, None], np.nan, x).astype(x.dtype, copy=False)


SOLVE = primitive(
    "solve",
    _infer_system,
    grad=_solve_grad,
    saves=(0, OUT),
    jvp=_solve_jvp,
    batch=batch_rule,
    kernel=_solve_kernel,
    c=lapack_template(
        "lu_solve.c.j2", _system_context, error=lambda node: (LinAlgError, NOT_INVERTIBLE)
    ),
)


def _solve(a, b, adjoint):
    return apply(SOLVE, (a, b), {"adjoint": bool(adjoint)})


def solve(matrix, rhs, adjoint=False, name=None):
    """X with `matrix` X = `rhs` (`matrix`^T X = `rhs` with `adjoint`), by LU factorization
    with partial pivoting. As in TensorFlow, the batch shapes must be equal, an exactly
    singular matrix raises (np.linalg.LinAlgError), and a NaN in a matrix makes all of its X
    NaN.

    >>> tt.linalg.solve(tt.constant([[2.0, 1.0], [1.0, 3.0]]), tt.constant([[3.0], [4.0]])).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    a, b = as_tensors(matrix, rhs)
    _check_system("solve", a, b, same_batch=True)
    return _solve(a, b, adjoint)


def inv(input, adjoint=False, name=None):
    """The inverse of (batches of) square matrices (of their transposes with `adjoint`):
    a solve of the identity, so a singular matrix raises as `solve` does (naming solve).

    >>> tt.linalg.inv(tt.constant([[2.0, 0.0], [0.0, 4.0]])).numpy()
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    x = as_tensor(input)
    check_matrices("inv", "input", x)
    return _solve(x, identity_like(x), adjoint)


# --- slogdet, det, logdet ----------------------------------------------------------------

LogMatrixDeterminant = collections.namedtuple(
    "LogMatrixDeterminant", ["sign", "log_abs_determinant"]
)


def _infer_slogdet(attrs, x):
    check_matrices(None, "input", x)
    batch = tuple(x.shape[:-2])
    return (), tuple_type([(batch, x.dtype), (batch, x.dtype)])


def _slogdet_grad(node, g, a):
    """TensorFlow's: d log|det A| = g A^-T; the sign is piecewise constant."""
    g_log = g.parts[1]
    if g_log is None:
        return (None,)
    return (_expand_matrix(g_log) * _solve(a, identity_like(a), adjoint=True),)


def _slogdet_jvp(node, tangents, inputs, out):
    """d log|det A| = trace(A^-1 dA)."""
    (t,), (a,) = tangents, inputs
    return TupleCotangent([None, reduce_sum(diag_part(_solve(a, t, adjoint=False)), -1)])


@quiet
def _slogdet_kernel(x):
    """np.linalg.slogdet, with TensorFlow's NaN for both results of a matrix that holds a NaN
    (or whose factorization makes one, inf - inf), as the C form gives them: LAPACK may read
    a NaN pivot as a zero one (sign 0, log -inf) or keep the sign of the others."""
    sign, log_abs = np.linalg.slogdet(x)
    undefined = np.isnan(x).any(axis=(-2, -1)) | np.isnan(log_abs)
    sign, log_abs = np.where(undefined, np.nan, sign), np.where(undefined, np.nan, log_abs)
    return TupleValue([np.asarray(sign, x.dtype), np.asarray(log_abs, x.dtype)])


SLOGDET = primitive(
    "slogdet",
    _infer_slogdet,
    grad=_slogdet_grad,
    saves=(0,),
    jvp=_slogdet_jvp,
    batch=batch_rule,
    kernel=_slogdet_kernel,
    c=lapack_template(
        "slogdet.c.j2",
        lapack_context,
        error=lambda node: (MemoryError, "slogdet: no memory for the LU factorization"),
    ),
)


def slogdet(input, name=None):
    """(sign, log |det|) of (batches of) square matrices, by LU factorization: a singular
    matrix gives sign 0 and log |det| -inf, and one holding a NaN gives NaN for both, as in
    TensorFlow.

    >>> sign, log_abs = tt.linalg.slogdet(tt.constant([[-2.0, 0.0], [0.0, 3.0]]))
    >>> float(sign), round(float(log_abs), 4)
    (-1.0, 1.7918)
    """
    x = as_tensor(input)
    check_matrices("slogdet", "input", x)
    results = apply(SLOGDET, (x,), {})
    return LogMatrixDeterminant(get(results, 0), get(results, 1))


def det(input, name=None):
    """The determinant of (batches of) square matrices: sign * exp(log |det|) of `slogdet`.
    Its gradient det A^-T, as TensorFlow's, raises for a singular matrix.

    >>> float(tt.linalg.det(tt.constant([[2.0, 1.0], [1.0, 3.0]])))
    5.0
    """
    x = as_tensor(input)
    check_matrices("det", "input", x)
    sign, log_abs = slogdet(x)
    return sign * math_ops.exp(log_abs)


def logdet(matrix, name=None):
    """log det of (batches of) symmetric positive definite matrices: 2 sum log diag(L) of
    their Cholesky factor L (a matrix that is not positive definite raises, as cholesky).

    >>> round(float(tt.linalg.logdet(tt.constant([[4.0, 2.0], [2.0, 5.0]]))), 4)
    2.7726
    """
    x = as_tensor(matrix)
    check_matrices("logdet", "matrix", x)
    diagonal = diag_part(cholesky(x))
    return 2.0 * reduce_sum(math_ops.log(diagonal), axis=-1)
