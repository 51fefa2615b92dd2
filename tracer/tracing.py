"""Tracing a Python function into an IR graph, for `tt.function`.

While a `Trace` is current (`state.trace`), tensor arguments are symbolic inputs, ops add
nodes instead of computing, and variables are graph inputs read at call time: reading one
gives its current symbolic value, and `assign*` replaces that value and marks the variable
for write-back, so a read after an assign sees the new value (program order). A `tt.print`
call is a node that assigns the print stream (tracer/printing.py). Python control flow runs
once, at trace time.
"""

import contextlib
import functools
import os
import threading
import weakref

from tracer.context import state
from tracer.ir import Graph, Node, dims, format_location, topological_closure
from tracer.ops.core import execute_graph, graph_node_of
from tracer.tensor import Tensor

# the argument nodes of tt.function traces (a graph reading one of another trace read a
# tensor leaked from that function)
_FUNCTION_INPUTS = weakref.WeakSet()


class Trace:
    """The state of one tracing run: the inputs made so far and what variables hold now."""

    def __init__(self, may_create_variables=True):
        self.inputs = []  # input nodes, in order of the flattened arguments
        self.variables = {}  # id(variable) -> variable, in order of first use
        self._values = {}  # id(variable) -> symbolic Tensor it holds now
        self.assigned = []  # variables assigned to, in order of first assignment
        self.gradient_graphs = []  # the gradient graphs tape.gradient built while tracing
        self.may_create_variables = may_create_variables
        self.variables_created = 0  # tt.Variables made while it ran
        self.nodes_made = 0  # (autograph warns about Python loops that unroll into many)
        # the nodes made in the bodies and branches of structured ops (SubTraces) within
        self.made_inside = weakref.WeakValueDictionary()  # id(node) -> node
        self.scopes_opened = set()  # the name scopes its loops and conds opened (`in_scope`)
        # polynomials of the unknown dimensions that must not be negative in a call the
        # trace serves (`x[1:]` on an axis of size d0: d0 - 1)
        self.requirements = []
        # polynomials that must not be 0 in such a call: a comparison answered as if they were
        # not (`x.shape[0] == 1` on an unknown d0: d0 - 1; tracer/ir/dims.py)
        self.other_than_zero = []
        # {name: Dim} of the unknown dimensions that a shape rule needed equal to another
        # (dims.SizesDiffer), each traced as that one: a call must give them equal sizes
        self.equal_sizes = {}
        # id(input node) -> the value of that argument in the call being traced (None when
        # traced from specs): what `values_in_call` computes from
        self.call_values = None
        # whether the sizes this trace leaves unknown are known in the call (a function that
        # generalized a changed size by itself, tracer/function.py): a program that prints
        # or formats one then wants its value, and is traced again with the sizes instead
        self.sizes_known_in_call = False

    def input(self, name, shape, dtype):
        node = Node("input", (), {"name": name}, tuple(shape), dtype)
        self.inputs.append(node)
        if type(self) is Trace:  # a function's argument, not a loop body's or a branch's
            _FUNCTION_INPUTS.add(node)
        return Tensor(None, node)

    def made(self, node, inputs=()):
        """Ops call this for each node they make, with the Tensors it reads (a SubTrace
        also keeps them)."""
        self.nodes_made += 1

    def keeps_symbolic(self, inputs):
        """Whether an op on these eager values is a node rather than computed now: where a
        tape entered in the traced function watches one of them (an eager tensor the function
        captures, which `tape.watch` made the constant node the graph reads it as:
        tracer/tape.py's `watched_node`), the op is a node that reads that constant, so that
        the tape's gradient reaches it through what is computed from it; computed now, its
        value would enter the graph later as a constant of its own, cut from the watched one
        (a gradient of None, or a second derivative missing terms). So is an op on a value
        with a tangent in a forward accumulator, whose structured ops (a loop, a branch)
        then read it as what it is computed from. A SubTrace of eager code also keeps values
        a tape records as inputs."""
        for tape in self.recording_tapes():
            tracked = tape._recording_state.tracked
            for t in inputs:
                node = t._node
                if node is not None and node.op == "const" and node in tracked:
                    return True
        return any(a.tangent_of(t) is not None for a in state.accumulators for t in inputs)

    def recording_tapes(self):
        """The tapes that record what is computed from the values this trace's ops read: the
        tapes recording now."""
        return state.tapes

    def captures(self, tensor):
        """Whether an eager tensor that a tape recorded enters the graph as itself (an
        input) rather than as a constant."""
        return False

    def read(self, variable):
        key = id(variable)
        if key not in self._values:
            self.variables[key] = variable
            self._values[key] = Tensor(None, variable._node)
        return self._values[key]

    def assign(self, variable, value):
        self.read(variable)
        if all(v is not variable for v in self.assigned):
            self.assigned.append(variable)
        self._values[id(variable)] = value

    def values_in_call(self, tensors, refused_ops):
        """The numpy values `tensors` (symbolic, of this trace) take in the call being
        traced, computed now from that call's arguments and the variables' values; None
        where they cannot be: a trace from specs, a value read through a node of
        `refused_ops` (a side effect), or one that fails to compute here (sizes known only
        symbolically). A SubTrace (a loop body, a branch) has no such values."""
        if self.call_values is None or type(self) is not Trace:
            return None
        outputs = [graph_node_of(t) for t in tensors]
        nodes = topological_closure(outputs)
        variables = {id(v._node): v for v in self.variables.values()}
        leaves, values = [], []
        for node in nodes:
            if node.op in refused_ops:
                return None
            if node.op == "input" or node.op == "variable":
                value = (
                    self.call_values.get(id(node))
                    if node.op == "input"
                    else getattr(variables.get(id(node)), "_value", None)
                )
                if value is None:
                    return None
                leaves.append(node)
                values.append(Tensor(value))
        try:
            with tracing(None):
                computed = execute_graph(Graph(leaves, nodes, outputs), values)
        except Exception:  # where it cannot compute now, the caller says why
            return None
        return [t.numpy() for t in computed]

    def assign_in_program(self, variable, value):
        """`variable.assign(value)` written in the traced code: assigned in program order
        (`assign`); the assign returns the variable, as TensorFlow 2's does."""
        self.assign(variable, value)
        return variable

    def group(self, inputs):
        """`tt.group(*inputs)` in this trace: None, as ops run in program order here (a
        TensorFlow 1 graph gives an op that a Session.run fetches)."""
        return None

    def check_print(self, stream):
        """Raise if a tt.print cannot be a node of this trace (it reads and assigns the
        variable `stream`)."""

    def require(self, size):
        """Calls of this trace must make the polynomial `size` of unknown dimensions at
        least 0 (a call that does not is traced with its own sizes)."""
        if not _listed(size, self.requirements):
            self.requirements.append(size)

    def require_other_than_zero(self, size):
        """Calls of this trace must not make the polynomial `size` 0 (a call that does is
        traced with its own sizes)."""
        if not _listed(size, self.other_than_zero):
            self.other_than_zero.append(size)

    def note_variable_creation(self):
        """A tt.Variable is being made while this trace runs: counted where the trace may
        make variables (the first), else refused, as TensorFlow's singleton rule."""
        self.variables_created += 1
        if not self.may_create_variables:
            raise ValueError(
                "tt.function only supports singleton tt.Variables created on the first call. "
                "Make sure the tt.Variable is only created once or created outside tt.function "
                "(a function traced again, for new argument shapes or values, creates it again)."
            )

    def restricted(self, inputs):
        """A trace of the same ops and variables with only `inputs` as its inputs and no
        assignments: what one `Session.run` of a TensorFlow 1 graph computes."""
        view = Trace(may_create_variables=False)
        view.inputs = list(inputs)
        view.variables, view._values = dict(self.variables), dict(self._values)
        view.gradient_graphs = list(self.gradient_graphs)
        view.made_inside = self.made_inside
        view.requirements = self.requirements
        view.other_than_zero = self.other_than_zero
        return view

    def graph(self, outputs):
        """The traced graph: `outputs`, then the new values of assigned variables."""
        finals = [self._values[id(v)] for v in self.assigned]
        out_nodes = [graph_node_of(t) for t in [*outputs, *finals]]
        inputs = self.inputs + [v._node for v in self.variables.values()]
        leaves = {id(n) for n in inputs}
        body = [n for n in topological_closure(out_nodes) if id(n) not in leaves]
        _check_in_scope(body, self.made_inside)
        return Graph(inputs, inputs + body, out_nodes)


