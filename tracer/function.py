"""`tt.function`: trace a Python function once per input signature, optimize, and run it compiled.

    @tt.function
    def step(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x) * x)
        return y, tape.gradient(y, x)

The signature of a call is the structure of its arguments, the shape and dtype of each
tensor (tracer Tensors, numpy arrays and numpy scalars), the identity of each Variable, and
the value of every other argument (tracer/signature.py). Each new signature is traced
(Python control flow runs once), run through the pass pipeline, and handed to a backend:
"c" compiles it, "interpreter" runs it with numpy, "auto" compiles and falls back to
numpy, with one warning that says why, when no C compiler works. Variables the function
reads and assigns are state of the compiled code (tracer/concrete.py runs it).
"""

import collections
import functools
import itertools
import logging
import time
import types
import weakref

from tracer import autograph, collector, dtypes, nest
from tracer.any_rank import AnyRankFunction, has_unknown_rank
from tracer.concrete import ConcreteFunction
from tracer.config import settings
from tracer.errors import RunsAsPython
from tracer.executables import BACKENDS, parse_backend
from tracer.ir import dims
from tracer.ir.source import is_library_file
from tracer.ops.array_ops import SymbolicRange, dims_value
from tracer.py_function import ResultsChangedShape
from tracer.signature import (
    Binding,
    TensorSpec,
    accepts,
    argument_names,
    as_argument_array,
    bound_arguments,
    conform,
    difference,
    generalize,
    is_tensor_argument,
    signature,
    spec_of,
    traced_value,
    unknown_sizes,
)
from tracer.tensor import Tensor, TensorLike, constant
from tracer.tensor_shape import TensorShape, is_unknown_rank
from tracer.tracing import Trace, assumptions_unrecorded, tracing
from tracer.types import TraceType
from tracer.variable import Variable

log = logging.getLogger("tracer.function")

# the values of its integer tensor arguments a function that needs them as sizes is traced
# for, at most (`Function._call_by_value`): three compiles, then Python at each call
MAX_VALUES_TRACED = 3

CacheInfo = collections.namedtuple("CacheInfo", "hits misses entries compile_seconds")
# the seconds one signature took: running the Python function to trace it, then everything
# else that made its ConcreteFunction (passes, lowering to C, the C compiler, loading)
BuildTimes = collections.namedtuple("BuildTimes", "trace build")


class RetraceLimitError(RuntimeError):
    """A tt.function was asked to trace more often than its max_retraces allows."""


def function(
    func=None,
    input_signature=None,
    autograph=True,
    backend="auto",
    max_retraces=None,
    jit_compile=None,
    reduce_retracing=None,
    experimental_implements=None,
    experimental_autograph_options=None,
    experimental_relax_shapes=None,
    experimental_follow_type_hints=None,
):
    """Decorate `func` so that calls run a traced, optimized and compiled version of it.

    `max_retraces=N` makes the (N+1)-th retrace raise RetraceLimitError, listing what changed
    each time: a guard against signatures that vary by accident (a Python float argument
    that changes every step, say). `jit_compile`, as in TensorFlow: True insists on
    compiled code (backend "c": no fallback to the interpreter), False runs the graph
    without compiling it (backend "interpreter"), None leaves `backend` to decide.
    `func` may be a function, a bound method, a functools.partial or any callable object.

    `backend`: "auto" compiles to C (and falls back to the numpy interpreter, with a
    warning, where it cannot); "c" insists on C; "interpreter" never compiles; "tiered" runs
    the first calls on the interpreter while a thread compiles, and C from the call after
    the module is ready (the first result without waiting for the C compiler).

    `input_signature` (TensorSpecs, None for a dimension of any size) fixes what the function
    is traced for. Without one, a call that changes a dimension of a tensor argument traces
    a generalized signature with that dimension unknown, so that one compiled module then
    runs every size of it (automatic dynamic shapes, as PyTorch's compiler does): where the
    function cannot be traced so (its Python code needs the size), it is traced for each
    size, as before. `reduce_retracing=True` insists on the generalized trace (its errors
    are raised), `reduce_retracing=False` traces each size (TensorFlow's default).

    With `autograph` (the default), the `if`, `while` and `for` statements of `func`'s own
    source whose condition or iterable is a tensor become tt.cond and tt.while_loop
    (tracer/autograph); with autograph=False, Python control flow runs once, at trace time.

    TensorFlow's other options are taken as it takes them: `experimental_relax_shapes`,
    its deprecated name for `reduce_retracing` (either one True asks for it); and
    `experimental_implements`, `experimental_autograph_options` and
    `experimental_follow_type_hints`, recorded (`Function.experimental_options`) and
    otherwise without effect in tracer (TensorFlow 2.21 too traces `f(1)` and `f(2)` of a
    parameter annotated `tf.Tensor` apart, and autograph converts what it converts).
    """
    backend = _backend_for(jit_compile, parse_backend(backend))
    if experimental_relax_shapes is not None:
        reduce_retracing = bool(reduce_retracing or experimental_relax_shapes)
    options = {
        "implements": experimental_implements,
        "autograph_options": experimental_autograph_options,
        "follow_type_hints": experimental_follow_type_hints,
    }
    options = {name: value for name, value in options.items() if value is not None}
    if func is None:
        return functools.partial(
            function,
            input_signature=input_signature,
            autograph=autograph,
            backend=backend,
            max_retraces=max_retraces,
            reduce_retracing=reduce_retracing,
            **{f"experimental_{name}": value for name, value in options.items()},
        )
    return Function(
        func, input_signature, backend, max_retraces, reduce_retracing, autograph, options
    )


