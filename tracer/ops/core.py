"""`apply`: the one path every op takes, eager or symbolic, recorded or not.

shape, dtype = op.infer(attrs, *inputs)   # validate; clear errors name the user's line
eager:    value = runtime kernel(*input arrays, **attrs)
symbolic: a new IR node
then, for every recording tape that tracks an input: record the node and what the
op's gradient rule needs (`op.saves`), nothing more.
"""

import sys
import threading

from runtime import native
from runtime.interpreter import run_graph
from runtime.kernels import FLOATING_KERNELS, KERNELS, errors_ignored, errors_restored
from tracer import collector, dtypes
from tracer.context import numerics, state
from tracer.errors import InvalidArgumentError, mixed
from tracer.ir import Literal, Node, TupleType, dims, format_location, source, user_location
from tracer.ir.graph import order_with
from tracer.numerics_check import check_numerics
from tracer.ops import convert, fast_apply_check
from tracer.ops.registry import ALL_INPUTS, ALL_INPUTS_AND_OUT, OPS, OUT, STRING_OPS, OpDef
from tracer.recording import Recording
from tracer.tensor import Tensor

# the C op path (fast_apply.c), once loaded and checked at the end of this module
fast_apply = None
# while tt.profiler profiles: `op_timer(op, kernel, values, attrs)` runs each eager op's
# kernel, timing it (`time_ops`)
op_timer = None
_fast_apply_was_enabled = None
_record_in_c = None  # its `record`, from when it is configured (the check at import uses it)


def _apply(op, inputs, attrs):
    """Run primitive `op` on Tensors `inputs` (already converted) and return the result Tensor.

    This is the definition; `apply` is this function, or the C path of `fast_apply.c`
    that does the same for the common case and calls this one for the rest.
    """
    values = []
    for t in inputs:
        value = t._value
        if value is None:
            return apply_symbolic(op, inputs, attrs)
        values.append(value)
    shape, dtype = _infer_eager(op, inputs, attrs)
    trace = state.trace
    if trace is not None and (
        _is_large(shape) or dims.symbols_of(attrs) or trace.keeps_symbolic(inputs)
    ):
        return apply_symbolic(op, inputs, attrs)
    kernel = KERNELS[op.name]
    token = errors_ignored()
    try:
        if op_timer is None:
            out = Tensor(kernel(*values, **attrs))
        else:
            out = Tensor(op_timer(op, kernel, values, attrs))
    finally:
        errors_restored(token)
    if numerics.enabled:
        check_numerics(op, inputs, out, _location())
    if state.tapes:
        _record(op, inputs, attrs, out, shape, dtype)
    else:
        for t in inputs:
            if t._node is not None and t._node.op == "variable":
                _note_variable_origin(t._node, out)
                break
    if state.paused:
        _note_paused_use(inputs, out)
    if state.accumulators:
        _accumulate_tangents(op, inputs, attrs, out)
    return out


def eager_results_unobserved():
    """Whether an eager op's result would be seen by its caller alone: no trace, tape
    (recording or paused), forward accumulator, variable watcher, numerics check or op timer,
    each of which `_apply` and the variable reads serve."""
    return (
        state.trace is None
        and not state.tapes
        and not state.paused
        and not state.accumulators
        and not state.watchers
        and not numerics.enabled
        and op_timer is None
    )


def _apply_unary(op, x):
    """`apply` of a one-input op to anything `as_tensor` takes."""
    return apply(op, (convert.as_tensor(x),), {})


def _apply_binary(op, x, y):
    """`apply` of a two-input op to anything `as_tensors` takes (`x * 2`, `2 * x`, `x * y`)."""
    return apply(op, convert.as_tensors(x, y), {})


def apply_symbolic(op, inputs, attrs):
    """`apply` while building a graph: a new IR node instead of a value."""
    if state.trace is None and not state.building:
        _refuse_leaked(op, inputs)
    shape, dtype = _infer_symbolic(op, inputs, attrs)
    node = Node(op.name, tuple(map(graph_node_of, inputs)), attrs, shape, dtype, _location())
    if state.trace is not None:
        state.trace.made(node, inputs)
    out = Tensor(None, node)
    if state.tapes:
        _record(op, inputs, attrs, out, shape, dtype)
    if state.paused:
        _note_paused_use(inputs, out)
    if state.accumulators:
        _accumulate_tangents(op, inputs, attrs, out)
    return out


