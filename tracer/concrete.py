"""ConcreteFunction: one traced signature of a `tt.function`, its graphs and how it runs.

It runs one of three ways. Eagerly, with no tape recording and no trace: the executable
(compiled C, or the numpy interpreter) runs on the arguments' arrays and the variables',
writes the variables it assigns (in place, for the C backend), and the tt.print calls print.
Under a recording tape: as one `call` op per output dtype, whose backward is the compiled
vector-Jacobian product. Inside another trace (or with check_numerics on): its graph runs op
by op, so the outer function optimizes across it.
"""

import dataclasses
import functools
import inspect
import os

import numpy as np

from runtime import fast_call
from tracer import nest, printing
from tracer.context import numerics, state
from tracer.control.call import CALL, PackedFunction, packed_graph, unpack
from tracer.errors import InvalidArgumentError, RunsAsPython
from tracer.executables import (
    Tiered,
    backend_for,
    compile_optimized,
    executable,
    stored_executable,
    traced_plan_key,
)
from tracer.ir import all_nodes, dims, format_graph, rewrite, to_dot
from tracer.ops.core import apply, execute_graph, new_tensor
from tracer.passes.pipeline import STAGE_NAMES, TRACED, run_pipeline
from tracer.profiler import state as profiling
from tracer.py_function import RESULT
from tracer.signature import (
    TensorSpec,
    as_argument_array,
    is_tensor_argument,
    spec_of,
    type_annotation,
    type_text,
    unknown_sizes,
)
from tracer.tensor import Tensor, TensorLike, convert_to_tensor
from tracer.tensor_shape import TensorShape, is_unknown_rank
from tracer.variable import Variable

GRAD = "grad"  # the gradient graphs tape.gradient built while tracing
IR_STAGES = (TRACED, GRAD, *STAGE_NAMES[1:])  # what ConcreteFunction.ir can print


