"""tf.nn's local response normalization, weighted moments and crelu, as compositions of
tracer's ops (so every backend and derivative order follows from theirs).

    local_response_normalization   x / (bias + alpha * s) ** beta, s the sum of the squares of
                                   x over the channels within depth_radius of each one: the
                                   squares times a (C x C) band of ones, one product
    weighted_moments               the frequency-weighted mean and variance over `axes`, as
                                   TensorFlow computes them (sums, then one reciprocal)
    crelu                          relu(x) and relu(-x) joined along `axis`
"""

import numpy as np

from tracer.ops import array_ops, math_ops, structure_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.linalg_ops import matmul


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):
    """TensorFlow's LRN of a 4-D input (its channels last)."""
    x = as_tensor(input)
    if x.ndim != 4:
        raise ValueError(
            f"tt.nn.local_response_normalization: input must be 4-D, not of shape {list(x.shape)}"
        )
    if not x.dtype.is_floating:
        raise TypeError(
            f"tt.nn.local_response_normalization: input must be floating, not {x.dtype.name}"
        )
    channels, radius = x.shape[-1], int(depth_radius)
    if not isinstance(channels, int):
        raise ValueError(
            "tt.nn.local_response_normalization: the channels must be known when traced"
        )
    offsets = np.arange(channels)
    band = (np.abs(offsets[:, None] - offsets[None, :]) <= radius).astype(x.dtype.as_numpy_dtype)
    squares = array_ops.reshape(x * x, (-1, channels))
    summed = array_ops.reshape(matmul(squares, as_tensor(band)), array_ops.shape_tuple(x.shape))
    return x / math_ops.pow(bias + alpha * summed, beta)


lrn = local_response_normalization


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None, keep_dims=None):
    """(mean, variance) of `x` over `axes` with each element counted `frequency_weights`
    times (the weights broadcast to x), as tf.nn.weighted_moments."""
    keepdims = keepdims if keep_dims is None else keep_dims
    x, weights = as_tensors(x, frequency_weights)
    axes = [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    weighted_sum = reduce_sum(weights * x, axes, keepdims=True)
    total_weight = reduce_sum(weights + array_ops.zeros_like(x), axes, keepdims=True)
    divisor = 1.0 / total_weight
    mean = weighted_sum * divisor
    variance = reduce_sum(weights * math_ops.square(x - mean), axes, keepdims=True) * divisor
    if keepdims:
        return mean, variance
    return array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)


def crelu(features, name=None, axis=-1):
    """relu(x) and relu(-x), concatenated along `axis` (the channels doubled)."""
    x = as_tensor(features)
    return structure_ops.concat([math_ops.relu(x), math_ops.relu(-x)], axis)
