"""`tt.keras.initializers`: Keras's initializers by their Keras names. Each is called as
`init(shape, dtype=None)` and gives a tt.Tensor (float32 unless `dtype` says otherwise).

>>> init = tt.keras.initializers.GlorotUniform(seed=1)
>>> init((3, 2)).shape
TensorShape([3, 2])

Seeds, as in Keras 3 for a seeded initializer: an initializer made with `seed` gives the same
values on every call (for the same shape and dtype), whatever `tt.random.set_seed` says, and
different seeds give different values. Unseeded, every call draws new values from tracer's
global generator, so `tt.random.set_seed` makes a sequence of draws repeatable (Keras 3
instead fixes a random seed for each unseeded object).
"""

import math

import numpy as np

from tracer import random as tt_random
from tracer.dtypes import as_dtype
from tracer.keras.lookup import Configurable, config_value, instance_or_callable, value_of_config
from tracer.tensor import Tensor, is_tensor_like

# the standard deviation of a unit normal truncated to [-2, 2], which VarianceScaling divides
# by so that its truncated draws have the variance asked for
_TRUNCATED_STDDEV = 0.87962566103423978


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) of a weight `shape`, as Keras computes them: the products of the
    sizes along `input_axes` and `output_axes` where both are given; else a vector's length
    for both; (rows, columns) for a matrix; for a convolution kernel (..., in_channels,
    out_channels), each channel count times the receptive field size (the product of the
    leading dimensions).

    >>> compute_fans((3, 3, 16, 32))
    (144, 288)
    >>> compute_fans((4, 2, 8), input_axes=[0], output_axes=[1, 2])
    (4, 16)
    """
    shape = _shape(shape)
    if input_axes is not None and output_axes is not None:
        return math.prod(shape[a] for a in input_axes), math.prod(shape[a] for a in output_axes)
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


def _snake_case(name):
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


class Initializer(Configurable):
    """Keras's initializer base class: subclasses give `__call__(shape, dtype=None)`."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must define __call__(shape, dtype)")


class Constant(Initializer):
    """Every element `value`.

    >>> tt.keras.initializers.Constant(3.0)((2,)).numpy()
    array([3., 3.], dtype=float32)
    """

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        dtype = as_dtype("float32" if dtype is None else dtype)
        return Tensor(np.full(_shape(shape), self.value, dtype=dtype.as_numpy_dtype))

    def get_config(self):
        return {"value": config_value(self.value)}  # an array as Keras writes one

    @classmethod
    def from_config(cls, config):
        return cls(**{key: value_of_config(value) for key, value in config.items()})


class Zeros(Constant):
    def __init__(self):
        super().__init__(0)

    def get_config(self):
        return {}


class Ones(Constant):
    def __init__(self):
        super().__init__(1)

    def get_config(self):
        return {}


class Identity(Initializer):
    """The identity matrix (ones on the diagonal of a 2-D weight, square or not) times
    `gain`, as Keras's Identity: a covariance or precision matrix's start, say.

    >>> tt.keras.initializers.Identity(gain=2.0)((2, 3)).numpy()
    array([[2., 0., 0.],
           [0., 2., 0.]], dtype=float32)
    """

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        if len(shape) != 2:
            raise ValueError(
                "Identity matrix initializer can only be used for 2D matrices. "
                f"Received: shape={shape} of rank {len(shape)}."
            )
        dtype = as_dtype("float32" if dtype is None else dtype)
        return Tensor((self.gain * np.eye(*shape)).astype(dtype.as_numpy_dtype))

    def get_config(self):
        return {"gain": self.gain}


