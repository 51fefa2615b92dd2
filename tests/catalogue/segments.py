"""Catalogue cases of gather_nd, scatter_nd, tensor_scatter_nd_*, the segment reductions and
bincount (tracer/ops/scatter_nd_ops.py, tracer/ops/segment_ops.py).

Inputs are small; the max/min cases have distinct values (one extremum per segment, where
the derivative exists) and no empty segment (whose lowest-value fill would overflow the
checks' sums); the product's have no zeros (tests/test_segments.py checks zeros).
"""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20261124)


def normal(*shape):
    return rng.standard_normal(shape)


def away_from_zero(*shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)


def distinct(*shape):
    return (
        rng.permutation(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape) * 0.3 - 1
    )


CASES = {
    # repeated coordinates: their gradients add up
    "gather_nd": (lambda p: tt.gather_nd(p, [[1, 0], [0, 2], [1, 0]]) ** 2, [normal(2, 3, 2)]),
    "scatter_nd": (lambda u: tt.scatter_nd([[1], [3], [1]], u * u, [4, 2]), [normal(3, 2)]),
    "tensor_scatter_nd_update": (
        lambda t, u: tt.tensor_scatter_nd_update(t, [[0, 1], [2, 0]], u * u) * t,
        [normal(3, 2, 2), normal(2, 2)],
    ),
    "tensor_scatter_nd_add": (
        lambda t, u: tt.tensor_scatter_nd_sub(t, [[2], [0], [2]], u) * t,
        [normal(3, 2), normal(3, 2)],
    ),
    # ids shaped [2, 2], a prefix of data's shape; the -1 is dropped
    "unsorted_segment_sum": (
        lambda x: tt.math.unsorted_segment_sum(x * x, [[0, 2], [-1, 0]], 3),
        [normal(2, 2, 3)],
    ),
    "unsorted_segment_prod": (
        lambda x: tt.math.unsorted_segment_prod(x, [1, 0, 1, 1, -1], 3),
        [away_from_zero(5, 2)],
    ),
    "unsorted_segment_max": (
        lambda x: tt.math.unsorted_segment_max(x * x, [2, 0, 1, 0, 2], 3),
        [distinct(5, 2) + 0.1],
    ),
    "unsorted_segment_min": (
        lambda x: tt.math.unsorted_segment_min(tt.sin(x), [1, 0, 1, 0], 2),
        [distinct(4, 3) * 0.2],
    ),
}

COMPOSITES = {
    "gather_nd_batch_dims": (
        lambda p: tt.gather_nd(p, [[[1], [0]], [[2], [2]]], batch_dims=1) * p[:, :2],
        [normal(2, 3, 2)],
    ),
    "gather_batch_dims": (
        lambda p: tt.gather(p * p, [[2, 0, 2], [1, 1, 0]], axis=2, batch_dims=1),
        [normal(2, 3, 3, 2)],
    ),
    "segment_sum": (lambda x: tt.math.segment_sum(x * x, [0, 0, 1, 3]), [normal(4, 2)]),
    "segment_mean": (lambda x: tt.math.segment_mean(x, [0, 1, 1, 1, 3]) ** 2, [normal(5, 2)]),
    "segment_max": (lambda x: tt.math.segment_max(x, [0, 0, 2, 2, 2]), [distinct(5, 2)]),
    "segment_min": (lambda x: tt.math.segment_min(x * x, [0, 1, 1]), [distinct(3, 3) + 0.15]),
    "segment_prod": (lambda x: tt.math.segment_prod(x, [0, 0, 0, 1]), [away_from_zero(4, 2)]),
    "unsorted_segment_mean": (
        lambda x: tt.math.unsorted_segment_mean(x, [2, 0, 2, -1, 2], 4) * x[:4],
        [normal(5, 3)],
    ),
    "bincount_weights": (
        lambda w: tt.math.bincount([3, 1, 3, 0, 5], weights=w * w, maxlength=4),
        [normal(5)],
    ),
}
