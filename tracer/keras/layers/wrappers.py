"""Keras's Lambda (a function as a layer) and TimeDistributed (a layer applied to every step
of a sequence)."""

import inspect

from tracer.keras.layers.layer import Layer
from tracer.keras.layers.normalization import BatchNormalization
from tracer.ops import array_ops, structure_ops


class Lambda(Layer):
    """`function(inputs, **arguments)` as a layer, for a Sequential or a functional model.
    A function that takes `mask` or `training` is given them. The outputs carry the mask
    `mask` gives (a tensor, or a function of the inputs and their mask), none without it, as
    Keras's. Its weights, if the function makes any, are not the layer's (Keras's Lambda
    tracks none either); a model holding a Lambda saves no config (the function is code).
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda takes a function, not {function!r}")
        self.supports_masking = mask is not None
        self.function = function
        self.output_shape_argument = output_shape
        self.mask = mask
        self.arguments = dict(arguments or {})
        parameters = inspect.signature(function).parameters
        self._takes_mask = "mask" in parameters
        self._takes_training = "training" in parameters

    def call(self, inputs, mask=None, training=None):
        extra = dict(self.arguments)
        if self._takes_mask:
            extra["mask"] = mask
        if self._takes_training:
            extra["training"] = training
        return self.function(inputs, **extra)

    def compute_mask(self, inputs, previous_mask=None):
        if callable(self.mask):
            return self.mask(inputs, previous_mask)
        return self.mask


class TimeDistributed(Layer):
    """`layer` applied to each step of inputs (batch, steps, ...): the batch and step axes
    folded into one for the call (one call of the layer, its weights shared by the steps),
    then unfolded; a BatchNormalization is called step by step, as Keras calls every layer,
    since its training statistics are each step's batch's. A mask (batch, steps) reaches a
    layer that takes one, folded alike, and is passed on."""

    supports_masking = True

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise TypeError(f"TimeDistributed wraps a layer, not {layer!r}")
        self.layer = layer

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(
                f"TimeDistributed takes inputs of rank 3 or more (batch, steps, ...), not "
                f"{tuple(input_shape)}"
            )
        batch, steps = input_shape[0], input_shape[1]
        folded = None if batch is None or steps is None else batch * steps
        outer = self.layer._enter_scope()
        try:
            if not self.layer.built:
                self.layer.build((folded, *input_shape[2:]))
                self.layer.built = True
        finally:
            self.layer._leave_scope(outer)
        self.built = True

    def call(self, inputs, mask=None, training=None):
        batch, steps = inputs.shape[0], inputs.shape[1]
        kwargs = {} if training is None else {"training": training}
        takes_mask = "mask" in inspect.signature(type(self.layer).call).parameters
        if isinstance(self.layer, BatchNormalization):
            # statistics of each step's batch, as Keras's (which calls the layer per step)
            if not isinstance(steps, int):
                raise ValueError(
                    "TimeDistributed(BatchNormalization) needs the number of steps known when "
                    "tracing: it normalizes each step by its own batch's statistics"
                )
            return structure_ops.stack(
                [self.layer(inputs[:, t], **kwargs) for t in range(steps)], 1
            )
        folded = array_ops.reshape(inputs, (-1, *inputs.shape[2:]))
        if mask is not None and takes_mask:
            kwargs["mask"] = array_ops.reshape(mask, (-1,))
        outputs = self.layer(folded, **kwargs)
        if isinstance(batch, int) and isinstance(steps, int):
            return array_ops.reshape(outputs, (batch, steps, *outputs.shape[1:]))
        leading = array_ops.shape(inputs)[:2]  # known only when the function runs
        return array_ops.reshape(
            outputs, structure_ops.concat([leading, array_ops.shape(outputs)[1:]], 0)
        )

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask
