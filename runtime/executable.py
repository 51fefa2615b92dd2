"""Executables: what a traced function runs. Each takes and returns lists of numpy arrays."""

from runtime.interpreter import evaluate


class InterpretedGraph:
    """The numpy interpreter as an executable: the fallback, and the oracle of the C backend."""

    backend = "interpreter"

    def __init__(self, graph):
        self.graph = graph

    def __call__(self, arrays):
        return evaluate(self.graph, arrays)
