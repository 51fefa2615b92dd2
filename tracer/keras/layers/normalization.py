"""Keras's normalization layers: BatchNormalization and LayerNormalization.

Both compute as Keras 3 does, so that their outputs agree with Keras's to float32 rounding:
the variance is the mean of squared deviations from the mean (two passes, biased), and the
output is `inputs * inv + (beta - mean * inv)` with `inv = gamma / sqrt(variance + epsilon)`.
float16 inputs are normalized in float32 (their sums overflow or round badly) and the output
cast to the layer's compute dtype; under a mixed policy (`"mixed_float16"`) the weights
stay float32 (`autocast=False`, as Keras's), and Layer and Group normalization take their
inputs as they come (Keras's `autocast = False` layers).
"""

import warnings

from tracer.dtypes import float32, float64
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, math_ops
from tracer.ops.array_ops import cast, reshape
from tracer.ops.broadcast_ops import broadcast_to, reduce_sum
from tracer.ops.reduction_ops import reduce_mean
from tracer.ops.structure_ops import concat


class BatchNormalization(Layer):
    """Normalizes each feature along `axis` by the statistics of the batch while training and
    by moving averages of them otherwise.

    With `training=True` (and the layer trainable, as Keras 3 asks) the mean and biased
    variance are taken over every axis but `axis`, and the moving statistics move towards
    them: `moving = moving * momentum + batch * (1 - momentum)`. Inside `tt.function` these
    updates are writes of the compiled function. Weights, in Keras's order: gamma and beta
    (trainable, when `scale` and `center`), moving_mean and moving_variance (not trainable).
    """

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.axis = _single_axis(axis)
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        self._axes = _axes([self.axis], len(input_shape))
        size = _sizes(input_shape, self._axes, type(self).__name__)
        self.gamma, self.beta = _scale_and_offset(self, size)
        self.moving_mean = self.add_weight(
            "moving_mean",
            size,
            initializer=self.moving_mean_initializer,
            trainable=False,
            autocast=False,
        )
        self.moving_variance = self.add_weight(
            "moving_variance",
            size,
            initializer=self.moving_variance_initializer,
            trainable=False,
            autocast=False,
        )
        self.built = True

    def call(self, inputs, training=None, mask=None):
        ndim = len(inputs.shape)
        if mask is not None and len(mask.shape) != ndim - 1:
            raise ValueError(
                f"BatchNormalization: the mask must have one axis fewer than the inputs, got a "
                f"mask of shape {tuple(mask.shape)} for inputs of shape {tuple(inputs.shape)}"
            )
        # as Keras 3: float16 and bfloat16 inputs are normalized in float32 (their sums
        # overflow or round badly), float64 in float64; the output is in the compute dtype
        compute = _normalizing_dtype(inputs)
        inputs = _cast(inputs, compute)
        if training and self.trainable:
            reduced = [a for a in range(ndim) if a not in self._axes]
            if mask is None:
                mean, variance = _moments(inputs, reduced)
            else:
                mean, variance = _masked_moments(inputs, mask, reduced)
            self._update_moving_statistics(mean, variance, compute)
        else:
            mean = _broadcastable(_cast(self.moving_mean, compute), self._axes, ndim)
            variance = _broadcastable(_cast(self.moving_variance, compute), self._axes, ndim)
        return _cast(_normalize(inputs, mean, variance, self, ndim, compute), self._compute_dtype)

    def _update_moving_statistics(self, mean, variance, compute):
        """Move the moving statistics towards the batch's, as Keras 3 does (in `compute`)."""
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            batch = reshape(batch, tuple(moving.shape))
            moved = _cast(moving, compute) * self.momentum + batch * (1.0 - self.momentum)
            moving.assign(_cast(moved, moving.dtype))


