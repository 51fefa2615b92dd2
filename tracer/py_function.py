"""`tt.py_function`: a Python function run on eager tensors, as TensorFlow's tf.py_function;
`tt.numpy_function`, the same on numpy arrays.

    y = tt.py_function(func=log_huber, inp=[x, m], Tout=tt.float32)

Eagerly, `func` runs at once on the inputs, as tensors; a recording tape sees the ops it
runs, so the result has their gradient (TF: "once-differentiable"). Its results are
converted to `Tout`: Python and numpy values to that dtype, while a tensor of another dtype
is an error (InvalidArgumentError, as TF raises).

In a traced function, the call becomes a node that runs `func` each time the compiled code
runs there, at every call, iteration and branch taken, in program order: the mechanism of
`tt.print` (tracer/printing.py), whose host call hands `func` the inputs' values as tensors.
TF's "exit hatch" for Python side effects in a tf.function. With results (TF leaves their
shapes unknown until `func` runs), compiled code needs their shapes, so the trace runs
`func` once on the values of the call being traced (`Trace.values_in_call`); the first run
of the compiled code takes those results instead of calling `func` again, so `func` runs
once per call, as in TF. A result node per `Tout` entry (`py_function_result`) reads what
the call left. Where that cannot be done, the function runs as Python at each call instead
(one log line says why): in a loop body or branch, traced from specs, with a tape or
forward accumulator recording; and from the call whose results change shape, as compiled
code cannot hold them. A string result is a handle in compiled code
(codegen/string_handles.py).
"""

import contextlib
import contextvars
import functools
import threading

import numpy as np

from codegen import forms
from runtime.host import HOST_FUNCTIONS
from tracer import printing
from tracer.context import outside_trace, state
from tracer.dtypes import as_dtype
from tracer.errors import InvalidArgumentError, RunsAsPython
from tracer.ir import format_location, user_location
from tracer.ops import convert
from tracer.ops.core import apply
from tracer.ops.registry import primitive, unbatchable
from tracer.tensor import Tensor, TensorLike


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
            return _traced_with_results(func, inputs, dtypes, several)
        _add_call_node(_SideEffect(func), inputs)
        return []
    replayed = _REPLAYED.pop(_replay_key(func), None)  # a call compiled code could not finish
    if replayed is not None and _same_arrays(replayed[0], [t.numpy() for t in inputs]):
        results = [convert.as_tensor(value) for value in replayed[1]]
    else:
        results = _results(func(*inputs), dtypes, several, func)
    return results if several else results[0]


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """`tt.py_function` whose `func` takes numpy arrays and returns numpy arrays (or values
    numpy converts), as TensorFlow's tf.numpy_function: no tape sees inside it, so its
    results have no gradient. `stateful` is accepted as TensorFlow's is; tracer runs `func`
    at every call either way. With `func` left out, a decorator."""
    if func is None and Tout is not None:
        return lambda f: functools.wraps(f)(
            lambda *args: numpy_function(f, args, Tout, stateful, name)
        )
    if func is not None and not callable(func):
        raise TypeError(f"tt.numpy_function: func must be callable, not {type(func).__name__}")
    on_arrays = (
        None
        if func is None
        else functools.wraps(func)(
            lambda *tensors: func(*(_array(t.numpy()) for t in tensors))  # (0-d: an array too)
        )
    )
    return py_function(on_arrays, inp, Tout, name)


def _add_call_node(call, inputs):
    """The print node that runs `call` (its `write`) where the compiled code gets there."""
    state.trace.check_print(printing.STREAM)
    tensors = [t._read() for t in inputs]
    stream = apply(printing.PRINT, (printing.STREAM._read(), *tensors), {"call": call})
    printing.STREAM.assign(stream)
    return stream


