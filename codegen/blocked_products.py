"""Which matrix products, and batches of them, the installed kernel `blocked_products`
computes (runtime/blocked_products_typed.h: register blocks, AVX-512), which triangular
solves `blocked_solves` computes on those blocks (runtime/blocked_solves_typed.h), and their
geometries: one rule for eager kernels (codegen/array_blas.py, codegen/array_linalg.py) and
compiled modules (codegen/conv_kernels.py), so that both give a product's and a solve's
bits."""

import functools
import math

import numpy as np

from codegen import blas_library
from runtime import installed_kernels

# multiply-adds a product up to which products are the kernel's, past which the BLAS's
# parts, where the BLAS runs AVX-512 kernels of its own (`most_macs`: the kernel blocks no
# more than a pass of the depth, and larger products lose to those)
MOST_MACS = 1 << 27
# OpenBLAS's names (lower case) of the cores whose GEMM kernels are AVX-512's
AVX512_BLAS_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
# a single product of no more multiply-adds is numpy's (eager) or one BLAS call (compiled):
# a call through cffi costs more than the kernel saves
MOST_MACS_LEFT_ALONE = 1 << 18
# a single product of no more outputs is left alone too: a few outputs over long columns,
# which the kernel's blocks cannot share among threads (compiled code sums them in chunks:
# tracer/ops/linalg_ops.py's _split_k)
FEWEST_OUTPUTS = 1024
MOST_COLUMN_STEP = 1 << 24  # elements: 48 of them fit the kernel's int32 gather indices
# the largest size of a product the kernel takes: the BLAS's (a C int), past which eager
# products are numpy's and compiled ones plain loops, as they were
MOST_SIZE = (1 << 31) - 1
# outputs from which a single outer product (a depth of one) is the kernel's, whatever its
# multiply-adds (numpy writes it on one thread, through a general loop); it is elementwise
# work, on the threads from as many outputs as elementwise loops (codegen/loops.py's
# PARALLEL_MIN: tests/test_blocked_products.py holds them equal)
FEWEST_OUTER_OUTPUTS = 1 << 14
OUTER_THREADS_FROM = 1 << 17


def geometry(dtype, a_shape, b_shape, a_steps, b_steps, ta, tb, threads_from):
    """(the installed kernel `blocked_products` as a cffi function, its geometry, the result's
    shape) for op(a) @ op(b) of operands of these shapes and steps (in elements, per axis),
    on the pool's threads from `threads_from` multiply-adds in all (the same bits on any
    number of threads), where the kernel computes it; else None: another dtype than float32
    and float64, a single product of at most MOST_MACS_LEFT_ALONE multiply-adds (but an outer
    product of FEWEST_OUTER_OUTPUTS outputs or more) or FEWEST_OUTPUTS outputs,
    an empty result or sum, more than `most_macs()` multiply-adds a product or a size past
    MOST_SIZE, batch axes that do not broadcast, a size not known, b's column step past the
    kernel's gathers, or no such
    kernel (a CPU without AVX-512). Eager products and compiled modules
    (codegen/conv_kernels.py) route a product alike, so both give its bits."""
    suffix = installed_kernels.suffix(np.dtype(dtype))
    if suffix is None or not all(isinstance(d, int) for d in (*a_shape, *b_shape)):
        return None
    m, k = a_shape[:-3:-1] if ta else a_shape[-2:]
    n = b_shape[-2] if tb else b_shape[-1]
    try:
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        return None
    alone = math.prod(batch) == 1
    if alone and k == 1:  # an outer product
        fewest, threads_from = FEWEST_OUTER_OUTPUTS - 1, min(threads_from, OUTER_THREADS_FROM)
    else:
        fewest = MOST_MACS_LEFT_ALONE if alone else 0
    most = most_macs() if m * n * k > MOST_MACS else MOST_MACS
    if not fewest < m * n * k <= (most or math.inf):
        return None
    if alone and m * n <= FEWEST_OUTPUTS or max(m, n, k) > MOST_SIZE:
        return None
    a_rows, a_columns = a_steps[-1:-3:-1] if ta else a_steps[-2:]
    b_rows, b_columns = b_steps[-1:-3:-1] if tb else b_steps[-2:]
    if max(abs(b_rows), abs(b_columns)) >= MOST_COLUMN_STEP:
        return None  # the kernel gathers b's columns with int32 indices
    kernel = installed_kernels.function(
        f"blocked_products_{suffix}",
        "void (*)(const void *, const void *, const void *, void *)",
    )
    if kernel is None:
        return None
    values = [m, n, k, a_rows, a_columns, b_rows, b_columns, threads_from, len(batch), *batch]
    values += _batch_steps(a_shape, a_steps, batch) + _batch_steps(b_shape, b_steps, batch)
    return kernel, values, (*batch, m, n)


