"""Held-out: `tf.linalg` values and gradients on small seeded matrices: float32, float64
and complex64; single matrices and [2, 3, 3] batches; well-conditioned, ill-conditioned
(Hilbert), symmetric positive definite, singular, tall and wide. Products (matmul with
transposes, adjoints and batch broadcasting, matvec, tensordot, einsum), determinants,
inverses and solvers, factorizations (Cholesky, LU, QR, SVD, eigen-decompositions),
least squares, rank, norms, diagonal and band manipulation, matrix functions (expm, logm,
sqrtm), tridiagonal and banded solvers, a few LinearOperators, and GradientTape gradients
of the differentiable ones in float64.

Factors that are only defined up to sign (or phase) are printed in a canonical form: QR
with a non-negative diagonal of R, SVD and eigenvector columns scaled so that their
largest entry is real and positive; eigenvalues from `eig`/`eigvals` are sorted.

Each case runs eagerly and inside tf.function (tracer: once per backend, C and the numpy
interpreter), taking its tensors as arguments, and prints one line per mode:
`case [mode] dtype shape values` (values to 6 significant digits) or
`case [mode] ERR TypeName: message`, so the two engines' outputs can be compared line by
line. An optional second argument keeps only the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

CASES = []


# ---- seeded inputs -------------------------------------------------------------------------
rng = np.random.default_rng(20240611)


def gauss(*shape):
    return rng.standard_normal(shape)


def spd(n, batch=()):
    m = gauss(*batch, n, n)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


A3 = gauss(3, 3) + 2.0 * np.eye(3)  # well conditioned
B3 = gauss(3, 2)
A_BATCH = gauss(2, 3, 3) + 2.0 * np.eye(3)
B_BATCH = gauss(2, 3, 2)
SPD3 = spd(3)
SPD_BATCH = spd(3, (2,))
SYM3 = (lambda m: m + m.T)(gauss(3, 3))
HILB5 = hilbert(5)  # condition number ~ 5e5
HILB4 = hilbert(4)
SING3 = gauss(3, 2) @ gauss(2, 3)  # rank 2
ZERO_ROW = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])  # exactly singular
TALL = gauss(4, 3)
WIDE = gauss(3, 4)
RHS4 = gauss(4, 2)
LOWER3 = np.tril(gauss(3, 3)) + 3.0 * np.eye(3)
UPPER3 = np.triu(gauss(3, 3)) + 3.0 * np.eye(3)
C3 = (gauss(3, 3) + 1j * gauss(3, 3) + 2.0 * np.eye(3)).astype(np.complex64)
CB3 = (gauss(3, 2) + 1j * gauss(3, 2)).astype(np.complex64)
HERM3 = (lambda m: (m @ m.conj().T + 3.0 * np.eye(3)).astype(np.complex64))(
    gauss(3, 3) + 1j * gauss(3, 3)
)
VEC3 = gauss(3)
TRI_DIAGS = np.stack([np.r_[gauss(3), 0.0], gauss(4) + 4.0, np.r_[0.0, gauss(3)]])  # [3, 4]


def f32(a):
    return np.asarray(a, np.float32)


def f64(a):
    return np.asarray(a, np.float64)


# ---- canonical forms of factors defined up to sign --------------------------------------


def phase_of_largest(columns):
    """The unit factor that makes each column's largest-magnitude entry real positive."""
    pick = np.argmax(np.abs(columns), axis=-2)[..., None, :]
    lead = np.take_along_axis(columns, pick, axis=-2)
    unit = lead / np.where(np.abs(lead) == 0, 1, np.abs(lead))
    return np.where(np.abs(lead) == 0, 1, unit)


def canon_columns(v):
    return v / phase_of_largest(v)


def canon_qr(outs):
    q, r = outs
    d = np.diagonal(r, axis1=-2, axis2=-1)
    unit = np.where(np.abs(d) == 0, 1, d / np.where(np.abs(d) == 0, 1, np.abs(d)))
    k = d.shape[-1]
    q = q.copy()
    q[..., :, :k] = q[..., :, :k] * unit[..., None, :]
    r = r / unit[..., :, None] if r.shape[-2] == k else r
    if q.shape[-1] > k:  # extra columns of a full Q: each one is only defined up to sign
        q[..., :, k:] = canon_columns(q[..., :, k:])
    return q, r


