"""Executables: what a traced function runs. Each takes and returns lists of numpy arrays."""

from runtime.straight_line import straight_line


class InterpretedGraph:
    """The numpy interpreter as an executable: the fallback, and the oracle of the C backend.

    It runs the graph as a straight-line program (runtime/straight_line.py: the interpreter's
    kernels in the interpreter's order, without its per-node dispatch); a fused node's body
    is one too (tracer/passes/fuse.py's Kernel.program). `located` is straight_line's."""

    backend = "interpreter"

    def __init__(self, graph, located=None):
        self.graph = graph
        run = straight_line(graph, located)
        self.run = lambda arrays: run(*arrays)

    def __call__(self, arrays):
        return self.run(arrays)
