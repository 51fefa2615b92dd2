"""Keras's core layers: Dense, Flatten, Dropout, Embedding, Masking, Identity and Rescaling."""

import math

from tracer import random as tt_random
from tracer import sparse
from tracer.dtypes import as_dtype, int64
from tracer.keras import activations
from tracer.keras.layers.layer import Layer, refuse_quantization
from tracer.ops import array_ops, math_ops
from tracer.ops.affine_ops import affine
from tracer.ops.array_ops import cast, reshape
from tracer.ops.index_ops import gather
from tracer.ops.math_composites import reduce_any
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor
from tracer.variable import Variable


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`, with a Glorot-uniform kernel and a zero bias."""

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        quantization_config=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        refuse_quantization(self, quantization_config)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        self.kernel = self.add_weight(
            "kernel", (input_shape[-1], self.units), initializer=self.kernel_initializer
        )
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), initializer=self.bias_initializer)
        self.built = True  # also when called directly, as Keras's dense.build([None, 2])

    def call(self, inputs):
        if type(inputs) is SparseTensor:  # Keras's matmul of a sparse input: dense
            values = cast(inputs.values, self.kernel.dtype)
            y = sparse.sparse_dense_matmul(inputs.with_values(values), self.kernel)
            if self.use_bias:
                y = math_ops.add(y, self.bias)
            return activations.applied(self.activation, y)
        if not inputs.dtype.is_floating:
            # Keras 3's matmul promotes int32 x float32 to float32 (its Layer casts only
            # floating inputs): integer and bool inputs compute in the kernel's dtype
            inputs = cast(inputs, self.kernel.dtype)
        activation = self.activation
        with_relu = activation is activations.relu
        y = affine(inputs, self.kernel, self.bias if self.use_bias else None, with_relu)
        return y if with_relu else activations.applied(activation, y)


class Flatten(Layer):
    """Each example's values in one axis: (batch, ...) -> (batch, size)."""

    def call(self, inputs):
        size = math.prod(inputs.shape[1:])  # known also when the batch size is not
        return reshape(inputs, (-1, size))


class Dropout(Layer):
    """With `training=True`, zeroes each value with probability `rate` and scales the rest by
    1 / (1 - rate); otherwise the identity.

    Masks are drawn with `tt.random.stateless_uniform` from a seed held in a variable of the
    layer, moved on at each draw, so a compiled training step draws a new mask per call and
    a checkpoint restores the stream.
    """

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= float(rate) < 1:
            raise ValueError(f"Dropout rate must be in [0, 1), not {rate}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed
        self.seed_state = None

    def build(self, input_shape):
        if self.rate > 0:  # Keras draws no masks, and keeps no seed, at rate 0
            self.seed_state = seed_state(self, self.seed)
        self.built = True

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = self._noise_shape(inputs.shape)
        unit = tt_random.stateless_uniform(shape, seed=self.seed_state, dtype=inputs.dtype)
        self.seed_state.assign_add([0, 1])
        keep = cast(math_ops.greater_equal(unit, self.rate), inputs.dtype)
        return inputs * keep / (1.0 - self.rate)

    def _noise_shape(self, shape):
        if self.noise_shape is None:
            return shape
        return tuple(d if n is None else int(n) for d, n in zip(shape, self.noise_shape))


def seed_state(layer, seed):
    """A new variable of `layer`'s random-number state: [seed, draws made], the seed drawn
    from tracer's global stream where `seed` is None; each draw of a mask moves it on."""
    start = seed if seed is not None else int(tt_random._rng(None).integers(2**31))
    state = Variable([start, 0], trainable=False, name="seed_state", dtype=int64)
    layer._seed_variables.append(state)
    return state


class Embedding(Layer):
    """Rows of a (input_dim, output_dim) table, looked up by integer index; the table starts
    uniform in [-0.05, 0.05] as in Keras, and its gradient is an IndexedSlices.

    As Keras 3's (ops.take), an index in [-input_dim, 0) counts from the end: -1 is the last
    row, and its gradient goes to that row; an index outside [-input_dim, input_dim) raises.

    `mask_zero=True` makes `compute_mask(inputs)` give `inputs != 0` (Keras's mask; index 0
    is then reserved for padding), and passes it on as Keras's layers do: the layers after it
    that take a mask (an LSTM, GlobalAveragePooling1D) skip the padding. The outputs are the
    same either way.

    Under a mixed policy the rows are looked up in the float32 table and then cast to the
    compute dtype, as Keras's (`autocast = False`: not the whole table cast at each call).
    """

    autocast = False

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        mask_zero=False,
        quantization_config=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        refuse_quantization(self, quantization_config)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self.embeddings = None

    def __call__(self, inputs, *args, **kwargs):
        if not hasattr(inputs, "_keras_history"):  # a KerasTensor: cast when the model runs
            inputs = _indices(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            "embeddings",
            (self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
        )
        self.built = True

    def call(self, inputs):
        wrapped = math_ops.where(inputs < 0, inputs + self.input_dim, inputs)
        rows = gather(self.embeddings, wrapped)
        return rows if self._mixed_compute is None else cast(rows, self._mixed_compute)

    def compute_mask(self, inputs, mask=None):
        """`inputs != 0` with `mask_zero`, else None (Keras's)."""
        if not self.mask_zero:
            return None
        return math_ops.not_equal(_indices(inputs), 0)


class Masking(Layer):
    """Marks the steps (positions along the second-to-last axis) whose values all equal
    `mask_value` as padding: their values become 0, and the mask it passes on skips them in
    the layers after it that take one (an LSTM's steps), as Keras's."""

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def call(self, inputs):
        # NOTE: a choice, not a product: -1 * 0 would print as -0, inf * 0 as nan (Keras's).
        inputs = convert_to_tensor(inputs)
        keep = self.compute_mask(inputs)[..., None]
        return math_ops.where(keep, inputs, array_ops.zeros_like(inputs))

    def compute_mask(self, inputs, mask=None):
        """Whether any value of a step differs from `mask_value`."""
        return reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1)

    def get_config(self):
        return {**self._base_config(), "mask_value": self.mask_value}


class Identity(Layer):
    """Its inputs, unchanged."""

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def call(self, inputs):
        return inputs

    def get_config(self):
        return self._base_config()


class Rescaling(Layer):
    """`inputs * scale + offset` in the layer's dtype (integer inputs, such as uint8 images,
    are cast first); `scale` and `offset` are numbers or per-channel lists.

    >>> tt.keras.layers.Rescaling(1 / 255)(tt.constant([[0, 255]], tt.uint8)).numpy()
    array([[0., 1.]], dtype=float32)
    """

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset
        self.supports_masking = True

    def call(self, inputs):
        dtype = self._compute_dtype
        scale = convert_to_tensor(self.scale, dtype=dtype)
        offset = convert_to_tensor(self.offset, dtype=dtype)
        return math_ops.add(math_ops.multiply(cast(inputs, dtype), scale), offset)

    def get_config(self):
        return {**self._base_config(), "scale": self.scale, "offset": self.offset}


def _indices(inputs):
    """Embedding's inputs as integers (Keras casts float indices)."""
    tensor = convert_to_tensor(inputs)
    if tensor.dtype.is_floating:
        tensor = cast(tensor, as_dtype("int32"))
    return tensor
