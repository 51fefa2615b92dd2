"""Which batches of matrix products the installed kernel `small_products` computes
(runtime/small_products_typed.h), and its geometry: one rule for eager products
(codegen/array_blas.py) and compiled modules (codegen/conv_kernels.py), so that both give a
batch's bits."""

import math

import numpy as np

from runtime import installed_kernels

# multiply-adds a product up to which a batch's products are the kernel's, past which the
# BLAS's parts
MOST_MACS = 1 << 21
MOST_COLUMN_STEP = 1 << 24  # elements: 48 of them fit the kernel's int32 gather indices


def geometry(dtype, a_shape, b_shape, a_steps, b_steps, ta, tb):
    """(the installed kernel `small_products` as a cffi function, its geometry, the result's
    shape) for op(a) @ op(b) of operands of these shapes and steps (in elements, per axis),
    where the kernel computes it; else None: another dtype than float32 and float64, a
    single product, an empty result or sum, more than MOST_MACS multiply-adds a
    product, batch axes that do not broadcast, a size not known, b's column step past the
    kernel's gathers, or no such kernel (a CPU without AVX-512). Eager products and
    compiled modules (codegen/conv_kernels.py) route a batch alike, so both give its bits."""
    suffix = installed_kernels.suffix(np.dtype(dtype))
    if suffix is None or not all(isinstance(d, int) for d in (*a_shape, *b_shape)):
        return None
    m, k = a_shape[:-3:-1] if ta else a_shape[-2:]
    n = b_shape[-2] if tb else b_shape[-1]
    try:
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        return None
    if math.prod(batch) < 2 or not 0 < m * n * k <= MOST_MACS:
        return None
    a_rows, a_columns = a_steps[-1:-3:-1] if ta else a_steps[-2:]
    b_rows, b_columns = b_steps[-1:-3:-1] if tb else b_steps[-2:]
    if max(abs(b_rows), abs(b_columns)) >= MOST_COLUMN_STEP:
        return None  # the kernel gathers b's columns with int32 indices
    kernel = installed_kernels.function(
        f"small_products_{suffix}", "void (*)(const int64_t *, const void *, const void *, void *)"
    )
    if kernel is None:
        return None
    values = [m, n, k, a_rows, a_columns, b_rows, b_columns, len(batch), *batch]
    values += _batch_steps(a_shape, a_steps, batch) + _batch_steps(b_shape, b_steps, batch)
    return kernel, values, (*batch, m, n)


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
