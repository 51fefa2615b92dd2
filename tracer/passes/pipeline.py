"""The pass pipeline of `tt.function`: one flat list, run in order, each stage kept for dumps.

The "traced" graph is what tracing produced (forward, and the gradient nodes that
`tape.gradient` added where the function called it); "pruned" drops what no output needs;
"optimized" is the graph the backends run.
"""

from tracer.passes.cse import eliminate_common_subexpressions
from tracer.passes.dce import eliminate_dead_code
from tracer.passes.fuse import fuse
from tracer.passes.simplify import simplify

PIPELINE = [
    ("pruned", eliminate_dead_code),
    ("simplified", simplify),
    ("deduplicated", eliminate_common_subexpressions),
    ("optimized", fuse),
]


def run_pipeline(traced, verify=None):
    """{stage name: graph} for every stage, starting with 'traced'. `verify(graph)` runs
    after each pass when given (the tests pass the verifier)."""
    stages = {"traced": traced}
    graph = traced
    for name, run_pass in PIPELINE:
        graph = run_pass(graph)
        if verify is not None:
            verify(graph)
        stages[name] = graph
    return stages