class RandomInitializer(Initializer):
    """An initializer that draws from numpy's Generator: a fresh one seeded by `seed` at
    every call, or tracer's global one when `seed` is None."""

    def __init__(self, seed=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an int or None, not {seed!r}")
        self.seed = seed

    def __call__(self, shape, dtype=None):
        dtype = as_dtype("float32" if dtype is None else dtype)
        if not dtype.is_floating:
            raise TypeError(f"{type(self).__name__} makes floating tensors, not {dtype.name}")
        values = self._draw(self._generator(), _shape(shape))
        return Tensor(values.astype(dtype.as_numpy_dtype))

    def _generator(self):
        # NOTE: read tracer's global generator at every call: tt.random.set_seed replaces it
        return tt_random._rng(None) if self.seed is None else np.random.default_rng(self.seed)

    def get_config(self):
        return {"seed": self.seed}


class RandomUniform(RandomInitializer):
    """Uniform on [minval, maxval)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def _draw(self, rng, shape):
        return rng.uniform(self.minval, self.maxval, shape)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, **super().get_config()}


class RandomNormal(RandomInitializer):
    """Normal with `mean` and `stddev`."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def _draw(self, rng, shape):
        return rng.normal(self.mean, self.stddev, shape)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, **super().get_config()}


class TruncatedNormal(RandomNormal):
    """Normal with `mean` and `stddev`, where values more than two standard deviations from
    the mean are drawn again (so the spread is about 0.88 `stddev`)."""

    def _draw(self, rng, shape):
        return _truncated_normal(rng, self.mean, self.stddev, shape)


class VarianceScaling(RandomInitializer):
    """Draws of variance `scale / n`, n being fan_in, fan_out or their mean (`mode`), from a
    truncated normal ("truncated_normal", or "normal" as Keras reads it), a normal
    ("untruncated_normal") or a uniform distribution ("uniform", on +-sqrt(3 scale / n)).

    >>> init = tt.keras.initializers.VarianceScaling(2.0, "fan_in", "uniform", seed=0)
    >>> float(tt.reduce_max(tt.abs(init((6, 4))))) <= 1.0
    True
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(
        self,
        scale=1.0,
        mode="fan_in",
        distribution="truncated_normal",
        seed=None,
        input_axes=None,
        output_axes=None,
    ):
        super().__init__(seed)
        self.input_axes, self.output_axes = input_axes, output_axes
        if scale <= 0.0:
            raise ValueError(f"VarianceScaling: scale must be positive, not {scale!r}")
        if mode not in self._MODES:
            raise ValueError(f"VarianceScaling: mode must be one of {self._MODES}, not {mode!r}")
        distribution = distribution.lower()
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(
                f"VarianceScaling: distribution must be one of {self._DISTRIBUTIONS}, "
                f"not {distribution!r}"
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _draw(self, rng, shape):
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        variance = self.scale / max(1.0, fan[self.mode])
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return rng.uniform(-limit, limit, shape)
        if self.distribution == "untruncated_normal":
            return rng.normal(0.0, math.sqrt(variance), shape)
        return _truncated_normal(rng, 0.0, math.sqrt(variance) / _TRUNCATED_STDDEV, shape)

    def get_config(self):
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            **super().get_config(),
            "input_axes": self.input_axes,
            "output_axes": self.output_axes,
        }


class _Preset(VarianceScaling):
    """A VarianceScaling whose scale, mode and distribution are fixed by its class."""

    SETTINGS = ()

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(*self.SETTINGS, seed=seed, input_axes=input_axes, output_axes=output_axes)

    def get_config(self):
        return {"seed": self.seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class GlorotUniform(_Preset):
    """Uniform on +-sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""

    SETTINGS = (1.0, "fan_avg", "uniform")


class GlorotNormal(_Preset):
    """Truncated normal of variance 2 / (fan_in + fan_out)."""

    SETTINGS = (1.0, "fan_avg", "truncated_normal")


class HeUniform(_Preset):
    """Uniform on +-sqrt(6 / fan_in) (He et al., 2015)."""

    SETTINGS = (2.0, "fan_in", "uniform")


class HeNormal(_Preset):
    """Truncated normal of variance 2 / fan_in."""

    SETTINGS = (2.0, "fan_in", "truncated_normal")


