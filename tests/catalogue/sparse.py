"""Catalogue cases of tt.sparse (tracer/sparse.py): functions of a SparseTensor's values
built of gathers, scatters, segment sums and sorts, whose derivatives the catalogue checks
in every backend. Their values against TensorFlow's are tests/test_sparse.py's."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20261206)

# entries of a 3 x 4 matrix, out of row-major order (reorder sorts them)
_INDICES = np.array([[2, 1], [0, 1], [1, 0], [2, 3]])


def _matrix(values):
    return tt.sparse.reorder(tt.SparseTensor(_INDICES, values, [3, 4]))


def _products(values, dense):
    sp = _matrix(values)
    left = tt.sparse.sparse_dense_matmul(sp, dense)
    right = tt.sparse.sparse_dense_matmul(tt.transpose(dense), sp, adjoint_b=True)
    return left * tt.transpose(right)


def _reductions(values):
    sp = tt.sparse.map_values(tt.sin, _matrix(values))
    doubled = tt.sparse.concat(1, [sp, sp * 2.0])
    flat = tt.sparse.reshape(tt.sparse.transpose(doubled), [4, 6])
    return (
        tt.sparse.reduce_sum(flat, axis=1)
        + tt.sparse.reduce_max(tt.sparse.expand_dims(flat, 0), axis=[0, 2])
        * tt.sparse.to_dense(flat, default_value=-1.0)[:, 0]
        + tt.sparse.segment_sqrt_n(tt.sparse.to_dense(flat), [3, 0, 1, 1], [0, 0, 1, 3])[:, 2]
    )


COMPOSITES = {
    "sparse_products": (_products, [rng.standard_normal(4), rng.standard_normal((4, 3))]),
    "sparse_reductions": (_reductions, [rng.standard_normal(4)]),
}
