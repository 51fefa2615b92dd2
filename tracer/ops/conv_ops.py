"""Convolution and pooling, TensorFlow's functions over the window primitives of
`tracer/ops/window_ops.py` (im2col and its transpose, the max selection and its transpose).

A convolution is one matmul of patches: each output position's window (the KH*KW taps of
C channels, zero padding included) is a row, and the filters reshaped to (KH*KW*C, C_out)
the other operand:

    conv2d(x, f) = reshape(extract_patches(x), (M, KH*KW*C)) @ reshape(f, (KH*KW*C, C_out))

so its gradient is two GEMMs and one col2im (`sum_patches`); `conv2d_transpose` is the
GEMM and the col2im alone. They are the primitives of tracer/ops/convolution_ops.py, which
run eagerly as one direct kernel each and compile as these products; a grouped convolution
is the products themselves, but for one filter per channel (`depthwise_conv2d`), which is
tracer/ops/depthwise_ops.py's primitives. Max pooling selects each window's first largest
element, and its gradient sends the cotangent there (TensorFlow's MaxPoolGrad); average
pooling sums each window (a depthwise convolution with taps of ones) and divides by the
number of input elements in it (TensorFlow's SAME divisor). 1-D convolution and pooling are the 2-D ones with an axis of size 1.

Gradients, of every order, come from the primitives'. Names, arguments and semantics are
TensorFlow's (`tf.nn.conv2d`, ...). NCHW/NCW inputs are transposed to channels-last and back.

>>> x = tt.ones((1, 4, 4, 2))
>>> tt.nn.conv2d(x, tt.ones((3, 3, 2, 5)), strides=1, padding="SAME").shape
TensorShape([1, 4, 4, 5])
>>> tt.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID").shape
TensorShape([1, 2, 2, 2])
"""

import numpy as np

from tracer.ir import dims, format_location, user_location
from tracer.ir.dims import Dim
from tracer.ops import array_ops, convolution_ops, depthwise_ops
from tracer.ops.convert import as_tensor, as_tensors
from tracer.ops.linalg_ops import matmul
from tracer.ops.window_ops import extract_patches as _patches
from tracer.ops.window_ops import window_attrs, window_max

# data_format -> (position of the channel axis, permutation to channels-last, and back)
_LAYOUTS = {
    "NHWC": (3, None, None),
    "NCHW": (1, (0, 2, 3, 1), (0, 3, 1, 2)),
    "NWC": (2, None, None),
    "NCW": (1, (0, 2, 1), (0, 2, 1)),
}
_PADDINGS = ("SAME", "VALID")


def _fail(error, function, message):
    """`error` for a bad argument of `tt.nn.<function>` (or of `tt.<module.function>`),
    naming the user's line."""
    where = format_location(user_location())
    qualified = f"tt.{function}" if "." in function else f"tt.nn.{function}"
    return error(f"{qualified}: {message}" + (f" (at {where})" if where else ""))


# --- arguments -----------------------------------------------------------------------------


def _check_layout(function, data_format, accepted):
    if data_format not in accepted:
        listed = " or ".join(repr(f) for f in accepted)
        raise _fail(ValueError, function, f"data_format must be {listed}, got {data_format!r}")
    return _LAYOUTS[data_format]


def _window_values(function, argument, value, rank, channel_axis, default=None):
    """The per-spatial-axis values of `strides`, `dilations` or `ksize`: an int, or a list of
    1, `rank` or `rank + 2` ints (the last holding 1 for the batch and channel axes), as
    TensorFlow takes them. All must be positive."""
    if value is None:
        value = default
    values = [value] if isinstance(value, (int, np.integer)) else value
    try:
        if isinstance(values, str) or any(isinstance(v, str) for v in values):
            raise TypeError
        values = [int(v) for v in values]
    except (TypeError, ValueError):
        raise _fail(
            TypeError, function, f"{argument} must be an int or a list of ints, got {value!r}"
        ) from None
    if len(values) == rank + 2:
        kept = [v for axis, v in enumerate(values) if axis not in (0, channel_axis)]
        if values[0] != 1 or values[channel_axis] != 1:
            raise _fail(
                ValueError,
                function,
                f"{argument} {values} must be 1 for the batch and channel axes",
            )
        values = kept
    elif len(values) == 1:
        values = values * rank
    elif len(values) != rank:
        raise _fail(
            ValueError,
            function,
            f"{argument} must be an int or a list of 1, {rank} or {rank + 2} ints, got {value!r}",
        )
    if any(v <= 0 for v in values):
        raise _fail(ValueError, function, f"{argument} must be positive, got {value!r}")
    return tuple(values)


