"""What runs a traced graph: a `Backend`, the parsed `tt.function(backend=...)`, names a
target (codegen/targets.py) and a policy: whether to fall back to the numpy interpreter
where the target cannot build, and whether to build in the background (the interpreter runs
meanwhile)."""

import threading
import warnings
from typing import NamedTuple

from codegen import string_handles
from codegen.interpreted import interpreted
from codegen.targets import C_MODULE, INTERPRETER, Target
from tracer.ir import holds_strings
from tracer.passes.pipeline import run_pipeline

_FALLBACK_WARNED = set()  # the causes of falling back to the interpreter, each warned once


class Backend(NamedTuple):
    """A target and the policy of running on it (see `BACKENDS`)."""

    target: Target
    fallback: bool = False  # the interpreter runs where the target's build fails
    background_build: bool = False  # the interpreter runs while a thread builds

    @property
    def name(self):
        """The string `tt.function(backend=...)` names this backend with (None if none)."""
        return next((name for name, backend in BACKENDS.items() if backend == self), None)

    def built_now(self):
        """This backend with its build made in the caller's thread."""
        return self._replace(background_build=False)


# the strings `tt.function(backend=...)` takes, and what each one means
BACKENDS = {
    "auto": Backend(C_MODULE, fallback=True),
    "c": Backend(C_MODULE),
    "interpreter": Backend(INTERPRETER),
    "tiered": Backend(C_MODULE, fallback=True, background_build=True),
}


def parse_backend(backend):
    """The Backend a `tt.function(backend=...)` string names (a Backend is returned as it is);
    ValueError for any other value."""
    if isinstance(backend, Backend):
        return backend
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {tuple(BACKENDS)}, got {backend!r}")
    return BACKENDS[backend]


def backend_for(graph, backend):
    """The Backend that runs `graph`: `backend`, but the interpreter, where `backend` may
    fall back, for a graph that holds tt.string values and computes too few numbers for C
    to pay for its steps on strings, which a module hands back to Python (docs/strings.md)."""
    backend = parse_backend(backend)
    if (
        backend.fallback
        and backend.target.builds_modules
        and holds_strings(graph)
        and not string_handles.numbers_worth_compiling(graph)
    ):
        return BACKENDS["interpreter"]
    return backend


def compile_optimized(graph, name, backend):
    """The executable of `graph` after the pass pipeline, built now (a `call` op's)."""
    backend = backend_for(graph, backend).built_now()
    return executable(run_pipeline(graph, target=backend.target).final, backend, name)


def executable(graph, backend, name, updates=None, on_ready=None, plan_key=None):
    """What runs `graph` for `backend` (a Backend or its string): the target's executable;
    with `fallback`, the interpreter where the target's module cannot be built or loaded,
    with one warning for each cause (no compiler, a compile error or time-out, an unsafe
    cache directory, ...); with `background_build`, both in turn (`Tiered`: the interpreter
    at once, while a thread builds the module; `on_ready(built)` is called with the module's
    executable once it is built). A compiled module's plan is stored under `plan_key` (see
    `stored_executable`)."""
    backend = parse_backend(backend)
    if backend.background_build:
        return Tiered(graph, name, updates, on_ready, plan_key, backend.built_now())
    from codegen.errors import BuildFailure

    try:
        return backend.target.emit(graph, name, updates, plan_key)
    except BuildFailure as error:
        if not backend.fallback:
            raise
        cause = f"{type(error).__name__}: {str(error).splitlines()[0]}"
        if cause not in _FALLBACK_WARNED:
            _FALLBACK_WARNED.add(cause)
            warnings.warn(
                f"tracer: {cause}; tt.function runs {name} on the numpy interpreter instead",
                stacklevel=5,
            )
        return interpreted(graph)


def traced_plan_key(traced, backend, name, updates):
    """The key under which the plan of the graph `traced` is stored (`codegen.plans`), or
    None: a target that builds no module (the interpreter) stores none, and a graph with
    no digest or an unusable cache has no key."""
    if not parse_backend(backend).target.builds_modules:
        return None
    from codegen import plans
    from codegen.errors import BuildFailure

    try:
        return plans.plan_key(traced, name, updates)
    except (BuildFailure, OSError):  # no compiler, an unsafe cache: the build will say
        return None


def stored_executable(plan_key, backend):
    """The compiled module of a plan an earlier process stored: the passes and the lowering
    are skipped. None when there is none; with a background build also when the plan's
    module is not in the cache, which its build would make the first call wait for (the
    interpreter runs the optimized graph meanwhile: the passes run, and the build stores
    the plan)."""
    from codegen.compile import compile_stored
    from codegen.errors import BuildFailure

    background = parse_backend(backend).background_build
    try:
        built = compile_stored(plan_key, build_missing=not background)
    except (BuildFailure, OSError):
        return None
    return Tiered.built(built) if built is not None and background else built


class Tiered:
    """The interpreter now, the compiled module once it is built.

    A thread builds the module (with `backend`, which falls back as "auto" does: a failure
    leaves the interpreter, with one warning); until it is ready, calls run on the
    interpreter, which gives the same values (tests/test_backends.py holds the two to that),
    so a program's first results come without waiting for the C compiler. `wait()` waits
    for the build."""

    def __init__(self, graph, name, updates, on_ready, plan_key=None, backend=BACKENDS["auto"]):
        self._interpreted = interpreted(graph)
        self._current = self._interpreted
        self.run = self._interpreted.run
        self._on_ready = on_ready
        self._thread = threading.Thread(
            target=self._build,
            args=(graph, name, updates, plan_key, backend),
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

    def _build(self, graph, name, updates, plan_key, backend):
        built = executable(graph, backend, name, updates, plan_key=plan_key)
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
