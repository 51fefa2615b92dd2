"""The dimensions of a RaggedTensor, as TensorFlow's ops see them: `tt.size` (its flat
values' count of elements), `tt.rank`, `tt.expand_dims` (a dimension of length 1, uniform)
and `RaggedTensor.merge_dims`.

None of them depends on the row lengths' values: the row splits they make are computed
with ops (a gather of splits by splits, splits times an inner size), so they trace with
row splits known only when the function runs, and gradients reach the flat values.
"""

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops, index_ops, structure_ops
from tracer.ragged_tensor import RaggedTensor, positions
from tracer.tensor import convert_to_tensor


def size(input, out_type=dtypes.int32, name=None):
    """The count of its elements: its flat values'."""
    return array_ops.size(input.flat_values, out_type=out_type)


def rank(input, name=None):
    """The count of its dimensions, ragged and uniform: an int32 scalar."""
    return convert_to_tensor(np.int32(input.ndim))


def expand_dims(input, axis, name=None):
    """A dimension of length 1 inserted at `axis`: a uniform dimension of a ragged tensor
    of one more ragged rank before its last ragged dimension, a dimension of its flat
    values after it (as TensorFlow's).

    >>> tt.expand_dims(tt.ragged.constant([[1, 2], [3]]), 1).to_list()
    [[[1, 2]], [[3]]]
    """
    rt = input
    axis = int(axis)
    if not -rt.ndim - 1 <= axis <= rt.ndim:
        raise ValueError(f"axis={axis} out of bounds: expected {-rt.ndim - 1}<=axis<{rt.ndim + 1}")
    return _inserted(rt, axis + rt.ndim + 1 if axis < 0 else axis)


def _inserted(rt, axis):
    if not isinstance(rt, RaggedTensor):
        return array_ops.expand_dims(rt, axis)
    if axis >= 2:
        return rt.with_values(_inserted(rt.values, axis - 1))
    rows = rt.nrows()
    if axis == 0:  # one row holding all of them
        splits = structure_ops.concat([_zero(), array_ops.reshape(rows, [1])], 0)
        width = rt.shape[0]
    else:  # each row in a row of its own
        splits = structure_ops.concat([_zero(), positions(rt) + 1], 0)
        width = 1
    result = RaggedTensor(rt, splits, internal=True)
    result._uniform_row_length = width
    return result


def merge_dims(rt, outer_axis, inner_axis):
    """`rt`'s dimensions `outer_axis` to `inner_axis` merged into one, their elements in
    row-major order: a ragged tensor, or its flat values' tensor where the rows take in
    every ragged dimension.

    >>> tt.ragged.constant([[[1, 2], [3]], [[4]]]).merge_dims(1, 2).to_list()
    [[1, 2, 3], [4]]
    """
    outer, inner = (
        _axis(outer_axis, rt.ndim, "outer_axis"),
        _axis(inner_axis, rt.ndim, "inner_axis"),
    )
    if outer > inner:
        raise ValueError(
            f"Expected outer_axis ({outer}) to be less than or equal to inner_axis ({inner})."
        )
    return _merged(rt, outer, inner)


def _axis(axis, ndim, what):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}={axis} out of bounds: expected {-ndim}<={what}<{ndim}")
    return axis + ndim if axis < 0 else axis


def _merged(rt, outer, inner):
    if outer == inner:
        return rt
    if not isinstance(rt, RaggedTensor):
        shape = list(rt.shape)
        merged = -1 if any(d is None for d in shape[outer : inner + 1]) else None
        if merged is None:
            merged = int(np.prod(shape[outer : inner + 1]))
        return array_ops.reshape(rt, [*shape[:outer], merged, *shape[inner + 1 :]])
    if outer >= 2:  # (within the values: their count of rows stays)
        return rt.with_values(_merged(rt.values, outer - 1, inner - 1))
    if outer == 0:  # the rows' values, one after the other, then the rest merged in
        return _merged(rt.values, 0, inner - 1)
    splits, level = rt.row_splits, rt.values
    for _ in range(inner - 1):  # each row's elements counted in the next dimension's units
        if isinstance(level, RaggedTensor):
            splits, level = index_ops.gather(level.row_splits, splits), level.values
        else:
            width = int(level.shape[1])
            splits = splits * width
            level = array_ops.reshape(level, [-1, *level.shape[2:]])
    return RaggedTensor.from_row_splits(level, splits, validate=False)


def _zero():
    return convert_to_tensor(np.zeros(1, np.int64))
