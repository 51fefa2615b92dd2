"""Keras's 2-D convolution, max and average pooling layers, over `tt.nn.conv2d`,
`tt.nn.max_pool2d` and `tt.nn.avg_pool2d`."""

from tracer import nn
from tracer.keras import activations
from tracer.keras.layers.layer import Layer
from tracer.ops import math_ops
from tracer.ops.array_ops import reshape

_DATA_FORMATS = {None: "NHWC", "channels_last": "NHWC", "channels_first": "NCHW"}
_PADDINGS = {"valid": "VALID", "same": "SAME"}


def _pair(value, what):
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(f"{what} must be a positive int or a pair of them, not {value!r}")
    return values


def _option(table, value, what):
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        names = ", ".join(repr(k) for k in table if k)
        raise ValueError(f"{what} must be one of {names}, not {value!r}")
    return table[key]


class Conv2D(Layer):
    """`activation(conv2d(inputs, kernel) + bias)`; the kernel is (height, width, input
    channels, filters), Glorot-uniform by default, as in Keras."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _option(_PADDINGS, padding, "padding")
        self.data_format = _option(_DATA_FORMATS, data_format, "data_format")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        channels = input_shape[-1] if self.data_format == "NHWC" else input_shape[1]
        self.kernel = self.add_weight(
            "kernel",
            (*self.kernel_size, channels, self.filters),
            initializer=self.kernel_initializer,
        )
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer)
        self.built = True

    def call(self, inputs):
        y = nn.conv2d(
            inputs,
            self.kernel,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilations=self.dilation_rate,
        )
        if self.use_bias:
            bias = self.bias if self.data_format == "NHWC" else reshape(self.bias, (-1, 1, 1))
            y = math_ops.add(y, bias)
        return activations.applied(self.activation, y)


class _Pooling2D(Layer):
    """A pooling of each `pool_size` window, moved by `strides` (`pool_size` by default),
    by `_pool` (tt.nn's max_pool2d or avg_pool2d)."""

    _pool = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _option(_PADDINGS, padding, "padding")
        self.data_format = _option(_DATA_FORMATS, data_format, "data_format")

    def call(self, inputs):
        return type(self)._pool(
            inputs, self.pool_size, self.strides, self.padding, data_format=self.data_format
        )


class MaxPooling2D(_Pooling2D):
    """The maximum of each `pool_size` window, moved by `strides` (`pool_size` by default)."""

    _pool = staticmethod(nn.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """The mean of each `pool_size` window, moved by `strides` (`pool_size` by default); with
    padding "same", the mean of the window's values inside the image (TensorFlow's
    avg_pool, as Keras 3 uses)."""

    _pool = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        # Keras 3's AveragePooling2D, unlike its MaxPooling2D, has no default pool_size
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


Convolution2D = Conv2D
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
