"""Catalogue cases of tt.einsum and the matrix structure ops of tt.linalg (trace, diag,
diag_part, set_diag, band_part, matvec, matrix_transpose)."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20260315)


def normal(*shape):
    return rng.standard_normal(shape)


CASES = {
    "diag_part": (lambda x: tt.linalg.diag_part(x) ** 2, [normal(2, 3, 4)]),
}

CREATION = {"band_mask"}

COMPOSITES = {
    "einsum_batch_matmul": (
        lambda a, b: tt.einsum("bij,bjk->bik", a, b),
        [normal(2, 3, 4), normal(2, 4, 2)],
    ),
    # both operands read through matmul's transpose flags, the output transposed
    "einsum_transposed_operands": (
        lambda a, b: tt.einsum("ji,kj->ik", a * a, b),
        [normal(3, 2), normal(4, 3)],
    ),
    "einsum_ellipsis_broadcast": (
        lambda a, b: tt.einsum("...ij,...jk->...ik", a, b),
        [normal(2, 1, 2, 3), normal(3, 3, 2)],
    ),
    # the greedy order contracts j,k first; i's operand is squared to make it nonlinear
    "einsum_three_operands": (
        lambda a, b, c: tt.einsum("ij,jk,k->i", a * a, b, c),
        [normal(2, 3), normal(3, 4), normal(4)],
    ),
    "einsum_diagonal_sum_outer": (
        lambda a, b: tt.einsum("iij,kl->jk", a, b) ** 2,
        [normal(3, 3, 2), normal(2, 3)],
    ),
    "einsum_dot_products": (
        lambda a, b: tt.einsum("bi,bi->b", a, b * b),
        [normal(3, 4), normal(3, 4)],
    ),
    "linalg_trace": (lambda x: tt.linalg.trace(x) ** 2, [normal(2, 3, 3)]),
    "linalg_diag": (lambda d: tt.linalg.diag(d, num_rows=4) ** 2, [normal(2, 3)]),
    "linalg_set_diag": (
        lambda x, d: tt.linalg.set_diag(x, d) ** 2,
        [normal(2, 4, 3), normal(2, 3)],
    ),
    # other diagonals than the main one (tracer/ops/diagonal_bands.py), padded and aligned
    "linalg_diag_part_band": (
        lambda x: tt.linalg.diag_part(x, k=(-1, 2), padding_value=0.5, align="LEFT_RIGHT") ** 2,
        [normal(2, 3, 4)],
    ),
    "linalg_diag_band": (
        lambda d: tt.linalg.diag(d, k=(-1, 1), num_rows=4, padding_value=0.25) ** 2,
        [normal(2, 3, 3)],
    ),
    "linalg_set_diag_band": (
        lambda x, d: tt.linalg.set_diag(x, d * d, k=(0, 1)) ** 2,
        [normal(2, 3, 4), normal(2, 2, 3)],
    ),
    "linalg_band_part": (lambda x: tt.linalg.band_part(x * x, 1, 0), [normal(2, 3, 4)]),
    "linalg_matvec": (
        lambda a, b: tt.linalg.matvec(a, b * b, transpose_a=True),
        [normal(2, 3, 4), normal(3)],
    ),
    "linalg_matrix_transpose": (
        lambda x: tt.matmul(x, tt.linalg.matrix_transpose(x)),
        [normal(2, 3, 2)],
    ),
}
