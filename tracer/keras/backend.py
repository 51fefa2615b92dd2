"""`tt.keras.backend`: what programs written for Keras call most: `clear_session` (layer
names start again from `dense`), `epsilon`, `floatx` and `set_floatx` (the dtype of layers,
inputs and metrics made without one), `image_data_format` (tracer's fixed channels_last), and
Keras's legacy `get_value`, `set_value` (a callback's learning rate), their batch forms and
`int_shape`.

    >>> rate = tt.keras.optimizers.SGD(0.5).learning_rate
    >>> tt.keras.backend.set_value(rate, 0.25)
    >>> float(tt.keras.backend.get_value(rate))
    0.25
"""

import numpy as np

from tracer.keras import naming
from tracer.tensor import Tensor
from tracer.variable import Variable


def clear_session(free_memory=True):
    """Start the layer names again (`dense`, `dense_1`, ...), as Keras's clear_session does;
    the models already made keep theirs."""
    naming.reset()


def epsilon():
    """The fuzz factor Keras's losses and layers add (1e-7)."""
    return 1e-7


_FLOAT_TYPES = ("bfloat16", "float16", "float32", "float64")
_settings = {"floatx": "float32"}


def floatx():
    """The float type of layers, inputs and metrics made without a dtype: float32 unless
    `set_floatx` set another."""
    return _settings["floatx"]


def set_floatx(value):
    """Make `value` ("float64", say) the dtype of the layers, inputs and metrics made from now
    on without one, as Keras's `set_floatx` does. Layers take it through the global dtype
    policy, which Keras makes from floatx when it is first asked for and keeps
    (tracer/keras/mixed_precision.py): call it before making the first layer."""
    if value not in _FLOAT_TYPES:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {set(_FLOAT_TYPES)}")
    _settings["floatx"] = str(value)


def image_data_format():
    """The layout of images tracer's layers take: channels_last."""
    return "channels_last"


def get_value(x):
    """The value of a tensor or variable as a numpy array (or scalar); anything else as
    given."""
    return x.numpy() if isinstance(x, (Tensor, Variable)) else x


def set_value(x, value):
    """Assign `value` (converted to the variable's dtype) to the variable `x`."""
    x.assign(np.asarray(value, dtype=x.dtype.as_numpy_dtype))


def batch_get_value(tensors):
    """`get_value` of each."""
    return [get_value(x) for x in tensors]


def batch_set_value(tuples):
    """`set_value` of each (variable, value) pair."""
    for x, value in tuples:
        set_value(x, value)


def int_shape(x):
    """The shape of a tensor, variable or KerasTensor as a tuple (None where unknown)."""
    shape = x.shape
    return tuple(shape) if isinstance(shape, tuple) else tuple(shape.as_list())
