"""A convolution and its two gradients as three primitives over channels-last images, as
TensorFlow's Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter:

    conv2d(x, w)                    (N, OH, OW, M): patches(x) @ w, for filters w (KH, KW, C, M)
    conv2d_backprop_input(g, w)     (N, H, W, C): sum_patches(g @ w^T), its transpose in x
                                    (and `conv2d_transpose`'s forward)
    conv2d_backprop_filter(x, g)    (KH, KW, C, M): patches(x)^T @ g, its transpose in w

with the window ops' geometry (tracer/ops/window_ops.py's `window_attrs`: `sizes` is the
image's, `out` the convolution's). Each is bilinear, and each one's gradient is the other
two, so every order follows:

    conv2d:                 dx = conv2d_backprop_input(g, w)    dw = conv2d_backprop_filter(x, g)
    conv2d_backprop_input:  dg = conv2d(c, w)                   dw = conv2d_backprop_filter(c, g)
    conv2d_backprop_filter: dx = conv2d_backprop_input(g, c)    dg = conv2d(x, c)

Eagerly (and in the interpreter, and in an eager tape's gradient program) each is one
kernel. For float32 and float64 they are the direct kernels installed with tracer
(runtime/conv_kernels.c: the patch product and the patch weights, which read the image in
place rather than copying it once per tap): the input gradient at stride 1 is the patch
product of the cotangent with the filters' taps reversed and their channel axes swapped (as
tracer/passes/convolve.py rewrites it), and the filter gradient sums the patch weights'
partial sums in order (the installed column sums). Otherwise (other dtypes, strides, no
installed kernels) they are numpy's patches and products, the values convolutions had as
those ops. Compiled, the pipeline's first pass writes each as those ops (`decompose`), and
the passes after it turn them into the same direct kernels.
"""

import numpy as np

from codegen import conv_kernels
from runtime import installed_kernels
from runtime.kernels import KERNELS
from tracer import dtypes
from tracer.ir import dims
from tracer.ops import array_ops
from tracer.ops.core import apply
from tracer.ops.linalg_ops import matmul
from tracer.ops.patch_product_ops import weight_chunks
from tracer.ops.registry import primitive
from tracer.ops.tangent_rules import PRODUCT
from tracer.ops.window_ops import (
    extract_patches,
    padding_after,
    patches_of,
    sum_patches,
    sum_patches_of,
)

# --- shapes --------------------------------------------------------------------------------


def _taps(attrs):
    return attrs["kernel"][0] * attrs["kernel"][1]


# each operand: the attribute its spatial sizes are, where they sit, and its layout
_OPERANDS = {
    "the image": ("sizes", slice(1, 3), "(N, {}, {}, C)"),
    "the cotangent": ("out", slice(1, 3), "(N, {}, {}, M)"),
    "the filters": ("kernel", slice(0, 2), "({}, {}, C, M)"),
}


def _check(attrs, *operands):
    """Each (name, tensor) of `operands` is 4-D with the spatial sizes `attrs` give it, and
    both have one dtype."""
    for what, t in operands:
        if len(t.shape) != 4:
            raise ValueError(f"{what} must have rank 4, got shape {t.shape}")
    (_, a), (_, b) = operands
    if a.dtype != b.dtype:
        raise TypeError(f"the operands must have one dtype, got {a.dtype.name} and {b.dtype.name}")
    for what, t in operands:
        key, spatial, layout = _OPERANDS[what]
        if tuple(t.shape[spatial]) != attrs[key]:
            raise ValueError(f"{what} must be {layout.format(*attrs[key])}, got {t.shape}")


def _infer_conv(attrs, x, w):
    _check(attrs, ("the image", x), ("the filters", w))
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"the image has {x.shape[3]} channels, the filters take {w.shape[2]}")
    return (x.shape[0], *attrs["out"], w.shape[3]), x.dtype


def _infer_input_gradient(attrs, g, w):
    _check(attrs, ("the cotangent", g), ("the filters", w))
    if g.shape[3] != w.shape[3]:
        raise ValueError(f"the cotangent has {g.shape[3]} channels, the filters make {w.shape[3]}")
    return (g.shape[0], *attrs["sizes"], w.shape[2]), g.dtype


