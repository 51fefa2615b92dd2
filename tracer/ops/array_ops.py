"""Shape and data-movement ops: reshape, transpose, cast, slicing, creation.

Each primitive is declared once, with everything about it beside its public function: its
gradient, batching and simplification rules, its numpy kernel and its C form (see
`tracer/ops/registry.py`). `broadcast_to` and `tile`, whose gradients are sums, are in
`broadcast_ops.py`.
"""

import builtins

import numpy as np

from codegen import array_math, forms
from codegen.affine import Affine
from codegen.ctypes import compute, literal, storage
from codegen.loops import INDEX, copy_nest, fill_nest, identity_map, loops_over
from runtime.kernels import LARGE_FLOATING_FROM, element_array, quiet
from tracer import dtypes
from tracer.context import state
from tracer.dtypes import as_dtype
from tracer.errors import InvalidArgumentError, RunsAsPython, as_tf, mixed
from tracer.ir import dims, format_location, match, user_location
from tracer.ops import dim_values, shapes
from tracer.ops.convert import as_tensor, known_value
from tracer.ops.convert import as_tensors as convert_as_tensors
from tracer.ops.core import apply
from tracer.ops.registry import OPS, primitive, unbatchable
from tracer.ops.tangent_rules import LINEAR
from tracer.tensor import SizeKnownWhenRun, Tensor, _from_python, convert_to_tensor


def shape_tuple(shape):
    """A shape as a tuple of ints (and of unknown dimensions, while tracing one: a symbolic
    tensor computed from shapes gives them, as in `tt.ones([tt.shape(x)[0], 3])`)."""
    if _is_symbolic(shape):
        return dim_values.known_shape(shape)
    if hasattr(shape, "numpy"):
        shape = shape.numpy()
    if isinstance(shape, (int, np.integer, dims.Dim)):
        shape = (shape,)
    return tuple(_dimension(d) for d in shape)


def _is_symbolic(value):
    return isinstance(value, Tensor) and value._value is None


def _dimension(d):
    if isinstance(d, dims.Dim):
        return d
    if _is_symbolic(d):
        known = dim_values.known_shape(d)
        if len(known) != 1:
            raise ValueError(f"a dimension is one number, not {len(known)}: {d!r}")
        return known[0]
    return int(d)


def only_unit_axes_change(source_shape, target_shape):
    """Whether a reshape only adds or drops axes of size 1 (its elements keep their order
    along every other axis, so it is an index remap rather than a new layout)."""
    return [d for d in source_shape if d != 1] == [d for d in target_shape if d != 1]


# --- reshape ----------------------------------------------------------------------------


def _reshape_grad(node, g):
    return (reshape(g, node.inputs[0].shape),)


def _reshape_batch(node, args, flags, size):
    return reshape(args[0], (size,) + node.attrs["shape"])


def _reshape_simplify(node):
    """reshape(reshape(x)) => reshape(x); a reshape to x's own shape => x; and
    reshape(transpose(reshape(x))), where the inner reshape only inserts unit axes and the
    outer one only drops them, => transpose(x) (how x[:, None] and its gradient come back)."""
    moved = _transpose_between_unit_axes(node)
    if moved is not None:
        return moved
    (x,) = node.inputs
    if x.op == "reshape":
        x = x.inputs[0]
    if x.shape == node.shape:
        return match.same(node, x)
    if x is node.inputs[0]:
        return None
    return match.derived(node, "reshape", (x,), node.shape, **node.attrs)


def _transpose_between_unit_axes(node):
    inner = node.inputs[0]
    if inner.op != "transpose" or inner.inputs[0].op != "reshape":
        return None
    expanded = inner.inputs[0]
    x = expanded.inputs[0]
    if 1 in x.shape or 1 in node.shape:
        return None
    kept = [axis for axis, size in enumerate(expanded.shape) if size != 1]
    if [expanded.shape[a] for a in kept] != list(x.shape):
        return None
    perm = tuple(kept.index(a) for a in inner.attrs["perm"] if expanded.shape[a] != 1)
    if tuple(x.shape[a] for a in perm) != node.shape:
        return None
    if perm == tuple(range(len(perm))):
        return match.same(node, x)
    return match.derived(node, "transpose", (x,), node.shape, perm=perm)


def _reshape_view(node, index_map):
    """A reshape that only adds or drops size-1 axes; other reshapes read a stored input by
    flat offset (`flat_when_stored`), which fusion arranges (`needs_stored_input`)."""
    kept = iter(a for a, d in zip(index_map, node.shape) if d != 1)
    return tuple(Affine() if d == 1 else next(kept) for d in node.inputs[0].shape)


