"""Cumulative sums and products, and reduce_prod, whose gradient is built from them.

reduce_prod's gradient at element i is the product of all the other elements. Dividing the
product by x_i fails at zeros; TensorFlow's way, kept here, multiplies the exclusive
cumulative products from the left and from the right instead, which is exact with zeros.
"""

import numpy as np

from tracer.ops import array_ops, math_ops, shapes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import OUT, primitive


def _infer_scan(attrs, x):
    if not 0 <= attrs["axis"] < max(len(x.shape), 1):
        raise ValueError(f"axis {attrs['axis']} is out of range for shape {x.shape}")
    return x.shape, x.dtype


def _cumsum_grad(node, g):
    attrs = node.attrs
    return (cumsum(g, attrs["axis"], attrs["exclusive"], not attrs["reverse"]),)


def _cumprod_grad(node, g, x, out):
    """TensorFlow's rule: cumsum(g * out, reversed) / x (not defined where x is 0)."""
    attrs = node.attrs
    summed = cumsum(
        g * math_ops._conj(out), attrs["axis"], attrs["exclusive"], not attrs["reverse"]
    )
    return (summed / math_ops._conj(x),)


def _reduce_prod_grad(node, g, x):
    axes = node.attrs["axis"]
    shape = x.shape
    others = tuple(a for a in range(len(shape)) if a not in axes)
    perm = axes + others
    reduced = int(np.prod([shape[a] for a in axes]))
    rows = array_ops.reshape(array_ops.transpose(x, perm), (reduced, -1))
    left = cumprod(rows, 0, exclusive=True)
    right = cumprod(rows, 0, exclusive=True, reverse=True)
    product_of_others = array_ops.reshape(left * right, tuple(shape[a] for a in perm))
    product_of_others = array_ops.transpose(
        product_of_others, tuple(int(p) for p in np.argsort(perm))
    )
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return (array_ops.reshape(g, kept) * math_ops._conj(product_of_others),)


CUMSUM = primitive("cumsum", _infer_scan, _cumsum_grad)
CUMPROD = primitive("cumprod", _infer_scan, _cumprod_grad, saves=(0, OUT))
REDUCE_PROD = primitive("reduce_prod", shapes.reduction, _reduce_prod_grad, saves=(0,))


def _scan(op, x, axis, exclusive, reverse):
    x = as_tensor(x)
    (axis,) = shapes.normalize_axes(int(axis), x.ndim)
    return apply(op, (x,), {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis`; `exclusive` leaves out the element itself, `reverse` runs backwards.

    >>> tt.math.cumsum([1, 2, 3], exclusive=True).numpy()
    array([0, 1, 3], dtype=int32)
    """
    return _scan(CUMSUM, x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis`, with the same options as `cumsum`."""
    return _scan(CUMPROD, x, axis, exclusive, reverse)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    x = as_tensor(input_tensor)
    axes = shapes.normalize_axes(axis, x.ndim)
    if not axes and not keepdims:
        return x
    return apply(REDUCE_PROD, (x,), {"axis": axes, "keepdims": bool(keepdims)})