def canon_svd(outs):
    s, u, v = outs
    k = s.shape[-1]
    unit = phase_of_largest(v[..., :, :k])
    u, v = u.copy(), v.copy()
    u[..., :, :k] = u[..., :, :k] * np.conj(unit)
    v[..., :, :k] = v[..., :, :k] / unit
    for m in (u, v):
        if m.shape[-1] > k:
            m[..., :, k:] = canon_columns(m[..., :, k:])
    return s, u, v


def canon_eigh(outs):
    w, v = outs
    return w, canon_columns(v)


def sorted_eigvals(w):
    w = np.asarray(w)
    order = np.lexsort((np.round(w.imag, 5), np.round(w.real, 5)), axis=-1)
    return np.take_along_axis(w, order, axis=-1)


def canon_eig(outs):
    w, v = outs
    w, v = np.asarray(w), np.asarray(v)
    order = np.lexsort((np.round(w.imag, 5), np.round(w.real, 5)), axis=-1)
    w = np.take_along_axis(w, order, axis=-1)
    v = np.take_along_axis(v, order[..., None, :], axis=-1)
    return w, canon_columns(v)


# ---- registration, printing -------------------------------------------------------------


def case(name, *inputs, post=None):
    """Registers `fn(*tensors)`; inputs are numpy arrays (their dtype is kept); `post`
    maps the numpy results to a sign-insensitive form before printing."""

    def register(fn):
        CASES.append((name, fn, inputs, post))
        return fn

    return register


def weighted_sum(y):
    """A scalar that depends on every entry of `y` with a distinct weight."""
    shape = tuple(int(d) for d in y.shape)
    # irregular weights: a row- or column-separable pattern would cancel against
    # orthonormality (sum of U**2 over a row of an orthogonal U is constant)
    w = (1.0 + 0.5 * np.sin(1.7 * np.arange(int(np.prod(shape))) + 0.3)).reshape(shape)
    return tf.reduce_sum(y * tf.constant(w, dtype=y.dtype))


def grad_case(name, *inputs):
    """Registers the gradient of `weighted_sum(fn(*tensors))` with respect to every input."""

    def register(fn):
        def gradient(*args):
            with tf.GradientTape() as tape:
                for a in args:
                    tape.watch(a)
                loss = weighted_sum(fn(*args))
            return tuple(tape.gradient(loss, list(args)))

        CASES.append((name, gradient, inputs, None))
        return fn

    return register


def fmt(x):
    if isinstance(x, (complex, np.complexfloating)):
        return f"{x.real:.6g}{x.imag:+.6g}j"
    if isinstance(x, (float, np.floating)):
        return f"{x:.6g}"
    return str(x)


def to_numpy(v):
    if isinstance(v, (tuple, list)):
        return tuple(to_numpy(x) for x in v)
    if v is None:
        return None
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def render(v):
    if isinstance(v, (tuple, list)):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    if v is None:
        return "None"
    a = np.asarray(v)
    return f"{a.dtype.name} {tuple(a.shape)} [{' '.join(fmt(x) for x in a.ravel())}]"


def run_case(name, fn, inputs, post):
    try:
        args = [tf.constant(a) for a in inputs]
    except Exception as e:  # report it and go on
        for mode, _ in MODES:
            print(f"{name} [{mode}] inputs {failure(e)}")
        return
    for mode, wrap in MODES:
        try:
            f = fn if wrap is None else wrap(fn)
            out = to_numpy(f(*args))
            text = render(out if post is None else post(out))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