RESHAPE = primitive(
    "reshape",
    shapes.reshape,
    strings=True,
    grad=_reshape_grad,
    jvp=LINEAR,
    fusion="view",
    needs_stored_input=lambda node: not only_unit_axes_change(node.inputs[0].shape, node.shape),
    batch=_reshape_batch,
    simplify=_reshape_simplify,
    kernel=lambda x, shape: np.reshape(x, shape),
    c=forms.View(_reshape_view, flat_when_stored=True),
)


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape of the same size; one dimension may be -1.

    >>> tt.reshape(tt.ones((2, 3)), [3, -1]).shape
    TensorShape([3, 2])
    """
    x = as_tensor(tensor)
    shape = shape_tuple(shape)
    if -1 in shape:
        known = dims.size([d for d in shape if d != -1])
        try:
            if shape.count(-1) > 1 or known == 0 or dims.size(x.shape) % known:
                raise TypeError
            missing = dims.size(x.shape) // known
        except TypeError:
            raise mixed(InvalidArgumentError, ValueError)(
                f"reshape: cannot reshape a tensor of shape {x.shape} into shape {shape}"
            ) from None
        shape = tuple(missing if d == -1 else d for d in shape)
    if shape == x.shape:
        return x
    return apply(RESHAPE, (x,), {"shape": shape})


def expand_dims(input, axis, name=None):
    x = as_tensor(input)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of range for a tensor of rank {x.ndim}")
    axis = axis % (x.ndim + 1)
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(input, axis=None, name=None):
    x = as_tensor(input)
    if axis is None:
        axes = {i for i, d in enumerate(x.shape) if dims.equals(d, 1)}
    else:
        axes = set(shapes.normalize_axes(axis, x.ndim))
        bad = [a for a in sorted(axes) if x.shape[a] != 1]
        if bad:
            raise ValueError(
                f"squeeze: axis {bad[0]} of shape {x.shape} has size {x.shape[bad[0]]}, not 1"
            )
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


# --- transpose --------------------------------------------------------------------------


def _transpose_grad(node, g):
    return (transpose(g, tuple(int(p) for p in np.argsort(node.attrs["perm"]))),)


def _transpose_batch(node, args, flags, size):
    return transpose(args[0], (0,) + tuple(p + 1 for p in node.attrs["perm"]))


def _transpose_simplify(node):
    """transpose[p](transpose[q](x)) => transpose[q∘p](x), or x when that is the identity."""
    (x,) = node.inputs
    perm = node.attrs["perm"]
    if x.op == "transpose":
        inner = x.attrs["perm"]
        perm = tuple(inner[p] for p in perm)
        x = x.inputs[0]
    if perm == tuple(range(len(perm))):
        return match.same(node, x)
    if x is node.inputs[0]:
        return None
    return match.derived(node, "transpose", (x,), node.shape, perm=perm)


def _transpose_view(node, index_map):
    source = [None] * len(node.inputs[0].shape)
    for k, p in enumerate(node.attrs["perm"]):
        source[p] = index_map[k]
    return tuple(source)


TRANSPOSE = primitive(
    "transpose",
    shapes.transpose,
    strings=True,
    grad=_transpose_grad,
    jvp=LINEAR,
    fusion="view",
    batch=_transpose_batch,
    simplify=_transpose_simplify,
    kernel=lambda x, perm: np.transpose(x, perm),
    c=forms.View(_transpose_view),
)


def transpose(a, perm=None, conjugate=False, name=None):
    x = as_tensor(a)
    perm = tuple(reversed(range(x.ndim))) if perm is None else tuple(int(p) for p in perm)
    return apply(TRANSPOSE, (x,), {"perm": perm})


# --- cast, identity, stop_gradient -------------------------------------------------------


def _cast_grad(node, g):
    source = node.inputs[0].dtype
    return (cast(g, source) if source.is_differentiable else None,)


def same_as_input(node):
    """An op that changes nothing here (a cast or broadcast to what it is) => its input."""
    return match.same(node, node.inputs[0])


@quiet  # a NaN or a float out of an integer type's range: numpy's value, without a warning
def _cast_kernel(x, dtype):
    """numpy's conversion; to float16 from a wider type through float32, as TensorFlow's
    and the C's (float16 is computed in float), so that values rounded twice agree:
    1 + 2^-11 + 2^-40 becomes 1 there, where numpy's direct conversion gives 1.00098."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and (dtype.is_bool or dtype.is_floating):
        x = x.real  # the real part's, as any complex to real cast
    if dtype == dtypes.float16 and x.dtype.itemsize > 4 and x.dtype.kind in "fiu":
        x = x.astype(np.float32)
    return x.astype(dtype.as_numpy_dtype)


def _cast_c(t, out, x):
    if out.is_bool:  # (a complex number's real part, as TensorFlow's cast to bool takes it)
        return f"(creal({x}) != 0)" if t.is_complex else f"({x} != 0)"
    if t.is_bool:  # a select: GCC vectorizes no loop that converts a bool to a number
        return f"({x} ? ({compute(out)})1 : ({compute(out)})0)"
    if out.is_integer and t.is_floating:
        return f"tr_float_to_{out.short_name}((double)({x}))"
    if t.is_complex and not out.is_complex:
        return f"(({compute(out)})creal({x}))"
    return f"(({compute(out)})({x}))"


# numpy gives the smallest integer for values out of range (and NaN); C's cast would be
# undefined. A narrower integer is cut to its bits from numpy's conversion to int32 (-1.0 as
# uint8 is 255, 300.0 is 44, 5e9 is 0), uint32 from int64's; uint64 takes [0, 2^64) as it
# is, negatives through int64, NaN and -inf as 2^63, 2^64 and above as 0.
# The range is tested as |x| < 2^31 (2^63), which differs from -2^31 <= x < 2^31 only at
# -2^31, whose conversion is the smallest integer either way: GCC vectorizes no loop that
# clamps a float (tracer's NaN-keeping minimum and maximum) and then tests both bounds.
def _float_to_integer(tag, t, via, bound):
    return forms.Helper(
        f"float_to_{tag}",
        float=f"static inline {t} tr_float_to_{tag}(double x) {{ return ({t})((fabs(x) < "
        f"{bound}) ? ({via})x : {via.upper()[:-2]}_MIN); }}",
        typed=False,
    )


