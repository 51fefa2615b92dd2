"""Products computed by the kernel that reads them, a block of rows at a time: the last step
of fusion (tracer/passes/fuse.py).

A matrix product of a short depth writes far more than it computes: k-means' distances
(10,000 points by 1,000 centroids over 16 coordinates) are 80 MB written by the product and
read back by the kernel that takes each row's minimum, for 16 multiply-adds an element. Where
that kernel is the product's only reader and reads each element of the product only while
it computes the same row (elementwise ops, and a reduction over the row), the product moves
into the kernel's body:

    %2 = matmul[transpose_b=True] %0, %1         %3 = fused[kernel=k_matmul_reduce_min_..] %0,..
    %3 = fused[kernel=k_reduce_min_..] %2, ..      %0, %1 = input ...
                                         =>       %2 = matmul[transpose_b=True] %0, %1
                                                   ... reduce_min[axis=(1,)] ...

The C module then computes a block of the product's rows into a buffer of the block's own,
which stays in the cache while the kernel's loops read it (codegen/row_products.py), and
never writes the whole product; the interpreter runs the body as it runs any. A target
whose code cannot do it (exported C) says so (CostHints.products_in_rows) and keeps the
product apart; exported C, written from the C module's graph, stores such products again
(`products_stored`).
"""

from codegen.row_products import ROWS_STEP
from tracer.ir import Node, dims
from tracer.ir.rewrite import with_outputs
from tracer.ops.registry import OPS

# The most terms of a product's sums moved into its reader: deeper products do more work an
# element than a write costs, and a block of rows packs the other operand again.
MOST_DEPTH = 64
# The fewest bytes of a product of known sizes moved into its reader: a smaller one stays in
# the caches between the two kernels.
FEWEST_BYTES = 1 << 22
FEWEST_COLUMNS = 8  # a product of fewer columns is a few matrix-vector products
# The fewest rows of a product of known rows: two blocks (codegen/row_products.py), which two
# threads share (each block's loops run on one).
FEWEST_ROWS = 2 * ROWS_STEP
# The most bytes of a block of a product of known columns: a block's buffer stays in the
# second-level cache while the loops read it.
MOST_BLOCK_BYTES = 1 << 21


def products_in_rows(graph, hints):
    """`graph` (fused) with each product that qualifies (`_takes_product`) moved into the
    kernel that reads it, where `hints` (the target's CostHints) allow it."""
    if not hints.products_in_rows():
        return graph
    candidates = [
        (node, position)
        for node in graph.nodes
        if node.op == "fused"
        for position, value in enumerate(node.inputs)
        if _is_row_product(value)
    ]
    if not candidates:  # (most graphs: no walk over every node's inputs)
        return graph
    readers = {}
    for node in graph.nodes:
        for value in node.inputs:
            readers[id(value)] = readers.get(id(value), 0) + 1
    readers.update({id(o): 2 for o in graph.outputs})  # an output is stored
    mapping = {}
    for node, position in candidates:
        if id(node) not in mapping and readers[id(node.inputs[position])] == 1:
            if _takes_product(node, position, hints):
                mapping[id(node)] = _with_product(node, position)
    if not mapping:
        return graph
    remapped = {}
    for node in graph.nodes:
        source = mapping.get(id(node), node)
        inputs = tuple(remapped.get(id(i), i) for i in source.inputs)
        if source is node and all(a is b for a, b in zip(inputs, node.inputs)):
            continue
        remapped[id(node)] = Node(
            source.op, inputs, source.attrs, source.shape, source.dtype, source.location
        )
    return with_outputs(graph.inputs, [remapped.get(id(o), o) for o in graph.outputs])


def _is_row_product(node):
    """A single product of float32 or float64 matrices of that dtype, of a known short depth
    (MOST_DEPTH), of at least FEWEST_COLUMNS and FEWEST_ROWS and at most MOST_BLOCK_BYTES a
    block where those are known, and a large result (FEWEST_BYTES) where both are; a result
    whose sizes are known only when the module runs (a `TensorSpec(None)`, an automatic
    dynamic dimension) is taken whatever they are (a small one is one block or a few)."""
    if node.op != "matmul" or node.dtype.name not in ("float32", "float64"):
        return False
    a, b = node.inputs
    if len(node.shape) != 2 or len(a.shape) != 2 or len(b.shape) != 2:
        return False
    if a.dtype != node.dtype or b.dtype != node.dtype:
        return False
    depth = a.shape[0] if node.attrs.get("transpose_a", False) else a.shape[1]
    if not isinstance(depth, int) or not 0 < depth <= MOST_DEPTH:
        return False
    m, n = node.shape
    if isinstance(m, int) and m < FEWEST_ROWS:
        return False
    itemsize = node.dtype.itemsize
    if isinstance(n, int) and not FEWEST_COLUMNS <= n <= MOST_BLOCK_BYTES // (itemsize * ROWS_STEP):
        return False
    return not dims.is_known(node.shape) or m * n * itemsize >= FEWEST_BYTES


