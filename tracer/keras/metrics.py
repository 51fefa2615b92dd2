"""`tt.keras.metrics`: Keras 3's metrics, whose state lives in non-trainable Variables, so that
`update_state` runs eagerly and inside `tt.function` (where the compiled code applies the
assigns), and `result()` reads the state.

>>> m = tt.keras.metrics.SparseCategoricalAccuracy()
>>> float(m([1, 0], [[0.2, 0.8], [0.3, 0.7]]))
0.5
>>> round(float(m([0], [[0.9, 0.1]])), 4)  # a second batch: the state accumulates
0.6667

The semantics are Keras 3's (docs/keras_metrics.md lists the choices):

- most metrics are the weighted mean of a per-sample value, as `Mean` computes it:
  `sample_weight` is squeezed or expanded to the rank of the values, the values are averaged
  over their axes beyond the weight's, the weight is broadcast to them; the metric adds up
  `sum(value * weight)` and `sum(weight)` (the weight averaged over its axes beyond the
  first), and its result is their quotient (0 while nothing was counted); `Sum` sums where
  `Mean` averages;
- Precision, Recall and AUC count every entry of y_pred against y_true != 0 at their
  thresholds (a prediction is positive when above one), a sample's weight on all its entries;
- the IoU metrics sum a confusion matrix of class ids over every entry seen, in the
  metric's dtype (int64 unless given, as Keras's, so float weights are truncated);
- `resolve` turns the identifiers of `Model.compile(metrics=[...])` into metrics, as Keras 3
  does when it first sees a batch, including the names the metrics get in the logs.

Where tracer differs: a metric's default name is its class name in snake case, without the
"_1", "_2" suffixes Keras adds to repeated names of Precision, Recall and user classes;
Precision and Recall take no `top_k`.
"""

import re
import warnings

import numpy as np

from tracer.dtypes import as_dtype
from tracer.keras import backend, initializers, losses
from tracer.keras.losses import _same_rank  # Keras's squeeze_or_expand_to_same_rank
from tracer.keras.naming import keras_named
from tracer.ops import array_ops, index_ops, math_composites, math_ops, reduction_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.confusion_matrix import confusion_matrix
from tracer.ops.convert import as_tensor
from tracer.ops.reduction_ops import reduce_mean
from tracer.variable import Variable

# --- the per-sample metric functions ---------------------------------------------------------