_INT32_RANGE = ("int32_t", "2147483648.0")
_INT64_RANGE = ("int64_t", "9223372036854775808.0")
_FLOAT_TO_INTEGER = [
    _float_to_integer("i8", "int8_t", *_INT32_RANGE),
    _float_to_integer("i16", "int16_t", *_INT32_RANGE),
    _float_to_integer("i32", "int32_t", *_INT32_RANGE),
    _float_to_integer("u8", "uint8_t", *_INT32_RANGE),
    _float_to_integer("u16", "uint16_t", *_INT32_RANGE),
    _float_to_integer("u32", "uint32_t", *_INT64_RANGE),
    _float_to_integer("i64", "int64_t", *_INT64_RANGE),
    forms.Helper(
        "float_to_u64",
        float="static inline uint64_t tr_float_to_u64(double x) { return (x >= 0.0 && x < "
        "18446744073709551616.0) ? (uint64_t)x : x >= 18446744073709551616.0 ? 0 : (uint64_t)"
        "((x > -9223372036854775808.0 && x < 0.0) ? (int64_t)x : INT64_MIN); }",
        typed=False,
    ),
]

CAST = primitive(
    "cast",
    shapes.cast,
    grad=_cast_grad,
    jvp=LINEAR,
    fusion="elementwise",
    simplify=same_as_input,
    kernel=_cast_kernel,
    c=forms.Expression(_cast_c, helpers=_FLOAT_TO_INTEGER),
)


def _pass_through(t, out, x):
    return f"({x})"


IDENTITY = primitive(
    "identity",
    shapes.unary,
    strings=True,
    grad=lambda node, g: (g,),
    jvp=LINEAR,
    fusion="elementwise",
    simplify=same_as_input,
    kernel=lambda x: x,
    c=forms.Expression(_pass_through),
)
STOP_GRADIENT = primitive(
    "stop_gradient",
    shapes.unary,
    strings=True,
    fusion="elementwise",
    kernel=lambda x: x,
    c=forms.Expression(_pass_through),
)


def cast(x, dtype, name=None):
    """`x` converted to `dtype`; the gradient flows back only between floating/complex dtypes."""
    x = as_tensor(x)
    dtype = as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return apply(CAST, (x,), {"dtype": dtype})


def identity(input, name=None):
    return apply(IDENTITY, (as_tensor(input),), {})


def stop_gradient(input, name=None):
    """`input`, through which no gradient flows: tapes do not record it."""
    return apply(STOP_GRADIENT, (as_tensor(input),), {})


# --- slice and its gradient ---------------------------------------------------------------
#
# A slice's `index` attribute is canonical (see `canonical_index`): per axis an int, a
# (start, stop, step) triple as `slice.indices` gives it, or None for a new axis of size 1.


def numpy_index(index):
    """The numpy index for a canonical slice `index` (remembered: slice kernels run it at
    every step of an eager loop)."""
    found = _NUMPY_INDEXES.get(index)
    if found is None:
        found = tuple(
            slice(item[0], None if item[1] < 0 else item[1], item[2])
            if isinstance(item, tuple)
            else item
            for item in index
        )
        if len(_NUMPY_INDEXES) < _INDEXES_LIMIT:
            _NUMPY_INDEXES[index] = found
    return found


_NUMPY_INDEXES = {}  # canonical index -> numpy index


def slice_source_map(index, out_map, source_rank):
    """The index into a slice's source for the index `out_map` into its result."""
    source, j = [], 0
    for item in index:
        if item is None:
            j += 1
        elif isinstance(item, tuple):
            start, _, step = item
            source.append(out_map[j] * step + start)
            j += 1
        else:
            source.append(Affine(item))
    source.extend(out_map[j:])
    assert len(source) == source_rank
    return tuple(source)


def _is_reshape_index(index, source_shape):
    """Whether a slice `index` keeps every element in order: full ranges with step 1, new
    axes, and ints only on axes of size 1 (so the slice is a reshape)."""
    axis = 0
    for item in index:
        if item is None:
            continue
        size = source_shape[axis]
        if isinstance(item, tuple):
            if item != (0, size, 1) and not (size == 0 and item[2] == 1):
                return False
        elif size != 1:
            return False
        axis += 1
    return True


def _infer_slice(attrs, x):
    """The slice's shape (remembered: an eager loop slices alike at every step)."""
    key = (attrs["index"], x.shape)
    shape = _SLICE_SHAPES.get(key)
    if shape is None:
        shape = _slice_shape(attrs["index"], x)
        if len(_SLICE_SHAPES) < _INDEXES_LIMIT:
            _SLICE_SHAPES[key] = shape
    return shape, x.dtype


_SLICE_SHAPES = {}  # (canonical index, input shape) -> the slice's shape


def _slice_shape(index, x):
    shape, axis = [], 0
    for item in index:
        if item is None:
            shape.append(1)
        elif isinstance(item, tuple):
            start, stop, step = item
            unknown = isinstance(start, dims.Dim) or isinstance(stop, dims.Dim)  # (step 1)
            shape.append(stop - start if unknown else len(range(start, stop, step)))
            axis += 1
        else:
            axis += 1
    return tuple(shape) + tuple(x.shape[axis:])


def _slice_grad(node, g):
    return (apply(SLICE_GRAD, (g,), {"index": node.attrs["index"], "shape": node.inputs[0].shape}),)


