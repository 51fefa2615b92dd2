"""What runs a traced graph: a `Backend`, the parsed `tt.function(backend=...)`, names a
target (codegen/targets.py) and a policy: whether to fall back to the numpy interpreter
where the target cannot build, and whether to build in the background (the interpreter runs
meanwhile)."""

import functools
import threading
import warnings
from typing import NamedTuple

from codegen import conv_kernels, string_handles
from codegen.interpreted import interpreted
from codegen.targets import C_MODULE, INTERPRETER, Target
from runtime import installed_kernels
from tracer.ir import all_nodes, holds_strings
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


def executable(graph, backend, name, updates=None, on_ready=None, plan_key=None, own_kernels=False):
    """What runs `graph` for `backend` (a Backend or its string): the target's executable;
    with `fallback`, the interpreter where the target's module cannot be built or loaded,
    with one warning for each cause (no compiler, a compile error or time-out, an unsafe
    cache directory, ...); with `background_build`, both in turn (`Tiered`: the interpreter
    at once, while a thread builds the module; `on_ready(built)` is called with the module's
    executable once it is built). A module that calls the convolution kernels installed with
    tracer (codegen/conv_kernels.py) runs at once, while a thread builds the same module with
    kernels of its own, which run faster and give the same bits, and takes its place
    (`Tiered` again; not for a module that calls only the table's products and solves, which
    a module of its own kernels calls too: that build would make the same module again,
    holding the interpreter's lock and a core while the first calls run); with
    `own_kernels`, the module with its own is built at once. A
    compiled module's plan is stored under `plan_key` (see `stored_executable`)."""
    backend = parse_backend(backend)
    if backend.background_build:  # the interpreter answers: the module takes its own kernels
        later = functools.partial(
            executable,
            graph,
            backend.built_now(),
            name,
            updates,
            plan_key=plan_key,
            own_kernels=True,
        )
        return Tiered(interpreted(graph), later, name, on_ready)
    from codegen.errors import BuildFailure

    try:
        own = {"own_kernels": True} if own_kernels else {}
        built = backend.target.emit(graph, name, updates, plan_key, **own)
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
    if not installed_kernels.uses(getattr(built, "c_source", None) or ""):
        return built
    if not conv_kernels.serves_convolutions(all_nodes(graph), backend.target):
        return built  # the table's products alone: a module of its own kernels is this one
    own = functools.partial(_with_own_kernels, graph, backend.target, name, updates, plan_key)
    return Tiered(built, own, name, on_ready, after_first_run=True)


def _with_own_kernels(graph, target, name, updates, plan_key):
    """The module of `graph` with its own convolution kernels; None where it cannot be built
    (the module with the installed ones keeps running)."""
    from codegen.errors import BuildFailure

    try:
        return target.emit(graph, name, updates, plan_key, own_kernels=True)
    except BuildFailure:
        return None


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


def _exiting(error):
    """Whether `error` came from the program's exit, which a build thread outlived: the main
    thread has ended, or it is ending and Python's thread pools take no more work (the
    compilers' pipes are read by one, codegen/build.py)."""
    if not threading.main_thread().is_alive():
        return True
    return isinstance(error, RuntimeError) and "after interpreter shutdown" in str(error)


class Tiered:
    """One executable now, a faster one once a thread builds it: the interpreter while the
    compiled module builds (the tiered backend), or a module that calls the installed
    convolution kernels while the one with its own builds.

    Until the thread is done, calls run `now`, which gives the later executable's values
    (tests/test_backends.py holds the interpreter and the module to that; the installed
    kernels give the module's bits, tests/test_installed_kernels.py), so a program's first
    results come without waiting for the C compiler. `later()` builds the other executable
    (None: keep `now`); `on_ready(built)` is called with it. The thread starts at once, or
    with `after_first_run` once the first call has run (the compiler would slow that call
    down, taking the cores its threads run on). `wait()` waits for the build."""

    def __init__(self, now, later, name, on_ready=None, after_first_run=False):
        self._current, self.run = now, now.run
        self._on_ready = on_ready
        self._started = False
        self._start_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._build, args=(later,), name=f"tracer build of {name}"
        )
        self._thread.daemon = True  # a program that ends before its build does is not held
        if after_first_run:
            self.run = self._run_first
        else:
            self._start()

    @classmethod
    def built(cls, module):
        """A Tiered whose module is built already (a stored plan's, found in the cache)."""
        tiered = cls.__new__(cls)
        tiered._current, tiered.run, tiered._thread = module, module.run, None
        return tiered

    def _run_first(self, arrays):
        results = self._current.run(arrays)
        self._start()
        return results

    def _start(self):
        if self._thread is None or self._started:  # built already, or building
            return
        with self._start_lock:
            if self._started:
                return
            self._started = True
            self.run = self._current.run
            self._thread.start()

    def _build(self, later):
        try:
            built = later()
        except Exception as error:
            if _exiting(error):
                return  # the program ended while it built (its exit stopped the compiler)
            raise
        if built is None:
            return
        self._current, self.run = built, built.run
        if self._on_ready is not None:
            self._on_ready(built)

    @property
    def building(self):
        """Whether the later executable may still take the place of the current one."""
        return self._thread is not None and (not self._started or self._thread.is_alive())

    def __call__(self, arrays):
        return self.run(arrays)

    @property
    def current(self):
        """The executable that runs now."""
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
        """Wait for the build (starting it where it waits for the first call)."""
        self._start()
        if self._thread is not None:
            self._thread.join()
