"""A depthwise convolution and its two gradients as three primitives over channels-last
images, as TensorFlow's DepthwiseConv2dNative and its BackpropInput and BackpropFilter (one
filter per input channel: a channel multiplier of 1):

    depthwise_conv2d(x, w)                  (N, OH, OW, C): each channel's windows times its
                                            taps, w (KH, KW, C), summed over the taps
    depthwise_conv2d_backprop_input(g, w)   (N, H, W, C): its transpose in x
    depthwise_conv2d_backprop_filter(x, g)  (KH, KW, C): its transpose in w

with the window ops' geometry (tracer/ops/window_ops.py's `window_attrs`). Like the
convolution's three (tracer/ops/convolution_ops.py), each is bilinear and each one's
gradient is the other two, so every order follows. In a compiled graph's lowering stages
(never on a tape) the product may carry a bias and an activation, and the input gradient a
gate: their epilogues (tracer/ops/conv_epilogues.py, tracer/passes/conv_epilogues.py).

They are three kernels rather than products of the patches (a (rows, taps, C) array times the
taps, summed over them), which write every window's elements to memory, nine times the image
for a 3 x 3 filter, and read them back in each of the three: a depthwise convolution does one
multiply-add per element read, so those passes over memory were all its time. In C
(templates/depthwise.c.j2) each output is summed in registers from its operand read in
place, taps in row-major order. The product and the filter gradient read padding as zeros,
as a convolution's patches hold them (a filter or cotangent of infinities makes NaN there);
the input gradient adds only the terms of the windows that read each element, as
`sum_patches`. Eagerly, float32 and float64 run the same loops installed with tracer
(runtime/conv_kernels_typed.h, the geometry read when they run: the template's bits);
numpy's kernels below, for other dtypes and where the table is missing, add the same terms
in the same order (the filter gradient's sums over the rows in another), with a rounding
after each product: the values agree to rounding. Other channel multipliers stay a grouped
convolution (tracer/ops/conv_ops.py).
"""

import numpy as np

from codegen import conv_kernels
from codegen.ctypes import compute, storage
from codegen.loops import PARALLEL_MIN
from runtime import installed_kernels
from tracer.ir import dims
from tracer.ops import array_ops, conv_epilogues
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.core import apply
from tracer.ops.registry import OPS, primitive
from tracer.ops.tangent_rules import PRODUCT
from tracer.ops.window_ops import padding_after

# --- shapes --------------------------------------------------------------------------------


def _check(what, t, spatial, rank=4):
    """`t` has `rank` axes and the spatial sizes `spatial` after its first (the filters':
    its first two)."""
    axes = slice(1, 3) if rank == 4 else slice(0, 2)
    if len(t.shape) != rank or tuple(t.shape[axes]) != tuple(spatial):
        sizes = f"{spatial[0]}, {spatial[1]}, C"
        layout = f"(N, {sizes})" if rank == 4 else f"({sizes})"
        raise ValueError(f"{what} must be {layout}, got {t.shape}")


def _check_pair(a, b):
    if a.dtype != b.dtype:
        raise TypeError(f"the operands must have one dtype, got {a.dtype.name} and {b.dtype.name}")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"the operands' channels differ: {a.shape} and {b.shape}")


def _infer_conv(attrs, x, w, *epilogue):
    _check("the image", x, attrs["sizes"])
    _check("the filters", w, attrs["kernel"], rank=3)
    _check_pair(x, w)
    shape = (x.shape[0], *attrs["out"], x.shape[3])
    conv_epilogues.check("a depthwise convolution", epilogue, x.shape[3], shape, x.dtype, attrs)
    return shape, x.dtype


def _infer_input_gradient(attrs, g, w, *epilogue):
    _check("the cotangent", g, attrs["out"])
    _check("the filters", w, attrs["kernel"], rank=3)
    _check_pair(g, w)
    shape = (g.shape[0], *attrs["sizes"], g.shape[3])
    conv_epilogues.check("a depthwise input gradient", epilogue, g.shape[3], shape, g.dtype, attrs)
    return shape, g.dtype


def _infer_filter_gradient(attrs, x, g):
    _check("the image", x, attrs["sizes"])
    _check("the cotangent", g, attrs["out"])
    _check_pair(x, g)
    if x.shape[0] != g.shape[0]:
        raise ValueError(f"the image holds {x.shape[0]} images, the cotangent {g.shape[0]}")
    return (*attrs["kernel"], x.shape[3]), x.dtype


# --- numpy kernels -------------------------------------------------------------------------


