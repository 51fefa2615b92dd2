"""Keras's Normalization layer: inputs shifted and scaled by a mean and variance per index of
the kept axes, given or learnt from data by `adapt`."""

import numpy as np

from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, math_ops
from tracer.tensor import convert_to_tensor

_EPSILON = 1e-7  # Keras's backend.epsilon(): the smallest standard deviation divided by


class Normalization(Layer):
    """`(inputs - mean) / max(sqrt(variance), 1e-7)` (with `invert`, the inverse), one mean
    and variance per index of the kept `axis` (the last by default; None for one over all).

    `mean` and `variance` given fix them; otherwise `adapt(data)` sets them from an array,
    a tensor, a `tt.data.Dataset` or an iterable of batches: the population mean and
    variance over every axis but the kept ones, accumulated in float64 over the batches.
    They are non-trainable weights (`mean`, `variance`, `count`), as Keras's, so they go
    through checkpoints and `.keras` files.
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        self.axis = (int(axis),) if isinstance(axis, int) else tuple(int(a) for a in axis)
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: give mean and variance together, or neither")
        self.input_mean, self.input_variance = mean, variance
        self.invert = bool(invert)
        self.adapt_mean = self.adapt_variance = self.count = None

    def build(self, input_shape):
        rank = len(input_shape)
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(
                f"Normalization: axis {self.axis} is out of range for inputs of rank {rank}"
            )
        self._kept = tuple(sorted(a % rank for a in self.axis))
        for a in self._kept:
            if input_shape[a] is None:
                raise ValueError(
                    f"Normalization: the size of kept axis {a} must be known, inputs are "
                    f"{tuple(input_shape)}"
                )
        self._reduced = tuple(a for a in range(rank) if a not in self._kept)
        self._broadcast = tuple(input_shape[a] if a in self._kept else 1 for a in range(rank))
        shape = tuple(input_shape[a] for a in self._kept)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(
                "variance", shape, initializer="ones", trainable=False
            )
            self.count = self.add_weight(
                "count", (), dtype="int64", initializer="zeros", trainable=False
            )
        self.built = True

    def adapt(self, data):
        """Set the mean and variance from `data`: an array, a tensor, a Dataset or an
        iterable of batches (a Dataset's elements may be (x, y) pairs: x is taken)."""
        batches = _batches(data)
        first = next(batches, None)
        if first is None:
            raise ValueError("Normalization.adapt: the data hold no batch")
        if not self.built:
            outer = self._enter_scope()
            try:
                self.build(first.shape)
            finally:
                self._leave_scope(outer)
        if self.input_mean is not None:
            raise ValueError("Normalization.adapt: the layer was given its mean and variance")
        total = squares = None
        count = 0
        for batch in (first, *batches):
            batch = batch.astype(np.float64)
            sums = batch.sum(axis=self._reduced)
            total = sums if total is None else total + sums
            squared = np.square(batch).sum(axis=self._reduced)
            squares = squared if squares is None else squares + squared
            count += batch.size // max(1, int(np.prod([batch.shape[a] for a in self._kept])))
        mean = total / count
        variance = np.maximum(squares / count - np.square(mean), 0.0)
        dtype = self.adapt_mean.dtype.as_numpy_dtype
        self.adapt_mean.assign(mean.astype(dtype))
        self.adapt_variance.assign(variance.astype(dtype))
        self.count.assign(count)

    def call(self, inputs):
        if not inputs.dtype.is_floating:  # integer columns, as Keras converts them
            inputs = array_ops.cast(inputs, self.dtype)
        mean, variance = self._statistics(inputs.dtype)
        scale = math_ops.maximum(math_ops.sqrt(variance), _EPSILON)
        if self.invert:
            return mean + inputs * scale
        return (inputs - mean) / scale

    @property
    def mean(self):
        """The mean, shaped to broadcast against the inputs (Keras's `layer.mean`)."""
        return self._statistics(self.dtype)[0] if self.built else None

    @property
    def variance(self):
        """The variance, shaped to broadcast against the inputs (Keras's `layer.variance`)."""
        return self._statistics(self.dtype)[1] if self.built else None

    def _statistics(self, dtype):
        """The mean and variance, shaped to broadcast against the inputs."""
        if self.input_mean is None:
            mean = array_ops.reshape(self.adapt_mean, self._broadcast)
            variance = array_ops.reshape(self.adapt_variance, self._broadcast)
            return array_ops.cast(mean, dtype), array_ops.cast(variance, dtype)
        kept = tuple(self._broadcast[a] for a in self._kept)
        return tuple(
            convert_to_tensor(
                np.broadcast_to(np.asarray(given), kept).reshape(self._broadcast), dtype
            )
            for given in (self.input_mean, self.input_variance)
        )

    def get_config(self):
        def listed(value):
            return None if value is None else np.asarray(value).tolist()

        return {
            **self._base_config(),
            "axis": list(self.axis),
            "invert": self.invert,
            "mean": listed(self.input_mean),
            "variance": listed(self.input_variance),
        }


def _batches(data):
    """The batches of `data` as arrays: `data` itself where it is an array or a tensor, else
    each element it yields (a Dataset's, a list's)."""
    if isinstance(data, np.ndarray) or hasattr(data, "numpy"):
        yield np.asarray(data.numpy() if hasattr(data, "numpy") else data)
        return
    for element in data:
        if isinstance(element, (tuple, list)):
            element = element[0]
        yield np.asarray(element.numpy() if hasattr(element, "numpy") else element)
