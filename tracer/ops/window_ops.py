"""The windows of convolution and pooling, as four primitives over channels-last images
(N, H, W, C); `tracer/ops/conv_ops.py` writes TensorFlow's functions with them.

Every op takes the same geometry (`window_attrs`): the image's spatial `sizes`, the `out`put
sizes, the `kernel` window, `strides`, `dilations`, and the padding `before` the first row
and column. Window (oh, ow) reads, at its tap (i, j), the image element

    (oh * strides[0] + i * dilations[0] - before[0], ow * strides[1] + j * dilations[1] - before[1])

when it lies inside the image; outside, it reads padding.

    extract_patches(x)          (N, OH, OW, KH*KW*C): each window's elements, tap by tap
                                (im2col; padding reads 0), as tf.image.extract_patches lays
                                them out. A convolution is one matmul of these rows.
    sum_patches(cols)           its transpose (col2im): (N, H, W, C), each element the sum of
                                the patch entries that read it, taps in row-major order.
    window_max_gather(x, v)     (N, OH, OW, C): v where x is largest in each window, among
                                the window's image elements (padding never wins); a tie goes
                                to the first, row-major, as TensorFlow's MaxPoolGrad sends
                                it, and the first NaN wins, as in numpy's argmax. max pooling
                                is window_max_gather(x, x).
    window_max_scatter(x, g)    its transpose: (N, H, W, C), g added where x is largest in
                                each window (MaxPoolGrad).

The pairs are each other's gradients, so convolution and pooling differentiate to every
order with one GEMM and one col2im (or one selection) per step, not one padded array per
tap. x, the position the max ops select by, gets no gradient from them: the selection is
constant almost everywhere (and max pooling's gradient reaches x through v).

In C each is one loop nest (templates/windows.c.j2), parallel over image rows; the sums
are gathers (each element adds its own terms, taps in order), so no two threads write one
element and the numpy kernels' order of addition is kept. The max scatter of windows that
do not overlap (pooling's usual strides) writes each selected element from its window
instead, which finds each window's maximum once; of windows that tile the image, every
element (0 where not selected), with no zeroing pass first.

Compiled, a convolution's GEMMs over the patches become products that read the image in
place (tracer/passes/convolve.py, tracer/ops/patch_product_ops.py). Eagerly, the kernels
below call loops over the windows in C (codegen/array_windows.py) once their module is
built, with the same bits; the numpy code is their definition and the way until then.
"""

import functools

import numpy as np

from codegen import array_windows, forms
from codegen.ctypes import compute, storage
from codegen.loops import PARALLEL_MIN
from tracer.ir import Node, dims, match
from tracer.ops import array_ops
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.core import apply
from tracer.ops.registry import OPS, primitive
from tracer.ops.tangent_rules import LINEAR, tangent_or_zeros


def window_attrs(sizes, out, kernel, strides, dilations, before):
    """The geometry attributes of the window ops: each a pair of ints (rows, columns)."""
    pairs = dict(
        sizes=sizes, out=out, kernel=kernel, strides=strides, dilations=dilations, before=before
    )
    return {name: tuple(int(v) for v in pair) for name, pair in pairs.items()}


def padding_after(attrs):
    """The rows and columns of padding after the image that the windows of `attrs` read (the
    image padded by `before` and these holds every window)."""
    return [
        max(0, (out - 1) * stride + (k - 1) * dilation + 1 - size - before)
        for out, stride, k, dilation, size, before in zip(
            attrs["out"],
            attrs["strides"],
            attrs["kernel"],
            attrs["dilations"],
            attrs["sizes"],
            attrs["before"],
        )
    ]


def _taps(attrs):
    """(i, j) of each tap, in row-major order."""
    rows, columns = attrs["kernel"]
    return [(i, j) for i in range(rows) for j in range(columns)]


# --- shapes --------------------------------------------------------------------------------


