"""Matrix products for the eager kernels through the compiled modules' BLAS.

numpy's OpenBLAS computes a product of more than 2^18 multiply-adds on threads of its own,
which then wait for the next product spinning (up to OpenBLAS's thread time-out, a tenth of
a second, on x86 without yielding), on the cores that tracer's next parallel loop wants: an
eager convolution, GELU, a softmax, a triangular solve. In an eager CNN step whose only
numpy products were its dense layer's (2^21 multiply-adds each), its convolutions took twice
their time; in an eager GP step, its triangular solves after numpy's 512^3 product twice
theirs. So the products numpy would thread (from `NUMPY_THREADS_MACS`) are computed by the
compiled modules' BLAS (scipy-openblas32, which runs each call on the thread that makes it:
runtime/thread_pools.py), called through cffi, with nothing to compile: below
`ONE_THREAD_MACS` in one call on the calling thread (at most about a hundred microseconds
on one core), from there in parts on tracer's threads (the installed kernels' `gemm_parts`,
templates/gemm_parts.c.j2's parts), so that an eager step has one pool of threads, as a
compiled one has; so are batches of such products (matmul.c.j2's parts of a batch), and
batches of smaller ones that numpy computes on one thread, a product at a time, from
`FEWEST_BATCH_MACS` a product (an attention's heads, 64 x 64 x 32 each). Where the
CPU has AVX-512, products of up to 2^27 multiply-adds (of any size where the BLAS runs no
AVX-512 kernels of its own), and batches of smaller ones, are one call of the installed
kernel `blocked_products` instead (codegen/blocked_products.py says which), as in compiled
modules. Smaller single products stay numpy's, which computes them
on the calling thread with less overhead than a call through cffi.

A product is routed by its sizes alone, so a given product always comes from the same
library; the compiled modules call the same one, in one call below 2^20 multiply-adds and in
the same parts above, where their products and the eager kernels' give the same bits.
"""

import functools
import math
from typing import NamedTuple

import numpy as np

from codegen import blas_library, blocked_products, conv_kernels
from runtime import aligned, installed_kernels

NUMPY_THREADS_MACS = 1 << 18  # OpenBLAS threads a product of more multiply-adds
ONE_THREAD_MACS = 1 << 22
# multiply-adds of each product of a batch from which the batch may be the BLAS's on the
# threads (`_threads_take`): below, numpy's own loop computes a small matrix in less time than
# a call of the BLAS takes (benchmarks/RESULTS.md: 16 x 16 x 16 products lose, 24^3 win)
FEWEST_BATCH_MACS = 1 << 13
# multiply-adds in all from which an eager product on tracer's register blocks (rather than
# the BLAS's) is cut among the threads: the pool's caller runs the share of a worker that
# has not come, so a sleeping worker costs it a wake call, not a wait (B2's products of
# 128 x 512 x 10, 2^19.3, 18 -> 12 us)
BLOCKS_THREADS_FROM = 1 << 19
INT_MAX = (1 << 31) - 1  # the largest size or leading dimension the BLAS's int takes
# multiply-adds up to which a single product (but an outer one) is numpy's on either route
# (`_plan`'s and codegen/blocked_products.py's rules), found before their cached lookups,
# which cost a small eager product as much as numpy's product itself
_NUMPYS_MACS = min(NUMPY_THREADS_MACS, blocked_products.MOST_MACS_LEFT_ALONE)
_GEMM = "void (*)(int, int, int, int, int, int, {T}, void *, int, void *, int, {T}, void *, int)"
_GEMV = "void (*)(int, int, int, int, {T}, void *, int, void *, int, {T}, void *, int)"
_FUNCTIONS = {np.dtype(np.float32): ("s", "float"), np.dtype(np.float64): ("d", "double")}
_ROW_MAJOR, _NO_TRANSPOSE, _TRANSPOSE = 101, 111, 112  # CBLAS's enumerations


