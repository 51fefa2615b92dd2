"""Windows whose start is known only when a traced function runs: `tt.slice` with begins
computed in the function, `x[i : i + 2]` and `x[j, i]` of such tensors,
`tt.image.crop_to_bounding_box` with such offsets, and `tt.image.random_crop`.

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
from tracer.ir import format_location, user_location
from tracer.ir.literal import Literal
from tracer.ops import array_ops, math_ops
from tracer.ops.convert import as_tensor
from tracer.ops.index_ops import gather
from tracer.tensor import SizeKnownWhenRun, Tensor


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


def indexed_by_tensors(x, key):
    """`x[key]` where `key` holds tensors known only when the function runs, as TensorFlow's
    strided slice takes them: a slice `start : start + c` (step 1, `c` a number) is a window
    of `c` there, and an integer tensor picks its row (a negative one from the end), each a
    window at a start known then; the rest of the key applies after, as written. Any other
    bound (`x[i:]`, whose length is known only then) makes the traced function run as Python
    at each call (RunsAsPython). A key that is one such tensor (`x[i]`, a loop's counter) is
    a gather of that row, which checks its range when it runs."""
    if isinstance(key, Tensor):
        return gather(x, _from_the_end(array_ops.cast(key, dtypes.int32), x._dims()[0]))
    items = key if isinstance(key, tuple) else (key,)
    consuming = sum(item is not None and item is not Ellipsis for item in items)
    shape = x._dims()
    windows, rest, axis = {}, [], 0
    for item in items:
        if item is Ellipsis:
            skipped = len(shape) - consuming
            rest.append(Ellipsis)
            axis += skipped
            continue
        if item is None:
            rest.append(None)
            continue
        if _symbolic(item) and axis < len(shape):
            start = array_ops.cast(as_tensor(item), dtypes.int32)
            if start.shape != () or not as_tensor(item).dtype.is_integer:
                raise TypeError(f"a tensor index must be an integer scalar, not {item!r}")
            windows[axis] = (_from_the_end(start, shape[axis]), 1)
            rest.append(0)
        elif isinstance(item, builtins.slice) and any(
            map(_symbolic, (item.start, item.stop, item.step))
        ):
            start, size = _fixed_window(item)
            if not size <= shape[axis]:  # (TensorFlow's window is cut at the end: its size
                _runs_as_python("whose window may reach past the end")  # known then)
            windows[axis] = (start, size)
            rest.append(builtins.slice(None))
        else:
            rest.append(item)
        axis += 1
    return window(x, windows)[tuple(rest)]


def _from_the_end(index, extent):
    """The int32 scalar `index` on an axis of `extent`, a negative one counted from the end
    as TensorFlow's strided slice counts it."""
    extent = array_ops.dims_value([extent], dtypes.int32)
    return math_ops.where(index < 0, index + extent, index)


def _symbolic(value):
    return isinstance(value, Tensor) and value._value is None


def _fixed_window(bounds):
    """(start, size) of a slice `start : start + c` with step 1; else RunsAsPython."""
    start, stop, step = bounds.start, bounds.stop, bounds.step
    (base, low), (top, high) = _base_and_offset(start), _base_and_offset(stop)
    by_one = step is None or (isinstance(step, (int, np.integer)) and step == 1)
    if by_one and start is not None and stop is not None and _same_value(base, top):
        if high >= low:
            begin = start if isinstance(start, int) else array_ops.cast(start, dtypes.int32)
            return begin, high - low
    _runs_as_python("whose distance is not a number known when tracing")


def _same_value(a, b):
    """Whether nodes `a` and `b` (or None for numbers) compute one value: the same node, or
    the same op of the same inputs (`o[0]` written twice)."""
    if a is b:
        return True
    if a is None or b is None or not hasattr(a, "op") or not hasattr(b, "op"):
        return False
    if a.op != b.op or not a.inputs or len(a.inputs) != len(b.inputs):
        return False  # (two draws of a random op, two inputs: other values)
    if any(x is not y for x, y in zip(a.inputs, b.inputs)):
        return False
    try:
        return bool(a.attrs == b.attrs)
    except ValueError:  # (attributes holding arrays)
        return False


def _runs_as_python(why):
    location = format_location(user_location())
    raise SizeKnownWhenRun(
        f"slices a tensor by bounds computed when it runs{f' (at {location})' if location else ''}"
        f" {why}: compiled code holds sizes known when tracing, so the function runs as Python "
        "at each call (`x[i : i + 2]` within the tensor compiles)"
    )


def _base_and_offset(bound):
    """(node, c) for a bound that is node + c (node None for a number c)."""
    if isinstance(bound, (int, np.integer)):
        return None, int(bound)
    if not isinstance(bound, Tensor) or bound._node is None:
        return object(), 0  # (matches nothing)
    node = bound._node
    if node.op in ("add", "sub") and len(node.inputs) == 2:
        left, right = (_number(n) for n in node.inputs)
        if right is not None:
            return node.inputs[0], right if node.op == "add" else -right
        if left is not None and node.op == "add":
            return node.inputs[1], left
    return node, 0


def _number(node):
    """The int a scalar `const` node holds, else None."""
    value = node.attrs.get("value") if node.op == "const" else None
    value = value.array if isinstance(value, Literal) else value
    if (
        value is None
        or np.ndim(value) != 0
        or not np.issubdtype(np.asarray(value).dtype, np.integer)
    ):
        return None
    return int(value)


array_ops.tensor_index[0] = indexed_by_tensors  # `x[i : i + 2]`, `x[j, i]`


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