def _takes_product(node, position, hints):
    """Whether the fused `node`, of one result, reads its input `position` (a product) only
    at the element it is computing: every body value that depends on it is a value of the
    product's shape computed elementwise (no view between), or the result, a reduction of
    such a value over its rows (axis 1); and no body value checks its elements (a kernel with
    guards runs in order, on one thread)."""
    body = node.attrs["kernel"].body
    if len(body.outputs) != 1:
        return False
    (root,) = body.outputs
    shape = node.inputs[position].shape
    product = body.inputs[position]
    if _fusion_kind(root) == "reduction":
        if root.inputs[0].shape != shape or tuple(root.attrs["axis"]) != (1,):
            return False
    elif root.shape != shape:
        return False
    depends = {id(product)}
    for value in body.nodes:
        if value.op == "input":
            continue
        if hints.may_fail(value) or value.op == "concat":
            return False  # (a concat is read in boxes of rows, which blocks of rows are not)
        if not any(id(i) in depends for i in value.inputs):
            continue
        depends.add(id(value))
        if value is root and _fusion_kind(value) == "reduction":
            continue
        if _fusion_kind(value) != "elementwise" or value.shape != shape:
            return False
    return id(root) in depends


def _fusion_kind(node):
    """What the op's record says fusion makes of it: "elementwise", "view", "reduction"."""
    op = OPS.get(node.op)
    return None if op is None else op.fusion


def _with_product(node, position):
    """The fused `node` computing its input `position` (a product) in its body: the product's
    operands are its inputs in that one's place (an operand it reads already keeps its one
    input)."""
    product = node.inputs[position]
    body = node.attrs["kernel"].body
    inputs, params, mapping = [], [], {}
    for k, (value, param) in enumerate(zip(node.inputs, body.inputs)):
        if k == position:
            for operand in product.inputs:
                if not any(operand is i for i in inputs):
                    inputs.append(operand)
                    params.append(_param(operand, len(params)))
            continue
        known = _position(inputs, value)
        if known is not None:  # the product's operand, read by the body too
            mapping[id(param)] = params[known]
            continue
        inputs.append(value)
        params.append(_param(value, len(params)))
        mapping[id(param)] = params[-1]
    operands = tuple(params[_position(inputs, o)] for o in product.inputs)
    mapping[id(body.inputs[position])] = Node(
        product.op, operands, product.attrs, product.shape, product.dtype, product.location
    )
    kernel = node.attrs["kernel"]
    graph = _copied(body, params, mapping)
    kernel = type(kernel)(graph, kernel.name.replace("k_", "k_matmul_", 1))
    attrs = {**node.attrs, "kernel": kernel}
    return Node("fused", tuple(inputs), attrs, node.shape, node.dtype, node.location)


def _copied(body, params, mapping):
    """The graph over `params` of a copy of `body`, whose inputs (and product) `mapping`
    maps (id -> their node in the copy): each other node copied after its inputs."""
    for value in body.nodes:
        if id(value) in mapping or value.op == "input":
            continue
        copied = tuple(mapping.get(id(i), i) for i in value.inputs)
        mapping[id(value)] = Node(
            value.op, copied, value.attrs, value.shape, value.dtype, value.location
        )
    return with_outputs(params, [mapping[id(o)] for o in body.outputs])


def _position(values, value):
    """The position of `value` itself (not an equal node) in `values`, or None."""
    return next((k for k, v in enumerate(values) if v is value), None)


def _param(value, k):
    return Node("input", (), {"name": f"p{k}"}, value.shape, value.dtype)


def products_stored(graph):
    """`graph` with each kernel that computes a product in its body (`products_in_rows`) back
    as the product and a kernel that reads it: for code that computes no product in a kernel
    (exported C, written from the C module's graph). The graphs its nodes hold are the
    caller's to treat (pipeline.run_nested)."""
    mapping = {}
    for node in graph.nodes:
        inputs = tuple(mapping.get(id(i), i) for i in node.inputs)
        product = _body_product(node)
        if product is not None:
            mapping[id(node)] = _without_product(node, inputs, product)
        elif any(a is not b for a, b in zip(inputs, node.inputs)):
            mapping[id(node)] = Node(
                node.op, inputs, node.attrs, node.shape, node.dtype, node.location
            )
    if not mapping:
        return graph
    return with_outputs(graph.inputs, [mapping.get(id(o), o) for o in graph.outputs])


def _body_product(node):
    """The product a fused node's body computes (`_with_product`), or None."""
    if node.op != "fused":
        return None
    return next((n for n in node.attrs["kernel"].body.nodes if n.op == "matmul"), None)


def _without_product(node, inputs, product):
    """The product of the fused `node` (reading `inputs`) as a node of its own, which a copy
    of the kernel reads in the product's place; the product's operands stay the kernel's
    inputs where its body reads them otherwise too."""
    body = node.attrs["kernel"].body
    operands = tuple(inputs[_position(body.inputs, o)] for o in product.inputs)
    stored = Node(
        product.op, operands, product.attrs, product.shape, product.dtype, product.location
    )
    read = {id(i) for n in body.nodes if n is not product for i in n.inputs}
    read.update(id(o) for o in body.outputs)
    kept = [(value, param) for value, param in zip(inputs, body.inputs) if id(param) in read]
    new_inputs = [value for value, _ in kept] + [stored]
    params = [_param(value, k) for k, value in enumerate(new_inputs)]
    mapping = {id(param): new for (_, param), new in zip(kept, params)}
    mapping[id(product)] = params[-1]
    kernel = node.attrs["kernel"]
    graph = _copied(body, params, mapping)
    kernel = type(kernel)(graph, kernel.name.replace("k_matmul_", "k_", 1))
    attrs = {**node.attrs, "kernel": kernel}
    return Node("fused", tuple(new_inputs), attrs, node.shape, node.dtype, node.location)
