"""IR graph -> callable: lower to C, build through the cache, wrap for the runtime."""

import os

from codegen import build
from codegen.lower import lower
from runtime.compiled import CompiledGraph


def compile_graph(graph, name):
    """A CompiledGraph for `graph`. `TRACER_DUMP=DIR` also writes its C source to DIR."""
    uses_blas = build.blas() is not None and any(n.op == "matmul" for n in graph.nodes)
    plan = lower(graph, title=_safe(name), blas=uses_blas)
    module, meta = build.load(plan.source, uses_blas)
    dump = os.environ.get("TRACER_DUMP")
    if dump:
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, f"{_safe(name)}.{meta['name']}.c"), "w") as handle:
            handle.write(plan.source)
    return CompiledGraph(module, plan, meta)


def _safe(name):
    """A user's function name as a C-comment- and file-name-safe identifier."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))[:64]
    return cleaned or "function"