def _infer_filter_gradient(attrs, x, g):
    _check(attrs, ("the image", x), ("the cotangent", g))
    if x.shape[0] != g.shape[0]:
        raise ValueError(f"the image holds {x.shape[0]} images, the cotangent {g.shape[0]}")
    return (*attrs["kernel"], x.shape[3], g.shape[3]), x.dtype


# --- kernels -------------------------------------------------------------------------------


def _installed(dtype, *arrays):
    """The installed kernels' suffix for `dtype` where they can compute on `arrays` (not
    empty), else None."""
    suffix = installed_kernels.suffix(dtype)
    if suffix is None or any(a.size == 0 for a in arrays) or not conv_kernels.available():
        return None
    return suffix


# the op's result by a module of its own, or None: tracer/eager_convolutions.py's `run`
_own_module = [lambda name, a, b, attrs: None]


def use_own_modules(run):
    """Have the kernels ask `run(name, a, b, attrs)` for an op's result, by a module built
    for its geometry, wherever the installed kernels would compute it (the same bits)."""
    _own_module[0] = run


def _patch_product(image, filters, attrs, own=None):
    """patches(image) @ filters (rows, M) by the installed patch product, or None; where it
    computes it, `own` (op name, a, b, attrs) may ask the op's own module first."""
    suffix = _installed(image.dtype, image, filters)
    geometry = None
    if suffix is not None:
        geometry = conv_kernels.image_geometry(image.shape, *image.shape[1:3], attrs)
    if geometry is None:
        return None
    rows = image.shape[0] * attrs["out"][0] * attrs["out"][1]
    done = None if own is None else _own_module[0](*own)
    if done is not None:
        return done.reshape(rows, filters.shape[1])
    out = np.empty((rows, filters.shape[1]), image.dtype)
    inputs = [np.ascontiguousarray(image), np.ascontiguousarray(filters), None, None]
    geometry = np.array([*geometry, filters.shape[1], 1, 0], np.int64)
    installed_kernels.call(f"patch_product_{suffix}", geometry, inputs, out)
    return out


def _conv_kernel(x, w, **attrs):
    x, w = np.asarray(x), np.asarray(w)
    # NOTE: sizes, not -1: with no filters (C_out = 0) numpy cannot infer a -1
    filters = w.reshape(dims.size(w.shape[:3]), w.shape[3])
    product = _patch_product(x, filters, attrs, own=("conv2d", x, w, attrs))
    if product is None:
        patches = patches_of(x, **attrs)
        product = KERNELS["matmul"](
            patches.reshape(dims.size(patches.shape[:3]), patches.shape[3]), filters
        )
    return product.reshape(x.shape[0], *attrs["out"], w.shape[3])


def _reach(attrs):
    return [(k - 1) * d for k, d in zip(attrs["kernel"], attrs["dilations"])]


def _input_gradient_kernel(g, w, **attrs):
    g, w = np.asarray(g), np.asarray(w)
    kh, kw, channels, width = w.shape
    shape = (g.shape[0], *attrs["sizes"], channels)
    reach = _reach(attrs)
    if attrs["strides"] == (1, 1) and all(b <= r for b, r in zip(attrs["before"], reach)):
        # dx[h] sums g[h + before - i * dilation] w[i] over taps i: the correlation of g with
        # the taps reversed, its windows starting `reach - before` before it
        flipped = w.transpose(0, 1, 3, 2)[::-1, ::-1].reshape(kh * kw * width, channels)
        geometry = dict(
            attrs,
            sizes=tuple(g.shape[1:3]),
            out=attrs["sizes"],
            before=tuple(r - b for r, b in zip(reach, attrs["before"])),
        )
        own = ("conv2d_backprop_input", g, w, attrs)
        product = _patch_product(g, flipped, geometry, own)
        if product is not None:
            return product.reshape(shape)
    columns = KERNELS["matmul"](
        g.reshape(dims.size(g.shape[:3]), width),
        w.reshape(kh * kw * channels, width),
        transpose_b=True,
    ).reshape(*g.shape[:3], kh * kw * channels)
    return sum_patches_of(columns, **attrs)


