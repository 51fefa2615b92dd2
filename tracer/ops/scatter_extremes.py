"""`tt.tensor_scatter_nd_min` and `tt.tensor_scatter_nd_max`, composed of gather_nd (which
checks the indices as TensorFlow does), unsorted segment minima or maxima over the
coordinates' flat positions, and a select, so they compile and differentiate through those
ops."""

import math

import numpy as np

from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.scatter_nd_ops import _like, gather_nd
from tracer.ops.segment_ops import unsorted_segment_max, unsorted_segment_min, unsorted_segment_sum


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """A copy of `tensor` where each coordinate of `indices` holds the minimum of its value
    and every update given for it.

    >>> tt.tensor_scatter_nd_min(tt.constant([3, 3]), [[0], [0], [1]], [5, 1, 2]).numpy()
    array([1, 2], dtype=int32)
    """
    return _scatter_extreme(tensor, indices, updates, unsorted_segment_min, math_ops.minimum)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """A copy of `tensor` where each coordinate of `indices` holds the maximum of its value
    and every update given for it."""
    return _scatter_extreme(tensor, indices, updates, unsorted_segment_max, math_ops.maximum)


def _scatter_extreme(tensor, indices, updates, segment_extreme, pairwise):
    tensor = as_tensor(tensor)
    indices = as_tensor(indices)
    updates = _like(tensor, updates)
    gather_nd(tensor, indices)  # the indices' checks: rank, depth and range
    depth = indices.shape[-1]
    leading = tensor.shape[:depth]
    if not all(isinstance(size, int) for size in leading):
        raise ValueError(
            f"tensor_scatter_nd: the sizes {tuple(leading)} the indices address must be known "
            "when tracing"
        )
    slice_shape = tuple(tensor.shape[depth:])
    strides = np.cumprod((1, *leading[:0:-1]))[::-1].astype(np.int64)
    flat = array_ops.reshape(indices, (-1, depth))
    positions = reduce_sum(array_ops.cast(flat, "int64") * strides, axis=-1)
    count = math.prod(leading)
    values = array_ops.reshape(updates, (-1, *slice_shape))
    extremes = segment_extreme(values, positions, count)
    touched = unsorted_segment_sum(array_ops.ones_like(positions), positions, count) > 0
    extremes = array_ops.reshape(extremes, tensor.shape)
    touched = array_ops.reshape(touched, (*leading, *([1] * len(slice_shape))))
    return math_ops.where(touched, pairwise(tensor, extremes), tensor)