class ConcreteFunction:
    """One traced signature: its graphs at every stage and the executable that runs it.

    Called with the arguments it was traced for (`f.get_concrete_function(x)(x)`), or with
    just its tensor arguments, in order.
    """

    def __init__(self, name, trace, result, backend, arguments, named, omittable=0):
        self.name = name
        self._function = None  # a weakref to the tt.function that traced it, which sets it
        # the Python function's parameters (signature.Binding), which a call's keywords are
        # bound to as the traced call's were; set with `_function`
        self._binding = None
        self._arguments = arguments  # the traced call's (args, kwargs), tensors as specs
        # how many of its last positional arguments are defaults that a call may leave out
        # (`f(x)` of `def f(x, y=2)`, traced as `f(x, 2)`): the entry in C takes calls without
        self._omittable = omittable
        self._named = named  # [(parameter name, value)] of that call, for printing
        self._structure = result
        flat = nest.flatten(result)
        self._tensor_positions = [k for k, leaf in enumerate(flat) if isinstance(leaf, TensorLike)]
        self._flat_result = flat
        outputs = [flat[k] for k in self._tensor_positions]
        self._returns_one_tensor = isinstance(result, TensorLike)
        self._returns_tensors_in_a_tuple = type(result) is tuple and all(
            isinstance(item, TensorLike) for item in result
        )
        self._variables = list(trace.variables.values())
        self._requirements = list(trace.requirements)  # (Trace.require)
        self._other_than_zero = list(trace.other_than_zero)  # (Trace.require_other_than_zero)
        self._equal_sizes = dict(trace.equal_sizes)  # (Trace.equal_sizes)
        self._assigned = list(trace.assigned)
        self._gradient_graphs = list(trace.gradient_graphs)
        n_inputs, n_outputs = len(trace.inputs), len(outputs)
        # each assigned variable's output -> its variable's input, which the module updates
        self._updates = {
            n_outputs + j: n_inputs + _position(self._variables, v)
            for j, v in enumerate(self._assigned)
        }
        self._traced = trace.graph(outputs)
        self._numbers_taken = _numbers_taken(self._equal_sizes, arguments, self._traced.inputs)
        # a tt.py_function with results: a tape recording a call runs the Python function
        self._calls_python = any(n.op == RESULT.name for n in all_nodes(self._traced))
        self._stages = self._unknown = None  # made when first asked for (`stages`)
        self._backend = backend_for(self._traced, backend)
        self._packed = {}  # sizes of the unknown dimensions -> [(PackedFunction, positions)]
        self._specialized = {}  # sizes of the unknown dimensions -> the graph with them
        # a plan stored by an earlier process for this very graph skips the passes
        plan_key = traced_plan_key(self._traced, self._backend, name, self._updates)
        self._executable = (plan_key and stored_executable(plan_key, self._backend)) or executable(
            self.stages.final, self._backend, name, self._updates, self._compiled, plan_key
        )
        self._run_arrays = self._executable.run
        # the hot path applies when the function returns one tensor and has no side effect
        self._returns_one_value = self._returns_one_tensor and not self._assigned
        self._fast = self._fast_entry(self._executable)  # that path in C, or None
        self._fast_given = False  # the entry for calls that give the omittable defaults
        if os.environ.get("TRACER_DUMP"):
            self._dump(os.environ["TRACER_DUMP"])
        profiling.register(self)  # its calls go through a profile while one runs

    @property
    def stages(self):
        """The traced graph and each pass's result (`tracer.passes.pipeline.Stages`); run
        when first asked for where the module came from a stored plan."""
        if self._stages is None:
            self._stages = run_pipeline(self._traced, target=self._backend.target)
        return self._stages

    @property
    def _symbols(self):
        """The unknown dimensions of the graph (run-time sizes)."""
        if self._unknown is None:
            self._unknown = rewrite.symbols(self.stages.of_primitives)
        return self._unknown

    def _compiled(self, built):
        """The tiered backend's module is built: later calls run it."""
        self._fast = self._fast_entry(built)
        self._fast_given = False  # (made again when asked for)
        if profiling.active is None:
            self._run_arrays = built.run

    def _profile_with(self, profile):
        """Run the calls through `profile` (a running tt.profiler Profile: the module built
        with probes), or on the function's own executable again (None)."""
        self._run_arrays = self._executable.run if profile is None else profile.runner(self)

    def fast_for(self, n_arguments):
        """The entry in C for calls by position of `n_arguments` arguments: `_fast`, which
        leaves out the defaults the trace filled in, or one made (once) for the calls that
        give them (`f(x, 2)` of `def f(x, y=2)`)."""
        if not self._omittable or n_arguments != len(self._arguments[0]):
            return self._fast
        if self._fast_given is False:
            self._fast_given = self._fast and self._fast_entry(self._executable, omitted=0)
        return self._fast_given

    def _fast_entry(self, built, omitted=None):
        """The hot path in C (runtime/fast_call.py) for a compiled module, where it applies:
        no tape, trace, forward accumulator or numerics check active (what `_call` runs
        otherwise), a result of one tensor or a flat list or tuple of them."""
        built = _in_use(built)  # (calls go through `Tiered.run` until its last is built)
        if built is None:
            return None
        omitted = self._omittable if omitted is None else omitted
        pack, pattern = self._pack(), self._pattern(omitted)
        if pack is None or pattern is None or built.backend != "c":
            return None
        guards = [
            (state, "tapes"),
            (state, "trace"),
            (state, "accumulators"),
            (numerics, "enabled"),
            (profiling, "active"),
        ]
        n_outputs = len(self._tensor_positions)
        names = ("_value", "_shared")
        return fast_call.entry(
            built, Tensor, pattern, self._variables, names, guards, new_tensor, n_outputs, pack
        )

    def _pattern(self, omitted=0):
        """What each positional argument of a call must be for the entry in C: `Tensor` for
        a tensor, else the value it was traced with (a number, a string, an object such as
        the `self` of a method: the trace key holds it by value, so the entry compares it the
        same way); None when the traced call had keyword arguments, or a structure (a list, a
        dict, a dataclass) or a Variable among its arguments. The last `omitted` arguments (defaults the
        trace filled in) are left out of it."""
        args, kwargs = self._arguments
        if kwargs:
            return None
        pattern = []
        for value in args[: len(args) - omitted]:
            if isinstance(value, TensorSpec):
                pattern.append(Tensor)
            elif isinstance(value, (list, tuple, dict, Variable, TensorLike)):
                return None
            elif dataclasses.is_dataclass(value):  # keyed by its fields, not by `==`
                return None
            else:
                pattern.append(value)
        return pattern

    def _pack(self):
        """How the result is built from its tensors: "one", "list" or "tuple"; None for any
        other structure."""
        if self._returns_one_tensor:
            return "one"
        items = self._structure
        if type(items) in (list, tuple) and items and all(isinstance(t, TensorLike) for t in items):
            return type(items).__name__
        return None

    # --- calling ------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        return self._call(self._tensor_arguments(args, kwargs))

    def _tensor_arguments(self, args, kwargs):
        """The tensor leaves of a call: the traced call's structure, or only its tensors.
        Keyword arguments are bound to the function's parameters as its trace's were
        (`c(y=y, x=x)` of `def f(x, y)`: x first, not in the keywords' order)."""
        if kwargs and self._binding is not None:
            args, kwargs = self._binding.canonical(args, kwargs)
        traced = nest.flatten(self._arguments)
        expected = [leaf for leaf in traced if is_tensor_argument(leaf)]
        flat = nest.flatten((args, kwargs))
        if not kwargs and len(args) == len(expected) and len(flat) == len(expected):
            given = list(args)
        elif len(flat) == len(traced):
            for k, (old, new) in enumerate(zip(traced, flat)):
                if not is_tensor_argument(old) and (is_tensor_argument(new) or old != new):
                    raise TypeError(
                        f"{self.name}: argument {k} is {new!r}; this concrete function was "
                        f"traced for {old!r}"
                    )
            given = [leaf for leaf in flat if is_tensor_argument(leaf)]
        else:
            raise TypeError(
                f"{self.name}: this concrete function takes {len(expected)} tensor arguments "
                f"(or the {len(traced)} arguments it was traced with), not {len(flat)}"
            )
        for k, (spec, value) in enumerate(zip(expected, given)):
            spec = spec_of(spec)
            if isinstance(value, (bool, int, float, complex, list, tuple)):
                # a Python value, converted to the spec's dtype, as TensorFlow's call takes it
                value = given[k] = _python_value_as(value, spec, self.name, k)
            if not is_tensor_argument(value) or not _fits(np.shape(value), spec.shape):
                raise TypeError(
                    f"{self.name}: tensor argument {k} is {_describe(value)}; this concrete "
                    f"function was traced for {spec!r}"
                )
            if isinstance(value, TensorLike) and value.dtype != spec.dtype:
                # NOTE: TensorFlow's error and words; numpy values and lists are converted
                raise InvalidArgumentError(
                    None,
                    None,
                    f"cannot compute {self.name} as input #{k}(zero-based) was expected to be "
                    f"a {spec.dtype.name} tensor but is a {value.dtype.name} tensor",
                )
        return given

    def sizes_in(self, general, key):
        """{symbol: size} of this trace's unknown dimensions (it was traced for the key
        `general`) in a call of key `key`; None where the call gives a symbol that every
        argument shares two sizes."""
        per_argument = any(
            isinstance(d, dims.Dim) and "_" in str(d)
            for node in self._traced.inputs
            for d in node.shape
        ) or any("_" in name for name in self._equal_sizes)  # (d1_0 traced as a number)
        return unknown_sizes(general, key, per_argument)

    def admits(self, sizes):
        """Whether a call whose unknown dimensions have `sizes` ({symbol: size}) gives every
        polynomial this trace requires a value of at least 0 (sizes given as None, by
        TensorSpecs rather than a call, are taken to do)."""
        if sizes is None:
            return False
        for name, other in self._equal_sizes.items():  # a symbol traced as another, or a number
            size = sizes.get(str(other)) if isinstance(other, dims.Dim) else other
            if None not in (sizes.get(name), size) and sizes[name] != size:
                return False
        if None in sizes.values():
            return True
        return all(size.evaluate(sizes) >= 0 for size in self._requirements) and all(
            size.evaluate(sizes) != 0 for size in self._other_than_zero
        )

    def _check_sizes(self, tensors):
        """Raise where the tensors' sizes are ones this trace cannot serve (its unknown
        dimensions do not meet its requirements: `x[1:]` of an empty x, or `x.shape[0] == 1`
        answered as false)."""
        shapes = [node.shape for node in self._traced.inputs]
        given = [np.shape(t) for t in tensors]
        if self._numbers_taken:
            self._check_numbers_taken(given)
        differing = dims.differing_sizes(shapes, given)
        if differing:
            listed = ", ".join(f"{name} as {a} and {b}" for name, (a, b) in differing.items())
            raise ValueError(
                f"{self.name}: this concrete function was traced for sizes that are equal "
                f"(an op needs them so); this call gives {listed}. Call the tt.function "
                "itself, which traces such a call with its own sizes"
            )
        sizes = dims.sizes_given(shapes, given)
        needed = [size.evaluate(sizes) for size in self._requirements]
        nonzero = [size.evaluate(sizes) for size in self._other_than_zero]
        if state.trace is not None:  # in an enclosing trace of unknown sizes: its calls need them
            for size in needed:
                if isinstance(size, dims.Dim):
                    state.trace.require(size)
            for size in nonzero:
                if isinstance(size, dims.Dim):
                    state.trace.require_other_than_zero(size)
        unmet = [
            f"{size} >= 0"
            for size, value in zip(self._requirements, needed)
            if not isinstance(value, dims.Dim) and value < 0
        ]
        unmet += [
            f"{size} != 0"
            for size, value in zip(self._other_than_zero, nonzero)
            if not isinstance(value, dims.Dim) and value == 0
        ]
        if unmet:
            given = ", ".join(f"{name} = {value}" for name, value in sorted(sizes.items()))
            raise ValueError(
                f"{self.name}: this concrete function was traced with sizes unknown, for calls "
                f"where {', '.join(unmet)} (a slice such as x[1:] needs the first kind, a "
                f"comparison of a size answered as false the second); this call has {given}. "
                "Call the tt.function itself, which traces such a call with its own sizes"
            )

    def _check_numbers_taken(self, given):
        """Raise where the `given` shapes differ from the numbers this trace took unknown
        dimensions for (`Trace.equal_sizes`: `x @ w` of an x of (None, None) and a w of
        (3, 4) traced x's d1 as 3); inside an enclosing trace, its unknown size is needed
        equal to the number (dims.SizesDiffer, which that trace may meet in turn)."""
        for k, axis, number in self._numbers_taken:
            size = given[k][axis]
            if not dims.same(number, size):
                message = (
                    f"{self.name}: this concrete function was traced for calls whose tensor "
                    f"argument {k} has {number} on axis {axis} (an op needs that size); this "
                    f"call gives {size}. Call the tt.function itself, which traces such a call "
                    "with its own sizes"
                )
                dims.check_same(number, size, lambda message=message: message)

    def _call_with_tensors(self, tensors):
        """`_call` for positional eager tensors: the hot path of a compiled function."""
        if self._returns_one_value and not (  # (written out: the hot path)
            state.tapes or state.trace is not None or numerics.enabled or state.accumulators
        ):
            if self._requirements or self._other_than_zero or self._equal_sizes:
                self._check_sizes(tensors)
            arrays = [t._value for t in tensors]
            if self._variables:
                arrays += [v._value for v in self._variables]
            return Tensor(self._run_arrays(arrays)[0])
        return self._call(tensors)

    def call_on_arrays(self, arrays):
        """The result of a call on the numpy `arrays` of its tensor arguments, in order, with
        numpy arrays for its tensors; None where a call needs more than running the
        executable (a tape, a trace, an accumulator or a numerics check watches it, or it
        assigns variables): the caller then calls the function itself. tf.data's map and
        filter call their function so on each element, whose arrays turned into tensors
        and back cost more than the call."""
        if self._assigned or _watched():
            return None
        if self._requirements or self._other_than_zero or self._equal_sizes:
            self._check_sizes(arrays)
        return self._packed_results(
            self._run_arrays([*arrays, *(v._value for v in self._variables)])
        )

    def call_on_batch(self, arrays, count):
        """`call_on_arrays` of each of `count` calls at once, its results stacked along a new
        leading axis: `arrays` are the calls' tensor arguments, each stacked so. The compiled
        module runs once per call, from one call into C (runtime/fast_call.py's `run_each`),
        so each call's results are what `call_on_arrays` gives. None where `call_on_arrays`
        would be, or where the module cannot be run so (the interpreter, sizes known at run
        time, Python callbacks, a profile watching): the caller then calls for each."""
        built = self._module_for_batches()
        if built is None or _watched() or profiling.active:
            return None
        variables = [v._value for v in self._variables]
        results = fast_call.run_each(built, [*arrays, *variables], len(arrays), count)
        if results is None:
            return None
        return self._packed_results(results)

    @property
    def runs_on_batches(self):
        """Whether `call_on_batch` can run the function's module on a batch (it may still
        give None where a tape, a trace, ... watches the call)."""
        return self._module_for_batches() is not None

    def _module_for_batches(self):
        """The compiled module in use now, where `call_on_batch` can run it: the function
        assigns no variable, needs no size checked, and the module `fast_call.runs_each`."""
        if self._assigned or self._requirements or self._other_than_zero or self._equal_sizes:
            return None
        if not _of_tensors(self._structure):
            return None
        built = _in_use(self._executable)
        if built is None or built.backend != "c" or not fast_call.runs_each(built):
            return None
        return built

    def _packed_results(self, results):
        """The structure of the function's result around the arrays `results`."""
        if self._returns_one_tensor:
            return results[0]
        if self._returns_tensors_in_a_tuple:
            return tuple(results)
        flat = list(self._flat_result)
        for position, value in zip(self._tensor_positions, results):
            flat[position] = value
        return nest.pack_sequence_as(self._structure, flat)

    def _call(self, tensors):
        """Run on the tensor arguments (Tensors, numpy arrays and scalars)."""
        if self._requirements or self._other_than_zero or self._equal_sizes:
            self._check_sizes(tensors)
        if self._calls_python and state.trace is None and (state.tapes or state.accumulators):
            raise RunsAsPython(
                "differentiates a tt.py_function with results: the tape records the ops "
                "`func` runs, as Python (call the tt.function itself, not a concrete one)"
            )
        if state.trace is not None or numerics.enabled or state.accumulators:
            results = self._run_through_ops(tensors)
        elif state.tapes:
            results = self._run_as_one_op(tensors)
        else:
            results = [Tensor(a) for a in self._run_eagerly(tensors)]
        outputs = results[: len(self._tensor_positions)]
        finals = results[len(outputs) : len(outputs) + len(self._assigned)]
        if state.trace is not None:
            for variable, value in zip(self._assigned, finals):
                state.trace.assign(variable, value)
        elif state.tapes:
            for variable, value in zip(self._assigned, finals):
                variable._value, variable._shared = np.array(value.numpy()), False
        if self._returns_one_tensor:
            return outputs[0]
        flat = list(self._flat_result)
        for position, value in zip(self._tensor_positions, outputs):
            flat[position] = value
        return nest.pack_sequence_as(self._structure, flat)

    def _run_eagerly(self, tensors):
        """The executable on the arguments' and variables' arrays; the assigned variables take
        their new values (the compiled module writes them in place)."""
        arrays = [t._value if type(t) is Tensor else as_argument_array(t) for t in tensors]
        arrays += [v._value for v in self._variables]
        for position in self._updates.values():
            arrays[position] = _exclusive(self._variables[position - len(tensors)])
        results = self._run_arrays(arrays)
        first = len(self._tensor_positions)
        for variable, value in zip(self._assigned, results[first:]):
            variable._value = value
        return results

    def _run_as_one_op(self, tensors):
        """Under a recording tape: one `call` op per output dtype, which the tape records as
        one node whose backward is the function's compiled vector-Jacobian product."""
        inputs = [t if isinstance(t, TensorLike) else Tensor(as_argument_array(t)) for t in tensors]
        inputs += [v._read() for v in self._variables]
        graph, sizes = self._of_primitives(inputs)
        results = [None] * len(graph.outputs)
        for function, positions in self._packed_functions(graph, sizes):
            packed = apply(CALL, tuple(inputs), {"function": function})
            shapes = [graph.outputs[p].shape for p in positions]
            for position, value in zip(positions, unpack(packed, shapes)):
                results[position] = value
        return results

    def _of_primitives(self, inputs):
        """The graph of primitives for `inputs` (with the sizes of its unknown dimensions put
        in), and those sizes."""
        if not self._symbols:
            return self.stages.of_primitives, ()
        graph = self.stages.of_primitives
        env = dims.sizes_given([n.shape for n in graph.inputs], [t.shape for t in inputs])
        sizes = tuple(env[name] for name in self._symbols)
        if sizes not in self._specialized:
            self._specialized[sizes] = rewrite.specialize(graph, env)
        return self._specialized[sizes], sizes

    def _packed_functions(self, graph, sizes):
        """[(PackedFunction, output positions)], one per output dtype (made once per sizes).
        The prints (tt.print) are the function's that computes the print stream's new value:
        the others compute their values without printing them again."""
        if sizes not in self._packed:
            groups = {}
            for position, out in enumerate(graph.outputs):
                groups.setdefault(out.dtype, []).append(position)
            stream = next(  # the print stream's output position, if the function prints
                (
                    len(self._tensor_positions) + k
                    for k, v in enumerate(self._assigned)
                    if v is printing.STREAM
                ),
                None,
            )
            compile_graph = functools.partial(compile_optimized, backend=self._backend)
            self._packed[sizes] = []
            for dtype, positions in groups.items():
                outputs = [graph.outputs[p] for p in positions]
                if stream not in positions:
                    outputs = rewrite.bypassed(
                        rewrite.with_outputs(graph.inputs, outputs), "print"
                    ).outputs
                function = PackedFunction(
                    packed_graph(graph, outputs), f"{self.name}_{dtype.name}", compile_graph
                )
                self._packed[sizes].append((function, positions))
        return self._packed[sizes]

    def _run_through_ops(self, tensors):
        """Inside another trace, inline the traced graph op by op, so the outer function
        optimizes across the call; with check_numerics on, run it op by op on the
        interpreter, so that the first op to make a NaN or Inf can be named."""
        inputs = [t if isinstance(t, TensorLike) else Tensor(as_argument_array(t)) for t in tensors]
        inputs += [v._read() for v in self._variables]
        results = execute_graph(self._of_primitives(inputs)[0], inputs)
        if state.trace is None:  # check_numerics, eagerly: the variables take their values
            first = len(self._tensor_positions)
            for variable, value in zip(self._assigned, results[first:]):
                variable._value, variable._shared = np.array(value.numpy()), False
        return results

    # --- reading ------------------------------------------------------------------------

    @property
    def structured_outputs(self):
        """The results as the traced function returned them, each tensor the symbolic
        tensor of the trace (TensorFlow's graph tensors; a Python number returned is a
        constant tensor, a variable its value)."""
        return self._structure

    @property
    def outputs(self):
        """The tensors of `structured_outputs`, flattened into a list, as TensorFlow's."""
        return [self._flat_result[k] for k in self._tensor_positions]

    def output_spec(self):
        """The results' structure with a TensorSpec for each tensor (None for a dimension
        known only when the function runs) and the other values as they are."""
        outputs = iter(self._traced.outputs[: len(self._tensor_positions)])
        leaves = []
        for leaf in self._flat_result:
            if isinstance(leaf, TensorLike):
                output = next(outputs)
                leaf = TensorSpec(_shown_shape(output.shape), output.dtype)
            leaves.append(leaf)
        return nest.pack_sequence_as(self._structure, leaves)

    @property
    def structured_input_signature(self):
        """The traced call's (args, kwargs), each tensor argument its TensorSpec (None for a
        dimension known only when the function runs) and the other values as given, as
        TensorFlow's."""
        leaves = [
            TensorSpec(_shown_shape(leaf.shape), leaf.dtype, leaf.name)
            if isinstance(leaf, TensorSpec)
            else leaf
            for leaf in nest.flatten(self._arguments)
        ]
        return nest.pack_sequence_as(self._arguments, leaves)

    @property
    def output_shapes(self):
        """The TensorShape of each tensor of `structured_outputs`, in its structure."""
        return nest.map_structure(
            lambda spec: TensorShape(spec.shape) if isinstance(spec, TensorSpec) else spec,
            self.output_spec(),
        )

    @property
    def output_dtypes(self):
        """The dtype of each tensor of `structured_outputs`, in its structure."""
        return nest.map_structure(
            lambda spec: spec.dtype if isinstance(spec, TensorSpec) else spec, self.output_spec()
        )

    @property
    def variables(self):
        """The variables the traced function reads or assigns, as TensorFlow's (a tuple)."""
        return tuple(self._variables)

    @property
    def trainable_variables(self):
        return tuple(v for v in self._variables if v.trainable)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature(False)} at 0x{id(self):X}>"

    @property
    def function_type(self):
        """The traced parameters and the results as an `inspect.Signature` annotated with
        their specs, as TensorFlow's FunctionType (which is one): printed
        `(x: TensorSpec(...)) -> TensorSpec(...)`."""
        aliases = {}
        kinds = inspect.Parameter
        parameters = [
            inspect.Parameter(
                name, getattr(kinds, kind), annotation=type_annotation(value, aliases)
            )
            for name, kind, value in self._parameters()
        ]
        output = type_annotation(self.output_spec(), aliases)
        return inspect.Signature(parameters, return_annotation=output)

    @property
    def inference_fn(self):
        """The function called with its tensor arguments alone, in order (TensorFlow's
        AtomicFunction, which its guides call directly)."""
        return AtomicFunction(self)

    def pretty_printed_signature(self, verbose=True):
        """The traced arguments, the results and the captured variables, as TensorFlow
        prints them (its `tf.` dtypes are tracer's `tt.`):

            Input Parameters:
              x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=tt.int32, name=None)
            Output Type:
              TensorSpec(shape=(None,), dtype=tt.int32, name=None)
            Captures:
              None

        With `verbose=False`, one line: `(x: TensorSpec(...)) -> TensorSpec(...)`.
        """
        return signature_text(self._parameters(), self.output_spec(), self._variables, verbose)

    def _parameters(self):
        function = self._function() if self._function is not None else None
        python_function = None if function is None else function.python_function
        return call_parameters(python_function, self._arguments, self._named)

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

    def report(self, path, profile=None):
        """Write the one-page compile report of this signature to `path` (an HTML file: see
        `tracer.report.write_report`, docs/report.md), with the times of `profile` (a
        tt.profiler Profile) where given. Returns `path`."""
        from tracer.report import write_report  # (jinja2 and the page: only when asked)

        return write_report(self, path, profile=profile)

    def c_source(self):
        """The C of the module that runs this signature. A kernel that a module loaded
        before it in the process compiled is a call through a table there, under its
        comment and `(borrowed)` (codegen/shared_kernels.py), so the text depends on what
        ran before; `export_c` writes every kernel out."""
        source = getattr(self._executable, "c_source", None)
        if source is None:
            raise RuntimeError(f"{self.name} runs on the numpy interpreter: there is no C source")
        return source

    @property
    def backend(self):
        return self._executable.backend

    def export_c(self, directory, prefix=None, variables=None, native=False):
        """Write this traced signature as standalone C: `prefix`.h, `prefix`.c and a
        Makefile in `directory` (see `tt.export_c`). Returns the paths written."""
        from tracer.export_entries import export_concretes

        prefix = prefix or self.name
        return export_concretes(directory, prefix, [(prefix, self)], variables, native)


