"""Neural-network functions, composed of primitives in numerically stable forms.

None of these needs a gradient rule of its own: their gradients come from the primitives',
so they are differentiable to any order and stay finite where TensorFlow's do. The softmax
over the last axis is the exception: one primitive (tracer/ops/softmax_ops.py).
"""

from tracer.ops import array_ops, math_ops, reduction_ops, softmax_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.op_names import tf_op


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) without overflow: the maximum is taken out first (and treated as a
    constant, which leaves the gradient exact); all -inf gives -inf, not NaN."""
    x = as_tensor(input_tensor)
    peak = array_ops.stop_gradient(reduction_ops.reduce_max(x, axis, keepdims=True))
    peak = math_ops.where(math_ops.is_finite(peak), peak, 0.0)
    total = reduce_sum(math_ops.exp(x - peak), axis, keepdims=True)
    result = math_ops.log(total) + peak
    if keepdims:
        return result
    return array_ops.reshape(result, reduce_sum(x, axis).shape)


@tf_op("Softmax")
def softmax(logits, axis=-1, name=None):
    """exp(x) / sum(exp(x)) over `axis`, the maximum taken out first: one primitive over the
    last axis of a real floating tensor (tracer/ops/softmax_ops.py), composed otherwise."""
    x = as_tensor(logits)
    rank = len(x.shape)
    if x.dtype.is_floating and rank and isinstance(axis, int) and axis % rank == rank - 1:
        return softmax_ops.softmax_last_axis(x)
    shifted = math_ops.exp(
        x - array_ops.stop_gradient(reduction_ops.reduce_max(x, axis, keepdims=True))
    )
    return shifted / reduce_sum(shifted, axis, keepdims=True)


@tf_op("LogSoftmax")
def log_softmax(logits, axis=-1, name=None):
    x = as_tensor(logits)
    return x - reduce_logsumexp(x, axis, keepdims=True)


@tf_op("Relu6")
def relu6(features, name=None):
    """min(max(x, 0), 6), with TensorFlow's gradient: 0 at both corners."""
    x = as_tensor(features)
    return math_ops.where(x < 6.0, math_ops.relu(x), 6.0)


@tf_op("Elu")
def elu(features, name=None):
    """x for x > 0, exp(x) - 1 otherwise; exp only sees x <= 0, so no inf reaches the gradient."""
    x = as_tensor(features)
    return math_ops.where(x > 0.0, x, math_ops.exp(math_ops.minimum(x, 0.0)) - 1.0)


def gelu(features, approximate=False, name=None):
    x = as_tensor(features)
    if approximate:
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2 / pi)
        return 0.5 * x * (1.0 + math_ops.tanh(inner))
    if x.dtype.is_floating:
        return math_ops.gelu(x)  # one op each way (math_ops' GELU)
    return 0.5 * x * (1.0 + math_ops.erf(x * 0.7071067811865476))


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    t = as_tensor(t)
    return reduce_sum(t * t) / 2.0


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) over `axis`; the gradient flows into labels too."""
    labels, logits = as_tensors(labels, logits)
    if labels.shape != logits.shape:
        raise ValueError(
            f"labels shape {labels.shape} and logits shape {logits.shape} must be equal"
        )
    return math_ops.negative(reduce_sum(labels * log_softmax(logits, axis), axis))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """TensorFlow's stable form max(x, 0) - x * z + log(1 + exp(-|x|)), written with where()
    so that the gradient at x = 0 is sigmoid(0) - z."""
    labels, logits = as_tensors(labels, logits)
    if labels.shape != logits.shape:
        raise ValueError(
            f"labels shape {labels.shape} and logits shape {logits.shape} must be equal"
        )
    positive = logits >= 0.0
    relu_logits = math_ops.where(positive, logits, 0.0)
    neg_abs = math_ops.where(positive, math_ops.negative(logits), logits)
    return relu_logits - logits * labels + math_ops.log1p(math_ops.exp(neg_abs))
