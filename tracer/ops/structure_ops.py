"""Joining and splitting tensors: concat, stack, unstack, split."""

import numpy as np

from codegen import array_math, forms
from codegen.ctypes import storage
from codegen.loops import copy_nest, identity_map, loops_over
from runtime.kernels import LARGE_FLOATING_FROM
from tracer.errors import InvalidArgumentError, mixed
from tracer.ir import dims
from tracer.ops import array_ops, shapes
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.convert import as_tensors
from tracer.ops.core import apply
from tracer.ops.op_names import tf_op
from tracer.ops.registry import primitive
from tracer.ops.tangent_rules import LINEAR


def _infer_concat(attrs, *inputs):
    axis = attrs["axis"]
    shapes_given = [tuple(t.shape) for t in inputs]  # each read once: an eager `.shape` is new
    first = shapes_given[0]
    before, after = first[:axis], first[axis + 1 :]
    dtype = shapes.same_dtype(*inputs)
    for other in shapes_given[1:]:
        if len(other) == len(first) and other[:axis] == before and other[axis + 1 :] == after:
            continue

        def message():
            listed = ", ".join(str(t.shape) for t in inputs)
            return f"shapes {listed} differ outside axis {axis}"

        if len(other) != len(first):
            raise ValueError(message())
        for k, (size, size_first) in enumerate(zip(other, first)):
            if k != axis:
                dims.check_same(size_first, size, message)
    size = sum(d[axis] for d in shapes_given)
    return before + (size,) + after, dtype


def _concat_grad(node, g):
    """Each part's cotangent is its range of `g`: slices in canonical form, as `g[:, a:b]`
    would give them, made directly (concat's parts need no checking)."""
    axis, start, grads = node.attrs["axis"], 0, []
    whole = tuple((0, size, 1) for size in node.shape[:axis])
    for inp in node.inputs:
        stop = start + inp.shape[axis]
        index = (*whole, (start, stop, 1))
        grads.append(apply(array_ops.SLICE, (g,), {"index": index}))
        start = stop
    return tuple(grads)


def _concat_batch(node, args, flags, size):
    full = [
        arg if is_batched else broadcast_to(arg, (size,) + arg.shape)
        for arg, is_batched in zip(args, flags)
    ]
    return apply(CONCAT, tuple(full), {"axis": node.attrs["axis"] + 1})


def _concat_holds(node):
    """{position: element offset} of the parts that are contiguous runs of the result: all
    of them where the axes before the joined one have one element (codegen.forms.LoopNests).
    """
    axis, shape = node.attrs["axis"], node.shape
    if not dims.is_known(shape) or any(size != 1 for size in shape[:axis]):
        return {}
    row = dims.size(shape[axis + 1 :])
    starts = np.cumsum([0, *(part.shape[axis] for part in node.inputs)])
    return {k: int(starts[k]) * row for k, part in enumerate(node.inputs) if part.shape[axis]}


def _concat_nests(node, placed=frozenset()):
    """One copying nest per part, each writing at its offset along the axis; none for the
    parts computed in place (`placed`)."""
    axis, start, nests, params = node.attrs["axis"], 0, [], []
    for k, part in enumerate(node.inputs):
        index = identity_map(len(part.shape))
        shifted = tuple(a + start if d == axis else a for d, a in enumerate(index))
        start += part.shape[axis]
        if k in placed:
            continue
        nests.append(
            copy_nest(f"p{k}", part.shape, index, shifted, node.shape, loops_over(part.shape))
        )
        params.append((storage(part.dtype), f"p{k}"))
    return params, nests


def _concat_pieces(node):
    """(the joined axis, the range of it each input fills) (codegen.forms.Pieces)."""
    axis = node.attrs["axis"]
    stops = np.cumsum([part.shape[axis] for part in node.inputs]).tolist()
    return axis, list(zip([0, *stops[:-1]], stops))