def _accumulate_tangents(op, inputs, attrs, out):
    """Each forward accumulator gives `out` its tangent; while one computes it, only the
    accumulators outside it are active (they see the tangent's ops: forward over forward)."""
    accumulators = state.accumulators
    for k, accumulator in enumerate(accumulators):
        accumulator.propagate(op, inputs, attrs, out, accumulators[:k])


def _refuse_leaked(op, inputs):
    """A symbolic tensor used where no graph is being built escaped a traced function
    through a Python side channel (a global, a list): TensorFlow's error."""
    for t in inputs:
        if t._value is None:
            where = format_location(_location())
            raise TypeError(
                f"{op.name}: {t!r} is out of scope and cannot be used here"
                + (f" (at {where})" if where else "")
                + ": it belongs to a tt.function's trace, which has ended. Use the function's "
                "return values, not a tensor stored while it was traced (a global, a list, an "
                "attribute), to get values out of it."
            )


def _infer(op, inputs, attrs):
    try:
        if op.name not in STRING_OPS:
            _refuse_strings(op, inputs)
        shape, dtype = op.infer(attrs, *inputs)
    except (ValueError, TypeError) as error:
        where = format_location(_location())
        message = f"{op.name}: {error}" + (f" (at {where})" if where else "")
        if isinstance(error, dims.SizesDiffer):
            raise dims.SizesDiffer(message, *error.sizes) from None
        if type(error) is ValueError and state.trace is None and not state.building:
            # TensorFlow's eager ops raise InvalidArgumentError for inputs that do not fit
            # (traced, ValueError): both kinds of `except` catch it
            raise mixed(InvalidArgumentError, ValueError)(message) from None
        raise type(error)(message) from None
    # a plain tuple: a rule may give an input's `.shape`, an eager tensor's TensorShape
    return (shape if type(shape) is tuple else tuple(shape)), dtype


def _refuse_strings(op, inputs):
    """TypeError for a tt.string input to an op that computes on numbers (TensorFlow has no
    kernel for it either: `s * 2`, `tt.reduce_sum(s)`, `tt.cast(s, tt.float32)`)."""
    for t in inputs:
        if t.dtype.is_string:
            raise TypeError(
                "does not take string tensors (tt.strings has the string ops: join, length, "
                "to_number, ...)"
            )


# (op, shape and numpy dtype of each input[, _attribute_key(attrs)]) -> (shape, dtype)
_INFERRED = {}
_INFERRED_SYMBOLIC = {}  # the same for ops without attributes while building graphs
_INFERRED_LIMIT = 10_000


_REMEMBERED_INPUTS = 8  # the most inputs of an op whose inference `_infer_eager` remembers


def _infer_eager(op, inputs, attrs):
    """`op.infer`, remembered for ops of one to `_REMEMBERED_INPUTS` inputs and plain
    attributes (`_plain`): shape rules are pure functions of the input shapes and dtypes and
    the attributes, and eager loops ask the same question at every step. fast_apply.c reads
    the same table (for one or two inputs, which it keys the same way)."""
    count = len(inputs)
    if count == 1:
        first = inputs[0]._value
        key = (op, first.shape, first.dtype)
    elif count == 2:
        first, second = inputs[0]._value, inputs[1]._value
        key = (op, first.shape, first.dtype, second.shape, second.dtype)
    elif 2 < count <= _REMEMBERED_INPUTS:
        key = (op, *[part for t in inputs for part in (t._value.shape, t._value.dtype)])
    else:
        return _infer(op, inputs, attrs)
    if attrs:
        if not all(map(_plain, attrs.values())):
            return _infer(op, inputs, attrs)
        key = (*key, _attribute_key(attrs))
    known = _INFERRED.get(key)
    return known if known is not None else _remember(_INFERRED, key, op, inputs, attrs)


def _attribute_key(attrs):
    """The attributes in a key, as ((name, form), ...) (fast_apply.c builds the same)."""
    return tuple([(name, _form(value)) for name, value in attrs.items()])


def _form(value):
    """`value` with the type of each of its parts, which tells 1 from 1.0 and True (equal
    keys otherwise), also inside tuples: (type, value), or a tuple of forms."""
    return tuple(map(_form, value)) if type(value) is tuple else (type(value), value)


_PLAIN = (int, float, str, type(None), dtypes.DType)


def _plain(value):
    """Whether an attribute is a number (not NaN, which no key would equal), a string, a
    dtype or a tuple of them: a value a remembered key may hold (not a function or a graph,
    which it would keep alive, nor a list or an array, which has no hash)."""
    if type(value) is tuple:
        return all(map(_plain, value))
    return isinstance(value, _PLAIN) and value == value


