"""`tt.function`: trace a Python function once per input signature, optimize, and run it compiled.

    @tt.function
    def step(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x) * x)
        return y, tape.gradient(y, x)

The signature of a call is the structure of its arguments, the shape and dtype of each
tensor (or numpy array), the identity of each Variable, and the value of every other
argument. Each new signature is traced (Python control flow runs once, so it is unrolled),
run through the pass pipeline, and handed to a backend: "c" compiles it, "interpreter"
runs it with numpy, "auto" compiles and falls back to numpy, with one warning that says
why, when no C compiler works.
"""

import collections
import functools
import logging
import os
import time
import types
import warnings

import numpy as np

from tracer import nest
from tracer.context import numerics, state
from tracer.control.call import CALL, PackedFunction, packed_graph, unpack
from tracer.dtypes import as_dtype
from tracer.ir import format_graph, to_dot
from tracer.ir.source import is_library_file
from tracer.ops.core import apply
from tracer.passes.pipeline import STAGE_NAMES, TRACED, run_pipeline
from tracer.signature import (
    argument_names,
    check_signature,
    difference,
    is_tensor_argument,
    signature,
)
from tracer.tensor import Tensor, TensorLike
from tracer.tracing import Trace, tracing
from tracer.variable import Variable

log = logging.getLogger("tracer.function")

BACKENDS = ("auto", "c", "interpreter")
GRAD = "grad"  # the gradient graphs tape.gradient built while tracing
IR_STAGES = (TRACED, GRAD, *STAGE_NAMES[1:])  # what ConcreteFunction.ir can print


class TensorSpec:
    """The shape and dtype of a tensor argument, for `input_signature`."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype="float32", name=None):
        if any(d is None for d in shape):
            raise ValueError("TensorSpec: tracer traces static shapes; give every dimension")
        self.shape = tuple(int(d) for d in shape)
        self.dtype = as_dtype(dtype)
        self.name = name

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=tt.{self.dtype.name})"


CacheInfo = collections.namedtuple("CacheInfo", "hits misses entries compile_seconds")


class RetraceLimitError(RuntimeError):
    """A tt.function was asked to trace more often than its max_retraces allows."""


def function(
    func=None,
    input_signature=None,
    backend="auto",
    max_retraces=None,
    jit_compile=None,
    reduce_retracing=False,
):
    """Decorate `func` so that calls run a traced, optimized and compiled version of it.

    `max_retraces=N` makes the (N+1)-th retrace raise RetraceLimitError, listing what changed
    each time: a guard against signatures that vary by accident (a Python float argument
    that changes every step, say). `jit_compile`, as in TensorFlow: True insists on
    compiled code (backend "c": no fallback to the interpreter), False runs the graph
    without compiling it (backend "interpreter"), None leaves `backend` to decide.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    backend = _backend_for(jit_compile, backend)
    if reduce_retracing:
        raise ValueError(
            "reduce_retracing=True is not supported yet: tracer traces static shapes; give "
            "each shape you call with (its compiled code is cached per shape)"
        )
    if func is None:
        return functools.partial(
            function, input_signature=input_signature, backend=backend, max_retraces=max_retraces
        )
    return Function(func, input_signature, backend, max_retraces)


def _backend_for(jit_compile, backend):
    if jit_compile is None:
        return backend
    wanted = "c" if jit_compile else "interpreter"
    if backend not in ("auto", wanted):
        raise ValueError(f"jit_compile={jit_compile} asks for backend {wanted!r}, not {backend!r}")
    return wanted


