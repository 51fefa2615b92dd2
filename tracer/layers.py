"""`tt.layers`: Dense and Sequential, enough for Keras-style models on the tape.

Layer names are made unique per process as Keras does (`dense`, `dense_1`, ...), and each
variable is named under its layer (`dense/kernel:0`).
"""

import collections

import numpy as np

from tracer import nn
from tracer import random as tt_random
from tracer.dtypes import as_dtype
from tracer.ops import math_ops
from tracer.ops.array_ops import cast
from tracer.ops.linalg_ops import matmul
from tracer.tensor import convert_to_tensor
from tracer.variable import Variable

_name_counts = collections.Counter()

ACTIVATIONS = {
    None: None,
    "linear": None,
    "relu": nn.relu,
    "sigmoid": nn.sigmoid,
    "tanh": nn.tanh,
    "softplus": nn.softplus,
}


def unique_layer_name(base):
    count = _name_counts[base]
    _name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"


def get_activation(activation):
    if callable(activation):
        return activation
    try:
        return ACTIVATIONS[activation]
    except KeyError:
        names = ", ".join(repr(k) for k in ACTIVATIONS if k)
        raise ValueError(
            f"unknown activation {activation!r}; use a callable or one of {names}"
        ) from None


class Layer:
    """A callable that builds its variables on first call. Its variables have `dtype`
    (float32 by default), and floating inputs of another dtype are cast to it, as Keras does."""

    def __init__(self, name=None, dtype=None):
        self.name = name or unique_layer_name(_snake_case(type(self).__name__))
        self.dtype = as_dtype(dtype or "float32")
        self.built = False

    def __call__(self, inputs):
        inputs = convert_to_tensor(inputs)
        if self.dtype is not None and inputs.dtype.is_floating and inputs.dtype != self.dtype:
            inputs = cast(inputs, self.dtype)
        if not self.built:
            self.build(inputs.shape)
            self.built = True
        return self.call(inputs)

    @property
    def variables(self):
        return list(self._variables())

    @property
    def trainable_variables(self):
        return [v for v in self._variables() if v.trainable]

    def _variables(self):
        return ()


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`, with a Glorot-uniform kernel and a zero bias.

    >>> layer = tt.layers.Dense(2, activation="relu")
    >>> layer(tt.constant([[1.0, 2.0, 3.0]])).shape
    (1, 2)
    """

    def __init__(self, units, activation=None, use_bias=True, name=None, dtype=None):
        super().__init__(name, dtype)
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel = self.bias = None

    def build(self, input_shape):
        fan_in = input_shape[-1]
        limit = np.sqrt(6.0 / (fan_in + self.units))
        kernel = tt_random.uniform((fan_in, self.units), -limit, limit, dtype=self.dtype)
        self.kernel = Variable(kernel, name=f"{self.name}/kernel")
        if self.use_bias:
            zeros = np.zeros(self.units, dtype=self.dtype.as_numpy_dtype)
            self.bias = Variable(zeros, name=f"{self.name}/bias")
        self.built = True  # also when called directly, as Keras's dense.build([None, 2])

    def call(self, inputs):
        y = matmul(inputs, self.kernel)
        if self.use_bias:
            y = math_ops.add(y, self.bias)
        return self.activation(y) if self.activation else y

    def _variables(self):
        return [v for v in (self.kernel, self.bias) if v is not None]


class Sequential(Layer):
    """Layers applied in order (each casts its inputs to its own dtype)."""

    def __init__(self, layers=(), name=None, dtype=None):
        super().__init__(name, dtype)
        self.dtype = None if dtype is None else self.dtype
        self.layers = list(layers)

    def add(self, layer):
        self.layers.append(layer)

    def build(self, input_shape):
        """Nothing to build: each layer builds itself on its first call."""

    def call(self, inputs):
        for layer in self.layers:
            inputs = layer(inputs)
        return inputs

    def _variables(self):
        return [v for layer in self.layers for v in layer.variables]


def _snake_case(name):
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))
