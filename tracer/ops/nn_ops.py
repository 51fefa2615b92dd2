"""Neural-network functions, composed of primitives in numerically stable forms.

None of these needs a gradient rule of its own: their gradients come from the primitives',
so they are differentiable to any order and stay finite where TensorFlow's do. The softmax
over the last axis is the exception: one primitive (tracer/ops/softmax_ops.py).
"""

import numpy as np

from tracer.ops import array_ops, index_ops, math_ops, reduction_ops, shapes, softmax_ops
from tracer.ops.broadcast_ops import broadcast_to, reduce_sum
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
    """x - max(x) - log(sum(exp(x - max(x)))) over `axis`, as TensorFlow's kernel: a row
    holding +inf or NaN, or only -inf, is NaN throughout, and so is its gradient (unlike
    reduce_logsumexp, which sets an infinite maximum aside)."""
    x = as_tensor(logits)
    with np.errstate(invalid="ignore"):  # inf - inf is the NaN meant, quietly as a kernel's
        shifted = x - array_ops.stop_gradient(reduction_ops.reduce_max(x, axis, keepdims=True))
        return shifted - math_ops.log(reduce_sum(math_ops.exp(shifted), axis, keepdims=True))


@tf_op("Relu6")
def relu6(features, name=None):
    """min(max(x, 0), 6), with TensorFlow's gradient: 0 at both corners; NaN stays NaN, as
    TensorFlow's."""
    x = as_tensor(features)
    return math_ops.where(x >= 6.0, 6.0, math_ops.relu(x))


@tf_op("Elu")
def elu(features, name=None):
    """x for x >= 0, exp(x) - 1 otherwise; exp only sees x <= 0, so no inf reaches the
    gradient. At 0 the derivatives are the linear side's, as TensorFlow's (its EluGrad takes
    the output 0 as not negative): 1, then 0."""
    x = as_tensor(features)
    return math_ops.where(x >= 0.0, x, math_ops.exp(math_ops.minimum(x, 0.0)) - 1.0)


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
    """-sum(labels * log_softmax(logits)) over `axis`, as TensorFlow's kernel: `labels`
    broadcast to the logits' shape, and the gradient with respect to the logits is
    softmax(logits) - labels whatever each row of labels sums to (the loss's derivative is
    softmax(logits) * sum(labels) - labels; they agree where the labels sum to 1); with
    respect to the labels it is -log_softmax(logits).

    >>> float(tt.nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], [[0.0, 0.0]])[0])
    0.6931471805599453
    """
    labels, logits = as_tensors(labels, logits)
    if labels.shape != logits.shape:
        if shapes.broadcast_shapes(labels.shape, logits.shape) != tuple(logits.shape):
            raise ValueError(
                f"labels shape {labels.shape} must broadcast to logits shape {logits.shape}"
            )
        labels = broadcast_to(labels, logits.shape)
    shifted = logits - array_ops.stop_gradient(
        reduction_ops.reduce_max(logits, axis, keepdims=True)
    )
    total = math_ops.log(reduce_sum(math_ops.exp(shifted), axis, keepdims=True))
    # NOTE: a term whose value is 0 (total is finite or NaN) and whose gradient is
    # (1 - sum(labels)) * softmax: with it the logits' gradient is TensorFlow's
    unmatched = 1.0 - array_ops.stop_gradient(reduce_sum(labels, axis, keepdims=True))
    zero = unmatched * (total - array_ops.stop_gradient(total))
    return reduce_sum(labels * (total - shifted), axis) + reduce_sum(zero, axis)


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


# --- tf.nn functions composed of primitives ------------------------------------------------

_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def selu(features, name=None):
    """scale * (x if x > 0 else alpha * (exp(x) - 1)); at 0 the gradient is TensorFlow's,
    the linear branch's `scale`."""
    x = as_tensor(features)
    negative = _SELU_ALPHA * (math_ops.exp(math_ops.minimum(x, 0.0)) - 1.0)
    return _SELU_SCALE * math_ops.where(x >= 0.0, x, negative)


def leaky_relu(features, alpha=0.2, name=None):
    """x for x > 0, alpha * x otherwise (the gradient at 0 is alpha, as TensorFlow's;
    integers are cast to float32 first, as TensorFlow casts them).

    It is x times its slope, `relu_grad(x, 1 - alpha) + alpha`: 1 exactly where x > 0
    and alpha elsewhere, with a gradient of zeros, as TensorFlow's LeakyReluGrad has, so
    that the second derivative is zeros where a selection by `x > 0` would leave it None.
    (For an alpha whose `1 - alpha` does not add back to 1 exactly, the slope is the
    selection plus `relu_grad(x, 0)`, a zero with that zero gradient.)"""
    x = as_tensor(features)
    if x.dtype.is_integer:  # as TensorFlow's: integers become float32
        x = array_ops.cast(x, "float32")
    with np.errstate(all="ignore"):  # an alpha beyond float16's range is inf, as in TF
        a = np.asarray(alpha, x.dtype.as_numpy_dtype)
        rest = np.asarray(1, a.dtype) - a
        exact = rest + a == 1
    if exact:
        slope = math_ops.apply(math_ops.RELU_GRAD, (x, as_tensor(rest)), {}) + a
    else:
        zero = math_ops.apply(math_ops.RELU_GRAD, (x, as_tensor(np.zeros((), a.dtype))), {})
        slope = math_ops.where(x > 0, np.ones((), a.dtype), a) + zero
    return x * slope


