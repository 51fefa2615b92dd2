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
number of input elements in it (TensorFlow's SAME divisor). 1-D convolution and pooling are
the 2-D ones with an axis of size 1; a 3-D convolution is a 2-D one of depth slices stacked
along the channels, and 3-D pooling a 2-D pooling over height and width, then one over depth.

Gradients, of every order, come from the primitives'. Names, arguments and semantics are
TensorFlow's (`tf.nn.conv2d`, ...). NCHW/NCW/NCDHW inputs are transposed to channels-last and
back.

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
from tracer.ops.layout_ops import pad
from tracer.ops.linalg_ops import matmul
from tracer.ops.math_ops import add_n
from tracer.ops.structure_ops import concat
from tracer.ops.window_ops import extract_patches as _patches
from tracer.ops.window_ops import window_attrs, window_max

# data_format -> (position of the channel axis, permutation to channels-last, and back)
_LAYOUTS = {
    "NHWC": (3, None, None),
    "NCHW": (1, (0, 2, 3, 1), (0, 3, 1, 2)),
    "NWC": (2, None, None),
    "NCW": (1, (0, 2, 1), (0, 2, 1)),
    "NDHWC": (4, None, None),
    "NCDHW": (1, (0, 2, 3, 4, 1), (0, 4, 1, 2, 3)),
}
# by spatial rank, the channels-last and the channels-first layout
_LAYOUT_NAMES = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
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
    args = _transposed(
        function, input, filters, output_shape, strides, padding, data_format, dilations, 2
    )
    y, f, wanted, strides, dilations, _, geometry, layout = args
    attrs = _attrs(wanted[1:3], f.shape[:2], strides, dilations, geometry)
    result = convolution_ops.conv2d_backprop_input(y, f, attrs)
    return _channels_first_again(result, layout)


def _transposed(
    function, input, filters, output_shape, strides, padding, data_format, dilations, rank
):
    """The checked arguments of the transpose of a `rank`-D convolution: the channels-last
    input, the filters (K..., C_out, C_in), the output shape (channels-last), the strides,
    dilations, padding and geometry (`_geometry`) of the spatial axes, and the layout. SAME and VALID padding only
    for 1-D and 3-D, as TensorFlow's."""
    layout = _check_layout(function, data_format, _LAYOUT_NAMES[rank])
    channel_axis, to_last, _ = layout
    y, f = as_tensors(as_tensor(input), filters)
    y = _spatial_input(function, y, rank, layout)
    if f.ndim != rank + 2 or f.dtype != y.dtype or f.shape[-1] != y.shape[-1]:
        kernel = ("KD, KH, KW", "KH, KW", "KW")[3 - rank]
        raise _fail(
            ValueError if f.dtype == y.dtype else TypeError,
            function,
            f"filters must be ({kernel}, C_out, C_in) of the input's dtype with C_in its "
            f"{y.shape[-1]} channels; got shape {f.shape} ({f.dtype.name}) for an input of "
            f"{y.dtype.name}",
        )
    wanted = _output_shape(function, output_shape, to_last, rank)
    if wanted[0] != y.shape[0] or wanted[-1] != f.shape[-2]:
        raise _fail(
            ValueError,
            function,
            f"output_shape {tuple(output_shape)} must have the input's batch ({y.shape[0]}) "
            f"and the filters' C_out ({f.shape[-2]}) channels",
        )
    strides = _window_values(function, "strides", strides, rank, channel_axis)
    dilations = _window_values(function, "dilations", dilations, rank, channel_axis, default=1)
    padding = _padding(function, padding, rank, channel_axis, explicit=rank == 2)
    geometry = _geometry(function, wanted[1:-1], f.shape[:rank], strides, dilations, padding)
    if tuple(out for _, _, out in geometry) != tuple(y.shape[1:-1]):
        raise _fail(
            ValueError,
            function,
            f"a convolution of output_shape {tuple(output_shape)} makes spatial sizes "
            f"{tuple(out for _, _, out in geometry)}, not the input's {tuple(y.shape[1:-1])}",
        )
    return y, f, wanted, strides, dilations, padding, geometry, layout


def _output_shape(function, output_shape, to_last, rank=2):
    """`output_shape` as `rank` + 2 sizes, channels-last: ints, and the batch may be a size
    known only when the function runs (the input's own, as a Keras layer passes it)."""
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
    if len(shape) != rank + 2 or any(not isinstance(d, int) or d < 0 for d in spatial):
        raise _fail(
            ValueError, function, f"output_shape must be {rank + 2} sizes, got {output_shape!r}"
        )
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


def conv1d_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NWC",
    dilations=None,
    name=None,
):
    """The transpose of `conv1d` (its gradient with respect to its input), as
    `tf.nn.conv1d_transpose`: `input` (N, W, C_in), `filters` (KW, C_out, C_in), a result of
    `output_shape` (N, OW, C_out); both in data_format's order. `conv2d_transpose` of the
    input with an axis of size 1 before W.

    >>> tt.nn.conv1d_transpose(tt.ones((1, 4, 3)), tt.ones((3, 2, 3)), (1, 8, 2), 2).shape
    TensorShape([1, 8, 2])
    """
    args = _transposed(
        "conv1d_transpose",
        input,
        filters,
        output_shape,
        strides,
        padding,
        data_format,
        dilations,
        1,
    )
    y, f, wanted, strides, dilations, padding, _, layout = args
    image = array_ops.expand_dims(y, 1)
    shape = (wanted[0], 1, *wanted[1:])
    result = conv2d_transpose(
        image, array_ops.expand_dims(f, 0), shape, (1, *strides), padding, "NHWC", (1, *dilations)
    )
    return _channels_first_again(array_ops.squeeze(result, 1), layout)