def _padded(x, attrs):
    """x with zeros around it where the windows leave it: `before` rows and columns before,
    and after it as many as the last windows read (every window lies inside it)."""
    after = padding_after(attrs)
    (bh, bw) = attrs["before"]
    return np.pad(x, ((0, 0), (bh, after[0]), (bw, after[1]), (0, 0)))


def _windows(attrs):
    """For each tap (i, j) in row-major order: (i, j, the slices of the padded image that
    the windows read at that tap)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = (
        attrs["kernel"],
        attrs["strides"],
        attrs["dilations"],
        attrs["out"],
    )
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
            columns = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)
            yield i, j, (slice(None), rows, columns)


def _installed(kind, image_shape, out_shape, attrs, *inputs):
    """The installed kernel `kind`'s result (runtime/conv_kernels_typed.h: the template's
    loops with the geometry read when they run), or None where it takes no such operands."""
    dtype = inputs[0].dtype
    suffix = installed_kernels.suffix(dtype)
    if suffix is None or not conv_kernels.available() or 0 in (*image_shape, *out_shape):
        return None
    taps = attrs["kernel"][0] * attrs["kernel"][1]
    if kind == "depthwise_filter" and taps > installed_kernels.MOST_DEPTHWISE_TAPS:
        return None
    geometry = conv_kernels.image_geometry(image_shape, *attrs["sizes"], attrs)
    if geometry is None:
        return None
    out = np.empty(out_shape, dtype)
    arrays = [np.ascontiguousarray(a) for a in inputs]
    if kind != "depthwise_filter":  # the product's bias, the input gradient's gate: none
        arrays.append(None)
    installed_kernels.call(
        f"{kind}_{suffix}", np.array([*geometry, 0, 0, 0], np.int64), arrays, out
    )
    return out


def _with_epilogue(kernel):
    """`kernel` of the operands, then the epilogue a lowered graph's node may have
    (tracer/ops/conv_epilogues.py), by its ops' kernels."""

    def with_epilogue(a, b, *epilogue, activation=None, gated=False, **attrs):
        out = kernel(a, b, **attrs)
        if not epilogue and activation is None:  # (an eager call: no epilogue)
            return out
        _, bias, gate = conv_epilogues.split(epilogue, 0, {"gated": gated})
        return conv_epilogues.apply_numpy(out, bias, gate, activation)

    return with_epilogue


@_with_epilogue
def _conv_kernel(x, w, **attrs):
    x, w = np.asarray(x), np.asarray(w)
    shape = (x.shape[0], *attrs["out"], x.shape[3])
    out = _installed("depthwise_product", x.shape, shape, attrs, x, w)
    if out is not None:
        return out
    image = _padded(x, attrs)
    out = np.zeros((x.shape[0], *attrs["out"], x.shape[3]), x.dtype)
    if out.size:
        for i, j, window in _windows(attrs):
            out += image[window] * w[i, j]
    return out


@_with_epilogue
def _input_gradient_kernel(g, w, **attrs):
    g, w = np.asarray(g), np.asarray(w)
    shape = (g.shape[0], *attrs["sizes"], g.shape[3])
    out = _installed("depthwise_input", shape, shape, attrs, g, w)
    if out is not None:
        return out
    image = _padded(np.zeros(shape, g.dtype), attrs)
    if g.size:
        for i, j, window in _windows(attrs):
            image[window] += g * w[i, j]
    (bh, bw), (h, wd) = attrs["before"], attrs["sizes"]
    return np.ascontiguousarray(image[:, bh : bh + h, bw : bw + wd])


def _filter_gradient_kernel(x, g, **attrs):
    x, g = np.asarray(x), np.asarray(g)
    shape = (*attrs["kernel"], x.shape[3])
    out = _installed("depthwise_filter", x.shape, shape, attrs, x, g)
    if out is not None:
        return out
    image = _padded(x, attrs)
    out = np.zeros(shape, x.dtype)
    for i, j, window in _windows(attrs):
        out[i, j] = (image[window] * g).reshape(-1, x.shape[3]).sum(axis=0)
    return out


# --- batching: a batch of channels -----------------------------------------------------------


