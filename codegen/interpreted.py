"""The interpreter target's emitter (codegen.targets.INTERPRETER): the executable that runs
a graph on the numpy interpreter, sizes known only at run time put in at each call."""

import numpy as np

from codegen.targets import INTERPRETER
from runtime.executable import InterpretedGraph
from tracer.ir import dims, rewrite


def interpreted(graph, name=None, updates=None, plan_key=None):
    """The interpreter's executable of `graph` (the other arguments are the C module's
    emitter's, which the interpreter needs not)."""
    return SpecializedInterpreter(graph) if rewrite.symbols(graph) else InterpretedGraph(graph)


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
            run = self._by_sizes[key] = InterpretedGraph(rewrite.specialize(self.graph, env)).run
        return run(arrays)


INTERPRETER.implement(emitter=interpreted)
