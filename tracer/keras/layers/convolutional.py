"""Keras's convolution, max and average pooling layers, over `tt.nn.conv1d`, `tt.nn.conv2d`,
`tt.nn.conv1d_transpose`, `tt.nn.conv2d_transpose`, `tt.nn.depthwise_conv2d`, and tt.nn's
max and average pools.

The 1-D layers, the transposed convolutions and DepthwiseConv2D take channels-last inputs
only."""

from tracer import nn
from tracer.keras import activations
from tracer.keras.layers.layer import Layer
from tracer.ops import math_ops
from tracer.ops.array_ops import reshape
from tracer.ops.layout_ops import pad

_DATA_FORMATS = {None: "NHWC", "channels_last": "NHWC", "channels_first": "NCHW"}
_CHANNELS_LAST_2D = {None: "NHWC", "channels_last": "NHWC"}
_CHANNELS_LAST_1D = {None: "NWC", "channels_last": "NWC"}
_PADDINGS = {"valid": "VALID", "same": "SAME"}
# "causal": zeros before each sequence only, so step t sees steps <= t (Keras's Conv1D)
_PADDINGS_1D = {**_PADDINGS, "causal": "CAUSAL"}


def _pair(value, what):
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(f"{what} must be a positive int or a pair of them, not {value!r}")
    return values


def _single(value, what):
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) != 1 or not isinstance(values[0], int) or values[0] <= 0:
        raise ValueError(f"{what} must be a positive int or a tuple of one, not {value!r}")
    return values


def _groups(groups, filters):
    """Keras's `groups` of a convolution: a positive int that divides `filters`."""
    if not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"groups must be a positive int, not {groups!r}")
    if filters % groups:
        raise ValueError(
            f"the number of filters ({filters}) must be a multiple of groups ({groups})"
        )
    return groups


def _option(table, value, what):
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        names = ", ".join(repr(k) for k in table if k)
        raise ValueError(f"{what} must be one of {names}, not {value!r}")
    return table[key]


