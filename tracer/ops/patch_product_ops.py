"""Direct convolution: the products of an image's patches, computed from the image itself.

A convolution is traced as `matmul(reshape(extract_patches(x)), w)` (tracer/ops/conv_ops.py),
whose gradients are `matmul[transpose_a](patches, g)` and `sum_patches(g @ w^T)`: in C that
writes every window's elements to memory (9 times the image for a 3x3 filter) for BLAS to
read and pack again. After differentiation, `tracer/passes/convolve.py` replaces them with
these two ops, which read the windows in place:

    patch_product(x, w)     (N*OH*OW, M): patches(x) @ w, w of shape (KH*KW*C, M);
    patch_product(x, w, b, gate)
                            with an epilogue (tracer/ops/conv_epilogues.py): any of a bias b
                            of shape (M,) added, an `activation` (the name of a unary
                            elementwise op) where the attribute is set, and relu_grad(gate, .)
                            where `gated` is set (gate: the output's shape)
    patch_weights(x, g)     (chunks, KH*KW*C, M): patches(x)^T @ g, g of shape (N*OH*OW, M),
                            summed over each of `chunks` runs of output rows (then added
                            in chunk order by a reduce_sum: the same bits at every call)

x is an image (N, H, W, C) and the attributes are the window ops' geometry
(`window_ops.window_attrs`): the product reads padding where a window leaves the image; the
weights' image holds every window (the pass pads it first, `before` 0). A convolution's
input gradient at stride 1 is the patch product of the cotangent with the filters flipped
and transposed, its windows reaching the filter's extent less the padding before the
cotangent.

They exist only in the compiled pipeline's lowering stages, never on a tape: no gradient
rule. In C (templates/patch_product.c.j2) each is a loop nest over blocks of outputs held in
registers (BLOCKS: with AVX-512, 7 output positions by 64 float32 channels for the product,
6 patch columns by 64 for the weights), each block summing over its taps and channels (its
pixels) with one multiply-add per element read.
"""

import numpy as np

from codegen.ctypes import compute, storage
from codegen.loops import PARALLEL_MIN
from tracer.ops import conv_epilogues
from tracer.ops.registry import primitive, unbatchable
from tracer.ops.window_ops import patches_of

UNBATCHED = unbatchable("is made after gradients and jacobians are built")
# bytes of the patch_weights partial sums: the chunks are as many as fit, at most CHUNKS
PARTIAL_BYTES = 4 << 20
CHUNKS = 16


