"""The softmax over the last axis as one primitive, and its vector-Jacobian product as another.

Written with primitives, a softmax is a maximum, a subtraction, exp, a sum and a division,
and its gradient about as many again; compiled, the fusion pass recomputes exp in each
kernel that reads it (an attention's scores went through exp five times a step). TensorFlow
and PyTorch run one kernel each way; so does tracer:

    softmax(x)                y = exp(x - max(x)) / sum(exp(x - max(x))), per row of the last axis
    softmax_backprop(y, v)    y * (v - sum(v * y)), per row: the softmax's vector-Jacobian
                              product at output y, which is also its Jacobian-vector product
                              (the Jacobian diag(y) - y y^T is symmetric)

The first's gradient is the second; the second's, written with primitives, follows from
`out = y * (v - s)`, `s = sum(v * y)`: along v it is the second again, along y it is
`c * (v - s) - sum(c * y) * v`, so every order of derivative follows. A row holding NaN or
+inf gives NaN throughout, and a row of -inf NaN, as the composite form and TensorFlow do.
Other axes, and inputs that are not real floating tensors, keep the composite form
(tracer/ops/nn_ops.py). Eager, float32 and float64 arrays of ROWS_IN_C_FROM elements or
more run the template's loops (codegen/array_math.py: numpy's maxima and sums over short
rows took twice as long), smaller ones numpy's.
"""

import numpy as np

from codegen import array_math, forms
from codegen.ctypes import compute, storage
from codegen.forms import C_FORMS
from codegen.loops import PARALLEL_MIN
from runtime.kernels import quiet
from tracer.ir import dims
from tracer.ops.batching import any_leading_axes
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.core import apply
from tracer.ops.registry import OUT, primitive
from tracer.ops.tangent_rules import TRANSPOSED_VJP


def _infer(attrs, x, *v):
    if not x.dtype.is_floating:
        raise TypeError(f"softmax takes a real floating tensor, got {x.dtype.name}")
    if len(x.shape) == 0:
        raise ValueError("softmax needs at least one axis, got a scalar")
    if v and (tuple(v[0].shape) != tuple(x.shape) or v[0].dtype != x.dtype):
        raise ValueError(
            f"the cotangent must be {x.dtype.name} of shape {x.shape}, got {v[0].dtype.name} "
            f"of shape {v[0].shape}"
        )
    return x.shape, x.dtype


# elements from which the eager softmax runs in C: a smaller one (a classifier's logits)
# costs microseconds in numpy, and a program's first never waits for the module's build
ROWS_IN_C_FROM = 16384


def _rows_in_c(name, *arrays):
    """`array_math`'s loops of op `name` over the rows of float32 or float64 arrays of one
    shape, of ROWS_IN_C_FROM elements or more: the compiled template's; None where it takes
    no such arrays or no module can be built."""
    first = arrays[0]
    if first.dtype.name not in ("float32", "float64") or len({a.shape for a in arrays}) > 1:
        return None
    return array_math.apply(name, *arrays) if first.size >= ROWS_IN_C_FROM else None


@quiet
def _softmax_kernel(x):
    found = _rows_in_c("softmax", x)
    if found is not None:
        return found
    exps = np.exp(x - np.max(x, axis=-1, keepdims=True, initial=-np.inf))
    return exps / exps.sum(axis=-1, keepdims=True)


@quiet
def _backprop_kernel(y, v):
    found = _rows_in_c("softmax_backprop", y, v) if y.dtype == v.dtype else None
    if found is not None:
        return found
    return y * (v - np.sum(v * y, axis=-1, keepdims=True))


class _Template(forms.Template):
    """The template, and the prologue helper of exp that the softmax calls."""

    def helper_definitions(self, node, vector_math):
        if node.op != "softmax":
            return []
        return C_FORMS["exp"].helper_definitions(node, vector_math)


def _c(backprop):
    """templates/softmax.c.j2: per row, the maximum, exp written and summed, the division
    (or, for the backprop, the row's dot product, then the result), each a vector loop; the
    rows shared among the threads where there are enough of them."""

    def context(node, blas):
        x = node.inputs[0]
        rows, n = dims.size(x.shape[:-1]), x.shape[-1]
        C = compute(x.dtype)
        return dict(
            T=storage(x.dtype),
            C=C,
            rows=rows,
            n=n,
            backprop=backprop,
            exp=None
            if backprop
            else C_FORMS["exp"].render(x.dtype, x.dtype, f"({C})row[j] - peak"),
            parallel_min=PARALLEL_MIN,
        )

    return _Template("softmax.c.j2", context)


def _backprop_grad(node, c, y, v):
    """Along v the op itself at y; along y, `c * (v - sum(v * y)) - sum(c * y) * v`."""
    along_v = apply(SOFTMAX_BACKPROP, (y, c), {})
    along_y = (
        c * (v - reduce_sum(v * y, -1, keepdims=True)) - reduce_sum(c * y, -1, keepdims=True) * v
    )
    return along_y, along_v


SOFTMAX_BACKPROP = primitive(
    "softmax_backprop",
    _infer,
    grad=_backprop_grad,
    saves=(0, 1),
    jvp=TRANSPOSED_VJP,
    batch=any_leading_axes,
    kernel=_backprop_kernel,
    c=_c(backprop=True),
)

SOFTMAX = primitive(
    "softmax",
    _infer,
    grad=lambda node, g, y: (apply(SOFTMAX_BACKPROP, (y, g), {}),),
    saves=(OUT,),
    jvp=lambda node, tangents, inputs, out: apply(SOFTMAX_BACKPROP, (out, tangents[0]), {}),
    batch=any_leading_axes,
    kernel=_softmax_kernel,
    c=_c(backprop=False),
)


def softmax_last_axis(x):
    """The softmax of real floating tensor `x` over its last axis."""
    return apply(SOFTMAX, (x,), {})


def softmax_vjp(y, v):
    """The softmax's vector-Jacobian product at output `y` along `v` (also its
    Jacobian-vector product)."""
    return apply(SOFTMAX_BACKPROP, (y, v), {})
