"""The interpreter target's emitter (codegen.targets.INTERPRETER): the executable that runs
a graph on the numpy interpreter, sizes known only at run time put in at each call."""

import numpy as np

from codegen.forms import C_FORMS, Template
from codegen.targets import INTERPRETER
from runtime.executable import InterpretedGraph
from tracer.ir import dims, format_location, rewrite


def interpreted(graph, name=None, updates=None, plan_key=None):
    """The interpreter's executable of `graph` (the other arguments are the C module's
    emitter's, which the interpreter needs not)."""
    if rewrite.symbols(graph):
        return SpecializedInterpreter(graph)
    return InterpretedGraph(graph, naming_the_line)


def naming_the_line(node, function):
    """`function` (the kernel of `node`), or where the node's op checks its inputs' values
    (its C form reports an error: an index out of range, a matrix that is not positive
    definite), a function that adds the user's line to that error, as the C module's
    message has it: `gather: an index is out of range [0, 3) (at model.py:14)`."""
    where = format_location(node.location)
    reported = _reported_error(node)
    if not where or reported is None:
        return function

    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except reported as error:
            raise type(error)(f"{error} (at {where})") from None

    return run


def _reported_error(node):
    """The exception class the C template of `node` reports a bad input value with (its
    kernel raises it, or TensorFlow's class made from it, `tracer.errors.as_tf`), or None.
    (An elementwise op's guard is checked inside a fused kernel, which is not named yet.)"""
    form = C_FORMS.get(node.op)
    if isinstance(form, Template) and form.error is not None:
        return form.error(node)[0]
    return None


class SpecializedInterpreter:
    """The numpy interpreter for a graph with dimensions known only at run time: the graph
    with the sizes of each call put in (checked against the inputs), kept per sizes."""

    backend = "interpreter"

    def __init__(self, graph):
        self.graph = graph
        self._by_sizes = {}
        self._where = {
            name: next(
                (k, axis)
                for k, node in enumerate(graph.inputs)
                for axis, size in enumerate(node.shape)
                if size == dims.Dim.symbol(name)
            )
            for name in rewrite.symbols(graph)
        }

    def run(self, arrays):
        env = {name: np.shape(arrays[k])[axis] for name, (k, axis) in self._where.items()}
        for node, array in zip(self.graph.inputs, arrays):
            if tuple(np.shape(array)) != dims.substitute(node.shape, env):
                expected = tuple(None if isinstance(d, dims.Dim) else d for d in node.shape)
                raise ValueError(
                    f"argument {node.attrs.get('name', '?')} has shape {np.shape(array)}; the "
                    f"compiled function takes {expected}"
                )
        key = tuple(env.values())
        run = self._by_sizes.get(key)
        if run is None:
            specialized = rewrite.specialize(self.graph, env)
            run = self._by_sizes[key] = InterpretedGraph(specialized, naming_the_line).run
        return run(arrays)


INTERPRETER.implement(emitter=interpreted)
