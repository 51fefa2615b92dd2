"""GradBench's `det`: the determinant of a square matrix by expansion by minors, and its
gradient.

Expanding along the first row, then the second, and so on, reaches each minor of the last
`m` rows many times over; here each is computed once, level by level from the last row up:
the minor of the last `m` rows on the column set `S` is the alternating sum over `c` in `S`
of the row's entry at `c` times the minor on `S` without `c`. A level is a few vectorized
ops on index tables built when tracing, so the compiled code has `ell` levels, and reverse
mode runs back through them."""

import functools
import itertools

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


@functools.cache
def _levels(ell):
    """Per level `m` = 2 .. ell: the columns of each `m`-subset (sorted, in lexicographic
    order), the position among the `(m-1)`-subsets of each subset less one column, and the
    signs of the expansion."""
    previous = {(c,): i for i, c in enumerate(range(ell))}
    levels = []
    for m in range(2, ell + 1):
        subsets = list(itertools.combinations(range(ell), m))
        columns = np.array(subsets, dtype=np.int32)
        minors = np.array(
            [[previous[s[:p] + s[p + 1 :]] for p in range(m)] for s in subsets], dtype=np.int32
        )
        signs = np.array([(-1.0) ** p for p in range(m)])
        levels.append((columns, minors, signs))
        previous = {s: i for i, s in enumerate(subsets)}
    return levels


def _det(a):
    """The determinant of the square matrix `a` by expansion by minors."""
    ell = a.shape[0]
    minors = a[ell - 1]
    for m, (columns, below, signs) in enumerate(_levels(ell), start=2):
        row = a[ell - m]
        terms = tt.gather(row, columns) * tt.gather(minors, below)
        minors = tt.reduce_sum(terms * tt.constant(signs), axis=1)
    return minors[0]


@tt.function
def _primal(a):
    return _det(a)


@tt.function
def _gradient(a):
    with tt.GradientTape() as tape:
        tape.watch(a)
        det = _det(a)
    return tape.gradient(det, a)


def _matrix(input):
    ell = int(input["ell"])
    return tt.constant(np.asarray(input["A"], dtype=np.float64).reshape(ell, ell))


def primal(input):
    a = _matrix(input)
    result, timings = repeated(input, lambda: _primal(a))
    return float(result), timings


def gradient(input):
    a = _matrix(input)
    result, timings = repeated(input, lambda: _gradient(a))
    return result.numpy().reshape(-1).tolist(), timings
