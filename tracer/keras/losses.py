"""`tt.keras.losses`: Keras's losses by their Keras names, composed of tracer's ops, so they
are differentiable and compile under `tt.function`.

>>> loss = tt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
>>> float(loss(tt.constant([0, 1]), tt.constant([[2.0, 0.0], [0.0, 2.0]])))  # doctest: +ELLIPSIS
0.126928...

The semantics are Keras 3's with TensorFlow's backend:

- probabilities (`from_logits=False`) are clipped to [EPSILON, 1 - EPSILON] before their log;
  categorical crossentropy first renormalises `y_pred` over the class axis, and the sparse
  one renormalises after the clip (TensorFlow's backend: the log of the clipped
  probabilities goes through a log-softmax);
- binary crossentropy is the mean over the last axis, the categorical ones the sum;
- a Loss object computes in its `dtype` (None: `tt.keras.backend.floatx()`, float32 unless
  set), to which it casts `y_true`, `y_pred` and the losses, so float64 tensors give a
  float32 loss (the plain functions keep their inputs' dtype);
- it first squeezes or expands `y_true` and `y_pred` to the same rank (a last axis of size
  1), then weights the per-sample losses by `sample_weight` (squeezed or expanded the same
  way, then broadcast), then reduces: "sum_over_batch_size" (or "mean", or the older "auto")
  divides the weighted sum by the number of per-sample losses, "mean_with_sample_weight" by
  the sum of the weights as given (by the number of losses without weights), "sum" sums,
  "none" (or None) keeps them;
- a mask, on `y_pred` (a layer's steps to skip) or on the losses (the entries
  `ignore_class` leaves out), weighs the masked losses 0 and, for the two means by the
  number of losses, scales the others so that the mean is over the unmasked ones alone;
- the crossentropies take probabilities back to their logits where Keras's TensorFlow
  backend does (`_logits_behind`): those a Keras softmax or sigmoid made, and in a traced
  function those of a softmax or sigmoid op.

- the crossentropies compute from the logits wherever `y_pred` is the very output of Keras's
  `sigmoid` or `softmax` activation (`activations.logits_of`), as if `from_logits` were
  given, so a saturated probability is not clipped (Keras 3's `_keras_logits`); and in a
  traced function (a compiled fit or evaluate, a `tt.function`), wherever it is the output
  of a sigmoid op (binary) or a softmax op over the last axis (categorical), as Keras's
  TensorFlow backend reads `output.op` in a graph.
"""

import math
import warnings

import numpy as np

from tracer.dtypes import as_dtype
from tracer.ir import dims
from tracer.keras import backend
from tracer.keras.activations import logits_of
from tracer.keras.lookup import instance_or_callable
from tracer.ops import (
    array_ops,
    cross_entropy_ops,
    math_ops,
    nn_ops,
    reduction_ops,
    softmax_ops,
)
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.math_composites import divide_no_nan, reduce_all
from tracer.ops.reduction_ops import reduce_mean
from tracer.tensor import Tensor

EPSILON = 1e-7  # keras.backend.epsilon()

# Keras 3's reductions, and TensorFlow 2's "auto", by the reduction each one means
REDUCTIONS = {
    "sum_over_batch_size": "sum_over_batch_size",
    "mean": "sum_over_batch_size",
    "auto": "sum_over_batch_size",
    "mean_with_sample_weight": "mean_with_sample_weight",
    "sum": "sum",
    "none": "none",
    None: "none",
}


class Reduction:
    """The names of a Loss's reductions, as `tf.keras.losses.Reduction` (Keras's legacy class,
    which TensorFlow 2 programs pass as `reduction=tf.keras.losses.Reduction.NONE`) spells
    them: plain strings.

    >>> tt.keras.losses.Reduction.NONE
    'none'
    """

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key: {key}. Expected keys are {cls.all()}")


# --- the loss functions: one loss per sample, no weighting or reduction -------------------