# ---- products -----------------------------------------------------------------------------
case("matmul_f32", f32(A3), f32(B3))(lambda a, b: tf.linalg.matmul(a, b))
case("matmul_transpose_ab_f64", f64(TALL), f64(WIDE))(
    lambda a, b: tf.linalg.matmul(a, b, transpose_a=True, transpose_b=True)
)
case("matmul_adjoint_c64", C3, CB3)(
    lambda a, b: (tf.linalg.matmul(a, b, adjoint_a=True), tf.linalg.matmul(b, a, adjoint_a=True))
)
case("matmul_adjoint_b_c64", C3, C3)(lambda a, b: tf.linalg.matmul(a, b, adjoint_b=True))
case("matmul_batch_broadcast", f64(A_BATCH), f64(B3), f64(gauss(4, 1, 3, 3)))(
    lambda a, b, c: (tf.linalg.matmul(a, b), tf.shape(tf.linalg.matmul(c, a)))
)
case("matvec_f32", f32(A_BATCH), f32(VEC3))(
    lambda a, x: (tf.linalg.matvec(a, x), tf.linalg.matvec(a, x, transpose_a=True))
)
case("tensordot_axes", f64(TALL), f64(WIDE), f64(A3))(
    lambda a, b, c: (
        tf.tensordot(a, b, axes=1),
        tf.tensordot(a, b, axes=[[0], [1]]),
        tf.tensordot(c, c, axes=2),
        tf.shape(tf.tensordot(c, b, axes=0)),
    )
)
case("einsum_trace_outer", f64(A3), f64(VEC3))(
    lambda a, v: (
        tf.einsum("ii->", a),
        tf.einsum("ii->i", a),
        tf.einsum("i,j->ij", v, v),
        tf.einsum("ij,j->i", a, v),
    )
)
case("einsum_batch", f32(A_BATCH), f32(B_BATCH))(
    lambda a, b: (
        tf.einsum("bij,bjk->bik", a, b),
        tf.einsum("bii->b", a),
        tf.einsum("...ij,...jk->...ik", a, b),
        tf.einsum("bij->bji", b),
    )
)

# ---- determinants, inverses, solvers ----------------------------------------------------
case("det_f32_batch", f32(A_BATCH))(lambda a: tf.linalg.det(a))
case("det_f64_hilbert", f64(HILB5))(lambda a: tf.linalg.det(a))
case("det_singular", f64(ZERO_ROW), f32(SING3))(
    lambda a, b: (tf.linalg.det(a), tf.abs(tf.linalg.det(b)) < 1e-4)
)
case("det_c64", C3)(lambda a: tf.linalg.det(a))
case("slogdet_mixed_sign", f64(A_BATCH), f64(-SPD3))(
    lambda a, b: (tf.linalg.slogdet(a), tf.linalg.slogdet(b))
)
case("slogdet_singular", f64(ZERO_ROW))(lambda a: tf.linalg.slogdet(a))
case("logdet_spd", f64(SPD_BATCH), f32(SPD3))(
    lambda a, b: (tf.linalg.logdet(a), tf.linalg.logdet(b))
)
case("inv_f32_batch", f32(A_BATCH))(lambda a: tf.linalg.inv(a))
case("inv_adjoint_f64", f64(A3))(lambda a: tf.linalg.inv(a, adjoint=True))
case("inv_hilbert", f64(HILB4))(lambda a: tf.linalg.inv(a))
case("inv_singular", f64(ZERO_ROW))(lambda a: tf.linalg.inv(a))
case("inv_c64", C3)(lambda a: tf.linalg.inv(a))
case("pinv_tall_wide", f64(TALL), f32(WIDE), f64(SING3))(
    lambda a, b, c: (tf.linalg.pinv(a), tf.linalg.pinv(b), tf.linalg.pinv(c))
)
case("solve_f64", f64(A3), f64(B3))(
    lambda a, b: (tf.linalg.solve(a, b), tf.linalg.solve(a, b, adjoint=True))
)
case("solve_batch_f32", f32(A_BATCH), f32(B_BATCH))(lambda a, b: tf.linalg.solve(a, b))
case("solve_singular", f64(ZERO_ROW), f64(B3))(lambda a, b: tf.linalg.solve(a, b))
case("solve_c64_adjoint", C3, CB3)(lambda a, b: tf.linalg.solve(a, b, adjoint=True))
case("triangular_solve_lower_upper", f64(LOWER3), f64(UPPER3), f64(B3))(
    lambda lo, up, b: (
        tf.linalg.triangular_solve(lo, b),
        tf.linalg.triangular_solve(up, b, lower=False),
        tf.linalg.triangular_solve(lo, b, adjoint=True),
        tf.linalg.triangular_solve(up, b, lower=False, adjoint=True),
    )
)
case("triangular_solve_ignores_other_half", f32(A3), f32(B3))(
    lambda a, b: (tf.linalg.triangular_solve(a, b), tf.linalg.triangular_solve(a, b, lower=False))
)

