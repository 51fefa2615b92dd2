"""Diagonals other than the main one, as TensorFlow's `k` and `align` name them.

Diagonal d of a matrix holds x[i, i + d]: d > 0 above the main diagonal, d < 0 below. A
range `k = (lo, hi)` of them is read into one array per matrix, its rows the diagonals from
hi down to lo, each as long as the longest; a shorter one is padded at its start or its end
as `align` says ("RIGHT_LEFT": the diagonals above the main one pushed right, those below
pushed left; the main one goes with those above where the first word says so, else with
those below). `diag_part` reads them, `diag` lays them in matrices of padding, `set_diag`
writes them over a matrix.

Each is a gather of the matrices' (or diagonals') entries by a table of positions known when
the function is traced, and a `where` of the positions that lie outside: compositions, so
every backend and derivative order follows from gather's and where's. The main diagonal
alone (k = 0) stays matrix_ops' primitive.
"""

import numpy as np

from tracer.errors import InvalidArgumentError, mixed
from tracer.ir import dims
from tracer.ops import array_ops, index_ops, math_ops
from tracer.ops.convert import as_tensors, static_int

ALIGNS = ("LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT", "RIGHT_RIGHT")

# TensorFlow's InvalidArgumentError, and a ValueError as tracer's other argument checks raise
_BadDiagonals = mixed(InvalidArgumentError, ValueError)


def diagonal_range(what, k):
    """(lo, hi) of `k`: an int (one diagonal) or a pair; ValueError naming what is wrong."""
    pair = isinstance(k, (tuple, list)) or np.ndim(k) > 0
    values = list(np.asarray(k).reshape(-1)) if pair and not isinstance(k, (tuple, list)) else k
    values = [static_int(v) for v in (values if pair else [k])]
    if any(v is None for v in values) or len(values) not in (1, 2):
        raise ValueError(
            f"{what}: k must be an int or a pair (lo, hi) of ints known when the function is "
            f"traced, not {k!r}"
        )
    lo, hi = values[0], values[-1]
    if lo > hi:
        raise _BadDiagonals(
            f"{what}: k = ({lo}, {hi}): the first must not be larger than the second"
        )
    return lo, hi


def check_align(what, align):
    if align not in ALIGNS:
        raise ValueError(f"{what}: align must be one of {', '.join(ALIGNS)}, not {align!r}")


def _length(rows, cols, d):
    """The length of diagonal d of a rows x cols matrix."""
    return min(rows + min(d, 0), cols - max(d, 0))


def _check_inside(what, rows, cols, lo, hi):
    if not (-rows < lo and hi < cols) and not (rows == 0 or cols == 0):
        raise _BadDiagonals(
            f"{what}: k = ({lo}, {hi}) names diagonals outside {rows} x {cols} matrices "
            f"(they run from {1 - rows} to {cols - 1})"
        )


def _known_sides(what, x):
    rows, cols = x.shape[-2:]
    if isinstance(rows, dims.Dim) or isinstance(cols, dims.Dim):
        raise ValueError(
            f"{what}: a diagonal other than the main one needs matrices of a known number of "
            f"rows and columns, not {rows} x {cols}"
        )
    return rows, cols


def _table(rows, cols, lo, hi, align):
    """For each (diagonal row m, position n) of the diagonals' array: the (row, column) of the
    matrix entry it holds, and whether there is one (else it is padding)."""
    longest = max(_length(rows, cols, d) for d in range(lo, hi + 1))
    right_above, right_below = align.startswith("RIGHT"), align.endswith("RIGHT")
    m, n = np.arange(hi - lo + 1)[:, None], np.arange(longest)[None, :]
    d = hi - m
    lengths = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    pushed = ((d >= 0) & right_above) | ((d <= 0) & right_below)
    offset = np.where(pushed, longest - lengths, 0)
    row, col = n + np.maximum(-d, 0) - offset, n + np.maximum(d, 0) - offset
    inside = (row >= 0) & (row < rows) & (col >= 0) & (col < cols)
    return np.where(inside, row, 0), np.where(inside, col, 0), inside, longest


