"""Fusion: elementwise chains, the view ops that feed them and the reduction that ends them
become one `fused` node, whose body is a small graph the backends run as one loop.

    %1 = sin %0
    %2 = mul %0, %0                           %4 = fused[kernel=k_reduce_sum_add_sin_mul_4] %0
    %3 = add %1, %2                =>           %0: f32[4] = input[name='p0']
    %4 = reduce_sum[axis=(0,)] %3               %1 = sin %0 ... %4 = reduce_sum %3
                                                return %4

Which values are stored (the kernel roots): graph outputs, reductions, fusible values that
a non-fusible op (matmul, gather, ...) reads, and computed values that are broadcast into
a larger kernel. Every other elementwise value is recomputed inside each kernel that needs
it instead of being stored: memory traffic, not arithmetic, bounds these loops, so a loss
and its gradient over x take two loops over x.

A reshape that does more than add or drop size-1 axes is fused only when it reads a
stored value (then it is an index remap of a contiguous buffer); otherwise its input is
made a root. Invariants: the result computes the same values; each fused body has one
output; body inputs are `input` nodes standing for the fused node's inputs, in order.
"""

from tracer.ir import GraphAttribute, Node
from tracer.ir.rewrite import with_outputs
from tracer.ops.registry import OPS, primitive

VIEW_OPS = frozenset({"broadcast_to", "transpose", "reshape", "slice"})
REDUCTIONS = frozenset({"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"})


class Kernel(GraphAttribute):
    """A fused node's body graph (`kernel.body`), with its short deterministic name."""

    __slots__ = ()

    @property
    def body(self):
        return self.graph


def _infer_fused(attrs, *inputs):
    (out,) = attrs["kernel"].body.outputs
    return out.shape, out.dtype


FUSED = primitive("fused", _infer_fused)


def is_fusible(node):
    return node.op in VIEW_OPS or (node.op in OPS and OPS[node.op].elementwise)


def only_unit_axes_change(source_shape, target_shape):
    return [d for d in source_shape if d != 1] == [d for d in target_shape if d != 1]


def fuse(graph):
    roots = _roots(graph)
    mapping = {}  # id(original node) -> its node in the fused graph
    for node in graph.nodes:
        if id(node) in roots:
            mapping[id(node)] = _fused_node(node, roots, mapping)
        elif not is_fusible(node):
            inputs = tuple(mapping.get(id(i), i) for i in node.inputs)
            kept = node
            if any(a is not b for a, b in zip(inputs, node.inputs)):
                kept = Node(node.op, inputs, node.attrs, node.shape, node.dtype, node.location)
            mapping[id(node)] = kept
        # other fusible nodes are recomputed inside the kernels that read them
    return with_outputs(graph.inputs, [mapping.get(id(o), o) for o in graph.outputs])


def _roots(graph):
    """ids of the nodes that become fused kernels (their values are stored)."""
    consumers = {}
    for node in graph.nodes:
        for inp in node.inputs:
            consumers.setdefault(id(inp), []).append(node)
    outputs = {id(o) for o in graph.outputs}
    roots = set()
    for node in graph.nodes:
        if node.op in REDUCTIONS and any(is_fusible(i) for i in node.inputs):
            roots.add(id(node))
        elif is_fusible(node) and (
            id(node) in outputs
            or any(
                not is_fusible(c) and c.op not in REDUCTIONS for c in consumers.get(id(node), ())
            )
            or _broadcast_into_more(node, consumers)
        ):
            roots.add(id(node))
    changed = True
    while changed:  # a reshape that reorders elements must read a stored value
        changed = False
        for node in graph.nodes:
            if node.op == "reshape" and (
                id(node) in roots or _reaches_root(node, consumers, roots)
            ):
                (source,) = node.inputs
                if (
                    is_fusible(source)
                    and id(source) not in roots
                    and not only_unit_axes_change(source.shape, node.shape)
                ):
                    roots.add(id(source))
                    changed = True
    return roots


def _broadcast_into_more(node, consumers):
    """Whether a computed value is read by a kernel with more elements than it has, directly
    or through views (a transpose, then a reshape, then a broadcasting mul).

    Recomputing it there would repeat its work for every element it is broadcast to (a
    tanh over 256 values, broadcast into a 256x256 kernel, would run 65536 times), so it is
    stored once instead. View ops cost nothing to repeat and stay fused.
    """
    if node.op in VIEW_OPS:
        return False
    size = _size(node.shape)
    readers = list(consumers.get(id(node), ()))
    while readers:
        reader = readers.pop()
        if not is_fusible(reader):
            continue
        if _size(reader.shape) > size:
            return True
        if reader.op in VIEW_OPS:
            readers.extend(consumers.get(id(reader), ()))
    return False


def _size(shape):
    size = 1
    for d in shape:
        size *= d
    return size


def _reaches_root(node, consumers, roots):
    """Whether `node` ends up inside some kernel (it feeds a root through fusible ops)."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        for c in consumers.get(id(current), ()):
            if id(c) in seen:
                continue
            seen.add(id(c))
            if id(c) in roots:
                return True
            if is_fusible(c):
                stack.append(c)
    return False


def _fused_node(root, roots, mapping):
    """The `fused` node computing `root` from stored values, with its body graph."""
    params, external, body = {}, [], {}

    def internal(node):
        return node is root or (is_fusible(node) and id(node) not in roots and node.op != "const")

    # Walk the nodes the root needs (an explicit stack: bodies can be thousands deep),
    # copying each after its inputs.
    stack = [root]
    while stack:
        node = stack[-1]
        if id(node) in body:
            stack.pop()
            continue
        if internal(node):
            missing = [i for i in node.inputs if id(i) not in body]
            if missing:
                stack.extend(missing)
                continue
            inputs = tuple(body[id(i)] for i in node.inputs)
            body[id(node)] = Node(
                node.op, inputs, node.attrs, node.shape, node.dtype, node.location
            )
        elif node.op == "const" and not node.shape and "value" in node.attrs:
            body[id(node)] = node  # scalar literals stay in the body
        else:
            source = mapping.get(id(node), node)
            if id(source) not in params:
                params[id(source)] = Node(
                    "input", (), {"name": f"p{len(external)}"}, node.shape, node.dtype
                )
                external.append(source)
            body[id(node)] = params[id(source)]
        stack.pop()
    inputs = [params[id(s)] for s in external]
    body_graph = with_outputs(inputs, [body[id(root)]])
    kernel = Kernel(body_graph, _kernel_name(body_graph, root))
    return Node("fused", tuple(external), {"kernel": kernel}, root.shape, root.dtype, root.location)


def _kernel_name(body, root):
    """A short, deterministic, informative name: k_<ops in order>_<shape>."""
    ops = [root.op]
    for node in body.nodes:
        if node.op not in ("input", "const") and node.op not in ops:
            ops.append(node.op)
    shape = "x".join(map(str, root.inputs[0].shape if root.op in REDUCTIONS else root.shape)) or "1"
    return "k_" + "_".join(ops[:6]) + f"_{shape}"
