"""Keras's autocasting: the weights of a mixed-precision layer read in its compute dtype.

Under a mixed policy (`"mixed_float16"`) a layer keeps its weights in float32 and computes
in float16. Keras does this without touching the layers' code: while such a layer's `call`
runs, every weight made with `autocast=True` (the default) is read cast to float16, so
`matmul(inputs, self.kernel)` multiplies float16 by float16; the weight itself stays
float32, and the gradient flows back through the cast to it in float32.

tracer does the same with `AutocastVariable`, the Variable `add_weight` makes for such a
layer, whose read casts to the dtype of the innermost layer call in progress
(`reading`, which `Layer.__call__` sets through `calling`). Only those weights are of this
class: a layer without a mixed policy makes plain Variables, read as before, at no cost.

>>> tt.keras.mixed_precision.set_global_policy("mixed_float16")
>>> dense = tt.keras.layers.Dense(2)
>>> dense(tt.ones((1, 3))).dtype, dense.kernel.dtype
(tt.float16, tt.float32)
>>> tt.keras.mixed_precision.set_global_policy("float32")
"""

from tracer.ops.array_ops import cast
from tracer.variable import Variable

# the dtype the AutocastVariables read now are cast to: the compute dtype of the innermost
# layer call in progress when its policy is mixed, else None (Keras's AutocastScope)
reading = [None]


class AutocastVariable(Variable):
    """A mixed-precision layer's weight: a float32 Variable, read in the compute dtype of
    the layer call in progress (float16 in a `"mixed_float16"` layer's `call`), and in its
    own dtype everywhere else (the optimizer's update, `numpy()`, a checkpoint)."""

    __slots__ = ()

    def _read(self):
        tensor = Variable._read(self)
        dtype = reading[0]
        if dtype is None or dtype is tensor.dtype:
            return tensor
        return cast(tensor, dtype)


def calling(layer, dtype, inputs, args, kwargs):
    """`layer.call(inputs, *args, **kwargs)` with AutocastVariables read in `dtype` (None:
    in their own dtype, as in a layer without a mixed policy called inside one that has
    it), then as before."""
    outer = reading[0]
    reading[0] = dtype
    try:
        return layer.call(inputs, *args, **kwargs)
    finally:
        reading[0] = outer