# --- 3-D convolution: 2-D ones over depth slices ---------------------------------------------
# A window of conv3d at output depth od reads the input's depth slices od * SD + kd * DD
# (padding before subtracted) for its KD taps kd. Those slices, stacked along the channels,
# are a 2-D image of KD * C channels, and the filters' taps stacked the same way, (KH, KW,
# KD * C, C_out), a 2-D filter: conv2d of the two sums every tap of the 3-D window in one
# product. Its transpose is conv2d_transpose's, each tap's part put back at its depths.


def _depth_taps(x, taps, stride, dilation, depth):
    """(N * OD, H, W, KD * C) of channels-last `x` (N, D, H, W, C): each output depth's
    window's input depth slices (zeros where it reads padding), tap after tap along the
    channels. `depth` is (padding before, padding after, OD)."""
    before, after, out = depth
    if before or after:
        x = pad(x, [[0, 0], [before, after], [0, 0], [0, 0], [0, 0]])
    span = (out - 1) * stride + 1
    slices = [
        array_ops.getitem(x, (slice(None), slice(k * dilation, k * dilation + span, stride)))
        for k in range(taps)
    ]
    stacked = slices[0] if taps == 1 else concat(slices, axis=-1)
    return array_ops.reshape(stacked, (-1, *stacked.shape[2:]))


def _planes(f):
    """3-D filters (KD, KH, KW, C, M) as the 2-D ones of `_depth_taps`' images:
    (KH, KW, KD * C, M)."""
    kd, kh, kw, channels, m = f.shape
    return array_ops.reshape(array_ops.transpose(f, (1, 2, 0, 3, 4)), (kh, kw, kd * channels, m))


def _put_at_depths(part, start, stride, total):
    """(N, `total`, H, W, C) of `part` (N, OD, H, W, C): its depth od at start + od * stride,
    zeros elsewhere (the transpose of `_depth_taps`' slice of one tap)."""
    out = part.shape[1]
    if stride > 1 and out > 1:  # `stride - 1` zeros after each depth, the last one's cut
        spread = pad(
            array_ops.expand_dims(part, 2), [[0, 0], [0, 0], [0, stride - 1]] + [[0, 0]] * 3
        )
        spread = array_ops.reshape(spread, (-1, out * stride, *part.shape[2:]))
        part = array_ops.getitem(spread, (slice(None), slice(0, (out - 1) * stride + 1)))
    after = total - start - part.shape[1]
    return pad(part, [[0, 0], [start, after], [0, 0], [0, 0], [0, 0]])


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """The 3-D convolution of `input` (N, D, H, W, C), or (N, C, D, H, W) for NCDHW, with
    `filters` (KD, KH, KW, C, C_out), as `tf.nn.conv3d`: `strides` and `dilations` an int or
    a list of 1, 3 or 5 ints, `padding` 'SAME' or 'VALID'. A conv2d of the depth slices each
    window reads, stacked along the channels (the notes above).

    >>> tt.nn.conv3d(tt.ones((1, 4, 5, 5, 2)), tt.ones((2, 3, 3, 2, 4)), 1, "VALID").shape
    TensorShape([1, 3, 3, 3, 4])
    """
    function = "conv3d"
    layout = _check_layout(function, data_format, _LAYOUT_NAMES[3])
    channel_axis = layout[0]
    x, f = as_tensors(as_tensor(input), filters)  # a list of filters takes the input's dtype
    x = _spatial_input(function, x, 3, layout, floating=False)
    if f.ndim != 5 or f.dtype != x.dtype or f.shape[3] != x.shape[4]:
        raise _fail(
            ValueError if f.dtype == x.dtype else TypeError,
            function,
            f"filters must be (KD, KH, KW, C_in, C_out) of the input's dtype with C_in its "
            f"{x.shape[4]} channels; got shape {f.shape} ({f.dtype.name}) for an input of "
            f"{x.dtype.name}",
        )
    strides = _window_values(function, "strides", strides, 3, channel_axis)
    dilations = _window_values(function, "dilations", dilations, 3, channel_axis, default=1)
    padding = _padding(function, padding, 3, channel_axis, explicit=False)
    geometry = _geometry(function, x.shape[1:4], f.shape[:3], strides, dilations, padding)
    images = _depth_taps(x, f.shape[0], strides[0], dilations[0], geometry[0])
    planes = _convolve(
        function, images, _planes(f), strides[1:], padding, "NHWC", dilations[1:], rank=2
    )
    result = array_ops.reshape(planes, (x.shape[0], geometry[0][2], *planes.shape[1:]))
    return _channels_first_again(result, layout)


