"""The pass pipeline of `tt.function`: one flat list, run in order, each stage kept for dumps.

The "traced" graph is what tracing produced (forward, and the gradient nodes that
`tape.gradient` added where the function called it); each pass then makes the stage named
beside it. A pass runs on the graphs structured ops hold (a loop's body) before the graph
that holds them, so a loop body is simplified and fused like any program. The passes before `fuse` keep a graph of primitives, which runs through the op
path (`Stages.of_primitives`); the last stage is the graph the backends run (`Stages.final`).

The pipeline runs for a target (codegen/targets.py): the passes in TARGETED_PASSES take it
(`target=`), to ask it what the code of an op costs (fusion's cost hints).
"""

import functools
import time

from codegen.targets import C_MODULE
from tracer.ir import Node, Subgraph
from tracer.ir.rewrite import rebuild
from tracer.passes.contract import contract_products
from tracer.passes.convolve import direct_convolutions
from tracer.passes.cse import eliminate_common_subexpressions
from tracer.passes.dce import eliminate_dead_code
from tracer.passes.decompose import decompose
from tracer.passes.fuse import fuse
from tracer.passes.reassociate import reassociate_products
from tracer.passes.simplify import simplify
from tracer.passes.verify import verify

TRACED = "traced"
PIPELINE = [
    ("decomposed", decompose),
    ("pruned", eliminate_dead_code),
    ("simplified", simplify),
    ("deduplicated", eliminate_common_subexpressions),
    ("contracted", contract_products),
    ("reassociated", reassociate_products),
    ("convolved", direct_convolutions),
    ("optimized", fuse),
]
LOWERING_PASSES = (direct_convolutions, fuse)  # passes whose graphs hold more than primitives
TARGETED_PASSES = (fuse,)  # passes that take the target
STAGE_NAMES = (TRACED, *(name for name, _ in PIPELINE))


class Stages(dict):
    """{stage name: graph}, in pipeline order; `seconds` maps each pass's stage name to the
    seconds the pass took (the compile report shows them)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seconds = {}

    @property
    def final(self):
        """The graph the backends run."""
        return self[STAGE_NAMES[-1]]

    @property
    def of_primitives(self):
        """The last graph made of primitives only: what an enclosing trace inlines."""
        return self[_LAST_OF_PRIMITIVES]


_LAST_OF_PRIMITIVES = [TRACED, *(n for n, p in PIPELINE if p not in LOWERING_PASSES)][-1]

# The test suite sets this: every pass's result is then checked by the verifier.
VERIFY_EACH_PASS = False


def run_pipeline(traced, target=C_MODULE):
    """The Stages of `traced` for `target` (a codegen.targets.Target): the traced graph, then
    each pass's result."""
    stages = Stages({TRACED: traced})
    graph = traced
    for name, run_pass in PIPELINE:
        if run_pass in TARGETED_PASSES:
            run_pass = functools.partial(run_pass, target=target)
        start = time.perf_counter()
        graph = run_nested(run_pass, graph)
        stages.seconds[name] = time.perf_counter() - start
        if VERIFY_EACH_PASS:
            verify(graph)
        stages[name] = graph
    return stages


def run_nested(run_pass, graph):
    """`run_pass` on the graphs held by `graph`'s nodes (at every depth), then on `graph`."""

    def on_held_graphs(node):
        held = {k: v for k, v in node.attrs.items() if isinstance(v, Subgraph)}
        if not held:
            return node
        attrs = dict(node.attrs)
        for key, value in held.items():
            attrs[key] = Subgraph(run_nested(run_pass, value.graph), value.name)
        return Node(node.op, node.inputs, attrs, node.shape, node.dtype, node.location)

    # Most graphs hold none: a rebuild of 10^5 nodes per pass that changes nothing is skipped
    if any(isinstance(v, Subgraph) for node in graph.nodes for v in node.attrs.values()):
        graph = rebuild(graph, on_held_graphs)
    return run_pass(graph)