def _infer_symbolic(op, inputs, attrs):
    """`op.infer` while building a graph, remembered as `_infer_eager` does: an unrolled
    loop, and the gradient graph of one, ask the same question at every step. Ops with
    attributes are remembered outside traces only (a gradient graph tracer builds for an
    eager tape: fast_apply.c reads the table for those), with plain attributes only."""
    if len(inputs) > 2:
        return _infer(op, inputs, attrs)
    key = (op, *[(t._dims(), t.dtype) for t in inputs])  # plain tuples, as fast_apply.c's
    if attrs:
        if state.trace is not None or not all(map(_plain, attrs.values())):
            return _infer(op, inputs, attrs)
        key = (*key, _attribute_key(attrs))
    known = _INFERRED_SYMBOLIC.get(key)
    return known if known is not None else _remember(_INFERRED_SYMBOLIC, key, op, inputs, attrs)


def _remember(table, key, op, inputs, attrs=None):
    """The rule's answer for the op, kept in `table`; past its limit the oldest answer goes
    (an attribute new at every call, a float that changes each step, does not stop the
    answers of later ops from being kept). Threads evict one at a time (the C path reads
    the tables without the lock: a read of a dict is atomic)."""
    known = _infer(op, inputs, attrs or {})
    with _REMEMBERING:
        if len(table) >= _INFERRED_LIMIT:
            table.pop(next(iter(table)))
        table[key] = known
    return known


_REMEMBERING = threading.Lock()


LARGE = 4096  # while tracing, results of more elements become graph nodes, not baked-in constants


def _is_large(shape):
    """Whether a result is better a node than a constant: it has many elements, or a number
    known only when the function runs."""
    size = dims.size(shape)
    return isinstance(size, dims.Dim) or size > LARGE


def _location():
    return state.location or user_location()


def time_ops(timer):
    """Make `timer(op, kernel, values, attrs) -> the kernel's result` run the kernel of each
    eager op (the profiler's), or stop (None). The C op path, which runs kernels itself, is
    off meanwhile, and eager gradients run op by op (`timing_ops`)."""
    global op_timer, _fast_apply_was_enabled
    if fast_apply is not None:
        if timer is not None and op_timer is None:
            _fast_apply_was_enabled = fast_apply.set_enabled(False)
        elif timer is None and op_timer is not None:
            fast_apply.set_enabled(_fast_apply_was_enabled)
    op_timer = timer


def node_of(tensor):
    """The node of `tensor`, making a `const` leaf for an eager value no tape has seen.

    Scalars keep their value in the node (so printed graphs show `mul %0, 2.0`); larger
    values are not copied into the IR.
    """
    node = tensor._node
    if node is None:
        value = tensor._value
        attrs = {"value": Literal(value)} if value.ndim == 0 else {}
        node = tensor._node = Node("const", (), attrs, value.shape, tensor.dtype)
    return node


def graph_node_of(tensor):
    """The node of `tensor` inside a graph being built: eager values become literal constants
    (or keep the literal constant node they have)."""
    node = tensor._node
    if tensor._value is None or (node is not None and node.op == "const" and "value" in node.attrs):
        return node
    if node is not None and state.trace is not None and state.trace.captures(tensor):
        return node
    return Node("const", (), {"value": Literal(tensor._value)}, tensor.shape, tensor.dtype)


def _record(op, inputs, attrs, out, shape, dtype):
    if (
        _record_in_c is not None
        and op.saves != ALL_INPUTS_AND_OUT
        and _record_in_c(op, inputs, attrs, out, shape, dtype)
    ):
        return  # recorded in C, as below (fast_apply.c's record)
    location = None
    for tape in state.tapes:
        rec = tape._recording_state
        tracked = rec.tracked
        for t in inputs:
            if t._node in tracked:
                break
        else:
            rec.events.note_untracked_use(inputs, _location)
            _carry_cut(inputs, out)
            continue
        if location is None:
            location = state.location or user_location(sys._getframe(2))
        if op.grad is None or not dtype.is_differentiable:
            sources = tuple(t._node for t in inputs if t._node in tracked)
            cut = (op.name, dtype, sources, location)
            rec.events.blocked.append(cut)
            out._cut = cut
            continue
        node = out._node
        if node is None:
            node = out._node = Node(
                op.name,
                tuple([t._node or node_of(t) for t in inputs]),
                attrs,
                shape,
                dtype,
                location,
            )
        saves = op.saves
        if not saves:
            saved = ()
        elif saves == ALL_INPUTS:
            saved = inputs
        elif saves == ALL_INPUTS_AND_OUT:
            saved = (*inputs, out)
        else:
            saved = tuple([out if slot == OUT else inputs[slot] for slot in saves])
        if op.saved_for is not None:
            saved = _kept_for(saved, op.saved_for, inputs, tracked)
        rec.record(node, saved)


