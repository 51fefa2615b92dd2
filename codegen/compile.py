"""IR graph -> callable: lower to C, build through the cache, wrap for the runtime."""

from codegen import build
from codegen.lower import lower
from runtime.compiled import CompiledGraph


def compile_graph(graph, name):
    """A CompiledGraph for `graph`, built (or found in the cache) now."""
    uses_blas = (
        any(n.op == "matmul" for n in graph.nodes) and build.blas() is not None
    )  # importing the BLAS costs 25 ms
    plan = lower(
        graph,
        title=_safe(name),
        blas=uses_blas,
        vector_math=build.vector_math(),
        threads=build.threads(),
    )
    module, meta = build.load(plan.source, uses_blas)
    return CompiledGraph(module, plan, meta)


def _safe(name):
    """A user's function name as a C-comment- and file-name-safe identifier."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))[:64]
    return cleaned or "function"
