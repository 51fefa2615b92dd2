"""Keras's activation layers: ReLU, LeakyReLU, PReLU, ELU and Softmax, over
`tt.keras.activations`."""

from tracer.dtypes import float16
from tracer.keras import activations
from tracer.keras.layers.layer import Layer
from tracer.ops import math_ops
from tracer.ops.array_ops import cast
from tracer.ops.convert import as_tensor
from tracer.ops.nn_ops import reduce_logsumexp


class ReLU(Layer):
    """`activations.relu(inputs, negative_slope, max_value, threshold)`: values at or below
    `threshold` become `negative_slope * (x - threshold)`, the rest are capped at `max_value`.

    >>> tt.keras.layers.ReLU(max_value=1.0)(tt.constant([-1.0, 0.5, 2.0])).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be negative, not {max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError(
                f"negative_slope of a ReLU layer cannot be None or negative, not {negative_slope}"
            )
        if threshold is None or threshold < 0.0:
            raise ValueError(
                f"threshold of a ReLU layer cannot be None or negative, not {threshold}"
            )
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)

    def get_config(self):
        return {
            **self._base_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }


class LeakyReLU(Layer):
    """x for x > 0, `negative_slope * x` otherwise (0.3 by default, as Keras 3; `alpha` is
    Keras 2's name for it)."""

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError(
                f"negative_slope of a LeakyReLU layer cannot be None or negative, "
                f"not {negative_slope}"
            )
        self.negative_slope = negative_slope

    def call(self, inputs):
        return activations.leaky_relu(inputs, self.negative_slope)

    def get_config(self):
        return {**self._base_config(), "negative_slope": self.negative_slope}


class ELU(Layer):
    """x for x > 0, `alpha * (exp(x) - 1)` otherwise. (`get_config` holds `alpha`, which
    Keras 3's leaves out.)"""

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        return activations.elu(inputs, self.alpha)

    def get_config(self):
        return {**self._base_config(), "alpha": self.alpha}


class Softmax(Layer):
    """softmax over `axis` (an int, or a list of axes normalised together). With `mask`
    (bool, or numbers read as `mask > 0.5`, broadcast to the inputs), masked-out entries
    take no share and come out 0, as in Keras 3.

    >>> tt.keras.layers.Softmax()(tt.constant([[0.0, 0.0]])).numpy()
    array([[0.5, 0.5]], dtype=float32)
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else int(axis)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = as_tensor(mask)
            if not mask.dtype.is_bool:
                mask = math_ops.greater(mask, cast(0.5, mask.dtype))
            # Keras's large negative number: -3e4 in float16, -1e9 otherwise
            large_negative = -3e4 if inputs.dtype == float16 else -1e9
            inputs = math_ops.where(mask, inputs, large_negative)
        if isinstance(self.axis, list) and len(self.axis) > 1:
            outputs = math_ops.exp(inputs - reduce_logsumexp(inputs, self.axis, keepdims=True))
        else:
            axis = self.axis[0] if isinstance(self.axis, list) else self.axis
            outputs = activations.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = math_ops.where(mask, outputs, 0.0)
        return outputs

    def get_config(self):
        return {**self._base_config(), "axis": self.axis}


class PReLU(Layer):
    """relu(x) - alpha * relu(-x) with `alpha` learnt: one per input value (batch axis
    excepted), shared along `shared_axes` (e.g. [1, 2] for one per channel of images)."""

    supports_masking = True

    def __init__(self, alpha_initializer="zeros", shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        if shared_axes is not None and not isinstance(shared_axes, (list, tuple)):
            shared_axes = [shared_axes]
        self.shared_axes = None if shared_axes is None else [int(a) for a in shared_axes]
        self.alpha = None

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            shape[axis - 1] = 1
        if any(size is None for size in shape):
            raise ValueError(
                f"PReLU: the input's sizes {tuple(input_shape)} must be known but for the batch "
                "and the shared_axes"
            )
        self.alpha = self.add_weight("alpha", tuple(shape), initializer=self.alpha_initializer)
        self.built = True

    def call(self, inputs):
        return math_ops.relu(inputs) - self.alpha * math_ops.relu(-inputs)
