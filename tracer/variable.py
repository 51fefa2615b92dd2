"""Variables: named, mutable state that tapes watch automatically when trainable.

Inside `tt.function`, a Variable is state of the compiled code: reads happen when the code
runs, and `assign*` and `scatter_*` change it there, in program order (tracer/tracing.py).
A Variable created while a function is traced is made outside the trace, from a value
known then, as TensorFlow lifts it (`tf.init_scope`); only the first trace of a function
may create one.

A Variable made with a `shape` left open (`shape=tt.TensorShape(None)`, `[None, 3]`) takes
assigns of any compatible shape, as TensorFlow's; its `shape` is the one given. Compiled
code holds every size it reads, so a tt.function that reads such a variable runs as Python
at each call (`RunsAsPython`), where its values are the eager ones.
"""

import functools
import itertools
import weakref

import numpy as np

from runtime import aligned
from tracer.context import graph_nodes, outside_trace, state, tensor_equality
from tracer.errors import InvalidArgumentError, RunsAsPython, mixed
from tracer.ir import Literal, Node, format_location, user_location
from tracer.ops import array_ops, core, math_ops
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.core import apply
from tracer.ops.index_ops import SCATTER_ADD
from tracer.ops.scatter_nd_ops import (
    tensor_scatter_nd_add,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from tracer.tensor import Tensor, TensorLike, constant, convert_to_tensor, numpy_text
from tracer.tensor_shape import TensorShape, as_shape, is_unknown_rank
from tracer.variable_policies import VariableAggregation, VariableSynchronization, checked_policies

_construction_order = itertools.count()


class DTypeMismatchError(ValueError, TypeError):
    """A value of another dtype assigned to a Variable: TensorFlow's ValueError, and the
    TypeError tracer raised before, so that either `except` catches it."""


# an update (assign_add, assign_sub) of another shape than the variable's: TensorFlow's
# InvalidArgumentError, and the ValueError tracer raised before
_UpdateShapeError = mixed(InvalidArgumentError, ValueError)


class Variable(TensorLike):
    """A mutable tensor. Reading it in an op gives a Tensor snapshot; a recording tape that
    watches accessed variables starts watching it when it is read.

    >>> v = tt.Variable(2.0, name="x0")
    >>> v.name, v.assign_add(1.0).numpy()
    ('x0:0', 3.0)
    """

    # `_shared`: the current array has been handed out (a snapshot Tensor, `.numpy()`), so
    # compiled code that updates the variable in place copies it first.
    # `_open_shape`: the shape given where it leaves sizes (or the rank) open, else None
    __slots__ = (
        "_value",
        "_node",
        "_shared",
        "name",
        "path",
        "trainable",
        "constraint",
        "synchronization",
        "aggregation",
        "_open_shape",
        "_unique_id",
        "__weakref__",
    )

    def __init__(
        self,
        initial_value=None,
        trainable=None,
        validate_shape=True,
        caching_device=None,
        name=None,
        variable_def=None,
        dtype=None,
        import_scope=None,
        constraint=None,
        synchronization=VariableSynchronization.AUTO,
        aggregation=VariableAggregation.NONE,
        shape=None,
        experimental_enable_variable_lifting=True,
    ):
        """TensorFlow's arguments, in its order. `shape` leaves sizes open (None) or the rank
        (`tt.TensorShape(None)`); `validate_shape=False` changes nothing where the initial
        value's shape is known, which eagerly it always is (TensorFlow's too keeps that
        shape then); `caching_device`, `import_scope` and the lifting flag are TensorFlow's
        graph-building options, which change nothing here."""
        if initial_value is None:
            raise ValueError("a Variable needs an initial_value (a value, or a callable)")
        if variable_def is not None:
            raise ValueError("tracer makes Variables from values, not from a VariableDef")
        self.synchronization, self.aggregation, trainable = checked_policies(
            synchronization, aggregation, trainable, name
        )
        if state.trace is not None:
            state.trace.note_variable_creation()
        with outside_trace():
            if callable(initial_value):
                initial_value = initial_value()
            value = _initial_value(initial_value, dtype)
        # the array, not `numpy()`: a string scalar stays a `bytes` in an object array
        self._value = aligned.copy(value._value)
        self._open_shape = _open_shape(shape, self._value.shape)
        self._shared = False
        self.name = f"{state.name_scope}{name or 'Variable'}:0"
        self.path = None  # a Keras weight's (tracer/keras/naming.py, `keras_named`)
        self.trainable = trainable
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
        """The value's shape, or the shape given where it leaves sizes open (TensorFlow's)."""
        if self._open_shape is not None:
            return self._open_shape
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
            self._check_compilable()
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

    def _check_compilable(self):
        """In a trace, a variable whose shape is left open makes the function run as
        Python: compiled code holds the sizes of what it reads, and assigns in place."""
        if self._open_shape is not None:
            raise RunsAsPython(
                f"reads the variable {self.name} of shape {self._open_shape}, left open: its "
                "size may change, which compiled code cannot follow"
            )

    def assign(self, value, use_locking=None, name=None, read_value=True):
        new = self._checked(value, "assign")
        if state.trace is not None:
            self._check_compilable()
            return state.trace.assign_in_program(self, new)
        if state.refusing_assigns is not None:
            self._refuse_assign()
        if new.shape != self._value.shape:  # (a shape left open)
            self._node = Node(
                "variable", (), {"name": self.name}, new.shape, self.dtype, self._node.location
            )
        self._value = aligned.copy(new._value, self._value.dtype)
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

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Replace the rows `sparse_delta` (an IndexedSlices) names by its values (of
        repeated rows, the last).

        >>> v = tt.Variable([[1.0], [2.0]])
        >>> v.scatter_update(tt.IndexedSlices(tt.constant([[9.0]]), tt.constant([1]))).numpy()
        array([[1.],
               [9.]], dtype=float32)
        """
        values, indices = self._slices(sparse_delta, "scatter_update")
        rows = array_ops.expand_dims(indices, -1)
        return self.assign(tensor_scatter_nd_update(self._current(), rows, values))

    def scatter_nd_update(self, indices, updates, name=None):
        """Replace the elements (or slices) at the coordinates `indices` by `updates`, as
        `tt.tensor_scatter_nd_update` of the variable's value.

        >>> tt.Variable([1, 2, 3]).scatter_nd_update([[0], [2]], [10, 30]).numpy()
        array([10,  2, 30], dtype=int32)
        """
        return self._scatter_nd(tensor_scatter_nd_update, indices, updates)

    def scatter_nd_add(self, indices, updates, name=None):
        """Add `updates` at the coordinates `indices` (repeated ones add up)."""
        return self._scatter_nd(tensor_scatter_nd_add, indices, updates)

    def scatter_nd_sub(self, indices, updates, name=None):
        """Subtract `updates` at the coordinates `indices` (repeated ones add up)."""
        return self._scatter_nd(tensor_scatter_nd_sub, indices, updates)

    def _scatter_nd(self, scatter, indices, updates):
        updates = self._of_dtype(updates, "scatter_nd")
        return self.assign(scatter(self._current(), indices, updates))

    def _current(self):
        """The value to update from: no tape watches or records an assign (as in TensorFlow)."""
        if state.trace is not None:
            self._check_compilable()
            return state.trace.read(self)
        return Tensor(self._value)

    def _slices(self, sparse_delta, method):
        """The values and indices of `sparse_delta`, an IndexedSlices of rows (a TypeError
        for anything else), checked against the variable's rows."""
        values = getattr(sparse_delta, "values", None)
        if values is None or not hasattr(sparse_delta, "indices"):
            raise TypeError(
                f"{method}: sparse_delta must be an IndexedSlices, not {sparse_delta!r}"
            )
        values = convert_to_tensor(values, self.dtype)
        if self.ndim == 0 or values.shape[1:] != self._value.shape[1:]:
            raise ValueError(
                f"{method}: rows of shape {values.shape[1:]} do not fit {self.name} of shape "
                f"{self.shape}"
            )
        indices = convert_to_tensor(sparse_delta.indices)
        if indices.shape != values.shape[:1]:
            raise ValueError(
                f"{method}: {values.shape[0]} rows for {indices.shape} indices of {self.name}"
            )
        return values, indices

    def _rows(self, sparse_delta, method):
        """The dense tensor of the rows `sparse_delta` holds (repeated rows add up)."""
        values, indices = self._slices(sparse_delta, method)
        shape = self._value.shape
        return apply(SCATTER_ADD, (values, indices), {"axis": 0, "shape": shape})

    def __getitem__(self, key):
        """`v[key]`, the value's slice, a Tensor that can also `assign` to that slice of
        the variable, as TensorFlow's `v[1:3].assign(...)`."""
        return _as_slice(self, key, array_ops.getitem(self, key))

    def _checked(self, value, method):
        """`value` as a Tensor of this variable's dtype and shape, or a clear error: of
        another dtype, DTypeMismatchError (TensorFlow's ValueError, and a TypeError); of
        another shape, ValueError for `assign` (which takes any shape that a shape left open
        admits) and InvalidArgumentError (also a ValueError) for the updates, as
        TensorFlow's. A numpy value of another kind (int64 into float32, float into int32,
        complex into real) is refused where the conversion would drop part of each number
        (`_check_kind`)."""
        tensor = self._of_dtype(value, method)
        shape = self._value.shape
        if tensor.shape == shape:
            return tensor
        if method == "assign" and self._open_shape is not None:
            if self._open_shape.is_compatible_with(tensor.shape):
                return tensor
            shape = self._open_shape
        error = ValueError if method == "assign" else _UpdateShapeError
        raise error(f"{method}: {self.name} has shape {shape}, the value shape {tensor.shape}")

    def _of_dtype(self, value, method):
        """`value` as a Tensor of this variable's dtype (`_checked`)."""
        if isinstance(value, TensorLike):
            tensor = convert_to_tensor(value)
        else:
            if isinstance(value, (np.ndarray, np.generic)):
                self._check_kind(value.dtype, method)
            tensor = convert_to_tensor(value, self.dtype)
        if tensor.dtype != self.dtype:
            raise DTypeMismatchError(
                f"{method}: {self.name} has dtype {self.dtype.name}, the value {tensor.dtype.name}"
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
    _open_shape = _delegated("_open_shape")
    trainable = _delegated("trainable")
    constraint = _delegated("constraint")
    synchronization = _delegated("synchronization")
    aggregation = _delegated("aggregation")


core.read_variables(Variable)  # `tt.add(y, variable)` outside tapes reads it as `_read` does


# NOTE: `v[key]` is a plain Tensor (as TensorFlow's is an EagerTensor), which TensorFlow
# gives an `assign` of its own. tracer's Tensors hold no attributes of their own (slots),
# so the slices of variables are listed here by identity while they live, and Tensor's
# `assign` is a property that finds a slice's entry, an AttributeError for any other tensor
# (so `hasattr(tensor, "assign")` stays False).
_slices = {}  # id(tensor) -> (weak reference to it, variable, key) of each live `v[key]`


def _as_slice(variable, key, tensor):
    """`tensor`, listed as the slice `variable[key]` while it lives."""
    ident = id(tensor)
    _slices[ident] = (weakref.ref(tensor, lambda _: _slices.pop(ident, None)), variable, key)
    return tensor


def _slice_assign(tensor):
    """The `assign` of a slice of a variable (Tensor's property)."""
    entry = _slices.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        raise AttributeError(f"'{type(tensor).__name__}' object has no attribute 'assign'")
    _, variable, key = entry
    return functools.partial(_assign_slice, variable, key)


def _assign_slice(variable, key, value, name=None):
    """`variable[key].assign(value)`: `value` (broadcast to the slice's shape, of the
    variable's dtype) put in that slice, an assign of the whole variable (in program order in
    a tt.function), as TensorFlow's sliced assign.

    >>> v = tt.Variable([1.0, 2.0, 3.0, 4.0])
    >>> v[1:3].assign([20.0, 30.0]).numpy()
    array([ 1., 20., 30.,  4.], dtype=float32)
    """
    current = variable._current()
    # which elements the key picks: the same key on the positions of the elements
    shape = current._dims()
    positions = Tensor(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape))
    positions = array_ops.getitem(positions, key)
    updates = variable._of_dtype(value, "assign")
    if not _broadcasts(updates.shape, positions.shape):
        raise _UpdateShapeError(
            f"assign: the value's shape {updates.shape} does not broadcast to the shape "
            f"{positions.shape} of {variable.name}[{_key_text(key)}]"
        )
    updates = broadcast_to(updates, positions.shape)
    new = tensor_scatter_nd_update(
        array_ops.reshape(current, [-1]),
        array_ops.reshape(positions, [-1, 1]),
        array_ops.reshape(updates, [-1]),
    )
    return variable.assign(array_ops.reshape(new, current.shape))


Tensor.assign = property(_slice_assign)


def _broadcasts(shape, target):
    """Whether an array of `shape` broadcasts to `target` (numpy's rule, into `target`)."""
    if len(shape) > len(target):
        return False
    return all(a == 1 or a == b for a, b in zip(reversed(shape), reversed(target)))


def _key_text(key):
    """An index as written between brackets: `1:3`, `:, 0`."""
    keys = key if isinstance(key, tuple) else (key,)

    def one(k):
        if isinstance(k, slice):
            parts = ["" if p is None else str(p) for p in (k.start, k.stop, k.step)]
            return ":".join(parts[:2] if k.step is None else parts)
        return "..." if k is Ellipsis else "tt.newaxis" if k is None else str(k)

    return ", ".join(one(k) for k in keys)


def _open_shape(shape, value_shape):
    """The `shape` argument of a Variable where it leaves sizes (or the rank) open, checked
    against the initial value's shape (a ValueError where they are not compatible); None
    where it is not given or gives every size."""
    if shape is None:
        return None
    shape = as_shape(shape)
    if not shape.is_compatible_with(value_shape):
        raise ValueError(
            f"the initial value's shape {TensorShape(value_shape)} is not compatible with "
            f"the Variable's shape argument, {shape}"
        )
    return None if not is_unknown_rank(shape) and shape.is_fully_defined() else shape


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