def conv3d_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NDHWC",
    dilations=None,
    name=None,
):
    """The transpose of `conv3d` (its gradient with respect to its input), as
    `tf.nn.conv3d_transpose`: `input` (N, D, H, W, C_in), `filters` (KD, KH, KW, C_out,
    C_in), a result of `output_shape` (N, OD, OH, OW, C_out); both in data_format's order.
    conv3d's composition transposed: conv2d_transpose of each input depth, whose channels
    are each depth tap's part, which goes back to the depths the tap read.

    >>> tt.nn.conv3d_transpose(tt.ones((1, 2, 2, 2, 3)), tt.ones((2, 2, 2, 4, 3)), (1, 4, 4, 4, 4), 2).shape
    TensorShape([1, 4, 4, 4, 4])
    """
    args = _transposed(
        "conv3d_transpose",
        input,
        filters,
        output_shape,
        strides,
        padding,
        data_format,
        dilations,
        3,
    )
    y, f, wanted, strides, dilations, padding, geometry, layout = args
    (before, after, out), depth = geometry[0], wanted[1]
    taps, channels = f.shape[0], f.shape[3]
    flat = array_ops.reshape(y, (-1, *y.shape[2:]))
    planes = conv2d_transpose(
        flat,
        _planes(f),
        (flat.shape[0], *wanted[2:4], taps * channels),
        strides[1:],
        padding,
        "NHWC",
        dilations[1:],
    )
    parts = array_ops.reshape(planes, (-1, out, *wanted[2:4], taps, channels))
    total = before + depth + after
    placed = [
        _put_at_depths(
            array_ops.getitem(parts, (Ellipsis, k, slice(None))),
            k * dilations[0],
            strides[0],
            total,
        )
        for k in range(taps)
    ]
    result = add_n(placed)
    result = array_ops.getitem(result, (slice(None), slice(before, before + depth)))
    return _channels_first_again(result, layout)


def convolution(
    input, filters, strides=None, padding="VALID", data_format=None, dilations=None, name=None
):
    """The 1-D, 2-D or 3-D convolution of `input` with `filters` by the filters' rank (3, 4
    or 5), as `tf.nn.convolution`: `conv1d`, `conv2d` or `conv3d`, with strides of 1 where
    None, and channels last unless `data_format` starts with "NC".

    >>> tt.nn.convolution(tt.ones((1, 5, 5, 5, 2)), tt.ones((3, 3, 3, 2, 4)), padding="SAME").shape
    TensorShape([1, 5, 5, 5, 4])
    """
    x, f = as_tensors(as_tensor(input), filters)
    rank = f.ndim - 2
    if rank not in _LAYOUT_NAMES:
        raise _fail(
            ValueError,
            "convolution",
            f"filters must have rank 3, 4 or 5 (1, 2 or 3 spatial axes, in_channels, "
            f"out_channels), got shape {f.shape}",
        )
    last, first = _LAYOUT_NAMES[rank]
    layout = first if data_format is not None and data_format.startswith("NC") else last
    if data_format not in (None, layout):
        raise _fail(
            ValueError,
            "convolution",
            f"data_format must be {last!r} or {first!r} for {rank}-D filters, got {data_format!r}",
        )
    strides = 1 if strides is None else strides
    function = {1: conv1d, 2: conv2d, 3: conv3d}[rank]
    return function(x, f, strides, padding, layout, dilations)


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


def _pool1d(function, pool2d, x, ksize, strides, padding, data_format):
    """1-D pooling of `x` (N, W, C), or (N, C, W) for NCW: 2-D pooling of the input with an
    axis of size 1 inserted before W."""
    if x.ndim != 3:
        raise _fail(
            ValueError, function, f"input must have rank 3 (batch, width, channels), got {x.shape}"
        )
    channel_axis = _check_layout(function, data_format, _LAYOUT_NAMES[1])[0]
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


