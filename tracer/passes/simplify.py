"""Constant folding and algebraic simplification.

    %1 = mul %0, 1.0          =>  %0              (x * 1, 1 * x, x + 0, x - 0, x / 1)
    %2 = neg (neg %0)         =>  %0
    %3 = transpose[perm=p] (transpose[perm=q] %0)  =>  transpose[perm=q∘p] %0, or %0
    %4 = reshape (reshape %0)  =>  reshape %0;  reshape/broadcast_to/cast to what it is  =>  %0
    %5 = pow %0, 2.0          =>  mul %0, %0      (numpy and libm give x*x exactly)
    %6 = slice[index=((0, 3, 1), None)] %0  =>  reshape %0   (x[:, None] moves no data)
    %7 = matmul (transpose[perm=(1, 0)] %0), %1  =>  matmul[transpose_a=True] %0, %1
    %8 = reshape (transpose (reshape %0))  =>  transpose %0   (the reshapes only add unit axes)
    %9 = matmul (mul E, %u), %w  =>  mul %u', %w'   (E a jacobian's one-hot seeds: see below)
    %6 = add 2.0, 3.0         =>  5.0             (every input a known constant)

Each rule but the last keeps the value bit for bit (x * 1 is x, also for NaN and -0.0 * 1;
x + 0 is not applied to -0.0 + 0, which is +0: rules that would change a signed zero are
left out). Rules only fire when the result has the node's own shape and dtype.

One-hot seeds. A jacobian's vectorized gradient multiplies its seeds, a constant E with
E[i, ..., j] = (i == j) that `tape.jacobian` marks `one_hot_seeds`, by a cotangent u, and
contracts the product with a matrix w: a GEMM in which all but one term of every sum is a
product with 0. The rule keeps that one term: row (i, ...) of the product is
u[..., i] * w[i, :]. That is the GEMM's value for finite inputs, except that an exact zero
may keep a sign the GEMM's sum of zeros would drop; and a NaN or Inf in w or u stays in the
rows that depend on it instead of spreading through the zero terms. Only marked seeds
match: a user's own `eye * d` product stays a matmul.
"""

import numpy as np

from runtime.kernels import KERNELS
from tracer.ir import Literal, Node
from tracer.ir.rewrite import rebuild

FOLD_LIMIT = (
    4096  # fold constants up to this many elements (as tracing does); larger ones stay computed
)


def simplify(graph):
    return rebuild(graph, _simplify_node)


def _simplify_node(node):
    for _ in range(_RULES_PER_NODE):  # a rule's result may be matched by another rule
        folded = _fold(node)
        if folded is not None:
            return folded
        rule = RULES.get(node.op)
        result = rule(node) if rule else None
        if result is None or result is node:
            return node
        node = result
    return node


_RULES_PER_NODE = 4


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
    return Node(
        "const",
        (),
        {"value": Literal(result.astype(node.dtype.as_numpy_dtype))},
        node.shape,
        node.dtype,
        node.location,
    )


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
    moved = _transpose_between_unit_axes(node)
    if moved is not None:
        return moved
    if x.op == "reshape":
        x = x.inputs[0]
    if x.shape == node.shape:
        return _same(node, x)
    if x is node.inputs[0]:
        return None
    return Node("reshape", (x,), node.attrs, node.shape, node.dtype, node.location)


def _transpose_between_unit_axes(node):
    """reshape(transpose(reshape(x))) where the inner reshape only inserts unit axes and the
    outer one only drops them: a transpose of x (how x[:, None] and its gradient come back)."""
    inner = node.inputs[0]
    if inner.op != "transpose" or inner.inputs[0].op != "reshape":
        return None
    expanded = inner.inputs[0]
    x = expanded.inputs[0]
    if 1 in x.shape or 1 in node.shape:
        return None
    kept = [axis for axis, size in enumerate(expanded.shape) if size != 1]
    if [expanded.shape[a] for a in kept] != list(x.shape):
        return None
    perm = tuple(kept.index(a) for a in inner.attrs["perm"] if expanded.shape[a] != 1)
    if tuple(x.shape[a] for a in perm) != node.shape:
        return None
    if perm == tuple(range(len(perm))):
        return _same(node, x)
    return Node("transpose", (x,), {"perm": perm}, node.shape, node.dtype, node.location)