def signature_text(parameters, output, variables, verbose):
    """A traced call's text as TensorFlow prints it: `parameters` as `call_parameters`
    gives them, the `output` structure of specs, the `variables` the function reads."""
    aliases = {}  # id(variable) -> alias_id, for the VariableSpecs of the arguments
    texts = [(name, kind, type_text(value, aliases)) for name, kind, value in parameters]
    output = type_text(output, aliases)
    if not verbose:
        return f"({', '.join(f'{name}: {text}' for name, _, text in texts)}) -> {output}"
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({kind}): {text}" for name, kind, text in texts]
    lines += ["Output Type:", f"  {output}", "Captures:"]
    captured = [v for v in variables if id(v) not in aliases]
    # NOTE: TensorFlow captures a variable as its resource handle, a scalar
    lines += [f"  {id(v)}: TensorSpec(shape=(), dtype=tt.resource, name=None)" for v in captured]
    return "\n".join(lines if captured else [*lines, "  None"])


def call_parameters(python_function, arguments, named):
    """[(name, kind, value)] of a traced call (`arguments`: its (args, kwargs)), as
    TensorFlow lists its parameters: defaults filled in, *args as `args_0`, `args_1` and
    **kwargs by name; a parameter before *args is POSITIONAL_ONLY (it cannot be passed by
    name then). `named` ([(name, value)]) where the function has no signature to bind to."""
    unknown = [(name, "POSITIONAL_OR_KEYWORD", value) for name, value in named]
    if python_function is None:
        return unknown
    try:
        bound = inspect.signature(python_function).bind(*arguments[0], **arguments[1])
    except (TypeError, ValueError):  # a callable without a Python signature to bind to
        return unknown
    bound.apply_defaults()
    kinds = {name: p.kind for name, p in bound.signature.parameters.items()}
    by_position = inspect.Parameter.VAR_POSITIONAL in kinds.values()
    parameters = []
    for name, value in bound.arguments.items():
        kind = kinds[name]
        if kind is inspect.Parameter.VAR_POSITIONAL:
            parameters += [(f"{name}_{k}", "POSITIONAL_ONLY", v) for k, v in enumerate(value)]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            parameters += [(key, "KEYWORD_ONLY", value[key]) for key in sorted(value)]
        elif by_position and kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            parameters.append((name, "POSITIONAL_ONLY", value))
        else:
            parameters.append((name, kind.name, value))
    return parameters