def _traced_with_results(func, inputs, dtypes, several):
    """The result nodes of a traced call of `func` with results (see the module's text)."""
    where = format_location(user_location())
    at = f" at {where}" if where else ""
    if state.tapes or state.accumulators:
        raise RunsAsPython(
            f"differentiates a tt.py_function with results{at}: the tape records the ops "
            "`func` runs, so the function runs as Python at each call"
        )
    values = state.trace.values_in_call(inputs, (printing.PRINT.name, RESULT.name))
    if values is None and _PROBED_SHAPE.get() is not None:
        return _probe_results(dtypes, several)
    if values is None:
        raise RunsAsPython(
            f"calls tt.py_function with results{at} where the call's values are not known "
            "while it is traced (in a loop body or branch, from specs, or after a side "
            "effect): the shapes of its results are known only when it runs, so the "
            "function runs as Python at each call"
        )
    call = _CallWithResults(func, dtypes, several, where)
    results = call.first_run(values)
    stream = _add_call_node(call, inputs)
    nodes = [
        apply(RESULT, (stream,), {"call": call, "index": k, "shape": r.shape, "dtype": d})
        for k, (r, d) in enumerate(zip(results, dtypes))
    ]
    return nodes if several else nodes[0]


# set while tracer's data pipelines probe the specs of a function's results from the specs of
# its arguments (tracer/data/traced_specs.py): the shape given to the results of a
# tt.py_function traced from specs, whose own shapes are known only when it runs (TensorFlow
# leaves them unknown); None otherwise
_PROBED_SHAPE = contextvars.ContextVar("py_function_probed_shape", default=None)


@contextlib.contextmanager
def results_probed(shape):
    """While it lasts, a tt.py_function with results traced where its inputs' values are
    unknown gives constants of `shape` (zeros, or b"") instead of running as Python: a trace
    made only for the specs of a function's results, never run."""
    token = _PROBED_SHAPE.set(tuple(shape))
    try:
        yield
    finally:
        _PROBED_SHAPE.reset(token)


def _probe_results(dtypes, several):
    shape = _PROBED_SHAPE.get()
    results = [
        Tensor(np.full(shape, b"", object) if d.is_string else np.zeros(shape, d.as_numpy_dtype))
        for d in dtypes
    ]
    return results if several else results[0]


class ResultsChangedShape(RunsAsPython):
    """A compiled tt.py_function's results came back in other shapes than when traced."""


# where func's code is -> (input values, results) of a compiled call stopped by
# ResultsChangedShape: the call run again as Python takes these instead of running `func`
# twice. Keyed by the code's place: a lambda written in the call is a new function each time
# the Python function runs, and the trace ran autograph's copy of it (other code, same place)
_REPLAYED = {}


# the attribute that marks an error `func` raised while its call was traced (an attribute,
# not a record kept here: that would keep the error's frames, and their arrays, alive)
_RAISED_WHILE_TRACED = "_tracer_raised_while_traced"


def raised_while_traced(error):
    """Whether `error` is what a tt.py_function's `func` raised when it ran on the values of a
    call being traced: the user's code failed on those values, as it would have run
    eagerly, so a caller that answers a failed trace by running the function eagerly (a
    data pipeline's map) raises it instead of running `func` on them a second time. An
    error raised from such an error (`raise ... from`) is one too."""
    seen = set()
    while error is not None and id(error) not in seen:  # or one it was raised from
        if getattr(error, _RAISED_WHILE_TRACED, False) is True:
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _replay_key(func):
    func = getattr(func, "__wrapped__", func)  # (numpy_function's wrapper: the user's function)
    code = getattr(func, "__code__", None)
    return func if code is None else (code.co_filename, code.co_firstlineno, code.co_name)


