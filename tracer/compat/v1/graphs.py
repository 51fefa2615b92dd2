"""TensorFlow 1's graphs: `tt.compat.v1.Graph`, `placeholder`, the default graph, and
`disable_eager_execution`.

A Graph is a trace that stays open (tracer/tracing.py): inside `graph.as_default()` ops add
nodes to it, as they do while a `tt.function` is traced, tapes record them, and
`tf.gradients` and `tape.gradient` give symbolic gradients. A placeholder is one of its
inputs. `tt.compat.v1.Session` compiles what a `run` fetches from what it feeds.

`disable_eager_execution()` makes the default graph current in the thread that calls it,
so ops outside any `as_default` block build into it, as in TensorFlow 1 (which asks for it
at the start of the program; other threads stay eager in tracer).
"""

import contextlib
import weakref

from tracer.context import graph_nodes, state
from tracer.dtypes import as_dtype
from tracer.ir import Node, dims, user_location
from tracer.ops.core import graph_node_of
from tracer.tensor import Tensor
from tracer.tensor_shape import is_unknown_rank
from tracer.tracing import Trace, tracing
from tracer.variable import Variable


class _GraphTrace(Trace):
    """A Graph's trace: the nodes made in it are known as a graph's (`context.graph_nodes`).

    `v.assign(x)` is an op, as in TensorFlow 1: its result (the new value) is a node of its
    own (`assignments`), and a Session.run that needs it assigns the variable. A read of the
    variable written after the assign reads that result, so a run that needs the read
    assigns too (the order TensorFlow 2's automatic control dependencies give; TensorFlow 1
    leaves it open); a fetch of the variable itself is its value when the run starts.

    What an op assumed of the placeholders' None sizes (`Trace.require`: `x[4]` needs
    d0 - 5 >= 0) is kept with the node the op makes next (`needs`), so that a Session.run
    can check the fed sizes against it and name the op."""

    def __init__(self):
        super().__init__()
        self.assignments = {}  # id(node) -> the variable that node's value is assigned to
        # the nodes made in this graph (what a run may fetch) -> how many were made before
        self.own = weakref.WeakKeyDictionary()
        # id(node) -> (node, [(polynomial, ">= 0" or "!= 0")]): what its op assumed
        self.needs = {}
        self._pending = []  # the assumptions made since the last node

    def require(self, size):
        super().require(size)
        self._pending.append((size, ">= 0"))

    def require_other_than_zero(self, size):
        super().require_other_than_zero(size)
        self._pending.append((size, "!= 0"))

    def assign_in_program(self, variable, value):
        # a node of its own, the assign op's result (of a constant too, which an op on
        # eager values would compute at once)
        node = Node(
            "identity", (graph_node_of(value),), {}, value.shape, value.dtype, user_location()
        )
        self.made(node)
        self.assignments[id(node)] = variable
        result = Tensor(None, node)
        super().assign(variable, result)
        return result

    def group(self, inputs):
        return Operation([self.read(t) if isinstance(t, Variable) else t for t in inputs])

    def assign(self, variable, value):
        raise ValueError(
            f"{variable.name} is assigned by a tt.function called in a tt.compat.v1 graph: "
            "its assignment would run at no Session.run in particular. Assign it with "
            "v.assign in the graph (an op a Session.run fetches), or call the function "
            "eagerly"
        )

    def check_print(self, stream):
        raise ValueError(
            "tt.print, tt.summary and tt.py_function without results cannot be ops of a "
            "tt.compat.v1 graph (TensorFlow 1 runs them only when a Session.run fetches "
            "them): print or write the values a Session.run fetches"
        )

    def input(self, name, shape, dtype):
        tensor = super().input(name, shape, dtype)
        graph_nodes.add(tensor._node)
        self.own[tensor._node] = self.nodes_made
        return tensor

    def made(self, node, inputs=()):
        super().made(node, inputs)
        graph_nodes.add(node)
        self.own[node] = self.nodes_made
        # NOTE: an op records its assumptions just before it makes its node (x[4]: the slice)
        if self._pending:
            self.needs[id(node)] = (node, self._pending)
            self._pending = []