def _slice_batch(node, args, flags, size):
    return apply(SLICE, (args[0],), {"index": ((0, size, 1),) + node.attrs["index"]})


def _slice_simplify(node):
    """x[:, None] and x[0] of a size-1 axis move no data: they are reshapes."""
    (x,) = node.inputs
    if _is_reshape_index(node.attrs["index"], x.shape):
        return match.derived(node, "reshape", (x,), node.shape, shape=node.shape)
    return None


def _block_offset(node):
    """The element offset of a slice that is one contiguous block of its input (single
    positions, then one range of step 1, then whole axes), or None."""
    return block_offset(node.attrs["index"], node.inputs[0].shape)


def block_offset(index, shape):
    """The element offset in an array of `shape` of the elements `index` (canonical) picks,
    where they are one contiguous block of it, else None."""
    if not all(isinstance(size, int) for size in shape):
        return None
    items = [item for item in index if item is not None]
    items += [(0, size, 1) for size in shape[len(items) :]]
    offset, spread = 0, False
    for axis, item in enumerate(items):
        start, stop, step = (item, item + 1, 1) if isinstance(item, int) else item
        count = len(range(start, stop, step))
        if spread and (start, count, step) != (0, shape[axis], 1):
            return None
        if count > 1 and step != 1:
            return None
        offset += start * int(np.prod(shape[axis + 1 :], dtype=np.int64))
        spread = spread or count > 1
    return offset


SLICE = primitive(
    "slice",
    _infer_slice,
    strings=True,
    grad=_slice_grad,
    jvp=LINEAR,
    fusion="view",
    batch=_slice_batch,
    simplify=_slice_simplify,
    kernel=lambda x, index: element_array(np.asarray(x)[numpy_index(index)]),
    c=forms.View(
        lambda node, out_map: slice_source_map(
            node.attrs["index"], out_map, len(node.inputs[0].shape)
        ),
        block_offset=_block_offset,
    ),
)


def _slice_grad_grad(node, g):
    return (apply(SLICE, (g,), {"index": node.attrs["index"]}),)


def _slice_grad_batch(node, args, flags, size):
    attrs = {
        "index": ((0, size, 1),) + node.attrs["index"],
        "shape": (size,) + node.attrs["shape"],
    }
    return apply(SLICE_GRAD, (args[0],), attrs)


def _slice_grad_simplify(node):
    (g,) = node.inputs
    if _is_reshape_index(node.attrs["index"], node.attrs["shape"]):
        return match.derived(node, "reshape", (g,), node.shape, shape=node.shape)
    return None


def _slice_grad_kernel(g, index, shape):
    """Zeros of `shape` with `g` written where `slice` read from; a large one whose slice
    read one contiguous block written on the threads (codegen/array_math.py's `joined`)."""
    size = dims.size(shape)
    if size >= LARGE_FLOATING_FROM and type(g) is np.ndarray:
        offset = block_offset(index, shape)
        if offset is not None:
            found = array_math.joined((offset, g, size - offset - g.size), shape, g.dtype)
            if found is not None:
                return found
    out = np.zeros(shape, dtype=np.result_type(g))
    out[numpy_index(index)] = g
    return out


def _slice_grad_holds(node):
    """{0: offset} where the slice read one contiguous block of whole ranges, whose
    surroundings alone the kernel zeroes (codegen.forms.LoopNests)."""
    index = node.attrs["index"]
    if dims.size(node.inputs[0].shape) == 0 or _surroundings(index, node.shape) is None:
        return {}
    offset = block_offset(index, node.shape)
    return {} if offset is None else {0: offset}


def _slice_grad_nests(node, placed=frozenset()):
    """Zeros where the slice did not read, then g where it did: around a box of whole ranges
    (steps of 1, every size known), only the box's surroundings are zeroed (one write of
    each element: the gradient of `x[1:]` zeroes one element, not all of them first);
    around any other slice, every element first. Where g was computed in place (`placed`),
    only the zeros."""
    (g,) = node.inputs
    boxes = _surroundings(node.attrs["index"], node.shape)
    if boxes is None:
        boxes = [[(0, extent) for extent in node.shape]]
    zeros = [
        fill_nest(
            tuple(Affine.index(k) + start for k, (start, _) in enumerate(box)),
            node.shape,
            "0",
            [(INDEX[k], extent) for k, (_, extent) in enumerate(box)],
        )
        for box in boxes
    ]
    if placed:
        return [], zeros
    index = identity_map(len(g.shape))
    target = slice_source_map(node.attrs["index"], index, len(node.shape))
    write = copy_nest("p0", g.shape, index, target, node.shape, loops_over(g.shape))
    return [(storage(g.dtype), "p0")], [*zeros, write]


def _surroundings(index, shape):
    """The boxes [(start, extent) per axis] that cover `shape` outside the box a slice of
    whole ranges reads (positions and ranges of step 1 on any axes), none of them empty;
    None for any other slice or a size not known."""
    index = [(item, item + 1, 1) if type(item) is int else item for item in index]
    index = [item for item in index if item is not None]
    if not all(isinstance(size, int) for size in shape) or len(index) > len(shape):
        return None
    if 0 in shape:
        return []  # no element to zero
    ranges = []
    for item, size in zip((*index, *[(0, s, 1) for s in shape[len(index) :]]), shape):
        if not isinstance(item, tuple) or item[2] != 1:
            return None
        start, stop = item[0], max(item[0], min(item[1], size))
        ranges.append((start, stop - start))
    boxes = []
    for axis, (start, extent) in enumerate(ranges):
        inside = ranges[:axis]
        whole = [(0, size) for size in shape[axis + 1 :]]
        for part in ((0, start), (start + extent, shape[axis] - start - extent)):
            if part[1] > 0 and all(e > 0 for _, e in inside):
                boxes.append([*inside, part, *whole])
    return boxes