def _pool3d(function, pool2d, x, ksize, strides, padding, data_format, maximum):
    """3-D pooling of `x` (N, D, H, W, C), or (N, C, D, H, W) for NCDHW, as two 2-D ones:
    over (H, W) of each depth, then over D of each pooled position. A maximum over a box is
    the maximum over its depths of each depth's maximum; a mean the mean over its depths of
    each depth's mean, as the number of input elements in a box (SAME's divisor) is their
    number in depth times that in height and width."""
    layout = _check_layout(function, data_format, _LAYOUT_NAMES[3])
    channel_axis = layout[0]
    x = _spatial_input(function, x, 3, layout, floating=not maximum)
    ksize = _window_values(function, "ksize", ksize, 3, channel_axis)
    strides = _window_values(function, "strides", strides, 3, channel_axis)
    padding = _padding(function, padding, 3, channel_axis, explicit=False)
    geometry = _geometry(function, x.shape[1:4], ksize, strides, (1, 1, 1), padding)
    (_, _, depth), (_, _, height), (_, _, width) = geometry
    batch, size, channels = x.shape[0], x.shape[1], x.shape[4]
    planes = pool2d(array_ops.reshape(x, (-1, *x.shape[2:])), ksize[1:], strides[1:], padding)
    columns = array_ops.reshape(planes, (batch, size, height * width, channels))
    pooled = pool2d(columns, (ksize[0], 1), (strides[0], 1), padding)
    result = array_ops.reshape(pooled, (batch, depth, height, width, channels))
    return _channels_first_again(result, layout)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """The maximum over each window of `input` (N, W, C), as `tf.nn.max_pool1d`; `padding`
    may be explicit. max_pool2d's rules for padding, ties and NaN.

    >>> tt.nn.max_pool1d(tt.constant([[[1.0], [3.0], [2.0]]]), 2, 1, "VALID").numpy().ravel()
    array([3., 3.], dtype=float32)
    """
    x = as_tensor(input)
    return _pool1d("max_pool1d", max_pool2d, x, ksize, strides, padding, data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """The mean over each window of `input` (N, W, C), as `tf.nn.avg_pool1d`: with 'SAME'
    padding a window is divided by the number of input elements it holds.

    >>> tt.nn.avg_pool1d(tt.constant([[[1.0], [3.0], [2.0]]]), 2, 1, "SAME").numpy().ravel()
    array([2. , 2.5, 2. ], dtype=float32)
    """
    x = as_tensor(input)
    return _pool1d("avg_pool1d", avg_pool2d, x, ksize, strides, padding, data_format)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """The maximum over each window of `input` (N, D, H, W, C), as `tf.nn.max_pool3d`;
    `padding` is 'SAME' or 'VALID'.

    >>> tt.nn.max_pool3d(tt.ones((1, 4, 4, 4, 2)), 2, 2, "VALID").shape
    TensorShape([1, 2, 2, 2, 2])
    """
    x = as_tensor(input)
    return _pool3d("max_pool3d", max_pool2d, x, ksize, strides, padding, data_format, True)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """The mean over each window of `input` (N, D, H, W, C), as `tf.nn.avg_pool3d`: with
    'SAME' padding a window is divided by the number of input elements it holds.

    >>> tt.nn.avg_pool3d(tt.ones((1, 4, 4, 4, 2)), 3, 2, "SAME").shape
    TensorShape([1, 2, 2, 2, 2])
    """
    x = as_tensor(input)
    return _pool3d("avg_pool3d", avg_pool2d, x, ksize, strides, padding, data_format, False)


def _by_rank(function, pool2d, input, ksize, strides, padding, data_format, maximum):
    """`tf.nn.max_pool`/`avg_pool`: 1-D, 2-D or 3-D pooling by the input's rank (3, 4 or 5),
    channels last unless `data_format` says otherwise."""
    x = as_tensor(input)
    if x.ndim == 3:
        return _pool1d(function, pool2d, x, ksize, strides, padding, data_format or "NWC")
    if x.ndim == 4:
        return pool2d(x, ksize, strides, padding, data_format or "NHWC")
    if x.ndim == 5:
        layout = data_format or "NDHWC"
        return _pool3d(function, pool2d, x, ksize, strides, padding, layout, maximum)
    raise _fail(
        ValueError,
        function,
        f"input must have rank 3 or 4 (1-D or 2-D pooling) or 5 (3-D pooling), got {x.shape}",
    )


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    """`tf.nn.max_pool` for rank-3 (1-D pooling), rank-4 (2-D) and rank-5 (3-D) inputs."""
    return _by_rank("max_pool", max_pool2d, input, ksize, strides, padding, data_format, True)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    """`tf.nn.avg_pool` for rank-3 (1-D pooling), rank-4 (2-D) and rank-5 (3-D) inputs."""
    return _by_rank("avg_pool", avg_pool2d, input, ksize, strides, padding, data_format, False)
