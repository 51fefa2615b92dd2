"""The forward-mode rules most ops share, for their records' `jvp=`.

A rule is `jvp(node, tangents, inputs, out) -> the tangent of the result`: `tangents` has
one Tensor per input (None where the input carries none), `inputs` and `out` are the
primal Tensors, and `node` the op's node (its attributes and the inputs' shapes). Rules
are written with tracer ops, so a tape or an outer accumulator sees them: forward over
reverse, reverse over forward and forward over forward all follow.

    LINEAR          the op applied to the tangents (reshape, add, gather's params...)
    PRODUCT         a bilinear op (mul, matmul): op(tx, y) + op(x, ty)
    DIAGONAL        an elementwise op of one input: its Jacobian is diagonal, so the
                    gradient rule applied to the tangent is the tangent (sin, exp...)
    TRANSPOSED_VJP  no rule of its own: the accumulator differentiates the op's gradient
                    rule once more (J t is the gradient of <J^T u, t> with respect to u)
"""

from tracer.ops.core import apply
from tracer.ops.registry import OPS, OUT, saved_slots

TRANSPOSED_VJP = "transposed vjp"


def zeros(shape, dtype):
    return apply(OPS["fill"], (), {"shape": tuple(shape), "dtype": dtype, "value": 0})


def tangent_or_zeros(tangent, primal):
    return tangent if tangent is not None else zeros(primal.shape, primal.dtype)


def LINEAR(node, tangents, inputs, out):
    """The op itself on the tangents: right for ops linear in their differentiable inputs
    jointly; the others (indices, conditions) keep their primal values."""
    args = [
        tangent_or_zeros(t, x) if x.dtype.is_differentiable else x for t, x in zip(tangents, inputs)
    ]
    return apply(OPS[node.op], tuple(args), node.attrs)


def PRODUCT(node, tangents, inputs, out):
    """The product rule of a bilinear op of two inputs."""
    (tx, ty), (x, y) = tangents, inputs
    op = OPS[node.op]
    terms = []
    if tx is not None:
        terms.append(apply(op, (tx, y), node.attrs))
    if ty is not None:
        terms.append(apply(op, (x, ty), node.attrs))
    return terms[0] if len(terms) == 1 else apply(OPS["add"], tuple(terms), {})


def DIAGONAL(node, tangents, inputs, out):
    """For an elementwise op of one input: f'(x) t, from the gradient rule, which gives
    conj(f'(x)) g (for real inputs, conj does nothing)."""
    op = OPS[node.op]
    saved = [out if slot == OUT else inputs[slot] for slot in saved_slots(op, node)]
    (cotangent,) = op.grad(node, _conj(tangents[0]), *saved)
    return _conj(cotangent)


def _conj(x):
    return apply(OPS["conj"], (x,), {}) if x.dtype.is_complex else x