# ---- factorizations ---------------------------------------------------------------------
case("cholesky_f64_batch", f64(SPD_BATCH))(lambda a: tf.linalg.cholesky(a))
case("cholesky_f32", f32(SPD3))(lambda a: tf.linalg.cholesky(a))
case("cholesky_c64", HERM3)(lambda a: tf.linalg.cholesky(a))
case("cholesky_not_pd", f64(-SPD3))(lambda a: tf.linalg.cholesky(a))
case("cholesky_solve", f64(SPD_BATCH), f64(B_BATCH))(
    lambda a, b: tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b)
)
case("lu_factor", f64(A3))(lambda a: tf.linalg.lu(a))
case("lu_solve_inverse", f64(A_BATCH), f64(B_BATCH))(
    lambda a, b: (
        lambda lu, p: (
            tf.linalg.lu_solve(lu, p, b),
            tf.linalg.lu_matrix_inverse(lu, p),
            tf.linalg.lu_reconstruct(lu, p),
        )
    )(*tf.linalg.lu(a))
)
case("qr_reduced_tall", f64(TALL), post=canon_qr)(lambda a: tf.linalg.qr(a))
case("qr_full_tall", f64(TALL), post=canon_qr)(lambda a: tf.linalg.qr(a, full_matrices=True))
case("qr_wide_f32", f32(WIDE), post=canon_qr)(lambda a: tf.linalg.qr(a))
case("qr_batch_c64", np.stack([C3, C3.T]), post=canon_qr)(lambda a: tf.linalg.qr(a))
case("svd_values_only", f64(TALL), f32(HILB5))(
    lambda a, b: (tf.linalg.svd(a, compute_uv=False), tf.linalg.svd(b, compute_uv=False))
)
case("svd_reduced_tall", f64(TALL), post=canon_svd)(lambda a: tf.linalg.svd(a))
case("svd_full_wide", f64(WIDE), post=canon_svd)(lambda a: tf.linalg.svd(a, full_matrices=True))
case("svd_batch_f32", f32(A_BATCH), post=canon_svd)(lambda a: tf.linalg.svd(a))
case("svd_c64", C3, post=canon_svd)(lambda a: tf.linalg.svd(a))
case("svd_reconstruct_singular", f64(SING3))(
    lambda a: (lambda s, u, v: (s, tf.linalg.matmul(u * s[..., None, :], v, adjoint_b=True)))(
        *tf.linalg.svd(a)
    )
)
case("eigh_f64_batch", f64(SPD_BATCH), post=canon_eigh)(lambda a: tf.linalg.eigh(a))
case("eigh_uses_lower_half", f64(A3), post=canon_eigh)(lambda a: tf.linalg.eigh(a))
case("eigh_c64", HERM3, post=canon_eigh)(lambda a: tf.linalg.eigh(a))
case("eigvalsh", f32(SYM3))(lambda a: tf.linalg.eigvalsh(a))
case("eig_real_input", f64(A3), post=canon_eig)(lambda a: tf.linalg.eig(a))
case("eigvals_rotation", f64([[0.0, -2.0], [2.0, 0.0]]), post=sorted_eigvals)(
    lambda a: tf.linalg.eigvals(a)
)

# ---- least squares, rank ----------------------------------------------------------------
case("lstsq_fast_tall", f64(TALL), f64(RHS4))(lambda a, b: tf.linalg.lstsq(a, b))
case("lstsq_slow_l2", f64(TALL), f64(RHS4))(
    lambda a, b: (
        tf.linalg.lstsq(a, b, fast=False),
        tf.linalg.lstsq(a, b, l2_regularizer=0.5),
    )
)
case("lstsq_wide_f32", f32(WIDE), f32(B3))(lambda a, b: tf.linalg.lstsq(a, b))
case("matrix_rank", f64(SING3), f64(A3), f64(HILB5), f64(TALL))(
    lambda a, b, c, d: tuple(tf.linalg.matrix_rank(x) for x in (a, b, c, d))
)

