"""Matrix multiplication (batched, with numpy's broadcasting of the batch dimensions)."""

from tracer.ops import array_ops, math_ops, shapes
from tracer.ops.convert import as_tensors
from tracer.ops.core import apply
from tracer.ops.reduction_ops import unbroadcast
from tracer.ops.registry import primitive


def swap_last_axes(x):
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return array_ops.transpose(x, perm)


def _matmul_grad(node, g, a, b):
    """g @ b^H and a^H @ g (conjugate transposes, for complex operands)."""
    return (
        unbroadcast(matmul(g, math_ops._conj(b), transpose_b=True), node.inputs[0].shape),
        unbroadcast(matmul(math_ops._conj(a), g, transpose_a=True), node.inputs[1].shape),
    )


MATMUL = primitive("matmul", shapes.matmul, _matmul_grad, saves=(0, 1))


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """The matrix product of the last two axes of `a` and `b`.

    >>> tt.matmul(tt.ones((2, 3)), tt.ones((3, 4))).shape
    (2, 4)
    """
    a, b = as_tensors(a, b)
    if transpose_a:
        a = swap_last_axes(a)
    if transpose_b:
        b = swap_last_axes(b)
    return apply(MATMUL, (a, b), {})
