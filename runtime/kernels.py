"""The numpy kernels, one per primitive, keyed by op name: `KERNELS[op](*arrays, **attrs)`.

Each op's record (in `tracer/ops/`, beside the op) registers its kernel here. Kernels give
TensorFlow's results where numpy differs (integer reduce_mean, maximum's NaN handling is
numpy's), never promote dtypes (the shape rules have already checked them), and compute
quietly: an invalid value gives NaN, as in TensorFlow, not a warning (`quiet`).
"""

import operator

import numpy as np

KERNELS = {}

# Infix operators for floating kernels that are Python's arithmetic (`add` is `+`): code that
# knows its inputs are floating or complex (straight-line code, from its graph's dtypes)
# writes `a * b` instead of calling the kernel.
FLOATING_INFIX = {}

# What those symbols compute, and by op name the function its kernel calls on floating and
# complex values (`operator.mul` for `mul`; numpy's ufunc for a few unary ops whose kernel
# cuts large arrays among the threads): the straight-line program and the eager op path in
# C call it directly for results below LARGE_FLOATING_FROM elements. An op declared with
# `infix` has operands of its result's dtype (the C path chooses by the result's).
INFIX_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
FLOATING_KERNELS = {}

# Elements from which float32 and float64 arithmetic runs in the loop installed with tracer,
# on the threads (half codegen/loops.py's PARALLEL_MIN: an element is a load or two and a
# store; the installed loops' ELEMENTS_PARALLEL_MIN and fast_apply.c's LARGE_FLOATING_FROM
# are this).
LARGE_FLOATING_FROM = 1 << 16

# By op name, for the ops with an infix operator, the function of floating values whose
# result has LARGE_FLOATING_FROM elements or more: `function(x, y)`, or `function(x, y,
# out=x)` (or out=y) to write the result into an operand of its shape, which the
# straight-line program does with an operand that dies with the step
# (runtime/straight_line.c). Each has `writes_into_an_operand` set, which that program
# looks for.
LARGE_FLOATING_KERNELS = {}


def quiet(function):
    """`function` with numpy's floating-point warnings off (NaN and Inf are results, not errors)."""

    def run_quietly(*args, **attrs):
        token = errors_ignored()
        try:
            return function(*args, **attrs)
        finally:
            errors_restored(token)

    run_quietly.__name__ = getattr(function, "__name__", "kernel")
    return run_quietly


def errors_ignored():
    """numpy's floating-point error modes set to ignore every error, as np.errstate(all=
    "ignore") sets them, until `errors_restored(token)` with the token returned: around
    each eager kernel and each graph run, so that a NaN or an infinity is a result, as in
    TensorFlow, and the program's own numpy calls keep its modes (runtime/quiet_errors.h
    does the same in C)."""
    if _ERROR_MODES is None:  # a numpy without the context variable (before 2.0)
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    ignoring = _ignoring_errors()
    return None if ignoring is _ERROR_MODES.get() else _ERROR_MODES.set(ignoring)


def errors_restored(token):
    """numpy's error modes as they were before `errors_ignored` gave `token`."""
    if _ERROR_MODES is None:
        token.__exit__(None, None, None)
    elif token is not None:  # (None: they were ignoring every error already)
        _ERROR_MODES.reset(token)


# numpy's error modes (numpy 2: a context variable holding its settings, which np.errstate
# sets and resets); None where there is none
try:
    from numpy._core.umath import _extobj_contextvar as _ERROR_MODES
    from numpy._core.umath import _make_extobj
except ImportError:
    _ERROR_MODES = None

_IGNORING = {}  # numpy's settings -> the same settings with every error ignored
_IGNORING_LIMIT = 16


def _ignoring_errors():
    """numpy's current settings with every floating-point error ignored: what np.errstate
    (all="ignore") sets, made once for each settings object (np.errstate makes it anew on
    every entry, which was most of a small kernel's time). The buffer size and error
    callback stay the caller's. Those settings are their own (runtime/quiet_errors.h calls
    this too, so that each path sees when the other has set them)."""
    current = _ERROR_MODES.get()
    ignoring = _IGNORING.get(current)
    if ignoring is None:
        if len(_IGNORING) >= _IGNORING_LIMIT:
            _IGNORING.clear()
        ignoring = _IGNORING[current] = _make_extobj(all="ignore")
        _IGNORING[ignoring] = ignoring
    return ignoring


def same_type(dtype, value):
    """`value` with the element type `dtype` (numpy returns float64 for some integer ops)."""
    return np.asarray(value, dtype=dtype)


def element_array(value):
    """`value`, or a 0-d array of it where indexing an object array (a tt.string tensor's)
    gave the element itself: every tensor value is an array or a numpy scalar."""
    return np.array(value, dtype=object) if type(value) is bytes else value
