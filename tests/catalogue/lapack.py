"""Catalogue cases of tt.linalg's LAPACK ops: cholesky, triangular_solve, solve, slogdet,
qr, eigh and svd (primitives), and cholesky_solve, inv, det and logdet (compositions).

Positive definite matrices are built inside each function as X X^T + n I from a general X,
so that finite differences move along matrices that stay symmetric positive definite; the
other matrices are general, with a diagonal held away from zero. Eigen- and singular
vectors are defined up to sign (backends may differ): the cases use functions of them that
are not (squares, reconstructions)."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20260521)


def normal(*shape):
    return rng.standard_normal(shape)


def well_conditioned(*shape):
    """General square matrices (the last two axes) with 3 added to the diagonal."""
    return normal(*shape) + 3.0 * np.eye(shape[-1])


def flat(*tensors):
    """The tensors' elements in one vector (a case returns one tensor)."""
    return tt.concat([tt.reshape(t, [-1]) for t in tensors], axis=0)


def spd(x):
    """X X^T + n I: symmetric positive definite for any X (n x n)."""
    n = x.shape[-1]
    return tt.matmul(x, x, transpose_b=True) + float(n) * tt.eye(n, dtype=x.dtype)


CASES = {
    "cholesky": (lambda x: tt.linalg.cholesky(spd(x)), [normal(2, 3, 3)]),
    "triangular_solve": (
        lambda a, b: tt.linalg.triangular_solve(a, b),
        [well_conditioned(2, 3, 3), normal(2, 3, 2)],
    ),
    "solve": (lambda a, b: tt.linalg.solve(a, b), [well_conditioned(2, 3, 3), normal(2, 3, 2)]),
    # the sign is constant near the point: it carries no gradient, but is part of the value
    "slogdet": (
        lambda a: tt.stack(list(tt.linalg.slogdet(a))),
        [well_conditioned(2, 3, 3) * np.array([1.0, -1.0])[:, None, None]],
    ),
    "qr": (lambda x: flat(*tt.linalg.qr(x)), [normal(2, 4, 3)]),
    # eigh reads the lower triangle of a general matrix, as its gradient says
    "eigh": (
        lambda x: flat(*[e * e if k else e for k, e in enumerate(tt.linalg.eigh(x))]),
        [normal(2, 3, 3)],
    ),
    "svd": (
        lambda x: flat(*[t * t if k else t for k, t in enumerate(tt.linalg.svd(x))]),
        [normal(2, 4, 3)],
    ),
}

COMPOSITES = {
    "linalg_triangular_solve_upper_adjoint": (
        lambda a, b: tt.linalg.triangular_solve(a, b, lower=False, adjoint=True),
        [well_conditioned(3, 3), normal(2, 3, 2)],  # the batch axes broadcast
    ),
    "linalg_solve_adjoint": (
        lambda a, b: tt.linalg.solve(a, b, adjoint=True),
        [well_conditioned(3, 3), normal(3, 1)],
    ),
    "linalg_cholesky_solve": (
        lambda x, b: tt.linalg.cholesky_solve(tt.linalg.cholesky(spd(x)), b),
        [normal(3, 3), normal(3, 2)],
    ),
    "linalg_inv": (lambda a: tt.linalg.inv(a), [well_conditioned(2, 3, 3)]),
    "linalg_det": (lambda a: tt.linalg.det(a), [well_conditioned(2, 3, 3)]),
    "linalg_logdet": (lambda x: tt.linalg.logdet(spd(x)), [normal(2, 3, 3)]),
    "linalg_qr_wide": (lambda x: flat(*tt.linalg.qr(x)), [normal(3, 5)]),
    "linalg_qr_square_full": (lambda x: flat(*tt.linalg.qr(x, full_matrices=True)), [normal(3, 3)]),
    "linalg_eigh_reconstruction": (
        lambda x: tt.matmul(eigh_scaled(x), tt.linalg.eigh(x)[1], transpose_b=True),
        [normal(3, 3)],
    ),
    # v is 4 x 4: its last column spans the null space, unique up to sign
    "linalg_svd_wide_full": (
        lambda x: flat(*[t * t if k else t for k, t in enumerate(tt.linalg.svd(x, True))]),
        [normal(3, 4)],
    ),
    "linalg_svd_values": (lambda x: tt.linalg.svd(x, compute_uv=False), [normal(2, 3, 4)]),
}


def eigh_scaled(x):
    """v diag(e^3): with the vectors again, a function of the matrix, not of their signs."""
    e, v = tt.linalg.eigh(x)
    return v * (e * e * e)[..., None, :]
