"""Catalogue cases of the convolution primitives (tracer/ops/convolution_ops.py) and the
depthwise ones (tracer/ops/depthwise_ops.py), through
TensorFlow's functions where they have one: strided, dilated and padded geometries, and
stride 1 with padding on every side (where the input gradient is the direct kernel's
product of the cotangent with the filters flipped); float64, so the installed direct
kernels compute them eagerly.
"""

import numpy as np

import tracer as tt
from tracer.ops.convolution_ops import conv2d_backprop_filter
from tracer.ops.depthwise_ops import (
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
)
from tracer.ops.window_ops import window_attrs

rng = np.random.default_rng(20261130)


def normal(*shape):
    return rng.standard_normal(shape)


# 2 x 3 filters on a 4 x 5 image, stride 1, one row and column of padding before and after
PADDED = window_attrs((4, 5), (4, 5), (2, 3), (1, 1), (1, 1), (0, 1))
# 3 x 2 filters dilated (2, 1), strides (1, 2), SAME on a 4 x 5 image
DILATED = window_attrs((4, 5), (4, 3), (3, 2), (1, 2), (2, 1), (2, 0))

CASES = {
    "conv2d": (
        lambda x, f: (
            tt.nn.conv2d(x, f, [1, 2], "SAME", dilations=[2, 1])
            + tt.nn.conv2d(x * x, f, 1, "SAME", dilations=[2, 1])[:, :, ::2]
        ),
        [normal(1, 4, 5, 2), normal(2, 3, 2, 3)],
    ),
    "conv2d_backprop_input": (
        lambda y, f: (
            tt.nn.conv2d_transpose(y * y, f, (1, 4, 5, 2), [2, 1], "SAME")
            + tt.nn.conv2d_transpose(y, f, (1, 4, 5, 2), [2, 1], "SAME") * 0.5
        ),
        [normal(1, 2, 5, 3), normal(2, 3, 2, 3)],
    ),
    "conv2d_backprop_filter": (
        lambda x, g: (
            conv2d_backprop_filter(x * x, g, PADDED)
            + conv2d_backprop_filter(x, g * g, PADDED) * 0.5
        ),
        [normal(2, 4, 5, 3), normal(2, 4, 5, 2)],
    ),
    "depthwise_conv2d": (
        lambda x, f: (
            tt.nn.depthwise_conv2d(x, f, [1, 1, 2, 1], "SAME", dilations=[2, 1])
            + tt.nn.depthwise_conv2d(x * x, f, [1, 1, 1, 1], "SAME", dilations=[2, 1])[:, :, ::2]
        ),
        [normal(1, 4, 5, 3), normal(2, 3, 3, 1)],
    ),
    "depthwise_conv2d_backprop_input": (
        lambda g, f: (
            depthwise_conv2d_backprop_input(g * g, f, DILATED)
            + depthwise_conv2d_backprop_input(g, f, DILATED) * 0.5
        ),
        [normal(1, 4, 3, 3), normal(3, 2, 3)],
    ),
    "depthwise_conv2d_backprop_filter": (
        lambda x, g: (
            depthwise_conv2d_backprop_filter(x * x, g, PADDED)
            + depthwise_conv2d_backprop_filter(x, g * g, PADDED) * 0.5
        ),
        [normal(2, 4, 5, 3), normal(2, 4, 5, 3)],
    ),
}

# the stride-1 input gradient, its windows starting before the cotangent (the direct kernel's)
COMPOSITES = {
    "conv2d_backprop_input_stride_1": (
        lambda y, f: tt.nn.conv2d_transpose(y * y, f, (2, 4, 5, 2), 1, "SAME"),
        [normal(2, 4, 5, 3), normal(3, 2, 2, 3)],
    ),
    "conv2d_backprop_filter_dilated": (
        lambda x, g: conv2d_backprop_filter(x * x, g, DILATED),
        [normal(1, 4, 5, 2), normal(1, 4, 3, 3)],
    ),
    # padding on every side at stride 1, and windows dilated and strided
    "depthwise_input_padded": (
        lambda g, f: depthwise_conv2d_backprop_input(g * g, f, PADDED),
        [normal(2, 4, 5, 3), normal(2, 3, 3)],
    ),
    "depthwise_filter_dilated": (
        lambda x, g: depthwise_conv2d_backprop_filter(x * x, g, DILATED),
        [normal(1, 4, 5, 2), normal(1, 4, 3, 2)],
    ),
    # tt.nn's 3-D convolution (conv2d over depth slices stacked along the channels) and its
    # transpose (conv2d_transpose, each depth tap put back at its depths): strides, SAME
    # padding on every side and dilations, through channels-first layouts
    "conv3d": (
        lambda x, f: tt.concat(
            [
                tt.reshape(tt.nn.conv3d(x, f, [2, 1, 2], "SAME", dilations=[1, 2, 1]), [-1]),
                tt.reshape(tt.nn.conv3d(x * x, f, 1, "SAME", data_format="NCDHW"), [-1]),
            ],
            0,
        ),
        [normal(1, 2, 3, 4, 2), normal(2, 2, 2, 2, 3)],
    ),
    "conv3d_transpose": (
        lambda y, f: tt.nn.conv3d_transpose(y * y, f, (1, 5, 4, 3, 2), [2, 1, 2], "SAME"),
        [normal(1, 3, 4, 2, 3), normal(3, 2, 2, 2, 3)],
    ),
    "conv3d_transpose_valid_dilated": (
        lambda y, f: tt.nn.conv3d_transpose(y * y, f, (1, 5, 4, 3, 2), 1, "VALID", dilations=2),
        [normal(1, 3, 2, 1, 3), normal(2, 2, 2, 2, 3)],
    ),
    "conv1d_transpose": (
        lambda y, f: tt.nn.conv1d_transpose(y * y, f, (2, 3, 7), 2, "SAME", data_format="NCW"),
        [normal(2, 3, 4), normal(3, 3, 3)],
    ),
    # tt.nn.convolution picks conv1d by the filters' rank, channels first by data_format
    "convolution": (
        lambda x, f: tt.nn.convolution(x * x, f, 2, "SAME", data_format="NCW", dilations=1),
        [normal(2, 3, 7), normal(3, 3, 2)],
    ),
}
