"""Keras's layers that join tensors (Concatenate, Add, Subtract, Multiply, Average, Maximum,
Minimum, Dot, and their functions `concatenate`, `add`, ...), and Activation and Reshape: what
Keras's functional guide builds models with, where a KerasTensor has no arithmetic."""

import functools
import math

from tracer.keras import activations
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, math_ops
from tracer.ops.array_ops import reshape
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.einsum_ops import einsum
from tracer.ops.math_composites import l2_normalize, reduce_any
from tracer.ops.structure_ops import concat
from tracer.tensor import convert_to_tensor


class Merge(Layer):
    """A layer of a list of tensors, joined elementwise by `_join` (a binary op, folded
    over the list)."""

    _join = None  # a function of two tensors
    _arity = None  # the number of tensors it takes, when fixed
    supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: a step is kept where any input keeps it; no mask where an input has
        none."""
        if not isinstance(previous_mask, list) or any(m is None for m in previous_mask):
            return None
        return functools.reduce(math_ops.logical_or, previous_mask)

    def call(self, inputs):
        tensors = _tensors(inputs, self)
        if self._arity is not None and len(tensors) != self._arity:
            raise ValueError(
                f"{type(self).__name__} layer {self.name!r} takes {self._arity} tensors, "
                f"not {len(tensors)}"
            )
        return functools.reduce(type(self)._join, tensors)


class Add(Merge):
    """The sum of a list of tensors of one shape (or shapes that broadcast)."""

    _join = staticmethod(math_ops.add)


class Subtract(Merge):
    """`inputs[0] - inputs[1]`."""

    _join = staticmethod(math_ops.subtract)
    _arity = 2


class Multiply(Merge):
    """The elementwise product of a list of tensors."""

    _join = staticmethod(math_ops.multiply)


class Maximum(Merge):
    """The elementwise maximum of a list of tensors."""

    _join = staticmethod(math_ops.maximum)


class Minimum(Merge):
    """The elementwise minimum of a list of tensors."""

    _join = staticmethod(math_ops.minimum)


class Average(Merge):
    """The elementwise mean of a list of tensors."""

    _join = staticmethod(math_ops.add)

    def call(self, inputs):
        return super().call(inputs) / float(len(_tensors(inputs, self)))


class Concatenate(Layer):
    """A list of tensors joined along `axis` (the last by default)."""

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return concat(_tensors(inputs, self), axis=self.axis)

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: the inputs' masks (all kept where one has none, broadcast along a
        features axis it lacks) joined along `axis`, a step kept where any of its values
        is."""
        if not isinstance(previous_mask, list) or all(m is None for m in previous_mask):
            return None
        tensors = _tensors(inputs, self)
        masks = []
        for tensor, mask in zip(tensors, previous_mask):
            if mask is None:
                mask = math_ops.not_equal(array_ops.ones_like(tensor), 0.0)
            elif len(mask.shape) < len(tensor.shape):
                mask = broadcast_to(mask[..., None], array_ops.shape(tensor))
            masks.append(mask)
        return reduce_any(concat(masks, axis=self.axis), axis=-1)


class Dot(Layer):
    """The dot products of two batches of tensors along `axes` (an int for both, or one per
    input), per example: rank-2 inputs give (batch, 1); otherwise the remaining axes of the
    first, then of the second (Keras's batch_dot). `normalize` makes them cosine
    similarities (each input L2-normalized along its axis first)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.axes = axes if isinstance(axes, int) else [int(a) for a in axes]
        self.normalize = bool(normalize)

    def call(self, inputs):
        x, y = _tensors(inputs, self)
        pair = [self.axes, self.axes] if isinstance(self.axes, int) else self.axes
        ax, ay = pair[0] % x.ndim, pair[1] % y.ndim
        if ax == 0 or ay == 0:
            raise ValueError(f"Dot layer {self.name!r}: the batch axis is not one to sum over")
        if self.normalize:
            x, y = l2_normalize(x, axis=ax), l2_normalize(y, axis=ay)
        letters = "bcdefghijklm"
        x_letters = ["a"] + [letters[k] for k in range(x.ndim - 1)]
        y_letters = ["a"] + [letters[x.ndim - 1 + k] for k in range(y.ndim - 1)]
        y_letters[ay] = x_letters[ax] = "z"
        kept = [c for c in x_letters + y_letters if c != "z" and c != "a"]
        product = einsum(f"{''.join(x_letters)},{''.join(y_letters)}->a{''.join(kept)}", x, y)
        return product[:, None] if product.ndim == 1 else product

    def get_config(self):
        return {**self._base_config(), "axes": self.axes, "normalize": self.normalize}


class Activation(Layer):
    """`activation(inputs)`, the activation given by its Keras name or as a function."""

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class Reshape(Layer):
    """Each example reshaped to `target_shape` (the batch axis kept); one -1 in
    `target_shape` takes the size that is left, as in Keras."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(f"Reshape: at most one -1 in target_shape {self.target_shape}")

    def call(self, inputs):
        target = self.target_shape
        if -1 in target:  # then the batch axis cannot be -1 too: the size left is known
            size = math.prod(inputs.shape[1:])
            known = -math.prod(target)
            target = tuple(size // known if d == -1 else d for d in target)
        return reshape(inputs, (-1, *target))


def _tensors(inputs, layer):
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ValueError(
            f"{type(layer).__name__} layer {layer.name!r} takes a list of at least 2 tensors"
        )
    return [convert_to_tensor(x) for x in inputs]


def _functional(cls):
    """Keras's function form of a merging layer: `add([a, b])` is `Add()([a, b])`."""

    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)

    merge.__name__ = merge.__qualname__ = cls.__name__.lower()
    merge.__doc__ = f"`{cls.__name__}(**kwargs)(inputs)`."
    return merge


add = _functional(Add)
subtract = _functional(Subtract)
multiply = _functional(Multiply)
maximum = _functional(Maximum)
minimum = _functional(Minimum)
average = _functional(Average)


def concatenate(inputs, axis=-1, **kwargs):
    """`Concatenate(axis, **kwargs)(inputs)`."""
    return Concatenate(axis=axis, **kwargs)(inputs)