def _padding(function, padding, rank, channel_axis, explicit=True):
    """'SAME', 'VALID', or (for explicit padding) a (before, after) pair per spatial axis."""
    if isinstance(padding, str):
        if padding not in _PADDINGS:
            raise _fail(ValueError, function, f"padding must be 'SAME' or 'VALID', got {padding!r}")
        return padding
    if not explicit:
        raise _fail(TypeError, function, f"padding must be 'SAME' or 'VALID', got {padding!r}")
    form = f"'SAME', 'VALID' or a list of {rank + 2} [before, after] pairs"
    try:
        pairs = [tuple(int(v) for v in pair) for pair in padding]
    except (TypeError, ValueError):
        pairs = []
    if len(pairs) != rank + 2 or any(len(pair) != 2 for pair in pairs):
        raise _fail(ValueError, function, f"padding must be {form}, got {padding!r}")
    if pairs[0] != (0, 0) or pairs[channel_axis] != (0, 0):
        raise _fail(
            ValueError,
            function,
            f"padding {padding!r} must be [0, 0] for the batch and channel axes",
        )
    if any(v < 0 for pair in pairs for v in pair):
        raise _fail(ValueError, function, f"padding must not be negative, got {padding!r}")
    return tuple(pair for axis, pair in enumerate(pairs) if axis not in (0, channel_axis))