def silu(features, beta=1.0, name=None):
    """x * sigmoid(beta * x), tf.nn.silu (also tf.nn.swish)."""
    x = as_tensor(features)
    return x * math_ops.sigmoid(beta * x if beta != 1.0 else x)


swish = silu


def bias_add(value, bias, data_format=None, name=None):
    """`value` + the 1-D `bias` along the channel axis: the last, or for "NC..." formats the
    second."""
    value, bias = as_tensors(value, bias)
    if len(bias.shape) != 1:
        raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
    if data_format is not None and data_format.startswith("NC") and len(value.shape) > 2:
        bias = array_ops.reshape(bias, (bias.shape[0],) + (1,) * (len(value.shape) - 2))
    return value + bias


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x * rsqrt(max(sum(x ** 2, axis), epsilon)), as TensorFlow."""
    x = as_tensor(x)
    axis = dim if axis is None else axis
    squares = reduce_sum(math_ops.square(x), axis, keepdims=True)
    return x * math_ops.rsqrt(math_ops.maximum(squares, epsilon))


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """TensorFlow's formula: inv = rsqrt(variance + epsilon) * scale;
    x * inv + (offset - mean * inv)."""
    x, mean, variance = as_tensors(x, mean, variance)
    inv = math_ops.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = offset - mean * inv if offset is not None else math_ops.negative(mean) * inv
    return x * inv + shift


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """TensorFlow's stable form (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) +
    max(-x, 0))."""
    labels, logits = as_tensors(labels, logits)
    log_weight = 1.0 + (pos_weight - 1.0) * labels
    softplus_neg = math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(logits))))
    return (1.0 - labels) * logits + log_weight * (
        softplus_neg + math_ops.relu(math_ops.negative(logits))
    )


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(c) - c * z, plus Stirling's approximation z log z - z + log(2 pi z) / 2 where
    z > 1 if `compute_full_loss`."""
    targets, log_input = as_tensors(targets, log_input)
    result = math_ops.exp(log_input) - log_input * targets
    if not compute_full_loss:
        return result
    safe = math_ops.where(targets > 1.0, targets, 1.0)
    stirling = safe * math_ops.log(safe) - safe + 0.5 * math_ops.log(2.0 * np.pi * safe)
    return result + math_ops.where(targets > 1.0, stirling, 0.0)


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics, as tf.nn.normalize_moments."""
    counts, mean_ss, variance_ss = as_tensors(counts, mean_ss, variance_ss)
    divisor = 1.0 / counts
    shifted_mean = mean_ss * divisor
    mean = shifted_mean + shift if shift is not None else shifted_mean
    return mean, variance_ss * divisor - math_ops.square(shifted_mean)


def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, a float32 scalar."""
    value = as_tensor(value)
    return reduction_ops.reduce_mean(array_ops.cast(math_ops.equal(value, 0), "float32"))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (by default the first
    axis's size: one replica), 0 where that is 0, as tf.nn.compute_average_loss."""
    loss = as_tensor(per_example_loss)
    if len(loss.shape) == 0:
        raise ValueError("per_example_loss must have rank at least 1, got a scalar")
    if sample_weight is not None:
        loss = array_ops.cast(loss * sample_weight, loss.dtype)
    if global_batch_size is None:
        global_batch_size = loss.shape[0]
    total = reduce_sum(loss)
    size = array_ops.cast(as_tensor(global_batch_size), loss.dtype)
    return math_ops.where(math_ops.equal(size, 0), 0.0, total / math_ops.maximum(size, 1e-30))


def in_top_k(targets, predictions, k, name=None):
    """Whether each row's target class is among its k largest predictions; ties count in
    (fewer than k predictions strictly greater), a non-finite target's prediction is False,
    as TensorFlow."""
    targets, predictions = as_tensors(targets, predictions)
    chosen = index_ops.one_hot(targets, predictions.shape[-1], True, False, dtype="bool")
    target = reduce_sum(math_ops.where(chosen, predictions, 0.0), -1)
    greater = reduce_sum(
        array_ops.cast(predictions > array_ops.expand_dims(target, -1), "int32"), -1
    )
    return math_ops.logical_and(greater < k, math_ops.is_finite(target))
