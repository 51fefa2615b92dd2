"""Direct convolutions: the products of patches become products that read the image.

    %p = extract_patches[g] %x
    %c = reshape %p                    =>      %y = patch_product[g] %x, %w
    %y = matmul %c, %w                         %dw = reduce_sum[axis=0] (patch_weights[g'] %x', %dy)
    %dw = matmul[transpose_a] %c, %dy                  (%x' = pad %x, when a window leaves x)
    %dx = sum_patches[g] (reshape (matmul[transpose_b] %dy, %w))
                                       =>      %dx = reshape (patch_product[g''] %dy, %w'')

A convolution and its two gradients are three GEMMs over its patches, the image copied
once per tap (tracer/ops/conv_ops.py); tracer/ops/patch_product_ops.py computes the same
sums from the image in place (the product reads zeros where a window leaves the image; the
weights' image is padded first). The input gradient at stride 1 is a convolution of the
cotangent, its windows starting the filter's reach less the padding early, with the filters
flipped and their channel axes swapped (g''); at other strides it stays a GEMM and a col2im.

This is a lowering pass (after it the graph holds ops without gradients). It rewrites
float32 and float64 products of known shape that are not empty (`conv2d_transpose` at stride
1 too: its forward is the input gradient's pattern). The sums are added in another order
than the GEMM's, with one rounding per multiply-add: the values agree to rounding.
"""

from tracer.ir import match
from tracer.ir.rewrite import on_new_inputs, with_outputs
from tracer.ir.rewrite import readers as read_counts  # (`readers` names the counts here)
from tracer.ops.patch_product_ops import weight_chunks
from tracer.ops.window_ops import padding_after
from tracer.passes.conv_epilogues import is_activation, with_epilogues

FLOATING = ("float32", "float64")


def direct_convolutions(graph):
    """`graph` with its products of patches read from the image (`_patch_products`), then
    its convolutions' epilogues in their kernels (tracer/passes/conv_epilogues.py)."""
    return with_epilogues(_patch_products(graph))


def _patch_products(graph):
    if not any(node.op in ("extract_patches", "sum_patches") for node in graph.nodes):
        return graph
    readers = read_counts(graph)
    padded = {}  # (id(image), paddings) -> its pad node (one per image)
    mapping = {}  # id(node) -> its node in the new graph

    def new(node):
        return mapping.get(id(node), node)

    # the patterns are matched on the graph as it was (its readers counted), and their
    # replacements read the new graph's nodes
    for node in graph.nodes:
        replacement = None
        if node.op == "matmul":
            replacement = _product(node, new, padded)
        elif node.op == "sum_patches":
            replacement = _input_gradient(node, new, readers)
        elif node.op == "add" or is_activation(node):
            replacement = _with_epilogue(node, new, readers)
        mapping[id(node)] = replacement or on_new_inputs(node, mapping)
    return with_outputs(graph.inputs, [new(o) for o in graph.outputs])


def _static(*nodes):
    return all(
        n.dtype.name in FLOATING and all(isinstance(d, int) and d > 0 for d in n.shape)
        for n in nodes
    )


def _patches_of(node):
    """The extract_patches node whose patches `node` holds as (rows, columns), or None."""
    if node.op != "reshape" or node.inputs[0].op != "extract_patches":
        return None
    patches = node.inputs[0]
    rows = patches.shape[0] * patches.shape[1] * patches.shape[2]
    return patches if node.shape == (rows, patches.shape[3]) else None


def _window(attrs, image):
    """The geometry on `image`, a padded image: `before` 0 (every window inside it)."""
    return dict(attrs, sizes=tuple(image.shape[1:3]), before=(0, 0))


def _pad(node, image, before, after, padded):
    """`image` padded by `before` and `after` rows and columns (one node per image and
    padding), or `image` itself."""
    paddings = ((0, 0), (before[0], after[0]), (before[1], after[1]), (0, 0))
    if paddings == ((0, 0),) * 4:
        return image
    key = (id(image), paddings)
    if key not in padded:
        shape = (
            image.shape[0],
            image.shape[1] + before[0] + after[0],
            image.shape[2] + before[1] + after[1],
            image.shape[3],
        )
        padded[key] = match.derived(
            node, "pad", (image,), shape, paddings=paddings, mode="CONSTANT", value=0
        )
    return padded[key]


def _padded_image(node, image, attrs, padded):
    """`image` padded so that every window of `attrs` lies inside it."""
    return _pad(node, image, attrs["before"], padding_after(attrs), padded)


def _product(node, new, padded):
    """patches @ w => patch_product; patches^T @ g => the chunks of patch_weights, summed."""
    a, b = node.inputs
    patches = _patches_of(a)
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    if patches is None or tb or len(b.shape) != 2 or not _static(node, a, b):
        return None
    image, b = new(patches.inputs[0]), new(b)
    if not ta:
        return match.derived(node, "patch_product", (image, b), node.shape, **patches.attrs)
    image = _padded_image(node, image, patches.attrs, padded)
    attrs = _window(patches.attrs, image)
    chunks = weight_chunks(image.shape[0] * attrs["out"][0], *node.shape, node.dtype)
    partial = (chunks, *node.shape)
    parts = match.derived(node, "patch_weights", (image, b), partial, **attrs, chunks=chunks)
    return match.derived(node, "reduce_sum", (parts,), node.shape, axis=(0,), keepdims=False)