# ---- norms --------------------------------------------------------------------------------
case("norm_matrix_ords", f64(WIDE))(
    lambda a: tuple(tf.norm(a, ord=o, axis=[-2, -1]) for o in ("fro", 1, 2, np.inf))
)
case("norm_nuclear", f64(WIDE))(lambda a: tf.linalg.norm(a, ord="nuc", axis=[-2, -1]))
case("norm_vector_ords_axis", f32(A_BATCH))(
    lambda a: (
        tf.norm(a),
        tf.norm(a, ord=1, axis=1),
        tf.norm(a, ord=np.inf, axis=-1),
        tf.norm(a, ord=3, axis=0, keepdims=True),
        tf.norm(a, axis=[1, 2]),
        tf.norm(a, ord=1, axis=[2, 1]),
    )
)
case("global_norm_normalize", f64(A3), f64(VEC3))(
    lambda a, v: (
        tf.linalg.global_norm([a, v]),
        tf.linalg.normalize(a, ord=1, axis=0),
        tf.linalg.l2_normalize(v),
    )
)
case("cross", f32(gauss(2, 3)), f32(gauss(2, 3)))(lambda a, b: tf.linalg.cross(a, b))

# ---- diagonals and bands -----------------------------------------------------------------
case("trace_diag_part", f64(A_BATCH), f64(TALL))(
    lambda a, t: (tf.linalg.trace(a), tf.linalg.diag_part(a), tf.linalg.diag_part(t))
)
case("diag_k_range", f64(VEC3), f64(gauss(2, 3)))(
    lambda v, vs: (
        tf.linalg.diag(v),
        tf.linalg.diag(v, k=1),
        tf.linalg.diag(v, k=-1, num_rows=4, num_cols=5, padding_value=9.0),
        tf.linalg.diag(vs, k=(0, 1)),
    )
)
case("diag_part_k_band", f64(WIDE))(
    lambda a: (
        tf.linalg.diag_part(a, k=1),
        tf.linalg.diag_part(a, k=(-1, 1), padding_value=-1.0),
        tf.linalg.diag_part(a, k=(-1, 1), padding_value=-1.0, align="LEFT_RIGHT"),
    )
)
case("set_diag", f32(A_BATCH), f32(gauss(2, 3)), f32(WIDE), f32(gauss(2, 3)))(
    lambda a, d, w, d2: (tf.linalg.set_diag(a, d), tf.linalg.set_diag(w, d2, k=(0, 1)))
)
case("band_part_transpose", f64(WIDE), C3)(
    lambda a, c: (
        tf.linalg.band_part(a, 1, 0),
        tf.linalg.band_part(a, -1, 1),
        tf.linalg.band_part(a, 0, -1),
        tf.linalg.matrix_transpose(a),
        tf.linalg.matrix_transpose(c, conjugate=True),
        tf.linalg.adjoint(c),
    )
)

# ---- matrix functions ---------------------------------------------------------------------
case("expm", f64(A3 / 2), f32(SYM3), f64(np.zeros((2, 2))))(
    lambda a, s, z: (tf.linalg.expm(a), tf.linalg.expm(s), tf.linalg.expm(z))
)
case("expm_batch_large_norm", f64(A_BATCH * 3))(lambda a: tf.linalg.expm(a))
case("logm_c64", HERM3.astype(np.complex64))(lambda a: tf.linalg.logm(a))
case("sqrtm", f64(SPD3), f32(SPD_BATCH))(lambda a, b: (tf.linalg.sqrtm(a), tf.linalg.sqrtm(b)))

# ---- tridiagonal and banded ---------------------------------------------------------------
case("tridiagonal_solve", f64(TRI_DIAGS), f64(RHS4))(lambda d, b: tf.linalg.tridiagonal_solve(d, b))
case("tridiagonal_matmul", f64(TRI_DIAGS), f64(RHS4))(
    lambda d, b: tf.linalg.tridiagonal_matmul(d, b)
)
case("banded_triangular_solve", f64(np.stack([gauss(4) + 3.0, gauss(4)])), f64(RHS4))(
    lambda bands, b: (
        tf.linalg.banded_triangular_solve(bands, b),
        tf.linalg.banded_triangular_solve(bands, b, lower=False),
    )
)

