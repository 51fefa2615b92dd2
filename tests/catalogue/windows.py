"""Catalogue cases of the window primitives (tracer/ops/window_ops.py): im2col, col2im and
the max selection with its transpose, on geometries with padding, strides, dilations and
overlapping windows. conv2d and the 2-D pools, compositions of these, are in
tests/test_gradients.py's COMPOSITES; the 1-D and 3-D pools, compositions of the 2-D ones,
here.

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

COMPOSITES = {
    # 1-D pools: the 2-D ones with an axis of size 1 (after the channels for NCW)
    "pool1d": (
        lambda x: tt.nn.max_pool1d(x * x, 3, 2, "SAME") + tt.nn.avg_pool1d(x, 3, 2, "SAME"),
        [distinct(2, 9, 2) + 1],
    ),
    "pool1d_ncw": (
        lambda x: (
            tt.nn.max_pool1d(x * x, 2, 2, "VALID", data_format="NCW")
            + tt.nn.avg_pool(x, 3, 2, "VALID", data_format="NCW")
        ),
        [distinct(2, 2, 9) + 1],
    ),
    # 3-D pools: a 2-D pool over height and width, then one over depth
    "max_pool3d": (
        lambda x: tt.nn.max_pool3d(x * x, [2, 3, 2], [1, 2, 2], "SAME"),
        [distinct(1, 3, 5, 4, 2) + 1],
    ),
    "avg_pool3d": (
        lambda x: tt.nn.avg_pool3d(x * x, [2, 3, 2], [2, 1, 2], "SAME", data_format="NCDHW"),
        [normal(1, 2, 3, 5, 4)],
    ),
}
