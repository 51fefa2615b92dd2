"""What runs a traced graph: the compiled module, the numpy interpreter, or the one and
then the other (tiered), and the interpreter for graphs with dimensions known only at run
time."""

import threading
import warnings

import numpy as np

from runtime.executable import InterpretedGraph
from tracer.ir import dims, rewrite
from tracer.passes.pipeline import run_pipeline

_FALLBACK_WARNED = set()  # the causes of falling back to the interpreter, each warned once


def compile_optimized(graph, name, backend):
    """The executable of `graph` after the pass pipeline, built now (a `call` op's)."""
    return executable(run_pipeline(graph).final, "auto" if backend == "tiered" else backend, name)


class _SpecializedInterpreter:
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


def executable(graph, backend, name, updates=None, on_ready=None, plan_key=None):
    """What runs `graph` for `backend`: the compiled module ("c"; "auto" falls back to the
    interpreter when the module cannot be built or loaded, with one warning for each cause:
    no compiler, a compile error or time-out, an unsafe cache directory, ...), the
    interpreter, or both in turn ("tiered": the interpreter at once, while a thread builds
    the module; `on_ready(built)` is called with the module's executable once it is built).
    A compiled module's plan is stored under `plan_key` (see `stored_executable`)."""
    if backend == "interpreter":
        return _interpreted(graph)
    if backend == "tiered":
        return Tiered(graph, name, updates, on_ready, plan_key)
    from codegen.compile import compile_graph
    from codegen.errors import BuildFailure

    try:
        return compile_graph(graph, name, updates, plan_key)
    except BuildFailure as error:
        if backend == "c":
            raise
        cause = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        if cause not in _FALLBACK_WARNED:
            _FALLBACK_WARNED.add(cause)
            warnings.warn(
                f"tracer: {cause}; tt.function runs {name} on the numpy interpreter instead",
                stacklevel=5,
            )
        return _interpreted(graph)


def traced_plan_key(traced, backend, name, updates):
    """The key under which the plan of the graph `traced` is stored (`codegen.plans`), or
    None: the interpreter stores none, and a graph with no digest or an unusable cache has
    no key."""
    if backend == "interpreter":
        return None
    from codegen import plans
    from codegen.errors import BuildFailure

    try:
        return plans.plan_key(traced, name, updates)
    except (BuildFailure, OSError):  # no compiler, an unsafe cache: the build will say
        return None


def stored_executable(plan_key, backend):
    """The compiled module of a plan an earlier process stored: the passes and the lowering
    are skipped. None when there is none; for "tiered" also when the plan's module is not in
    the cache, which its build would make the first call wait for (the interpreter runs the
    optimized graph meanwhile: the passes run, and the build stores the plan)."""
    from codegen.compile import compile_stored
    from codegen.errors import BuildFailure

    try:
        built = compile_stored(plan_key, build_missing=backend != "tiered")
    except (BuildFailure, OSError):
        return None
    return Tiered.built(built) if built is not None and backend == "tiered" else built


def _interpreted(graph):
    return _SpecializedInterpreter(graph) if rewrite.symbols(graph) else InterpretedGraph(graph)


class Tiered:
    """The interpreter now, the compiled module once it is built.

    A thread builds the module (as backend "auto" does: a failure leaves the interpreter,
    with one warning); until it is ready, calls run on the interpreter, which gives the same
    values (tests/test_backends.py holds the two to that), so a program's first results come
    without waiting for the C compiler. `wait()` waits for the build."""

    def __init__(self, graph, name, updates, on_ready, plan_key=None):
        self._interpreted = _interpreted(graph)
        self._current = self._interpreted
        self.run = self._interpreted.run
        self._on_ready = on_ready
        self._thread = threading.Thread(
            target=self._build,
            args=(graph, name, updates, plan_key),
            name=f"tracer build of {name}",
        )
        self._thread.daemon = True  # a program that ends before its build does is not held
        self._thread.start()

    @classmethod
    def built(cls, module):
        """A Tiered whose module is built already (a stored plan's, found in the cache)."""
        tiered = cls.__new__(cls)
        tiered._current, tiered.run, tiered._thread = module, module.run, None
        return tiered

    def _build(self, graph, name, updates, plan_key):
        built = executable(graph, "auto", name, updates, plan_key=plan_key)
        self._current, self.run = built, built.run
        if self._on_ready is not None:
            self._on_ready(built)

    @property
    def current(self):
        """The interpreter, or the compiled module once built."""
        return self._current

    @property
    def backend(self):
        return self._current.backend

    @property
    def c_source(self):
        self.wait()
        return getattr(self._current, "c_source", None)

    @property
    def meta(self):
        return getattr(self._current, "meta", {})

    def wait(self):
        if self._thread is not None:
            self._thread.join()
