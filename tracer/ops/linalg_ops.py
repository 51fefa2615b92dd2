"""Matrix multiplication (batched, with numpy's broadcasting of the batch dimensions)."""

import numpy as np

from codegen import array_blas, forms
from codegen.affine import broadcast_map, offset
from codegen.ctypes import compute, storage
from codegen.loops import INDEX, PARALLEL_MIN, identity_map
from tracer.dtypes import as_dtype
from tracer.ir import dims, match
from tracer.ops import array_ops, batching, seed_ops, shapes
from tracer.ops.broadcast_ops import unbroadcast
from tracer.ops.convert import as_tensors
from tracer.ops.core import apply, op_function
from tracer.ops.math_ops import conj_if_complex
from tracer.ops.registry import primitive
from tracer.ops.tangent_rules import PRODUCT


def _matmul_grad(node, g, a, b):
    """For C = op(A) @ op(B), with op a swap of the last two axes where the flags ask for it
    (and a conjugate for complex values):

        no flags:   dA = g @ B^H          dB = A^H @ g
        A^T:        dA = B @ g^H          dB = A @ g
        B^T:        dA = g @ B            dB = g^H @ A
        A^T, B^T:   dA = B^H @ g^H        dB = g^H @ A^H
    """
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    a, b = conj_if_complex(a), conj_if_complex(b)
    if not ta and not tb:
        da, db = _mm(g, b, False, True), _mm(a, g, True, False)
    elif ta and not tb:
        da, db = _mm(b, g, False, True), _mm(a, g, False, False)
    elif tb and not ta:
        da, db = _mm(g, b, False, False), _mm(g, a, True, False)
    else:
        da, db = _mm(b, g, True, True), _mm(g, a, True, True)
    return unbroadcast(da, node.inputs[0].shape), unbroadcast(db, node.inputs[1].shape)


def _matmul_batch(node, args, flags, size):
    """A batch of products with one unbatched matrix is one product, not `size` small ones:
    (B, m, k) @ (k, n) = ((B*m, k) @ (k, n)) reshaped; (m, k) @ (B, k, n) likewise through
    (k, B*n)."""
    a, b = args
    attrs = node.attrs
    if flags == [True, False] and a.ndim == 3 and b.ndim == 2 and not attrs.get("transpose_a"):
        _, m, k = a.shape
        product = apply(MATMUL, (array_ops.reshape(a, (size * m, k)), b), attrs)
        return array_ops.reshape(product, (size, m, product.shape[-1]))
    if flags == [False, True] and a.ndim == 2 and b.ndim == 3 and not attrs.get("transpose_b"):
        _, k, n = b.shape
        columns = array_ops.reshape(array_ops.transpose(b, (1, 0, 2)), (k, size * n))
        product = apply(MATMUL, (a, columns), attrs)
        return array_ops.transpose(
            array_ops.reshape(product, (product.shape[0], size, n)), (1, 0, 2)
        )
    return apply(MATMUL, tuple(batching.aligned(node, args, flags)), attrs)


def _swaps_last_two(perm):
    rank = len(perm)
    return rank >= 2 and perm == tuple(range(rank - 2)) + (rank - 1, rank - 2)


def _fold_transposes(node):
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
    return match.derived(node, "matmul", operands, node.shape, **matmul_attrs(*flags))


def _outer_product(node):
    """A product over an inner dimension of size 1 is an outer product: matmul(a[..., m, 1],
    b[..., 1, n]) => mul(a, b), broadcast. One product per element, as the GEMM computes it
    (alpha 1, beta 0), so the value is the same; and a mul fuses with what reads it (a
    batch-1 weight gradient into the optimizer's update, never stored)."""
    a, b = node.inputs
    m, n = node.shape[-2:]
    if len(a.shape) < 2 or len(b.shape) < 2 or a.shape[-2:].count(1) == 0:
        return None
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    inner = a.shape[-2] if ta else a.shape[-1]
    if inner != 1:
        return None
    column = a.shape[:-2] + (m, 1)
    row = b.shape[:-2] + (1, n)
    if ta:
        a = match.derived(node, "reshape", (a,), column, shape=column)
    if tb:
        b = match.derived(node, "reshape", (b,), row, shape=row)
    return match.same(node, match.derived(node, "mul", (a, b), node.shape))