class AtomicFunction:
    """A ConcreteFunction called with its tensor arguments alone, in order (its
    `inference_fn`)."""

    def __init__(self, concrete):
        self._concrete = concrete

    def __call__(self, *tensors):
        concrete = self._concrete
        return concrete._call(concrete._tensor_arguments(tensors, {}))

    def __repr__(self):
        concrete = self._concrete
        return f"<AtomicFunction> {concrete.name}{concrete.pretty_printed_signature(False)}"


def _python_value_as(value, spec, name, k):
    """A Python number or list given for tensor argument `k` of `spec`, as a tensor of its
    dtype; TypeError where it is not one."""
    try:
        return convert_to_tensor(value, dtype=spec.dtype)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name}: tensor argument {k} is {value!r}, which is not a {spec.dtype.name} "
            f"tensor ({error}); this concrete function was traced for {spec!r}"
        ) from None


def _shown_shape(shape):
    """A shape as TensorFlow shows it: None for a dimension known only at run time."""
    return tuple(None if isinstance(d, dims.Dim) else d for d in shape)


def _exclusive(variable):
    """The variable's array, fit to be written in place: contiguous, writeable and not handed
    out (a snapshot Tensor, `.numpy()`); otherwise it gets a copy of its own first."""
    value = variable._value
    if variable._shared or not value.flags.c_contiguous or not value.flags.writeable:
        value = variable._value = np.array(value, order="C")
        variable._shared = False
    return value