class LayerNormalization(Layer):
    """Normalizes each example by the mean and biased variance of its values along `axis`
    (an int or a list of ints), then scales by gamma and shifts by beta, weights of the
    normalized axes' shape. It acts the same in training and inference.

    With `rms_scaling` (which Keras 3 deprecates but computes) the output is
    `inputs * rsqrt(variance + epsilon) * gamma`: the inputs are not centred, and the layer
    has gamma alone, whatever `center` and `scale` say."""

    supports_masking = True  # Keras's: it passes its inputs' mask on
    autocast = False  # Keras's: inputs as they come, normalized in float32 at least

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        *,
        rms_scaling=False,  # (Keras 3 reads it from its keywords only)
        **kwargs,
    ):
        super().__init__(**kwargs)
        if rms_scaling:
            warnings.warn(
                "LayerNormalization(rms_scaling=True) is deprecated in Keras 3: it divides "
                "the inputs by their standard deviation, not by their root mean square",
                stacklevel=2,
            )
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else [int(axis)]
        self.epsilon = float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.rms_scaling = bool(rms_scaling)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.gamma = self.beta = None

    def build(self, input_shape):
        self._axes = _axes(self.axis, len(input_shape))
        size = _sizes(input_shape, self._axes, type(self).__name__)
        if self.rms_scaling:
            self.gamma = self.add_weight(
                "gamma", size, initializer=self.gamma_initializer, autocast=False
            )
        else:
            self.gamma, self.beta = _scale_and_offset(self, size)
        self.built = True

    def call(self, inputs):
        compute = _normalizing_dtype(inputs)
        inputs = _cast(inputs, compute)
        mean, variance = _moments(inputs, self._axes)
        if not self.rms_scaling:
            out = _normalize(inputs, mean, variance, self, len(inputs.shape), compute)
            return _cast(out, self._compute_dtype)
        scaled = math_ops.multiply(inputs, math_ops.rsqrt(math_ops.add(variance, self.epsilon)))
        gamma = _broadcastable(_cast(self.gamma, compute), self._axes, len(inputs.shape))
        return _cast(math_ops.multiply(scaled, gamma), self._compute_dtype)


def _single_axis(axis):
    """BatchNormalization's axis: one int (Keras 3 takes no list either)."""
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"BatchNormalization takes one axis (an int), not {axis!r}")
    return int(axis)