def _check_in_scope(body, made_inside):
    """Raise where the function reads a tensor that a converted loop's body or a branch made
    (kept in a Python list or attribute, it is of no iteration in particular; TensorFlow
    raises its InaccessibleTensorError, a ValueError), or one of another function's trace
    (TypeError). Constants are the same anywhere."""
    escaped = next(
        (
            n
            for n in body
            if n.op == "input" or (made_inside.get(id(n)) is n and n.op not in ("const", "get"))
        ),
        None,
    )
    if escaped is None:
        return
    if escaped in _FUNCTION_INPUTS:
        # NOTE: TensorFlow's TypeError for a tensor of a function's trace that ended
        raise TypeError(
            "a tensor of another tt.function's trace, which has ended, is used here (kept "
            "in a global, a list or an attribute while that function was traced): it has no "
            "value outside it. Return it from that function, or pass it as an argument"
        )
    if escaped.op == "input":  # an argument of a body's graph: the op that read it first
        escaped = next((n for n in body if any(i is escaped for i in n.inputs)), escaped)
    where = format_location(escaped.location)
    raise ValueError(
        f"a tensor made inside a loop's body or a branch (at {where or 'an unknown line'}) "
        "is used outside it, kept in a Python list or object: a loop over a tensor or a "
        "tensor condition runs as one op, whose body's tensors exist only within it. Carry "
        "the value in a loop variable, or collect values in a tt.TensorArray (or loop over "
        "a Python range to unroll the loop)"
    )