def part(what, x, lo, hi, padding_value, align):
    """`diag_part` of diagonals lo..hi: (..., hi - lo + 1, longest), or (..., longest) for
    one diagonal."""
    rows, cols = _known_sides(what, x)
    _check_inside(what, rows, cols, lo, hi)
    row, col, inside, _ = _table(rows, cols, lo, hi, align)
    flat = array_ops.reshape(x, x.shape[:-2] + (rows * cols,))
    picked = index_ops.gather(flat, (row * cols + col).astype(np.int32), axis=-1)
    _, padding = as_tensors(x, padding_value)
    diagonals = math_ops.where(inside, picked, padding)
    return diagonals[..., 0, :] if lo == hi else diagonals


def matrix_sides(what, length, lo, hi, num_rows, num_cols):
    """TensorFlow's (rows, cols) for diagonals of `length` lo..hi: what is given, the smallest
    that holds them for what is not (a square where neither is), and one side exactly so
    long that the longest of the diagonals has `length` entries."""
    least_rows, least_cols = length - min(hi, 0), length + max(lo, 0)
    rows, cols = (static_int(v) for v in (num_rows, num_cols))
    if rows is None or cols is None:
        raise ValueError(f"{what}: num_rows and num_cols must be known when the function is traced")
    if rows < 0 and cols < 0:
        rows = cols = max(least_rows, least_cols)
    elif rows < 0:
        rows = least_rows
    elif cols < 0:
        cols = least_cols
    if rows != least_rows and cols != least_cols:
        raise _BadDiagonals(
            f"{what}: diagonals {lo}..{hi} of length {length} do not fit {rows} x {cols} "
            f"matrices: either the rows must be {least_rows} or the columns {least_cols}"
        )
    return rows, cols


def _diagonals_shape(what, d, lo, hi):
    """The diagonals' (batch shape, length), checking their number."""
    if lo == hi:
        return d.shape[:-1], d.shape[-1]
    count = hi - lo + 1
    if d.ndim < 2 or d.shape[-2] != count:
        raise _BadDiagonals(
            f"{what}: diagonals {lo}..{hi} are {count} rows of `diagonal`, (..., {count}, "
            f"length); its shape is {d.shape}"
        )
    return d.shape[:-2], d.shape[-1]


def embed(what, d, lo, hi, rows, cols, background, align):
    """Matrices (..., rows, cols) with diagonals lo..hi from `d` and `background` elsewhere
    (a scalar, or matrices of that shape)."""
    batch, length = _diagonals_shape(what, d, lo, hi)
    _check_inside(what, rows, cols, lo, hi)
    row, col, inside, longest = _table(rows, cols, lo, hi, align)
    if length != longest:
        raise _BadDiagonals(
            f"{what}: diagonals {lo}..{hi} of {rows} x {cols} matrices are {longest} long, "
            f"but `diagonal` has {length}"
        )
    position = np.zeros((rows, cols), dtype=np.int32)
    placed = np.zeros((rows, cols), dtype=bool)
    position[row[inside], col[inside]] = np.flatnonzero(inside)
    placed[row[inside], col[inside]] = True
    flat = array_ops.reshape(d, batch + ((hi - lo + 1) * length,))
    picked = index_ops.gather(flat, position, axis=-1)
    return math_ops.where(placed, picked, background)


def set_part(what, x, d, lo, hi, align):
    """`x` (..., M, N) with diagonals lo..hi replaced by `d`."""
    rows, cols = _known_sides(what, x)
    batch, _ = _diagonals_shape(what, d, lo, hi)
    if batch != x.shape[:-2]:
        raise _BadDiagonals(
            f"{what}: `diagonal` must have the batch shape {x.shape[:-2]} of `input`, not "
            f"{batch} (its shape is {d.shape})"
        )
    return embed(what, d, lo, hi, rows, cols, x, align)