@functools.cache
def most_macs():
    """The most multiply-adds of a product the kernel takes: MOST_MACS where the BLAS's own
    GEMM kernels are AVX-512's (OpenBLAS's core: blas_library.core, AVX512_BLAS_CORES), past which they win;
    None (no bound) where they are narrower, as OpenBLAS's AVX2 kernels for a CPU it does not
    know (AMD's Zen 5: its Haswell core), or there is no BLAS: the kernel then wins at every
    size measured, 2,048^3 included (benchmarks/RESULTS.md)."""
    core = blas_library.core()
    return MOST_MACS if core is not None and core.lower() in AVX512_BLAS_CORES else None


def run_time_rule(dtype, a_shape, b_shape, ta, tb, threads_from):
    """For a single product of C-contiguous operands whose sizes a compiled module knows only
    when it runs (a `TensorSpec(None)` or automatic dynamic dimension): (the C condition
    under which `geometry` takes those sizes, the C expressions of its geometry), both of the
    C variables m, n and k, so that the module computes it as a module built for those sizes
    would, with the same bits; None where no sizes could be the kernel's (another dtype than
    float32 and float64, a batch) or every size is known (`geometry` decides then)."""
    if installed_kernels.suffix(np.dtype(dtype)) is None or len(a_shape) != 2 or len(b_shape) != 2:
        return None
    if all(isinstance(d, int) for d in (*a_shape, *b_shape)):
        return None
    fewest = f"(k == 1 ? {FEWEST_OUTER_OUTPUTS - 1} : {MOST_MACS_LEFT_ALONE})"
    most = most_macs()
    condition = (
        f"{fewest} < (double)m * n * k && "
        + (f"(double)m * n * k <= {most} && " if most else "")
        + f"(double)m * n > {FEWEST_OUTPUTS} && {'k' if tb else 'n'} < {MOST_COLUMN_STEP} && "
        f"m <= {MOST_SIZE} && n <= {MOST_SIZE} && k <= {MOST_SIZE}"
    )
    a_steps = ("1", "m") if ta else ("k", "1")  # between op(a)'s rows, and its columns
    b_steps = ("1", "k") if tb else ("n", "1")
    threads = f"(k == 1 ? {min(threads_from, OUTER_THREADS_FROM)} : {threads_from})"
    return condition, ["m", "n", "k", *a_steps, *b_steps, threads, "0"]


# right-hand sides below which a solve is the BLAS's (a single one is trsv's, whose dot
# products run along the triangle's rows, where the kernel's vectors run along the columns)
FEWEST_RIGHT_HAND_SIDES = 2


def solve_geometry(dtype, count, n, k, lower, adjoint, b_steps=None):
    """(the installed kernel `blocked_solves` as a cffi function, its geometry) for `count`
    systems op(A) X = B of n x n triangles (C-contiguous) and n x k right-hand sides, their
    steps (elements) between the systems, rows and columns `b_steps` (C-contiguous where
    None), where the kernel solves them; else None: another dtype than float32 and float64,
    fewer than FEWEST_RIGHT_HAND_SIDES right-hand sides, a size not known, or no such kernel
    (a CPU without AVX-512)."""
    suffix = installed_kernels.suffix(np.dtype(dtype))
    if suffix is None or not all(isinstance(d, int) for d in (count, n, k)):
        return None
    if k < FEWEST_RIGHT_HAND_SIDES:
        return None
    kernel = installed_kernels.function(
        f"blocked_solves_{suffix}",
        "void (*)(const void *, const void *, const void *, void *)",
    )
    if kernel is None:
        return None
    b_steps = [n * k, k, 1] if b_steps is None else list(b_steps)
    return kernel, [count, n, k, int(bool(lower)), int(bool(adjoint)), *b_steps]


def _batch_steps(shape, steps, batch):
    """An operand's steps (elements) between its matrices along each axis of the broadcast
    batch `batch`: 0 along an axis it lacks or has once."""
    lead = len(shape) - 2
    return [
        steps[axis] if axis >= 0 and shape[axis] > 1 else 0
        for axis in range(lead - len(batch), lead)
    ]


def contiguous_steps(shape):
    """The steps (elements) along each axis of a C-contiguous array of `shape`, or None where
    a size is not known."""
    if not all(isinstance(d, int) for d in shape):
        return None
    steps, step = [], 1
    for extent in reversed(shape):
        steps.append(step)
        step *= extent
    return steps[::-1]
