"""Keras's regularization layers beside Dropout: the noise layers, active in training only
(GaussianNoise, GaussianDropout, and SpatialDropout1D and SpatialDropout2D, which drop whole
channels), and ActivityRegularization. The draws come from a seed held in a variable of the
layer, moved on at each draw, as Dropout's, so a compiled training step draws anew at each
call."""

import math

from tracer import random as tt_random
from tracer.keras import regularizers
from tracer.keras.layers.core import Dropout, seed_state
from tracer.keras.layers.layer import Layer


class _Noise(Layer):
    """What the Gaussian layers share: a rate or stddev, the seed, the draws."""

    supports_masking = True

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_state = None

    def build(self, input_shape):
        self.seed_state = seed_state(self, self.seed)
        self.built = True

    def _normal(self, inputs, stddev):
        draws = tt_random.stateless_normal(
            inputs.shape, seed=self.seed_state, stddev=stddev, dtype=inputs.dtype
        )
        self.seed_state.assign_add([0, 1])
        return draws


class GaussianNoise(_Noise):
    """`inputs + N(0, stddev^2)` in training; the inputs otherwise."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed, **kwargs)
        if not 0 <= float(stddev):
            raise ValueError(f"GaussianNoise: stddev must not be negative, not {stddev}")
        self.stddev = float(stddev)

    def call(self, inputs, training=False):
        if not training or self.stddev == 0:
            return inputs
        return inputs + self._normal(inputs, self.stddev)

    def get_config(self):
        return {**self._base_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(_Noise):
    """`inputs * N(1, rate / (1 - rate))` in training (mean-preserving multiplicative noise);
    the inputs otherwise."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed, **kwargs)
        if not 0 <= float(rate) < 1:
            raise ValueError(f"GaussianDropout: rate must be in [0, 1), not {rate}")
        self.rate = float(rate)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return inputs * (self._normal(inputs, stddev) + 1.0)

    def get_config(self):
        return {**self._base_config(), "rate": self.rate, "seed": self.seed}


class SpatialDropout1D(Dropout):
    """Dropout of whole channels of (batch, steps, channels): one draw per example and
    channel, shared by every step."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)

    def _noise_shape(self, shape):
        if len(shape) != 3:
            raise ValueError(f"SpatialDropout1D takes (batch, steps, channels), not {tuple(shape)}")
        return (shape[0], 1, shape[2])

    def get_config(self):
        return {**self._base_config(), "rate": self.rate, "seed": self.seed}


class SpatialDropout2D(Dropout):
    """Dropout of whole feature maps of images (channels last, or first with
    `data_format="channels_first"`): one draw per example and channel."""

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"SpatialDropout2D: data_format {data_format!r} is not one of Keras's")

    def _noise_shape(self, shape):
        if len(shape) != 4:
            raise ValueError(f"SpatialDropout2D takes images of rank 4, not {tuple(shape)}")
        if self.data_format == "channels_first":
            return (shape[0], shape[1], 1, 1)
        return (shape[0], 1, 1, shape[3])

    def get_config(self):
        return {
            **self._base_config(),
            "rate": self.rate,
            "seed": self.seed,
            "data_format": self.data_format,
        }


class ActivityRegularization(Layer):
    """The identity, whose outputs' penalty `l1 * sum(abs(x)) + l2 * sum(square(x))`, per
    example, joins `losses` at each call (Keras's activity regularizer)."""

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {**self._base_config(), "l1": self.l1, "l2": self.l2}
