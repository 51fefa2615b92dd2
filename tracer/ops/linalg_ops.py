"""Matrix multiplication (batched, with numpy's broadcasting of the batch dimensions)."""

from tracer.ops import math_ops, shapes
from tracer.ops.convert import as_tensors
from tracer.ops.core import apply
from tracer.ops.reduction_ops import unbroadcast
from tracer.ops.registry import primitive


def _matmul_grad(node, g, a, b):
    """For C = op(A) @ op(B), with op a swap of the last two axes where the flags ask for it
    (and a conjugate for complex values):

        no flags:   dA = g @ B^H          dB = A^H @ g
        A^T:        dA = B @ g^H          dB = A @ g
        B^T:        dA = g @ B            dB = g^H @ A
        A^T, B^T:   dA = B^H @ g^H        dB = g^H @ A^H
    """
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    a, b = math_ops._conj(a), math_ops._conj(b)
    if not ta and not tb:
        da, db = _mm(g, b, False, True), _mm(a, g, True, False)
    elif ta and not tb:
        da, db = _mm(b, g, False, True), _mm(a, g, False, False)
    elif tb and not ta:
        da, db = _mm(g, b, False, False), _mm(g, a, True, False)
    else:
        da, db = _mm(b, g, True, True), _mm(g, a, True, True)
    return unbroadcast(da, node.inputs[0].shape), unbroadcast(db, node.inputs[1].shape)


def matmul_attrs(transpose_a, transpose_b):
    """The matmul node's attributes: only the flags that are set, so plain products print plainly."""
    return {
        name: True
        for name, flag in (("transpose_a", transpose_a), ("transpose_b", transpose_b))
        if flag
    }


def _mm(a, b, transpose_a, transpose_b):
    return apply(MATMUL, (a, b), matmul_attrs(transpose_a, transpose_b))


MATMUL = primitive("matmul", shapes.matmul, _matmul_grad, saves=(0, 1))


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """The matrix product of the last two axes of `a` and `b`.

    >>> tt.matmul(tt.ones((2, 3)), tt.ones((3, 4))).shape
    (2, 4)
    """
    a, b = as_tensors(a, b)
    return _mm(a, b, bool(transpose_a), bool(transpose_b))