def product(a, b, transpose_a, transpose_b):
    """op(a) @ op(b) of arrays of one floating dtype (op: the transpose of the last two axes
    where asked, batch axes broadcast): through the installed `blocked_products` where
    codegen/blocked_products.py takes it (`_blocked_products`), else through the compiled
    modules' BLAS where numpy would thread it; else None (numpy's then, on the calling
    thread). A single product below ONE_THREAD_MACS is one call on this thread; the others
    are the compiled code's parts on the threads (the installed kernels' `gemm_parts`, where
    they are there).

    What a product's sizes, dtype and layouts decide is worked out once (`_plan`): an eager
    step makes the same products every step, and working it out again cost more than a
    small product's parts."""
    if a.ndim < 2 or b.ndim < 2:
        return None
    if a.ndim == 2 and b.ndim == 2:  # a single product small enough for numpy: no lookups
        m, k = (a.shape[1], a.shape[0]) if transpose_a else a.shape
        n = b.shape[0] if transpose_b else b.shape[1]
        if k > 1 and m * n * k <= _NUMPYS_MACS:
            return None
    blocked = _blocked_products(
        a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, transpose_a, transpose_b
    )
    if blocked is not None:
        return blocked(a, b)
    plan = _plan(
        a.dtype, b.dtype, a.shape, b.shape, transpose_a, transpose_b, _layout(a), _layout(b)
    )
    if plan is None:
        return None
    out = aligned.empty(plan.shape, a.dtype)
    plan.run(_stored(a, plan.layouts[0]), _stored(b, plan.layouts[1]), out)
    return out


class _Plan(NamedTuple):
    """A product's call: the result's shape, how each operand is read (`_stored`), and the
    call that writes the product, given the operands so read and the result."""

    shape: tuple
    layouts: tuple
    run: object


@functools.lru_cache(maxsize=512)
def _plan(dtype, other_dtype, a_shape, b_shape, transpose_a, transpose_b, layout_a, layout_b):
    """The `_Plan` of a product of these operands, or None where numpy's product takes it:
    another dtype, too few multiply-adds (`_threads_take`), sizes past the BLAS's ints,
    batch axes that do not broadcast (numpy's product says what does not match), no BLAS,
    or a batch or large product where the installed kernels are not there."""
    names = _FUNCTIONS.get(dtype)
    if names is None or other_dtype != dtype:
        return None
    m, k = a_shape[:-3:-1] if transpose_a else a_shape[-2:]
    n = b_shape[-2] if transpose_b else b_shape[-1]
    macs = m * n * k
    try:
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        return None
    if not _threads_take(macs, math.prod(batch) if batch else 0) or not fits_ints(m, n, k):
        return None
    in_parts = bool(batch) or macs >= ONE_THREAD_MACS
    gemm, gemv = _gemm(*names), _gemv(*names)
    if gemm is None or gemv is None or (in_parts and not conv_kernels.available()):
        return None
    flag_a, lda = _read_as(a_shape, transpose_a, layout_a)
    flag_b, ldb = _read_as(b_shape, transpose_b, layout_b)
    shape = (*batch, m, n)
    if not in_parts:
        return _Plan(
            shape,
            (layout_a, layout_b),
            _one_call(gemm, gemv, flag_a, flag_b, m, n, k, lda, ldb),
        )
    geometry = [flag_a == _TRANSPOSE, flag_b == _TRANSPOSE, m, n, k, lda, ldb, max(1, n)]
    geometry += [m >= n, math.prod(batch)]  # the parts' rule: tracer/ops/linalg_ops.py's
    kernel = installed_kernels.function(
        f"gemm_parts_{installed_kernels.suffix(dtype)}",
        "void (*)(const void *, const void *, const void *, const void *, const void *, "
        "const void *, void *)",
    )
    fixed = (
        np.array(geometry, np.int64),
        blas_library.address(gemm, gemv),
        _offsets(a_shape, batch),
        _offsets(b_shape, batch),
    )
    pointers = [installed_kernels.pointer(x) for x in fixed]  # (they keep `fixed` alive)

    def run(a, b, out):
        kernel(*pointers, *(installed_kernels.pointer(x) for x in (a, b, out)))

    return _Plan(shape, (layout_a, layout_b), run)


def _threads_take(macs, count):
    """Whether a product of `macs` multiply-adds (in each of a batch of `count`; 0: a single
    one) is the BLAS's on tracer's threads rather than numpy's: one that numpy would thread,
    and a batch of NUMPY_THREADS_MACS in all whose products are each of FEWEST_BATCH_MACS or
    more (numpy computes a batch on one thread, a product at a time)."""
    if macs > NUMPY_THREADS_MACS:
        return True
    return count > 0 and macs >= FEWEST_BATCH_MACS and macs * count > NUMPY_THREADS_MACS


