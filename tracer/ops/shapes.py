"""Shape and dtype rules shared by the primitives: `infer(attrs, *inputs) -> (shape, dtype)`.

Inputs are anything with `.shape` and `.dtype` (tensors or IR nodes). The rules raise
ValueError for shapes and TypeError for dtypes, with a message that names the values;
`apply` adds the op's name and the user's line.
"""

from tracer import dtypes
from tracer.errors import InvalidArgumentError, mixed
from tracer.ir import dims


def broadcast_shapes(*shapes):
    """numpy's broadcasting of `shapes`, or ValueError naming them."""
    if all(s == shapes[0] for s in shapes):
        return shapes[0]
    ndim = max(map(len, shapes))
    result = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            first, second = _two_sizes(shapes, axis - ndim)
            dims.check_same(first, second, lambda: _not_broadcast(shapes))
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _two_sizes(shapes, axis):
    """The first two sizes other than 1 and each other at `axis` (from the end) of `shapes`,
    in the shapes' order (a set's order would vary with the hash seed)."""
    found = []
    for shape in shapes:
        if len(shape) >= -axis:
            size = shape[axis]
            if not dims.same(size, 1) and not any(dims.same(size, other) for other in found):
                found.append(size)
    return found[:2]


def _not_broadcast(shapes):
    listed = " and ".join(str(tuple(s)) for s in shapes)
    return f"shapes {listed} cannot be broadcast together"


def same_dtype(*inputs):
    first = inputs[0].dtype
    for other in inputs[1:]:
        if other.dtype is not first:
            names = " and ".join(t.dtype.name for t in inputs)
            # TensorFlow raises InvalidArgumentError eagerly, TypeError while tracing
            raise mixed(InvalidArgumentError, TypeError)(
                f"operands have different dtypes ({names}); use tt.cast to convert one"
            )
    return first


def unary(attrs, x):
    return x.shape, x.dtype


def unary_float(attrs, x):
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError(f"expects a floating or complex tensor, got {x.dtype.name}")
    return x.shape, x.dtype


_REAL_PART = {"complex64": dtypes.float32, "complex128": dtypes.float64}
_COMPLEX_OF = {"float32": dtypes.complex64, "float64": dtypes.complex128}


def magnitude(attrs, x):
    """abs, real and imag: complex inputs give their real dtype."""
    return x.shape, _REAL_PART.get(x.dtype.name, x.dtype)


def make_complex(attrs, re, im):
    dtype = same_dtype(re, im)
    if dtype.name not in _COMPLEX_OF:
        raise TypeError(f"the parts must be float32 or float64, got {dtype.name}")
    return broadcast_shapes(re.shape, im.shape), _COMPLEX_OF[dtype.name]


def binary(attrs, x, y):
    return broadcast_shapes(x.shape, y.shape), same_dtype(x, y)


def comparison(attrs, x, y):
    return broadcast_shapes(x.shape, y.shape), (same_dtype(x, y) and dtypes.bool)


def ordered(infer):
    """`infer` of an op that orders its inputs' values (a maximum, a comparison, an argmax),
    after a TypeError for complex ones, which have no order, as TensorFlow refuses them
    (compiled, C's complex types have no `<`)."""

    def checked(attrs, *inputs):
        inferred = infer(attrs, *inputs)  # (operands of two dtypes: that error first)
        for t in inputs:
            if t.dtype.is_complex:
                raise TypeError(
                    f"{t.dtype.name} values have no order: there is no comparison of them"
                )
        return inferred

    return checked


def logical(attrs, *inputs):
    for t in inputs:
        if t.dtype != dtypes.bool:
            raise TypeError(f"expects bool tensors, got {t.dtype.name}")
    return broadcast_shapes(*(t.shape for t in inputs)), dtypes.bool


def select(attrs, condition, x, y):
    if condition.dtype != dtypes.bool:
        raise TypeError(f"the condition must be a bool tensor, got {condition.dtype.name}")
    return broadcast_shapes(condition.shape, x.shape, y.shape), same_dtype(x, y)


def normalize_axes(axis, ndim):
    """`axis` (None, an int or a sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(int(a) for a in axis)
    result = set()
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        result.add(a % ndim if ndim else 0)
    return tuple(sorted(result))


def reduction(attrs, x):
    axes, keepdims = attrs["axis"], attrs["keepdims"]
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return shape, x.dtype


def reshape(attrs, x):
    shape = attrs["shape"]
    if _size(shape) != _size(x.shape):
        # TensorFlow: InvalidArgumentError eagerly, ValueError while tracing; this is both
        raise mixed(InvalidArgumentError, ValueError)(
            f"cannot reshape a tensor of shape {x.shape} into shape {shape}"
        )
    return shape, x.dtype


def broadcast_to(attrs, x):
    shape = attrs["shape"]
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to shape {shape}")
    return shape, x.dtype


def transpose(attrs, x):
    perm = attrs["perm"]
    if sorted(perm) != list(range(len(x.shape))):
        raise ValueError(f"perm {perm} is not a permutation of the axes of shape {x.shape}")
    return tuple(x.shape[p] for p in perm), x.dtype


def matmul_dims(attrs, a_shape, b_shape):
    """(m, k) of op(a) and (k, n) of op(b), where op swaps the last two axes when asked."""
    m, k = a_shape[-2:][::-1] if attrs.get("transpose_a") else a_shape[-2:]
    k2, n = b_shape[-2:][::-1] if attrs.get("transpose_b") else b_shape[-2:]
    return m, k, k2, n


def matmul(attrs, a, b):
    dtype = same_dtype(a, b)
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise ValueError(f"operands must have rank 2 or more, got shapes {a.shape} and {b.shape}")
    m, k, k2, n = matmul_dims(attrs, a.shape, b.shape)
    flags = "".join(f", {f}" for f in ("transpose_a", "transpose_b") if attrs.get(f))
    dims.check_same(
        k,
        k2,
        lambda: f"inner dimensions differ: a is {a.shape} and b is {b.shape}{flags} ({k} != {k2})",
    )
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return batch + (m, n), dtype


def cast(attrs, x):
    return x.shape, attrs["dtype"]


def creation(attrs):
    return attrs["shape"], attrs["dtype"]


def _size(shape):
    size = 1
    for d in shape:
        size *= d
    return size