class _CallWithResults:
    """A compiled `tt.py_function` with results: the `call` of its print node, which runs
    `func` and keeps the results, per thread, for the result nodes to take."""

    def __init__(self, func, dtypes, several, where):
        self.func = func
        self.dtypes = dtypes
        self.several = several
        self.where = where
        self.traced_run = None  # (input values, results) of the run while traced
        self.shapes = None
        self.kept = threading.local()

    def first_run(self, values):
        """Run `func` on the values of the call being traced: the results' shapes."""
        values = [_array(v) for v in values]
        try:
            results = self._run(values)
        except Exception as error:
            with contextlib.suppress(AttributeError, TypeError):  # an error without attributes
                setattr(error, _RAISED_WHILE_TRACED, True)
            raise
        self.traced_run = (values, results)
        self.shapes = [r.shape for r in results]
        return results

    def _run(self, values):
        """`func` on `values`, eagerly: outside the trace that may be running (it ran inside
        it, where a Variable it read was the trace's and an assign it made joined the graph)."""
        with outside_trace():
            tensors = [Tensor(_array(v)) for v in values]
            results = _results(self.func(*tensors), self.dtypes, self.several, self.func)
            return [_array(r.numpy()) for r in results]

    def write(self, values):
        values = [_array(v) for v in values]
        traced, self.traced_run = self.traced_run, None
        if traced is not None and _same_arrays(traced[0], values):
            results = traced[1]  # the traced call's run: func ran for this call already
        else:
            results = self._run(values)
        changed = [(k, r.shape) for k, r in enumerate(results) if r.shape != self.shapes[k]]
        if changed:
            _REPLAYED[_replay_key(self.func)] = ([_array(v) for v in values], results)
            k, shape = changed[0]
            raise ResultsChangedShape(
                f"calls tt.py_function at {self.where}, whose result {k} has shape {shape} "
                f"in this call and {self.shapes[k]} when traced: compiled code holds one "
                "shape, so the function runs as Python at each call from now on"
            )
        self.kept.results = results

    def result(self, index):
        return self.kept.results[index]


def _array(value):
    """A copy of `value` (an input's value handed to the host call, or a result's `numpy()`)
    as an array: a string (a scalar tt.string's value is its `bytes`) as a 0-d object array,
    as tt.string tensors hold them, not numpy's fixed-width bytes."""
    if isinstance(value, (bytes, str)):
        return np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    array = np.array(value)
    return array.astype(object) if array.dtype.kind in "SU" else array


def _same_arrays(a, b):
    """Whether two lists of arrays hold the same values (NaN where NaN is)."""
    return len(a) == len(b) and all(
        x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
        for x, y in zip(a, b)
    )


def _infer_result(attrs, stream):
    return attrs["shape"], attrs["dtype"]


def _result_kernel(stream, *, call, index, shape, dtype):
    return call.result(index)


def _result_from_c(values, out, call, index):
    """The host function of the compiled module: the result into its buffer."""
    out[...] = call.result(index).reshape(-1)


RESULT_HOST_FUNCTION = "tracer.py_function_result"
HOST_FUNCTIONS[RESULT_HOST_FUNCTION] = _result_from_c

# one result of a compiled tt.py_function: what the run of its print node (the stream it
# read) left
RESULT = primitive(
    "py_function_result",
    _infer_result,
    kernel=_result_kernel,
    strings=True,  # a tt.string result: a compiled module's handles (codegen/string_handles.py)
    c=forms.HostCall(
        lambda node: (
            RESULT_HOST_FUNCTION,
            {"call": node.attrs["call"], "index": node.attrs["index"]},
        ),
        reads_all=True,
    ),
    batch=unbatchable("(a tt.py_function's result) runs Python: call it outside"),
)


class _SideEffect:
    """A compiled `tt.py_function` with no results: the `call` of a print node (the object
    tracer/printing.py's node hands the values it reads)."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func

    def write(self, values):
        self.func(*(Tensor(_array(v)) for v in values))


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
    if value is None:  # (numpy makes None a float NaN, or refuses it for other dtypes)
        raise InvalidArgumentError(
            None,
            None,
            f"tt.py_function: {_name(func)} returned None where Tout asks for a {dtype.name} value",
        )
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