def _listed(size, sizes):
    """Whether polynomial `size` is in `sizes`, compared by their terms: `==` of two different
    polynomials is itself an assumption, which would be recorded."""
    terms = size.terms if isinstance(size, dims.Dim) else size
    return any((s.terms if isinstance(s, dims.Dim) else s) == terms for s in sizes)


def _record_assumption(size, frame):
    """`dims.observe_assumptions`' callback: the function being traced (not tracer's own
    work after it, `assumptions_unrecorded`) assumed `size` is not 0, where the comparison is
    its own (`frame` in code outside tracer's packages) or one tracer makes on purpose
    (`frame` None: dims.equals)."""
    if state.trace is None or getattr(_unrecorded, "depth", 0):
        return
    if frame is None or not _is_tracers_own(frame.f_code.co_filename):
        state.trace.require_other_than_zero(size)


_OWN_DIRECTORIES = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name) + os.sep
    for name in ("tracer", "codegen", "runtime")
)


# autograph's operators run the program's own `if`, `not` and `while` on its values
_PROGRAMS_OWN = os.path.join(_OWN_DIRECTORIES[0], "autograph") + os.sep


@functools.lru_cache(maxsize=1024)
def _is_tracers_own(filename):
    """Whether code of `filename` is tracer's (its comparisons of shapes choose nothing: a
    check's fast path, an axis of 1 left out of a reverse), not a traced program's."""
    path = os.path.abspath(filename)
    return path.startswith(_OWN_DIRECTORIES) and not path.startswith(_PROGRAMS_OWN)


def _refuse_value_use(size, frame):
    """`dims.observe_value_uses`' callback: where the call being traced knows the size the
    program prints or formats (`Trace.sizes_known_in_call`), the trace stops, so that the
    function traces the call with its sizes (as TensorFlow would, giving `n=3` where the
    symbol would print `n=d0`). Elsewhere (a TensorSpec(None) of the user's) the symbol is
    the text, as tracer's own messages and code write it."""
    trace = state.trace
    if trace is None or not trace.sizes_known_in_call or getattr(_unrecorded, "depth", 0):
        return
    if not _is_tracers_own(frame.f_code.co_filename):
        raise TypeError(
            f"the program uses the size {size._text()}, unknown in this trace, as a value "
            "(printed or formatted)"
        )


_unrecorded = threading.local()  # .depth: of assumptions_unrecorded blocks, in this thread
dims.observe_assumptions(_record_assumption)
dims.observe_value_uses(_refuse_value_use)


@contextlib.contextmanager
def assumptions_unrecorded():
    """Comparisons of unknown dimensions within are tracer's own (a traced function's passes
    and build, inside an enclosing trace), not the traced program's: none is recorded."""
    depth = getattr(_unrecorded, "depth", 0)
    _unrecorded.depth = depth + 1
    try:
        yield
    finally:
        _unrecorded.depth = depth


@contextlib.contextmanager
def tracing(trace, tapes=()):
    """`trace` is the one ops go into, and `tapes` the ones recording, inside the block."""
    saved_trace, saved_tapes = state.trace, state.tapes
    state.trace, state.tapes = trace, list(tapes)
    try:
        yield trace
    finally:
        state.trace, state.tapes = saved_trace, saved_tapes
