"""Catalogue cases of pad, reverse, roll, reverse_sequence, depth_to_space, space_to_depth,
space_to_batch_nd, batch_to_space, sort, argsort, top_k, clip_by_global_norm, and of cumprod and reduce_prod where their
inputs hold zeros."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(5150)


def _normal(*shape):
    return rng.standard_normal(shape)


def _distinct(*shape):
    """No ties and gaps of at least 0.3: sorting is smooth around these points."""
    count = int(np.prod(shape))
    return (rng.permutation(count) * 0.3 - 1.0 + rng.uniform(0, 0.05, count)).reshape(shape)


def _clipped(a, b):
    clipped, norm = tt.clip_by_global_norm([a, None, b], 1.5)
    return tt.concat([clipped[0], tt.reshape(clipped[2], [-1]), tt.reshape(norm, [1])], 0)


CASES = {
    "pad": (lambda x: tt.pad(x, [[1, 2], [0, 1]], constant_values=0.5) ** 2, [_normal(2, 3)]),
    "reverse": (lambda x: tt.reverse(x, [0, -1]) * x, [_normal(2, 3)]),
}

COMPOSITES = {
    # differentiable in both ends, as TensorFlow's (the numpy shortcut it had dropped them)
    "linspace": (
        lambda a, b: tt.linspace(a, b * b, 5) ** 2,
        [np.array(0.3), np.array(-1.2)],
    ),
    # a tensor's value everywhere: its gradient is the cotangent's sum (it was a constant)
    "fill_of_a_tensor": (
        lambda x: tt.fill([2, 3], tt.reduce_sum(x * x)) * tt.reshape(x, [2, 3]),
        [np.array([0.3, -1.2, 0.7, 0.4, -0.5, 1.1])],
    ),
    "local_response_normalization": (
        lambda x: tt.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.4, beta=0.75),
        [np.array([0.3, -1.2, 0.7, 0.4, -0.5, 1.1, 0.2, -0.8, 0.9, 0.6]).reshape(1, 2, 1, 5)],
    ),
    "weighted_moments": (
        lambda x, w: tt.concat(tt.nn.weighted_moments(x, [0], w * w + 0.5), 0),
        [np.array([[0.3, -1.2, 0.7], [0.4, -0.5, 1.1]]), np.array([[0.2], [-0.8]])],
    ),
    "crelu": (lambda x: tt.nn.crelu(x * x - 0.3, axis=0), [np.array([[0.3, -1.2], [0.7, 0.4]])]),
    "pad_reflect": (lambda x: tt.pad(x, [[2, 1], [1, 2]], "REFLECT") ** 2, [_normal(3, 4)]),
    "pad_symmetric": (
        lambda x: tt.pad(x, [[0, 2], [3, 1]], "SYMMETRIC") * tt.reduce_sum(x),
        [_normal(2, 3)],
    ),
    "roll": (lambda x: tt.roll(x, [1, -2, 1], [0, 1, 0]) * x, [_normal(3, 4)]),
    "reverse_sequence": (
        lambda x: tt.reverse_sequence(x, [3, 0, 2], seq_axis=1, batch_axis=0) * x,
        [_normal(3, 4)],
    ),
    "depth_to_space": (lambda x: tt.nn.depth_to_space(x, 2) ** 2, [_normal(1, 2, 1, 8)]),
    "space_to_depth": (lambda x: tt.nn.space_to_depth(x * x, 2), [_normal(1, 2, 4, 1)]),
    "space_to_batch_nd": (
        lambda x: tt.space_to_batch_nd(x * x, [2, 1], [[1, 0], [0, 1]]),
        [_normal(1, 3, 2, 1)],
    ),
    "batch_to_space": (lambda x: tt.batch_to_space(x * x, [2], [[0, 1]]), [_normal(2, 2, 1)]),
    "sort": (lambda x: tt.sort(x, axis=0) * x, [_distinct(4, 3)]),
    "sort_descending": (lambda x: tt.sort(x, direction="DESCENDING") ** 2, [_distinct(2, 5)]),
    "top_k": (lambda x: tt.math.top_k(x, 2).values ** 2, [_distinct(3, 4)]),
    "clip_by_global_norm": (_clipped, [_normal(3) + 1.0, _normal(2, 2)]),
    "cumprod_with_zeros": (
        lambda x: tt.math.cumprod(x, axis=1, exclusive=True, reverse=True) * x,
        [np.array([[0.0, 2.0, 0.0, 3.0], [1.5, 0.0, -2.0, 0.5]])],
    ),
    "reduce_prod_with_zeros": (
        lambda x: tt.reduce_prod(x, axis=1),
        [np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [1.0, -2.0, 0.5]])],
    ),
}

NO_GRADIENT = {
    "argsort": lambda x: tt.cast(tt.argsort(x, direction="DESCENDING"), tt.float64),
}