class Function:
    def __init__(self, python_function, input_signature, backend, max_retraces=None):
        functools.update_wrapper(self, python_function)
        self._python_function = python_function
        self._input_signature = None if input_signature is None else list(input_signature)
        self._backend = backend
        self._max_retraces = max_retraces
        self._concrete = {}  # signature -> ConcreteFunction
        self._by_shape = {}  # (shape, dtype) of each positional tensor -> ConcreteFunction
        self._tracing_count = 0
        self._hits = 0
        self._compile_seconds = 0.0
        self._retrace_reasons = []

    def __call__(self, *args, **kwargs):
        # NOTE: the fast path, for eager tensors passed by position: the key is their shapes
        # and dtypes, found without walking the arguments' structure.
        if not kwargs and self._input_signature is None:
            key = _shape_key(args)
            if key is not None:
                concrete = self._by_shape.get(key)
                if concrete is not None:
                    self._hits += 1
                else:
                    concrete = self._by_shape[key] = self.get_concrete_function(*args)
                return concrete._call_with_tensors(args)
        return self.get_concrete_function(*args, **kwargs)._call(_leaves(args, kwargs))

    def __get__(self, instance, owner):
        return self if instance is None else functools.partial(self, instance)

    def get_concrete_function(self, *args, **kwargs):
        """The traced function for these arguments (traced now if this signature is new)."""
        if self._input_signature is not None:
            check_signature(self._input_signature, args)
        key = signature(args, kwargs)
        concrete = self._concrete.get(key)
        if concrete is not None:
            self._hits += 1
            return concrete
        if self._concrete:
            reason = difference(key, self._concrete)
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
        concrete = self._trace(args, kwargs)
        self._compile_seconds += time.perf_counter() - start
        self._concrete[key] = concrete
        return concrete

    def experimental_get_tracing_count(self):
        return self._tracing_count

    def cache_info(self):
        """hits and misses of the trace cache, its entries, and the seconds spent tracing,
        optimizing and compiling (a module found in the disk cache costs no compile time)."""
        return CacheInfo(
            self._hits, self._tracing_count, len(self._concrete), round(self._compile_seconds, 6)
        )

    def _trace(self, args, kwargs):
        self._tracing_count += 1
        trace = Trace()
        names = argument_names(self._python_function, args, kwargs)
        flat = nest.flatten((args, kwargs))
        symbolic = [
            trace.input(name, leaf.shape, leaf.dtype) if is_tensor_argument(leaf) else leaf
            for name, leaf in zip(names, flat)
        ]
        symbolic_args, symbolic_kwargs = nest.pack_sequence_as((args, kwargs), symbolic)
        try:
            with tracing(trace):
                result = self._python_function(*symbolic_args, **symbolic_kwargs)
        except Exception as error:
            error.add_note(f"(raised while tt.function traced {self.__name__})")
            raise error.with_traceback(_user_frames(error.__traceback__)) from None
        return ConcreteFunction(self.__name__, trace, result, self._backend)