def _kept_for(saved, saved_for, inputs, tracked):
    """`saved` with None for each value whose cotangents' inputs are all Python numbers'
    constants (`convert._scalar_constant`: `x * 0.5` keeps no x), which no tape tracks or
    can watch later; any other input might be watched after the op read it, and then needs
    the value (fast_apply.c's `saved_for_tape` does the same)."""
    return tuple(
        None
        if all(
            id(inputs[k]) in convert.SCALAR_CONSTANT_IDS and inputs[k]._node not in tracked
            for k in needers
        )
        else value
        for value, needers in zip(saved, saved_for)
    )


def execute_graph(graph, inputs):
    """Run `graph` on Tensors through the normal op path (so tapes record it); outputs as Tensors."""
    bindings = {id(node): value for node, value in zip(graph.inputs, inputs)}
    saved_location = state.location
    try:
        return run_graph(graph, bindings, _apply_node)
    finally:
        state.location = saved_location


def inline_graph(graph, inputs):
    """What `execute_graph` makes of `graph` inside a function's trace, made directly: a
    node that reads a symbolic value is copied with its inputs replaced, without running
    its op's shape rule again (a gradient graph's nodes have their shapes, and a large
    gradient has very many nodes); a node of eager values only goes through the op path as
    before (computed now, a value the function can read). Only where nothing watches the
    ops (no tape, accumulator or numerics check), every node is a plain op and every input
    has the shape and dtype the graph was built for (a seed of another dtype: the op path's
    error); otherwise through `execute_graph`."""
    for node, tensor in zip(graph.inputs, inputs):
        if tensor.dtype is not node.dtype or tensor.shape != node.shape:
            return execute_graph(graph, inputs)
    for node in graph.nodes:
        op = OPS.get(node.op)
        if op is not None and op.expand is not None:
            return execute_graph(graph, inputs)
    trace = state.trace
    bound = {id(node): tensor for node, tensor in zip(graph.inputs, inputs)}
    values = {k: t for k, t in bound.items() if t._value is not None}  # id -> eager Tensor
    made = {k: t._node for k, t in bound.items() if t._value is None}  # id -> graph node

    def node_of(key):  # an eager value read by a graph node: a constant (or a capture)
        made[key] = graph_node_of(values[key])
        return made[key]

    saved_location = state.location
    try:
        for node in graph.nodes:
            key = id(node)
            if key in bound:
                continue
            if node.op == "const":  # a value for the op path, itself for graph nodes
                values[key], made[key] = Tensor(node.attrs["value"].array), node
                continue
            ids = [id(i) for i in node.inputs]
            if all(map(values.__contains__, ids)):
                result = _apply_node(node, [values[k] for k in ids])
                if type(result) is Tensor and result._value is None:
                    made[key] = result._node
                else:
                    values[key] = result
                continue
            inputs = tuple([made[k] if k in made else node_of(k) for k in ids])
            copy = Node(node.op, inputs, node.attrs, node.shape, node.dtype, node.location)
            trace.made(copy)
            made[key] = copy
    finally:
        state.location = saved_location
    results = []
    for out in graph.outputs:
        key = id(out)
        if key in bound:
            results.append(bound[key])
        elif key in values:
            results.append(values[key])
        else:
            results.append(Tensor(None, made[key]))
    return results


class Results(tuple):
    """The results (Tensors) of a node of several that its op's `expand` ran."""

    __slots__ = ()


def _apply_node(node, args):
    if node.op == "const":
        return Tensor(node.attrs["value"].array)
    if args and type(args[0]) is Results:  # a `get` of them
        return args[0][node.attrs["index"]]
    state.location = node.location
    op = OPS[node.op]
    if op.expand is not None:
        return op.expand(node, args)
    return apply(op, tuple(args), node.attrs)


def _note_variable_origin(variable_node, out):
    """A result computed from a Variable outside any tape remembers it: `x = x + 1` turns a
    variable into a tensor that no tape watches, and tape.explain can then say so."""
    out._origin = (variable_node.attrs["name"], _location())


