"""Keras's global pooling layers: the mean or maximum over each example's spatial axes
(GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
GlobalMaxPooling2D).

`data_format` is "channels_last" (the default: the channels are the last axis) or
"channels_first"; `keepdims=True` keeps the pooled axes with size 1.
"""

from tracer.keras.layers.layer import Layer
from tracer.keras.layers.reshaping import _data_format
from tracer.ops import math_ops
from tracer.ops.array_ops import cast, expand_dims
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ops.reduction_ops import reduce_max, reduce_mean


class _GlobalPooling(Layer):
    _rank = None  # the number of spatial axes
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)
        self.keepdims = bool(keepdims)

    def _spatial_axes(self):
        first = 2 if self.data_format == "channels_first" else 1
        return list(range(first, first + self._rank))

    def call(self, inputs):
        if inputs.ndim != self._rank + 2:
            raise ValueError(
                f"{type(self).__name__} takes inputs of rank {self._rank + 2}, not {inputs.shape}"
            )
        return type(self)._reduce(inputs, self._spatial_axes(), keepdims=self.keepdims)

    def get_config(self):
        return {**self._base_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps of each sequence; with `mask` (batch, steps), the mean of the
    steps it keeps, as Keras 3."""

    _rank = 1
    _reduce = staticmethod(reduce_mean)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        channel_axis = 1 if self.data_format == "channels_first" else 2
        keep = expand_dims(cast(as_tensor(mask), "bool"), channel_axis)
        axis = self._spatial_axes()
        total = reduce_sum(math_ops.where(keep, inputs, 0.0), axis, keepdims=self.keepdims)
        count = reduce_sum(cast(keep, inputs.dtype), axis, keepdims=self.keepdims)
        return total / count

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalAveragePooling2D(_GlobalPooling):
    """The mean over each image's height and width."""

    _rank = 2
    _reduce = staticmethod(reduce_mean)


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps of each sequence."""

    _rank = 1
    _reduce = staticmethod(reduce_max)


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over each image's height and width."""

    _rank = 2
    _reduce = staticmethod(reduce_max)


GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool1D = GlobalMaxPooling1D
GlobalMaxPool2D = GlobalMaxPooling2D
