"""Constant folding and algebraic simplification.

    %1 = mul %0, 1.0          =>  %0              (x * 1, 1 * x, x + 0, x - 0, x / 1)
    %2 = neg (neg %0)         =>  %0
    %3 = transpose[perm=p] (transpose[perm=q] %0)  =>  transpose[perm=q∘p] %0, or %0
    %4 = reshape (reshape %0)  =>  reshape %0;  reshape/broadcast_to/cast to what it is  =>  %0
    %5 = pow %0, 2.0          =>  mul %0, %0      (numpy and libm give x*x exactly)
    %6 = slice[index=((0, 3, 1), None)] %0  =>  reshape %0   (x[:, None] moves no data)
    %7 = matmul (transpose[perm=(1, 0)] %0), %1  =>  matmul[transpose_a=True] %0, %1
    %6 = add 2.0, 3.0         =>  5.0             (every input a known constant)

Each rule keeps the value bit for bit (x * 1 is x, also for NaN and -0.0 * 1; x + 0 is
not applied to -0.0 + 0, which is +0: rules that would change a signed zero are left
out). Rules only fire when the result has the node's own shape and dtype.
"""

import numpy as np

from runtime.kernels import KERNELS
from tracer.ir import Literal, Node
from tracer.ir.rewrite import rebuild

FOLD_LIMIT = 4096  # fold constants up to this many elements (as tracing does); larger ones stay computed


def simplify(graph):
    return rebuild(graph, _simplify_node)


def _simplify_node(node):
    folded = _fold(node)
    if folded is not None:
        return folded
    rule = RULES.get(node.op)
    result = rule(node) if rule else None
    return node if result is None else result


def _literal(node):
    value = node.attrs.get("value") if node.op == "const" else None
    return value.array if isinstance(value, Literal) else None


def _is(node, number):
    value = _literal(node)
    return value is not None and value.size > 0 and bool(np.all(value == number))


def _fold(node):
    if node.op in ("input", "variable", "const") or not node.inputs:
        return None
    values = [_literal(i) for i in node.inputs]
    if any(v is None for v in values) or int(np.prod(node.shape)) > FOLD_LIMIT:
        return None
    with np.errstate(all="ignore"):
        result = np.asarray(KERNELS[node.op](*values, **node.attrs))
    return Node("const", (), {"value": Literal(result.astype(node.dtype.as_numpy_dtype))},
                node.shape, node.dtype, node.location)


def _same(node, candidate):
    return candidate if candidate.shape == node.shape and candidate.dtype == node.dtype else None


def _mul(node):
    x, y = node.inputs
    if _is(y, 1):
        return _same(node, x)
    if _is(x, 1):
        return _same(node, y)
    return None


def _add(node):
    # NOTE: x + 0 is x except for x = -0.0; only a literal -0.0 keeps every x's sign.
    x, y = node.inputs
    zero = _literal(y)
    if zero is not None and np.all(zero == 0) and np.all(np.signbit(zero)):
        return _same(node, x)
    return None


def _sub(node):
    x, y = node.inputs
    zero = _literal(y)
    if zero is not None and np.all(zero == 0) and not np.any(np.signbit(zero)):
        return _same(node, x)  # x - (+0) is x, also for x = -0.0
    return None


def _div(node):
    x, y = node.inputs
    return _same(node, x) if _is(y, 1) else None


def _neg(node):
    (x,) = node.inputs
    return x.inputs[0] if x.op == "neg" else None


def _transpose(node):
    (x,) = node.inputs
    perm = node.attrs["perm"]
    if x.op == "transpose":
        inner = x.attrs["perm"]
        perm = tuple(inner[p] for p in perm)
        x = x.inputs[0]
    if perm == tuple(range(len(perm))):
        return _same(node, x)
    if x is node.inputs[0]:
        return None
    return Node("transpose", (x,), {"perm": perm}, node.shape, node.dtype, node.location)


def _reshape(node):
    (x,) = node.inputs
    if x.op == "reshape":
        x = x.inputs[0]
    if x.shape == node.shape:
        return _same(node, x)
    if x is node.inputs[0]:
        return None
    return Node("reshape", (x,), node.attrs, node.shape, node.dtype, node.location)


def _identity_if_same(node):
    return _same(node, node.inputs[0])


def _pow(node):
    x, y = node.inputs
    if _is(y, 2) and _literal(y).ndim == 0:
        return Node("mul", (x, x), {}, node.shape, node.dtype, node.location) if x.shape == node.shape else None
    if _is(y, 1):
        return _same(node, x)
    return None


def _is_reshape_index(index, source_shape):
    """Whether a slice `index` keeps every element in order: full ranges with step 1, new
    axes, and ints only on axes of size 1 (so the slice is a reshape)."""
    axis = 0
    for item in index:
        if item is None:
            continue
        size = source_shape[axis]
        if isinstance(item, tuple):
            if item != (0, size, 1) and not (size == 0 and item[2] == 1):
                return False
        elif size != 1:
            return False
        axis += 1
    return True


def _slice(node):
    """x[:, None] and x[0] of a size-1 axis move no data: they are reshapes."""
    (x,) = node.inputs
    if _is_reshape_index(node.attrs["index"], x.shape):
        return Node("reshape", (x,), {"shape": node.shape}, node.shape, node.dtype, node.location)
    return None


def _slice_grad(node):
    (g,) = node.inputs
    if _is_reshape_index(node.attrs["index"], node.attrs["shape"]):
        return Node("reshape", (g,), {"shape": node.shape}, node.shape, node.dtype, node.location)
    return None


def _matmul(node):
    """matmul(transpose(x), y) => matmul[transpose_a](x, y): BLAS reads the transpose in place."""
    operands = list(node.inputs)
    flags = [node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)]
    for position in (0, 1):
        operand = operands[position]
        if operand.op == "transpose" and _swaps_last_two(operand.attrs["perm"]):
            operands[position] = operand.inputs[0]
            flags[position] = not flags[position]
    if all(new is old for new, old in zip(operands, node.inputs)):
        return None
    attrs = {name: True for name, flag in zip(("transpose_a", "transpose_b"), flags) if flag}
    return Node("matmul", tuple(operands), attrs, node.shape, node.dtype, node.location)


def _swaps_last_two(perm):
    rank = len(perm)
    return rank >= 2 and perm == tuple(range(rank - 2)) + (rank - 1, rank - 2)


RULES = {
    "matmul": _matmul,
    "slice": _slice,
    "slice_grad": _slice_grad,
    "mul": _mul,
    "add": _add,
    "sub": _sub,
    "div": _div,
    "neg": _neg,
    "transpose": _transpose,
    "reshape": _reshape,
    "broadcast_to": _identity_if_same,
    "cast": _identity_if_same,
    "identity": _identity_if_same,
    "pow": _pow,
}
