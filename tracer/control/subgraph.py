"""Tracing a function that a structured op runs (a branch, a loop body) into a graph of its own.

    x = ...                        # a value of the enclosing trace
    def body(i, s):                # traced with symbolic inputs i, s
        return i + 1, s * x        # x is read from outside: a capture

    graph: %0 = input[name='i'], %1 = input[name='s'], %2 = input[name='capture0']  (x)
           ... return %3, %4

The nodes the function makes are the graph's; a value it reads from outside (a tensor of
the enclosing trace, a variable's value) becomes an extra input of the graph, a capture,
which the structured op takes as an input of its own: so a tape that tracks the value sees
the op read it, and gradients reach it. Eager values (constants) stay inside, as literals.
Variables: reading one reads it in the enclosing trace; assigning one inside gives its new
value as an extra output (`Traced.assigned`), which the structured op carries out.
"""

import contextlib

from tracer import nest
from tracer.context import state
from tracer.ir import Graph, Node, topological_closure
from tracer.ops import convert
from tracer.ops.core import graph_node_of
from tracer.ops.tuple_ops import get
from tracer.tensor import Tensor
from tracer.tracing import Trace, tracing


class Traced:
    """A traced function: its graph (inputs: the arguments' leaves, then one per capture;
    outputs: the leaves of its result, then the values of the variables it was asked for),
    the outer nodes its captures stand for, the structure of its result, and the other
    variables it assigned."""

    def __init__(
        self, graph, n_arguments, captures, structure, n_results, assigned, tensors, carried=()
    ):
        self.graph = graph
        self.n_arguments = n_arguments
        self.captures = captures
        self.structure = structure
        self.n_results = n_results
        self.assigned = assigned
        self.carried = list(carried)  # the variables carried in and out, in order
        self._tensors = tensors  # id(capture) -> the Tensor the function read it as
        self._trace = None  # (subtrace, argument nodes, result nodes), for `with_variables`

    def capture_tensors(self):
        """The Tensors to pass for the captures."""
        return tensors_of([self], self.captures)

    @property
    def results(self):
        """The output nodes of the function's own result."""
        return self.graph.outputs[: self.n_results]

    def with_variables(self, variables):
        """This function (traced without carrying) with the values of `variables` at its end
        as outputs after its result's, as if traced with them: a variable it did not assign
        gives the value it holds outside. The function is not traced again."""
        subtrace, arguments, results = self._trace
        ends = [graph_node_of(subtrace.read(v)) for v in variables]
        others = [v for v in self.assigned if all(v is not w for w in variables)]
        traced = _captured(
            subtrace, arguments, [*results, *ends], self.structure, self.n_results, others
        )
        traced._trace = self._trace
        return traced

    def with_carried(self, variables):
        """This function (traced carrying `self.carried`), also carrying `variables`, which
        it neither reads nor assigns: each is one more input after the arguments and the
        carried ones, and the same node is its output at the end."""
        if not variables:
            return self
        start = len(self.carried)
        new = [
            Node("input", (), {"name": f"variable{start + k}"}, v.shape, v.dtype)
            for k, v in enumerate(variables)
        ]
        inputs = self.graph.inputs
        n = self.n_arguments
        graph = Graph(
            [*inputs[:n], *new, *inputs[n:]],
            [*inputs[:n], *new, *self.graph.nodes[n:]],
            [*self.graph.outputs, *new],
        )
        return Traced(
            graph,
            n + len(new),
            self.captures,
            self.structure,
            self.n_results,
            self.assigned,
            self._tensors,
            [*self.carried, *variables],
        )

    def with_captures(self, captures):
        """The graph taking `captures` (a list of outer nodes including this one's) after its
        arguments, in that order."""
        arguments = self.graph.inputs[: self.n_arguments]
        own = dict(zip(map(id, self.captures), self.graph.inputs[self.n_arguments :]))
        inputs = [
            own.get(id(c)) or Node("input", (), {"name": f"capture{k}"}, c.shape, c.dtype)
            for k, c in enumerate(captures)
        ]
        leaves = {id(n) for n in self.graph.inputs}
        body = [n for n in self.graph.nodes if id(n) not in leaves]
        return Graph([*arguments, *inputs], [*arguments, *inputs, *body], self.graph.outputs)


def tensors_of(traced, captures):
    """The Tensors to pass for `captures` (outer nodes) of the functions `traced`: those the
    functions read them as (so that forward accumulators find their tangents; in eager
    code, the eager values), or new ones."""
    tensors = []
    for capture in captures:
        found = (t._tensors.get(id(capture)) for t in traced)
        tensor = next((t for t in found if t is not None and t._node is capture), None)
        tensors.append(tensor if tensor is not None else Tensor(None, capture))
    return tensors