SLICE_GRAD = primitive(
    "slice_grad",
    lambda attrs, g: (attrs["shape"], g.dtype),
    grad=_slice_grad_grad,
    jvp=LINEAR,
    batch=_slice_grad_batch,
    simplify=_slice_grad_simplify,
    kernel=_slice_grad_kernel,
    c=forms.LoopNests(_slice_grad_nests, holds=_slice_grad_holds),
)


def _integer_scalar(item):
    """A numpy array of one integer and no axes as that integer; anything else as it is."""
    if type(item) is np.ndarray and item.ndim == 0 and item.dtype.kind in "iu":
        return int(item)
    return item


def canonical_index(key, shape):
    """A hashable, normalised form of a numpy basic index for `shape`.

    Each item is an int (a non-negative position), a `(start, stop, step)` triple as
    `slice.indices` gives it, or None (a new axis of size 1); `...` is expanded.
    """
    key = key if isinstance(key, tuple) else (key,)
    if any(type(item) is np.ndarray for item in key):  # numpy's integer scalars of 0 axes
        key = tuple(_integer_scalar(item) for item in key)
    for item in key:
        if not (item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice))):
            if isinstance(item, Tensor) and item.dtype.is_integer and item.ndim == 0:
                continue
            what = type(item).__name__
            if isinstance(item, (np.ndarray, Tensor)):
                what = f"{what} of shape {tuple(item.shape)} and dtype {item.dtype}"
            raise TypeError(
                f"only ints, slices, None, ... and integer scalars can index a tensor, or a whole "
                f"index of booleans (as tt.boolean_mask), not {what}; use tt.gather to index "
                "with a tensor of indices"
            )
    consumed = sum(1 for item in key if item is not None and item is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices ({consumed}) for a tensor of shape {shape}")
    if sum(1 for item in key if item is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    result, axis = [], 0
    for item in key:
        if item is Ellipsis:
            for _ in range(len(shape) - consumed):
                result.append(_slice_range(slice(None), shape[axis]))
                axis += 1
        elif item is None:
            result.append(None)
        elif isinstance(item, slice):
            result.append(_slice_range(item, shape[axis]))
            axis += 1
        elif isinstance(shape[axis], dims.Dim):  # counted from the end where negative
            position = int(item)
            result.append(position if position >= 0 else shape[axis] + position)
            axis += 1
        else:
            position = int(item)
            if not -shape[axis] <= position < shape[axis]:
                raise as_tf(IndexError)(
                    f"index {position} is out of bounds for axis {axis} with size {shape[axis]}"
                )
            result.append(position % shape[axis])
            axis += 1
    return tuple(result)


def _slice_range(item, size):
    """(start, stop, step) of a slice of an axis of `size`: `slice.indices`. On an axis whose
    size is unknown while tracing, a slice of step 1 with int bounds (`x[1:]`, `x[-3:]`,
    `x[:-1]`) gives bounds that are polynomials of the size (`_require_inside` says what
    sizes they need)."""
    if not isinstance(size, dims.Dim):
        return item.indices(size)
    bounds = (item.start, item.stop)
    if item.step in (None, 1) and all(_is_int_or_none(b) for b in bounds):
        start = _bound(item.start, size, 0)
        stop = _bound(item.stop, size, size)
        if all(isinstance(n, dims.Dim) or n >= 0 for n in _inside(start, stop, size)):
            return (start, stop, 1)
    raise IndexError(
        f"only slices of step 1 with int bounds (x[1:], x[:-1]) can slice an axis of size "
        f"{size}, which is known only when the function runs"
    )


def _inside(start, stop, size):
    """What must be at least 0 for a slice from `start` to `stop` of an axis of `size`."""
    return (start, size - stop, stop - start)


def _require_inside(index, shape):
    """Require of the calls the trace being made serves (`Trace.require`) the sizes that
    the canonical slice `index` of a tensor of `shape` needs: `x[1:]` and `x[0]`, one
    element; `x[-3:]`, three."""
    axis = 0
    for item in index:
        if item is None:
            continue
        if isinstance(shape[axis], dims.Dim):
            start, stop = item[:2] if isinstance(item, tuple) else (item, item + 1)
            for size in _inside(start, stop, shape[axis]):
                if not dim_values.is_nonnegative(size):
                    state.trace.require(size)
        axis += 1


def _is_int_or_none(value):
    return value is None or isinstance(value, (int, np.integer))


def _bound(value, size, default):
    """A slice bound on an axis of unknown `size`: counted from the end where negative."""
    if value is None:
        return default
    return int(value) if value >= 0 else size + int(value)


# tt.boolean_mask, which mask_composites.py (importing this module) sets here: `x[mask]`
boolean_mask_index = [None]


def getitem(tensor, key):
    """`tensor[key]`; keys holding integer tensors known only when the function runs (a
    loop's counter `x[i]`, `x[i : i + 2]`, `x[j, i]`) are gathers and windows
    (tracer/ops/dynamic_slices.py)."""
    x = as_tensor(tensor)
    kind = type(key)
    if (kind is slice or kind is tuple) and _holds_symbolic(key):
        return tensor_index[0](x, key)
    if kind is not int and kind is not slice and kind is not tuple:  # (the common keys)
        if (kind is np.ndarray or isinstance(key, Tensor)) and (
            key.dtype == np.bool_ or key.dtype is dtypes.bool
        ):
            return boolean_mask_index[0](x, key)  # a whole index of booleans
        if isinstance(key, Tensor) and key._value is None:
            if key.shape != () or not key.dtype.is_integer:
                raise TypeError(
                    "a tensor index must be an integer scalar, not "
                    f"{key.dtype.name}{list(key.shape)}"
                )
            return tensor_index[0](x, key)
    index = _remembered_index(key, x._dims())
    if state.trace is not None and not dims.is_known(x.shape):
        _require_inside(index, x.shape)
    return apply(SLICE, (x,), {"index": index})


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):  # fmt: skip
    """TensorFlow's `tf.strided_slice`, as the indexing `input_[key]` it stands for: entry j
    of `begin`, `end` and `strides` is `begin[j]:end[j]:strides[j]`, its start (end) left
    out where bit j of `begin_mask` (`end_mask`) is set; bit j of `ellipsis_mask` makes it
    `...`, of `new_axis_mask` a new axis, of `shrink_axis_mask` the index `begin[j]`.

    >>> tt.strided_slice(tt.reshape(tt.range(12), (3, 4)), [0, 1], [2, 3], [1, 1]).numpy()
    array([[1, 2],
           [5, 6]], dtype=int32)
    """
    begin, end = _entries(begin), _entries(end)
    strides = [1] * len(begin) if strides is None else _entries(strides)
    if not len(begin) == len(end) == len(strides):
        raise ValueError(
            f"strided_slice: begin, end and strides must have one length, not {len(begin)}, "
            f"{len(end)} and {len(strides)}"
        )
    key = []
    for j, (start, stop, step) in enumerate(zip(begin, end, strides)):
        bit = 1 << j
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(start)
        else:
            key.append(
                builtins.slice(
                    None if begin_mask & bit else start, None if end_mask & bit else stop, step
                )
            )
    return getitem(input_, tuple(key))


def _entries(values):
    """The entries of a strided slice's begin, end or strides: ints where known now, else
    the scalar tensors of a vector known only when the function runs."""
    if isinstance(values, Tensor) and values._value is None:
        return [values[k] for k in range(values.shape[0])]
    return [v if isinstance(v, Tensor) and v._value is None else int(v) for v in _listed(values)]


def _listed(values):
    if isinstance(values, Tensor):
        return values._value.reshape(-1).tolist()
    return list(values)


# tracer/ops/dynamic_slices.py's indexing by keys that hold tensors known only when the
# function runs, which it sets here (it builds on this module)
tensor_index = [None]


def _holds_symbolic(key):
    """Whether a slice or tuple key holds a tensor known only when the function runs."""
    items = key if type(key) is tuple else (key,)
    for item in items:
        bounds = (item.start, item.stop, item.step) if type(item) is slice else (item,)
        if any(isinstance(b, Tensor) and b._value is None for b in bounds):
            return True
    return False


def slice_(input_, begin, size, name=None):
    """tf.slice: `input_[begin[i] : begin[i] + size[i]]` on every axis, a size of -1 to the
    axis's end. `begin` and `size` must be known when a function is traced (Python ints or
    constant tensors); a window outside the tensor raises InvalidArgumentError, as
    TensorFlow's does.

    >>> tt.slice(tt.reshape(tt.range(12), (3, 4)), [1, 1], [2, -1]).numpy()
    array([[ 5,  6,  7],
           [ 9, 10, 11]], dtype=int32)
    """
    x = as_tensor(input_)
    begin, size = slice_bounds(begin, "begin"), slice_bounds(size, "size")
    shape = x._dims()
    if not len(begin) == len(size) == len(shape):
        raise mixed(InvalidArgumentError, ValueError)(
            f"tt.slice: begin ({len(begin)} values) and size ({len(size)}) must each have "
            f"one value for each of the input's {len(shape)} axes"
        )
    key = []
    for axis, (start, count, extent) in enumerate(zip(begin, size, shape)):
        count = extent - start if count == -1 else count
        if not (0 <= start <= extent and 0 <= count <= extent - start):
            raise mixed(InvalidArgumentError, ValueError)(
                f"tt.slice: on axis {axis} (of length {extent}), begin {start} and size "
                f"{size[axis]} reach outside the tensor: expected size in [0, {extent - start}]"
            )
        key.append(builtins.slice(start, start + count))
    return getitem(x, tuple(key))


def slice_bounds(values, what):
    """The ints of tt.slice's `begin` or `size`."""
    array = np.asarray(known_value(values, f"tt.slice: {what}"))
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"tt.slice: {what} must be a list of ints, not {values!r}")
    return [int(v) for v in array]