def accuracy(y_true, y_pred):
    """1.0 where y_true equals y_pred (y_true cast to y_pred's dtype), else 0.0.

    >>> tt.keras.metrics.accuracy([1, 2], [1.0, 3.0]).numpy()
    array([1., 0.], dtype=float32)
    """
    y_pred = as_tensor(y_pred)
    y_true, y_pred = _same_rank(_cast(y_true, y_pred.dtype), y_pred)
    return _matches(y_true, y_pred)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where y_true equals (y_pred > threshold), compared in y_true's dtype, else 0.0.

    >>> tt.keras.metrics.binary_accuracy([[1], [0]], [[0.7], [0.6]]).numpy()
    array([[1.],
           [0.]], dtype=float32)
    """
    y_true, y_pred = _same_rank(as_tensor(y_true), _floating(y_pred))
    above = math_ops.greater(y_pred, _cast(threshold, y_pred.dtype))
    return _matches(y_true, array_ops.cast(above, y_true.dtype))


def categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_true) equals argmax(y_pred) over the last axis, else 0.0.

    >>> y_true, y_pred = [[0, 1], [1, 0]], [[0.4, 0.6], [0.3, 0.7]]
    >>> tt.keras.metrics.categorical_accuracy(y_true, y_pred).numpy()
    array([1., 0.], dtype=float32)
    """
    return _matches(index_ops.argmax(y_true, axis=-1), index_ops.argmax(y_pred, axis=-1))


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the class label y_true (int or float, y_pred's shape without its last axis,
    or with a last axis of size 1) equals argmax(y_pred), compared in y_pred's dtype.

    >>> y_pred = [[0.4, 0.6], [0.3, 0.2]]
    >>> tt.keras.metrics.sparse_categorical_accuracy([[1], [1]], y_pred).numpy()
    array([1., 0.], dtype=float32)
    """
    y_pred = _floating(y_pred)
    labels = _labels(y_true, y_pred, y_pred.dtype)
    return _matches(labels, array_ops.cast(index_ops.argmax(y_pred, axis=-1), y_pred.dtype))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the class argmax(y_true) is among the `k` largest entries of y_pred (ties at
    the k-th place count as in, as TensorFlow's in_top_k), else 0.0."""
    return _in_top_k(index_ops.argmax(y_true, axis=-1), _floating(y_pred), k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """top_k_categorical_accuracy for class labels, given as sparse_categorical_accuracy
    takes them.

    >>> y_pred = [[0.1, 0.5, 0.4], [0.1, 0.5, 0.4]]
    >>> tt.keras.metrics.sparse_top_k_categorical_accuracy([2, 0], y_pred, k=2).numpy()
    array([1., 0.], dtype=float32)
    """
    y_pred = _floating(y_pred)
    return _in_top_k(_labels(y_true, y_pred, "int64"), y_pred, k)


# --- the base class and the reductions ------------------------------------------------------


class Metric:
    """Keras's metric base class: state in Variables made by `add_variable` in `__init__`,
    `update_state(...)` to add a batch, `result()` to read, `reset_state()` to start over.
    Calling a metric updates it and returns its result.

    >>> class Count(tt.keras.metrics.Metric):
    ...     def __init__(self, name=None, dtype=None):
    ...         super().__init__(name=name, dtype=dtype)
    ...         self.seen = self.add_variable((), name="seen")
    ...     def update_state(self, values):
    ...         self.seen.assign_add(tt.cast(tt.size(values), self.dtype))
    ...     def result(self):
    ...         return self.seen.value()
    >>> Count(), float(Count()([1, 2, 3]))
    (<Count name=count>, 3.0)
    """

    # Keras's: "up" or "down", the way the metric improves (what callbacks in mode "auto"
    # read, whatever the metric's name); None where it does not say (counts, sums, means)
    _direction = None

    def __init__(self, name=None, dtype=None):
        self.name = name or _snake_case(type(self).__name__)
        self.dtype = as_dtype(backend.floatx() if dtype is None else dtype)
        self._variables = []
        self._initial_values = []

    def add_variable(self, shape, initializer="zeros", dtype=None, name=None):
        """A new non-trainable Variable of the metric's state, set to `initializer`'s value
        (a Keras initializer or its name); `reset_state` sets it back to that value."""
        dtype = self.dtype if dtype is None else as_dtype(dtype)
        value = initializers.get(initializer)(tuple(shape), dtype=dtype).numpy()
        variable = keras_named(
            Variable(value, trainable=False, name=f"{self.name}/{name or 'variable'}")
        )
        self._variables.append(variable)
        self._initial_values.append(value)
        return variable

    def add_weight(self, shape=(), initializer="zeros", dtype=None, name=None):
        """Keras 3's other name for `add_variable` (its guides' metrics call this one)."""
        return self.add_variable(shape, initializer=initializer, dtype=dtype, name=name)

    @property
    def variables(self):
        return list(self._variables)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must define result")

    def reset_state(self):
        for variable, value in zip(self._variables, self._initial_values):
            variable.assign(value)

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Sum(Metric):
    """The weighted sum of all values seen.

    >>> float(tt.keras.metrics.Sum()([1.0, 3.0, 5.0], sample_weight=[1.0, 1.0, 0.0]))
    4.0
    """

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = _per_sample(values, sample_weight, self.dtype, reduce=reduce_sum)
        self.total.assign_add(reduce_sum(values))

    def result(self):
        return self.total.value()


class Mean(Metric):
    """The weighted mean of all values seen: a value of rank > 1 is first averaged over its
    axes beyond the first (and beyond the weight's).

    >>> float(tt.keras.metrics.Mean()([1.0, 3.0, 5.0, 7.0], sample_weight=[1, 1, 0, 0]))
    2.0
    """

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        values, weight = _per_sample(values, sample_weight, self.dtype)
        if weight is None:
            weight = array_ops.ones_like(values)
        self.total.assign_add(reduce_sum(values))
        self.count.assign_add(reduce_sum(weight))

    def result(self):
        return _divide_no_nan(self.total.value(), self.count.value())


class MeanMetricWrapper(Mean):
    """The weighted mean of `fn(y_true, y_pred, **fn_kwargs)`, a value per sample.

    >>> m = tt.keras.metrics.MeanMetricWrapper(tt.keras.losses.mean_absolute_error, name="mae")
    >>> m, float(m([[0.0], [1.0]], [[1.0], [1.0]]))
    (<MeanMetricWrapper name=mae>, 0.5)
    """

    def __init__(self, fn, name=None, dtype=None, **fn_kwargs):
        super().__init__(name=name, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = fn_kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = getattr(y_pred, "_keras_mask", None)  # a recurrent layer's steps to skip
        values = self.fn(y_true, y_pred, **self._fn_kwargs)
        if mask is not None:  # Keras's: the masked values weigh 0
            sample_weight = losses.masked_weights(sample_weight, mask, values.dtype, "sum")
        super().update_state(values, sample_weight)

    def get_config(self):
        return {**super().get_config(), "fn": self.fn, **self._fn_kwargs}


class _BuiltinMeanMetric(MeanMetricWrapper):
    """A MeanMetricWrapper whose function is fixed by the class: its config holds the
    function's arguments, not the function."""

    def get_config(self):
        return {**Metric.get_config(self), **self._fn_kwargs}


# --- accuracy --------------------------------------------------------------------------------


class Accuracy(_BuiltinMeanMetric):
    """How often y_pred equals y_true.

    >>> float(tt.keras.metrics.Accuracy()([[1], [2], [3], [4]], [[1.0], [2.0], [4.0], [4.0]]))
    0.75
    """

    _direction = "up"

    def __init__(self, name=None, dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(_BuiltinMeanMetric):
    """How often (y_pred > threshold) equals the 0/1 label y_true."""

    _direction = "up"

    def __init__(self, name=None, dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class CategoricalAccuracy(_BuiltinMeanMetric):
    """How often argmax(y_pred) is the class of the one-hot y_true."""

    _direction = "up"

    def __init__(self, name=None, dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(_BuiltinMeanMetric):
    """How often argmax(y_pred) is the class label y_true."""

    _direction = "up"

    def __init__(self, name=None, dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(_BuiltinMeanMetric):
    """How often the class of the one-hot y_true is among the `k` largest entries of y_pred."""

    _direction = "up"

    def __init__(self, k=5, name=None, dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(_BuiltinMeanMetric):
    """How often the class label y_true is among the `k` largest entries of y_pred."""

    _direction = "up"

    def __init__(self, k=5, name=None, dtype=None):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


# --- regression and probabilistic metrics: means of the losses -------------------------------


class MeanSquaredError(_BuiltinMeanMetric):
    """The mean of mean_squared_error, the mean over the last axis of square(y_true - y_pred)."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(_BuiltinMeanMetric):
    """The mean of mean_absolute_error, the mean over the last axis of abs(y_true - y_pred)."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """sqrt of the weighted mean of square(y_pred - y_true), every entry counted (not the
    mean of per-sample roots).

    >>> float(tt.keras.metrics.RootMeanSquaredError()([[0.0, 0.0]], [[3.0, 5.0]]))
    4.123105525970459
    """

    _direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _same_rank(_cast(y_true, self.dtype), _cast(y_pred, self.dtype))
        super().update_state(math_ops.square(y_pred - y_true), sample_weight)

    def result(self):
        return math_ops.sqrt(super().result())


class MeanAbsolutePercentageError(_BuiltinMeanMetric):
    """The mean of mean_absolute_percentage_error (tracer/keras/losses.py)."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.mean_absolute_percentage_error, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(_BuiltinMeanMetric):
    """The mean of mean_squared_logarithmic_error."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.mean_squared_logarithmic_error, name=name, dtype=dtype)


class Hinge(_BuiltinMeanMetric):
    """The mean of hinge (labels of 0 and 1 taken as -1 and 1)."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.hinge, name=name, dtype=dtype)


class SquaredHinge(_BuiltinMeanMetric):
    """The mean of squared_hinge."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(_BuiltinMeanMetric):
    """The mean of categorical_hinge."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.categorical_hinge, name=name, dtype=dtype)


class LogCoshError(_BuiltinMeanMetric):
    """The mean of log_cosh, logged as "logcosh" (Keras's name)."""

    _direction = "down"

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(losses.log_cosh, name=name, dtype=dtype)


class KLDivergence(_BuiltinMeanMetric):
    """The mean of kl_divergence."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.kl_divergence, name=name, dtype=dtype)


class Poisson(_BuiltinMeanMetric):
    """The mean of poisson."""

    _direction = "down"

    def __init__(self, name=None, dtype=None):
        super().__init__(losses.poisson, name=name, dtype=dtype)


class CosineSimilarity(_BuiltinMeanMetric):
    """The mean cosine similarity of y_true and y_pred along `axis`: 1 where they point the
    same way (the loss of that name is its negative)."""

    _direction = "up"

    def __init__(self, name=None, dtype=None, axis=-1):
        super().__init__(_cosine_similarity, name=name, dtype=dtype, axis=axis)
        self.axis = axis


def _cosine_similarity(y_true, y_pred, axis=-1):
    return math_ops.negative(losses.cosine_similarity(y_true, y_pred, axis=axis))


class BinaryCrossentropy(_BuiltinMeanMetric):
    """The mean of binary_crossentropy (tracer/keras/losses.py), y_true and y_pred first
    brought to the same rank."""

    _direction = "down"

    def __init__(self, name=None, dtype=None, from_logits=False, label_smoothing=0):
        super().__init__(
            _same_rank_first(losses.binary_crossentropy),
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )
        self.from_logits, self.label_smoothing = from_logits, label_smoothing


class CategoricalCrossentropy(_BuiltinMeanMetric):
    """The mean of categorical_crossentropy, for one-hot (or soft) labels."""

    _direction = "down"

    def __init__(self, name=None, dtype=None, from_logits=False, label_smoothing=0, axis=-1):
        super().__init__(
            losses.categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


class SparseCategoricalCrossentropy(_BuiltinMeanMetric):
    """The mean of sparse_categorical_crossentropy, for class labels. The entries labelled
    `ignore_class` count as 0 in it, as Keras's metric counts them (unlike the loss, which
    leaves them out of its mean)."""

    _direction = "down"

    def __init__(self, name=None, dtype=None, from_logits=False, ignore_class=None, axis=-1):
        super().__init__(
            losses.sparse_categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            ignore_class=ignore_class,
            axis=axis,
        )
        self.from_logits, self.ignore_class, self.axis = from_logits, ignore_class, axis


# --- confusion-matrix metrics ---------------------------------------------------------------


class _ConfusionMetric(Metric):
    """Weighted counts, per threshold, of the entries of y_pred above it (predicted positive)
    against y_true != 0 (actually positive), every entry of the batch counted; a weight per
    sample covers all entries of its sample. `class_id` restricts y_true and y_pred to that
    index of their last axis. Subclasses name the counts they keep in COUNTS.

    Where the thresholds (`evenly_spread`: those Keras tests, AUC's with 0 and 1) are spread
    evenly over [0, 1], predictions are clipped to [0, 1] first, as Keras counts them then
    (by buckets of the clipped values): a logit of 2 is not above AUC's last threshold."""

    # the counts a subclass keeps, by (actually positive, predicted positive)
    COUNTS = {}

    def __init__(self, thresholds, class_id=None, name=None, dtype=None, evenly_spread=None):
        super().__init__(name=name, dtype=dtype)
        self.thresholds = thresholds
        self.class_id = class_id
        self._clips = _evenly_spread(thresholds if evenly_spread is None else evenly_spread)
        for count in self.COUNTS.values():
            setattr(self, count, self.add_variable((len(thresholds),), name=count))

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred, y_true = _same_rank(_cast(y_pred, self.dtype), _cast(y_true, self.dtype))
        weight = None if sample_weight is None else self._weight(sample_weight, y_true)
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id, None], y_pred[..., self.class_id, None]
        weight = array_ops.ones_like(y_pred) * (1.0 if weight is None else weight)
        if self._clips:
            y_pred = math_ops.clip_by_value(y_pred, 0.0, 1.0)
        # (thresholds, entries) tables: whether each entry is above each threshold
        thresholds = array_ops.reshape(_cast(self.thresholds, self.dtype), (-1, 1))
        above = math_ops.greater(array_ops.reshape(y_pred, (1, -1)), thresholds)
        positive = math_ops.not_equal(array_ops.reshape(y_true, (1, -1)), _cast(0, self.dtype))
        weight = array_ops.reshape(weight, (1, -1))
        for (actual, predicted), count in self.COUNTS.items():
            hit = math_ops.logical_and(_is(positive, actual), _is(above, predicted))
            getattr(self, count).assign_add(reduce_sum(array_ops.cast(hit, self.dtype) * weight, 1))

    def _weight(self, sample_weight, y_true):
        """Keras's confusion-matrix weights: a weight per sample gets an axis of size 1, so it
        covers all entries of its sample; one of y_true's full shape keeps it."""
        weight = array_ops.expand_dims(_cast(sample_weight, self.dtype), -1)
        if weight.ndim == y_true.ndim + 1:
            weight = array_ops.squeeze(weight, axis=-1)
        return weight


def _evenly_spread(thresholds):
    """Whether `thresholds` are k / (n - 1) for k = 0 .. n - 1, n at least 3 (to Keras's
    epsilon), as Keras tests them."""
    n = len(thresholds)
    if n < 3:
        return False
    return np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1), atol=losses.EPSILON)


class _ThresholdRatio(_ConfusionMetric):
    """count / (count + other count) at each threshold: `thresholds` is one number in [0, 1]
    or a list of them (a result per threshold, a scalar for just one); None means 0.5."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        if top_k is not None:
            raise NotImplementedError(f"{type(self).__name__}: tracer does not support top_k")
        listed = [0.5] if thresholds is None else np.atleast_1d(thresholds).tolist()
        if any(not 0.0 <= t <= 1.0 for t in listed):
            raise ValueError(
                f"{type(self).__name__}: thresholds must lie in [0, 1], not {thresholds!r}"
            )
        super().__init__(listed, class_id=class_id, name=name, dtype=dtype)
        self.init_thresholds = thresholds

    def _ratio(self, count, other):
        ratio = _divide_no_nan(count.value(), count.value() + other.value())
        return ratio[0] if len(self.thresholds) == 1 else ratio

    def get_config(self):
        return {
            **super().get_config(),
            "thresholds": self.init_thresholds,
            "top_k": None,
            "class_id": self.class_id,
        }


class Precision(_ThresholdRatio):
    """true_positives / (true_positives + false_positives), 0 while none is predicted.

    >>> float(tt.keras.metrics.Precision()([0, 1, 1, 1], [0.6, 0.2, 0.7, 0.9]))  # 2 of 3
    0.6666666865348816
    """

    _direction = "up"

    COUNTS = {(True, True): "true_positives", (False, True): "false_positives"}

    def result(self):
        return self._ratio(self.true_positives, self.false_positives)


class _Count(_ThresholdRatio):
    """The weighted count of one kind of prediction at each threshold (a scalar for one)."""

    def __init__(self, thresholds=None, name=None, dtype=None):  # Keras's: no class_id
        super().__init__(thresholds, name=name, dtype=dtype)

    def get_config(self):
        return {**Metric.get_config(self), "thresholds": self.init_thresholds}

    def result(self):
        (count,) = (getattr(self, name) for name in self.COUNTS.values())
        return count.value()[0] if len(self.thresholds) == 1 else count.value()


class TruePositives(_Count):
    """Entries above the threshold whose label is positive."""

    COUNTS = {(True, True): "accumulator"}


class FalsePositives(_Count):
    """Entries above the threshold whose label is not."""

    COUNTS = {(False, True): "accumulator"}


class TrueNegatives(_Count):
    """Entries at or below the threshold whose label is not positive."""

    COUNTS = {(False, False): "accumulator"}


class FalseNegatives(_Count):
    """Entries at or below the threshold whose label is positive."""

    COUNTS = {(True, False): "accumulator"}


class Recall(_ThresholdRatio):
    """true_positives / (true_positives + false_negatives), 0 while no label is positive.

    >>> float(tt.keras.metrics.Recall()([0, 1, 1, 1], [0.6, 0.2, 0.7, 0.9]))  # 2 of 3
    0.6666666865348816
    """

    _direction = "up"

    COUNTS = {(True, True): "true_positives", (True, False): "false_negatives"}

    def result(self):
        return self._ratio(self.true_positives, self.false_negatives)


class AUC(_ConfusionMetric):
    """The area under the ROC curve (false positive rate, recall) or the PR curve (recall,
    precision), a Riemann sum over the confusion counts at `num_thresholds` thresholds
    spread evenly over [0, 1] (or at `thresholds`, plus 0 and 1). `summation_method`
    "interpolation" takes trapezoids (for PR, Davis and Goadrich's interpolation of
    precision), "minoring" and "majoring" the lower and upper rectangles. With `from_logits`,
    y_pred goes through a sigmoid first. Keras's `multi_label`, `num_labels` and
    `label_weights` are taken at their defaults only, and the "PRGAIN" curve not at all.

    >>> float(tt.keras.metrics.AUC(num_thresholds=3)([0, 0, 1, 1], [0.0, 0.5, 0.3, 0.9]))
    0.75
    """

    _direction = "up"

    COUNTS = {
        (True, True): "true_positives",
        (False, True): "false_positives",
        (False, False): "true_negatives",
        (True, False): "false_negatives",
    }
    CURVES = ("ROC", "PR")
    SUMMATION_METHODS = ("interpolation", "minoring", "majoring")

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        if multi_label or num_labels is not None or label_weights is not None:
            raise NotImplementedError(
                "AUC: tracer does not support multi_label, num_labels or label_weights"
            )
        if curve.upper() not in self.CURVES:
            raise ValueError(f"AUC: curve must be one of {self.CURVES}, not {curve!r}")
        if summation_method.lower() not in self.SUMMATION_METHODS:
            raise ValueError(
                f"AUC: summation_method must be one of {self.SUMMATION_METHODS}, "
                f"not {summation_method!r}"
            )
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        elif num_thresholds > 1:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:
            raise ValueError(f"AUC: num_thresholds must be an integer > 1, not {num_thresholds}")
        # NOTE: the end points lie just outside [0, 1], so predictions of exactly 0 and 1
        # fall inside the curve's range (Keras's epsilon)
        edges = [-losses.EPSILON, *inner, 1.0 + losses.EPSILON]
        super().__init__(edges, name=name, dtype=dtype, evenly_spread=[0.0, *inner, 1.0])
        self.num_thresholds = len(inner) + 2
        self.curve, self.summation_method = curve.upper(), summation_method.lower()
        self.init_thresholds, self.from_logits = thresholds, from_logits

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.from_logits:
            y_pred = math_ops.sigmoid(_floating(y_pred))
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        tp, fp, tn, fn = (getattr(self, count).value() for count in self.COUNTS.values())
        if self.curve == "PR" and self.summation_method == "interpolation":
            return _interpolated_pr_auc(tp, fp, fn)
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _divide_no_nan(tp, tp + fp)
        heights = {
            "interpolation": lambda a, b: (a + b) / 2.0,
            "minoring": math_ops.minimum,
            "majoring": math_ops.maximum,
        }[self.summation_method](y[:-1], y[1:])
        return reduce_sum((x[:-1] - x[1:]) * heights)

    def get_config(self):
        """Keras's: the thresholds only where they were given (as the sorted inner ones)."""
        config = {
            **Metric.get_config(self),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": False,
            "num_labels": None,
            "label_weights": None,
            "from_logits": self.from_logits,
        }
        if self.init_thresholds is not None:
            config["thresholds"] = self.thresholds[1:-1]
        return config


class R2Score(Metric):
    """The coefficient of determination of each output column over every sample seen,
    1 - sum((y_true - y_pred)^2) / sum((y_true - mean)^2) (0 where a column does not vary),
    averaged over the columns ("uniform_average"), weighted by their variance
    ("variance_weighted_average") or kept (None); adjusted for `num_regressors` where there
    are enough samples, as Keras's."""

    _direction = "up"

    AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):  # fmt: skip
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in self.AGGREGATIONS:
            raise ValueError(
                f"R2Score: class_aggregation must be one of {self.AGGREGATIONS}, not "
                f"{class_aggregation!r}"
            )
        if num_regressors < 0:
            raise ValueError(f"R2Score: num_regressors must be at least 0, not {num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, int(num_regressors)
        self.num_samples = self.add_variable((), dtype="int32", name="num_samples")
        self._sums = None  # (sum, squared_sum, total_mse, count), made at the first batch

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _cast(y_true, self.dtype), _cast(y_pred, self.dtype)
        if y_true.ndim == 1:
            y_true, y_pred = array_ops.expand_dims(y_true, -1), array_ops.expand_dims(y_pred, -1)
        if self._sums is None:
            self._sums = tuple(
                self.add_variable((y_true.shape[-1],), name=name)
                for name in ("sum", "squared_sum", "total_mse", "count")
            )
        weight = array_ops.ones_like(y_true)
        if sample_weight is not None:
            given = _cast(sample_weight, self.dtype)
            weight = weight * (array_ops.expand_dims(given, -1) if given.ndim == 1 else given)
        total, squares, errors, count = self._sums
        total.assign_add(reduce_sum(y_true * weight, 0))
        squares.assign_add(reduce_sum(y_true * y_true * weight, 0))
        errors.assign_add(reduce_sum(math_ops.square(y_true - y_pred) * weight, 0))
        count.assign_add(reduce_sum(weight, 0))
        # Keras counts every entry as a sample in the adjustment for num_regressors
        self.num_samples.assign_add(array_ops.size(y_true))

    def result(self):
        if self._sums is None:
            return _cast(0.0, self.dtype)
        total, squares, errors, count = (v.value() for v in self._sums)
        variation = squares - total * (total / count)
        scores = 1.0 - errors / variation
        scores = math_ops.where(math_composites.is_inf(scores), _cast(0.0, self.dtype), scores)
        if self.class_aggregation == "uniform_average":
            score = reduce_mean(scores)
        elif self.class_aggregation == "variance_weighted_average":
            score = reduce_sum(scores * variation) / reduce_sum(variation)
        else:
            score = scores
        if not self.num_regressors:
            return score
        n, p = _cast(self.num_samples.value(), self.dtype), float(self.num_regressors)
        enough = math_ops.less(p, n - 1.0)  # else Keras warns and leaves the score
        adjusted = 1.0 - (1.0 - score) * ((n - 1.0) / math_ops.maximum(n - p - 1.0, 1.0))
        return math_ops.where(enough, adjusted, score)

    def get_config(self):
        return {
            **super().get_config(),
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }


class FBetaScore(Metric):
    """The F-beta score of each class, (1 + beta^2) precision recall / (beta^2 precision +
    recall), over every sample seen: y_pred is positive above `threshold`, or, without one,
    where it is its row's largest (and not 0). `average` None keeps a score per class,
    "micro" counts every entry together, "macro" averages the classes' scores and
    "weighted" weighs them by their positive labels, as Keras's."""

    _direction = "up"

    AVERAGES = (None, "micro", "macro", "weighted")

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in self.AVERAGES:
            raise ValueError(
                f"{type(self).__name__}: average must be one of {self.AVERAGES}, not {average!r}"
            )
        if beta <= 0:
            raise ValueError(f"{type(self).__name__}: beta must be positive, not {beta}")
        if threshold is not None and not 0 < threshold <= 1:
            raise ValueError(f"{type(self).__name__}: threshold must be in (0, 1], not {threshold}")
        self.average, self.beta, self.threshold = average, float(beta), threshold
        self._counts = None  # (true positives, false positives, false negatives, support)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _cast(y_true, self.dtype), _cast(y_pred, self.dtype)
        if self._counts is None:
            shape = () if self.average == "micro" else (y_pred.shape[-1],)
            self._counts = tuple(
                self.add_variable(shape, name=name)
                for name in ("true_positives", "false_positives", "false_negatives", "support")
            )
        if self.threshold is None:
            largest = reduction_ops.reduce_max(y_pred, axis=-1, keepdims=True)
            chosen = math_ops.logical_and(
                math_ops.greater_equal(y_pred, largest),
                math_ops.greater(math_ops.abs(y_pred), 1e-9),
            )
        else:
            chosen = math_ops.greater(y_pred, self.threshold)
        predicted = _cast(chosen, self.dtype)
        axis = None if self.average == "micro" else 0

        def weighted_sum(values):
            if sample_weight is not None:
                values = values * array_ops.expand_dims(_cast(sample_weight, self.dtype), 1)
            return reduce_sum(values, axis=axis)

        tp, fp, fn, support = self._counts
        tp.assign_add(weighted_sum(predicted * y_true))
        fp.assign_add(weighted_sum(predicted * (1.0 - y_true)))
        fn.assign_add(weighted_sum((1.0 - predicted) * y_true))
        support.assign_add(weighted_sum(y_true))

    def result(self):
        if self._counts is None:
            return _cast(0.0, self.dtype)
        tp, fp, fn, support = (v.value() for v in self._counts)
        precision = tp / (tp + fp + losses.EPSILON)
        recall = tp / (tp + fn + losses.EPSILON)
        squared = self.beta**2
        score = (
            precision * recall / (squared * precision + recall + losses.EPSILON) * (1.0 + squared)
        )
        if self.average == "weighted":
            return reduce_sum(score * support / reduce_sum(support))
        return reduce_mean(score) if self.average is not None else score

    def get_config(self):
        return {
            **super().get_config(),
            "average": self.average,
            "beta": self.beta,
            "threshold": self.threshold,
        }


class F1Score(FBetaScore):
    """FBetaScore with beta 1: the harmonic mean of precision and recall."""

    _direction = "up"

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


# --- intersection over union -----------------------------------------------------------------


class IoU(Metric):
    """The mean, over the classes `target_class_ids`, of each class's intersection over
    union tp / (tp + fp + fn), read from a [num_classes, num_classes] confusion matrix of
    every entry seen (rows the labels, columns the predictions, each pair counted with its
    `sample_weight`). Labels and predictions are class ids, or, where `sparse_y_true` or
    `sparse_y_pred` is False, scores whose argmax over `axis` is the id. Pairs with an id
    outside [0, num_classes), or labelled `ignore_class`, are not counted; a class found in
    neither is left out of the mean.

    As Keras's, the matrix has the metric's dtype, int64 unless given, so float weights
    are truncated to integers (with a warning); the result is float32, and, as Keras adds
    EPSILON to the divisors, a perfect score is just under 1 (0.9999999).

    >>> m = tt.keras.metrics.IoU(num_classes=2, target_class_ids=[0])
    >>> round(float(m([0, 0, 1, 1], [0, 1, 0, 1])), 6)  # class 0: 1 of 3 in the union
    0.333333
    """

    _direction = "up"

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(name=name, dtype=dtype or "int64")
        if max(target_class_ids) >= num_classes:
            raise ValueError(
                f"{type(self).__name__}: target class id {max(target_class_ids)} is out of "
                f"range [0, {num_classes})"
            )
        self.num_classes, self.target_class_ids = num_classes, list(target_class_ids)
        self.ignore_class, self.axis = ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.total_cm = self.add_variable((num_classes, num_classes), name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.sparse_y_true:
            y_true = index_ops.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = index_ops.argmax(y_pred, axis=self.axis)
        y_true = array_ops.reshape(_cast(y_true, self.dtype), [-1])
        y_pred = array_ops.reshape(_cast(y_pred, self.dtype), [-1])
        weight = array_ops.ones_like(y_true)
        if sample_weight is not None:
            given = as_tensor(sample_weight)
            if given.dtype.is_floating and self.dtype.is_integer:
                warnings.warn(
                    f"{type(self).__name__}: float sample weights are truncated to the "
                    f"metric's dtype {self.dtype.name}; give integer weights, or a float dtype",
                    stacklevel=2,
                )
            weight = array_ops.reshape(_cast(given, self.dtype), [-1]) * weight
        counted = math_ops.logical_and(self._known(y_true), self._known(y_pred))
        if self.ignore_class is not None:
            ignored = _cast(self.ignore_class, self.dtype)
            counted = math_ops.logical_and(counted, math_ops.not_equal(y_true, ignored))

        def kept(x):  # the pairs not counted go to (0, 0) with weight 0
            return math_ops.where(counted, x, array_ops.zeros_like(x))

        matrix = confusion_matrix(
            _cast(kept(y_true), "int64"),
            _cast(kept(y_pred), "int64"),
            self.num_classes,
            weights=kept(weight),
            dtype=self.dtype,
        )
        self.total_cm.assign_add(matrix)

    def _known(self, ids):
        return math_ops.logical_and(
            math_ops.greater_equal(ids, _cast(0, ids.dtype)),
            math_ops.less(ids, _cast(self.num_classes, ids.dtype)),
        )

    def result(self):
        matrix = self.total_cm.value()
        diagonal = [i * (self.num_classes + 1) for i in self.target_class_ids]

        def picked(x):
            return index_ops.gather(x, self.target_class_ids)

        intersection = index_ops.gather(array_ops.reshape(matrix, [-1]), diagonal)
        # a class's predictions plus its labels count the intersection twice
        union = picked(reduce_sum(matrix, 0)) + picked(reduce_sum(matrix, 1)) - intersection
        intersection, union = _cast(intersection, "float32"), _cast(union, "float32")
        present = math_ops.greater(union, 1e-9)
        iou = math_ops.where(present, intersection / (union + losses.EPSILON), 0.0)
        return reduce_sum(iou) / (reduce_sum(_cast(present, "float32")) + losses.EPSILON)

    def get_config(self):
        return {
            **super().get_config(),
            "num_classes": self.num_classes,
            "target_class_ids": self.target_class_ids,
            "ignore_class": self.ignore_class,
            "sparse_y_true": self.sparse_y_true,
            "sparse_y_pred": self.sparse_y_pred,
            "axis": self.axis,
        }


class MeanIoU(IoU):
    """IoU averaged over all `num_classes` classes (those found in the labels or the
    predictions).

    >>> m = tt.keras.metrics.MeanIoU(num_classes=2)
    >>> round(float(m([0, 0, 1, 1], [0, 1, 0, 1])), 6)  # (1/3 + 1/3) / 2
    0.333333
    """

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            list(range(num_classes)),
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=sparse_y_true,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        config = super().get_config()
        del config["target_class_ids"]
        return config


class BinaryIoU(IoU):
    """IoU of the classes 0 and 1 (or one of them, by `target_class_ids`), where a
    prediction is class 1 at or above `threshold`."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(2, target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        above = math_ops.greater_equal(_cast(y_pred, "float32"), self.threshold)
        super().update_state(y_true, _cast(above, self.dtype), sample_weight)

    def get_config(self):
        return {
            "target_class_ids": self.target_class_ids,
            "threshold": self.threshold,
            **Metric.get_config(self),
        }


class OneHotIoU(IoU):
    """IoU for one-hot labels: the class is the argmax of y_true (and of y_pred unless
    `sparse_y_pred`) over `axis`."""

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            target_class_ids,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """MeanIoU for one-hot labels, read as OneHotIoU reads them."""

    def __init__(
        self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1
    ):
        super().__init__(
            num_classes,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


def _interpolated_pr_auc(tp, fp, fn):
    """The area under the PR curve with precision interpolated between thresholds as Davis
    and Goadrich (2006) do: along each step, precision is tp / p with tp linear in the
    number of predicted positives p, which integrates to a logarithm."""
    dtp = tp[:-1] - tp[1:]
    p = tp + fp
    slope = _divide_no_nan(dtp, math_ops.maximum(p[:-1] - p[1:], 0.0))
    intercept = tp[1:] - slope * p[1:]
    both_positive = math_ops.logical_and(
        math_ops.greater(p[:-1], 0.0), math_ops.greater(p[1:], 0.0)
    )
    ratio = math_ops.where(
        both_positive,
        _divide_no_nan(p[:-1], math_ops.maximum(p[1:], 0.0)),
        array_ops.ones_like(p[1:]),
    )
    increments = _divide_no_nan(
        slope * (dtp + intercept * math_ops.log(ratio)), math_ops.maximum(tp[1:] + fn[1:], 0.0)
    )
    return reduce_sum(increments)


# --- get and resolve -------------------------------------------------------------------------

_CLASSES = (
    Mean,
    Sum,
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    MeanSquaredError,
    MeanAbsoluteError,
    RootMeanSquaredError,
    BinaryCrossentropy,
    CategoricalCrossentropy,
    SparseCategoricalCrossentropy,
    Precision,
    Recall,
    AUC,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    LogCoshError,
    KLDivergence,
    Poisson,
    CosineSimilarity,
    TruePositives,
    FalsePositives,
    TrueNegatives,
    FalseNegatives,
    R2Score,
    FBetaScore,
    F1Score,
    IoU,
    MeanIoU,
    BinaryIoU,
    OneHotIoU,
    OneHotMeanIoU,
)


def _snake_case(name):
    """Keras's to_snake_case: "TopKCategoricalAccuracy" -> "top_k_categorical_accuracy",
    "AUC" -> "auc"."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


# Keras 3's names: each class by its name and in snake case, and the short aliases
_BY_NAME = {
    **{cls.__name__: cls for cls in _CLASSES},
    **{_snake_case(cls.__name__): cls for cls in _CLASSES},
    **{"bce": BinaryCrossentropy, "BCE": BinaryCrossentropy},
    **{"mse": MeanSquaredError, "MSE": MeanSquaredError},
    **{"mae": MeanAbsoluteError, "MAE": MeanAbsoluteError},
    **{"mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError},
    **{"msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError},
}

# the names `Model.compile(metrics=...)` resolves from the shapes of the first batch
_ACCURACY_NAMES = ("accuracy", "acc")


def get(identifier):
    """A Metric for `identifier`: a Metric (returned as is), a Keras 3 name (a class name, in
    CamelCase or snake case, or one of "mse", "mae", "bce" and their capitals: a new
    instance with default arguments), a config dict ({"class_name": ..., "config": {...}}),
    a Metric class (instantiated) or a function fn(y_true, y_pred) (wrapped in a
    MeanMetricWrapper named after it); None gives None.

    >>> tt.keras.metrics.get("mse")
    <MeanSquaredError name=mean_squared_error>
    """
    if identifier is None or isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _BY_NAME:
        return _BY_NAME[identifier["class_name"]].from_config(identifier.get("config", {}))
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier) and not isinstance(identifier, type):
        return MeanMetricWrapper(identifier, name=_object_name(identifier))
    hint = ""
    if isinstance(identifier, str) and identifier.lower() in _ACCURACY_NAMES:
        hint = " (Model.compile resolves it from the shapes of a batch: metrics.resolve)"
    names = ", ".join(repr(name) for name in _BY_NAME)
    raise ValueError(
        f"unknown metric {identifier!r}{hint}; use a Metric, a function, None or one of {names}"
    )


def resolve(identifier, y_true, y_pred, loss=None):
    """The metric `Model.compile(metrics=[identifier])` makes in Keras 3 when it first sees a
    batch (y_true, y_pred; tensors or arrays, only their shapes are read), named as its
    results are logged.

    "accuracy" and "acc" (any case) become BinaryAccuracy when y_pred's last axis has size
    1, else SparseCategoricalAccuracy when y_true has a lower rank than y_pred or a last axis
    of size 1, else CategoricalAccuracy. Other identifiers go through `get`. A string names
    the metric as written ("mse" logs "mse", not "mean_squared_error"); a Metric keeps its
    name; a function is named after it in snake case. Keras 3 looks at neither the loss (the
    `loss` argument is accepted for the callers of Keras 2's rule) nor "crossentropy"/"ce",
    which are names of losses only, not metrics.

    >>> tt.keras.metrics.resolve("acc", tt.constant([1, 0]), tt.zeros((2, 10)))
    <SparseCategoricalAccuracy name=acc>
    """
    if identifier is None:
        raise ValueError("a metric of Model.compile must not be None")
    if isinstance(identifier, str) and identifier.lower() in _ACCURACY_NAMES:
        return _accuracy_for(np.shape(y_true), np.shape(y_pred))(name=identifier)
    metric = get(identifier)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def _accuracy_for(true_shape, pred_shape):
    """Keras 3's choice of accuracy for a batch of these shapes."""
    true_last = true_shape[-1] if len(true_shape) else None
    pred_last = pred_shape[-1] if len(pred_shape) else None
    if pred_last == 1:
        return BinaryAccuracy
    if len(true_shape) < len(pred_shape) or (true_last == 1 and _exceeds_one(pred_last)):
        return SparseCategoricalAccuracy
    return CategoricalAccuracy


def _exceeds_one(size):
    return isinstance(size, (int, np.integer)) and size > 1


def _object_name(fn):
    """Keras's name for a metric object that is not a string: its `name`, else its function
    or class name in snake case."""
    if isinstance(getattr(fn, "name", None), str):
        return fn.name
    return _snake_case(getattr(fn, "__name__", type(fn).__name__))


# --- helpers ---------------------------------------------------------------------------------


def _per_sample(values, sample_weight, dtype, reduce=reduce_mean):
    """`values` (cast to `dtype`) reduced by `reduce` (a mean, or for Sum a sum) to one value
    per sample, times their weights, and those weights (None without `sample_weight`):
    Keras's rule, in the module docstring."""
    values = _cast(values, dtype)
    weight = None
    if sample_weight is not None:
        values, weight = _same_rank(values, _cast(sample_weight, dtype))
        if values.ndim < weight.ndim:
            raise ValueError(
                f"sample_weight of shape {weight.shape} has more axes than the values of shape "
                f"{values.shape} it weights"
            )
        if values.ndim > weight.ndim:
            values = reduce(values, axis=list(range(weight.ndim, values.ndim)))
        values = values * weight
        weight = weight * array_ops.ones_like(values)  # broadcast, so each value counts
        if weight.ndim > 1:
            weight = reduce(weight, axis=list(range(1, weight.ndim)))
    if values.ndim > 1:
        values = reduce(values, axis=list(range(1, values.ndim)))
    return values, weight


def _divide_no_nan(x, y):
    """x / y, and 0 where y is 0."""
    zero = math_ops.equal(y, _cast(0, y.dtype))
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    return math_ops.where(zero, array_ops.zeros_like(x), x / safe)


def _cast(x, dtype):
    x = as_tensor(x)
    return x if x.dtype == as_dtype(dtype) else array_ops.cast(x, dtype)


def _floating(x):
    x = as_tensor(x)
    return x if x.dtype.is_floating else array_ops.cast(x, "float32")


def _matches(x, y):
    return array_ops.cast(math_ops.equal(x, y), "float32")


def _is(condition, wanted):
    return condition if wanted else math_ops.logical_not(condition)


def _labels(y_true, y_pred, dtype):
    """Class labels of `dtype` with y_pred's shape less its class axis: a last axis of size
    1 of the same rank as y_pred is squeezed."""
    labels = as_tensor(y_true)
    if labels.ndim == y_pred.ndim and labels.ndim and labels.shape[-1] == 1:
        labels = array_ops.squeeze(labels, axis=-1)
    return _cast(labels, dtype)


def _in_top_k(labels, y_pred, k):
    """Whether y_pred[..., label] is among the k largest of its row: fewer than k entries of
    the row exceed it."""
    classes = array_ops.range_(y_pred.shape[-1], dtype=labels.dtype)
    is_label = math_ops.equal(array_ops.expand_dims(labels, -1), classes)
    target = reduce_sum(math_ops.where(is_label, y_pred, array_ops.zeros_like(y_pred)), -1)
    above = math_ops.greater(y_pred, array_ops.expand_dims(target, -1))
    return array_ops.cast(
        math_ops.less(reduce_sum(array_ops.cast(above, "int32"), -1), k), "float32"
    )


def _same_rank_first(fn):
    """`fn` called with y_true and y_pred brought to the same rank first."""

    def call(y_true, y_pred, **kwargs):
        return fn(*_same_rank(as_tensor(y_true), as_tensor(y_pred)), **kwargs)

    call.__name__ = fn.__name__
    return call


__all__ = [
    "AUC",
    "Accuracy",
    "BinaryAccuracy",
    "BinaryIoU",
    "BinaryCrossentropy",
    "CategoricalAccuracy",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "F1Score",
    "FBetaScore",
    "FalseNegatives",
    "FalsePositives",
    "Hinge",
    "IoU",
    "KLDivergence",
    "LogCoshError",
    "Mean",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanIoU",
    "MeanMetricWrapper",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Metric",
    "OneHotIoU",
    "OneHotMeanIoU",
    "Poisson",
    "Precision",
    "R2Score",
    "Recall",
    "RootMeanSquaredError",
    "SparseCategoricalAccuracy",
    "SparseCategoricalCrossentropy",
    "SparseTopKCategoricalAccuracy",
    "SquaredHinge",
    "Sum",
    "TopKCategoricalAccuracy",
    "TrueNegatives",
    "TruePositives",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "get",
    "resolve",
    "sparse_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "top_k_categorical_accuracy",
]
