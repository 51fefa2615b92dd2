"""Arrays whose data starts at a multiple of 64 bytes, for the buffers compiled kernels write
and read most: their outputs, their workspace, variables.

numpy takes an array's memory from malloc, which aligns it to 16 bytes: where an array
starts 16 or 48 bytes past a cache line, every other 32-byte vector load or store of a
kernel's loop spans two lines, and a loop bound by the caches' bandwidth slows by a third
(a jacobian's backward step over a 256 x 256 cotangent, benchmarks/RESULTS.md), by how the
heap happened to be laid out in that process. Aligned, every vector of a contiguous loop
(AVX-512's 64 bytes included) sits in one line. Small arrays keep numpy's own allocation:
their loops are short, and aligning costs most of a microsecond.
"""

import ctypes
import math
import mmap

import numpy as np

ALIGNMENT = 64  # bytes: a cache line, and AVX-512's vector
# bytes: smaller arrays are numpy's own (a kernel writing 256 KB takes several microseconds;
# aligning takes under one)
ALIGNED_FROM = 1 << 18


def empty(shape, dtype):
    """np.empty(shape, dtype), its data aligned to ALIGNMENT bytes where it holds at least
    ALIGNED_FROM bytes. `shape` is a tuple of ints."""
    dtype = np.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    if size < ALIGNED_FROM or dtype.hasobject:  # (a view of bytes cannot hold objects)
        return np.empty(shape, dtype)
    raw = np.empty(size + ALIGNMENT, np.uint8)
    start = -ctypes.addressof(ctypes.c_char.from_buffer(raw)) % ALIGNMENT
    return np.ndarray(shape, dtype, raw, start)


# the flags of a workspace's own mapping: private memory, its pages made at once (Linux)
_WORKSPACE_MAP = (
    mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0) | getattr(mmap, "MAP_POPULATE", 0)
)


def workspace(nbytes):
    """A uint8 array of `nbytes` for a compiled module's workspace, which its calls keep.
    From ALIGNED_FROM bytes on it is memory mapped for it alone, its pages made when it is
    mapped (one system call, not a fault per page) and of the base size: numpy asks the
    kernel for huge pages from 4 MB on, and where the machine's memory is fragmented the
    kernel compacts it before it answers, which can make a first call wait longer than it
    computes (docs/memory.md)."""
    if nbytes < ALIGNED_FROM:
        return empty((nbytes,), np.uint8)
    try:
        mapping = mmap.mmap(-1, nbytes, flags=_WORKSPACE_MAP)
    except OSError as error:
        raise MemoryError(
            f"no memory for a compiled function's workspace of {nbytes} bytes"
        ) from error
    return np.frombuffer(mapping, np.uint8)


def copy(value, dtype=None):
    """A C-contiguous copy of the array `value` (as `dtype` where given), aligned as `empty`
    aligns."""
    value = np.asarray(value)
    if value.nbytes < ALIGNED_FROM:  # numpy's own, as `empty` keeps it: one call, not three
        return np.array(value, dtype=dtype)
    result = empty(value.shape, dtype or value.dtype)
    np.copyto(result, value, casting="unsafe")
    return result


def allocator_for(specs):
    """`empty` where some of the arrays of `specs` ((shape, dtype), ...) may be large enough
    to align, else np.empty: a function of small arrays only (a scalar loss, a gradient of
    ten values) keeps numpy's allocation, a microsecond faster a call."""
    for shape, dtype in specs:
        if not all(isinstance(d, int) for d in shape):
            return empty
        if math.prod(shape) * np.dtype(dtype).itemsize >= ALIGNED_FROM:
            return empty
    return np.empty