def _filter_gradient_kernel(x, g, **attrs):
    x, g = np.asarray(x), np.asarray(g)
    shape = (*attrs["kernel"], x.shape[3], g.shape[3])
    own = ("conv2d_backprop_filter", x, g, attrs)
    g = g.reshape(dims.size(g.shape[:3]), g.shape[3])
    summed = _patch_weights(x, g, attrs, own)
    if summed is not None:
        return summed.reshape(shape)
    patches = patches_of(x, **attrs)
    columns = patches.reshape(-1, patches.shape[3])
    product = KERNELS["matmul"](columns, g, transpose_a=True)
    return product.reshape(shape)


def _patch_weights(x, g, attrs, own=None):
    """patches(x)^T @ g (rows, M) by the installed patch weights on x padded to hold every
    window, their partial sums added in order by the installed column sums; or None. Where
    it computes them, `own` may ask the op's own module first (as `_patch_product`)."""
    suffix = _installed(x.dtype, x, g)
    if suffix is None:
        return None
    after = padding_after(attrs)
    (bh, bw), (h, w) = attrs["before"], attrs["sizes"]
    padded = (x.shape[0], bh + h + after[0], bw + w + after[1], x.shape[3])
    window = dict(attrs, sizes=padded[1:3], before=(0, 0))
    geometry = conv_kernels.image_geometry(padded, *padded[1:3], window)
    if geometry is None:
        return None
    depth, width = _taps(attrs) * x.shape[3], g.shape[1]
    done = None if own is None else _own_module[0](*own)
    if done is not None:
        return done.reshape(depth, width)
    image = x
    if (bh, bw, *after) != (0, 0, 0, 0):
        image = np.zeros(padded, x.dtype)
        image[:, bh : bh + h, bw : bw + w] = x
    chunks = weight_chunks(x.shape[0] * attrs["out"][0], depth, width, dtypes.as_dtype(x.dtype))
    parts = np.empty((chunks, depth, width), x.dtype)
    inputs = [np.ascontiguousarray(image), np.ascontiguousarray(g)]
    geometry = np.array([*geometry, width, chunks, 0], np.int64)
    installed_kernels.call(f"patch_weights_{suffix}", geometry, inputs, parts)
    summed = np.empty((depth, width), x.dtype)
    sums = np.array([chunks, depth * width], np.int64)
    installed_kernels.call(f"column_sums_{suffix}", sums, [parts], summed)
    return summed


# --- the products they are (the compiled pipeline's, and batching's) -----------------------


def _rows(image, attrs):
    """(N * OH * OW, taps * C): the patches of an image of `attrs` as a matrix."""
    patches = extract_patches(image, attrs)
    n, oh, ow, depth = patches.shape
    return array_ops.reshape(patches, (dims.size((n, oh, ow)), depth))


def _as_rows(g):
    """A cotangent (N, OH, OW, M) as a matrix (N * OH * OW, M)."""
    return array_ops.reshape(g, (dims.size(g.shape[:3]), g.shape[3]))


def _filters(w):
    """Filters (KH, KW, C, M) as a matrix (KH * KW * C, M)."""
    return array_ops.reshape(w, (dims.size(w.shape[:3]), w.shape[3]))


def _conv_parts(node, inputs):
    x, w = inputs
    product = matmul(_rows(x, node.attrs), _filters(w))
    return array_ops.reshape(product, node.shape)


def _input_gradient_parts(node, inputs):
    g, w = inputs
    columns = matmul(_as_rows(g), _filters(w), transpose_b=True)
    patches = array_ops.reshape(columns, (*g.shape[:3], columns.shape[1]))
    return sum_patches(patches, node.attrs)


def _filter_gradient_parts(node, inputs):
    x, g = inputs
    product = matmul(_rows(x, node.attrs), _as_rows(g), transpose_a=True)
    return array_ops.reshape(product, node.shape)


# --- batching: an image's batch joins N; a batch of filters, the products' batch ------------


def _folded(tensor, size):
    """(B, N, ...) as (B * N, ...)."""
    return array_ops.reshape(tensor, (size * tensor.shape[1], *tensor.shape[2:]))


def _batched_rows(tensor, batched, size, rows, count):
    """`rows` (a function of one image or cotangent, making `count` rows) of a batched
    tensor as (B, count, K), of an unbatched one as (count, K)."""
    if not batched:
        return rows(tensor)
    matrix = rows(_folded(tensor, size))
    return array_ops.reshape(matrix, (size, count, matrix.shape[1]))


