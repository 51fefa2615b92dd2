"""A cached gradient graph made lighter for the tape it runs over, once, as it is built.

An eager tape's gradient graph runs op by op (straight-line numpy), with no fusion and no
simplification, so each of its ops is a pass over whole arrays. Three rewrites, each keeping
every value bit for bit, take passes away:

1. Residuals that take the same forward value become one input: relu keeps its output and
   the max pool after it keeps the same array as its input, and a rule that asks whether two
   operands are one value (rule 2's) sees that they are.
2. Two of the ops' simplification rules (`tracer/passes/simplify.py` runs them all on
   compiled code): relu's gradient after a max pool's scatter, or a select on a predicate
   of the pooled array, becomes the scatter of the pooled cotangent masked by the pooled
   maxima (`window_ops.mask_the_relus_maxima`, `mask_the_maxima`): a mask over a quarter
   of the elements instead of a pass over all of them.
3. A node that computes again a value the tape keeps reads it from the tape instead: the
   pooled maxima rule 2 asks for are the max pool's output, which the next layer's
   convolution keeps as its input (or the dense layer's product, flattened: a reshape of
   the kept array, which moves no data).
"""

from tracer.ir import LEAF_OPS, Node
from tracer.ir.rewrite import rebuild, substitute, with_outputs
from tracer.ops import window_ops
from tracer.ops.registry import OPS, saved_slots
from tracer.passes.gradient import residual_node

# the rules of rewrite 2 (those that pay when each op is a pass of its own), by op
_RULES = {"relu_grad": window_ops.mask_the_relus_maxima, "select": window_ops.mask_the_maxima}


def over_the_tape(grad, forward):
    """`grad` (a GradientGraph of `forward`) with the rewrites above, in place; a residual
    that the rewrites leave unread is dropped. A graph with no max pool's gradient is left
    as it is: walking every node of a large one (an unrolled LSTM's) would lengthen the
    step that builds it for nothing."""
    if not any(node.op == "window_max_scatter" for node in grad.graph.nodes):
        return grad
    value_of = {}  # id(residual input) -> the forward value it takes
    input_of = {}  # id(forward value) -> its residual input
    merged = {}
    for node, position, slot in grad.residuals:
        value = residual_node(forward, position, slot)
        value_of[id(node)] = value
        first = input_of.setdefault(id(value), node)
        if first is not node:
            merged[id(node)] = first
    outputs = substitute(grad.graph, merged) if merged else grad.graph.outputs
    graph = rebuild(with_outputs(grad.graph.inputs, outputs), _masked_at_the_maxima)
    residuals = [r for r in grad.residuals if id(r[0]) not in merged]
    graph = _read_from_the_tape(graph, forward, value_of, input_of, residuals)
    used = {id(i) for n in graph.nodes for i in n.inputs} | {id(o) for o in graph.outputs}
    grad.residuals = [r for r in residuals if id(r[0]) in used]
    seeds = [s for s in grad.seeds if s is not None]
    grad.graph = with_outputs(seeds + [r[0] for r in grad.residuals], graph.outputs)
    return grad


def _masked_at_the_maxima(node):
    rule = _RULES.get(node.op)
    return node if rule is None else rule(node) or node


def _read_from_the_tape(graph, forward, value_of, input_of, residuals):
    """`graph` with each node that computes what a node of `forward` computed, from the same
    forward values, replaced by a residual input of that node's value where the tape keeps
    it, or by a reshape of one where the tape keeps a reshape of it (the last max pool's
    output, flattened for the dense layer); `residuals` grows by what this adds."""
    kept = {}  # id(forward value) -> (position, slot) of a forward node that keeps it
    tracked = {id(node) for node in forward.nodes}
    for position, node in enumerate(forward.nodes):
        if node.op in LEAF_OPS or node.op not in OPS:
            continue
        op = OPS[node.op]
        for slot in range(len(saved_slots(op, node))):
            if op.saved_for is not None and not any(
                id(node.inputs[k]) in tracked for k in op.saved_for[slot]
            ):
                continue  # a Python number's operand: the tape may keep None (core._kept_for)
            kept.setdefault(id(residual_node(forward, position, slot)), (position, slot))
    viewed = {}  # id(forward value) -> a reshape of it that the tape keeps
    for node in forward.nodes:
        if node.op == "reshape" and id(node) in kept:
            viewed.setdefault(id(node.inputs[0]), node)
    made = {}  # (op, ids of its inputs, attributes) -> a forward node the tape can give
    for node in forward.nodes:
        if (id(node) in kept or id(node) in viewed) and node.op not in LEAF_OPS:
            key = _key(node.op, node.inputs, node.attrs)
            if key is not None:
                made.setdefault(key, node)
    if not made:
        return graph

    def tape_input(value):
        known = input_of.get(id(value))
        if known is None:
            position, slot = kept[id(value)]
            keeper = forward.nodes[position]
            name = {"name": f"{keeper.op}.{slot}"}
            known = Node("input", (), name, value.shape, value.dtype, keeper.location)
            residuals.append((known, position, slot))
            input_of[id(value)] = known
            value_of[id(known)] = value
        return known

    def rewrite(node):
        values = [value_of.get(id(i)) for i in node.inputs]
        if not values or None in values:
            return node
        same = made.get(_key(node.op, values, node.attrs))
        if same is None or same.shape != node.shape or same.dtype != node.dtype:
            return node
        if id(same) in kept:
            return tape_input(same)
        view = tape_input(viewed[id(same)])
        shape = {"shape": same.shape}
        return Node("reshape", (view,), shape, same.shape, same.dtype, node.location)

    return rebuild(graph, rewrite)


def _key(op, inputs, attrs):
    """A node's op, inputs (by identity) and attributes, hashable; None where an attribute
    is not."""
    key = (op, tuple(id(i) for i in inputs), tuple(sorted(attrs.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key
