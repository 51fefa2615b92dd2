"""Moving elements to new places: pad, reverse, roll, reverse_sequence, depth_to_space,
space_to_depth, space_to_batch_nd and batch_to_space, with TensorFlow's semantics.

    pad      a primitive: CONSTANT, REFLECT and SYMMETRIC padding, written in C as one
             function of loop nests (the interior copied in, then the border filled: with
             the constant, or axis by axis from the values already in place). Its gradient
             is a slice (CONSTANT), or the slice of the interior plus each border's mirror
             image added back onto the positions it copied (REFLECT, SYMMETRIC).
    reverse  a primitive view: the index map i -> n - 1 - i, so it fuses into the loop that
             reads it, as x[::-1] does; its gradient is the same reverse.
    roll     a composition: one gather per rolled axis with the indices (i - shift) mod n,
             whose gradient is a scatter_add (one op each way, and a shift may be a tensor
             known only when the function runs).
    reverse_sequence  a composition: one gather along the sequence axis with each batch
             element's own indices (batch_dims 1), so the lengths may be a tensor.
    depth_to_space, space_to_depth, space_to_batch_nd, batch_to_space  compositions: a
             reshape to blocks, a transpose, a reshape (after a pad, before a slice).

NOTE: the fused loops read a view through an affine index map, which cannot say "the
constant outside the interior" or "the mirror image past the edge"; so pad is a stored
value, computed by its own kernel, and its gradient (a slice) is the part that fuses.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import literal, storage
from codegen.loops import copy_nest, fill_nest, identity_map, loops_over, parallel_kind
from tracer import dtypes
from tracer.ir import dims, match
from tracer.ops import array_ops, batching, index_ops, math_ops, shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import primitive
from tracer.ops.tangent_rules import LINEAR, tangent_or_zeros
from tracer.tensor import Tensor, is_tensor_like

PAD_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


# --- pad --------------------------------------------------------------------------------


def _infer_pad(attrs, x):
    paddings = attrs["paddings"]
    if len(paddings) != len(x.shape):
        raise ValueError(
            f"paddings has {len(paddings)} rows, but the tensor of shape {x.shape} has "
            f"{len(x.shape)} axes"
        )
    return tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, paddings)), x.dtype


def _pad_kernel(x, paddings, mode, value=0):
    if mode == "CONSTANT":
        return np.pad(x, paddings, mode="constant", constant_values=value)
    return np.pad(x, paddings, mode=mode.lower())


def _axis_slice(x, axis, start, stop):
    """x[..., start:stop, ...] along `axis`."""
    index = tuple((0, d, 1) for d in x.shape[:axis]) + ((start, stop, 1),)
    return apply(array_ops.SLICE, (x,), {"index": index})


def _zero_pad(x, axis, before, after):
    paddings = tuple((before, after) if a == axis else (0, 0) for a in range(x.ndim))
    return apply(PAD, (x,), {"paddings": paddings, "mode": "CONSTANT", "value": 0})


def _mirror_fold(g, axis, lo, hi, size, mode):
    """The gradient of one axis of a mirror pad: the interior of `g`, plus its two borders
    reversed and added onto the positions they were copied from (REFLECT skips the edge
    element, SYMMETRIC repeats it)."""
    edge = 1 if mode == "REFLECT" else 0
    total = _axis_slice(g, axis, lo, lo + size)
    if lo:
        left = reverse(_axis_slice(g, axis, 0, lo), [axis])
        total = total + _zero_pad(left, axis, edge, size - edge - lo)
    if hi:
        right = reverse(_axis_slice(g, axis, lo + size, lo + size + hi), [axis])
        total = total + _zero_pad(right, axis, size - edge - hi, edge)
    return total


def _pad_grad(node, g):
    paddings, mode = node.attrs["paddings"], node.attrs["mode"]
    shape = node.inputs[0].shape
    if mode == "CONSTANT":
        index = tuple((lo, lo + d, 1) for d, (lo, _) in zip(shape, paddings))
        return (apply(array_ops.SLICE, (g,), {"index": index}),)
    for axis, (d, (lo, hi)) in enumerate(zip(shape, paddings)):
        if lo or hi:
            g = _mirror_fold(g, axis, lo, hi, d, mode)
    return (g,)


def _pad_jvp(node, tangents, inputs, out):
    """Linear in the tensor; the border of a constant pad carries no tangent."""
    attrs = dict(node.attrs, value=0) if "value" in node.attrs else node.attrs
    return apply(PAD, (tangent_or_zeros(tangents[0], inputs[0]),), attrs)


def _pad_batch(node, args, flags, size):
    attrs = dict(node.attrs, paddings=((0, 0),) + node.attrs["paddings"])
    return apply(PAD, (args[0],), attrs)


def _pad_nests(node):
    """The interior copied from the input; then the border: the constant (CONSTANT), axis
    after axis, over the interior of the axes done before and the whole padded extent of
    the rest (each element written once); or, axis after axis, each border's mirror image
    read from `out` itself, over the whole padded extent of the axes done before and the
    interior of the rest."""
    (x,) = node.inputs
    paddings, mode = node.attrs["paddings"], node.attrs["mode"]
    index = identity_map(len(x.shape))
    interior = tuple(i + lo for i, (lo, _) in zip(index, paddings))
    nests = [copy_nest("p0", x.shape, index, interior, node.shape, loops_over(x.shape))]
    if mode == "CONSTANT":
        value = f"({storage(node.dtype)}){literal(node.attrs['value'], node.dtype)}"
        for axis, (lo, hi) in enumerate(paddings):
            for start, extent in ((0, lo), (lo + x.shape[axis], hi)):
                if not extent:
                    continue
                extents = [*x.shape[:axis], extent, *node.shape[axis + 1 :]]
                target = (*interior[:axis], index[axis] + start, *index[axis + 1 :])
                nests.append(fill_nest(target, node.shape, value, loops_over(extents)))
        return [(storage(x.dtype), "p0")], _on_threads(nests)
    edge = 1 if mode == "REFLECT" else 0
    for axis, (lo, hi) in enumerate(paddings):
        size = x.shape[axis]
        for start, extent, mirror in (
            (0, lo, 2 * lo - 1 + edge),  # out[j] = out[2 lo - 1 + edge - j]
            (lo + size, hi, 2 * (lo + size) - 1 - edge),  # the same about the right edge
        ):
            if not extent:
                continue
            extents = [*node.shape[:axis], extent, *x.shape[axis + 1 :]]
            target = (*index[:axis], index[axis] + start, *interior[axis + 1 :])
            source = (*index[:axis], index[axis] * -1 + (mirror - start), *interior[axis + 1 :])
            nests.append(
                copy_nest("out", node.shape, source, target, node.shape, loops_over(extents))
            )
    return [(storage(x.dtype), "p0")], _on_threads(nests)


def _on_threads(nests):
    """The nests, large ones parallel over their outer loop: each writes every element of
    its region once, and reads the input or regions earlier nests wrote."""
    for nest in nests:
        nest.parallel = parallel_kind(nest)
    return nests


PAD = primitive(
    "pad",
    _infer_pad,
    grad=_pad_grad,
    jvp=_pad_jvp,
    batch=_pad_batch,
    kernel=_pad_kernel,
    c=forms.LoopNests(_pad_nests),
)


def _static_paddings(paddings, x):
    """`paddings` as ((before, after), ...) of ints, one pair per axis of `x`, or a clear error."""
    if isinstance(paddings, Tensor):
        if paddings._value is None:
            raise ValueError(
                "pad: paddings must be known when the function is traced, not a tensor "
                "computed when it runs"
            )
        paddings = paddings._value
    array = np.asarray(paddings)
    if array.size == 0 and x.ndim == 0:
        array = array.reshape(0, 2)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] != x.ndim:
        raise ValueError(
            f"pad: paddings must have shape [{x.ndim}, 2] (a [before, after] pair per axis of "
            f"the tensor of shape {x.shape}), got shape {list(array.shape)}"
        )
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"pad: paddings must be integers, got {array.dtype}")
    pairs = tuple((int(lo), int(hi)) for lo, hi in array)
    for axis, pair in enumerate(pairs):
        if min(pair) < 0:
            raise ValueError(
                f"pad: paddings must be non-negative, got {list(pair)} for axis {axis}"
            )
    return pairs


def _check_mirror(x, pairs, mode):
    """TensorFlow's bounds: REFLECT pads less than the axis' size, SYMMETRIC no more."""
    for axis, (pair, size) in enumerate(zip(pairs, x.shape)):
        if pair == (0, 0):
            continue
        if isinstance(size, dims.Dim):
            raise ValueError(
                f"pad: axis {axis} of shape {x.shape} is known only when the function runs, "
                f"and {mode} padding needs its size"
            )
        limit, rule = (size - 1, "less than") if mode == "REFLECT" else (size, "at most")
        if max(pair) > limit:
            raise ValueError(
                f"pad: {mode} paddings must be {rule} the size of the axis: axis {axis} has "
                f"size {size}, paddings {list(pair)}"
            )


def _constant_value(value, x):
    """constant_values as a Python scalar of x's dtype, or a scalar Tensor known only when
    the function runs."""
    if is_tensor_like(value):
        c = as_tensor(value)
        if c.dtype != x.dtype:
            raise TypeError(
                f"pad: constant_values has dtype {c.dtype.name}, the tensor {x.dtype.name}"
            )
    else:
        c = Tensor(np.asarray(_scalar_in(value, x.dtype)))
    if c.shape != ():
        raise ValueError(f"pad: constant_values must be a scalar, got shape {c.shape}")
    return c if c._value is None else c._value.item()


def _scalar_in(value, dtype):
    array = np.asarray(value)
    converted = array.astype(dtype.as_numpy_dtype)
    if array.dtype.kind == "f" and dtype.is_integer and not np.all(converted == array):
        raise TypeError(f"pad: constant_values {value!r} cannot be converted to {dtype.name}")
    return converted


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """`tensor` with `paddings[d] = [before, after]` elements added on each side of axis d.

    CONSTANT fills them with `constant_values`; REFLECT mirrors the tensor about its edge
    elements (paddings less than the axis' size); SYMMETRIC mirrors it including the edge
    (paddings at most the axis' size). `mode` is case-insensitive.

    >>> tt.pad(tt.constant([1, 2, 3]), [[2, 1]], "REFLECT").numpy()
    array([3, 2, 1, 2, 3, 2], dtype=int32)
    """
    x = as_tensor(tensor)
    mode_name = str(mode).upper()
    if mode_name not in PAD_MODES:
        raise ValueError(
            f'pad: mode must be one of "CONSTANT", "REFLECT" or "SYMMETRIC", got {mode!r}'
        )
    pairs = _static_paddings(paddings, x)
    padded = [axis for axis, pair in enumerate(pairs) if pair != (0, 0)]
    for axis in padded:
        if isinstance(x.shape[axis], dims.Dim):
            raise ValueError(
                f"pad: axis {axis} of shape {x.shape} is known only when the function runs; "
                "only axes of known size can be padded"
            )
    if mode_name != "CONSTANT":
        _check_mirror(x, pairs, mode_name)
        return apply(PAD, (x,), {"paddings": pairs, "mode": mode_name}) if padded else x
    value = _constant_value(constant_values, x)
    if not padded:
        return x
    if isinstance(value, Tensor):  # known only when the function runs
        inside = apply(PAD, (array_ops.ones(x.shape, dtypes.bool),), _constant_attrs(pairs, False))
        filled = apply(PAD, (x,), _constant_attrs(pairs, 0))
        # TensorFlow's PadV2 gives constant_values no gradient
        return math_ops.where(inside, filled, array_ops.stop_gradient(value))
    return apply(PAD, (x,), _constant_attrs(pairs, value))


def _constant_attrs(pairs, value):
    return {"paddings": pairs, "mode": "CONSTANT", "value": value}


# --- reverse ----------------------------------------------------------------------------


def _reverse_view(node, out_map):
    shape, axes = node.inputs[0].shape, node.attrs["axis"]
    return tuple(
        out_map[a] * -1 + (shape[a] - 1) if a in axes else out_map[a] for a in range(len(shape))
    )


def _reverse_simplify(node):
    """reverse[a](reverse[a](x)) => x."""
    (x,) = node.inputs
    if x.op == "reverse" and x.attrs["axis"] == node.attrs["axis"]:
        return match.same(node, x.inputs[0])
    return None


REVERSE = primitive(
    "reverse",
    shapes.unary,
    strings=True,
    grad=lambda node, g: (apply(REVERSE, (g,), node.attrs),),
    jvp=LINEAR,
    fusion="view",
    batch=batching.shifted_axis("axis"),
    simplify=_reverse_simplify,
    kernel=lambda x, axis: np.flip(x, axis),
    c=forms.View(_reverse_view),
)


def _known(value, what, function):
    """`value` (an int, a nested sequence, or a tensor known now) as a numpy array."""
    if isinstance(value, Tensor):
        if value._value is None:
            raise ValueError(f"{function}: {what} must be known when the function is traced")
        value = value._value
    return np.asarray(value)


def _int_list(value, what, function):
    """A list of Python ints from an int, a sequence or a tensor known now."""
    array = _known(value, what, function)
    if array.ndim > 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{function}: {what} must be an int or a list of ints, got {value!r}")
    return [int(v) for v in array.reshape(-1)]


def _axis_in_range(axis, ndim, function):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{function}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim


def reverse(tensor, axis, name=None):
    """`tensor` with the order of its elements reversed along each axis in `axis`.

    >>> tt.reverse(tt.constant([[1, 2, 3], [4, 5, 6]]), [1]).numpy()
    array([[3, 2, 1],
           [6, 5, 4]], dtype=int32)
    """
    x = as_tensor(tensor)
    axes = [_axis_in_range(a, x.ndim, "reverse") for a in _int_list(axis, "axis", "reverse")]
    repeated = sorted({a for a in axes if axes.count(a) > 1})
    if repeated:
        raise ValueError(f"reverse: axis {repeated[0]} is given more than once")
    axes = tuple(sorted(a for a in axes if x.shape[a] != 1))
    return apply(REVERSE, (x,), {"axis": axes}) if axes else x


# --- roll (a composition) ---------------------------------------------------------------


def roll(input, shift, axis, name=None):
    """`input` with its elements shifted `shift` places along `axis` (ints, or lists of
    the same length; elements past the end come back at the start, and shifts of one axis
    named twice add up). A shift may be a tensor; the axes must be known.

    >>> tt.roll(tt.constant([0, 1, 2, 3, 4]), shift=2, axis=0).numpy()
    array([3, 4, 0, 1, 2], dtype=int32)
    """
    x = as_tensor(input)
    axes = [_axis_in_range(a, x.ndim, "roll") for a in _int_list(axis, "axis", "roll")]
    shift_tensor = isinstance(shift, Tensor) and shift._value is None
    if shift_tensor:
        shifts = array_ops.reshape(shift, [-1])
        count = shifts.shape[0]
    else:
        shifts = _int_list(shift, "shift", "roll")
        count = len(shifts)
    if count != len(axes):
        raise ValueError(
            f"roll: shift and axis must have the same length, got {count} shift(s) and "
            f"{len(axes)} axis(es)"
        )
    totals = {}
    for k, axis in enumerate(axes):
        term = shifts[k]
        totals[axis] = term if axis not in totals else totals[axis] + term
    for axis, total in sorted(totals.items()):
        size = x.shape[axis]
        if isinstance(size, dims.Dim):
            raise ValueError(
                f"roll: axis {axis} of shape {x.shape} is known only when the function runs"
            )
        if size == 0:
            continue
        positions = np.arange(size, dtype=np.int64)
        if shift_tensor:
            indices = math_ops.floormod(
                Tensor(positions) - array_ops.cast(total, dtypes.int64), size
            )
        elif total % size:
            indices = Tensor((positions - total) % size)
        else:
            continue
        x = apply(index_ops.GATHER, (x, indices), {"axis": axis})
    return x


# --- reverse_sequence, depth_to_space, space_to_depth (compositions) -------------------------


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=0, name=None):
    """`input` with the first `seq_lengths[b]` elements along `seq_axis` of each batch
    element `b` (along `batch_axis`) reversed, the rest as they are, as TensorFlow's. One
    gather along `seq_axis` with each batch element's own indices, so `seq_lengths` may be a
    tensor known only when the function runs; lengths past the axis's size are an error
    where they are known.

    >>> tt.reverse_sequence(tt.constant([[1, 2, 3], [4, 5, 6]]), [2, 3], seq_axis=1).numpy()
    array([[2, 1, 3],
           [6, 5, 4]], dtype=int32)
    """
    x = as_tensor(input)
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis must be given")
    seq_axis = _axis_in_range(seq_axis, x.ndim, "reverse_sequence")
    batch_axis = _axis_in_range(batch_axis, x.ndim, "reverse_sequence")
    if seq_axis == batch_axis:
        raise ValueError(f"reverse_sequence: seq_axis and batch_axis are both {seq_axis}")
    lengths = as_tensor(seq_lengths)
    if not lengths.dtype.is_integer or lengths.ndim != 1:
        raise ValueError(
            f"reverse_sequence: seq_lengths must be a vector of integers, not "
            f"{lengths.dtype.name}{list(lengths.shape)}"
        )
    batch, steps = x.shape[batch_axis], x.shape[seq_axis]
    if isinstance(steps, dims.Dim) or isinstance(batch, dims.Dim):
        raise ValueError(
            f"reverse_sequence: the batch and sequence axes of shape {x.shape} must be known "
            "when the function is traced"
        )
    if lengths.shape[0] != batch:
        raise ValueError(
            f"reverse_sequence: seq_lengths has {lengths.shape[0]} lengths for a batch of {batch}"
        )
    known = lengths._value
    if known is not None and ((known < 0) | (known > steps)).any():
        raise ValueError(f"reverse_sequence: seq_lengths must be in [0, {steps}], got {known}")
    # batch first, sequence second, as the gather's batch_dims=1 takes them
    order = [batch_axis, seq_axis] + [a for a in range(x.ndim) if a not in (batch_axis, seq_axis)]
    moved = array_ops.transpose(x, order)
    step = Tensor(np.arange(steps, dtype=np.int64))
    length = array_ops.reshape(array_ops.cast(lengths, dtypes.int64), [-1, 1])
    indices = math_ops.where(step < length, length - 1 - step, step)
    reversed_ = index_ops.gather(moved, indices, axis=1, batch_dims=1)
    return array_ops.transpose(reversed_, list(np.argsort(order)))


def depth_to_space(input, block_size, data_format="NHWC", name=None):
    """An NHWC tensor's channels moved into blocks of `block_size` x `block_size` pixels, as
    TensorFlow's (its DCR order: the channels of one pixel of a block are consecutive):
    (n, h, w, c) -> (n, h * b, w * b, c / b^2).

    >>> tt.nn.depth_to_space(tt.reshape(tt.range(4), [1, 1, 1, 4]), 2).numpy()[0, :, :, 0]
    array([[0, 1],
           [2, 3]], dtype=int32)
    """
    x, b = _space_and_depth(input, block_size, data_format, "depth_to_space")
    n, h, w, c = x.shape
    if c % (b * b):
        raise ValueError(
            f"depth_to_space: the channels ({c}) must be a multiple of block_size^2 ({b * b})"
        )
    blocks = array_ops.reshape(x, [n, h, w, b, b, c // (b * b)])
    pixels = array_ops.transpose(blocks, [0, 1, 3, 2, 4, 5])
    return array_ops.reshape(pixels, [n, h * b, w * b, c // (b * b)])


def space_to_depth(input, block_size, data_format="NHWC", name=None):
    """An NHWC tensor's blocks of `block_size` x `block_size` pixels moved into channels, as
    TensorFlow's (depth_to_space undone): (n, h, w, c) -> (n, h / b, w / b, c * b^2).

    >>> tt.nn.space_to_depth(tt.reshape(tt.range(4), [1, 2, 2, 1]), 2).numpy()[0, 0, 0]
    array([0, 1, 2, 3], dtype=int32)
    """
    x, b = _space_and_depth(input, block_size, data_format, "space_to_depth")
    n, h, w, c = x.shape
    if h % b or w % b:
        raise ValueError(
            f"space_to_depth: the height ({h}) and width ({w}) must be multiples of "
            f"block_size ({b})"
        )
    blocks = array_ops.reshape(x, [n, h // b, b, w // b, b, c])
    pixels = array_ops.transpose(blocks, [0, 1, 3, 2, 4, 5])
    return array_ops.reshape(pixels, [n, h // b, w // b, b * b * c])


def _space_and_depth(input, block_size, data_format, function):
    """(the NHWC tensor, the block size) of depth_to_space or space_to_depth, checked."""
    if data_format != "NHWC":
        raise ValueError(f"{function}: tracer takes data_format 'NHWC', not {data_format!r}")
    x = as_tensor(input)
    if x.ndim != 4:
        raise ValueError(f"{function}: input must be of rank 4 (NHWC), not {x.ndim}")
    if any(isinstance(d, dims.Dim) for d in x.shape[1:]):
        raise ValueError(
            f"{function}: the height, width and channels of shape {x.shape} must be known "
            "when the function is traced"
        )
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"{function}: block_size must be an int, not {block_size!r}")
    if block_size < 2:
        raise ValueError(f"{function}: block_size must be at least 2, not {block_size}")
    return x, int(block_size)


def space_to_batch_nd(input, block_shape, paddings, name=None):
    """`input`'s M spatial dimensions (those after the batch) zero-padded by `paddings` (M
    pairs) and cut into blocks of `block_shape` (M sizes), each block's offset moved into
    the batch, as TensorFlow's: (b, s1, ..., sM, rest) -> (b * prod(block_shape),
    (s1 + padding) / block_shape[0], ..., rest). `block_shape` and `paddings` must be known.

    >>> tt.space_to_batch_nd(tt.reshape(tt.range(4), [1, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]]).numpy().ravel()
    array([0, 1, 2, 3], dtype=int32)
    """
    x = as_tensor(input)
    block = _block_shape(block_shape, x, "space_to_batch_nd")
    m = len(block)
    pairs = _int_pairs(paddings, m, "paddings", "space_to_batch_nd")
    padded = pad(x, [[0, 0], *pairs.tolist(), *[[0, 0]] * (x.ndim - 1 - m)])
    spatial = list(padded.shape[1 : 1 + m])
    if any(size % b for size, b in zip(spatial, block)):
        raise ValueError(
            f"space_to_batch_nd: the padded spatial shape {spatial} must be divisible by "
            f"block_shape {block}"
        )
    batch, rest = x.shape[0], list(x.shape[1 + m :])
    split = [batch] + [d for size, b in zip(spatial, block) for d in (size // b, b)] + rest
    blocks = array_ops.reshape(padded, split)
    order = [2 + 2 * k for k in range(m)] + [0] + [1 + 2 * k for k in range(m)]
    order += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    moved = array_ops.transpose(blocks, order)
    outer = [batch * int(np.prod(block))] + [size // b for size, b in zip(spatial, block)]
    return array_ops.reshape(moved, outer + rest)


def batch_to_space(input, block_shape, crops, name=None):
    """space_to_batch_nd undone, as TensorFlow's: the batch's blocks (prod(block_shape) of
    them) put back side by side in the M spatial dimensions, then `crops` (M pairs) cut from
    their ends. `block_shape` and `crops` must be known.

    >>> tt.batch_to_space(tt.reshape(tt.range(4), [4, 1, 1, 1]), [2, 2], [[0, 0], [0, 0]]).numpy().ravel()
    array([0, 1, 2, 3], dtype=int32)
    """
    x = as_tensor(input)
    block = _block_shape(block_shape, x, "batch_to_space")
    m, count = len(block), int(np.prod(block))
    pairs = _int_pairs(crops, m, "crops", "batch_to_space")
    if x.shape[0] % count:
        raise ValueError(
            f"batch_to_space: the batch ({x.shape[0]}) must be divisible by the product of "
            f"block_shape ({count})"
        )
    batch, spatial, rest = x.shape[0] // count, list(x.shape[1 : 1 + m]), list(x.shape[1 + m :])
    blocks = array_ops.reshape(x, [*block, batch, *spatial, *rest])
    order = [m] + [d for k in range(m) for d in (m + 1 + k, k)]
    order += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    moved = array_ops.transpose(blocks, order)
    whole = [size * b for size, b in zip(spatial, block)]
    joined = array_ops.reshape(moved, [batch, *whole, *rest])
    if (pairs.sum(1) > np.asarray(whole)).any():
        raise ValueError(f"batch_to_space: crops {pairs.tolist()} exceed the shape {whole}")
    begin = [0, *pairs[:, 0].tolist(), *[0] * len(rest)]
    size = [batch, *(np.asarray(whole) - pairs.sum(1)).tolist(), *rest]
    return array_ops.slice_(joined, begin, size)


def _int_pairs(value, count, what, function):
    """`value` (a nested list, or a tensor known now) as a (count, 2) array of non-negative
    ints."""
    pairs = _known(value, what, function)
    if pairs.shape != (count, 2) or not np.issubdtype(pairs.dtype, np.integer) or (pairs < 0).any():
        raise ValueError(
            f"{function}: {what} must be {count} pairs of non-negative ints, got {pairs.tolist()}"
        )
    return pairs.astype(np.int64)


def _block_shape(block_shape, x, function):
    """`block_shape` as a list of ints (at least 1 each, of at most x's rank - 1 dimensions),
    and x's batch and spatial dimensions known."""
    block = _int_list(block_shape, "block_shape", function)
    if not block or len(block) >= x.ndim or min(block) < 1:
        raise ValueError(
            f"{function}: block_shape must be 1 to {x.ndim - 1} sizes of at least 1 for a "
            f"tensor of rank {x.ndim}, got {block}"
        )
    if any(isinstance(d, dims.Dim) for d in x.shape[: 1 + len(block)]):
        raise ValueError(
            f"{function}: the batch and spatial dimensions of shape {x.shape} must be known "
            "when the function is traced"
        )
    return block
