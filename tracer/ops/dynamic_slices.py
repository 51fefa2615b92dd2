"""Windows whose start is known only when a traced function runs: `tt.slice` with begins
computed in the function, `tt.image.crop_to_bounding_box` with such offsets, and
`tt.image.random_crop`.

A window's sizes must be known when the function is traced, as every shape in tracer's
graphs is; its start may be a tensor. Along each axis the window is a gather of
`range(size) + start`, so it differentiates as a gather (its rows added back), runs in
every backend, and a start that puts the window outside the tensor is gather's error when
the function runs, as TensorFlow's slice is an error then. Starts known when tracing take
the plain slice (array_ops.slice_).
"""

import builtins

import numpy as np

from tracer import dtypes, random
from tracer.ops import array_ops, math_ops
from tracer.ops.convert import as_tensor
from tracer.ops.index_ops import gather
from tracer.tensor import Tensor


def _is_known(values):
    """Whether `values` (a list of ints and tensors, or a tensor) are all known now."""
    if isinstance(values, Tensor):
        return values._value is not None
    if isinstance(values, (list, tuple)):
        return all(_is_known(v) for v in values)
    return True


def slice(input_, begin, size, name=None):
    """tf.slice: `input_[begin[i] : begin[i] + size[i]]` on every axis, a size of -1 to the
    axis's end. `size` must be known when a function is traced; `begin` may be computed
    while it runs (then no size may be -1). A window outside the tensor is an
    InvalidArgumentError, as TensorFlow's.

    >>> tt.slice(tt.reshape(tt.range(12), (3, 4)), [1, 1], [2, -1]).numpy()
    array([[ 5,  6,  7],
           [ 9, 10, 11]], dtype=int32)
    """
    if _is_known(begin):
        return array_ops.slice_(input_, begin, size)
    x = as_tensor(input_)
    sizes = array_ops.slice_bounds(size, "size")
    shape = x._dims()
    if len(sizes) != len(shape) or -1 in sizes:
        raise ValueError(
            f"tt.slice: with a begin computed while the function runs, size must give one "
            f"size (not -1) for each of the input's {len(shape)} axes, not {list(sizes)}"
        )
    starts = _starts(begin, len(shape))
    return window(x, {axis: (starts[axis], count) for axis, count in enumerate(sizes)})


def _starts(begin, rank):
    """`begin` as a list of `rank` int32 scalars (tensors or ints)."""
    if isinstance(begin, (list, tuple)):
        if len(begin) != rank:
            raise ValueError(f"tt.slice: begin must have {rank} values, not {len(begin)}")
        return [array_ops.cast(as_tensor(b), dtypes.int32) for b in begin]
    begin = array_ops.cast(as_tensor(begin), dtypes.int32)
    if tuple(begin.shape) != (rank,):
        raise ValueError(f"tt.slice: begin must be a vector of {rank} values, not {begin.shape}")
    return [begin[k] for k in range(rank)]


def window(x, windows):
    """x cut to `windows` ({axis: (start, size)}, the start a scalar tensor or an int, the
    size an int) along those axes."""
    shape = x._dims()
    for axis, (start, count) in sorted(windows.items()):
        if not 0 <= count <= shape[axis]:
            raise ValueError(
                f"a window of {count} on an axis of length {shape[axis]} does not fit in it"
            )
        if isinstance(start, int):
            key = [builtins.slice(None)] * len(shape)
            key[axis] = builtins.slice(start, start + count)
            x = x[tuple(key)]
            continue
        rows = math_ops.add(array_ops.range_(count, dtype=dtypes.int32), start)
        x = gather(x, rows, axis=axis)
    return x


def random_crop(value, size, seed=None, name=None):
    """A window of `size` (known when tracing) of `value` at a random start, drawn anew at
    each call of a traced function, from tracer's stream (not TensorFlow's)."""
    value = as_tensor(value)
    sizes = array_ops.slice_bounds(size, "size")
    shape = value._dims()
    if len(sizes) != len(shape) or any(not 0 <= s <= n for s, n in zip(sizes, shape)):
        raise ValueError(
            f"tt.image.random_crop: size {list(sizes)} must fit in the shape {tuple(shape)}, "
            "one size for each axis"
        )
    limits = np.asarray([n - s + 1 for n, s in zip(shape, sizes)], np.int32)
    draws = random.uniform([len(shape)], 0, np.iinfo(np.int32).max, dtype=dtypes.int32, seed=seed)
    starts = math_ops.floormod(draws, limits)
    return window(value, {axis: (starts[axis], count) for axis, count in enumerate(sizes)})
