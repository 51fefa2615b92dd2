"""Executables: what a traced function runs. Each takes and returns lists of numpy arrays."""

import numpy as np

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
        strings = [k for k, out in enumerate(graph.outputs) if out.dtype.is_string]
        if strings:
            self.run = lambda arrays: _string_arrays(run(*arrays), strings)
        else:
            self.run = lambda arrays: run(*arrays)

    def __call__(self, arrays):
        return self.run(arrays)


def _string_arrays(results, positions):
    """`results` with an array at each of `positions` (tt.string outputs): numpy's ops on a
    0-d array of objects give the object itself."""
    for k in positions:
        if not isinstance(results[k], np.ndarray):
            results[k] = np.array(results[k], dtype=object)
    return results