def _with_epilogue(node, new, readers):
    """act(reshape(patches @ w) + b), or the sum or the activation alone => the product
    computing it as it stores each output (`bias`, `activation`): the convolution's result
    is written once, not written and read back by a loop that adds and activates."""
    activation, inner = (node.op, node.inputs[0]) if node.op != "add" else (None, node)
    bias, shaped = None, inner
    if inner.op == "add" and (activation is None or readers.get(id(inner)) == 1):
        for shaped, bias in (inner.inputs, inner.inputs[::-1]):
            if shaped.op == "reshape" and len(bias.shape) == 1:
                break
        else:
            return None
    if (activation is None and bias is None) or shaped.op != "reshape":
        return None
    product = shaped.inputs[0]
    channels = product.shape[-1:]  # the bias is added along the product's columns
    if (
        product.op != "matmul"
        or product.attrs
        or len(product.inputs[1].shape) != 2
        or (bias is not None and (bias.shape != channels or shaped.shape[-1:] != channels))
        or readers.get(id(shaped)) != 1
        or readers.get(id(product)) != 1
        or shaped.shape != inner.shape
        or not _static(node, *product.inputs, *([bias] if bias is not None else []))
    ):
        return None
    patches = _patches_of(product.inputs[0])
    if patches is None:
        return None
    inputs = [new(patches.inputs[0]), new(product.inputs[1])]
    inputs += [new(bias)] if bias is not None else []
    attrs = dict(patches.attrs, **({"activation": activation} if activation else {}))
    result = match.derived(node, "patch_product", inputs, product.shape, **attrs)
    return match.derived(node, "reshape", (result,), node.shape, shape=node.shape)


def _input_gradient(node, new, readers):
    """sum_patches(g @ w^T) at stride 1 => the patch product of g with w flipped."""
    (columns,) = node.inputs
    attrs = node.attrs
    product = columns.inputs[0] if columns.op == "reshape" else None
    if (
        product is None
        or product.op != "matmul"
        or attrs["strides"] != (1, 1)
        or readers.get(id(columns)) != 1
        or readers.get(id(product)) != 1
        or product.attrs.get("transpose_a", False)
        or not _static(node, product, *product.inputs)
    ):
        return None
    g, w = (new(i) for i in product.inputs)
    (kh, kw), dilations = attrs["kernel"], attrs["dilations"]
    channels, width = node.shape[3], g.shape[1]
    # dx[h] is the sum over taps i of g[h + before - i * dilation] w[i]: the correlation of
    # g with the taps reversed, its windows starting the filter's extent less `before` early
    # (padding past the filter's extent would start them inside g: left to the GEMM)
    reach = [(k - 1) * d for k, d in zip((kh, kw), dilations)]
    if product.shape != (g.shape[0], kh * kw * channels) or any(
        b > r for b, r in zip(attrs["before"], reach)
    ):
        return None
    cotangent = (*columns.shape[:3], width)
    image = match.derived(node, "reshape", (g,), cotangent, shape=cotangent)
    flipped = _flipped_filters(
        node, w, product.attrs.get("transpose_b", False), kh, kw, channels, width
    )
    geometry = dict(
        attrs,
        sizes=tuple(cotangent[1:3]),
        out=tuple(node.shape[1:3]),
        before=tuple(r - b for r, b in zip(reach, attrs["before"])),
    )
    rows = (node.shape[0] * node.shape[1] * node.shape[2], channels)
    result = match.derived(node, "patch_product", (image, flipped), rows, **geometry)
    return match.derived(node, "reshape", (result,), node.shape, shape=node.shape)


def _flipped_filters(node, w, transposed, kh, kw, channels, width):
    """The filters of `g @ w^T` (w: (KH*KW*C, M), or (M, KH*KW*C) when `transposed` is
    False) as the filters of the correlation of g: taps reversed, (KH*KW*M, C)."""
    if transposed:
        taps = match.derived(
            node, "reshape", (w,), (kh, kw, channels, width), shape=(kh, kw, channels, width)
        )
        swapped = match.derived(
            node, "transpose", (taps,), (kh, kw, width, channels), perm=(0, 1, 3, 2)
        )
    else:
        taps = match.derived(
            node, "reshape", (w,), (width, kh, kw, channels), shape=(width, kh, kw, channels)
        )
        swapped = match.derived(
            node, "transpose", (taps,), (kh, kw, width, channels), perm=(1, 2, 0, 3)
        )
    flipped = match.derived(node, "reverse", (swapped,), swapped.shape, axis=(0, 1))
    return match.derived(
        node, "reshape", (flipped,), (kh * kw * width, channels), shape=(kh * kw * width, channels)
    )
