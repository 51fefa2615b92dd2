"""Variables: named, mutable state that tapes watch automatically when trainable.

Inside `tt.function`, a Variable is state of the compiled code: reads happen when the code
runs, and `assign*` and `scatter_*` change it there, in program order (tracer/tracing.py).
A Variable created while a function is traced is made outside the trace, from a value
known then, as TensorFlow lifts it (`tf.init_scope`); only the first trace of a function
may create one.
"""

import itertools

import numpy as np

from runtime import aligned
from tracer.context import graph_nodes, outside_trace, state, tensor_equality
from tracer.ir import Literal, Node, format_location, user_location
from tracer.ops import array_ops, core, math_ops
from tracer.ops.core import apply
from tracer.ops.index_ops import SCATTER_ADD
from tracer.tensor import Tensor, TensorLike, constant, convert_to_tensor, numpy_text
from tracer.tensor_shape import TensorShape

_construction_order = itertools.count()


class Variable(TensorLike):
    """A mutable tensor. Reading it in an op gives a Tensor snapshot; a recording tape that
    watches accessed variables starts watching it when it is read.

    >>> v = tt.Variable(2.0, name="x0")
    >>> v.name, v.assign_add(1.0).numpy()
    ('x0:0', 3.0)
    """

    # `_shared`: the current array has been handed out (a snapshot Tensor, `.numpy()`), so
    # compiled code that updates the variable in place copies it first.
    __slots__ = (
        "_value",
        "_node",
        "_shared",
        "name",
        "path",
        "trainable",
        "constraint",
        "_unique_id",
        "__weakref__",
    )

    def __init__(self, initial_value, trainable=True, name=None, dtype=None, constraint=None):
        if state.trace is not None:
            state.trace.note_variable_creation()
        with outside_trace():
            if callable(initial_value):
                initial_value = initial_value()
            value = _initial_value(initial_value, dtype)
        self._value = aligned.copy(value.numpy())
        self._shared = False
        self.name = f"{state.name_scope}{name or 'Variable'}:0"
        self.path = None  # a Keras weight's (tracer/keras/naming.py, `keras_named`)
        self.trainable = bool(trainable)
        if constraint is not None and not callable(constraint):
            raise ValueError(f"a Variable's constraint must be callable, not {constraint!r}")
        # applied by the optimizers after each update of the variable (TensorFlow's)
        self.constraint = constraint
        self._unique_id = next(_construction_order)
        self._node = Node(
            "variable", (), {"name": self.name}, self._value.shape, value.dtype, user_location()
        )

    @property
    def shape(self):
        return TensorShape.of_array(self._value.shape)

    @property
    def dtype(self):
        return self._node.dtype

    def _read(self):
        for read in state.watchers:
            read.append(self)
        if state.tapes:
            self._watched_by(state.tapes)
        if state.trace is not None:
            tensor = state.trace.read(self)
            if tensor._node is not self._node and state.tapes:
                tensor = self._read_after_assign(tensor, state.tapes)
            if state.accumulators:  # a read of its own: after an assign, the value is another's
                tensor = Tensor(tensor._value, tensor._node)
        else:
            self._shared = True
            tensor = Tensor(self._value, self._node)
        for accumulator in state.accumulators:
            accumulator.read_variable(self, tensor)
        return tensor

    def _read_after_assign(self, value, tapes):
        """A read in traced code of the value an assign gave: to the tapes that watch this
        variable it is another read of the variable, a leaf whose gradient adds to the
        variable's (`tape.gradient`), as every read is in eager code and in TensorFlow, and
        no gradient flows through it into the assigned expression (an assign has none)."""
        watching = [
            tape._recording_state
            for tape in tapes
            if tape._recording_state is not None
            and self._unique_id in tape._recording_state.variables
        ]
        if not watching:
            return value
        read = array_ops.stop_gradient(value)
        if read._node is None or read._node.op == "const":
            # a constant assigned: a leaf of its own, the constant the graph reads it as (the
            # ops on it are nodes that read that one: Trace.keeps_symbolic)
            attrs = {"value": Literal(read._value)}
            node = Node("const", (), attrs, read.shape, read.dtype, user_location())
            read = Tensor(read._value, node)
        for recording in watching:
            recording.watch_node(read._node)
            recording.variable_reads.setdefault(self._unique_id, []).append(read._node)
        return read

    def _watched_by(self, tapes):
        """The tapes among `tapes` that watch accessed variables start watching this one."""
        if self.trainable and self._node.dtype.is_differentiable:
            for tape in tapes:
                if tape._watch_accessed_variables:
                    tape._watch_variable(self)

    def value(self):
        """The current value as a Tensor (a snapshot: later assigns do not change it)."""
        return self._read()

    read_value = value

    def assign(self, value, use_locking=None, name=None, read_value=True):
        new = self._checked(value, "assign")
        if state.trace is not None:
            return state.trace.assign_in_program(self, new)
        if state.refusing_assigns is not None:
            self._refuse_assign()
        self._value = aligned.copy(new.numpy(), self._value.dtype)
        self._shared = False
        return _UnreadVariable(self) if read_value else None

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        new = math_ops.add(self._current(), self._checked(delta, "assign_add"))
        return self.assign(new, read_value=read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        new = math_ops.subtract(self._current(), self._checked(delta, "assign_sub"))
        return self.assign(new, read_value=read_value)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Add `sparse_delta` (an IndexedSlices of rows) to the rows it names."""
        return self.assign(math_ops.add(self._current(), self._rows(sparse_delta, "scatter_add")))

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        """Subtract `sparse_delta` (an IndexedSlices of rows) from the rows it names."""
        rows = self._rows(sparse_delta, "scatter_sub")
        return self.assign(math_ops.subtract(self._current(), rows))

    def _current(self):
        """The value to update from: no tape watches or records an assign (as in TensorFlow)."""
        return state.trace.read(self) if state.trace is not None else Tensor(self._value)

    def _rows(self, sparse_delta, method):
        """The dense tensor of the rows `sparse_delta` holds (repeated rows add up)."""
        values = getattr(sparse_delta, "values", None)
        if values is None or not hasattr(sparse_delta, "indices"):
            raise TypeError(
                f"{method}: sparse_delta must be an IndexedSlices, not {sparse_delta!r}"
            )
        values = convert_to_tensor(values, self.dtype)
        if self.ndim == 0 or values.shape[1:] != self.shape[1:]:
            raise ValueError(
                f"{method}: rows of shape {values.shape[1:]} do not fit {self.name} of shape "
                f"{self.shape}"
            )
        indices = convert_to_tensor(sparse_delta.indices)
        if indices.shape != values.shape[:1]:
            raise ValueError(
                f"{method}: {values.shape[0]} rows for {indices.shape} indices of {self.name}"
            )
        return apply(SCATTER_ADD, (values, indices), {"axis": 0, "shape": self.shape})

    def _checked(self, value, method):
        """`value` as a Tensor of this variable's dtype and shape, or a clear error. A numpy
        value of another kind (int64 into float32, float into int32, complex into real) is
        refused where the conversion would drop part of each number (`_check_kind`)."""
        if isinstance(value, TensorLike):
            tensor = convert_to_tensor(value)
        else:
            if isinstance(value, (np.ndarray, np.generic)):
                self._check_kind(value.dtype, method)
            tensor = convert_to_tensor(value, self.dtype)
        if tensor.dtype != self.dtype:
            raise TypeError(
                f"{method}: {self.name} has dtype {self.dtype.name}, the value {tensor.dtype.name}"
            )
        if tensor.shape != self.shape:
            raise ValueError(
                f"{method}: {self.name} has shape {self.shape}, the value shape {tensor.shape}"
            )
        return tensor

    def _refuse_assign(self):
        construct, why = state.refusing_assigns
        where = format_location(user_location())
        raise ValueError(
            f"{construct} assigns the variable {self.name}"
            + (f" (at {where})" if where else "")
            + f": {why}; assign outside it"
        )

    def _check_kind(self, dtype, method):
        """TypeError for a numpy value whose conversion drops part of each number: complex
        into a real or integer variable, floating point into an integer or bool one. Others
        (int64 into float32, float64 into float32) are converted, as TensorFlow converts them."""
        target = self._value.dtype.kind
        if (dtype.kind == "c" and target != "c") or (dtype.kind == "f" and target in "iub"):
            raise TypeError(
                f"{method}: {self.name} has dtype {self.dtype.name}, the value is a numpy "
                f"array of dtype {dtype}; convert it first (np.asarray(value, "
                f"np.{self.dtype.name}) or tt.cast) if the cast is meant"
            )

    def __format__(self, format_spec):
        """`f"{v}"` is the variable's repr, as TensorFlow's; a spec formats its value."""
        return repr(self) if not format_spec else super().__format__(format_spec)

    def __hash__(self):
        """By identity where `==` is (after `tt.compat.v1.disable_tensor_equality()`) or
        inside a TensorFlow 1 graph; elsewhere unhashable, as TensorFlow's."""
        node = self._node
        if (
            tensor_equality.enabled
            and not state.graphs
            and (node is None or node not in graph_nodes)
        ):
            raise TypeError(
                "Variable is unhashable. Instead, use variable.ref() as the key. "
                f"(Variable: {self!r})"
            )
        return id(self)

    def __repr__(self):
        text = numpy_text(self._value)
        return f"<tracer.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={text}>"


def _delegated(name):
    """An attribute of an _UnreadVariable that is its variable's, read and written there."""
    return property(
        lambda self: getattr(self._variable, name),
        lambda self, value: setattr(self._variable, name, value),
    )


class _UnreadVariable(Variable):
    """What an eager `assign` (`assign_add`, `assign_sub`, `scatter_*`) returns, as
    TensorFlow's: the variable under the name 'UnreadVariable' (its repr shows it), whose
    reads, assigns and gradients are the variable's, so `v.assign(x).numpy()` and
    `v.assign(x) + 1` give the variable's value when they run.

    >>> tt.Variable([1.0]).assign([2.0])
    <tracer.Variable 'UnreadVariable' shape=(1,) dtype=float32, numpy=array([2.], dtype=float32)>
    """

    __slots__ = ("_variable",)

    def __init__(self, variable):
        self._variable = variable

    name = property(lambda self: "UnreadVariable")
    _value = _delegated("_value")
    _node = _delegated("_node")
    _shared = _delegated("_shared")
    _unique_id = _delegated("_unique_id")
    trainable = _delegated("trainable")
    constraint = _delegated("constraint")


core.read_variables(Variable)  # `tt.add(y, variable)` outside tapes reads it as `_read` does


def _initial_value(initial_value, dtype):
    """The initial value as an eager Tensor; one computed from a traced function's arguments
    cannot be known outside the trace, as TensorFlow's lifting requires."""
    if isinstance(initial_value, Tensor) and initial_value._value is None:
        raise ValueError(
            "a Variable created inside tt.function needs an initial value known outside it, not "
            "one computed from the function's arguments; create the Variable outside the function "
            "or from a constant"
        )
    return constant(initial_value, dtype)