def _backend_for(jit_compile, backend):
    """The Backend `jit_compile` asks for, where it asks for one ("auto" gives way to it)."""
    if jit_compile is None:
        return backend
    wanted = BACKENDS["c" if jit_compile else "interpreter"]
    if backend not in (BACKENDS["auto"], wanted):
        raise ValueError(
            f"jit_compile={jit_compile} asks for backend {wanted.name!r}, not {backend.name!r}"
        )
    return wanted


class Function:
    """A Python function traced and compiled per signature (what `tt.function` returns)."""

    def __init__(
        self,
        python_function,
        input_signature,
        backend,
        max_retraces=None,
        reduce_retracing=None,
        autograph=True,
        options=None,
    ):
        if not callable(python_function):
            raise TypeError(f"tt.function needs a callable, not {python_function!r}")
        functools.update_wrapper(self, python_function)
        self.__name__ = _name_of(python_function)
        self._python_function = python_function
        self._autograph = bool(autograph)
        self._converted = None  # the function autograph converted, made on the first trace
        if input_signature is not None and not isinstance(input_signature, (list, tuple)):
            raise TypeError(
                "input_signature must be either a tuple or a list, got "
                f"{type(input_signature).__name__}"
            )
        self._input_signature = None if input_signature is None else list(input_signature)
        # its TensorSpecs, in the order of a call's tensors (a signature may nest them in
        # lists, tuples and dicts, as TensorFlow's)
        self._flat_signature = nest.flatten(self._input_signature or [])
        for spec in self._flat_signature:
            if not isinstance(spec, TensorSpec):
                raise TypeError(f"an input_signature lists TensorSpecs, not {spec!r}")
        self._binding = None  # how calls bind to the parameters (`_bound`), made when first called
        self._options = dict(options or {})  # TensorFlow's experimental_* options, recorded
        # None: automatic dynamic shapes; True: always generalize; False: one trace per size
        self._reduce_retracing = None if reduce_retracing is None else bool(reduce_retracing)
        self._sizes_needed = False  # a generalized trace failed: the function needs its sizes
        # the input_signature's trace failed for its unknown sizes (a convolution's spatial
        # ones): each call is traced with its own sizes instead
        self._signature_sizes_needed = False
        # a call gave one axis's unknown dimensions two sizes: from then on each tensor
        # argument's unknown dimensions are its own (TensorSpec.symbolic_shape)
        self._per_argument = False
        self._shared_dims_needed = False  # a trace with them per argument failed: never again
        self._set_aside = None  # (key, trace) of shared dims, while one per argument is tried
        self._backend = parse_backend(backend)
        self._max_retraces = max_retraces
        self._concrete = {}  # signature -> ConcreteFunction
        self._by_shape = {}  # (shape, dtype) of each positional tensor -> ConcreteFunction
        self._tracing_count = 0
        self._hits = 0  # besides the calls the entries in C ran
        self._fast = None
        self._compile_seconds = 0.0
        self._build_times = {}  # ConcreteFunction -> BuildTimes, for the compile report
        self._retrace_reasons = []
        # set by a trace that found code tracer runs only as Python (a tt.data.Dataset
        # iterated, a tt.py_function with results): the function runs as Python from then on
        self._runs_as_python = False
        # set where that code needed the value of a scalar integer tensor argument (a
        # TensorArray's size, tt.range's bounds): it is then traced for each value of them,
        # each a constant of the trace (`_with_integer_values`); the values traced so far
        self._by_value = False
        self._values_traced = set()
        self._instances = None  # as a method: the Function of each instance (`__get__`)
        self._is_method = False  # an instance's Function: called with the instance first

    def __call__(self, *args, **kwargs):
        if settings.run_functions_eagerly or self._runs_as_python:
            return self._python_function(*args, **kwargs)
        if self._by_value:
            return self._call_by_value(args, kwargs)
        try:
            if kwargs:  # bound as TensorFlow binds it, by position where it can be
                positional = self._parameters().by_position(args, kwargs)
                if positional is not None:
                    args, kwargs = positional, {}
            fast = self._fast  # the last signature called, whose call path is in C
            if fast is not None and not kwargs:
                result = fast(args)
                if result is not None:  # None: not its signature, or a tape records
                    return result
            # NOTE: the fast path, for eager tensors passed by position: the key is their
            # shapes and dtypes, found without walking the arguments' structure.
            key = _shape_key(args) if not kwargs else None
            if key is not None:
                concrete = self._by_shape.get(key)
                if concrete is not None:
                    self._hits += 1
                    self._fast = concrete._fast
                    return concrete._call_with_tensors(args)
            # binding fills in defaults (and converts to an input_signature), which may add
            # tensors (a default of `tt.constant(2.)`): the shape key serves a call only
            # where its tensors are all the call's
            bound = self._bound(args, kwargs)
            concrete = self._concrete_for(*bound)
            if self._runs_as_python:  # found by this call's trace
                return self._python_function(*args, **kwargs)
            tensors = [leaf for leaf in nest.flatten(bound) if is_tensor_argument(leaf)]
            if not kwargs:
                self._fast = concrete.fast_for(len(args))
            if key is not None and len(tensors) == len(args):
                self._by_shape[key] = concrete
                return concrete._call_with_tensors(args)
            return concrete._call(tensors)
        except RunsAsPython as signal:  # this call found code that runs only as Python
            if isinstance(signal, ResultsChangedShape):  # in its run: from now on too
                self._run_as_python(f"tt.function {self.__name__} {signal}")
            if self._by_value:  # found by this call's trace: traced again, by value
                return self._call_by_value(args, kwargs)
            return self._python_function(*args, **kwargs)
        except Exception as error:
            raise error.with_traceback(_user_frames(error.__traceback__)) from None

    def _call_by_value(self, args, kwargs):
        """A call of a function traced for each value of its scalar integer tensor arguments
        (`_by_value`): those passed as known values, so that each value has a trace of its own
        (TensorFlow's graph takes any value; tracer's compiled code holds tensors of sizes
        known when tracing). From the `MAX_VALUES_TRACED + 1`-th value on, the function runs
        as Python at each call instead, as it did before."""
        given, named = _with_integer_values(args, kwargs)
        values = tuple(a.key for a in (*given, *named.values()) if type(a) is _KnownInteger)
        if values not in self._values_traced:
            if len(self._values_traced) >= MAX_VALUES_TRACED:
                self._run_as_python(
                    f"tt.function {self.__name__} was traced for {MAX_VALUES_TRACED} values of "
                    "its integer tensor arguments, which it needs as sizes, and is called with "
                    f"another ({values}): it runs as Python at each call from now on"
                )
                return self._python_function(*args, **kwargs)
            self._values_traced.add(values)
        try:
            bound = self._bound(given, named)
            concrete = self._concrete_for(*bound)
            if self._runs_as_python:  # its trace by value found such code too
                return self._python_function(*args, **kwargs)
            return concrete._call(
                [leaf for leaf in nest.flatten(bound) if is_tensor_argument(leaf)]
            )
        except RunsAsPython:
            return self._python_function(*args, **kwargs)
        except Exception as error:
            raise error.with_traceback(_user_frames(error.__traceback__)) from None

    def __get__(self, instance, owner):
        """The method of `instance`: a Function of its own per instance, as TensorFlow's,
        so that each instance's first call may make its variables (two models, or two
        optimizers' slots, each on its first trace) and counts its own traces."""
        if instance is None:
            return self
        return _BoundMethod(self._for_instance(instance), instance)

    def _for_instance(self, instance):
        """The Function that runs this method for `instance` (this one for an instance that
        no weak reference can point at)."""
        if self._instances is None:
            self._instances = {}  # id(instance) -> (weak reference, Function)
        key = id(instance)
        entry = self._instances.get(key)
        if entry is not None and entry[0]() is instance:
            return entry[1]
        try:
            reference = weakref.ref(instance, lambda _, key=key: self._instances.pop(key, None))
        except TypeError:  # __slots__ without __weakref__
            return self
        own = Function(
            self._python_function,
            self._input_signature,
            self._backend,
            self._max_retraces,
            self._reduce_retracing,
            self._autograph,
            self._options,
        )
        own._converted = self._converted
        own._binding = self._binding
        own._is_method = True
        self._instances[key] = (reference, own)
        return own

    def get_concrete_function(self, *args, **kwargs):
        """The traced function for these arguments (traced now if this signature is new);
        tensors may be given as TensorSpecs, with None for a dimension of any size. With an
        input_signature and no arguments, the function of that signature, as in TensorFlow."""
        if self._input_signature is not None and len(args) == int(self._is_method) and not kwargs:
            args = (*args, *self._input_signature)
        return self._concrete_for(*self._bound(args, kwargs))

    def _parameters(self):
        """The Binding of the Python function's parameters, made at the first call."""
        if self._binding is None:
            self._binding = Binding(self._python_function)
        return self._binding

    def _bound(self, args, kwargs):
        """The call bound to the function's parameters, as TensorFlow binds it before it keys
        a trace (`Binding`): (args, kwargs) with defaults filled in and each argument that
        can take a position by position; with an input_signature, (args, {}) of the
        signature's parameters, each value converted to its spec."""
        binding = self._parameters()
        if self._input_signature is None:
            return binding.canonical(args, kwargs)
        if binding.signature is None:  # (no parameters to bind to: by position)
            if kwargs:
                raise TypeError(f"{self.__name__}: pass its arguments by position")
            skip = int(self._is_method)
            if len(args) - skip != len(self._input_signature):
                raise TypeError(
                    f"{self.__name__}: the input_signature lists {len(self._input_signature)} "
                    f"arguments, the call gives {len(args) - skip}"
                )
            pairs = enumerate(zip(self._input_signature, args[skip:]))
            return (*args[:skip], *(conform(s, v, f"arg{k}") for k, (s, v) in pairs)), {}
        skip = int(self._is_method)
        return binding.to_input_signature(self._input_signature, args, kwargs, skip), {}

    def _concrete_for(self, args, kwargs):
        """The concrete function of a bound call (`_bound`), traced now if it is new."""
        called = args, kwargs
        in_signature = None  # (the call's key, its arguments as specs) of a first signature trace
        if self._input_signature is not None:
            # a method's Function is called with its instance first (`_BoundMethod`), which
            # the input_signature does not list
            instance, args = (args[:1], args[1:]) if self._is_method else ((), args)
            ranks = [spec_of(value).shape for value in nest.flatten(list(args))]
            if any(is_unknown_rank(shape) for shape in ranks):
                raise TypeError(
                    f"{self.__name__}: tracer compiles for a known rank; give a tensor, or a "
                    "TensorSpec with a shape, where the input_signature's rank is unknown"
                )
            flat = [s.of_rank(len(shape)) for s, shape in zip(self._flat_signature, ranks)]
            specs = nest.pack_sequence_as(list(args), flat)
            general = signature([*instance, *specs], {})
            concrete = self._concrete.get(general)
            given = signature([*instance, *args], {})
            # None: an axis's shared unknown dimensions given two sizes (a trace may have
            # given each argument its own: `_trace`'s own_dims)
            if concrete is not None:
                sizes = concrete.sizes_in(general, given)
            else:
                sizes = unknown_sizes(general, given, self._per_argument)
            if sizes is None and not self._shared_dims_needed:
                self._per_arguments_from_now(general)
                concrete, sizes = None, unknown_sizes(general, given, True)
            as_given = [
                *instance,
                *nest.pack_sequence_as(list(args), [spec_of(a) for a in nest.flatten(list(args))]),
            ]
            if self._signature_sizes_needed:
                args = as_given
            elif sizes is not None and (concrete is None or concrete.admits(sizes)):
                args = [*instance, *specs]
                # a first trace may find that it cannot serve these sizes: traced as given then
                in_signature = (given, as_given) if concrete is None else None
            else:  # sizes its trace cannot serve (x[1:] of an empty x): traced as they are
                args = as_given
        elif has_unknown_rank((args, kwargs)):
            return AnyRankFunction(self, args, kwargs)
        try:
            key = signature(args, kwargs)
        except TypeError as error:
            raise TypeError(f"{self.__name__}: {self._bad_argument(args, kwargs)}") from error

        concrete = self._concrete.get(key) or self._accepting(key)
        if concrete is not None:
            self._hits += 1
            return concrete
        generalized = None
        if self._reduce_retracing or self._reduce_retracing is None and not self._sizes_needed:
            generalized = self._generalized(args, kwargs)
        specific = args, kwargs
        if generalized is not None and signature(*generalized) in self._concrete:
            generalized = None  # that trace needs sizes this call lacks (x[1:] of an empty x)
        if generalized is not None:
            args, kwargs = generalized
            key = signature(args, kwargs)
        if self._concrete:
            reason = difference(key, self._concrete)
            if generalized is not None:
                reason += (
                    " (traced with the changed dimensions unknown: reduce_retracing)"
                    if self._reduce_retracing
                    else " (the changed dimensions became dynamic: a third size reuses this "
                    "trace; reduce_retracing=False traces each size)"
                )
            log.info("retracing %s: %s", self.__name__, reason)
            self._retrace_reasons.append(reason)
            if self._max_retraces is not None and len(self._retrace_reasons) > self._max_retraces:
                reasons = "\n".join(f"  {k + 1}. {r}" for k, r in enumerate(self._retrace_reasons))
                self._retrace_reasons.pop()
                raise RetraceLimitError(
                    f"{self.__name__} would be traced again, past max_retraces={self._max_retraces}; "
                    f"each retrace and what changed:\n{reasons}"
                )
        start = time.perf_counter()
        seen = (
            None
            if generalized is None
            else _largest_size_made_unknown(specific, generalized, self._concrete)
        )
        try:
            # a trace that generalized by itself is traced again with the sizes where it fails
            with dims.sizes_seen(seen):
                concrete = self._trace(
                    args, kwargs, sizes_known=generalized is not None and not self._reduce_retracing
                )
        except Exception as error:
            if in_signature is not None:
                # the signature leaves unknown a size that the function's ops need (a
                # convolution's spatial sizes, tracer's known when tracing): this call is
                # traced with its own sizes, and each new size from now on
                self._signature_sizes_needed = True
                args, kwargs = in_signature[1], {}
                key, concrete = self._traced_with_sizes(args, kwargs, error, sizes_needed=False)
            elif self._per_argument and _has_unknown_dims((args, kwargs)):
                # with each argument's own unknown dimensions: the function combines them (x
                # * y of two batches), so they are shared again (the trace of shared ones
                # serves the calls that give them one size, as before), and a call that
                # gives them two sizes is traced with its sizes
                self._per_argument, self._shared_dims_needed = False, True
                if self._set_aside is not None:
                    self._concrete.setdefault(*self._set_aside)
                args, kwargs = _with_specs(called)
                key, concrete = self._traced_with_sizes(args, kwargs, error, sizes_needed=False)
            elif generalized is None or self._reduce_retracing:
                raise
            else:
                args, kwargs = specific
                key, concrete = self._traced_with_sizes(args, kwargs, error)
        self._concrete[key] = concrete
        if generalized is not None and not concrete.admits(
            concrete.sizes_in(key, signature(*specific))
        ):
            log.info(
                "tracing %s with this call's sizes: the general trace needs others", self.__name__
            )
            args, kwargs = specific
            concrete = self._concrete[signature(args, kwargs)] = self._trace(args, kwargs)
        if in_signature is not None and not concrete.admits(
            concrete.sizes_in(key, in_signature[0])
        ):
            log.info(
                "tracing %s with this call's sizes: the signature's trace needs others",
                self.__name__,
            )
            as_given = in_signature[1]
            concrete = self._concrete[signature(as_given, {})] = self._trace(as_given, {})
        self._compile_seconds += time.perf_counter() - start
        return concrete

    def _own_dims(self, position):
        """The argument index that names the unknown dimensions of tensor argument
        `position` (None while every argument shares them)."""
        return position if self._per_argument else None

    def _traced_with_sizes(self, args, kwargs, error, sizes_needed=True):
        """(key, concrete function) of the call traced with its sizes known, after a trace
        with dimensions unknown failed (`error`): the function's Python code needs a size
        (a loop over `x.shape[0]`, say). From then on it is traced for each size, where
        `sizes_needed`. A trace that raises is not one the function has."""
        self._tracing_count -= 1  # (the failed trace is not one the function has)
        self._sizes_needed = self._sizes_needed or sizes_needed
        log.info(
            "retracing %s with the sizes known: traced with a dimension unknown, it raised %s: %s",
            self.__name__,
            type(error).__name__,
            str(error).splitlines()[0] if str(error) else "",
        )
        try:
            return signature(args, kwargs), self._trace(args, kwargs)
        except Exception:
            self._tracing_count -= 1
            raise

    @property
    def python_function(self):
        """The function this one traces (TensorFlow's name)."""
        return self._python_function

    def _traced_function(self):
        """What tracing runs: the Python function, converted by autograph unless it is off."""
        if not self._autograph:
            return self._python_function
        if self._converted is None:
            self._converted = autograph.convert(self._python_function)
        return self._converted

    def _bad_argument(self, args, kwargs):
        """What is wrong with the first argument the signature cannot take, named."""
        names = argument_names(self._python_function, args, kwargs)
        for name, leaf in zip(names, nest.flatten((args, kwargs))):
            try:
                signature((leaf,), {})
            except TypeError as error:
                return f"argument {name}: {error}"
        return "the arguments' structure cannot be keyed (dict keys of mixed types?)"

    def _accepting(self, key):
        """A concrete function traced with unknown dimensions that takes arguments of `key`."""
        for general, concrete in self._concrete.items():
            if accepts(general, key) and concrete.admits(concrete.sizes_in(general, key)):
                return concrete
        return None

    def _generalized(self, args, kwargs):
        """(args, kwargs) as TensorSpecs with None for each dimension that differs from the
        latest traced call of the same structure; None when there is no such call."""
        for concrete in reversed(list(self._concrete.values())):
            generalized = generalize(concrete._arguments, (args, kwargs), self._per_argument)
            if generalized is None and not (self._per_argument or self._shared_dims_needed):
                generalized = generalize(concrete._arguments, (args, kwargs), True)
                if generalized is not None:  # general only with an axis's sizes apart
                    self._per_arguments_from_now(signature(*generalized))
            if generalized is not None:
                return generalized
        return None

    def _per_arguments_from_now(self, general):
        """A call gave the unknown dimensions of one axis two sizes: trace `general` (a key)
        again, and every later trace, with each tensor argument's unknown dimensions its
        own (the trace of shared ones stays for the calls it was made for)."""
        if not self._per_argument:
            log.info(
                "%s: a call gives one axis's unknown dimensions two sizes; from now on each "
                "argument's unknown dimensions are its own",
                self.__name__,
            )
        self._per_argument = True
        set_aside = self._concrete.pop(general, None)
        if set_aside is not None:
            self._set_aside = (general, set_aside)

    def report(self, path, profile=None, args=None):
        """Write the one-page compile report of this function to `path` (an HTML file; see
        `tracer.report.write_report`): of the signature `args` gives, else of the latest
        traced one. Returns `path`.

            step(x)
            step.report("step.html")
        """
        from tracer.report import write_report  # (jinja2 and the page: only when asked)

        return write_report(self, path, profile=profile, args=args)

    def experimental_get_tracing_count(self):
        return self._tracing_count

    @property
    def experimental_options(self):
        """TensorFlow's experimental_* options this function was made with, by name without
        the prefix (`{"implements": "foo"}`): recorded, without effect in tracer."""
        return dict(self._options)

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Each traced signature: its arguments and its results, as TensorFlow prints them."""
        return "\n\n".join(c.pretty_printed_signature(verbose) for c in self._concrete.values())

    def cache_info(self):
        """hits and misses of the trace cache, its entries, and the seconds spent tracing,
        optimizing and compiling (a module found in the disk cache costs no compile time)."""
        fast_hits = sum(c._fast.hits for c in self._concrete.values() if c._fast is not None)
        return CacheInfo(
            self._hits + fast_hits,
            self._tracing_count,
            len(self._concrete),
            round(self._compile_seconds, 6),
        )

    @collector.paused  # tracing and compiling build graphs of many objects, as tapes do
    def _trace(self, args, kwargs, sizes_known=False, equal_sizes=None, own_dims=False):
        """A ConcreteFunction of the function traced for `args` and `kwargs`; `sizes_known`:
        their unknown sizes are known in the call (`Trace.sizes_known_in_call`). Where a shape
        rule needs an unknown dimension equal to another size (a square matrix's sides), the
        function is traced again with the one as the other (`equal_sizes`, {name: size}), as
        TensorFlow takes unknown dimensions for equal and checks when the graph runs. A
        dimension several arguments share that is needed equal to a number (`x * c` of a c of
        3, beside a y of the same unknown axis) is first made each argument's own
        (`own_dims`): only x's is taken for 3, as TensorFlow's graph has it."""
        binding = self._parameters()
        if binding.signature is not None:
            binding.bound(args, kwargs)
        self._tracing_count += 1
        trace = Trace(may_create_variables=self._tracing_count == 1)
        trace.sizes_known_in_call = sizes_known
        trace.equal_sizes = dict(equal_sizes or {})
        names = argument_names(self._python_function, args, kwargs)
        flat = nest.flatten((args, kwargs))
        specs = [spec_of(leaf) if is_tensor_argument(leaf) else leaf for leaf in flat]
        tensors = itertools.count()
        symbolic = [
            trace.input(
                name, self._symbolic_shape(leaf, next(tensors), trace, own_dims), leaf.dtype
            )
            if isinstance(leaf, TensorSpec)
            else traced_value(leaf)
            for name, leaf in zip(names, specs)
        ]
        symbolic_args, symbolic_kwargs = nest.pack_sequence_as((args, kwargs), symbolic)
        # the call's own values, while it is traced (a tt.py_function's results take their
        # shapes from a run on them: Trace.values_in_call)
        trace.call_values = {
            id(value._node): as_argument_array(leaf)
            for leaf, spec, value in zip(flat, specs, symbolic)
            if isinstance(spec, TensorSpec) and _has_value(leaf)
        }
        start = time.perf_counter()
        try:
            leaves = nest.flatten((symbolic_args, symbolic_kwargs))
            with tracing(trace):
                result = self._traced_function()(*symbolic_args, **symbolic_kwargs)
                result = _tensors_of_numbers(_values_of_variables(result))
            _check_arguments_unchanged(self.__name__, leaves, (symbolic_args, symbolic_kwargs))
        except RunsAsPython as signal:
            # a trace of the call's own values found code that runs only as Python; one from
            # specs (unknown sizes) may find it only for lack of the values: traced again
            # with them, it may compile
            if all(
                _has_value(leaf) for leaf, spec in zip(flat, specs) if isinstance(spec, TensorSpec)
            ) and not self._traces_by_value(args, kwargs, signal):
                self._run_as_python(f"tt.function {self.__name__} {signal}")
            raise
        except Exception as error:
            taken = _taken_equal(error, trace, self._per_argument)
            if taken is not None:
                name, size = taken  # (the size as its repr: text of a size is a value use)
                self._tracing_count -= 1  # (the trace that raised is not one the function has)
                if not isinstance(size, dims.Dim) and _shared(name, trace):
                    log.info(
                        "tracing %s again with each argument's own unknown dimensions: %s",
                        self.__name__,
                        error,
                    )
                    return self._trace(args, kwargs, sizes_known, own_dims=True)
                log.info("tracing %s again with %s = %r: %s", self.__name__, name, size, error)
                equal_sizes = {**trace.equal_sizes, name: size}
                return self._trace(args, kwargs, sizes_known, equal_sizes, own_dims)
            if isinstance(error, dims.SizesDiffer):  # its symbols are this trace's, not a caller's
                error = ValueError(*error.args).with_traceback(error.__traceback__)
            note = f"(raised while tt.function traced {self.__name__})"
            if note not in getattr(error, "__notes__", ()):  # once, where it calls itself
                error.add_note(note)
                if isinstance(error, RecursionError):
                    error.add_note(
                        f"tt.function {self.__name__} calls itself without end when traced: "
                        "its base case must be chosen by a Python value, not a tensor (with a "
                        "tensor condition both branches are traced, the recursive one too)"
                    )
            raise error.with_traceback(_user_frames(error.__traceback__)) from None
        finally:
            trace.call_values = None
        if trace.variables_created and trace.may_create_variables:
            # as TensorFlow: a first trace that made variables is made again, where making
            # one more is an error (each call would make a new one: not a singleton)
            return self._trace(args, kwargs, sizes_known, trace.equal_sizes, own_dims)
        traced = time.perf_counter()
        arguments = nest.pack_sequence_as((args, kwargs), specs)
        named = bound_arguments(self._python_function, *arguments)
        # the defaults binding filled in at the end: a call by position may leave them out
        omittable = 0 if kwargs or self._binding is None else self._binding.omittable(args)
        with assumptions_unrecorded():  # (an enclosing trace's program makes none of them)
            concrete = ConcreteFunction(
                self.__name__, trace, result, self._backend, arguments, named, omittable
            )
        self._build_times[concrete] = BuildTimes(traced - start, time.perf_counter() - traced)
        concrete._function = weakref.ref(self)  # its compile report shows the retraces
        concrete._binding = self._parameters()
        return concrete

    def _symbolic_shape(self, spec, position, trace, own_dims):
        """The shape of tensor argument `position` (of `spec`) in `trace`: its unknown
        dimensions as symbols (its own where `own_dims`), each one a shape rule needed equal
        to another size as that."""
        shape = spec.symbolic_shape(position if own_dims else self._own_dims(position))
        if not trace.equal_sizes:
            return shape
        return tuple(dims.resolved(size, trace.equal_sizes) for size in shape)

    def _traces_by_value(self, args, kwargs, signal):
        """Whether the function is traced for each value of its scalar integer tensor
        arguments from now on, where a trace of this call (`args`, `kwargs`) found code that
        runs only as Python (`signal`): where it has such arguments, no input_signature (which
        asks for one trace) and was not traced by value already. Logged, as a retrace is."""
        if self._by_value or self._input_signature is not None:
            return False
        if not any(_scalar_integer(a) for a in (*args, *kwargs.values())):
            return False
        self._by_value = True
        log.info(
            "tt.function %s %s; it is traced for each value of its scalar integer tensor "
            "arguments instead, each a constant of its trace",
            self.__name__,
            signal,
        )
        return True

    def _run_as_python(self, message):
        """From now on, run the Python function at each call, with one log line saying why:
        a trace found code that tracer runs only as Python (a tt.data.Dataset iterated, whose
        pipeline would otherwise be one pass's constants; a tt.py_function with results,
        whose shapes are known only when it runs). TensorFlow runs both in its graph."""
        if self._runs_as_python:
            return
        self._runs_as_python = True
        log.warning("%s", message)  # a notice of speed: logged, as TensorFlow's retraces are


def _taken_equal(error, trace, per_argument):
    """(name, size) where `error` is a shape rule's need for two sizes to be equal
    (dims.SizesDiffer) that `trace` can meet by tracing an unknown dimension of its
    arguments as the other size; else None. Not two arguments' own dimensions of one axis
    in a trace `per_argument`: the function combines them, and `_concrete_for` makes them
    one shared symbol again, the trace of shared ones serving the calls that give one size."""
    if not isinstance(error, dims.SizesDiffer):
        return None
    symbols = dims.symbols_of([node.shape for node in trace.inputs])
    taken = dims.unification(*error.sizes, symbols)
    if taken is not None and per_argument and isinstance(taken[1], dims.Dim):
        if taken[0].split("_")[0] == str(taken[1]).split("_")[0]:  # d0_1 and d0_0: one axis
            return None
    return taken


def _shared(name, trace):
    """Whether the unknown dimension `name` is in more than one of `trace`'s arguments."""
    return sum(name in dims.symbols_of([node.shape]) for node in trace.inputs) > 1


class _BoundMethod(functools.partial):
    """A tt.function method of an instance: called as partial calls (in C), and the
    Function's attributes read through it (`m.step.experimental_get_tracing_count()`, as
    TensorFlow's bound functions)."""

    def __getattr__(self, name):
        return getattr(self.func, name)

    def get_concrete_function(self, *args, **kwargs):
        """The instance's concrete function for these arguments (TensorFlow's
        `model.method.get_concrete_function(spec)`)."""
        return self.func.get_concrete_function(*self.args, *args, **kwargs)


def _largest_size_made_unknown(specific, generalized, traced):
    """The largest size that the call `specific` and the traces before it gave the
    dimensions `generalized` makes unknown."""
    sizes = []
    calls = [specific, *(concrete._arguments for concrete in traced.values())]
    for spec, *given in zip(*(nest.flatten(call) for call in [generalized, *calls])):
        if not isinstance(spec, TensorSpec) or is_unknown_rank(spec.shape):
            continue
        for axis, dimension in enumerate(spec.shape):
            if dimension is None:
                sizes += [g.shape[axis] for g in given if _has_size(g, axis)]
    return max(sizes, default=None)


def _has_size(value, axis):
    shape = getattr(value, "shape", None)
    return not is_unknown_rank(shape) and len(shape) > axis and isinstance(shape[axis], int)


def _has_unknown_dims(call):
    return any(
        isinstance(leaf, TensorSpec) and not is_unknown_rank(leaf.shape) and None in leaf.shape
        for leaf in nest.flatten(call)
    )


def _with_specs(call):
    """A call's (args, kwargs) with each tensor as its TensorSpec (its own sizes)."""
    flat = nest.flatten(call)
    specs = [spec_of(leaf) if is_tensor_argument(leaf) else leaf for leaf in flat]
    return nest.pack_sequence_as(call, specs)


def _scalar_integer(argument):
    """Whether `argument` is an eager integer tensor of one element (a count, a size)."""
    return (
        type(argument) is Tensor
        and argument._value is not None
        and argument.shape == ()
        and argument.dtype.is_integer
    )


class _KnownInteger(TraceType):
    """A scalar integer tensor argument of a function traced by value (`_by_value`): keyed
    by its dtype and value, and seen by the trace as that constant, of its own dtype (an
    int64 step count keeps tt.range's dtype int64)."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.key = (tensor.dtype.name, int(tensor._value))

    def __tf_tracing_type__(self, context):
        return self

    def is_subtype_of(self, other):
        return self == other

    def most_specific_common_supertype(self, others):
        return self if all(other == self for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.tensor

    def __eq__(self, other):
        return isinstance(other, _KnownInteger) and other.key == self.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"{self.key[1]} ({self.key[0]})"


def _with_integer_values(args, kwargs):
    """`args` and `kwargs` with each scalar integer tensor among them a value the trace
    holds (`_KnownInteger`)."""

    def known(a):
        return _KnownInteger(a) if _scalar_integer(a) else a

    return tuple(map(known, args)), {name: known(a) for name, a in kwargs.items()}


def _has_value(argument):
    """Whether a tensor argument has a value now (not a spec, nor a symbolic tensor of an
    enclosing trace)."""
    if isinstance(argument, TensorSpec):
        return False
    return not isinstance(argument, TensorLike) or argument._read()._value is not None


def _values_of_variables(result):
    """The result with each Variable replaced by the value it holds at the end of the
    function: a compiled function that returns a variable returns its value after the call."""
    flat = nest.flatten(result)
    if not any(isinstance(leaf, Variable) for leaf in flat):
        return result
    values = [leaf._read() if isinstance(leaf, Variable) else leaf for leaf in flat]
    return nest.pack_sequence_as(result, values)


def _tensors_of_numbers(result):
    """The result with each Python number (bool, int, float) and string made a constant
    tensor of its default dtype, as TensorFlow returns them: `return 3` gives an int32
    Tensor, `return "tag"` a string one. Made while tracing, the constant is an output of
    the graph, so a call does no more work for it. A `tt.range` of bounds known when it runs
    is a tensor too, as TensorFlow's always is, and so are sizes (`_sizes_as_tensors`)."""
    result = _sizes_as_tensors(result)
    flat = nest.flatten(result)
    if not any(isinstance(leaf, _NUMBERS + (str, bytes, SymbolicRange)) for leaf in flat):
        return result
    values = [_as_result(leaf) for leaf in flat]
    return nest.pack_sequence_as(result, values)


def _check_arguments_unchanged(name, leaves, arguments):
    """ValueError where the traced function changed a list or dict it was given (appended to
    it, replaced an item): the trace runs once, on the trace's own copy of the arguments,
    so the change would reach neither the caller nor later calls, as TensorFlow refuses."""
    after = nest.flatten(arguments)
    if len(after) != len(leaves) or any(a is not b for a, b in zip(after, leaves)):
        raise ValueError(
            f"{name}() should not modify its Python input arguments: it changed a list or "
            "dict it was given while it was traced (the change would not reach the caller, "
            "nor a later call). Modifying a copy is allowed."
        )


def _sizes_as_tensors(value):
    """`value` with each TensorShape returned (`return x.shape`) an int32 vector and each
    size (`x.shape[0]`) an int32 scalar, as TensorFlow returns them; a size known only when
    the function runs (an unknown dimension's symbol) is read then, not handed out as the
    symbol. A TensorShape with a None size is left as it is."""
    if isinstance(value, TensorShape):
        if any(d is None for d in value):
            return value
        return dims_value(value, dtypes.int32, vector=True)
    if isinstance(value, dims.Dim):
        return dims_value([value], dtypes.int32)
    if isinstance(value, dict):
        return type(value)((key, _sizes_as_tensors(item)) for key, item in value.items())
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(_sizes_as_tensors(item) for item in value))
    if type(value) in (list, tuple):
        return type(value)(_sizes_as_tensors(item) for item in value)
    return value


def _as_result(leaf):
    if isinstance(leaf, _NUMBERS + (str, bytes)):
        return constant(leaf)
    return leaf._densify() if isinstance(leaf, SymbolicRange) else leaf


_NUMBERS = (bool, int, float)


def _name_of(python_function):
    """The function's name: a partial's function's, or the class of a callable object."""
    for candidate in (python_function, getattr(python_function, "func", None)):
        name = getattr(candidate, "__name__", None)
        if isinstance(name, str):
            return name
    return type(python_function).__name__


def _user_frames(traceback):
    """`traceback` without tracer's own frames: the last frame shown is the user's line."""
    kept = []
    while traceback is not None:
        if not is_library_file(traceback.tb_frame.f_code.co_filename):
            kept.append(traceback)
        traceback = traceback.tb_next
    result = None
    for tb in reversed(kept):
        result = types.TracebackType(result, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return result


def _shape_key(args):
    """The shape and dtype of each positional argument when all are eager Tensors, else None."""
    key = []
    for a in args:
        if type(a) is not Tensor or a._value is None:
            return None
        value = a._value
        key.append(value.shape)
        key.append(value.dtype)
    return tuple(key)