def _geometry(function, sizes, kernel, strides, dilations, padding):
    """Per spatial axis: (pad before, pad after, output size)."""
    result = []
    for axis, (size, k, stride, dilation) in enumerate(zip(sizes, kernel, strides, dilations)):
        span = (k - 1) * dilation + 1
        if padding == "SAME":
            out = -(-size // stride)
            total = max((out - 1) * stride + span - size, 0)
            before, after = total // 2, total - total // 2
        else:
            before, after = (0, 0) if padding == "VALID" else padding[axis]
            padded = size + before + after
            if padded < span:
                raise _fail(
                    ValueError,
                    function,
                    f"the window spans {span} elements along spatial axis {axis}, more than "
                    f"the input's {size}" + (f" padded to {padded}" if padded != size else ""),
                )
            out = (padded - span) // stride + 1
        result.append((before, after, out))
    return result


def _spatial_input(function, x, rank, layout, floating=True):
    """Tensor `x` checked and transposed to channels-last; integers pass unless `floating`."""
    if x.ndim != rank + 2:
        raise _fail(
            ValueError,
            function,
            f"input must have rank {rank + 2} (batch, {rank} spatial, channels), got shape {x.shape}",
        )
    if not (x.dtype.is_floating or (x.dtype.is_integer and not floating)):
        kinds = "floating" if floating else "floating or integer"
        raise _fail(TypeError, function, f"input must be {kinds}, not {x.dtype.name}")
    _, to_last, _ = layout
    x = x if to_last is None else array_ops.transpose(x, to_last)
    if not dims.is_known(x.shape[1:]):
        raise _fail(
            ValueError,
            function,
            f"the spatial and channel sizes of the input must be known, got shape {x.shape}",
        )
    return x


def _channels_first_again(result, layout):
    _, _, back = layout
    return result if back is None else array_ops.transpose(result, back)


# --- windows -------------------------------------------------------------------------------


def _attrs(sizes, kernel, strides, dilations, geometry):
    """The window ops' attributes for a 2-D (or, with an axis of size 1 first, 1-D)
    geometry."""
    lead = (1,) * (2 - len(sizes))
    return window_attrs(
        lead + tuple(sizes),
        lead + tuple(out for _, _, out in geometry),
        lead + tuple(kernel),
        lead + tuple(strides),
        lead + tuple(dilations),
        (0,) * len(lead) + tuple(before for before, _, _ in geometry),
    )


def _image(x):
    """Channels-last `x` as a 2-D image: (N, W, C) gets an axis of size 1 for H."""
    return x if x.ndim == 4 else array_ops.expand_dims(x, 1)


def _valid_counts(sizes, kernel, strides, geometry, dtype):
    """How many input elements (not padding) each window holds, shaped (OH, OW, 1)."""
    counts = np.ones((), dtype=np.int64)
    for size, k, stride, (before, _, out) in zip(sizes, kernel, strides, geometry):
        starts = np.arange(out) * stride - before
        axis = np.minimum(starts + k, size) - np.maximum(starts, 0)
        counts = np.multiply.outer(counts, axis)
    return counts[..., None].astype(dtype.as_numpy_dtype)


# --- convolution ---------------------------------------------------------------------------


def _convolve(function, input, filters, strides, padding, data_format, dilations, rank):
    layout = _check_layout(function, data_format, ("NHWC", "NCHW") if rank == 2 else ("NWC", "NCW"))
    channel_axis = layout[0]
    x, f = as_tensors(as_tensor(input), filters)  # a list of filters takes the input's dtype
    x = _spatial_input(function, x, rank, layout, floating=False)
    if f.ndim != rank + 2:
        raise _fail(
            ValueError,
            function,
            f"filters must have rank {rank + 2} ({rank} spatial, in_channels, out_channels), "
            f"got shape {f.shape}",
        )
    if f.dtype != x.dtype:
        raise _fail(
            TypeError,
            function,
            f"input ({x.dtype.name}) and filters ({f.dtype.name}) must have the same dtype",
        )
    channels, group_channels, out_channels = x.shape[-1], f.shape[-2], f.shape[-1]
    groups = channels // group_channels if group_channels else 0
    if not groups or channels % group_channels or out_channels % groups:
        raise _fail(
            ValueError,
            function,
            f"the input's {channels} channels must be a multiple of the filters' in_channels "
            f"({group_channels}; a multiple gives a grouped convolution, whose groups must "
            f"divide out_channels {out_channels})",
        )
    strides = _window_values(function, "strides", strides, rank, channel_axis)
    dilations = _window_values(function, "dilations", dilations, rank, channel_axis, default=1)
    padding = _padding(function, padding, rank, channel_axis)
    kernel = f.shape[:rank]
    geometry = _geometry(function, x.shape[1:-1], kernel, strides, dilations, padding)
    attrs = _attrs(x.shape[1:-1], kernel, strides, dilations, geometry)
    out_shape = (x.shape[0], *(out for _, _, out in geometry), out_channels)
    if groups == 1:
        if rank == 1:  # filters (KW, C, M) as (1, KW, C, M)
            f = array_ops.reshape(f, (*attrs["kernel"], channels, out_channels))
        result = convolution_ops.conv2d(_image(x), f, attrs)
    elif group_channels == 1 and out_channels == channels:
        filters = array_ops.reshape(f, (*attrs["kernel"], channels))
        result = depthwise_ops.depthwise_conv2d(_image(x), filters, attrs)
    else:
        patches = _patches(_image(x), attrs)
        rows, taps = dims.size(out_shape[:-1]), dims.size(kernel)
        result = _grouped_product(patches, f, rows, taps, groups)
    if tuple(result.shape) != out_shape:
        result = array_ops.reshape(result, out_shape)
    return _channels_first_again(result, layout)


def _grouped_product(patches, f, rows, taps, groups):
    """One batched matmul over the groups: group g reads input channels [g*Cg, (g+1)*Cg) and
    makes output channels [g*Og, (g+1)*Og), as TensorFlow's grouped convolution."""
    group_channels, out_channels = f.shape[-2], f.shape[-1]
    per_group = out_channels // groups
    columns = array_ops.reshape(patches, (rows, taps, groups, group_channels))
    columns = array_ops.reshape(
        array_ops.transpose(columns, (2, 0, 1, 3)), (groups, rows, taps * group_channels)
    )
    weights = array_ops.reshape(f, (taps * group_channels, groups, per_group))
    product = matmul(columns, array_ops.transpose(weights, (1, 0, 2)))  # (G, rows, per_group)
    return array_ops.reshape(array_ops.transpose(product, (1, 0, 2)), (rows, out_channels))


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """The 2-D convolution (cross-correlation) of `input` (N, H, W, C), or (N, C, H, W) for
    NCHW, with `filters` (KH, KW, C_in, C_out), as `tf.nn.conv2d`.

    `strides` and `dilations`: an int or a list of 1, 2 or 4 ints; `padding`: 'SAME', 'VALID'
    or explicit [[0, 0], [top, bottom], [left, right], [0, 0]] (in data_format's order). An
    input with a multiple of C_in channels is a grouped convolution.

    An input of rank 5 or more is `batch_shape + [H, W, C]` (or `batch_shape + [C, H, W]`),
    as in TensorFlow: its batch axes are flattened into one and restored after.

    >>> tt.nn.conv2d(tt.ones((2, 5, 5, 3)), tt.ones((3, 3, 3, 4)), 2, "VALID").shape
    TensorShape([2, 2, 2, 4])
    """
    x = as_tensor(input)
    if x.ndim <= 4:
        return _convolve("conv2d", x, filters, strides, padding, data_format, dilations, rank=2)
    batch = tuple(x.shape[:-3])
    flat = array_ops.reshape(x, (-1, *x.shape[-3:]))
    result = _convolve("conv2d", flat, filters, strides, padding, data_format, dilations, rank=2)
    return array_ops.reshape(result, (*batch, *result.shape[1:]))


def conv2d_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """The transpose of `conv2d` (its gradient with respect to its input, a "deconvolution"),
    as `tf.nn.conv2d_transpose`: `input` (N, H, W, C_in), `filters` (KH, KW, C_out, C_in),
    a result of `output_shape` (N, OH, OW, C_out); both in data_format's order. `strides`,
    `padding` and `dilations` are those of the conv2d it transposes, whose input has
    `output_shape`.

    Each input row times the filters gives every tap's contribution, and each output
    element sums the contributions that land on it: `conv2d`'s input gradient.

    >>> tt.nn.conv2d_transpose(tt.ones((1, 2, 2, 3)), tt.ones((3, 3, 4, 3)), (1, 4, 4, 4), 2).shape
    TensorShape([1, 4, 4, 4])
    """
    function = "conv2d_transpose"
    layout = _check_layout(function, data_format, ("NHWC", "NCHW"))
    channel_axis, to_last, _ = layout
    y, f = as_tensors(as_tensor(input), filters)
    y = _spatial_input(function, y, 2, layout)
    if f.ndim != 4 or f.dtype != y.dtype or f.shape[3] != y.shape[3]:
        raise _fail(
            ValueError if f.dtype == y.dtype else TypeError,
            function,
            f"filters must be (KH, KW, C_out, C_in) of the input's dtype with C_in its "
            f"{y.shape[3]} channels; got shape {f.shape} ({f.dtype.name}) for an input of "
            f"{y.dtype.name}",
        )
    wanted = _output_shape(function, output_shape, to_last)
    if wanted[0] != y.shape[0] or wanted[3] != f.shape[2]:
        raise _fail(
            ValueError,
            function,
            f"output_shape {tuple(output_shape)} must have the input's batch ({y.shape[0]}) "
            f"and the filters' C_out ({f.shape[2]}) channels",
        )
    strides = _window_values(function, "strides", strides, 2, channel_axis)
    dilations = _window_values(function, "dilations", dilations, 2, channel_axis, default=1)
    padding = _padding(function, padding, 2, channel_axis)
    kernel = f.shape[:2]
    geometry = _geometry(function, wanted[1:3], kernel, strides, dilations, padding)
    if tuple(out for _, _, out in geometry) != tuple(y.shape[1:3]):
        raise _fail(
            ValueError,
            function,
            f"a conv2d of output_shape {tuple(output_shape)} makes spatial sizes "
            f"{tuple(out for _, _, out in geometry)}, not the input's {tuple(y.shape[1:3])}",
        )
    attrs = _attrs(wanted[1:3], kernel, strides, dilations, geometry)
    result = convolution_ops.conv2d_backprop_input(y, f, attrs)
    return _channels_first_again(result, layout)


def _output_shape(function, output_shape, to_last):
    """`output_shape` as 4 sizes, channels-last: ints, and the batch may be a size known only
    when the function runs (the input's own, as a Keras layer passes it)."""
    if hasattr(output_shape, "numpy"):
        output_shape = output_shape.numpy()
    sizes = list(output_shape) if isinstance(output_shape, (list, tuple)) else None
    try:
        if sizes is None:
            sizes = np.asarray(output_shape).reshape(-1).tolist()
        shape = tuple(d if isinstance(d, Dim) else int(d) for d in sizes)
    except (TypeError, ValueError):
        shape = ()
    batch_axis = 0 if to_last is None else to_last[0]
    spatial = [d for k, d in enumerate(shape) if k != batch_axis]
    if len(shape) != 4 or any(not isinstance(d, int) or d < 0 for d in spatial):
        raise _fail(ValueError, function, f"output_shape must be 4 sizes, got {output_shape!r}")
    return shape if to_last is None else tuple(shape[k] for k in to_last)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Each window of `images` (N, H, W, C) as one row of its elements, as
    `tf.image.extract_patches`: the result is (N, OH, OW, KH*KW*C), the window's rows, then
    its columns, then the channels; `sizes` (KH, KW), `strides` and `rates` (dilations) are
    an int or a list of 1, 2 or 4 ints, `padding` 'SAME' (zeros) or 'VALID'.

    >>> images = tt.reshape(tt.range(1, 17), (1, 4, 4, 1))
    >>> tt.image.extract_patches(images, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")[0, 0, 1].numpy()
    array([3, 4, 7, 8], dtype=int32)
    """
    function = "image.extract_patches"
    layout = _LAYOUTS["NHWC"]
    x = _spatial_input(function, as_tensor(images), 2, layout, floating=False)
    kernel = _window_values(function, "sizes", sizes, 2, 3)
    strides = _window_values(function, "strides", strides, 2, 3)
    rates = _window_values(function, "rates", rates, 2, 3)
    padding = _padding(function, padding, 2, 3, explicit=False)
    geometry = _geometry(function, x.shape[1:-1], kernel, strides, rates, padding)
    return _patches(x, _attrs(x.shape[1:-1], kernel, strides, rates, geometry))


def depthwise_conv2d(
    input, filter, strides, padding, data_format="NHWC", dilations=None, name=None
):
    """Each input channel convolved with its own `channel_multiplier` filters, as
    `tf.nn.depthwise_conv2d`: `filter` is (KH, KW, C, M) and output channel c * M + m is input
    channel c convolved with filter[:, :, c, m]. A grouped convolution with one group per
    input channel.

    >>> tt.nn.depthwise_conv2d(tt.ones((1, 4, 4, 3)), tt.ones((3, 3, 3, 2)), 1, "SAME").shape
    TensorShape([1, 4, 4, 6])
    """
    f = as_tensor(filter)
    if f.ndim != 4:
        raise _fail(
            ValueError,
            "depthwise_conv2d",
            f"filter must have rank 4 (KH, KW, in_channels, channel_multiplier), got {f.shape}",
        )
    kh, kw, channels, multiplier = f.shape
    grouped = array_ops.reshape(f, (kh, kw, 1, channels * multiplier))
    return _convolve(
        "depthwise_conv2d", input, grouped, strides, padding, data_format, dilations, rank=2
    )


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """The 1-D convolution of `input` (N, W, C), or (N, C, W) for NCW, with `filters`
    (KW, C_in, C_out), as `tf.nn.conv1d`; `padding` is 'SAME' or 'VALID'.

    >>> tt.nn.conv1d(tt.ones((2, 9, 3)), tt.ones((3, 3, 4)), 2, "SAME").shape
    TensorShape([2, 5, 4])
    """
    padding = _padding("conv1d", padding, 1, 1, explicit=False)
    return _convolve("conv1d", input, filters, stride, padding, data_format, dilations, rank=1)


# --- pooling -------------------------------------------------------------------------------


def _pool_windows(function, input, ksize, strides, padding, data_format, maximum):
    """The channels-last input, window sizes, strides and geometry of a 2-D pooling; max
    pooling (`maximum`) also takes integers and explicit padding, as TensorFlow's."""
    layout = _check_layout(function, data_format, ("NHWC", "NCHW"))
    channel_axis = layout[0]
    x = _spatial_input(function, as_tensor(input), 2, layout, floating=not maximum)
    ksize = _window_values(function, "ksize", ksize, 2, channel_axis)
    strides = _window_values(function, "strides", strides, 2, channel_axis)
    padding = _padding(function, padding, 2, channel_axis, explicit=maximum)
    if not isinstance(padding, str) and any(max(pair) >= k for pair, k in zip(padding, ksize)):
        raise _fail(
            ValueError,
            function,
            f"explicit padding {list(padding)} must be smaller than the window {list(ksize)}",
        )
    geometry = _geometry(function, x.shape[1:-1], ksize, strides, (1, 1), padding)
    return x, ksize, strides, geometry, layout


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The maximum over each window, as `tf.nn.max_pool2d`; `padding` may be explicit.

    Padding never wins: the maximum, and where a tie's gradient goes (the window's first
    maximum, row-major, as TensorFlow's MaxPoolGrad), are those of the window's input
    elements alone, -inf and integers included; a NaN is the maximum of its window.

    >>> x = tt.constant([[1.0, 3.0], [3.0, 2.0]])[None, :, :, None]
    >>> tt.nn.max_pool2d(x, 2, 1, "VALID").numpy().ravel()
    array([3.], dtype=float32)
    """
    x, ksize, strides, geometry, layout = _pool_windows(
        "max_pool2d", input, ksize, strides, padding, data_format, maximum=True
    )
    attrs = _attrs(x.shape[1:-1], ksize, strides, (1, 1), geometry)
    return _channels_first_again(window_max(x, attrs), layout)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The mean over each window, as `tf.nn.avg_pool2d`: with 'SAME' padding a window is
    divided by the number of input elements it holds, not by its size.

    >>> x = tt.reshape(tt.range(9.0), (1, 3, 3, 1))
    >>> tt.nn.avg_pool2d(x, 2, 1, "SAME").numpy().ravel()
    array([2. , 3. , 3.5, 5. , 6. , 6.5, 6.5, 7.5, 8. ], dtype=float32)
    """
    x, ksize, strides, geometry, layout = _pool_windows(
        "avg_pool2d", input, ksize, strides, padding, data_format, maximum=False
    )
    attrs = _attrs(x.shape[1:-1], ksize, strides, (1, 1), geometry)
    # each window's sum is a depthwise convolution with taps of ones: the same additions, in
    # the taps' order, without the patches in memory
    ones = np.ones((*attrs["kernel"], x.shape[3]), x.dtype.as_numpy_dtype)
    total = depthwise_ops.depthwise_conv2d(x, as_tensor(ones), attrs)
    counts = _valid_counts(x.shape[1:-1], ksize, strides, geometry, x.dtype)
    if counts.size and (counts == counts.flat[0]).all():
        counts = float(counts.flat[0])  # every window is whole: one scalar divisor
    return _channels_first_again(total / counts, layout)


def _by_rank(function, pool2d, input, ksize, strides, padding, data_format):
    """`tf.nn.max_pool`/`avg_pool` for 1-D (N, W, C) and 2-D inputs: 1-D pooling is 2-D
    pooling of the input with an axis of size 1 inserted before W."""
    x = as_tensor(input)
    if x.ndim == 4:
        return pool2d(x, ksize, strides, padding, data_format or "NHWC")
    if x.ndim != 3:
        raise _fail(
            ValueError, function, f"input must have rank 3 or 4 (1-D or 2-D pooling), got {x.shape}"
        )
    data_format = data_format or "NWC"
    channel_axis = _check_layout(function, data_format, ("NWC", "NCW"))[0]
    new_axis = 1 if data_format == "NWC" else 2
    ksize = (1,) + _window_values(function, "ksize", ksize, 1, channel_axis)
    strides = (1,) + _window_values(function, "strides", strides, 1, channel_axis)
    if not isinstance(padding, str):
        (pair,) = _padding(function, padding, 1, channel_axis)
        padding = [[0, 0]] * 4
        padding[new_axis + 1] = list(pair)
    wide = array_ops.expand_dims(x, new_axis)
    pooled = pool2d(wide, ksize, strides, padding, "NHWC" if data_format == "NWC" else "NCHW")
    return array_ops.squeeze(pooled, new_axis)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    """`tf.nn.max_pool` for rank-3 (1-D pooling) and rank-4 (2-D) inputs."""
    return _by_rank("max_pool", max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    """`tf.nn.avg_pool` for rank-3 (1-D pooling) and rank-4 (2-D) inputs."""
    return _by_rank("avg_pool", avg_pool2d, input, ksize, strides, padding, data_format)