# ---- LinearOperators ----------------------------------------------------------------------


def operators(a, d, lo, b):
    out = []
    for op in (
        tf.linalg.LinearOperatorFullMatrix(a),
        tf.linalg.LinearOperatorDiag(d),
        tf.linalg.LinearOperatorLowerTriangular(lo),
    ):
        out += [op.matmul(b), op.solve(b), op.log_abs_determinant(), op.to_dense()]
    return tuple(out)


case("linear_operators", f64(A3), f64(VEC3 + 2.0), f64(LOWER3), f64(B3))(operators)

# ---- gradients (float64) ------------------------------------------------------------------
grad_case("grad_det", f64(A_BATCH))(lambda a: tf.linalg.det(a))
grad_case("grad_logdet", f64(SPD3))(lambda a: tf.linalg.logdet(a))
grad_case("grad_slogdet", f64(A3))(lambda a: tf.linalg.slogdet(a)[1])
grad_case("grad_inv", f64(A3))(lambda a: tf.linalg.inv(a))
grad_case("grad_solve", f64(A3), f64(B3))(lambda a, b: tf.linalg.solve(a, b))
grad_case("grad_solve_adjoint", f64(A_BATCH), f64(B_BATCH))(
    lambda a, b: tf.linalg.solve(a, b, adjoint=True)
)
grad_case("grad_triangular_solve", f64(LOWER3), f64(B3))(
    lambda a, b: tf.linalg.triangular_solve(a, b)
)
grad_case("grad_triangular_solve_upper_adjoint", f64(UPPER3), f64(B3))(
    lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True)
)
grad_case("grad_cholesky", f64(SPD3))(lambda a: tf.linalg.cholesky(a))
grad_case("grad_qr_r", f64(TALL))(lambda a: tf.abs(tf.linalg.qr(a)[1]))
grad_case("grad_svd_values", f64(WIDE))(lambda a: tf.linalg.svd(a, compute_uv=False))
grad_case("grad_eigh_values", f64(SYM3))(lambda a: tf.linalg.eigh(a)[0])
grad_case("grad_eigvalsh", f64(SPD3))(lambda a: tf.linalg.eigvalsh(a))
grad_case("grad_norm_2", f64(WIDE))(lambda a: tf.norm(a, ord=2, axis=[-2, -1]))
grad_case("grad_norm_nuc", f64(WIDE))(lambda a: tf.norm(a, ord="nuc", axis=[-2, -1]))
grad_case("grad_norm_fro_1", f64(A3))(
    lambda a: tf.norm(a, ord="fro", axis=[-2, -1]) + tf.norm(a, ord=1, axis=[-2, -1])
)
grad_case("grad_expm", f64(A3 / 2))(lambda a: tf.linalg.expm(a))
grad_case("grad_lstsq", f64(TALL), f64(RHS4))(lambda a, b: tf.linalg.lstsq(a, b))
grad_case("grad_pinv", f64(TALL))(lambda a: tf.linalg.pinv(a))
grad_case("grad_matmul_adjoint_batch", f64(A_BATCH), f64(B3))(
    lambda a, b: tf.linalg.matmul(a, b, transpose_a=True)
)
grad_case("grad_einsum_trace", f64(A3), f64(TALL))(
    lambda a, t: tf.einsum("ii->", a) * tf.einsum("ij,ij->", t, t)
)