def _axes(axis, ndim):
    """`axis` (a list of ints, negative from the end) as sorted non-negative axes."""
    axes = []
    for a in axis:
        if not -ndim <= int(a) < ndim:
            raise ValueError(f"axis {a} is out of range for inputs of rank {ndim}")
        axes.append(int(a) % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis {axis} names an axis twice")
    return sorted(axes)


def _sizes(input_shape, axes, layer_class):
    """The shape of the weights: the input's sizes along `axes`, which must be known."""
    sizes = tuple(input_shape[a] for a in axes)
    if any(s is None for s in sizes):
        raise ValueError(
            f"{layer_class} needs the size of axis {axes} known when it builds; "
            f"the input shape is {tuple(input_shape)}"
        )
    return sizes


def _scale_and_offset(layer, size):
    """gamma and beta of `layer` (None where `scale` or `center` is off), gamma first; under
    a mixed policy they are read in their own dtype, float32 (Keras's `autocast=False`)."""
    gamma = beta = None
    if layer.scale:
        gamma = layer.add_weight("gamma", size, initializer=layer.gamma_initializer, autocast=False)
    if layer.center:
        beta = layer.add_weight("beta", size, initializer=layer.beta_initializer, autocast=False)
    return gamma, beta


def _normalizing_dtype(inputs):
    """The dtype a normalization layer computes in: float64 for float64 inputs, else float32
    (float16 inputs too, as Keras 3's `result_type(inputs, "float32")`)."""
    return float64 if inputs.dtype == float64 else float32


def _moments(inputs, axes):
    """Mean and biased variance over `axes`, kept as size-1 axes so that they broadcast; the
    variance in two passes (mean of squared deviations), as Keras 3 computes it."""
    mean = reduce_mean(inputs, axes, keepdims=True)
    variance = reduce_mean(math_ops.square(math_ops.subtract(inputs, mean)), axes, keepdims=True)
    return mean, variance


def _masked_moments(inputs, mask, axes):
    """Mean and biased variance over `axes` of the elements `mask` (the inputs' shape but the
    last axis) keeps, as Keras 3's BatchNormalization takes them in training: sums over the
    kept elements divided by their count plus Keras's epsilon, 1e-7."""
    kept = broadcast_to(array_ops.expand_dims(cast(mask, "bool"), -1), inputs.shape)
    weights = cast(kept, inputs.dtype)
    count = math_ops.add(reduce_sum(weights, axes, keepdims=True), 1e-7)
    zero = array_ops.zeros((), inputs.dtype)
    total = reduce_sum(math_ops.where(kept, inputs, zero), axes, keepdims=True)
    mean = math_ops.divide(total, count)
    deviations = math_ops.where(kept, math_ops.subtract(inputs, mean), zero)
    squares = reduce_sum(math_ops.square(deviations), axes, keepdims=True)
    return mean, math_ops.divide(squares, count)


def _broadcastable(weight, axes, ndim):
    """`weight` (shaped like the normalized axes) reshaped to broadcast against the inputs;
    as it is when those axes are the last ones."""
    if axes == list(range(ndim - len(axes), ndim)):
        return weight
    shape = [1] * ndim
    for a, size in zip(axes, weight.shape):
        shape[a] = size
    return reshape(weight, shape)


def _cast(x, dtype):
    """`x` in `dtype`, untouched (no op recorded) when it already is."""
    return x if x.dtype == dtype else cast(x, dtype)


def _normalize(inputs, mean, variance, layer, ndim, compute=None):
    """`inputs * inv + (beta - mean * inv)`, `inv = gamma / sqrt(variance + epsilon)`: Keras's
    order of operations, so that float32 results round as Keras's do. gamma and beta are
    cast to `compute` when given (BatchNormalization's float32 for float16 weights)."""
    inv = math_ops.rsqrt(math_ops.add(variance, layer.epsilon))
    if layer.gamma is not None:
        gamma = layer.gamma if compute is None else _cast(layer.gamma, compute)
        inv = math_ops.multiply(inv, _broadcastable(gamma, layer._axes, ndim))
    shift = math_ops.multiply(mean, inv)
    if layer.beta is None:
        offset = math_ops.negative(shift)
    else:
        beta = layer.beta if compute is None else _cast(layer.beta, compute)
        offset = math_ops.subtract(_broadcastable(beta, layer._axes, ndim), shift)
    return math_ops.add(math_ops.multiply(inputs, inv), offset)


class UnitNormalization(Layer):
    """Each example scaled to unit L2 norm along `axis`: x * min(1 / sqrt(sum(x^2)), 1e12),
    as Keras 3 (a norm under 1e-12, not 1e-6 as l2_normalize's epsilon on the sum of squares
    would make it, stops the scaling)."""

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else int(axis)

    def call(self, inputs):
        squares = reduce_sum(math_ops.square(inputs), self.axis, keepdims=True)
        return math_ops.multiply(inputs, math_ops.minimum(math_ops.rsqrt(squares), 1e12))

    def get_config(self):
        return {**self._base_config(), "axis": self.axis}


class GroupNormalization(Layer):
    """Normalizes each example's channels in `groups` groups (each group by the mean and
    biased variance of its channels over every other axis but the batch), then scales by
    gamma and shifts by beta, one per channel, as Keras 3's GroupNormalization (`groups=-1`:
    one group per channel, instance normalization). Channels are the last axis."""

    supports_masking = True
    autocast = False  # Keras's: inputs as they come, normalized in float32 at least

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        self.groups, self.axis = int(groups), int(axis)
        self.epsilon = float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.gamma = self.beta = None

    def build(self, input_shape):
        rank = len(input_shape)
        if self.axis % rank != rank - 1:
            raise ValueError(
                f"GroupNormalization: tracer normalizes groups of the last axis, not axis "
                f"{self.axis} of inputs of rank {rank}"
            )
        channels = input_shape[-1]
        if channels is None:
            raise ValueError(
                f"GroupNormalization needs the channels' size known, inputs are {tuple(input_shape)}"
            )
        if self.groups == -1:  # Keras's: one group per channel, written so in its config
            self.groups = channels
        if self.groups <= 0 or channels % self.groups:
            raise ValueError(
                f"GroupNormalization: groups={self.groups} must divide the {channels} channels"
            )
        self._axes = [rank - 1]
        self.gamma, self.beta = _scale_and_offset(self, (channels,))
        self.built = True

    def call(self, inputs):
        group_shape = (self.groups, inputs.shape[-1] // self.groups)
        sizes = array_ops.shape(inputs)  # (the batch and other sizes may be known only later)
        compute = _normalizing_dtype(inputs)
        grouped = _cast(reshape(inputs, concat([sizes[:-1], group_shape], 0)), compute)
        rank = inputs.ndim + 1
        axes = [a for a in range(1, rank) if a != rank - 2]
        mean, variance = _moments(grouped, axes)
        inv = math_ops.rsqrt(math_ops.add(variance, self.epsilon))
        if self.gamma is not None:
            inv = math_ops.multiply(inv, reshape(_cast(self.gamma, compute), group_shape))
        offset = math_ops.negative(math_ops.multiply(mean, inv))
        if self.beta is not None:
            offset = math_ops.add(offset, reshape(_cast(self.beta, compute), group_shape))
        out = math_ops.add(math_ops.multiply(grouped, inv), offset)
        return _cast(reshape(out, sizes), self._compute_dtype)
