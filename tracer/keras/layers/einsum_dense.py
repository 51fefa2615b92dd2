"""Keras's EinsumDense: a dense layer whose product with its kernel is an einsum equation,
`"abc,cde->abde"` (inputs, kernel, outputs), so that the kernel may keep axes of their own
(a MultiHeadAttention's heads)."""

import re

from tracer.keras import activations
from tracer.keras.layers.layer import Layer, refuse_quantization
from tracer.ops import math_ops
from tracer.ops.einsum_ops import einsum

_EQUATION = re.compile(r"^(\.\.\.)?([a-zA-Z]+),([a-zA-Z]+)->(\.\.\.)?([a-zA-Z]+)$")


class EinsumDense(Layer):
    """`activation(einsum(equation, inputs, kernel) + bias)`.

    `output_shape` gives the output's sizes after its first axis (the batch; after the
    elided ones with "..."), None for a size the input gives. The kernel's size along each
    of its letters is the input's where the input has the letter, else the output's; the bias
    spans the output's axes from the first of `bias_axes` on, 1 along those not named.
    """

    supports_masking = True  # Keras's: it passes its inputs' mask on

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        quantization_config=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        refuse_quantization(self, quantization_config)
        match = _EQUATION.match(equation.replace(" ", ""))
        if match is None or bool(match.group(1)) != bool(match.group(4)):
            raise ValueError(
                f"EinsumDense: equation {equation!r} is not of the form 'ab,bc->ac' (with "
                "'...' before the inputs' and the outputs' letters, or neither)"
            )
        self.equation = equation
        self._elided = bool(match.group(1))
        self._inputs, self._kernel, self._outputs = match.group(2), match.group(3), match.group(5)
        self.partial_output_shape = (
            (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        )
        self.activation = activations.get(activation)
        self.bias_axes = bias_axes
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None
        for letter in bias_axes or "":
            if letter not in self._outputs:
                raise ValueError(
                    f"EinsumDense: bias axis {letter!r} is not one of the output's ({equation!r})"
                )

    def build(self, input_shape):
        sizes = self._output_sizes(tuple(input_shape))
        known = dict(zip(self._inputs, input_shape[len(input_shape) - len(self._inputs) :]))
        kernel_shape = []
        for letter in self._kernel:
            size = known.get(letter, sizes.get(letter))
            if size is None:
                raise ValueError(
                    f"EinsumDense {self.name!r}: the size of kernel axis {letter!r} is neither "
                    f"the input's nor given by output_shape {self.partial_output_shape}"
                )
            kernel_shape.append(int(size))
        self.kernel = self.add_weight(
            "kernel", tuple(kernel_shape), initializer=self.kernel_initializer
        )
        if self.bias_axes:
            first = min(self._outputs.index(letter) for letter in self.bias_axes)
            bias_shape = tuple(
                int(sizes[letter]) if letter in self.bias_axes else 1
                for letter in self._outputs[first:]
            )
            self.bias = self.add_weight("bias", bias_shape, initializer=self.bias_initializer)
        self.built = True

    def _output_sizes(self, input_shape):
        """{letter: size} of the output's letters that output_shape gives (the input's size
        where it gives None)."""
        letters = self._outputs if self._elided else self._outputs[1:]
        if len(letters) != len(self.partial_output_shape):
            raise ValueError(
                f"EinsumDense {self.name!r}: output_shape {self.partial_output_shape} has "
                f"{len(self.partial_output_shape)} sizes; equation {self.equation!r} needs "
                f"{len(letters)}"
            )
        from_input = dict(zip(self._inputs, input_shape[len(input_shape) - len(self._inputs) :]))
        return {
            letter: from_input.get(letter) if size is None else size
            for letter, size in zip(letters, self.partial_output_shape)
        }

    def call(self, inputs):
        y = einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            y = math_ops.add(y, self.bias)
        return activations.applied(self.activation, y)