def _check_image(x, attrs, what):
    if len(x.shape) != 4 or tuple(x.shape[1:3]) != attrs["sizes"]:
        raise ValueError(
            f"{what} must be (N, {attrs['sizes'][0]}, {attrs['sizes'][1]}, C), got {x.shape}"
        )


def _check_pooled(g, x, attrs, what):
    if tuple(g.shape) != (x.shape[0], *attrs["out"], x.shape[3]):
        raise ValueError(
            f"{what} must be (N, {attrs['out'][0]}, {attrs['out'][1]}, C) of the image's N "
            f"and C, got {g.shape} for an image of {x.shape}"
        )


def _infer_extract(attrs, x):
    _check_image(x, attrs, "the image")
    return (x.shape[0], *attrs["out"], len(_taps(attrs)) * x.shape[3]), x.dtype


def _infer_sum(attrs, cols):
    taps = len(_taps(attrs))
    if len(cols.shape) != 4 or tuple(cols.shape[1:3]) != attrs["out"] or cols.shape[3] % taps:
        raise ValueError(
            f"the patches must be (N, {attrs['out'][0]}, {attrs['out'][1]}, {taps} * C), got "
            f"{cols.shape}"
        )
    return (cols.shape[0], *attrs["sizes"], cols.shape[3] // taps), cols.dtype


def _infer_gather(attrs, x, v):
    _check_image(x, attrs, "the image")
    if tuple(v.shape) != tuple(x.shape) or v.dtype != x.dtype:
        raise ValueError(f"the values must be like the image {x.shape}, got {v.shape}")
    return (x.shape[0], *attrs["out"], x.shape[3]), v.dtype


def _infer_scatter(attrs, x, g):
    _check_image(x, attrs, "the image")
    _check_pooled(g, x, attrs, "the cotangent")
    return tuple(x.shape), g.dtype


# --- numpy kernels -------------------------------------------------------------------------


def _padded_taps(x, attrs):
    """(x padded with zeros, [(rows, columns) slices of the padded x, one per tap]); x itself
    where no window reaches past it (the sums write into the zeros their callers pass)."""
    (bh, bw), (oh, ow), (sh, sw), (dh, dw) = (
        attrs["before"],
        attrs["out"],
        attrs["strides"],
        attrs["dilations"],
    )
    kh, kw = attrs["kernel"]
    height = max(bh + x.shape[1], (oh - 1) * sh + (kh - 1) * dh + 1)
    width = max(bw + x.shape[2], (ow - 1) * sw + (kw - 1) * dw + 1)
    padded = x  # no padding: the taps are views of x itself
    if (bh, bw, height, width) != (0, 0, *x.shape[1:3]):
        padded = np.zeros((x.shape[0], height, width, x.shape[3]), x.dtype)
        padded[:, bh : bh + x.shape[1], bw : bw + x.shape[2]] = x
    slices = [
        (
            slice(i * dh, i * dh + (oh - 1) * sh + 1, sh),
            slice(j * dw, j * dw + (ow - 1) * sw + 1, sw),
        )
        for i, j in _taps(attrs)
    ]
    return padded, slices


def _crop(padded, attrs):
    (bh, bw), (h, w) = attrs["before"], attrs["sizes"]
    return padded[:, bh : bh + h, bw : bw + w]


def patches_of(x, **attrs):
    """The patches of `x` (extract_patches' kernel; the direct convolutions' too)."""
    looped = array_windows.patches(np.asarray(x), attrs)  # in C, where it can be built
    if looped is not None:
        return looped
    padded, slices = _padded_taps(np.asarray(x), attrs)
    taps = [padded[:, rows, columns] for rows, columns in slices]
    return np.stack(taps, axis=3).reshape(*taps[0].shape[:3], len(taps) * padded.shape[3])


def sum_patches_of(cols, **attrs):
    """The sums of patches `cols` (sum_patches' kernel; the convolutions' input gradient's too)."""
    cols = np.asarray(cols)
    looped = array_windows.summed_patches(cols, attrs)  # in C, where it can be built
    if looped is not None:
        return looped
    taps = len(_taps(attrs))
    image = np.zeros((cols.shape[0], *attrs["sizes"], cols.shape[3] // taps), cols.dtype)
    padded, slices = _padded_taps(image, attrs)
    parts = cols.reshape(*cols.shape[:3], taps, image.shape[3])
    for t, (rows, columns) in enumerate(slices):
        padded[:, rows, columns] += parts[:, :, :, t]
    return _crop(padded, attrs).copy()


def _valid(attrs):
    """Per tap, the (OH, OW, 1) mask of windows whose tap lies inside the image."""
    masks = []
    for i, j in _taps(attrs):
        position = []
        for axis, k in enumerate((i, j)):
            start = np.arange(attrs["out"][axis]) * attrs["strides"][axis]
            at = start + k * attrs["dilations"][axis] - attrs["before"][axis]
            position.append((at >= 0) & (at < attrs["sizes"][axis]))
        masks.append(np.logical_and.outer(*position)[:, :, None])
    return masks


def _first_max(x, attrs):
    """(the tap each window selects: its first largest image element, the first NaN; the
    taps' slices of the padded x; the taps of x stacked, (taps, N, OH, OW, C)).

    NOTE: arithmetic on masks, not np.where or masked assignment, which branch per element
    and are slow on masks without a pattern."""
    padded, slices = _padded_taps(x, attrs)
    taps = np.stack([padded[:, rows, columns] for rows, columns in slices])  # contiguous
    valid = _valid(attrs)
    floating = np.issubdtype(x.dtype, np.floating)
    lowest = -np.inf if floating else np.iinfo(x.dtype).min
    # the windows' maxima (NaN where a window holds one), then the first tap holding it
    masked = [tap if v.all() else np.where(v, tap, lowest) for tap, v in zip(taps, valid)]
    best = functools.reduce(np.maximum, masked)
    nan = np.isnan(best) if floating else None
    if nan is not None and not nan.any():
        nan = None
    index = np.uint8 if len(taps) < 256 else np.int64
    chosen = np.zeros(best.shape, index)
    found = np.zeros(best.shape, bool)
    for t, (tap, v) in enumerate(zip(taps, valid)):
        holds = tap == best
        if nan is not None:
            holds |= nan & np.isnan(tap)
        holds &= ~found if v.all() else v & ~found
        chosen += holds.astype(index) * index(t)
        found |= holds
    return chosen.astype(np.int64), slices, taps


def _masked(values, mask):
    """`values` where `mask`, 0 elsewhere: a product where the values are finite (exact: 0
    and -0 add the same to a sum that is never -0)."""
    if np.isfinite(values).all():
        return values * mask
    return np.where(mask, values, 0).astype(values.dtype)


def _gather_kernel(x, v, **attrs):
    x, v = np.asarray(x), np.asarray(v)
    looped = array_windows.gather(x, v, attrs)  # in C, where it can be built
    if looped is not None:
        return looped
    chosen, slices, taps = _first_max(x, attrs)
    if v is not x:  # max pooling gathers from x itself
        padded, _ = _padded_taps(v, attrs)
        taps = np.stack([padded[:, rows, columns] for rows, columns in slices])
    positions = chosen.reshape(-1) * chosen.size + np.arange(chosen.size)
    return taps.reshape(-1)[positions].reshape(chosen.shape)


def _scatter_kernel(x, g, **attrs):
    x, g = np.asarray(x), np.asarray(g)
    looped = array_windows.scatter(x, g, attrs)  # in C, where it can be built
    if looped is not None:
        return looped
    chosen, slices, _ = _first_max(x, attrs)
    padded, _ = _padded_taps(np.zeros(np.shape(x), g.dtype), attrs)
    for t, (rows, columns) in enumerate(slices):
        padded[:, rows, columns] += _masked(g, chosen == t)
    return _crop(padded, attrs).copy()


# --- batching: the batch axis joins N ------------------------------------------------------


def _fold_batch(node, args, flags, size):
    """Run the op once on (B * N, ...): the unbatched inputs broadcast along the batch."""
    folded = []
    for arg, batched in zip(args, flags):
        if not batched:
            arg = broadcast_to(arg, (size, *arg.shape))
        folded.append(array_ops.reshape(arg, (size * arg.shape[1], *arg.shape[2:])))
    result = apply(OPS[node.op], tuple(folded), node.attrs)
    return array_ops.reshape(result, (size, *node.shape))


def _selection_jvp(node, tangents, inputs, out):
    """Linear in the values (input 1); the image only selects."""
    return apply(OPS[node.op], (inputs[0], tangent_or_zeros(tangents[1], inputs[1])), node.attrs)


# --- simplification --------------------------------------------------------------------------


def mask_the_maxima(node):
    """select(p(x), window_max_scatter(x, g), 0) => window_max_scatter(x, select(p(m), g, 0)),
    m = window_max_gather(x, x), for a scalar +0 and an elementwise predicate p of x and
    scalar constants (a relu's gradient after max pooling's). The scatter sends each window's
    g to the window's largest element of x, whose value is the window's maximum: masking the
    pooled cotangent by p of the maxima gives the same values, bit for bit, on the pooled
    shape (4 times fewer elements for 2x2 windows), where the mask fuses with the loop that
    computes g. (A -0 or a full-shape zero would not be: they stay.)"""
    condition, scattered, other = node.inputs
    zero = match.literal(other)
    if (
        scattered.op != "window_max_scatter"
        or other.shape != ()
        or zero is None
        or zero != 0
        or np.signbit(zero)
    ):
        return None
    x, g = scattered.inputs
    operands = condition.inputs
    if (
        condition.shape != x.shape
        or x.dtype != g.dtype
        or not OPS[condition.op].elementwise
        or not any(i is x for i in operands)
        or not all(i is x or (i.op == "const" and i.shape == ()) for i in operands)
    ):
        return None
    maxima = match.derived(scattered, "window_max_gather", (x, x), g.shape, **scattered.attrs)
    pooled = tuple(maxima if i is x else i for i in operands)
    mask = Node(condition.op, pooled, condition.attrs, g.shape, condition.dtype, condition.location)
    masked = match.derived(node, "select", (mask, g, other), g.shape)
    attrs = scattered.attrs
    scatter = match.derived(scattered, "window_max_scatter", (x, masked), x.shape, **attrs)
    return match.same(node, scatter)


def mask_the_relus_maxima(node):
    """relu_grad(x, window_max_scatter(x, g)) => window_max_scatter(x, relu_grad(m, g)),
    m = window_max_gather(x, x): `mask_the_maxima` for relu's gradient as one op (the
    selection is the same, so are the bits)."""
    x, scattered = node.inputs
    if scattered.op != "window_max_scatter" or scattered.inputs[0] is not x:
        return None
    g = scattered.inputs[1]
    if x.dtype != g.dtype:
        return None
    maxima = match.derived(scattered, "window_max_gather", (x, x), g.shape, **scattered.attrs)
    masked = match.derived(node, "relu_grad", (maxima, g), g.shape)
    attrs = scattered.attrs
    scatter = match.derived(scattered, "window_max_scatter", (x, masked), x.shape, **attrs)
    return match.same(node, scatter)


# --- C -------------------------------------------------------------------------------------


# the unsigned integer of a float's size: the pairs' scatter selects its stores by bit masks
_BITS = {"float32": "uint32_t", "float64": "uint64_t"}
# the most taps a window's scatter writes out one by one (5 x 5)
MOST_UNROLLED_TAPS = 25


def _template(part):
    def context(node, blas):
        image = node.inputs[0] if part != "sum" else node
        attrs = node.attrs
        return dict(
            part=part,
            T=storage(node.dtype),
            C=compute(node.dtype),
            floating=node.dtype.is_floating,
            n=image.shape[0],
            height=attrs["sizes"][0],
            width=attrs["sizes"][1],
            channels=image.shape[3],
            out_height=attrs["out"][0],
            out_width=attrs["out"][1],
            kernel=attrs["kernel"],
            strides=attrs["strides"],
            dilations=attrs["dilations"],
            before=attrs["before"],
            work=dims.size(node.shape) * len(_taps(attrs)),  # elements read or written
            parallel_min=PARALLEL_MIN,
            disjoint=all(
                stride >= (k - 1) * dilation + 1
                for stride, k, dilation in zip(
                    attrs["strides"], attrs["kernel"], attrs["dilations"]
                )
            ),
            pooling=part == "gather" and node.inputs[0] is node.inputs[1],
            tiles=attrs["before"] == (0, 0)
            and attrs["dilations"] == (1, 1)
            and attrs["strides"] == attrs["kernel"]
            and all(o * s == n for o, s, n in zip(attrs["out"], attrs["strides"], attrs["sizes"])),
            # 2 x 2 windows two apart, each inside a float image: max pooling's usual case,
            # its kernels branch-free over each window's four elements (as
            # runtime/conv_kernels_typed.h's)
            pairs=attrs["kernel"] == (2, 2)
            and attrs["strides"] == (2, 2)
            and attrs["dilations"] == (1, 1)
            and attrs["before"] == (0, 0)
            and attrs["out"][0] > 0
            and all(o * 2 <= n for o, n in zip(attrs["out"], attrs["sizes"]))
            and node.dtype.name in _BITS
            and (part == "scatter" or part == "gather" and node.inputs[0] is node.inputs[1]),
            bits=_BITS.get(node.dtype.name),
            # overlapping windows of a float image scatter each window inside the image with
            # its taps unrolled, where they are few enough to write out
            inside_taps=part == "scatter"
            and node.dtype.name in _BITS
            and len(_taps(attrs)) <= MOST_UNROLLED_TAPS,
        )

    return forms.Template("windows.c.j2", context)


EXTRACT_PATCHES = primitive(
    "extract_patches",
    _infer_extract,
    grad=lambda node, g: (apply(SUM_PATCHES, (g,), node.attrs),),
    jvp=LINEAR,
    batch=_fold_batch,
    kernel=patches_of,
    c=_template("extract"),
)

SUM_PATCHES = primitive(
    "sum_patches",
    _infer_sum,
    grad=lambda node, g: (apply(EXTRACT_PATCHES, (g,), node.attrs),),
    jvp=LINEAR,
    batch=_fold_batch,
    kernel=sum_patches_of,
    c=_template("sum"),
)

WINDOW_MAX_GATHER = primitive(
    "window_max_gather",
    _infer_gather,
    grad=lambda node, g, x: (None, apply(WINDOW_MAX_SCATTER, (x, g), node.attrs)),
    saves=(0,),
    jvp=_selection_jvp,
    batch=_fold_batch,
    kernel=_gather_kernel,
    c=_template("gather"),
)

WINDOW_MAX_SCATTER = primitive(
    "window_max_scatter",
    _infer_scatter,
    grad=lambda node, g, x: (None, apply(WINDOW_MAX_GATHER, (x, g), node.attrs)),
    saves=(0,),
    jvp=_selection_jvp,
    batch=_fold_batch,
    kernel=_scatter_kernel,
    c=_template("scatter"),
)


def extract_patches(x, attrs):
    return apply(EXTRACT_PATCHES, (x,), attrs)


def sum_patches(cols, attrs):
    return apply(SUM_PATCHES, (cols,), attrs)


def window_max(x, attrs):
    """Each window's largest image element (max pooling)."""
    return apply(WINDOW_MAX_GATHER, (x, x), attrs)