def _one_call(gemm, gemv, flag_a, flag_b, m, n, k, lda, ldb):
    """The product as one call of the BLAS on this thread: `gemv` for a product of one row
    or one column, `gemm` for the others (the installed kernels' `product_part`, whose calls
    a compiled module's product makes too)."""
    transposed_a, transposed_b = flag_a == _TRANSPOSE, flag_b == _TRANSPOSE
    if m == 1:  # out's row: op(b)^T times a's one row
        op = _NO_TRANSPOSE if transposed_b else _TRANSPOSE
        rows, columns = (n, k) if transposed_b else (k, n)
        step = lda if transposed_a else 1

        def run(a, b, out):  # the arrays stay referenced here while the BLAS reads them
            at = [installed_kernels.pointer(x) for x in (a, b, out)]
            gemv(_ROW_MAJOR, op, rows, columns, 1, at[1], ldb, at[0], step, 0, at[2], 1)

    elif n == 1:  # out's column: op(a) times b's one column
        rows, columns = (k, m) if transposed_a else (m, k)
        step = 1 if transposed_b else ldb

        def run(a, b, out):
            at = [installed_kernels.pointer(x) for x in (a, b, out)]
            gemv(_ROW_MAJOR, flag_a, rows, columns, 1, at[0], lda, at[1], step, 0, at[2], 1)

    else:

        def run(a, b, out):
            at = [installed_kernels.pointer(x) for x in (a, b, out)]
            gemm(_ROW_MAJOR, flag_a, flag_b, m, n, k, 1, at[0], lda, at[1], ldb, 0, at[2], n)

    return run


@functools.lru_cache(maxsize=512)
def _blocked_products(dtype, other_dtype, a_shape, b_shape, a_strides, b_strides, ta, tb):
    """The call that computes the batch of products of operands of these shapes and strides
    (bytes) in one call of the installed kernel `blocked_products` where
    `codegen/blocked_products.py` takes it, else None. numpy calls the BLAS once for each matrix
    and copies a strided operand first: an attention's 32 products of 64 x 64 x 32 took it
    twice as long as PyTorch's batched product."""
    if other_dtype != dtype or any(s % dtype.itemsize for s in (*a_strides, *b_strides)):
        return None
    a_steps, b_steps = ([s // dtype.itemsize for s in x] for x in (a_strides, b_strides))
    found = blocked_products.geometry(
        dtype, a_shape, b_shape, a_steps, b_steps, ta, tb, threads_from=BLOCKS_THREADS_FROM
    )
    if found is None:
        return None
    kernel, geometry, shape = found
    at_geometry = installed_kernels.pointer(np.array(geometry, np.int64))  # (keeps it alive)

    def run(a, b):
        out = aligned.empty(shape, dtype)
        kernel(at_geometry, *(installed_kernels.pointer(x) for x in (a, b, out)))
        return out

    return run


def _layout(x):
    """How the BLAS reads x's matrices: "C" (as they are stored, C-contiguous), "T" (as the
    row-major transposes that column-major matrices are) or "copy" (from a C-contiguous
    copy)."""
    if x.flags.c_contiguous:
        return "C"
    return "T" if np.swapaxes(x, -1, -2).flags.c_contiguous else "copy"


def _stored(x, layout):
    """x as `layout` (`_layout`) says the BLAS reads it: C-contiguous."""
    if layout == "C":
        return x
    return np.swapaxes(x, -1, -2) if layout == "T" else np.ascontiguousarray(x)


def _read_as(shape, transposed, layout):
    """(the BLAS's transpose flag, the leading dimension) of an operand of `shape` that
    op transposes where `transposed`, read as `layout` says."""
    if layout == "T":
        transposed, shape = not transposed, (*shape[:-2], shape[-1], shape[-2])
    return _TRANSPOSE if transposed else _NO_TRANSPOSE, max(1, shape[-1])


def fits_ints(*sizes):
    """Whether the BLAS can take `sizes` (its sizes and leading dimensions are C ints); an
    unknown size (a symbolic dimension) is taken to fit."""
    return all(not isinstance(size, int) or size <= INT_MAX for size in sizes)


def _offsets(shape, batch):
    """Where each matrix of the batch `batch` starts in a C-contiguous array of `shape`, its
    batch axes broadcast (int64 element offsets)."""
    size = shape[-2] * shape[-1]
    index = np.arange(math.prod(shape[:-2]), dtype=np.int64).reshape(shape[:-2])
    return np.ascontiguousarray(np.broadcast_to(index, batch).reshape(-1) * size)


def gemm(dtype):
    """The BLAS's gemm for float32 or float64, as a cffi function (its C signature is
    `_GEMM`'s); None for another dtype, or where there is no BLAS."""
    names = _FUNCTIONS.get(np.dtype(dtype))
    return None if names is None else _gemm(*names)


def _gemm(letter, ctype):
    """The BLAS's gemm for `ctype`, as a cffi function; None where there is no BLAS."""
    return blas_library.function(f"scipy_cblas_{letter}gemm", _GEMM.format(T=ctype))


def _gemv(letter, ctype):
    """The BLAS's gemv for `ctype`, as a cffi function; None where there is no BLAS."""
    return blas_library.function(f"scipy_cblas_{letter}gemv", _GEMV.format(T=ctype))