def _matmul_kernel(a, b, transpose_a=False, transpose_b=False):
    through_blas = array_blas.product(a, b, transpose_a, transpose_b)
    if through_blas is not None:
        return through_blas
    a = np.swapaxes(a, -1, -2) if transpose_a else a
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    if a.shape[-1] == 1 and a.dtype.kind in "fiu":  # an outer product: a product per element,
        return a * b  # as the GEMM and the compiled mul (_outer_product) compute it
    return np.matmul(a, b)


def _matmul_c(node, blas):
    """templates/matmul.c.j2: one GEMM per batch element, through the BLAS for float32 and
    float64 when the module links it, else plain loops (float16's sums in float, as numpy's
    and TensorFlow's, each element rounded once); a small product of long columns
    summed in chunks on every core (`_split_k`). A product that is not a batch calls the
    module's one function for its type (`shared_kernel`, templates/gemm_parts.c.j2), so that
    the compiler makes the threads' parts of a product once, not once per product."""
    a, b = node.inputs
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    m, k = (a.shape[-1], a.shape[-2]) if ta else a.shape[-2:]
    n = b.shape[-2] if tb else b.shape[-1]
    batch = node.shape[:-2]
    if not batch and ta and not tb and _split_k(m, k, n, node.dtype):
        chunks = min(SPLIT_K_CHUNKS, k // SPLIT_K_MIN_ROWS)
        return dict(T=storage(node.dtype), m=m, k=k, n=n, chunks=chunks, split_k=True)
    gemms = 1
    for extent in batch:
        gemms = gemms * extent
    if not array_blas.fits_ints(m, n, k):
        blas = None  # the plain loops' indices are int64
    letter = {"float32": "s", "float64": "d"}.get(node.dtype.name) if blas else None
    index = identity_map(len(batch))
    a_batch = offset(broadcast_map(index, batch, a.shape[:-2]), a.shape[:-2])
    b_batch = offset(broadcast_map(index, batch, b.shape[:-2]), b.shape[:-2])
    return dict(
        split_k=False,
        T=storage(node.dtype),
        ACC=compute(node.dtype),
        batch_loops=[(INDEX[d], e) for d, e in enumerate(batch)],
        m=m,
        k=k,
        n=n,
        a_offset=a_batch.c(INDEX),
        b_offset=b_batch.c(INDEX),
        out_offset=offset(index, batch).c(INDEX),
        blas=letter,
        gemms=gemms,
        split_rows=_splits_rows(m, n),
        parallel_min=GEMM_PARALLEL_MIN,
        ta=ta,
        tb=tb,
        lda=_at_least_one(m if ta else k),
        ldb=_at_least_one(k if tb else n),
        ldc=_at_least_one(n),
        shared_kernel=(
            f"tr_gemm_parts_{letter}",
            "gemm_parts.c.j2",
            dict(T=storage(node.dtype), blas=letter, parallel_min=GEMM_PARALLEL_MIN),
        )
        if letter
        else None,
        # where a module calls the installed kernels' gemm_parts for a batch instead
        # (codegen/conv_kernels.py, `_gemm_parts`): its place in their table
        table_variable=None,
        table_index=None,
    )


# multiply-adds below which a product (or a batch of them) stays on the calling thread: waking
# the others costs more than they would save (runtime/conv_kernels.c's GEMM_PARALLEL_MIN
# and codegen/conv_kernels.py's repeat it)
GEMM_PARALLEL_MIN = 1 << 20


def _splits_rows(m, n):
    """Whether the parts a product is cut into for the threads are rows of the output (else
    columns): the longer side, so that the operand each part reads whole, and the BLAS
    packs once per part, is the smaller one; an unknown size (a batch) is the longer."""
    if isinstance(m, dims.Dim) or isinstance(n, dims.Dim):
        return isinstance(m, dims.Dim)
    return m >= n


SPLIT_K_MAX_OUT = 1024  # outputs: m * n accumulators per chunk, 4-8 KB, in L1
SPLIT_K_MIN_ROWS = 2048  # rows of a and b per chunk, at the least
SPLIT_K_CHUNKS = 16


def _split_k(m, k, n, dtype):
    """Whether a^T b, a (k, m) and b (k, n) row-major, is a few outputs over long columns (a
    convolution's weight gradient), which OpenBLAS runs far below its speed: then the
    template reads each row of a and b once, in SPLIT_K_CHUNKS chunks handed to the
    threads, each summing into its own accumulators (at most 8 KB of a thread's stack),
    which are added to the result in chunk order (the same bits at every call, whatever the
    threads)."""
    sizes = (m, k, n)
    return (
        dtype.name in ("float32", "float64")
        and all(isinstance(size, int) for size in sizes)
        and m * n <= SPLIT_K_MAX_OUT
        and k >= 2 * SPLIT_K_MIN_ROWS
        and m * n * k >= PARALLEL_MIN
    )


def _at_least_one(extent):
    """A BLAS leading dimension: the row length, but at least 1 (for empty matrices)."""
    if isinstance(extent, dims.Dim):
        return f"({extent} > 1 ? {extent} : 1)"
    return max(extent, 1)


MATMUL = primitive(
    "matmul",
    shapes.matmul,
    grad=_matmul_grad,
    jvp=PRODUCT,
    saves=(0, 1),
    batch=_matmul_batch,
    simplify=(_fold_transposes, _outer_product, seed_ops.product_with_seeds),
    kernel=_matmul_kernel,
    c=forms.Template("matmul.c.j2", _matmul_c, uses_blas=True),
)


def matmul_attrs(transpose_a, transpose_b):
    """The matmul node's attributes: only the flags that are set, so plain products print plainly."""
    if not (transpose_a or transpose_b):  # the plain product, an eager step's most common op
        return {}
    return {
        name: True
        for name, flag in (("transpose_a", transpose_a), ("transpose_b", transpose_b))
        if flag
    }


def _mm(a, b, transpose_a, transpose_b):
    return apply(MATMUL, (a, b), matmul_attrs(transpose_a, transpose_b))


def _adjoint_operand(x, transpose, adjoint, label):
    """(x, whether to transpose it): the conjugate of `x`, transposed, for `adjoint`."""
    if transpose and adjoint:
        raise ValueError(f"Only one of transpose_{label} and adjoint_{label} can be True.")
    if adjoint:
        return conj_if_complex(x), True
    return x, bool(transpose)


def matmul(
    a,
    b,
    transpose_a=False,
    transpose_b=False,
    adjoint_a=False,
    adjoint_b=False,
    a_is_sparse=False,
    b_is_sparse=False,
    output_type=None,
    grad_a=False,
    grad_b=False,
    name=None,
):
    """The matrix product of the last two axes of `a` and `b`. `adjoint_a` (`adjoint_b`)
    takes the conjugate transpose of that operand (its transpose, for real values); as in
    TensorFlow, at most one of `transpose_a` and `adjoint_a` may be set (likewise for b).
    `a_is_sparse`, `b_is_sparse`, `grad_a` and `grad_b` are TensorFlow's hints for choosing
    a kernel, accepted and not needed; `output_type` may only name the result's own dtype.

    >>> tt.matmul(tt.ones((2, 3)), tt.ones((3, 4))).shape
    TensorShape([2, 4])
    >>> tt.matmul(tt.constant([[1.0, 2.0], [3.0, 4.0]]), tt.ones((2, 1)), adjoint_a=True).numpy()
    array([[4.],
           [6.]], dtype=float32)
    """
    a, b = as_tensors(a, b)
    a, transpose_a = _adjoint_operand(a, transpose_a, adjoint_a, "a")
    b, transpose_b = _adjoint_operand(b, transpose_b, adjoint_b, "b")
    if output_type is not None and as_dtype(output_type) != a.dtype:
        raise TypeError(
            f"matmul: output_type {as_dtype(output_type).name} is not supported for "
            f"{a.dtype.name} inputs; the product has their dtype (cast it after)"
        )
    return _mm(a, b, transpose_a, transpose_b)


# `matmul(a, b)`, a plain product (the attributes {}), without a Python frame where the C op
# path is built; with flags or a name, the function above
matmul = op_function(MATMUL, matmul, 2)