def _position(items, item):
    return next(k for k, other in enumerate(items) if other is item)


def _describe(value):
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{np.dtype(getattr(value.dtype, 'as_numpy_dtype', value.dtype)).name}{list(np.shape(value))}"
    return repr(value)


def _file_safe(name):
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64] or "function"


def _fits(shape, traced):
    """Whether a tensor of `shape` fits the shape a concrete function was traced for (None:
    a dimension compiled for any size)."""
    return len(shape) == len(traced) and all(t is None or t == d for d, t in zip(shape, traced))


def _watched():
    """Whether a tape, a trace, a forward accumulator or a numerics check watches calls now:
    a call then runs through the tt.function's own path."""
    return bool(state.tapes or state.trace is not None or numerics.enabled or state.accumulators)


def _in_use(executable):
    """The executable that runs calls now: a Tiered one's last, once built (else None)."""
    if isinstance(executable, Tiered):
        return None if executable.building else executable.current
    return executable


def _of_tensors(structure):
    """Whether a function's result `structure` is a tensor, or tuples and dicts of them:
    what a batch of such results stacks leaf by leaf (a list is one tensor to tf.data, and
    a leaf of another kind is not computed per call)."""
    if isinstance(structure, TensorLike):
        return True
    if isinstance(structure, dict):
        return all(_of_tensors(value) for value in structure.values())
    return isinstance(structure, tuple) and all(_of_tensors(value) for value in structure)


def _numbers_taken(equal_sizes, arguments, inputs):
    """[(tensor argument, axis, number)] where the traced call's spec (`arguments`) leaves the
    size unknown and the trace took it for a number (`Trace.equal_sizes`)."""
    if all(isinstance(size, dims.Dim) for size in equal_sizes.values()):
        return []
    specs = [leaf for leaf in nest.flatten(arguments) if isinstance(leaf, TensorSpec)]
    return [
        (k, axis, size)
        for k, (spec, node) in enumerate(zip(specs, inputs))
        if not is_unknown_rank(spec.shape)
        for axis, (unknown, size) in enumerate(zip(spec.shape, node.shape))
        if unknown is None and not isinstance(size, dims.Dim)
    ]
