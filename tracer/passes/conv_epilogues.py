"""Epilogues: the elementwise ops that read a lowered convolution's result alone, applied by
the convolution's kernel as it stores each output (tracer/ops/conv_epilogues.py).

    %c = depthwise_conv2d %x, %w
    %s = add %c, %b                    =>   %y = depthwise_conv2d[activation=relu] %x, %w, %b
    %y = relu %s

    %p = patch_product %g, %w               %p = patch_product[gated] %g, %w, (reshape %h)
    %d = reshape %p                    =>   %dx = reshape %p
    %dx = relu_grad %h, %d

and the same gate on depthwise_conv2d_backprop_input. A CNN's step made each of these a loop
of its own over the activations: written once by the convolution, read back, written again
(relu's gradient over a 32 x 32 x 32 batch of 32 channels: 12 MB moved for 4 MB of result).
The patch product's bias and activation are given it where it is made
(tracer/passes/convolve.py's `_with_epilogue`); this pass runs after that, on the lowered
graph. A convolution read by anything else keeps its result, and the ops stay apart.

The values are the ops' bits: the kernel computes each sum as before and applies each op's
own C form to it (or numpy kernel, in the interpreter).
"""

import math

from codegen.forms import C_FORMS, Expression
from tracer.ir import match
from tracer.ir.rewrite import on_new_inputs, with_outputs
from tracer.ir.rewrite import readers as read_counts
from tracer.ops.registry import OPS

# the lowered convolutions whose kernels apply a gate, and those that add a bias and apply an
# activation found after them (the patch product's are found where it is made)
GATED = ("patch_product", "depthwise_conv2d_backprop_input")
BIASED = ("depthwise_conv2d",)


def with_epilogues(graph):
    """`graph` with its convolutions' epilogues in their kernels."""
    if not any(node.op in GATED + BIASED for node in graph.nodes):
        return graph
    readers = read_counts(graph)
    mapping = {}  # id(node) -> its node in the new graph

    def new(node):
        return mapping.get(id(node), node)

    for node in graph.nodes:
        replacement = None
        if node.op == "relu_grad":
            replacement = _gated(node, new, readers)
        elif node.op == "add" or is_activation(node):
            replacement = _biased(node, new, readers)
        mapping[id(node)] = replacement or on_new_inputs(node, mapping)
    return with_outputs(graph.inputs, [new(o) for o in graph.outputs])


def is_activation(node):
    """A unary elementwise op of one type and no attributes (a convolution's numpy kernel
    calls its kernel on the values alone) whose C form the convolution's store can apply."""
    op, form = OPS.get(node.op), C_FORMS.get(node.op)
    return (
        len(node.inputs) == 1
        and not node.attrs
        and op is not None
        and op.elementwise
        and isinstance(form, Expression)
        and form.guard is None
        and node.dtype == node.inputs[0].dtype
    )


def _known(node):
    return all(isinstance(d, int) and d > 0 for d in node.shape)


def _plain(node):
    """A convolution with no epilogue yet."""
    return len(node.inputs) == 2 and not {"activation", "gated"} & set(node.attrs)


def _gated(node, new, readers):
    """relu_grad(h, [reshape] c), c a gate-taking convolution read there alone => c gated
    by h (reshaped to c's shape)."""
    h, cotangent = node.inputs
    shaped, product = (
        (cotangent, cotangent.inputs[0]) if cotangent.op == "reshape" else (None, cotangent)
    )
    if (
        product.op not in GATED
        or not _plain(product)
        or readers.get(id(product)) != 1
        or (shaped is not None and readers.get(id(shaped)) != 1)
        or not (node.dtype == h.dtype == product.dtype)
        or not (_known(node) and _known(product) and _known(h))
        or h.shape != node.shape
        or math.prod(product.shape) != math.prod(node.shape)
    ):
        return None
    gate = new(h)
    if gate.shape != product.shape:
        gate = match.derived(node, "reshape", (gate,), product.shape, shape=product.shape)
    inputs = [new(i) for i in product.inputs] + [gate]
    attrs = dict(product.attrs, gated=True)
    result = match.derived(node, product.op, inputs, product.shape, **attrs)
    if result.shape == node.shape:
        return result
    return match.derived(node, "reshape", (result,), node.shape, shape=node.shape)


def _biased(node, new, readers):
    """act(c + b), or the sum or the activation alone, c a depthwise convolution read there
    alone and b a bias of its channels => c with that epilogue."""
    activation, inner = (None, node) if node.op == "add" else (node.op, node.inputs[0])
    bias, conv = None, inner
    if inner.op == "add" and (activation is None or readers.get(id(inner)) == 1):
        for conv, bias in (inner.inputs, inner.inputs[::-1]):
            if conv.op in BIASED and len(bias.shape) == 1:
                break
        else:
            return None
    if (
        conv.op not in BIASED
        or (activation is None and bias is None)
        or not _plain(conv)
        or readers.get(id(conv)) != 1
        or inner.shape != conv.shape
        or node.dtype != conv.dtype
        or not _known(conv)
        or (bias is not None and (bias.shape != conv.shape[-1:] or bias.dtype != conv.dtype))
    ):
        return None
    inputs = [new(i) for i in conv.inputs] + ([new(bias)] if bias is not None else [])
    attrs = dict(conv.attrs, **({"activation": activation} if activation else {}))
    return match.derived(node, conv.op, inputs, conv.shape, **attrs)