def _check_image(attrs, x, padded):
    """(rows of the patches, their columns) of image `x`; a `padded` image (the weights')
    holds every window: no `before`, and the windows end inside it."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = (
        attrs["kernel"],
        attrs["strides"],
        attrs["dilations"],
        attrs["out"],
    )
    if len(x.shape) != 4 or tuple(x.shape[1:3]) != attrs["sizes"]:
        raise ValueError(f"the image must be (N, {attrs['sizes']}, C), got {x.shape}")
    reach = ((oh - 1) * sh + (kh - 1) * dh + 1, (ow - 1) * sw + (kw - 1) * dw + 1)
    if padded and (attrs["before"] != (0, 0) or reach[0] > x.shape[1] or reach[1] > x.shape[2]):
        raise ValueError(f"the windows ({reach} from {attrs['before']}) leave the image {x.shape}")
    return x.shape[0] * oh * ow, kh * kw * x.shape[3]


def _infer_product(attrs, x, w, *epilogue):
    rows, depth = _check_image(attrs, x, padded=False)
    if len(w.shape) != 2 or w.shape[0] != depth or w.dtype != x.dtype:
        raise ValueError(f"the filters must be ({depth}, M) of {x.dtype.name}, got {w.shape}")
    shape = (rows, w.shape[1])
    conv_epilogues.check("a patch product", epilogue, w.shape[1], shape, x.dtype, attrs)
    return shape, x.dtype


def _infer_weights(attrs, x, g):
    rows, depth = _check_image(attrs, x, padded=True)
    if len(g.shape) != 2 or g.shape[0] != rows or g.dtype != x.dtype:
        raise ValueError(f"the cotangent must be ({rows}, M) of {x.dtype.name}, got {g.shape}")
    return (attrs["chunks"], depth, g.shape[1]), x.dtype


def _itemsize(dtype):
    return np.dtype(dtype.as_numpy_dtype).itemsize


def weight_chunks(rows, depth, width, dtype):
    """How many partial sums patch_weights makes over `rows` rows (of images' output rows)."""
    fits = PARTIAL_BYTES // max(1, depth * width * _itemsize(dtype))
    return max(1, min(CHUNKS, rows, fits))


def _columns(x, attrs):
    window = {k: v for k, v in attrs.items() if k != "chunks"}
    patches = patches_of(x, **window)
    return patches.reshape(-1, patches.shape[-1])


def _product_kernel(x, w, *epilogue, activation=None, gated=False, **attrs):
    product = _columns(np.asarray(x), attrs) @ np.asarray(w)
    _, bias, gate = conv_epilogues.split(epilogue, 0, {"gated": gated})
    return conv_epilogues.apply_numpy(product, bias, gate, activation)


def _weights_kernel(x, g, **attrs):
    x, g = np.asarray(x), np.asarray(g)
    columns = _columns(x, attrs)
    rows, chunks, width = x.shape[0] * attrs["out"][0], attrs["chunks"], attrs["out"][1]
    parts = []
    for c in range(chunks):
        first, last = c * rows // chunks * width, (c + 1) * rows // chunks * width
        parts.append(columns[first:last].T @ g[first:last])
    return np.stack(parts)


# The register blocks, per CPU: with AVX-512 (32 vector registers of 64 bytes), and any
# other (AVX2's 16 of 32 bytes): (preprocessor condition, output positions or patch columns,
# bytes of output channels). 28 and 24 accumulators, then 12 and 12.
BLOCKS = {
    "product": (("defined(__AVX512F__)", 7, 256), (None, 6, 64)),
    "weights": (("defined(__AVX512F__)", 6, 256), (None, 6, 64)),
}


def _context(part):
    def context(node, blas):
        x = node.inputs[0]
        attrs = node.attrs
        width = node.shape[-1]
        (kh, kw), out = attrs["kernel"], attrs["out"]
        depth = kh * kw * x.shape[3]
        configs = []
        for condition, block, lane_bytes in BLOCKS[part]:
            lanes = min(width, lane_bytes // _itemsize(node.dtype))
            block = min(block, out[1] if part == "product" else depth)
            configs.append((condition, block, lanes))
        if len({config[1:] for config in configs}) == 1:
            configs = [(None, *configs[0][1:])]
        store = {}
        if part == "product":
            _, bias, gate = conv_epilogues.split(node.inputs, 2, attrs)
            at = "(o + r) * " + str(width) + " + n0 + l"
            value = conv_epilogues.render(node, 2, "acc[r][l]", "bias[n0 + l]", f"gate[{at}]")
            store = dict(bias=bias is not None, gate=gate is not None, value=value)
        return dict(
            part=part,
            **store,
            T=storage(node.dtype),
            C=compute(node.dtype),
            madd="TR_MADDF" if node.dtype.name == "float32" else "TR_MADD",
            n=x.shape[0],
            height=x.shape[1],
            width=x.shape[2],
            channels=x.shape[3],
            kernel=attrs["kernel"],
            strides=attrs["strides"],
            dilations=attrs["dilations"],
            before=attrs["before"],
            out=out,
            m=width,
            depth=depth,
            chunks=attrs.get("chunks", 1),
            configs=configs,
            work=width * depth * x.shape[0] * out[0] * out[1],
            parallel_min=PARALLEL_MIN,
        )

    return conv_epilogues.Template("patch_product.c.j2", context)


PATCH_PRODUCT = primitive(
    "patch_product",
    _infer_product,
    batch=UNBATCHED,
    kernel=_product_kernel,
    c=_context("product"),
)

PATCH_WEIGHTS = primitive(
    "patch_weights",
    _infer_weights,
    batch=UNBATCHED,
    kernel=_weights_kernel,
    c=_context("weights"),
)
