"""Constant folding and algebraic simplification: each op's own rules, then folding.

    %1 = mul %0, 1.0          =>  %0              (x * 1, 1 * x, x + (-0.0), x - 0, x / 1)
    %2 = neg (neg %0)         =>  %0
    %3 = transpose[perm=p] (transpose[perm=q] %0)  =>  transpose[perm=q∘p] %0, or %0
    %4 = reshape (reshape %0)  =>  reshape %0;  reshape/broadcast_to/cast to what it is  =>  %0
    %5 = pow %0, 2.0          =>  mul %0, %0      (numpy and libm give x*x exactly)
    %6 = slice[index=((0, 3, 1), None)] %0  =>  reshape %0   (x[:, None] moves no data)
    %7 = matmul (transpose[perm=(1, 0)] %0), %1  =>  matmul[transpose_a=True] %0, %1
    %8 = reshape (transpose (reshape %0))  =>  transpose %0   (the reshapes only add unit axes)
    %9 = matmul (mul E, %u), %w  =>  mul %u', %w'   (E a jacobian's one-hot seeds: seed_ops.py)
    %6 = add 2.0, 3.0         =>  5.0             (every input a known constant)
    %3 = get[index=0] (while[maximum_iterations=1] ...)  =>  the body's value (it runs once)

The rules are declared with their ops (`OpDef.simplify`, in `tracer/ops/`); this pass applies
them node by node, each to its result again (a bounded number of times), and folds nodes
whose inputs are all known constants. A node of several results whose op can `resolve`
them (a loop that runs once: tracer/control/loops.py) is replaced, in the `get`s that read
it, by the nodes that compute them. Each rule but folding keeps the value bit for bit
(x * 1 is x, also for NaN and -0.0 * 1; rules that would change a signed zero are left
out), and a rule's result has the node's own shape and dtype.
"""

import numpy as np

from runtime.kernels import KERNELS
from tracer.ir import LEAF_OPS, Literal, Node, dims, match
from tracer.ir.rewrite import rebuild
from tracer.ops.registry import OPS

FOLD_LIMIT = (
    4096  # fold constants up to this many elements (as tracing does); larger ones stay computed
)
_REWRITES_PER_NODE = 4  # a rule's result may be matched by another rule, a few times over


def simplify(graph):
    resolved = {}  # id(node of several results) -> the nodes of its results

    def rewrite(node):
        if node.op == "get" and id(node.inputs[0]) in resolved:
            return resolved[id(node.inputs[0])][node.attrs["index"]]
        node = _simplify_node(node)
        resolve = OPS[node.op].resolve if node.op not in LEAF_OPS else None
        if resolve is not None:
            results = resolve(node, _simplify_node)
            if results is not None:
                resolved[id(node)] = results
        return node

    return rebuild(graph, rewrite)


def _simplify_node(node):
    for _ in range(_REWRITES_PER_NODE):
        folded = _fold(node)
        if folded is not None:
            return folded
        result = _rewrite(node)
        if result is None or result is node:
            return node
        node = result
    return node


def _rewrite(node):
    """The first rewrite of `node` that one of its op's rules offers, or None."""
    if node.op in LEAF_OPS:
        return None
    for rule in OPS[node.op].simplify:
        result = rule(node)
        if result is not None and result is not node:
            return result
    return None


def _fold(node):
    if node.op in LEAF_OPS or not node.inputs or node.dtype.is_tuple:
        return None  # (a node of several results stays: its `get`s are what folds)
    values = [match.literal(i) for i in node.inputs]
    if any(v is None for v in values) or not dims.is_known(node.shape):
        return None
    if dims.size(node.shape) > FOLD_LIMIT or dims.symbols_of(node.attrs):
        return None
    with np.errstate(all="ignore"):
        result = np.asarray(KERNELS[node.op](*values, **node.attrs))
    value = Literal(result.astype(node.dtype.as_numpy_dtype))
    return Node("const", (), {"value": value}, node.shape, node.dtype, node.location)