grad_case("grad_qr_q_squares", f64(TALL))(lambda a: tf.square(tf.linalg.qr(a)[0]))
grad_case("grad_svd_vectors_squares", f64(A3))(
    lambda a: (lambda s, u, v: tf.concat([tf.square(u), tf.square(v)], 0))(*tf.linalg.svd(a))
)
grad_case("grad_eigh_vectors_squares", f64(SYM3))(lambda a: tf.square(tf.linalg.eigh(a)[1]))
grad_case("grad_cholesky_solve", f64(SPD3), f64(B3))(
    lambda a, b: tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b)
)
grad_case("grad_lstsq_l2", f64(TALL), f64(RHS4))(
    lambda a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.5)
)
grad_case("grad_logdet_slogdet_batch", f64(SPD_BATCH))(
    lambda a: tf.linalg.logdet(a) + tf.linalg.slogdet(-a)[1]
)
grad_case("grad_det_singular", f64(ZERO_ROW))(lambda a: tf.linalg.det(a))
grad_case("grad_euclidean_norm_at_zero", f64(np.zeros((2, 2))))(lambda a: tf.norm(a))
grad_case("grad_matvec_tensordot_cross", f64(A3), f64(VEC3))(
    lambda a, v: tf.linalg.matvec(a, v) + tf.tensordot(a, v, axes=1) + tf.linalg.cross(v, v * v)
)
grad_case("grad_inv_f32_batch", f32(A_BATCH))(lambda a: tf.linalg.inv(a))
case("triangular_solve_broadcast", f64(np.stack([LOWER3, LOWER3.T * 0 + LOWER3 * 2])), f64(B3))(
    lambda a, b: tf.linalg.triangular_solve(a, b)
)
case("solve_broadcast_rhs", f64(A3), f64(B_BATCH))(lambda a, b: tf.linalg.solve(a, b))
case("lstsq_batch", f64(np.stack([TALL, TALL[::-1]])), f64(np.stack([RHS4, RHS4])))(
    lambda a, b: tf.linalg.lstsq(a, b)
)
case(
    "matmul_int32",
    np.arange(6, dtype=np.int32).reshape(2, 3),
    np.arange(6, dtype=np.int32).reshape(3, 2),
)(lambda a, b: tf.linalg.matmul(a, b))
case("matmul_dtype_mismatch", f32(A3), f64(B3))(lambda a, b: tf.linalg.matmul(a, b))
case("matmul_shape_mismatch", f64(TALL), f64(TALL))(lambda a, b: tf.linalg.matmul(a, b))
case("det_non_square", f64(TALL))(lambda a: tf.linalg.det(a))
case("pinv_rcond", f64(HILB5))(lambda a: tf.linalg.pinv(a, rcond=1e-4))
case("einsum_broadcast_ellipsis", f64(A_BATCH), f64(B3))(
    lambda a, b: (tf.einsum("...ij,jk->...ik", a, b), tf.einsum("bij,bij->b", a, a))
)
case("slogdet_c64", C3)(lambda a: tf.linalg.slogdet(a))
case("global_norm_none", f64(A3))(lambda a: tf.linalg.global_norm([a, None, a]))


case("lstsq_ill_tall", f64(hilbert(6)[:, :5]), f64(np.ones((6, 1))))(
    lambda a, b: tf.linalg.lstsq(a, b)
)
case("cholesky_hilbert_f32", f32(HILB5))(lambda a: tf.linalg.cholesky(a))
case("inv_det_nan", f64([[1.0, np.nan], [0.0, 1.0]]))(
    lambda a: (tf.linalg.det(a), tf.linalg.inv(a))
)
case("triangular_solve_zero_pivot", f64([[1.0, 0.0], [2.0, 0.0]]), f64([[1.0], [1.0]]))(
    lambda a, b: tf.linalg.triangular_solve(a, b)
)
case("eigh_repeated_svd_zero", f64(np.eye(3) * 2.0), f64(np.zeros((3, 2))))(
    lambda a, z: (tf.linalg.eigh(a)[0], tf.linalg.svd(z, compute_uv=False))
)
case("qr_rank_deficient", f64(ZERO_ROW), post=canon_qr)(lambda a: tf.linalg.qr(a))
case("logdet_not_pd", f64(-SPD3))(lambda a: tf.linalg.logdet(a))
case("norm_bad_ord", f64(A3))(lambda a: tf.norm(a, ord=0, axis=[-2, -1]))
case("norm_2_batch_axis", f64(A_BATCH))(
    lambda a: (tf.norm(a, ord=2, axis=[1, 2]), tf.norm(a, ord=np.inf, axis=[2, 1]))
)
grad_case("grad_cholesky_f32", f32(SPD3))(lambda a: tf.linalg.cholesky(a))


if __name__ == "__main__":
    print(f"{which} linalg_ops: {len(CASES)} cases")
    for name, fn, inputs, post in CASES:
        if ONLY in name:
            run_case(name, fn, inputs, post)