class SubTrace(Trace):
    """The trace of a function a structured op runs, inside an enclosing trace (or inside a
    gradient rule, where `outer` is None). `carried` maps a variable to the tensor that
    holds its value inside (a loop variable), for variables a loop body assigns; `_values`
    holds those assigned here."""

    def __init__(self, outer, what):
        super().__init__(may_create_variables=False)
        self.outer = outer
        self.what = what  # "a tt.while_loop body": for errors
        self.carried = {}  # id(variable) -> Tensor
        self.outer_tapes = list(state.tapes)
        self.created = set()  # ids of the nodes made here
        self.read_outside = {}  # id(node) -> the Tensor of it, read from outside
        self.carrying = None  # in a loop body: the variables carried, in order (a list)
        self.carried_inputs = []  # their inputs
        if outer is not None:
            self.gradient_graphs = outer.gradient_graphs
            self.made_inside = outer.made_inside
            self.sizes_known_in_call = outer.sizes_known_in_call

    def require(self, size):
        if self.outer is not None:  # (eager code's unknown dimensions: none)
            self.outer.require(size)

    def require_other_than_zero(self, size):
        if self.outer is not None:
            self.outer.require_other_than_zero(size)

    def made(self, node, inputs=()):
        self.nodes_made += 1
        self.created.add(id(node))
        self.made_inside[id(node)] = node
        for tensor in inputs:
            if tensor._node is not None and id(tensor._node) not in self.created:
                self.read_outside.setdefault(id(tensor._node), tensor)

    def read(self, variable):
        key = id(variable)
        self.variables[key] = variable
        if key in self._values:
            return self._values[key]
        if key in self.carried:
            return self.carried[key]
        variable._watched_by(self.outer_tapes)  # read inside: read by the op, outside
        if self.outer is None:  # eager code: the variable's value, as an input of the graph
            return Tensor(variable._value, variable._node)
        value = self.outer.read(variable)
        if value._node is not variable._node and self.outer_tapes:
            # assigned before the op: the tapes recording the op take this read as another
            # read of the variable, a leaf made outside that the op captures, as a read there
            with tracing(self.outer, self.outer_tapes):
                value = variable._read_after_assign(value, self.outer_tapes)
        return value

    def keeps_symbolic(self, inputs):
        if self.outer is None and any(self._recorded(t) for t in inputs):
            return True
        return super().keeps_symbolic(inputs)  # a capture watched inside or around the op

    def recording_tapes(self):
        """Those recording now, and those of the code around this structured op and the ones
        it is in (which record the op, and so what its functions read)."""
        tapes, trace = list(state.tapes), self
        while isinstance(trace, SubTrace):
            tapes += [tape for tape in trace.outer_tapes if tape._recording_state is not None]
            trace = trace.outer
        return tapes

    def watched_constant(self, node):
        """Whether `node`, a literal constant, is a value a recording tape or an active
        forward accumulator watches (an eager tensor a traced function captures, given to
        `tape.watch` or as a primal): the structured op then reads it as a capture, through
        which the tape and the accumulator differentiate, not as a constant of its own."""
        if any(node in tape._recording_state.tracked for tape in self.recording_tapes()):
            return True
        return any(accumulator.watches(node) for accumulator in state.accumulators)

    def captures(self, tensor):
        if self.outer is None and self._recorded(tensor):
            self.read_outside[id(tensor._node)] = tensor
            return True
        return False

    @staticmethod
    def _recorded(tensor):
        """An eager value a tape records or watches (a variable's read value too)."""
        node = tensor._node
        return tensor._value is not None and node is not None and node.op != "const"

    def check_print(self, stream):
        if self.outer is None:  # a gradient rule traced from eager code: no variable to carry
            raise NotImplementedError(
                f"tt.print inside {self.what} of eager code is not supported: print the "
                "values the op returns instead"
            )
        self.outer.check_print(stream)  # an enclosing loop body carries it too
        if self.carrying is not None and id(stream) not in self.carried:
            self.carry(stream)  # (known now: no need to trace the loop again to carry it)

    def carry(self, variable):
        """Carry `variable` in and out of the loop whose body this traces: one more input."""
        if id(variable) in self._values:
            raise AssertionError(f"{variable.name} is carried after it was assigned")
        tensor = self.input(f"variable{len(self.carrying)}", variable.shape, variable.dtype)
        self.carried[id(variable)] = tensor
        self.carrying.append(variable)
        self.carried_inputs.append(tensor)

    def note_variable_creation(self):
        raise ValueError(
            f"a tt.Variable cannot be created inside {self.what}: create it outside the "
            "function, or before the loop or branch"
        )

    def input(self, name, shape, dtype):
        """A symbolic argument (not an input of the enclosing function)."""
        return Tensor(None, Node("input", (), {"name": name}, tuple(shape), dtype))