class Operation:
    """A TensorFlow 1 op with no value (`tt.group`'s, an optimizer's update in a graph): a
    Session.run that fetches it runs what it groups (the assigns among them) and gives
    None for it."""

    __slots__ = ("inputs",)

    def __init__(self, inputs):
        flat = []
        for item in inputs:
            flat.extend(item.inputs if isinstance(item, Operation) else [item])
        self.inputs = flat


class Graph:
    """A graph of ops, built inside `with graph.as_default():` and run by a Session."""

    def __init__(self):
        self._trace = _GraphTrace()
        self._placeholders = []  # the input nodes `placeholder` made, in order
        self._symbols = 0  # how many unknown dimensions its placeholders have
        self._finalized = False

    @contextlib.contextmanager
    def as_default(self):
        """Ops inside build into this graph (and `get_default_graph()` is it)."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        with tracing(self._trace):
            state.graphs.append(self)
            try:
                yield self
            finally:
                state.graphs.pop()

    def finalize(self):
        """Refuse new ops from now on (as TensorFlow, which a Session may do)."""
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def _placeholder(self, dtype, shape, name):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if is_unknown_rank(shape):
            raise ValueError(
                "tt.compat.v1.placeholder needs a shape (a list of sizes, None for a size "
                "given when the Session runs): tracer compiles each graph for a known rank"
            )
        sizes = []
        for size in _as_sizes(shape):
            if size is None:
                sizes.append(dims.Dim.symbol(f"d{self._symbols}"))
                self._symbols += 1
            else:
                sizes.append(size)
        name = name or (
            "Placeholder" + (f"_{len(self._placeholders)}" if self._placeholders else "")
        )
        tensor = self._trace.input(name, tuple(sizes), as_dtype(dtype))
        self._placeholders.append(tensor._node)
        return tensor


def _as_sizes(shape):
    try:
        sizes = list(shape.as_list() if hasattr(shape, "as_list") else shape)
    except TypeError:
        sizes = [shape]
    for size in sizes:
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError(f"a placeholder's shape holds sizes (int >= 0 or None), got {shape!r}")
    return sizes


class _EagerSwitch:
    def __init__(self):
        self.disabled = False
        self.graph = None  # the default graph, made when first asked for


_eager = _EagerSwitch()


def default_graph():
    """The process's default graph (made at the first call)."""
    if _eager.graph is None:
        _eager.graph = Graph()
    return _eager.graph


def get_default_graph():
    """The graph of the innermost `as_default` block, else the process's default graph."""
    return state.graphs[-1] if state.graphs else default_graph()


def reset_default_graph():
    """A new, empty default graph (outside any `as_default` block, as TensorFlow requires)."""
    if len(state.graphs) > (1 if _eager.disabled else 0):
        raise AssertionError(
            "Do not use tt.compat.v1.reset_default_graph() inside a graph's as_default block"
        )
    _eager.graph = Graph()
    if _eager.disabled:
        state.trace = _eager.graph._trace
        state.graphs[:] = [_eager.graph]


def placeholder(dtype, shape=None, name=None):
    """An input of the current graph, whose value each `Session.run` is fed."""
    if not state.graphs:
        raise RuntimeError(
            "tt.compat.v1.placeholder() is not compatible with eager execution: make it "
            "inside `with graph.as_default():` or after tt.compat.v1.disable_eager_execution()"
        )
    return state.graphs[-1]._placeholder(dtype, shape, name)


def disable_eager_execution():
    """From now on ops outside any graph build into the default graph, in this thread
    (TensorFlow 1's graph mode)."""
    _eager.disabled = True
    if not state.graphs:
        state.trace = default_graph()._trace
        state.graphs.append(default_graph())


def enable_eager_execution():
    """Ops outside any graph run eagerly again (in this thread; the default graph stays)."""
    if _eager.disabled and state.graphs and state.graphs[0] is _eager.graph:
        state.graphs.pop(0)
        if not state.graphs:
            state.trace = None
    _eager.disabled = False