def _concat_kernel(*xs, axis):
    """np.concatenate's values; a large one whose parts are each one block of the result
    (only ones before `axis`) written on the threads (codegen/array_math.py's `joined`)."""
    if sum(x.size for x in xs) >= LARGE_FLOATING_FROM and dims.size(xs[0].shape[:axis]) == 1:
        whole = list(xs[0].shape)
        whole[axis] = sum(x.shape[axis] for x in xs)
        found = array_math.joined(xs, tuple(whole), xs[0].dtype)
        if found is not None:
            return found
    return np.concatenate(xs, axis=axis)


CONCAT = primitive(
    "concat",
    _infer_concat,
    strings=True,
    grad=_concat_grad,
    jvp=LINEAR,
    fusion="view",
    batch=_concat_batch,
    kernel=_concat_kernel,
    c=forms.Pieces(_concat_nests, _concat_pieces, holds=_concat_holds),
)


def concat(values, axis, name=None):
    """Join `values` along an existing axis.

    >>> tt.concat([tt.ones((2, 1)), tt.zeros((2, 2))], axis=1).shape
    TensorShape([2, 3])
    """
    tensors = as_tensors(*values)
    if not tensors:
        raise ValueError("concat: needs at least one tensor")
    (axis,) = shapes.normalize_axes(int(axis), tensors[0].ndim)
    if len(tensors) == 1:
        return tensors[0]
    return apply(CONCAT, tensors, {"axis": axis})


@tf_op("stack")
def stack(values, axis=0, name=None):
    """Join same-shaped `values` along a new axis."""
    tensors = as_tensors(*values)
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    rank = tensors[0].ndim
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"stack: axis {axis} is out of range for tensors of rank {rank}")
    axis %= rank + 1
    first = tuple(tensors[0].shape)
    for t in tensors[1:]:
        shape = tuple(t.shape)
        if shape == first:
            continue

        def message(shape=shape):
            return f"stack: shapes {first} and {shape} differ"

        if len(shape) != len(first):
            raise ValueError(message())
        for size_first, size in zip(first, shape):
            dims.check_same(size_first, size, message)
    return concat([array_ops.expand_dims(t, axis) for t in tensors], axis)


def unstack(value, num=None, axis=0, name=None):
    """Split `value` along `axis` into a list of tensors of one rank less."""
    (x,) = as_tensors(value)
    (axis,) = shapes.normalize_axes(axis, x.ndim)
    lead = tuple(slice(None) for _ in range(axis))
    return [array_ops.getitem(x, lead + (i,)) for i in range(x.shape[axis])]


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """`value` cut along `axis` into a list of tensors, as TensorFlow's tf.split: an integer
    cuts it into that many equal parts (the axis must divide evenly), a list of sizes into
    parts of those sizes, one of which may be -1 (what the others leave)."""
    (x,) = as_tensors(value)
    (axis,) = shapes.normalize_axes(int(axis), x.ndim)
    extent = x.shape[axis]
    if not isinstance(extent, int):
        raise ValueError(f"split: axis {axis} has a size known only when the function runs")
    if isinstance(num_or_size_splits, (int, np.integer)):
        count = int(num_or_size_splits)
        if count < 1 or extent % count:
            raise _bad_split(
                f"split: axis {axis} of size {extent} cannot be cut into {count} equal parts"
            )
        sizes = [extent // count] * count
    else:
        sizes = [int(size) for size in np.asarray(num_or_size_splits).reshape(-1)]
        unknown = [k for k, size in enumerate(sizes) if size == -1]
        known = sum(size for size in sizes if size != -1)
        if len(unknown) > 1 or any(size < -1 for size in sizes) or known > extent:
            raise _bad_split(
                f"split: sizes {sizes} do not cut axis {axis} of size {extent} "
                "(sizes >= 0, at most one -1)"
            )
        if unknown:
            sizes[unknown[0]] = extent - known
        elif known != extent:
            raise _bad_split(f"split: sizes {sizes} add up to {known}, not axis {axis}'s {extent}")
    lead = tuple(slice(None) for _ in range(axis))
    starts = np.cumsum([0, *sizes])
    return [array_ops.getitem(x, lead + (slice(a, b),)) for a, b in zip(starts[:-1], starts[1:])]


def _bad_split(message):
    """TensorFlow's InvalidArgumentError, which is also a ValueError here."""
    return mixed(InvalidArgumentError, ValueError)(message)
