"""Sums of matrix products as one product over the joined inner dimension.

    %5 = matmul[transpose_a=True] %h1, %g1
    %6 = matmul[transpose_a=True] %h2, %g2        %c = concat[axis=0] %h1, %h2, %h3
    %7 = matmul[transpose_a=True] %h3, %g3   =>   %d = concat[axis=0] %g1, %g2, %g3
    %8 = add %5, %6                               %9 = matmul[transpose_a=True] %c, %d
    %9 = add %8, %7

A weight's gradient in an unrolled recurrence is such a sum over the time steps, h_t^T g_t
with the batch as the inner dimension: as many small GEMMs (each with its call and thread
hand-off) and an add reading as many (M, N) results. One GEMM over the joined inner
dimension does the same arithmetic at full speed and writes one result. Operands that are
the rows of one tensor in order (an unrolled loop's inputs xs[0], xs[1], ...) join as that
tensor reshaped, with no copy.

The sum is a tree of `add` nodes, each read by the tree alone, over 2-D products of the
same flags, shape and dtype, each read by the tree alone; other terms stay added. It is
rewritten only where copying the operands into the joined ones moves fewer elements than
the results it no longer writes and reads (so `x @ W + h @ U` with large W and U stays).
The GEMM adds in its own order, so unlike `simplify`'s rules this pass is not bit for bit:
the values agree to rounding.
"""

from tracer.ir import Node, dims
from tracer.ir.rewrite import on_new_inputs, readers, with_outputs
from tracer.ops.linalg_ops import matmul_attrs


def contract_products(graph):
    if not any(node.op == "matmul" for node in graph.nodes):
        return graph  # no products to join (most of an unrolled loop's graph: a walk less)
    uses = readers(graph)  # an output is read outside too: never absorbed

    def only_in_tree(node, root):
        return uses.get(id(node), 0) == 1 and node.shape == root.shape and node.dtype == root.dtype

    # adds inside a larger tree (read once, by an add of their shape): the root rewrites them
    inner = {
        id(i)
        for n in graph.nodes
        if n.op == "add"
        for i in n.inputs
        if i.op == "add" and only_in_tree(i, n)
    }
    mapping, contracted = {}, False
    joins = {}  # (the parts' ids, axis) -> their concat: one for products sharing an operand
    position = {id(node): k for k, node in enumerate(graph.nodes)}
    for node in graph.nodes:
        new = None
        if node.op == "add" and id(node) not in inner:
            new = _contracted(node, only_in_tree, mapping, joins, position)
        contracted = contracted or new is not None
        mapping[id(node)] = on_new_inputs(node, mapping) if new is None else new
    if not contracted:
        return graph
    return with_outputs(graph.inputs, [mapping.get(id(o), o) for o in graph.outputs])


def _terms(root, only_in_tree):
    """The terms of the add tree at `root` (through adds read by the tree alone)."""
    terms, stack = [], list(reversed(root.inputs))
    while stack:
        node = stack.pop()
        if node.op == "add" and only_in_tree(node, root):
            stack.extend(reversed(node.inputs))
        else:
            terms.append(node)
    return terms


def _key(node, only_in_tree, root):
    """What products must share to be joined (None for a term that is no such product)."""
    if node.op != "matmul" or not only_in_tree(node, root) or len(node.shape) != 2:
        return None
    a, b = node.inputs
    if len(a.shape) != 2 or len(b.shape) != 2 or not dims.is_known(a.shape + b.shape):
        return None
    flags = (node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False))
    return flags, node.shape, node.dtype


def _contracted(root, only_in_tree, mapping, joins, position):
    """The add tree at `root` with its products of one key joined, or None. Each group's
    products are taken in the graph's order of their left operands (`position`): in an
    unrolled loop's gradient, whose sums run from the last step back, the forward's order of
    its states and of its inputs xs[t]. Two weights' sums then join the steps' cotangents in
    the same order, once for both, and xs[0], xs[1], ... in order are xs (`_sliced_whole`)."""
    terms = _terms(root, only_in_tree)
    keys = [_key(term, only_in_tree, root) for term in terms]
    groups = {}
    for term, key in zip(terms, keys):
        if key is not None:
            groups.setdefault(key, []).append(term)
    joined = {
        key: sorted(products, key=lambda p: position[id(p.inputs[0])])
        for key, products in groups.items()
        if len(products) > 1 and _saves(products)
    }
    if not joined:
        return None
    # NOTE: the joined products first: they have the sum's shape, so every partial sum does
    # too, whatever the other terms broadcast from
    summed = [_joined(products, key[0], mapping, root, joins) for key, products in joined.items()]
    summed += [mapping.get(id(term), term) for term, key in zip(terms, keys) if key not in joined]
    total = summed[0]
    for term in summed[1:]:
        total = Node("add", (total, term), {}, root.shape, root.dtype, root.location)
    return total


def _saves(products):
    """Whether copying the operands moves fewer elements than the results saved (each
    product but one written, and read by the add)."""
    copied = sum(dims.size(p.inputs[0].shape) + dims.size(p.inputs[1].shape) for p in products)
    return copied < 2 * (len(products) - 1) * dims.size(products[0].shape)


def _joined(products, flags, mapping, root, joins):
    """One matmul of the products' operands joined along the inner dimension; a join of the
    same parts as another's (the steps' cotangents, which both weights' gradients read) is
    that one."""
    transpose_a, transpose_b = flags
    a_axis, b_axis = (0 if transpose_a else 1), (1 if transpose_b else 0)
    operands = []
    for position, axis in ((0, a_axis), (1, b_axis)):
        parts = tuple(mapping.get(id(p.inputs[position]), p.inputs[position]) for p in products)
        key = (tuple(id(part) for part in parts), axis)
        if key not in joins:
            shape = list(parts[0].shape)
            shape[axis] = sum(part.shape[axis] for part in parts)
            source = _sliced_whole(parts) if axis == 0 else None
            if source is not None:  # its rows in order: the tensor itself, its axes merged
                attrs, op, inputs = {"shape": tuple(shape)}, "reshape", (source,)
            else:
                attrs, op, inputs = {"axis": axis}, "concat", parts
            joins[key] = Node(op, inputs, attrs, tuple(shape), parts[0].dtype, root.location)
        operands.append(joins[key])
    attrs = matmul_attrs(transpose_a, transpose_b)
    return Node("matmul", tuple(operands), attrs, root.shape, root.dtype, root.location)


def _sliced_whole(parts):
    """The tensor x where `parts` are x[0], x[1], ... x[n - 1], all of its leading axis in
    order (an unrolled loop's inputs, xs[t]): joined along their first axis they are x with
    its first two axes merged, a reshape that moves no data. None for other parts."""
    source = parts[0].inputs[0] if parts[0].op == "slice" else None
    if source is None or source.shape[:1] != (len(parts),):
        return None
    for k, part in enumerate(parts):
        if part.op != "slice" or part.inputs[0] is not source or part.attrs["index"] != (k,):
            return None
    return source