class LecunUniform(_Preset):
    """Uniform on +-sqrt(3 / fan_in)."""

    SETTINGS = (1.0, "fan_in", "uniform")


class LecunNormal(_Preset):
    """Truncated normal of variance 1 / fan_in."""

    SETTINGS = (1.0, "fan_in", "truncated_normal")


class Orthogonal(RandomInitializer):
    """A matrix with orthonormal rows or columns (whichever are fewer), times `gain`: the Q
    of a QR factorization of standard normal draws, each column's sign that of R's diagonal
    so that Q is uniform over such matrices, as Keras's. A shape of more than two axes is
    drawn as (the product of all but the last, the last) and reshaped."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def _draw(self, rng, shape):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal makes matrices: a shape of two axes or more, not {shape}")
        rows, columns = math.prod(shape[:-1]), shape[-1]
        q, r = np.linalg.qr(rng.normal(0.0, 1.0, (max(rows, columns), min(rows, columns))))
        q = q * np.sign(np.diag(r))
        return self.gain * np.ascontiguousarray(q.T if rows < columns else q).reshape(shape)

    def get_config(self):
        return {**super().get_config(), "gain": self.gain}


# Keras's lower-case names are the classes themselves
constant = Constant
zeros = Zeros
ones = Ones
random_uniform = RandomUniform
random_normal = RandomNormal
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_uniform = HeUniform
he_normal = HeNormal
lecun_uniform = LecunUniform
lecun_normal = LecunNormal
orthogonal = Orthogonal
identity = Identity

_CLASSES = (
    Constant,
    Zeros,
    Ones,
    RandomUniform,
    RandomNormal,
    TruncatedNormal,
    VarianceScaling,
    GlorotUniform,
    GlorotNormal,
    HeUniform,
    HeNormal,
    LecunUniform,
    LecunNormal,
    Orthogonal,
    Identity,
)
_BY_NAME = {
    **{cls.__name__: cls for cls in _CLASSES},
    **{_snake_case(cls.__name__): cls for cls in _CLASSES},  # the module's lower-case names
    **{"zero": Zeros, "one": Ones, "normal": RandomNormal, "uniform": RandomUniform},
    "IdentityInitializer": Identity,  # (Keras 3's class name)
}


def get(identifier):
    """An initializer for a Keras name (class or snake_case, plus Keras's aliases "zero",
    "one", "normal", "uniform"; a new instance with default arguments), a config dict
    ({"class_name": ..., "config": {...}}), a class (instantiated), a callable (returned as
    is), an array or tensor (its values, for that shape only), or None (None).

    >>> tt.keras.initializers.get("glorot_uniform")
    GlorotUniform(seed=None, input_axes=None, output_axes=None)
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"unknown initializer {identifier!r}")
        return cls.from_config(identifier.get("config", {}))
    if isinstance(identifier, str):
        found = _BY_NAME.get(identifier)
    elif isinstance(identifier, np.ndarray) or is_tensor_like(identifier):
        found = _from_values(np.asarray(identifier))
    else:
        found = identifier
    return instance_or_callable(found, identifier, _BY_NAME, "initializer")


def _from_values(values):
    def initialize(shape, dtype=None):
        if _shape(shape) != values.shape:
            raise ValueError(f"this initializer gives shape {values.shape}, not {shape}")
        return Tensor(values.astype(as_dtype("float32" if dtype is None else dtype).as_numpy_dtype))

    return initialize


def _truncated_normal(rng, mean, stddev, shape):
    """Normal draws, those outside mean +- 2 stddev drawn again until none is."""
    values = rng.normal(mean, stddev, shape)
    outside = np.abs(values - mean) > 2.0 * stddev
    while outside.any():
        values[outside] = rng.normal(mean, stddev, int(outside.sum()))
        outside = np.abs(values - mean) > 2.0 * stddev
    return values


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
