"""IR graph -> callable: lower to C, build through the cache, wrap for the runtime."""

import functools
import time

from codegen import build, conv_kernels, plans, shared_kernels, string_handles
from codegen.errors import BuildFailure, CompileError, UnsupportedGraph
from codegen.forms import C_FORMS
from codegen.lower import lower
from codegen.probes import ProbeTable
from codegen.targets import C_MODULE, PROFILED_C
from runtime import installed_kernels
from runtime.compiled import CompiledGraph
from tracer.ir import all_nodes, format_location, holds_strings


def compile_graph(graph, name, updates=None, plan_key=None, profiled=False, own_kernels=False):
    """A CompiledGraph for `graph`, built (or found in the cache) now. `updates` maps an
    output position to the input it is the new value of (see `codegen.lower.lower`). With
    a `plan_key` (`codegen.plans.plan_key` of the graph as traced), its plan is stored for
    `compile_stored`, unless the module calls the convolution kernels installed with
    tracer (codegen/conv_kernels.py), as it does where they serve unless `own_kernels`.
    `profiled`: each step of the module is timed, its `probes` say which (the profiled C
    target, `compile_profiled`).

    On a compiler not yet probed, the first build assumes it has every feature
    (`build.toolchain_assumed`): success confirms it, a CompileError probes and builds again.
    """
    if own_kernels:
        with conv_kernels.own_kernels():
            return compile_graph(graph, name, updates, plan_key, profiled)
    _check_ranks(graph)
    strings = None
    if holds_strings(graph):
        graph, strings = string_handles.with_handles(graph)
    # NOTE: importing the BLAS is slow: only graphs with a product ask for it (a loop's body,
    # a branch, a kernel's body counted)
    uses_blas = any(C_FORMS[n.op].uses_blas for n in all_nodes(graph) if n.op in C_FORMS)
    uses_blas = uses_blas and build.blas() is not None
    if not build.toolchain_assumed():
        compiled = _built(graph, name, updates, uses_blas, profiled, strings)
    else:
        try:
            compiled = _built(graph, name, updates, uses_blas, profiled, strings)
        except CompileError:
            build.probe_toolchain()
            # built with what the probes found, not with the features `plan_key` assumed
            return _built(graph, name, updates, uses_blas, profiled, strings)
        build.confirm_toolchain()
    # (a module that calls the table's convolution kernels is the first of two)
    if plan_key is not None and not conv_kernels.serves_convolutions(all_nodes(graph), C_MODULE):
        plans.store(plan_key, compiled.plan, uses_blas)
    return compiled


def compile_stored(plan_key, build_missing=True):
    """The CompiledGraph of the plan stored under `plan_key` (its module loaded from the
    cache, or built again from the plan's source unless `build_missing` is False), or None
    when there is no sound plan or its module cannot be built (or is not built)."""
    if build.toolchain_assumed():  # no module was built with this compiler yet
        return None
    restored = plans.restore(plan_key)
    if restored is None:
        return None
    plan, uses_blas = restored
    if uses_blas and build.blas() is None:
        return None
    if installed_kernels.uses(plan.source) and not conv_kernels.available():
        return None  # (an installation whose table could not be built)
    plan.borrowed = shared_kernels.borrowed_in(plan.source)
    if plan.borrowed is None:
        return None
    if plan.borrowed:
        plan.borrowed_table = shared_kernels.table_of(plan.borrowed)
        if plan.borrowed_table is None:
            return None  # lowered again, borrowing what is offered
    try:
        loaded = build.load(plan.source, uses_blas, build_missing)
    except BuildFailure:
        return None
    if loaded is None:
        return None
    module, meta = loaded
    shared_kernels.lend(module, plan)
    compiled = CompiledGraph(module, plan, meta)
    shared_kernels.offer(module, plan, meta, uses_blas)  # once it is ready to run
    return compiled


def compile_profiled(graph, name, updates=None, plan_key=None):
    """The profiled C target's module of `graph`: the C module's, each step between timing
    probes (codegen/probes.py); a CompiledGraph whose `probes` say what each one times.
    Its plan is not stored: the profiler builds it when a profile first runs the graph."""
    return compile_graph(graph, name, updates, profiled=True)


def _built(graph, name, updates, uses_blas, profiled, strings=None):
    """The CompiledGraph; its `render_seconds` say how long lowering took, `load_seconds`
    how long loading took besides the compiler (the compile report shows them). `strings`:
    the StringLayout of a graph whose strings are handles (codegen/string_handles.py)."""
    probes = ProbeTable(graph) if profiled else None
    start = time.perf_counter()
    plan = lower(
        graph,
        title=_safe(name),
        blas=uses_blas,
        vector_math=build.vector_math(),
        threads=build.threads(),
        updates=updates,
        watch=True,
        target=C_MODULE if probes is None else PROFILED_C,
        probes=probes,
        identity=shared_kernels.identity() if probes is None else None,
        widen=functools.partial(shared_kernels.widened, uses_blas=uses_blas),
    )
    plan.strings = strings
    rendered = time.perf_counter()
    module, meta = build.load(plan.source, uses_blas)
    shared_kernels.lend(module, plan)
    loaded = time.perf_counter() - rendered
    compiler = 0.0 if meta.get("cached") else meta.get("compile_seconds", 0.0)
    compiled = CompiledGraph(module, plan, meta, probes and probes.probes)
    shared_kernels.offer(module, plan, meta, uses_blas)  # once it is ready to run
    compiled.render_seconds, compiled.load_seconds = rendered - start, max(loaded - compiler, 0.0)
    return compiled


MAX_RANK = 32  # loop nests index with codegen.loops.INDEX, twice as many for a tile's


def _check_ranks(graph):
    for node in all_nodes(graph):
        if len(node.shape) > MAX_RANK:
            where = f" at {format_location(node.location)}" if node.location else ""
            raise UnsupportedGraph(
                f"the C backend compiles tensors of rank up to {MAX_RANK}; {node.op}{where} "
                f"makes one of rank {len(node.shape)}"
            )


def _safe(name):
    """A user's function name as a C-comment- and file-name-safe identifier."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))[:64]
    return cleaned or "function"


C_MODULE.implement(emitter=compile_graph)
PROFILED_C.implement(emitter=compile_profiled)