class _Convolution(Layer):
    """What the convolution layers share: their Keras arguments (sizes read by `sizes`,
    `_pair` or `_single`; the paddings and data formats the layer takes), and the bias and
    activation applied to the convolution."""

    def _configure(self, sizes, paddings, formats, kernel_size, strides, padding, data_format,
                   dilation_rate, activation, use_bias, bias_initializer):  # fmt: skip
        self.kernel_size = sizes(kernel_size, "kernel_size")
        self.strides = sizes(strides, "strides")
        self.padding = _option(paddings, padding, "padding")
        self.data_format = _option(formats, data_format, "data_format")
        self.dilation_rate = sizes(dilation_rate, "dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def _convolved(self, convolution, inputs, kernel):
        """`convolution` (a tt.nn convolution) of `inputs` by `kernel` with the layer's
        strides, padding, data format and dilations."""
        return convolution(
            inputs,
            kernel,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilations=self.dilation_rate,
        )

    def _grouped_kernel(self, kernel_size, channels):
        """The kernel of a convolution of `channels` input channels in `self.groups` groups:
        (*kernel_size, channels / groups, filters), each group's filters seeing only its
        channels (tt.nn's convolutions group by the kernel's input channels)."""
        if channels % self.groups:
            raise ValueError(
                f"{type(self).__name__}: the input's {channels} channels must be a multiple "
                f"of groups ({self.groups})"
            )
        shape = (*kernel_size, channels // self.groups, self.filters)
        self.kernel = self.add_weight("kernel", shape, initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer)
        self.built = True

    def _finished(self, y, bias=None):
        """`activation(y + bias)`, the bias the layer's own unless given (reshaped)."""
        if self.use_bias:
            y = math_ops.add(y, self.bias if bias is None else bias)
        return activations.applied(self.activation, y)


class Conv2D(_Convolution):
    """`activation(conv2d(inputs, kernel) + bias)`; the kernel is (height, width, input
    channels / groups, filters), Glorot-uniform by default, as in Keras. With `groups` > 1
    the channels are cut into that many groups, each convolved with its share of the
    filters (output channels `g * filters / groups` onwards come from group g)."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        groups=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.groups = _groups(groups, self.filters)
        self.kernel_initializer = kernel_initializer
        self._configure(_pair, _PADDINGS, _DATA_FORMATS, kernel_size, strides, padding,
                        data_format, dilation_rate, activation, use_bias, bias_initializer)  # fmt: skip

    def build(self, input_shape):
        channels = input_shape[-1] if self.data_format == "NHWC" else input_shape[1]
        self._grouped_kernel(self.kernel_size, channels)

    def call(self, inputs):
        y = self._convolved(nn.conv2d, inputs, self.kernel)
        channels_first = self.use_bias and self.data_format != "NHWC"
        return self._finished(y, reshape(self.bias, (-1, 1, 1)) if channels_first else None)


class Conv1D(_Convolution):
    """`activation(conv1d(inputs, kernel) + bias)` over (batch, steps, channels); the kernel is
    (width, input channels / groups, filters), as in Keras (`groups` as Conv2D's). Padding
    "causal" puts `dilation_rate * (kernel_size - 1)` zeros before each sequence, then
    convolves "valid"."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.groups = _groups(groups, self.filters)
        self.kernel_initializer = kernel_initializer
        self._configure(_single, _PADDINGS_1D, _CHANNELS_LAST_1D, kernel_size, strides, padding,
                        data_format, dilation_rate, activation, use_bias, bias_initializer)  # fmt: skip

    def build(self, input_shape):
        self._grouped_kernel(self.kernel_size, input_shape[-1])

    def call(self, inputs):
        padding = self.padding
        if padding == "CAUSAL":
            before = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs, padding = pad(inputs, [[0, 0], [before, 0], [0, 0]]), "VALID"
        y = nn.conv1d(
            inputs,
            self.kernel,
            stride=self.strides,
            padding=padding,
            data_format=self.data_format,
            dilations=self.dilation_rate,
        )
        return self._finished(y)


class _ConvolutionTranspose(_Convolution):
    """What Conv2DTranspose and Conv1DTranspose share: a kernel of (*kernel_size, filters,
    input channels), as Keras's, and Keras's output size along each spatial axis: without
    `output_padding`, `size * stride` with padding "same" and
    `size * stride + max(dilated kernel - stride, 0)` with "valid"; with it,
    `(size - 1) * stride + dilated kernel % 2 + output_padding` ("same") or
    `(size - 1) * stride + dilated kernel + output_padding` ("valid")."""

    _sizes = _FORMATS = None  # the rank's `_pair` or `_single`, its data formats

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.kernel_initializer = kernel_initializer
        self._configure(type(self)._sizes, _PADDINGS, type(self)._FORMATS, kernel_size, strides, padding,
                        data_format, dilation_rate, activation, use_bias, bias_initializer)  # fmt: skip
        self.output_padding = None
        if output_padding is not None:
            self.output_padding = _output_padding(output_padding, self.strides)

    def build(self, input_shape):
        self.kernel = self.add_weight(
            "kernel",
            (*self.kernel_size, self.filters, input_shape[-1]),
            initializer=self.kernel_initializer,
        )
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer)
        self.built = True

    def _output_size(self, size, axis):
        kernel, stride = self.kernel_size[axis], self.strides[axis]
        dilated = kernel + (kernel - 1) * (self.dilation_rate[axis] - 1)
        extra = None if self.output_padding is None else self.output_padding[axis]
        if self.padding == "SAME":
            return size * stride if extra is None else (size - 1) * stride + dilated % 2 + extra
        if extra is None:
            extra = max(stride - dilated, 0)
        return (size - 1) * stride + dilated + extra


def _output_padding(value, strides):
    """Keras's `output_padding`: per spatial axis a non-negative int below its stride."""
    values = (value,) * len(strides) if isinstance(value, int) else tuple(value)
    if len(values) != len(strides) or not all(isinstance(v, int) and v >= 0 for v in values):
        raise ValueError(
            f"output_padding must be a non-negative int or {len(strides)} of them, not {value!r}"
        )
    if any(v >= stride for v, stride in zip(values, strides)):
        raise ValueError(
            f"output_padding {values} must be less than the strides {strides} on every axis"
        )
    return values


class Conv2DTranspose(_ConvolutionTranspose):
    """`activation(conv2d_transpose(inputs, kernel) + bias)`: the kernel is (height, width,
    filters, input channels), as in Keras; output sizes as `_ConvolutionTranspose` says."""

    _sizes = staticmethod(_pair)
    _FORMATS = _CHANNELS_LAST_2D

    def call(self, inputs):
        batch, height, width = inputs.shape[:3]
        output_shape = (
            batch,
            self._output_size(height, 0),
            self._output_size(width, 1),
            self.filters,
        )
        y = nn.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilations=self.dilation_rate,
        )
        return self._finished(y)


class Conv1DTranspose(_ConvolutionTranspose):
    """`activation(conv1d_transpose(inputs, kernel) + bias)` over (batch, steps, channels):
    the kernel is (width, filters, input channels), as in Keras; output sizes as
    `_ConvolutionTranspose` says."""

    _sizes = staticmethod(_single)
    _FORMATS = _CHANNELS_LAST_1D

    def call(self, inputs):
        batch, steps = inputs.shape[:2]
        y = nn.conv1d_transpose(
            inputs,
            self.kernel,
            (batch, self._output_size(steps, 0), self.filters),
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilations=self.dilation_rate,
        )
        return self._finished(y)


class DepthwiseConv2D(_Convolution):
    """`activation(depthwise_conv2d(inputs, kernel) + bias)`: each input channel convolved
    with its own `depth_multiplier` filters; the kernel is (height, width, input channels,
    depth_multiplier) and output channel `c * depth_multiplier + m` comes from input channel
    c, as in Keras (whose config calls the kernel's initializer `depthwise_initializer`)."""

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self._configure(_pair, _PADDINGS, _CHANNELS_LAST_2D, kernel_size, strides, padding,
                        data_format, dilation_rate, activation, use_bias, bias_initializer)  # fmt: skip

    def build(self, input_shape):
        channels = input_shape[-1]
        self.kernel = self.add_weight(
            "kernel",
            (*self.kernel_size, channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", (channels * self.depth_multiplier,), initializer=self.bias_initializer
            )
        self.built = True

    def call(self, inputs):
        y = self._convolved(nn.depthwise_conv2d, inputs, self.kernel)
        return self._finished(y)


class SeparableConv2D(_Convolution):
    """`activation(conv2d(depthwise_conv2d(inputs, depthwise_kernel), pointwise_kernel) +
    bias)`: each input channel convolved with its own `depth_multiplier` filters (strides and
    dilations apply here), then a 1 x 1 convolution to `filters` channels, as Keras's; the
    depthwise kernel is (height, width, input channels, depth_multiplier), the pointwise one
    (1, 1, input channels * depth_multiplier, filters)."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters, self.depth_multiplier = int(filters), int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self._configure(_pair, _PADDINGS, _CHANNELS_LAST_2D, kernel_size, strides, padding,
                        data_format, dilation_rate, activation, use_bias, bias_initializer)  # fmt: skip
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape):
        channels = input_shape[-1]
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            (*self.kernel_size, channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            (1, 1, channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer,
        )
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), initializer=self.bias_initializer)
        self.built = True

    def call(self, inputs):
        depthwise = self._convolved(nn.depthwise_conv2d, inputs, self.depthwise_kernel)
        y = nn.conv2d(depthwise, self.pointwise_kernel, strides=1, padding="VALID")
        return self._finished(y)


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


class _Pooling1D(Layer):
    """A pooling of each `pool_size` window of (batch, steps, channels), moved by `strides`
    (`pool_size` by default), by `_pool` (tt.nn's max_pool or avg_pool)."""

    _pool = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _single(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _single(strides, "strides")
        self.padding = _option(_PADDINGS, padding, "padding")
        self.data_format = _option(_CHANNELS_LAST_1D, data_format, "data_format")

    def call(self, inputs):
        return type(self)._pool(
            inputs, self.pool_size, self.strides, self.padding, data_format=self.data_format
        )


class MaxPooling1D(_Pooling1D):
    """The maximum of each `pool_size` window of steps, moved by `strides` (`pool_size` by
    default)."""

    _pool = staticmethod(nn.max_pool)


class AveragePooling1D(_Pooling1D):
    """The mean of each `pool_size` window of steps, moved by `strides` (`pool_size` by
    default); with padding "same", the mean of the window's steps inside the sequence."""

    _pool = staticmethod(nn.avg_pool)

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        # Keras 3's AveragePooling1D, unlike its MaxPooling1D, has no default pool_size
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
