"""The one-hot seeds of a jacobian, and the rule that drops their products with zeros.

`tape.jacobian` runs the gradient graph once for all rows of the jacobian: its seeds are the
rows of an identity, E[r, ...] = 1 at element r of the target and 0 elsewhere (kind
"full"), or, for `batch_jacobian`, E[r, b, ...] = 1 at element r of every example b (kind
"per_example"). `one_hot_seeds` makes rows `start` to `start + shape[0]` of them from its
attributes alone, so no rows x size array is stored in a graph; in compiled code each element
is computed where it is read.

A vectorized gradient multiplies the seeds by a cotangent u and contracts the product with
a matrix w: a GEMM in which all but one term of every sum is a product with 0.
`product_with_seeds`, one of matmul's simplifications, keeps that one term: row (i, ...)
of the product is u[..., i] * w[i, :]. That is the GEMM's value for finite inputs, except
that an exact zero may keep a sign the GEMM's sum of zeros would drop; and a NaN or Inf in w
or u stays in the rows that depend on it instead of spreading through the zero terms. Only
these seeds match: a user's own `eye * d` product stays a matmul.

A jacobian of elementwise functions multiplies the seeds by one value after another, each
product rows x size: (E * a) * b, -(E * a), E * a + E * c. The seeds factor out
(`seeds_out_of_mul`, `seeds_out_of_neg`, `seeds_out_of_sum`, simplifications of mul, neg,
add and sub): E * (a * b), E * (-a), E * (a + c), so the values in between are of the
target's size and only the last product is rows x size. As E is 0 or 1 this is the same value for finite results, except that a zero may
take another sign (0 * (a + c) is -0.0 where 0 * a + 0 * c is +0.0); where a * b or a + c
overflows, or is NaN, the rows that read it are NaN instead of zero, as above.
"""

import math

import numpy as np

from codegen import forms
from codegen.affine import offset
from codegen.ctypes import compute
from codegen.loops import INDEX
from tracer.dtypes import as_dtype
from tracer.ir import dims, match
from tracer.ops.registry import primitive, unbatchable
from tracer.ops.shapes import broadcast_shapes

KINDS = ("full", "per_example")


def _infer_seeds(attrs):
    if attrs["kind"] not in KINDS:
        raise ValueError(f"the kind of seeds is one of {KINDS}, not {attrs['kind']!r}")
    return attrs["shape"], attrs["dtype"]


def _layout(shape, kind):
    """The seeds' shape as (rows, [batch], elements of one target or example)."""
    if kind == "per_example":
        return (shape[0], shape[1], int(np.prod(shape[2:])))
    return (shape[0], int(np.prod(shape[1:])))


def _seeds_kernel(shape, dtype, kind, start):
    layout = _layout(shape, kind)
    rows = np.eye(layout[0], layout[-1], k=start, dtype=dtype.as_numpy_dtype)
    if kind == "per_example":
        rows = np.broadcast_to(rows[:, None, :], layout)
    return rows.reshape(shape)


def _seeds_c(node, index_map):
    """(start + row == element), the element's position within its target or example."""
    within = 2 if node.attrs["kind"] == "per_example" else 1
    element = offset(index_map[within:], node.shape[within:]).c(INDEX)
    row = (index_map[0] + node.attrs["start"]).c(INDEX)
    return f"({compute(node.dtype)})({row} == {element})"


ONE_HOT_SEEDS = primitive(
    "one_hot_seeds",
    _infer_seeds,
    fusion="elementwise",
    batch=unbatchable("makes its value from its attributes alone: nothing to batch"),
    kernel=_seeds_kernel,
    c=forms.Generator(_seeds_c),
)


def seed_attrs(kind, target_shape, dtype, start, rows):
    """The attributes of rows `start` to `start + rows` of the seeds of `kind` for a target of
    `target_shape`."""
    return {"shape": (rows, *target_shape), "dtype": as_dtype(dtype), "kind": kind, "start": start}


def seed_count(kind, target_shape):
    """How many rows the seeds of `kind` have: one per element of the target, or of one example."""
    return math.prod(target_shape[1:] if kind == "per_example" else target_shape)


# --- the rule ----------------------------------------------------------------------------


