"""Softmax cross-entropy against integer labels, as one primitive with its gradient as another.

Written with primitives, `-log_softmax(logits)[labels]` is about fourteen ops (a maximum,
exp, sum, log, a one-hot of the labels...), and an eager training step records each of them
and builds and runs the gradient of each. TensorFlow and PyTorch run one kernel for it;
so does tracer:

    sparse_softmax_cross_entropy(labels, logits)           log(sum(exp(x))) - x[label], per row
    sparse_softmax_cross_entropy_backprop(labels, logits)  softmax(x) - one_hot(label)

The first's gradient with respect to the logits is the second times the cotangent; the
second's is the softmax's vector-Jacobian product `s * (v - sum(v * s))`, itself a primitive
with its own gradient (tracer/ops/softmax_ops.py), so every order of derivative follows. Both take the row's maximum out first,
as TensorFlow's kernel does (a row holding +inf or NaN gives NaN, as there; a -inf logit
other than the label's adds nothing), and compute in float32 for float16 logits. A label
outside `[0, classes)` is InvalidArgumentError, TensorFlow's error, in every backend.
"""

import numpy as np

from codegen import array_math, forms
from codegen.ctypes import MATH_SUFFIX, compute, storage
from runtime.kernels import quiet
from tracer.errors import as_tf
from tracer.ir import dims
from tracer.ops import array_ops, softmax_ops
from tracer.ops.batching import any_leading_axes
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.registry import primitive


def _label_error(classes):
    return f"received a label value outside the valid range of [0, {classes})"


def _infer(attrs, labels, logits, backprop=False):
    if not labels.dtype.is_integer:
        raise TypeError(f"labels must be int32 or int64, got {labels.dtype.name}")
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be a real floating tensor, got {logits.dtype.name}")
    if len(logits.shape) == 0 or tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError(
            f"labels shape {labels.shape} must equal logits shape {logits.shape} without its last axis"
        )
    return (logits.shape if backprop else labels.shape), logits.dtype


def _check_labels(labels, classes):
    """TensorFlow's error for a label outside [0, classes). Signed integers in one pass: read
    as unsigned integers of their size, the negative ones are those from 2^(bits - 1)."""
    if not labels.size:
        return
    kind, size = labels.dtype.kind, labels.dtype.itemsize
    if kind == "i":
        outside = labels.view(_UNSIGNED[size]).max() >= min(classes, 1 << (8 * size - 1))
    elif kind == "u":
        outside = labels.max() >= classes
    else:
        outside = labels.min() < 0 or labels.max() >= classes
    if outside:
        raise as_tf(IndexError)(_label_error(classes))


_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}  # by the labels' itemsize


def _rows(labels, logits):
    """(exp(x - peak), x - peak, labels) with one row per label, in the compute type, after
    the labels' range check."""
    classes = logits.shape[-1]
    labels = labels.reshape(-1)
    _check_labels(labels, classes)
    x = logits.reshape(labels.size, classes)
    x = x.astype(np.float32) if x.dtype == np.float16 else x
    shifted = x - np.max(x, axis=-1, keepdims=True, initial=-np.inf)
    return np.exp(shifted), shifted, labels


def _in_c(labels, logits, backprop):
    """The installed loops' pass a row (codegen/array_math.py's `cross_entropy`: numpy makes
    ten passes over a classifier's short rows), after the labels' range check; None where
    they do not take these logits."""
    labels = np.asarray(labels)
    _check_labels(labels, logits.shape[-1])
    return array_math.cross_entropy(labels, logits, backprop)


@quiet
def _loss_kernel(labels, logits):
    found = _in_c(labels, logits, backprop=False)
    if found is not None:
        return found
    exps, shifted, rows = _rows(labels, logits)
    loss = np.log(exps.sum(axis=-1)) - shifted[np.arange(rows.size), rows]
    return loss.astype(logits.dtype, copy=False).reshape(np.shape(labels))


@quiet
def _backprop_kernel(labels, logits):
    found = _in_c(labels, logits, backprop=True)
    if found is not None:
        return found
    exps, _, rows = _rows(labels, logits)
    exps /= exps.sum(axis=-1, keepdims=True)
    exps[np.arange(rows.size), rows] -= 1
    return exps.astype(logits.dtype, copy=False).reshape(np.shape(logits))


def _c(backprop):
    """templates/softmax_cross_entropy.c.j2: one pass for the maximum, one for the sum of
    exponentials (accumulated in double), and one writing the row's result."""

    def context(node, blas):
        labels, logits = node.inputs
        return dict(
            T=storage(logits.dtype),
            C=compute(logits.dtype),
            I=storage(labels.dtype),
            f=MATH_SUFFIX[compute(logits.dtype)],
            rows=dims.size(labels.shape),
            n=logits.shape[-1],
            backprop=backprop,
        )

    def error(node):
        return IndexError, _label_error(node.inputs[1].shape[-1])

    return forms.Template("softmax_cross_entropy.c.j2", context, error=error)


def _softmax_vjp(logits, v):
    """The softmax's vector-Jacobian product at `logits`, which is also its Jacobian-vector
    product."""
    return softmax_ops.softmax_vjp(softmax_ops.softmax_last_axis(logits), v)


SPARSE_SOFTMAX_CROSS_ENTROPY_BACKPROP = primitive(
    "sparse_softmax_cross_entropy_backprop",
    lambda attrs, labels, logits: _infer(attrs, labels, logits, backprop=True),
    grad=lambda node, g, logits: (None, _softmax_vjp(logits, g)),
    saves=(1,),
    jvp=lambda node, tangents, inputs, out: _softmax_vjp(inputs[1], tangents[1]),
    batch=any_leading_axes,
    kernel=_backprop_kernel,
    c=_c(backprop=True),
)


def _loss_grad(node, g, labels, logits):
    backprop = apply(SPARSE_SOFTMAX_CROSS_ENTROPY_BACKPROP, (labels, logits), {})
    return None, array_ops.expand_dims(g, -1) * backprop


def _loss_jvp(node, tangents, inputs, out):
    backprop = apply(SPARSE_SOFTMAX_CROSS_ENTROPY_BACKPROP, inputs, {})
    return reduce_sum(backprop * tangents[1], -1)


SPARSE_SOFTMAX_CROSS_ENTROPY = primitive(
    "sparse_softmax_cross_entropy",
    _infer,
    grad=_loss_grad,
    saves=(0, 1),
    jvp=_loss_jvp,
    batch=any_leading_axes,
    kernel=_loss_kernel,
    c=_c(backprop=False),
)


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """-log_softmax(logits)[labels] for integer class `labels` (shape = logits.shape[:-1]).

    >>> tt.nn.sparse_softmax_cross_entropy_with_logits([0], [[0.0, 0.0]]).numpy()
    array([0.6931472], dtype=float32)
    """
    labels, logits = as_tensor(labels), as_tensor(logits)
    return apply(SPARSE_SOFTMAX_CROSS_ENTROPY, (labels, logits), {})
