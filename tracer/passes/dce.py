"""Dead-code elimination: drop every node no output depends on.

    %1 = sin %0
    %2 = exp %0        (unused)    =>    %1 = sin %0
    return %1                            return %1

Invariants: inputs are kept, even unused ones (they are the calling convention); order is
topological.
"""

from tracer.ir.rewrite import with_outputs


def eliminate_dead_code(graph):
    return with_outputs(graph.inputs, graph.outputs)