def trace_function(fn, arguments, what, variables=(), carry=False):
    """Trace `fn(*arguments)` into a `Traced`. `arguments`: a list or tuple of nested
    structures of leaves with a shape and dtype (Tensors); `fn` returns a nested structure
    of tensors (or of values `as_tensor` takes), or None. The values of `variables` at the
    end are outputs after the result's; with `carry`, their values at the start are inputs
    after the arguments' (a loop carries them)."""
    flat = nest.flatten(list(arguments))
    subtrace = SubTrace(state.trace, what)
    inputs = [subtrace.input(f"arg{k}", leaf.shape, leaf.dtype) for k, leaf in enumerate(flat)]
    if carry:
        subtrace.carrying = []
        for variable in variables:
            subtrace.carry(variable)
    carried = list(subtrace.carried_inputs)
    with _current(subtrace), _carried_as_variables(variables if carry else (), carried):
        result = fn(*nest.pack_sequence_as(list(arguments), inputs))
        leaves = [] if result is None else nest.flatten(result)
        outputs = [convert.as_tensor(leaf) for leaf in leaves]
        # NOTE: a tt.print inside carries the print stream from then on (`check_print`)
        variables = subtrace.carrying if carry else variables
        outputs += [subtrace.read(v) for v in variables]
    out_nodes = [graph_node_of(t) for t in outputs]
    others = [v for v in subtrace.assigned if all(v is not w for w in variables)]
    argument_nodes = [t._node for t in [*inputs, *subtrace.carried_inputs]]
    traced = _captured(subtrace, argument_nodes, out_nodes, result, len(leaves), others)
    traced.carried = list(variables) if carry else []
    traced._trace = (subtrace, argument_nodes, out_nodes[: len(leaves)])
    return traced


def _captured(subtrace, arguments, outputs, structure, n_results, assigned):
    """The Traced whose captures are the outer nodes that the nodes made here read."""
    inner = subtrace.created | {id(n) for n in arguments}

    def inside(node):
        if node.op == "get" and id(node.inputs[0]) not in inner:
            return False  # a result of an outer op: captured itself, not the whole tuple
        if id(node) in inner:
            return True
        return node.op == "const" and "value" in node.attrs and not subtrace.watched_constant(node)

    closure = topological_closure(outputs, expand=inside)
    order = [n for n in closure if inside(n)]
    outside = [n for n in closure if not inside(n)]
    mapping = {
        id(c): Node("input", (), {"name": f"capture{k}"}, c.shape, c.dtype)
        for k, c in enumerate(outside)
    }
    captures = [_made_outside(subtrace, c) if id(c) in inner else c for c in outside]
    for node in order:
        inputs = tuple(mapping.get(id(i), i) for i in node.inputs)
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            mapping[id(node)] = Node(
                node.op, inputs, node.attrs, node.shape, node.dtype, node.location
            )
    inputs = [*arguments, *(mapping[id(c)] for c in outside)]
    leaves = {id(n) for n in inputs}
    body = [mapping.get(id(n), n) for n in order if id(n) not in leaves]
    new_outputs = [mapping.get(id(o), o) for o in outputs]
    graph = Graph(inputs, [*inputs, *body], new_outputs)
    return Traced(
        graph, len(arguments), captures, structure, n_results, assigned, subtrace.read_outside
    )


def _made_outside(subtrace, node):
    """`node`, a `get` of an outer op's results made inside, made again where the structured
    op is: so that the tapes and accumulators outside see the capture come from that op."""
    results = subtrace.read_outside.get(id(node.inputs[0]))
    if results is None or results._node is not node.inputs[0]:
        results = Tensor(None, node.inputs[0])
    made = get(results, node.attrs["index"])
    subtrace.read_outside[id(made._node)] = made
    return made._node


@contextlib.contextmanager
def _carried_as_variables(variables, carried):
    """Inside a loop body, a carried variable is its loop variable: tapes that watch the
    variable (by its node) then watch the value the body reads, and differentiate with
    respect to it."""
    saved = [v._node for v in variables]
    for variable, tensor in zip(variables, carried):
        variable._node = tensor._node
    try:
        yield
    finally:
        for variable, node in zip(variables, saved):
            variable._node = node


@contextlib.contextmanager
def _current(subtrace):
    """Ops inside build the sub-graph: the subtrace is the current trace, and no tape of the
    enclosing code records them (the structured op is what those tapes see)."""
    saved = state.trace, state.tapes, state.paused, state.location
    state.trace, state.tapes, state.paused, state.location = subtrace, [], [], None
    try:
        yield
    finally:
        state.trace, state.tapes, state.paused, state.location = saved
