"""Cumulative sums and products, and reduce_prod, whose gradient is built from them.

reduce_prod's gradient at element i is the product of all the other elements. Dividing the
product by x_i fails at zeros; TensorFlow's way, kept here, multiplies the exclusive
cumulative products from the left and from the right instead, which is exact with zeros.

cumprod's gradient divides by nothing either (TensorFlow's rule, cumsum(g * y, reversed) / x,
is wrong where x is 0, at the first order already): for y_j = x_0 ... x_j,

    dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k = E_i * R_i
    E_i  = x_0 ... x_{i-1}                   (the exclusive cumprod)
    R_i  = sum_{j >= i} g_j x_{i+1} ... x_j  (R_i = g_i + x_{i+1} R_{i+1})

and the recurrence R is summed by doubling (log2(n) steps of shifted products and sums),
so the gradient is made of cumprod, mul, add, slices and pads: exact at every order, zeros
included. Along an axis whose size is known only when the function runs, the division is
kept.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import compute, storage
from runtime.kernels import same_type
from tracer.ir import dims
from tracer.ops import array_ops, batching, layout_ops, shapes
from tracer.ops.broadcast_ops import reduce_attrs
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.core import apply
from tracer.ops.math_ops import conj_if_complex
from tracer.ops.registry import primitive
from tracer.ops.tangent_rules import LINEAR, TRANSPOSED_VJP


def _infer_scan(attrs, x):
    if not 0 <= attrs["axis"] < max(len(x.shape), 1):
        raise ValueError(f"axis {attrs['axis']} is out of range for shape {x.shape}")
    return x.shape, x.dtype


def _scan_kernel(accumulate, identity):
    def run(x, axis, exclusive, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        out = accumulate(x, axis=axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:  # an empty axis has nothing to shift
            first = np.full_like(np.take(out, [0], axis=axis), identity)
            rest = np.take(out, np.arange(x.shape[axis] - 1), axis=axis)
            out = np.concatenate([first, rest], axis=axis)
        return np.flip(out, axis) if reverse else out

    return run


def _scan_c(identity, operator):
    """The context of templates/scan.c.j2: one running accumulator per line along the axis."""

    def context(node, blas):
        axis, shape = node.attrs["axis"], node.shape
        return dict(
            T=storage(node.dtype),
            C=compute(node.dtype),
            outer=dims.size(shape[:axis]),
            n=shape[axis],
            inner=dims.size(shape[axis + 1 :]),
            identity=identity,
            combine=f"acc {operator} ({compute(node.dtype)})x[at]",
            exclusive=node.attrs["exclusive"],
            reverse=node.attrs["reverse"],
        )

    return forms.Template("scan.c.j2", context)


def _cumsum_grad(node, g):
    attrs = node.attrs
    return (cumsum(g, attrs["axis"], attrs["exclusive"], not attrs["reverse"]),)


def _cumprod_grad(node, g, x):
    """E * R (the module's docstring); an exclusive cumprod leaves out the j = i term:
    R_i = sum_{j > i} g_j x_{i+1} ... x_{j-1}. A reverse one runs the other way."""
    axis, exclusive, reverse = (node.attrs[k] for k in ("axis", "exclusive", "reverse"))
    size = x.shape[axis]
    if isinstance(size, dims.Dim):
        return (_cumprod_grad_by_division(node, g, x),)
    x = conj_if_complex(x)
    before = conj_if_complex(cumprod(x, axis, exclusive=True, reverse=reverse))
    after = _next(x, axis, 1, reverse)
    weights = _next(g, axis, 1, reverse) if exclusive else g
    return (before * _weighted_sums(weights, after, axis, size, reverse),)


def _cumprod_grad_by_division(node, g, x):
    """TensorFlow's rule, for axes of unknown size: cumsum(g * out, reversed) / x (NaN
    where x is 0)."""
    attrs = node.attrs
    out = cumprod(x, attrs["axis"], attrs["exclusive"], attrs["reverse"])
    summed = cumsum(
        g * conj_if_complex(out), attrs["axis"], attrs["exclusive"], not attrs["reverse"]
    )
    return summed / conj_if_complex(x)


def _next(t, axis, by, reverse):
    """t_{i+by} at i (t_{i-by} when `reverse`), zero past the end."""
    size = t.shape[axis]
    if by >= size:
        return array_ops.zeros(t.shape, t.dtype)
    lead = tuple((0, d, 1) for d in t.shape[:axis])
    kept = (by, size, 1) if not reverse else (0, size - by, 1)
    part = apply(array_ops.SLICE, (t,), {"index": lead + (kept,)})
    paddings = tuple(
        ((by, 0) if reverse else (0, by)) if a == axis else (0, 0) for a in range(t.ndim)
    )
    return apply(layout_ops.PAD, (part,), {"paddings": paddings, "mode": "CONSTANT", "value": 0})


def _weighted_sums(g, a, axis, size, reverse):
    """W_i = sum_{j >= i} g_j a_i ... a_{j-1} (j <= i and a_i ... a_{j+1} when `reverse`),
    by doubling: after the step of span s, W_i holds the terms j < i + s and A_i the
    product a_i ... a_{i+s-1}; W_i += A_i W_{i+s} and A_i *= A_{i+s} double s."""
    total, product, span = g, a, 1
    while span < size:
        total = total + product * _next(total, axis, span, reverse)
        if 2 * span < size:
            product = product * _next(product, axis, span, reverse)
        span *= 2
    return total


CUMSUM = primitive(
    "cumsum",
    _infer_scan,
    grad=_cumsum_grad,
    jvp=LINEAR,
    batch=batching.shifted_axis("axis"),
    kernel=_scan_kernel(np.cumsum, 0),
    c=_scan_c("0", "+"),
)
CUMPROD = primitive(
    "cumprod",
    _infer_scan,
    grad=_cumprod_grad,
    jvp=TRANSPOSED_VJP,
    saves=(0,),
    batch=batching.shifted_axis("axis"),
    kernel=_scan_kernel(np.cumprod, 1),
    c=_scan_c("1", "*"),
)


def _scan(op, x, axis, exclusive, reverse):
    x = as_tensor(x)
    axis = int(length_value(axis, "the cumulative op's axis"))  # (known when run: as Python)
    (axis,) = shapes.normalize_axes(axis, x.ndim)
    attrs = {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return apply(op, (x,), attrs)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis`; `exclusive` leaves out the element itself, `reverse` runs backwards.

    >>> tt.math.cumsum([1, 2, 3], exclusive=True).numpy()
    array([0, 1, 3], dtype=int32)
    """
    return _scan(CUMSUM, x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis`, with the same options as `cumsum`."""
    return _scan(CUMPROD, x, axis, exclusive, reverse)


def _reduce_prod_grad(node, g, x):
    axes = node.attrs["axis"]
    shape = x.shape
    others = tuple(a for a in range(len(shape)) if a not in axes)
    perm = axes + others
    reduced = dims.size([shape[a] for a in axes])
    kept_size = dims.size([shape[a] for a in others])  # NOTE: not -1, ambiguous for size 0
    rows = array_ops.reshape(array_ops.transpose(x, perm), (reduced, kept_size))
    left = cumprod(rows, 0, exclusive=True)
    right = cumprod(rows, 0, exclusive=True, reverse=True)
    product_of_others = array_ops.reshape(left * right, tuple(shape[a] for a in perm))
    product_of_others = array_ops.transpose(
        product_of_others, tuple(int(p) for p in np.argsort(perm))
    )
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return (array_ops.reshape(g, kept) * conj_if_complex(product_of_others),)


REDUCE_PROD = primitive(
    "reduce_prod",
    shapes.reduction,
    grad=_reduce_prod_grad,
    jvp=TRANSPOSED_VJP,
    saves=(0,),
    fusion="reduction",
    batch=batching.shifted_axis("axis"),
    kernel=lambda x, axis, keepdims: same_type(
        np.result_type(x), np.prod(x, axis=axis, keepdims=keepdims)
    ),
    # products may be reassociated (vectorized) by the compiler
    c=forms.Reduction("{acc} *= {value};", lambda dtype: "1", wide=True, simd="reduction(*:{acc})"),
)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    x = as_tensor(input_tensor)
    attrs = reduce_attrs(x, axis, keepdims)
    return x if attrs is None else apply(REDUCE_PROD, (x,), attrs)