def _tensor_with_origin(value, variable_node):
    """Tensor(value), computed from the Variable of `variable_node` outside any tape, noting
    it (fast_apply.c's `tensor_with_origin`, where the C op path is built)."""
    out = Tensor(value)
    _note_variable_origin(variable_node, out)
    return out


def _note_paused_use(inputs, out):
    for tape in state.paused:
        rec = tape._recording_state
        used = tuple(t._node for t in inputs if t._node is not None and t._node in rec.tracked)
        if used:
            cut = ("stop_recording", out.dtype, used, _location())
            rec.events.paused_uses.append((used, cut[3]))
            out._cut = cut


def _note_untracked(inputs, out):
    """What `_record` does where tapes record and none tracks an input of the op (the C op
    path calls it then): each notes the inputs' first untracked use for tape.explain, and
    `out` carries on a cut gradient path."""
    for tape in state.tapes:
        tape._recording_state.events.note_untracked_use(inputs, _location)
    _carry_cut(inputs, out)


def _carry_cut(inputs, out):
    """An op on a value whose gradient path was cut passes the cut on (for tape.explain)."""
    for t in inputs:
        if t._cut is not None:
            out._cut = t._cut
            return


def _fast_apply_difference(module):
    """'' when the C op path, configured, records what `_apply` records (fast_apply_check),
    else what differs: runtime.native then leaves it unused, and it is left off here."""
    try:
        configure_fast_apply(module, _apply)
        difference = fast_apply_check.difference(module, _apply)
        untracking = module.untrack_node, module.untrack_records
    except Exception:
        _leave_off(module)
        raise
    if difference:
        _leave_off(module)
    else:
        collector.untrack_with(*untracking)
        order_with(module.topological_order)
    return difference


def _leave_off(module):
    """Every call of `module` goes to the Python path, and `_record` records in Python."""
    global _record_in_c
    _record_in_c = None
    module.set_enabled(False)


def configure_fast_apply(module, python_apply):
    """Give the C path what it reads, and the Python function it hands other calls to; and
    `_record` the module's `record`."""
    global _record_in_c
    module.configure(**fast_apply_arguments(python_apply))
    _record_in_c = module.record


def fast_apply_arguments(python_apply):
    return dict(
        Tensor=Tensor,
        Node=Node,
        Recording=Recording,
        OpDef=OpDef,
        DType=dtypes.DType,
        state=state,
        numerics=numerics,
        inferred=_INFERRED,
        inferred_symbolic=_INFERRED_SYMBOLIC,
        kernels=KERNELS,
        floating_kernels=FLOATING_KERNELS,
        codes=source._CODES,
        locations=source._LOCATIONS,
        user_location=user_location,
        node_of=node_of,
        python_apply=python_apply,
        python_unary=_apply_unary,
        python_binary=_apply_binary,
        note_untracked=_note_untracked,
        dtypes_by_numpy=dtypes.BY_NUMPY,
        scalar_constants=convert._SCALAR_CONSTANTS,
        scalar_constant_ids=convert.SCALAR_CONSTANT_IDS,
        # the shape and dtype of a numpy scalar, known from its type without asking it
        scalar_forms={d._np.type: ((), d._np) for d in dtypes.BY_NUMPY.values()},
        OUT=OUT,
        ALL_INPUTS=ALL_INPUTS,
        acyclic_classes=(dtypes.DType, Literal, dims.Dim, TupleType),  # the commonest first
    )


def _op_function(op, function, arity):
    return function


def _sweep_in_python(*arguments):
    """fast_apply.c's `sweep` where it is not built: False, and reverse_sweep loops in Python."""
    return False


def read_variables(variable_class):
    """Instances of `variable_class` given to an op function outside any tape are read in C
    (fast_apply.c's read_outside), where the C op path is built."""
    if fast_apply is not None:
        fast_apply.read_variables(variable_class)


fast_apply = native.load("fast_apply", _fast_apply_difference)
if fast_apply is None:
    apply, apply_unary, apply_binary, op_function, new_tensor, sweep_in_c = (
        _apply,
        _apply_unary,
        _apply_binary,
        _op_function,
        Tensor,
        _sweep_in_python,
    )
    tensor_with_origin = _tensor_with_origin
else:
    apply, apply_unary, apply_binary = (
        fast_apply.apply,
        fast_apply.apply_unary,
        fast_apply.apply_binary,
    )
    op_function = fast_apply.op_function
    new_tensor = fast_apply.tensor  # Tensor(value), built in C
    tensor_with_origin = fast_apply.tensor_with_origin
    sweep_in_c = fast_apply.sweep  # a gradient's reverse sweep (tracer.passes.gradient)