def _channels_batch(node, args, flags, size):
    """Every channel is its own convolution: the batch joins the channels (B, ..., C) ->
    (..., B * C), the op runs once, and the result's channels split again."""
    folded = []
    for arg, batched in zip(args, flags):
        if not batched:
            arg = broadcast_to(arg, (size, *arg.shape))
        rank = len(arg.shape)
        moved = array_ops.transpose(arg, (*range(1, rank - 1), 0, rank - 1))
        folded.append(array_ops.reshape(moved, (*arg.shape[1:-1], size * arg.shape[-1])))
    result = apply(OPS[node.op], tuple(folded), node.attrs)
    split = array_ops.reshape(result, (*node.shape[:-1], size, node.shape[-1]))
    rank = len(split.shape)
    return array_ops.transpose(split, (rank - 2, *range(rank - 2), rank - 1))


# --- C -------------------------------------------------------------------------------------

# bytes of channels each register block sums (one AVX-512 register; two AVX2 ones)
LANE_BYTES = 64
# output positions of a block of the product and the input gradient, each its own chain of
# multiply-adds (a chain waits for its last, so one would leave the FMA units idle)
POSITIONS = 4


def _template(part):
    def context(node, blas):
        image = node if part == "input" else node.inputs[0]
        channels = image.shape[3]
        itemsize = np.dtype(node.dtype.as_numpy_dtype).itemsize
        _, bias, gate = conv_epilogues.split(node.inputs, 2, node.attrs)
        at = f"(p0 + r) * {channels} + c0 + l"
        value = conv_epilogues.render(node, 2, "acc[r][l]", "bias[c0 + l]", f"gate_row[{at}]")
        return dict(
            part=part,
            bias=bias is not None,
            gate=gate is not None,
            value=value,
            T=storage(node.dtype),
            C=compute(node.dtype),
            madd={"float": "TR_MADDF", "double": "TR_MADD"}.get(compute(node.dtype)),
            n=image.shape[0],
            height=image.shape[1],
            width=image.shape[2],
            channels=channels,
            kernel=node.attrs["kernel"],
            strides=node.attrs["strides"],
            dilations=node.attrs["dilations"],
            before=node.attrs["before"],
            out=node.attrs["out"],
            lanes=max(1, min(channels, LANE_BYTES // itemsize)),
            positions=min(POSITIONS, node.attrs["out"][1]),
            work=dims.size(image.shape) * node.attrs["kernel"][0] * node.attrs["kernel"][1],
            parallel_min=PARALLEL_MIN,
        )

    return conv_epilogues.Template("depthwise.c.j2", context)


# --- the primitives ------------------------------------------------------------------------

DEPTHWISE_CONV2D = primitive(
    "depthwise_conv2d",
    _infer_conv,
    grad=lambda node, g, x, w: (
        depthwise_conv2d_backprop_input(g, w, node.attrs),
        depthwise_conv2d_backprop_filter(x, g, node.attrs),
    ),
    saves=(0, 1),
    jvp=PRODUCT,
    batch=_channels_batch,
    kernel=_conv_kernel,
    c=_template("product"),
)

DEPTHWISE_CONV2D_BACKPROP_INPUT = primitive(
    "depthwise_conv2d_backprop_input",
    _infer_input_gradient,
    grad=lambda node, c, g, w: (
        depthwise_conv2d(c, w, node.attrs),
        depthwise_conv2d_backprop_filter(c, g, node.attrs),
    ),
    saves=(0, 1),
    jvp=PRODUCT,
    batch=_channels_batch,
    kernel=_input_gradient_kernel,
    c=_template("input"),
)

DEPTHWISE_CONV2D_BACKPROP_FILTER = primitive(
    "depthwise_conv2d_backprop_filter",
    _infer_filter_gradient,
    grad=lambda node, c, x, g: (
        depthwise_conv2d_backprop_input(g, c, node.attrs),
        depthwise_conv2d(x, c, node.attrs),
    ),
    saves=(0, 1),
    jvp=PRODUCT,
    batch=_channels_batch,
    kernel=_filter_gradient_kernel,
    c=_template("filter"),
)


def depthwise_conv2d(x, w, attrs):
    """The depthwise convolution of image `x` (N, H, W, C) with filters `w` (KH, KW, C)."""
    return apply(DEPTHWISE_CONV2D, (x, w), attrs)


def depthwise_conv2d_backprop_input(g, w, attrs):
    """The gradient of `depthwise_conv2d` with respect to its image, for the cotangent `g`."""
    return apply(DEPTHWISE_CONV2D_BACKPROP_INPUT, (g, w), attrs)


def depthwise_conv2d_backprop_filter(x, g, attrs):
    """The gradient of `depthwise_conv2d` with respect to its filters, for the cotangent `g`."""
    return apply(DEPTHWISE_CONV2D_BACKPROP_FILTER, (x, g), attrs)
