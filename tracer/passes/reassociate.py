"""Products of a large tensor and broadcast smaller ones: the smaller ones multiplied first.

    %3 = mul %c, %t        (c: [256, 256], t: [256])
    %4 = mul %3, %w        (w: [256])              =>   %5 = mul %t, %w      ([256])
                                                        %4 = mul %c, %5      ([256, 256])

A gradient is such a chain wherever a cotangent passes through elementwise ops that scale it
by a value of fewer axes (a vectorized jacobian's cotangent rows, a bias's broadcast): as
written, every factor is multiplied in at the size of the cotangent. Multiplied first, the
small factors make one small product, and the large loop reads one operand less and
multiplies once less per element (a jacobian's backward step through `tanh(s * w)`: three
loads and two products per element become two and one). tanh's and sigmoid's gradients
(`tanh_grad(y, g)`, g * (1 - y * y)) are such products too: `tanh_grad(y, g) * w` becomes
`g * tanh_grad(y, w)`. And a sum of two products of one large factor, `x * a + x * b`, is
`x * (a + b)` where a and b are smaller (TensorFlow's Grappler hoists common factors out of
sums the same way): the jacobian's step, `c * 0.1 + c * v`, multiplies once per element.

A product is regrouped only where the inner product is read by it alone (otherwise it is
computed at full size anyway) and the small factors' product is smaller than the result.
The product rounds in another order, so like `contract` this pass is not bit for bit: the
values agree to rounding (XLA regroups products of constants the same way).
"""

from tracer.ir import Node, dims
from tracer.ir.rewrite import on_new_inputs, readers, with_outputs
from tracer.ops.shapes import broadcast_shapes

# (y, g) -> g * f(y) (tracer/ops/math_ops.py): a product whose factor f(y) may be small
GATE_GRADIENTS = ("sigmoid_grad", "tanh_grad")


def reassociate_products(graph):
    """`graph` with its products of small factors regrouped (the module's docstring)."""
    if not any(node.op == "mul" for node in graph.nodes):
        return graph
    uses = readers(graph)  # an output is read outside too: computed anyway
    mapping, regrouped = {}, False
    for node in graph.nodes:
        new = on_new_inputs(node, mapping)
        grouped = None
        if node.op == "mul":
            grouped = _small_factors_first(node, new, uses)
        elif node.op in ("add", "sub"):
            grouped = _common_factor_out(node, new, uses)
        regrouped = regrouped or grouped is not None
        mapping[id(node)] = new if grouped is None else grouped
    if not regrouped:
        return graph
    return with_outputs(graph.inputs, [mapping.get(id(o), o) for o in graph.outputs])


def _small_factors_first(node, new, uses):
    """`a * (b * c)` for `new` = `(a * b) * c` (either side), `g * gate(y, c)` for
    `gate(y, g) * c`, or None where that saves nothing."""
    size = _known_size(node.shape)
    if size is None:
        return None
    for k in (0, 1):
        inner, outer_factor = new.inputs[k], new.inputs[1 - k]
        if inner.op not in ("mul", *GATE_GRADIENTS) or uses.get(id(node.inputs[k]), 0) != 1:
            continue
        if inner.dtype != node.dtype or outer_factor.dtype != node.dtype:
            continue
        if inner.op in GATE_GRADIENTS:
            y, large = inner.inputs
            shape = _product_shape(y, outer_factor)
            if shape is not None and _known_size(shape) < size:
                factors = Node(inner.op, (y, outer_factor), {}, shape, node.dtype, node.location)
                return Node("mul", (large, factors), {}, node.shape, node.dtype, node.location)
            continue
        for j in (0, 1):
            large, small = inner.inputs[j], inner.inputs[1 - j]
            shape = _product_shape(small, outer_factor)
            if shape is not None and _known_size(shape) < size:
                factors = Node("mul", (small, outer_factor), {}, shape, node.dtype, node.location)
                return Node("mul", (large, factors), {}, node.shape, node.dtype, node.location)
    return None


def _common_factor_out(node, new, uses):
    """`x * (a + b)` for `new` = `x * a + x * b` (either order in each product; `-` alike),
    where a and b together are smaller than the result, or None: one product at full size
    instead of two (Grappler's HoistCommonFactorOutOfAggregation)."""
    size = _known_size(node.shape)
    if size is None or any(uses.get(id(i), 0) != 1 for i in node.inputs):
        return None
    left, right = new.inputs
    if left.op != "mul" or right.op != "mul" or left is right:
        return None
    if any(v.dtype != node.dtype for v in (*left.inputs, *right.inputs)):
        return None
    for x, a in (left.inputs, left.inputs[::-1]):
        for y, b in (right.inputs, right.inputs[::-1]):
            if x is not y:
                continue
            shape = _product_shape(a, b)
            if shape is not None and _known_size(shape) < size:
                factors = Node(node.op, (a, b), {}, shape, node.dtype, node.location)
                return Node("mul", (x, factors), {}, node.shape, node.dtype, node.location)
    return None


def _product_shape(x, y):
    if _known_size(x.shape) is None or _known_size(y.shape) is None:
        return None
    return tuple(broadcast_shapes(x.shape, y.shape))


def _known_size(shape):
    return dims.size(shape) if dims.is_known(shape) else None
