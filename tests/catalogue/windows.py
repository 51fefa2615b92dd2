"""Catalogue cases of the window primitives (tracer/ops/window_ops.py): im2col, col2im and
the max selection with its transpose, on geometries with padding, strides, dilations and
overlapping windows. conv2d and the pools, compositions of these, are in
tests/test_gradients.py's COMPOSITES.

The max cases have distinct values (one largest element per window, where the derivative
exists).
"""

import numpy as np

import tracer as tt
from tracer.ops.core import apply
from tracer.ops.window_ops import (
    WINDOW_MAX_SCATTER,
    extract_patches,
    sum_patches,
    window_attrs,
    window_max,
)

rng = np.random.default_rng(20261125)


def normal(*shape):
    return rng.standard_normal(shape)


def distinct(*shape):
    return rng.permutation(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape) * 0.3


# a 4 x 5 image, 3 x 2 windows dilated (2, 1), strides (1, 2), one row and column of padding
# before: windows overlap, some reach the padding
DILATED = window_attrs((4, 5), (2, 3), (3, 2), (1, 2), (2, 1), (1, 1))
# 3 x 3 windows, stride 2, SAME on a 5 x 4 image: overlapping, padding on every side
POOL = window_attrs((5, 4), (3, 2), (3, 3), (2, 2), (1, 1), (1, 1))
# 2 x 2 windows, stride 2, VALID on a 5 x 4 image: disjoint, the last row in none
DISJOINT = window_attrs((5, 4), (2, 2), (2, 2), (2, 2), (1, 1), (0, 0))
SELECTOR = tt.constant(distinct(1, 5, 4, 2))

CASES = {
    "extract_patches": (lambda x: extract_patches(x * x, DILATED), [normal(2, 4, 5, 2)]),
    "sum_patches": (lambda c: sum_patches(c * c, DILATED), [normal(2, 2, 3, 12)]),
    "window_max_gather": (lambda x: window_max(x * x, POOL), [distinct(1, 5, 4, 2) + 1]),
    "window_max_scatter": (
        lambda g, h: (
            apply(WINDOW_MAX_SCATTER, (SELECTOR, g * g), POOL)
            + apply(WINDOW_MAX_SCATTER, (SELECTOR, h * h), DISJOINT)
        ),
        [normal(1, 3, 2, 2), normal(1, 2, 2, 2)],
    ),
}
