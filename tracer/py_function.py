"""`tt.py_function`: a Python function run on eager tensors, as TensorFlow's tf.py_function.

    y = tt.py_function(func=log_huber, inp=[x, m], Tout=tt.float32)

Eagerly, `func` runs at once on the inputs, as tensors; a recording tape sees the ops it
runs, so the result has their gradient (TF: "once-differentiable"). Its results are
converted to `Tout`: Python and numpy values to that dtype, while a tensor of another dtype
is an error (InvalidArgumentError, as TF raises).

In a traced function:

- with no results (`Tout=[]`), the call becomes a node that runs `func` each time the
  compiled code runs there, at every call, iteration and branch taken, in program order: the
  mechanism of `tt.print` (tracer/printing.py), whose host call hands `func` the inputs'
  values as tensors. TF's "exit hatch" for Python side effects in a tf.function.
- with results, whose shapes TF leaves unknown until `func` runs, the function runs as
  Python at each call instead of compiled (one warning says so), which gives TF's values;
  `get_concrete_function` raises, as there is no compiled signature (docs/semantics.md).
"""

import functools

import numpy as np

from tracer import printing
from tracer.context import state
from tracer.dtypes import as_dtype
from tracer.errors import InvalidArgumentError
from tracer.ir import format_location, user_location
from tracer.ops import convert
from tracer.ops.core import apply
from tracer.tensor import Tensor, TensorLike
from tracer.tracing import RunsAsPython


def py_function(func=None, inp=None, Tout=None, name=None):
    """Run `func(*inp)` on eager tensors and return its results as tensors of `Tout` (a
    dtype: one tensor; a list or tuple of dtypes: a list; `[]`: no results). With `func`
    left out, a decorator: `@tt.py_function(Tout=tt.float32)`."""
    if Tout is None:
        raise TypeError(
            "Missing required argument: 'Tout' (the dtype of func's result, a list of "
            "dtypes, or [] for none); as a decorator, @tt.py_function(Tout=...)"
        )
    if func is None:
        return lambda f: functools.wraps(f)(lambda *args: py_function(f, args, Tout, name))
    if not callable(func):
        raise TypeError(f"tt.py_function: func must be callable, not {type(func).__name__}")
    inputs = [convert.as_tensor(value) for value in (inp or [])]
    several = isinstance(Tout, (list, tuple))
    dtypes = [as_dtype(d) for d in Tout] if several else [as_dtype(Tout)]
    if state.trace is not None:
        if dtypes:
            where = format_location(user_location())
            raise RunsAsPython(
                f"calls tt.py_function with results{f' at {where}' if where else ''}: their "
                "shapes are known only when it runs, so the function runs as Python at each "
                "call (TF runs it in its graph). A tt.py_function with Tout=[] compiles."
            )
        call = _SideEffect(func)
        state.trace.check_print(printing.STREAM)
        tensors = [t._read() for t in inputs]
        printing.STREAM.assign(
            apply(printing.PRINT, (printing.STREAM._read(), *tensors), {"call": call})
        )
        return []
    results = _results(func(*inputs), dtypes, several, func)
    return results if several else results[0]


class _SideEffect:
    """A compiled `tt.py_function` with no results: the `call` of a print node (the object
    tracer/printing.py's node hands the values it reads)."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func

    def write(self, values):
        self.func(*(Tensor(np.asarray(v)) for v in values))


def _results(returned, dtypes, several, func):
    """`func`'s result as a list of tensors of `dtypes` (`several`: Tout was a list)."""
    if not several:
        values = [returned]
    elif returned is None:
        values = []
    else:
        values = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    if len(values) != len(dtypes):
        raise InvalidArgumentError(
            None,
            None,
            f"tt.py_function: {_name(func)} returned {len(values)} value(s); Tout gives "
            f"{len(dtypes)}",
        )
    return [_converted(value, dtype, func) for value, dtype in zip(values, dtypes)]


def _converted(value, dtype, func):
    if isinstance(value, TensorLike):
        if value.dtype != dtype:
            raise InvalidArgumentError(
                None,
                None,
                f"tt.py_function: {_name(func)} returned a {value.dtype.name} tensor where "
                f"Tout asks for {dtype.name}",
            )
        return value
    return convert.as_tensor(np.asarray(value, dtype=dtype.as_numpy_dtype))


def _name(func):
    return getattr(func, "__name__", repr(func))