_INDEXES = {}  # (an int, shape) or (a slice's start, stop, step, shape) -> its canonical index
_BOUNDS = frozenset({int, type(None)})  # the slice bounds whose index is remembered
_INDEXES_LIMIT = 10_000


def _remembered_index(key, shape):
    """`canonical_index(key, shape)`, remembered for a key of one int or one slice of ints:
    an eager loop indexes the same way at every step."""
    kind = type(key)
    if kind is int:
        remembered = (key, shape)
    elif kind is slice:
        start, stop, step = key.start, key.stop, key.step
        if type(start) not in _BOUNDS or type(stop) not in _BOUNDS or type(step) not in _BOUNDS:
            return canonical_index(key, shape)
        remembered = (start, stop, step, shape)
    else:
        return canonical_index(key, shape)
    index = _INDEXES.get(remembered)
    if index is None:
        index = canonical_index(key, shape)
        if len(_INDEXES) < _INDEXES_LIMIT:
            _INDEXES[remembered] = index
    return index


# --- fill and the constructors built on it ----------------------------------------------


def _fill_nests(node):
    value = literal(node.attrs["value"], node.dtype)
    value = f"({storage(node.dtype)}){value}"
    return [], [fill_nest(identity_map(len(node.shape)), node.shape, value, loops_over(node.shape))]