class ConcreteFunction:
    """One traced signature: its graphs at every stage and the executable that runs it."""

    def __init__(self, name, trace, result, backend):
        self.name = name
        self._structure = result
        flat = nest.flatten(result)
        self._tensor_positions = [k for k, leaf in enumerate(flat) if isinstance(leaf, TensorLike)]
        self._returns_one_tensor = isinstance(result, TensorLike) and not isinstance(
            result, Variable
        )
        self._flat_result = flat
        tensors = [
            flat[k]._read() if isinstance(flat[k], Variable) else flat[k]
            for k in self._tensor_positions
        ]
        self._variables = list(trace.variables.values())
        self._assigned = list(trace.assigned)
        self._gradient_graphs = list(trace.gradient_graphs)
        self.stages = run_pipeline(trace.graph(tensors))
        self._backend = backend
        self._packed = None
        self._executable = _executable(self.stages.final, backend, name)
        self._run_arrays = self._executable.run
        # the hot path applies when the function returns one tensor and assigns no variable
        self._returns_one_value = self._returns_one_tensor and not self._assigned
        if os.environ.get("TRACER_DUMP"):
            self._dump(os.environ["TRACER_DUMP"])

    def _dump(self, directory):
        """Write every stage's IR, and the C source, to `directory` (TRACER_DUMP)."""
        os.makedirs(directory, exist_ok=True)
        stem = os.path.join(directory, f"{_file_safe(self.name)}.{id(self):x}")
        for stage in IR_STAGES:
            with open(f"{stem}.{stage}.ir", "w") as handle:
                handle.write(self.ir(stage) + "\n")
        source = getattr(self._executable, "c_source", None)
        if source is not None:
            with open(f"{stem}.c", "w") as handle:
                handle.write(source)

    def ir(self, stage=None):
        """The graph at `stage` (one of IR_STAGES; the last by default) as text; 'grad' lists
        the gradient graphs tape.gradient built while tracing."""
        if stage == GRAD:
            return (
                "\n\n".join(format_graph(g) for g in self._gradient_graphs)
                or "# no tape.gradient call"
            )
        return format_graph(self._stage(stage))

    def graphviz(self, stage=None):
        return to_dot(self._stage(stage), name=self.name)

    def _stage(self, stage):
        if stage is None:
            return self.stages.final
        if stage not in self.stages:
            raise ValueError(f"unknown stage {stage!r}; the stages are {list(IR_STAGES)}")
        return self.stages[stage]

    def c_source(self):
        source = getattr(self._executable, "c_source", None)
        if source is None:
            raise RuntimeError(f"{self.name} runs on the numpy interpreter: there is no C source")
        return source

    @property
    def backend(self):
        return self._executable.backend

    def _call_with_tensors(self, tensors):
        """`_call` for positional eager tensors: the hot path of a compiled function."""
        if self._returns_one_value and not (
            state.tapes or state.trace is not None or numerics.enabled
        ):
            arrays = [t._value for t in tensors]
            if self._variables:
                arrays += [v._value for v in self._variables]
            return Tensor(self._run_arrays(arrays)[0])
        return self._call(tensors)

    def _call(self, leaves):
        tensors = [leaf for leaf in leaves if is_tensor_argument(leaf)]
        if state.trace is not None or numerics.enabled:
            results = self._run_through_ops(tensors)
        elif state.tapes:
            results = self._run_as_one_op(tensors)
        else:
            arrays = [t._value if type(t) is Tensor else np.asarray(t) for t in tensors]
            arrays += [v._value for v in self._variables]
            results = [Tensor(a) for a in self._run_arrays(arrays)]
            if self._returns_one_tensor and not self._assigned:
                return results[0]
        outputs, updates = (
            results[: len(self._tensor_positions)],
            results[len(self._tensor_positions) :],
        )
        for variable, value in zip(self._assigned, updates):
            if state.trace is not None:
                state.trace.assign(variable, value)
            else:
                variable._value = np.array(value.numpy())
        flat = list(self._flat_result)
        for position, value in zip(self._tensor_positions, outputs):
            flat[position] = value
        return nest.pack_sequence_as(self._structure, flat)

    def _run_as_one_op(self, tensors):
        """Under a recording tape: one `call` op per output dtype, which the tape records as
        one node whose backward is the function's compiled vector-Jacobian product."""
        inputs = [t if isinstance(t, TensorLike) else Tensor(np.asarray(t)) for t in tensors]
        inputs += [v._read() for v in self._variables]
        results = [None] * len(self.stages.of_primitives.outputs)
        for function, positions in self._packed_functions():
            packed = apply(CALL, tuple(inputs), {"function": function})
            shapes = [self.stages.of_primitives.outputs[p].shape for p in positions]
            for position, value in zip(positions, unpack(packed, shapes)):
                results[position] = value
        return results

    def _packed_functions(self):
        """[(PackedFunction, output positions)], one per output dtype (made once)."""
        if self._packed is None:
            graph = self.stages.of_primitives
            groups = {}
            for position, out in enumerate(graph.outputs):
                groups.setdefault(out.dtype, []).append(position)
            compile_graph = functools.partial(_compile_optimized, backend=self._backend)
            self._packed = [
                (
                    PackedFunction(
                        packed_graph(graph, [graph.outputs[p] for p in positions]),
                        f"{self.name}_{dtype.name}",
                        compile_graph,
                    ),
                    positions,
                )
                for dtype, positions in groups.items()
            ]
        return self._packed

    def _run_through_ops(self, tensors):
        """Inside another trace, inline the traced graph op by op, so the outer function
        optimizes across the call; with check_numerics on, run it op by op on the
        interpreter, so that the first op to make a NaN or Inf can be named."""
        from tracer.backprop import execute_graph

        inputs = [t if isinstance(t, TensorLike) else Tensor(np.asarray(t)) for t in tensors]
        inputs += [v._read() for v in self._variables]
        return execute_graph(self.stages.of_primitives, inputs)


_fallback_warned = False


def _compile_optimized(graph, name, backend):
    return _executable(run_pipeline(graph).final, backend, name)


def _executable(graph, backend, name):
    """Compile `graph` for `backend`; 'auto' falls back to the interpreter, with one warning,
    when no C compiler works."""
    global _fallback_warned
    from runtime.executable import InterpretedGraph

    if backend == "interpreter":
        return InterpretedGraph(graph)
    from codegen.build import CompilerUnavailable
    from codegen.compile import compile_graph

    try:
        return compile_graph(graph, name)
    except CompilerUnavailable as error:
        if backend == "c":
            raise
        if not _fallback_warned:
            _fallback_warned = True
            warnings.warn(
                f"tracer: {error}; tt.function runs on the numpy interpreter instead", stacklevel=4
            )
        return InterpretedGraph(graph)


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


def _file_safe(name):
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64] or "function"


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


def _leaves(args, kwargs):
    return nest.flatten((args, kwargs))