def mean_squared_error(y_true, y_pred):
    """mean(square(y_true - y_pred), axis=-1).

    >>> tt.keras.losses.mean_squared_error([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
    array([0.5], dtype=float32)
    """
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    return reduce_mean(math_ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(abs(y_true - y_pred), axis=-1)."""
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    return reduce_mean(math_ops.abs(y_true - y_pred), axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(p), axis) for one-hot (or soft) `y_true`, where p is
    softmax(y_pred) with `from_logits`, else y_pred / sum(y_pred, axis) clipped to
    [EPSILON, 1 - EPSILON]. `label_smoothing` s turns y_true into
    y_true * (1 - s) + s / num_classes, where num_classes is the size of the last axis
    whatever `axis` is, as Keras 3 computes it (`shape(y_true)[-1]`).

    >>> tt.keras.losses.categorical_crossentropy([[0, 1]], [[0.5, 0.5]]).numpy()
    array([0.6931472], dtype=float32)
    """
    y_pred, from_logits = _keras_logits(y_pred, from_logits, "Softmax", "categorical_crossentropy")
    y_true, y_pred = _as_floating(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "categorical_crossentropy")
    if label_smoothing:
        # NOTE: Keras 3 divides by the last axis's size even when `axis` names another
        classes = _dimension(y_true.shape[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return nn_ops.softmax_cross_entropy_with_logits(y_true, y_pred, axis=axis)
    probabilities = y_pred / reduce_sum(y_pred, axis, keepdims=True)
    log_p = math_ops.log(math_ops.clip_by_value(probabilities, EPSILON, 1.0 - EPSILON))
    return math_ops.negative(reduce_sum(y_true * log_p, axis))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """categorical_crossentropy for integer class labels (of y_pred's shape without its last
    axis, or with a last axis of size 1); float labels are truncated to integers.

    Entries labelled `ignore_class` (say -1 or 255, a segmentation map's "void") get a loss
    of 0 and carry a mask that a Loss object reads, so that its mean leaves them out. As in
    Keras, their predictions are first set to 0, so a softmax's output is then not taken
    back to its logits.

    >>> tt.keras.losses.sparse_categorical_crossentropy([1], [[0.5, 0.5]]).numpy()
    array([0.6931472], dtype=float32)
    >>> tt.keras.losses.sparse_categorical_crossentropy(
    ...     [1, -1], [[0.5, 0.5], [0.5, 0.5]], ignore_class=-1
    ... ).numpy()
    array([0.6931472, 0.       ], dtype=float32)
    """
    y_pred = _floating(y_pred)
    labels = as_tensor(y_true)
    if axis not in (-1, y_pred.ndim - 1):
        raise ValueError(f"sparse_categorical_crossentropy supports only axis=-1, not {axis}")
    if labels.ndim == y_pred.ndim and labels.ndim and labels.shape[-1] == 1:
        labels = array_ops.squeeze(labels, axis=-1)
    valid = None
    if ignore_class is not None:
        valid = math_ops.not_equal(labels, _cast(ignore_class, labels.dtype))
        labels = math_ops.where(valid, labels, array_ops.zeros_like(labels))
        y_pred = math_ops.where(
            array_ops.expand_dims(valid, -1), y_pred, array_ops.zeros_like(y_pred)
        )
    y_pred, from_logits = _keras_logits(
        y_pred, from_logits, "Softmax", "sparse_categorical_crossentropy"
    )
    if not labels.dtype.is_integer:
        labels = array_ops.cast(labels, "int64")
    if not from_logits:
        y_pred = math_ops.log(math_ops.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    losses = cross_entropy_ops.sparse_softmax_cross_entropy_with_logits(labels, y_pred)
    if valid is None:
        return losses
    losses = math_ops.where(valid, losses, array_ops.zeros_like(losses))
    losses._keras_mask = valid
    return losses


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean(-(y_true * log(p) + (1 - y_true) * log(1 - p)), axis), where p is y_pred clipped
    to [EPSILON, 1 - EPSILON]; with `from_logits`, TensorFlow's stable
    sigmoid_cross_entropy_with_logits (no clipping). `label_smoothing` s turns y_true into
    y_true * (1 - s) + s / 2.

    >>> tt.keras.losses.binary_crossentropy([[0.0, 1.0]], [[0.5, 0.5]]).numpy()
    array([0.6931472], dtype=float32)
    """
    y_pred, from_logits = _keras_logits(y_pred, from_logits, "Sigmoid", "binary_crossentropy")
    y_true, y_pred = _as_floating(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return reduce_mean(_binary_crossentropy_entries(y_true, y_pred, from_logits), axis=axis)


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """binary_crossentropy with each entry's loss scaled by (1 - p_t) ** gamma, where p_t =
    y_true p + (1 - y_true)(1 - p) is the probability given to the label (Lin et al., 2017),
    so that well-classified entries count less; `apply_class_balancing` scales it again by
    `alpha` for the label 1 and 1 - `alpha` for 0. With `from_logits`, p is sigmoid(y_pred)
    and the crossentropy is computed from the logits; label smoothing is binary
    crossentropy's, applied to the labels first.

    >>> tt.keras.losses.binary_focal_crossentropy([[0, 1]], [[0.6, 0.4]]).numpy()
    array([0.32986468], dtype=float32)
    """
    if from_logits:
        y_true, logits = _as_floating(y_true, y_pred)
        y_pred = math_ops.sigmoid(logits)
    else:  # the logits behind a sigmoid's output serve the crossentropy, as Keras's
        logits, from_logits = _keras_logits(y_pred, False, "Sigmoid", "binary_focal_crossentropy")
        y_true, y_pred = _as_floating(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "binary_focal_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    entries = _binary_crossentropy_entries(y_true, logits if from_logits else y_pred, from_logits)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    entries = math_ops.pow(1.0 - p_t, gamma) * entries
    if apply_class_balancing:
        entries = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * entries
    return reduce_mean(entries, axis=axis)


def _binary_crossentropy_entries(y_true, y_pred, from_logits):
    """The binary crossentropy of each entry: TensorFlow's stable
    sigmoid_cross_entropy_with_logits from logits, else from y_pred clipped to
    [EPSILON, 1 - EPSILON]."""
    if from_logits:
        return nn_ops.sigmoid_cross_entropy_with_logits(y_true, y_pred)
    p = math_ops.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    log_likelihood = y_true * math_ops.log(p) + (1.0 - y_true) * math_ops.log(1.0 - p)
    return math_ops.negative(log_likelihood)


def dice(y_true, y_pred, axis=None):
    """1 - 2 sum(y_true y_pred) / (sum(y_true) + sum(y_pred) + EPSILON), the sums over `axis`
    (None: every axis, one loss for the batch; (1, 2, 3), say, one per image): one minus
    the overlap of a predicted and a true segmentation.

    >>> float(tt.keras.losses.dice([[1.0, 0.0, 1.0]], [[0.8, 0.1, 0.4]]))  # doctest: +ELLIPSIS
    0.27272...
    """
    y_true, y_pred = _as_floating(y_true, y_pred)
    overlap = reduce_sum(y_true * y_pred, axis)
    total = reduce_sum(y_true, axis) + reduce_sum(y_pred, axis) + EPSILON
    return 1.0 - 2.0 * overlap / total


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - tp / (tp + alpha fp + beta fn + EPSILON) (Salehi et al., 2017), the sums over
    `axis` as dice's: tp = sum(y_true y_pred), and, as Keras names them, fp = sum((1 - y_pred)
    y_true) (the true entries missed) and fn = sum(y_pred (1 - y_true)) (the false ones
    predicted); alpha = beta = 0.5 gives dice.

    >>> float(tt.keras.losses.tversky([[1.0, 0.0, 1.0]], [[0.8, 0.1, 0.4]]))  # doctest: +ELLIPSIS
    0.27272...
    """
    y_true, y_pred = _as_floating(y_true, y_pred)
    tp = reduce_sum(y_true * y_pred, axis)
    fp = reduce_sum((1.0 - y_pred) * y_true, axis)
    fn = reduce_sum(y_pred * (1.0 - y_true), axis)
    return 1.0 - tp / (tp + fp * alpha + fn * beta + EPSILON)


def huber(y_true, y_pred, delta=1.0):
    """mean(0.5 * e**2 where |e| <= delta, else delta * |e| - 0.5 * delta**2, axis=-1), with
    e = y_pred - y_true.

    >>> tt.keras.losses.huber([[0.0, 0.0]], [[0.5, 3.0]]).numpy()
    array([1.3125], dtype=float32)
    """
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    error = y_pred - y_true
    abs_error = math_ops.abs(error)
    quadratic = 0.5 * math_ops.square(error)
    linear = delta * abs_error - 0.5 * float(delta) ** 2
    return reduce_mean(math_ops.where(abs_error <= delta, quadratic, linear), axis=-1)


def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [EPSILON, 1] first.

    >>> tt.keras.losses.kl_divergence([[0.5, 0.5]], [[0.25, 0.75]]).numpy()
    array([0.14384106], dtype=float32)
    """
    y_true, y_pred = _as_floating(y_true, y_pred)
    y_true = math_ops.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = math_ops.clip_by_value(y_pred, EPSILON, 1.0)
    return reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for the same direction;
    Keras's normalisation, `x * min(rsqrt(sum(x**2)), 1 / EPSILON)`, keeps zeros at 0.

    >>> tt.keras.losses.cosine_similarity([[1.0, 0.0]], [[2.0, 0.0]]).numpy()
    array([-1.], dtype=float32)
    """
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    return math_ops.negative(reduce_sum(_normalize(y_true, axis) * _normalize(y_pred, axis), axis))


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true)), axis=-1), as `x + softplus(-2x) - log(2)` (no overflow).

    >>> tt.keras.losses.log_cosh([[0.0]], [[1.0]]).numpy()
    array([0.4337808], dtype=float32)
    """
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    x = y_pred - y_true
    return reduce_mean(x + math_ops.softplus(x * -2.0) - math.log(2.0), axis=-1)


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + EPSILON), axis=-1).

    >>> tt.keras.losses.poisson([[1.0]], [[2.0]]).numpy()
    array([1.3068528], dtype=float32)
    """
    y_true, y_pred = _as_floating(y_true, y_pred)
    return reduce_mean(y_pred - y_true * math_ops.log(y_pred + EPSILON), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 mean(|y_true - y_pred| / max(|y_true|, EPSILON), axis=-1)."""
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    error = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), EPSILON))
    return 100.0 * reduce_mean(error, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean(square(log(max(y_pred, EPSILON) + 1) - log(max(y_true, EPSILON) + 1)), axis=-1)."""
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    first = math_ops.log(math_ops.maximum(y_pred, EPSILON) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, EPSILON) + 1.0)
    return reduce_mean(math_ops.square(first - second), axis=-1)


def _signed_labels(y_true):
    """Labels of 0 and 1 as -1 and 1, as Keras's hinge losses take them; others as they are
    (decided on the values where they are known, else taken as given)."""
    value = y_true._value
    if value is not None and value.size and ((value == 0) | (value == 1)).all():
        return 2.0 * y_true - 1.0
    if value is None:
        binary = reduce_all(
            math_ops.logical_or(math_ops.equal(y_true, 0.0), math_ops.equal(y_true, 1.0))
        )
        return math_ops.where(binary, 2.0 * y_true - 1.0, y_true)
    return y_true


def hinge(y_true, y_pred):
    """mean(max(1 - y_true y_pred, 0), axis=-1), labels of 0 and 1 taken as -1 and 1."""
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    return reduce_mean(math_ops.maximum(1.0 - _signed_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """mean(square(max(1 - y_true y_pred, 0)), axis=-1), labels as hinge takes them."""
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    margins = math_ops.maximum(1.0 - _signed_labels(y_true) * y_pred, 0.0)
    return reduce_mean(math_ops.square(margins), axis=-1)


def categorical_hinge(y_true, y_pred):
    """max(max((1 - y_true) y_pred) - sum(y_true y_pred) + 1, 0) along the last axis, for
    one-hot `y_true`."""
    y_true, y_pred = _same_rank(*_as_floating(y_true, y_pred))
    positive = reduce_sum(y_true * y_pred, axis=-1)
    negative = reduction_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(negative - positive + 1.0, 0.0)


# TensorFlow 2's short names (Keras 3 keeps them for `get` and as legacy aliases)
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
bce = BCE = binary_crossentropy
kld = KLD = kl_divergence
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
logcosh = log_cosh
kullback_leibler_divergence = kl_divergence


# --- Loss objects: the function, then sample weights and the reduction ----------------------


class Loss:
    """Keras's loss base class: subclasses give `call(y_true, y_pred)`, the loss per sample;
    calling the object casts both to its `dtype`, weights the losses by `sample_weight`
    and applies `reduction`.

    `dtype` (a dtype or a DTypePolicy, whose compute dtype is taken; None:
    `tt.keras.backend.floatx()` when the loss is made) is the dtype the loss is computed
    in, as Keras 3's, whatever the dtype of the tensors it is given.

    >>> y = tt.constant([[0.0, 1.0]], dtype=tt.float64)
    >>> tt.keras.losses.MeanSquaredError()(y, y + 1.0).dtype
    tt.float32
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in REDUCTIONS:
            allowed = ", ".join(repr(r) for r in REDUCTIONS)
            raise ValueError(f"unknown loss reduction {reduction!r}; use one of {allowed}")
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = reduction
        self.dtype = as_dtype(getattr(dtype, "compute_dtype", dtype) or backend.floatx())

    def __call__(self, y_true, y_pred, sample_weight=None):
        in_mask = getattr(y_pred, "_keras_mask", None)  # a recurrent layer's steps to skip
        y_pred, y_true = _cast(y_pred, self.dtype), self._true_values(y_true)
        losses = self.call(y_true, y_pred)
        out_mask = getattr(losses, "_keras_mask", None)  # the entries the loss left out
        losses = _cast(losses, self.dtype)
        if in_mask is None or out_mask is None:
            mask = out_mask if in_mask is None else in_mask
        else:
            mask = math_ops.logical_and(_cast(in_mask, "bool"), _cast(out_mask, "bool"))
        return _reduce_weighted(losses, sample_weight, self.reduction, mask)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must define call(y_true, y_pred)")

    def _true_values(self, y_true):
        """`y_true` in the loss's dtype, as Keras converts it before `call`."""
        return _cast(y_true, self.dtype)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss whose per-sample losses are `fn(y_true, y_pred, **kwargs)`, after `y_true` and
    `y_pred` are brought to the same rank."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = _same_rank(as_tensor(y_true), as_tensor(y_pred))
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r} reduction={self.reduction!r}>"


class MeanSquaredError(LossFunctionWrapper):
    """mean(square(y_true - y_pred), axis=-1) per sample.

    >>> float(tt.keras.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class MeanAbsoluteError(LossFunctionWrapper):
    """mean(abs(y_true - y_pred), axis=-1) per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class CategoricalCrossentropy(LossFunctionWrapper):
    """categorical_crossentropy per sample, for one-hot (or soft) labels."""

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="categorical_crossentropy",
        dtype=None,
    ):
        super().__init__(
            categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """sparse_categorical_crossentropy per sample, for integer class labels; the entries
    labelled `ignore_class` are left out of the reduction (the means are over the others).

    >>> loss = tt.keras.losses.SparseCategoricalCrossentropy(reduction="none")
    >>> loss([1, 0], [[0.5, 0.5], [0.5, 0.5]]).numpy()
    array([0.6931472, 0.6931472], dtype=float32)
    >>> ignoring = tt.keras.losses.SparseCategoricalCrossentropy(ignore_class=-1)
    >>> float(ignoring([1, -1], [[0.5, 0.5], [0.5, 0.5]]))  # doctest: +ELLIPSIS
    0.693147...
    """

    def __init__(
        self,
        from_logits=False,
        ignore_class=None,
        reduction="sum_over_batch_size",
        axis=-1,
        name="sparse_categorical_crossentropy",
        dtype=None,
    ):
        super().__init__(
            sparse_categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            ignore_class=ignore_class,
            axis=axis,
        )
        self.from_logits, self.ignore_class = from_logits, ignore_class

    def get_config(self):
        """Keras's: without `axis`."""
        return {
            **Loss.get_config(self),
            "from_logits": self.from_logits,
            "ignore_class": self.ignore_class,
        }

    def _true_values(self, y_true):
        """Keras's labels in the loss's dtype, which the loss then truncates to integers:
        eager integer labels that dtype holds exactly (every float32 up to 2^24) stay as they
        are, the same classes without two casts (each a recorded step's op, noted by every
        tape). Others (larger labels, which the float rounds, traced ones, and where an
        `ignore_class` is compared with them) are converted as Keras converts them."""
        labels = as_tensor(y_true)
        kept = (
            labels._value is not None
            and self.ignore_class is None
            and labels.dtype.is_integer
            and self.dtype.is_floating
            and _held_exactly(labels._value, self.dtype)
        )
        return labels if kept else _cast(labels, self.dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    """binary_crossentropy per sample: the mean over the last axis."""

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_crossentropy",
        dtype=None,
    ):
        super().__init__(
            binary_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """binary_focal_crossentropy per sample: binary crossentropy with the well-classified
    entries weighed down by `gamma` (and the classes by `alpha` with
    `apply_class_balancing`)."""

    def __init__(
        self,
        apply_class_balancing=False,
        alpha=0.25,
        gamma=2.0,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_focal_crossentropy",
        dtype=None,
    ):
        super().__init__(
            binary_focal_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            apply_class_balancing=apply_class_balancing,
            alpha=alpha,
            gamma=gamma,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.apply_class_balancing, self.alpha, self.gamma = apply_class_balancing, alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class Dice(LossFunctionWrapper):
    """dice over `axis`: with None (Keras's default) one loss for the whole batch, which
    the reduction leaves as it is.

    >>> float(tt.keras.losses.Dice()([[1.0, 0.0, 1.0]], [[0.8, 0.1, 0.4]]))  # doctest: +ELLIPSIS
    0.27272...
    """

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(dice, reduction=reduction, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class Tversky(LossFunctionWrapper):
    """tversky over `axis` (as Dice's), false positives weighed by `alpha` and false
    negatives by `beta`."""

    def __init__(
        self,
        alpha=0.5,
        beta=0.5,
        reduction="sum_over_batch_size",
        name="tversky",
        axis=None,
        dtype=None,
    ):
        super().__init__(
            tversky, reduction=reduction, name=name, dtype=dtype, alpha=alpha, beta=beta, axis=axis
        )
        self.alpha, self.beta, self.axis = alpha, beta, axis


class Huber(LossFunctionWrapper):
    """huber per sample (the quadratic part for errors up to `delta`, then linear).

    `get_config` keeps `delta` (Keras 3's gives only name and reduction, so that a Huber
    made from it again has delta 1)."""

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)
        self.delta = delta


class KLDivergence(LossFunctionWrapper):
    """kl_divergence per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class CosineSimilarity(LossFunctionWrapper):
    """cosine_similarity per sample along `axis` (-1 where the two point the same way).
    `get_config` keeps `axis`, which Keras 3's leaves out."""

    def __init__(
        self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None
    ):
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class LogCosh(LossFunctionWrapper):
    """log_cosh per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(log_cosh, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class Poisson(LossFunctionWrapper):
    """poisson per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(poisson, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """mean_absolute_percentage_error per sample."""

    def __init__(
        self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None
    ):
        super().__init__(
            mean_absolute_percentage_error, reduction=reduction, name=name, dtype=dtype
        )

    def get_config(self):
        return Loss.get_config(self)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """mean_squared_logarithmic_error per sample."""

    def __init__(
        self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None
    ):
        super().__init__(
            mean_squared_logarithmic_error, reduction=reduction, name=name, dtype=dtype
        )

    def get_config(self):
        return Loss.get_config(self)


class Hinge(LossFunctionWrapper):
    """hinge per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class SquaredHinge(LossFunctionWrapper):
    """squared_hinge per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


class CategoricalHinge(LossFunctionWrapper):
    """categorical_hinge per sample."""

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)


def masked_weights(sample_weight, mask, dtype, reduction):
    """`sample_weight` (None: ones) times a mask, as Keras's: the masked losses weigh 0, and
    where the reduction is the mean over all losses, the others weigh
    (mask size) / (unmasked count), so that the mean is over the unmasked losses alone."""
    mask = array_ops.cast(as_tensor(mask), "bool")
    weights = array_ops.cast(mask, dtype)
    if REDUCTIONS[reduction] == "sum_over_batch_size":
        total = array_ops.cast(array_ops.size(mask), dtype)
        weights = math_ops.where(mask, divide_no_nan(total, reduce_sum(weights)), 0.0)
    if sample_weight is None:
        return weights
    sample_weight = array_ops.cast(as_tensor(sample_weight), dtype)
    weights, sample_weight = _same_rank(weights, sample_weight)
    return sample_weight * weights


def _reduce_weighted(losses, sample_weight=None, reduction="sum_over_batch_size", mask=None):
    """Per-sample `losses` times `sample_weight` (merged with `mask` by `masked_weights`,
    brought to the same rank, then broadcast), reduced as `reduction` says.
    "sum_over_batch_size" divides by the number of weighted losses, whatever the weights
    are; "mean_with_sample_weight" by the sum of the weights before they are broadcast (0
    where it is 0); a scalar is returned as it is."""
    kind = REDUCTIONS[reduction]
    losses = as_tensor(losses)
    if mask is not None:
        sample_weight = masked_weights(sample_weight, mask, losses.dtype, reduction)
    weight = None
    if sample_weight is not None:
        losses, weight = _same_rank(losses, _cast(sample_weight, losses.dtype))
        losses = losses * weight
    if kind == "none" or losses.ndim == 0:
        return losses
    if kind == "sum" or dims.size(losses.shape) == 0:  # an empty batch gives 0, not NaN
        return reduce_sum(losses)
    if kind == "mean_with_sample_weight" and weight is not None:
        return divide_no_nan(reduce_sum(losses), reduce_sum(weight))
    return reduce_mean(losses)


# --- get -------------------------------------------------------------------------------------

_BY_NAME = {
    **{
        cls.__name__: cls
        for cls in (
            MeanSquaredError,
            MeanAbsoluteError,
            CategoricalCrossentropy,
            SparseCategoricalCrossentropy,
            BinaryCrossentropy,
            BinaryFocalCrossentropy,
            Dice,
            Tversky,
            Huber,
            KLDivergence,
            CosineSimilarity,
            LogCosh,
            Poisson,
            MeanAbsolutePercentageError,
            MeanSquaredLogarithmicError,
            Hinge,
            SquaredHinge,
            CategoricalHinge,
        )
    },
    **{
        fn.__name__: fn
        for fn in (
            mean_squared_error,
            mean_absolute_error,
            categorical_crossentropy,
            sparse_categorical_crossentropy,
            binary_crossentropy,
            binary_focal_crossentropy,
            dice,
            tversky,
            huber,
            kl_divergence,
            cosine_similarity,
            log_cosh,
            poisson,
            mean_absolute_percentage_error,
            mean_squared_logarithmic_error,
            hinge,
            squared_hinge,
            categorical_hinge,
        )
    },
    **{"mse": mse, "MSE": mse, "mae": mae, "MAE": mae, "bce": bce, "BCE": bce},
    **{"kld": kld, "KLD": kld, "mape": mape, "MAPE": mape, "msle": msle, "MSLE": msle},
    **{"kullback_leibler_divergence": kl_divergence, "logcosh": log_cosh},
}


def get(identifier):
    """A loss for a Keras name (a class name gives an instance with default arguments, a
    function name the function), a callable (returned as is) or None (None).

    >>> tt.keras.losses.get("mse") is tt.keras.losses.mean_squared_error
    True
    """
    if identifier is None:
        return None
    if isinstance(identifier, str):
        found = _BY_NAME.get(identifier)
    else:
        found = identifier
    return instance_or_callable(found, identifier, _BY_NAME, "loss")


# --- helpers ---------------------------------------------------------------------------------


# the op whose input Keras's TensorFlow backend takes as the logits in a traced graph
_LOGITS_OPS = {"Sigmoid": math_ops.SIGMOID.name, "Softmax": softmax_ops.SOFTMAX.name}


def _keras_logits(y_pred, from_logits, activation, loss):
    """(y_pred, from_logits), or, where y_pred is the output of Keras's sigmoid or softmax,
    (its logits, True), as Keras 3's `_get_logits`, warning as it does where `from_logits` was
    given too. NOTE: as in Keras, any of the two activations' logits serve any of the losses
    (a softmax output given to binary_crossentropy gives the sigmoid crossentropy of the
    softmax's logits). In a traced function (a compiled fit, evaluate or tt.function), the
    output of a sigmoid op (for binary crossentropy) or a softmax op over the last axis (for
    the categorical ones) is taken back to its input too, however it was called
    (`tf.nn.sigmoid`, `activation=tf.nn.softmax`), as TensorFlow's graphs are; eagerly not."""
    logits = logits_of(y_pred)
    if logits is None:
        logits = _traced_logits(y_pred, _LOGITS_OPS[activation])
    if logits is None:
        return y_pred, from_logits
    if from_logits:
        warnings.warn(
            f'"`{loss}` received `from_logits=True`, but the `output` argument was produced by '
            f"a {activation} activation and thus does not represent logits. Was this intended?",
            stacklevel=3,
        )
    return logits, True


def _traced_logits(y_pred, op):
    """The input of the `op` node that symbolic `y_pred` is the output of, else None."""
    if type(y_pred) is not Tensor or y_pred._value is not None or y_pred._node.op != op:
        return None
    return Tensor(None, y_pred._node.inputs[0])


def _cast(x, dtype):
    x = as_tensor(x)
    return x if x.dtype == as_dtype(dtype) else array_ops.cast(x, dtype)


def _held_exactly(integers, dtype):
    """Whether floating `dtype` holds every value of the integer array `integers` exactly:
    none larger in magnitude than 2 ** (its significand's bits)."""
    if integers.size == 0:
        return True
    largest = 1 << (np.finfo(dtype.as_numpy_dtype).nmant + 1)
    return -largest <= int(integers.min()) and int(integers.max()) <= largest


def _floating(y_pred):
    y_pred = as_tensor(y_pred)
    return y_pred if y_pred.dtype.is_floating else array_ops.cast(y_pred, "float32")


def _as_floating(y_true, y_pred):
    """Both as tensors of y_pred's dtype (float32 when y_pred is not floating)."""
    y_pred = _floating(y_pred)
    y_true = as_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = array_ops.cast(y_true, y_pred.dtype)
    return y_true, y_pred


def _same_rank(x1, x2):
    """Keras's squeeze_or_expand_to_same_rank: where the ranks differ by one and the longer
    one ends in an axis of size 1, that axis is squeezed, except that a rank-1 partner is
    expanded instead."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1:
            x2 = array_ops.expand_dims(x2, -1)
        else:
            x1 = array_ops.squeeze(x1, axis=-1)
    elif x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1:
            x1 = array_ops.expand_dims(x1, -1)
        else:
            x2 = array_ops.squeeze(x2, axis=-1)
    return x1, x2


def _check_same_shape(y_true, y_pred, loss):
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"{loss}: y_true shape {y_true.shape} and y_pred shape {y_pred.shape} must be equal"
        )


def _normalize(x, axis):
    """Keras's L2 normalisation: `x * min(rsqrt(sum(x**2, axis)), 1 / EPSILON)`."""
    inverse_norm = math_ops.rsqrt(reduce_sum(math_ops.square(x), axis, keepdims=True))
    return x * math_ops.minimum(inverse_norm, 1.0 / EPSILON)


def _dimension(size, dtype):
    """A dimension as a number for arithmetic with `dtype` tensors (read when the function
    runs if it is unknown when tracing)."""
    if isinstance(size, dims.Dim):
        return array_ops.dims_value([size], dtype)
    return float(size)


def _snake_case(name):
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


__all__ = [
    "BCE",
    "BinaryFocalCrossentropy",
    "Dice",
    "Tversky",
    "binary_focal_crossentropy",
    "dice",
    "tversky",
    "CosineSimilarity",
    "Huber",
    "KLD",
    "KLDivergence",
    "LogCosh",
    "Poisson",
    "Reduction",
    "cosine_similarity",
    "huber",
    "kl_divergence",
    "kld",
    "log_cosh",
    "poisson",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "Loss",
    "MAE",
    "MSE",
    "MeanAbsoluteError",
    "MeanSquaredError",
    "SparseCategoricalCrossentropy",
    "bce",
    "binary_crossentropy",
    "categorical_crossentropy",
    "get",
    "mae",
    "mean_absolute_error",
    "mean_squared_error",
    "mse",
    "sparse_categorical_crossentropy",
]
