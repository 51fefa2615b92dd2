"""Cumulative sums and products, and reduce_prod, whose gradient is built from them.

reduce_prod's gradient at element i is the product of all the other elements. Dividing the
product by x_i fails at zeros; TensorFlow's way, kept here, multiplies the exclusive
cumulative products from the left and from the right instead, which is exact with zeros.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import compute, storage
from runtime.kernels import same_type
from tracer.ir import dims
from tracer.ops import array_ops, batching, shapes
from tracer.ops.broadcast_ops import reduce_attrs
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.math_ops import conj_if_complex
from tracer.ops.registry import OUT, primitive
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
        if exclusive:
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


def _cumprod_grad(node, g, x, out):
    """TensorFlow's rule: cumsum(g * out, reversed) / x (not defined where x is 0)."""
    attrs = node.attrs
    summed = cumsum(
        g * conj_if_complex(out), attrs["axis"], attrs["exclusive"], not attrs["reverse"]
    )
    return (summed / conj_if_complex(x),)


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
    saves=(0, OUT),
    batch=batching.shifted_axis("axis"),
    kernel=_scan_kernel(np.cumprod, 1),
    c=_scan_c("1", "*"),
)


def _scan(op, x, axis, exclusive, reverse):
    x = as_tensor(x)
    (axis,) = shapes.normalize_axes(int(axis), x.ndim)
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
    rows = array_ops.reshape(array_ops.transpose(x, perm), (reduced, -1))
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
    c=forms.Reduction("{acc} *= {value};", lambda dtype: "1", wide=True, simd="reduction(*:acc)"),
)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    x = as_tensor(input_tensor)
    attrs = reduce_attrs(x, axis, keepdims)
    return x if attrs is None else apply(REDUCE_PROD, (x,), attrs)