def _identity_if_same(node):
    return _same(node, node.inputs[0])


def _pow(node):
    x, y = node.inputs
    if _is(y, 2) and _literal(y).ndim == 0:
        return (
            Node("mul", (x, x), {}, node.shape, node.dtype, node.location)
            if x.shape == node.shape
            else None
        )
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
    product = _one_hot_product(node, operands, flags)
    if product is not None:
        return product
    if all(new is old for new, old in zip(operands, node.inputs)):
        return None
    attrs = {name: True for name, flag in zip(("transpose_a", "transpose_b"), flags) if flag}
    return Node("matmul", tuple(operands), attrs, node.shape, node.dtype, node.location)


def _one_hot_product(node, operands, flags):
    """A 2-D matmul with one-hot seeds as an operand, as a broadcast mul: w @ diag(u) scales
    w's columns; rows of seeds times w pick w's rows (the module docstring says why)."""
    a, b = operands
    if len(node.shape) != 2 or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    seeds = _scaled_seeds(b)
    if seeds is not None:  # b is 2-D, so these seeds are a square matrix: b = diag(u)
        u = _broadcast(node, seeds[1], b.shape[1:])
        w = _transposed(node, a) if flags[0] else a
        return _same(node, _new(node, "mul", (w, u), node.shape))
    rows = a.inputs[0] if a.op == "reshape" and not flags[0] else a
    seeds = _scaled_seeds(rows)
    if seeds is None or (rows is not a and rows.shape[-1] != a.shape[1]):
        return None
    seed_shape, u = seeds[0].shape, seeds[1]
    n, middle, columns = seed_shape[0], seed_shape[1:-1], node.shape[1]
    # product[i, m..., x] = u[m..., i] * w[i, x], then merged back to the node's rows
    u = _broadcast(node, u, seed_shape[1:])
    u = _new(
        node, "transpose", (u,), (n,) + middle, perm=(len(middle),) + tuple(range(len(middle)))
    )
    u = _new(node, "reshape", (u,), (n,) + middle + (1,), shape=(n,) + middle + (1,))
    w = _transposed(node, b) if flags[1] else b
    w = _new(
        node,
        "reshape",
        (w,),
        (n,) + (1,) * len(middle) + (columns,),
        shape=(n,) + (1,) * len(middle) + (columns,),
    )
    product = _new(node, "mul", (u, w), (n,) + middle + (columns,))
    return _same(node, _new(node, "reshape", (product,), node.shape, shape=node.shape))


def _scaled_seeds(node):
    """(E, u) when `node` is mul(E, u) or mul(u, E), E constant seeds marked one-hot with
    E[i, ..., j] = (i == j) (the same identity for every middle index), and u not varying
    along E's first axis."""
    if node.op != "mul":
        return None
    for seeds, u in (node.inputs, node.inputs[::-1]):
        array = _literal(seeds) if seeds.attrs.get("one_hot_seeds") else None
        if (
            array is None
            or seeds.shape != node.shape
            or array.ndim < 2
            or array.shape[0] != array.shape[-1]
        ):
            continue
        if len(u.shape) == array.ndim and u.shape[0] != 1:
            continue
        eye = np.eye(array.shape[0], dtype=array.dtype).reshape(
            (array.shape[0],) + (1,) * (array.ndim - 2) + (array.shape[0],)
        )
        if np.array_equal(array, np.broadcast_to(eye, array.shape)):
            if len(u.shape) == array.ndim:
                u = _new(node, "reshape", (u,), u.shape[1:], shape=u.shape[1:])
            return seeds, u
    return None


def _broadcast(node, x, shape):
    return x if x.shape == shape else _new(node, "broadcast_to", (x,), shape, shape=shape)


def _transposed(node, x):
    return _new(node, "transpose", (x,), x.shape[::-1], perm=(1, 0))


def _new(node, op, inputs, result_shape, **attrs):
    return Node(op, inputs, attrs, tuple(result_shape), node.dtype, node.location)


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