def product_with_seeds(node):
    """A 2-D matmul with seeds scaled by u as an operand => a broadcast mul: w @ diag(u) scales
    w's columns; rows of seeds times w pick w's rows (see the module docstring)."""
    a, b = node.inputs
    if len(node.shape) != 2 or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    transpose_a, transpose_b = (
        node.attrs.get("transpose_a", False),
        node.attrs.get("transpose_b", False),
    )
    seeds = _scaled_seeds(b)
    if seeds is not None:  # b is 2-D, so these seeds are a square matrix: b = diag(u)
        u = _broadcast(node, seeds[1], b.shape[1:])
        w = _transposed(node, a) if transpose_a else a
        return match.same(node, match.derived(node, "mul", (w, u), node.shape))
    rows = a.inputs[0] if a.op == "reshape" and not transpose_a else a
    seeds = _scaled_seeds(rows)
    if seeds is None or (rows is not a and rows.shape[-1] != a.shape[1]):
        return None
    seed_shape, u = seeds[0].shape, seeds[1]
    n, middle, columns = seed_shape[0], seed_shape[1:-1], node.shape[1]
    # product[i, m..., x] = u[m..., i] * w[i, x], then merged back to the node's rows
    u = _broadcast(node, u, seed_shape[1:])
    perm = (len(middle),) + tuple(range(len(middle)))
    u = match.derived(node, "transpose", (u,), (n,) + middle, perm=perm)
    u = match.derived(node, "reshape", (u,), (n,) + middle + (1,), shape=(n,) + middle + (1,))
    w = _transposed(node, b) if transpose_b else b
    w_shape = (n,) + (1,) * len(middle) + (columns,)
    w = match.derived(node, "reshape", (w,), w_shape, shape=w_shape)
    product = match.derived(node, "mul", (u, w), (n,) + middle + (columns,))
    return match.same(
        node, match.derived(node, "reshape", (product,), node.shape, shape=node.shape)
    )


def _is_identity(seeds):
    """Whether seeds E are E[i, ..., j] = (i == j), the same identity for every middle index
    (every example's, and across axes of size 1)."""
    shape, attrs = seeds.shape, seeds.attrs
    if len(shape) < 2 or shape[0] != shape[-1] or attrs["start"] != 0:
        return False
    middle = shape[2:-1] if attrs["kind"] == "per_example" else shape[1:-1]
    return all(d == 1 for d in middle)


def _scaled_seeds(node):
    """(E, u) when `node` is mul(E, u) or mul(u, E), E identity-like seeds (`_is_identity`)
    and u not varying along E's first axis."""
    if node.op != "mul":
        return None
    for seeds, u in (node.inputs, node.inputs[::-1]):
        if seeds.op != "one_hot_seeds" or seeds.shape != node.shape or not _is_identity(seeds):
            continue
        if len(u.shape) == len(seeds.shape) and u.shape[0] != 1:
            continue
        if len(u.shape) == len(seeds.shape):
            u = match.derived(node, "reshape", (u,), u.shape[1:], shape=u.shape[1:])
        return seeds, u
    return None


def _broadcast(node, x, shape):
    return x if x.shape == shape else match.derived(node, "broadcast_to", (x,), shape, shape=shape)


def _transposed(node, x):
    return match.derived(node, "transpose", (x,), x.shape[::-1], perm=(1, 0))


# --- factoring the seeds out of elementwise products ---------------------------------------


def seeds_out_of_mul(node):
    """(E * a) * b => E * (a * b), where a * b is smaller than the product."""
    for product, b in (node.inputs, node.inputs[::-1]):
        factored = _seeds_times(product)
        if factored is not None:
            seeds, a = factored
            return _factored(node, seeds, "mul", a, b)
    return None


def seeds_out_of_neg(node):
    """-(E * a) => E * (-a)."""
    factored = _seeds_times(node.inputs[0])
    if factored is None:
        return None
    seeds, a = factored
    negated = match.derived(node, "neg", (a,), a.shape)
    return match.same(node, match.derived(node, "mul", (seeds, negated), node.shape))


def seeds_out_of_sum(node):
    """E * a + E * c => E * (a + c), and so for sub, with the same seeds E."""
    left, right = (_seeds_times(x) for x in node.inputs)
    if left is None or right is None or not same_seeds(left[0], right[0]):
        return None
    return _factored(node, left[0], node.op, left[1], right[1])


def holds_seeds(node):
    """Whether `node` is a jacobian's seeds E, or E * a (what seeds_out_of_mul factors)."""
    return node.op == "one_hot_seeds" or _seeds_times(node) is not None


def _seeds_times(node):
    """(E, a) when `node` is E * a or a * E, a real floating product of `node`'s shape with
    seeds E of that shape; else None."""
    if node.op != "mul" or not node.dtype.is_floating:
        return None
    for seeds, a in (node.inputs, node.inputs[::-1]):
        if seeds.op == "one_hot_seeds" and seeds.shape == node.shape:
            return seeds, a
    return None


def same_seeds(e, f):
    """Whether nodes `e` and `f` make the same seeds (one node, or two equal ones)."""
    return e is f or (e.op == f.op and e.shape == f.shape and e.attrs == f.attrs)


def _factored(node, seeds, op, a, b):
    """E * (a `op` b) at `node`'s place, when a `op` b is smaller than `node`; else None."""
    if not (dims.is_known(node.shape) and dims.is_known(a.shape) and dims.is_known(b.shape)):
        return None
    inner_shape = broadcast_shapes(a.shape, b.shape)
    if dims.size(inner_shape) >= dims.size(node.shape):
        return None
    inner = match.derived(node, op, (a, b), inner_shape)
    return match.same(node, match.derived(node, "mul", (seeds, inner), node.shape))