FILL = primitive(
    "fill",
    shapes.creation,
    strings=True,
    batch=unbatchable("makes its value from its attributes alone: nothing to batch"),
    kernel=lambda shape, dtype, value: np.full(shape, value, dtype=dtype.as_numpy_dtype),
    c=forms.LoopNests(_fill_nests),
)


def fill(dims, value, name=None):
    """A tensor of shape `dims` holding the scalar `value` everywhere: a constant of its
    value where it is a number, or a tensor known now that no tape or accumulator could
    differentiate, else the scalar broadcast, so that its gradient (the sum of the
    cotangent) reaches `value`, as TensorFlow's fill differentiates.

    >>> tt.fill([2, 2], 7).numpy()
    array([[7, 7],
           [7, 7]], dtype=int32)
    """
    given_a_tensor = isinstance(value, Tensor)
    value = convert_to_tensor(value)
    if value.shape != ():
        raise ValueError(f"tt.fill: value must be a scalar, not of shape {list(value.shape)}")
    shape = shape_tuple(dims)
    differentiable = value.dtype.is_floating or value.dtype.is_complex
    watched = given_a_tensor and differentiable and (state.tapes or state.accumulators)
    if value._value is None or watched:
        return apply(OPS["broadcast_to"], (value,), {"shape": shape}) if shape else identity(value)
    scalar = value.numpy()  # a string's is its bytes already
    scalar = scalar if value.dtype.is_string else scalar.item()
    return apply(FILL, (), {"shape": shape, "dtype": value.dtype, "value": scalar})


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix (ones on the diagonal), optionally repeated over `batch_shape`.
    Inside a function, the sizes may be computed from shapes (`tt.eye(tt.shape(x)[0])`, for
    an `x` of unknown rows): the matrix is then made where it is read, for every size.

    >>> tt.eye(2, 3).numpy()
    array([[1., 0., 0.],
           [0., 1., 0.]], dtype=float32)
    """
    batch = batch_shape if isinstance(batch_shape, (list, tuple)) else [batch_shape]
    if any(_is_symbolic(size) for size in (num_rows, num_columns, *batch)):
        return _eye_of_dims(num_rows, num_columns, batch_shape, as_dtype(dtype))
    matrix = np.eye(int(num_rows), None if num_columns is None else int(num_columns))
    if batch_shape is not None:
        matrix = np.broadcast_to(matrix, (*batch_shape, *matrix.shape))
    return Tensor(np.array(matrix, dtype=as_dtype(dtype).as_numpy_dtype))


def _eye_of_dims(num_rows, num_columns, batch_shape, dtype):
    """tt.eye of sizes known from shapes while a function is traced: the band mask of width
    0 (the diagonal), cast; a size computed from values raises, naming tt.eye."""
    try:
        rows = _dimension(num_rows)
        cols = rows if num_columns is None else _dimension(num_columns)
        batch = () if batch_shape is None else shape_tuple(batch_shape)
    except SizeKnownWhenRun:
        raise  # (the function runs as Python)
    except TypeError as error:
        raise TypeError(f"tt.eye: {error}") from None
    attrs = {"shape": batch + (rows, cols), "num_lower": 0, "num_upper": 0}
    # NOTE: band_mask is declared in matrix_ops, which imports this module
    return cast(apply(OPS["band_mask"], (), attrs), dtype)


def zeros(shape, dtype=dtypes.float32, name=None):
    """Zeros of `dtype`; empty strings for tt.string, as in TensorFlow."""
    dtype = as_dtype(dtype)
    value = b"" if dtype.is_string else 0
    return apply(FILL, (), {"shape": shape_tuple(shape), "dtype": dtype, "value": value})


def ones(shape, dtype=dtypes.float32, name=None):
    dtype = as_dtype(dtype)
    if dtype.is_string:
        raise TypeError("tt.ones has no string value: tt.fill(shape, text) makes a string tensor")
    return apply(FILL, (), {"shape": shape_tuple(shape), "dtype": dtype, "value": 1})


def zeros_like(input, dtype=None, name=None):
    x = as_tensor(input)
    return zeros(x.shape, dtype or x.dtype)


def ones_like(input, dtype=None, name=None):
    x = as_tensor(input)
    return ones(x.shape, dtype or x.dtype)


# --- values known from shapes ---------------------------------------------------------------


def _dims_value_c(node, index_map):
    """The element at `index_map`: the dimension itself, or one of a vector of them."""
    values = node.attrs["values"]
    if not node.shape:
        return f"({compute(node.dtype)})({values[0]})"
    table = ", ".join(str(v) for v in values)
    return f"({compute(node.dtype)})((const int64_t[]){{{table}}})[{index_map[0].c(INDEX)}]"


def _infer_dims_value(attrs):
    values, vector = attrs["values"], attrs["vector"]
    if not vector and len(values) != 1:
        raise ValueError(f"a scalar holds one dimension, not {len(values)}")
    return ((len(values),) if vector else ()), attrs["dtype"]


DIMS_VALUE = primitive(
    "dims_value",
    _infer_dims_value,
    fusion="elementwise",
    batch=unbatchable("makes its value from its attributes alone: nothing to batch"),
    kernel=lambda values, vector, dtype: np.array(
        values if vector else values[0], dtype=dtype.as_numpy_dtype
    ),
    c=forms.Generator(_dims_value_c),
)


def dims_value(values, dtype, vector=False):
    """Dimensions (ints, or polynomials of unknown ones) as a tensor of `dtype`: one scalar,
    or a vector of them with `vector`; a constant when every one is known, else read when
    the function runs."""
    dtype, values = as_dtype(dtype), tuple(values)
    if dims.is_known(values):
        return Tensor(np.array(values if vector else values[0], dtype=dtype.as_numpy_dtype))
    return apply(DIMS_VALUE, (), {"values": values, "vector": vector, "dtype": dtype})


def shape(input, out_type=dtypes.int32, name=None):
    """The shape of `input` as a tensor (its unknown dimensions read when the function runs)."""
    return dims_value(as_tensor(input).shape, out_type, vector=True)


def size(input, out_type=dtypes.int32, name=None):
    return dims_value([dims.size(as_tensor(input).shape)], out_type)


class SymbolicRange:
    """`tt.range` of bounds known only when a traced function runs: no tensor (its length is
    unknown), but what a `for` loop that tt.function converts runs over, as a while loop.
    Used as a tensor (an op's input, a slice), it is one where shapes give its length, and
    otherwise the function runs as Python (tracer/errors.py's RunsAsPython)."""

    def __init__(self, start, limit, delta, dtype):
        self.start, self.limit, self.delta, self.dtype = start, limit, delta, dtype

    def __iter__(self):
        raise TypeError(
            "tt.range of a tensor has no length to iterate over in Python: inside a tt.function, "
            "a `for ... in tt.range(n)` statement of the function's own code becomes a loop "
            "(autograph), unless autograph=False"
        )

    def _densify(self):
        """The range as a tensor (what an op taking it sees), where its length is known from
        shapes, as `tt.range(tt.shape(x)[0])`: a vector of that unknown length."""
        start, limit, delta = (dim_values.dims_of(t) for t in (self.start, self.limit, self.delta))
        if all(v is not None and v.ndim == 0 for v in (start, limit, delta)):
            start, limit, delta = start[()], limit[()], delta[()]
            if isinstance(start, (int, np.integer)) and delta == 1:
                size = limit - int(start)
                if dim_values.is_nonnegative(size):
                    return _iota(size, self.dtype, int(start))
        location = format_location(user_location())
        where = f" (at {location})" if location else ""
        raise RunsAsPython(
            f"makes a tensor of tt.range of bounds computed when the function runs{where}: "
            "compiled code holds tensors of sizes known when tracing (as "
            "tt.range(tt.shape(x)[0]) is), so the function runs as Python at each call. A "
            "`for ... in tt.range(n)` loop takes any bounds"
        )

    def __getitem__(self, key):
        return self._densify()[key]


def _iota(size, dtype, start):
    """start, start + 1, ..., start + size - 1 (`size` possibly unknown) as a `dtype` tensor:
    an exclusive running sum of ones."""
    ones = apply(FILL, (), {"shape": (size,), "dtype": dtype, "value": 1})
    counts = apply(OPS["cumsum"], (ones,), {"axis": 0, "exclusive": True, "reverse": False})
    return counts if start == 0 else apply(OPS["add"], convert_as_tensors(counts, start), {})


def range_(start, limit=None, delta=1, dtype=None, name=None):
    """`tt.range`: like Python's range, as a tensor. Without `dtype`, as TensorFlow infers
    it: the widest of the bounds' dtypes in the order int32, int64, float16, float32,
    float64 (a Python int counting as int32, a float as float32)."""
    if limit is None:
        start, limit = 0, start
    bounds = (start, limit, delta)
    dtype = as_dtype(dtype) if dtype is not None else _range_dtype(bounds)
    if any(isinstance(v, Tensor) and v._value is None for v in bounds):
        tensors = [as_tensor(v) for v in bounds]
        return SymbolicRange(*(cast(t, dtype) for t in tensors), dtype)
    values = [v.numpy() if hasattr(v, "numpy") else v for v in bounds]
    if values[2] == 0:
        raise ValueError("tt.range: delta must not be 0")
    return Tensor(np.arange(*values).astype(dtype.as_numpy_dtype))


_RANGE_DTYPES = ("int32", "int64", "float16", "float32", "float64")


def _range_dtype(bounds):
    """The dtype TensorFlow's range infers from its bounds (see `range_`)."""
    names = []
    for value in bounds:
        kind = getattr(value, "dtype", None)
        if kind is not None:
            name = as_dtype(kind).name
        elif type(value) is int and -(2**31) <= value < 2**31:
            name = "int32"  # (Python's numbers without a conversion: tt.range(10) is common)
        elif type(value) is float:
            name = "float32"
        else:
            name = _from_python(value, None).dtype.name
        names.append(name if name in _RANGE_DTYPES else "int32")
    return as_dtype(max(names, key=_RANGE_DTYPES.index))