def _image_rows(node):
    return lambda image: _rows(image, node.attrs)


def _count(shape):
    """The rows of a convolution's (or cotangent's) shape (N, OH, OW, M): N * OH * OW."""
    return dims.size(shape[:3])


def _batched_filters(w, size):
    """A batch of filters (B, KH, KW, C, M) as matrices (B, KH * KW * C, M)."""
    return array_ops.reshape(w, (size, dims.size(w.shape[1:4]), w.shape[4]))


def _conv_batch(node, args, flags, size):
    (x, w), (x_batched, w_batched) = args, flags
    if not w_batched:  # one convolution of the B * N images
        result = apply(CONV2D, (_folded(x, size), w), node.attrs)
        return array_ops.reshape(result, (size, *node.shape))
    rows = _batched_rows(x, x_batched, size, _image_rows(node), _count(node.shape))
    product = matmul(rows, _batched_filters(w, size))
    return array_ops.reshape(product, (size, *node.shape))


def _input_gradient_batch(node, args, flags, size):
    (g, w), (g_batched, w_batched) = args, flags
    if not w_batched:
        result = apply(CONV2D_BACKPROP_INPUT, (_folded(g, size), w), node.attrs)
        return array_ops.reshape(result, (size, *node.shape))
    rows = _batched_rows(g, g_batched, size, _as_rows, _count(node.inputs[0].shape))
    columns = matmul(rows, _batched_filters(w, size), transpose_b=True)
    n, oh, ow = node.shape[0], *node.attrs["out"]
    patches = array_ops.reshape(columns, (size * n, oh, ow, columns.shape[2]))
    return array_ops.reshape(sum_patches(patches, node.attrs), (size, *node.shape))


def _filter_gradient_batch(node, args, flags, size):
    (x, g), (x_batched, g_batched) = args, flags
    count = _count(node.inputs[1].shape)
    rows = _batched_rows(x, x_batched, size, _image_rows(node), count)
    product = matmul(rows, _batched_rows(g, g_batched, size, _as_rows, count), transpose_a=True)
    return array_ops.reshape(product, (size, *node.shape))


# --- the primitives ------------------------------------------------------------------------


CONV2D = primitive(
    "conv2d",
    _infer_conv,
    grad=lambda node, g, x, w: (
        conv2d_backprop_input(g, w, node.attrs),
        conv2d_backprop_filter(x, g, node.attrs),
    ),
    saves=(0, 1),
    jvp=PRODUCT,
    batch=_conv_batch,
    kernel=_conv_kernel,
    decompose=_conv_parts,
)

CONV2D_BACKPROP_INPUT = primitive(
    "conv2d_backprop_input",
    _infer_input_gradient,
    grad=lambda node, c, g, w: (conv2d(c, w, node.attrs), conv2d_backprop_filter(c, g, node.attrs)),
    saves=(0, 1),
    jvp=PRODUCT,
    batch=_input_gradient_batch,
    kernel=_input_gradient_kernel,
    decompose=_input_gradient_parts,
)

CONV2D_BACKPROP_FILTER = primitive(
    "conv2d_backprop_filter",
    _infer_filter_gradient,
    grad=lambda node, c, x, g: (conv2d_backprop_input(g, c, node.attrs), conv2d(x, c, node.attrs)),
    saves=(0, 1),
    jvp=PRODUCT,
    batch=_filter_gradient_batch,
    kernel=_filter_gradient_kernel,
    decompose=_filter_gradient_parts,
)


def conv2d(x, w, attrs):
    """The convolution of image `x` (N, H, W, C) with filters `w` (KH, KW, C, M)."""
    return apply(CONV2D, (x, w), attrs)


def conv2d_backprop_input(g, w, attrs):
    """The gradient of `conv2d` with respect to its image, for the cotangent `g`."""
    return apply(CONV2D_BACKPROP_INPUT, (g, w), attrs)


def conv2d_backprop_filter(x, g, attrs):
    """The gradient of `conv2d` with respect to its filters, for the cotangent `g`."""
    return apply(CONV2D_BACKPROP_FILTER, (x, g), attrs)
