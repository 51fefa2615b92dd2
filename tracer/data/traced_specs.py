"""The specs of what a pipeline's function (a `map`'s) returns, found as tf.data finds them:
by tracing the function for the specs of its arguments, without running it on an element.

TensorFlow traces a graph in which a size, or a rank, may be unknown; tracer's traces have
ranks, and a `tt.py_function`'s results have shapes only when it runs. So where an argument's
rank is unknown (after a `tt.py_function` map, TensorFlow's `TensorSpec(None)`), or the
function calls `tt.py_function` with results, the function is probed twice, each time in a
throwaway `tt.function` that is never run: once with each unknown-rank argument a scalar and
each `tt.py_function` result a scalar, once with each of them of rank 1 (its result of size
2). What the probes that trace agree on is known, what differs is None: a result that
follows a `tt.py_function`'s is `TensorSpec(None)`, as in TensorFlow, while one given a shape
(`tt.ensure_shape(v, [])`) keeps it.

    spec = traced(function, arguments)      # or, where it raises NeedsProbe:
    spec = probed(python_function, arguments)

While a pipeline is being built, nothing may run on its elements (`without_runs`): a stage
whose spec would need a run raises NeedsRun then, and is asked again later.
"""

import contextlib
import contextvars

from tracer import nest
from tracer.any_rank import has_unknown_rank
from tracer.data.specs import combined_spec, spec_leaves
from tracer.errors import OpError, RunsAsPython, builtin_of
from tracer.py_function import results_probed
from tracer.signature import TensorSpec
from tracer.tensor import SymbolicNumpyError, SymbolicValueError
from tracer.tensor_shape import is_unknown_rank

_RUNS_REFUSED = contextvars.ContextVar("data_spec_runs_refused", default=False)


class NeedsRun(Exception):
    """A spec asked for while a pipeline is built (`without_runs`) that only a run of a
    function on an element would give."""


@contextlib.contextmanager
def without_runs():
    """While it lasts, a spec that needs a run on an element raises NeedsRun instead."""
    token = _RUNS_REFUSED.set(True)
    try:
        yield
    finally:
        _RUNS_REFUSED.reset(token)


def refuse_run():
    """NeedsRun where runs are refused now (`without_runs`); else nothing."""
    if _RUNS_REFUSED.get():
        raise NeedsRun("the spec needs a run of the function on an element")


class NeedsProbe(Exception):
    """A trace from specs that cannot give the results' specs (an argument of unknown rank,
    a tt.py_function's results): `probed` gives them."""


def traced(function, arguments):
    """The specs of the results of `function` (a tt.function) traced for `arguments` (a
    tuple of argument specs; the trace is the function's own, kept for the calls of those
    specs). An error the trace raises is raised; NeedsProbe where it cannot be made so."""
    if has_unknown_rank(arguments):
        raise NeedsProbe("an argument of unknown rank")
    try:
        return function.get_concrete_function(*arguments).output_spec()
    except RunsAsPython as signal:  # (a tt.py_function's results, known only when it runs)
        raise NeedsProbe(str(signal)) from None


def probed(python_function, arguments):
    """The specs of the results of `python_function` for `arguments`, found by probes (see
    the module's text); NeedsRun where no probe traces."""
    from tracer.function import function  # (the functions build on the data's specs)

    found = []
    for rank in (0, 1):
        leaves = [_at_rank(leaf, rank) for leaf in nest.flatten(arguments)]
        probe = function(python_function)  # (a trace kept apart from the map's own)
        try:
            with results_probed((2,) * rank):
                concrete = probe.get_concrete_function(*nest.pack_sequence_as(arguments, leaves))
            found.append(concrete.output_spec())
        except Exception:  # (a probe that does not trace says nothing)
            continue
    if not found:
        raise NeedsRun("the function does not trace from its arguments' specs")
    first, *others = found
    for other in others:
        if nest.structure_difference(first, other) is not None:
            raise NeedsRun("the function's results differ in structure between probes")
        first = combined_spec(first, other)
    return first


def _at_rank(leaf, rank):
    return leaf.of_rank(rank) if isinstance(leaf, TensorSpec) else leaf


def raised_when_built(error, arguments):
    """Whether a trace's `error` is the function's own, to be raised when the pipeline is
    built as TensorFlow raises it (`x + "s"`: a TypeError or ValueError, for arguments of
    fully known shapes): not one of a value tracer needs when the function runs (the
    function then runs on an element instead)."""
    if (
        arguments is None
        or not isinstance(error, (TypeError, ValueError))
        or isinstance(error, (RunsAsPython, SymbolicValueError, SymbolicNumpyError))
    ):
        return False
    return all(
        not is_unknown_rank(s.shape) and None not in s.shape
        for s in spec_leaves(arguments)
        if isinstance(s, TensorSpec)
    )


def as_raised_when_built(error):
    """`error` as TensorFlow raises it while it traces: a plain TypeError or ValueError
    where tracer's is also TensorFlow's runtime class (`mixed`: tracer raises one class for
    both, where TensorFlow raises InvalidArgumentError eagerly and TypeError in a trace)."""
    builtin = builtin_of(type(error))
    if not isinstance(error, OpError) or builtin is type(error):
        return error
    plain = builtin(str(error)).with_traceback(error.__traceback__)
    for note in getattr(error, "__notes__", ()):
        plain.add_note(note)
    return plain
