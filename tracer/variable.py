"""Variables: named, mutable state that tapes watch automatically when trainable."""

import itertools

import numpy as np

from tracer.context import state
from tracer.ir import Node, user_location
from tracer.tensor import Tensor, TensorLike, constant, convert_to_tensor

_construction_order = itertools.count()


class Variable(TensorLike):
    """A mutable tensor. Reading it in an op gives a Tensor snapshot; a recording tape that
    watches accessed variables starts watching it when it is read.

    >>> v = tt.Variable(2.0, name="x0")
    >>> v.name, v.assign_add(1.0).numpy()
    ('x0:0', 3.0)
    """

    __slots__ = ("_value", "_node", "name", "trainable", "_unique_id", "__weakref__")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if callable(initial_value):
            initial_value = initial_value()
        value = constant(initial_value, dtype)
        self._value = np.array(value.numpy())
        self.name = f"{name or 'Variable'}:0"
        self.trainable = bool(trainable)
        self._unique_id = next(_construction_order)
        self._node = Node(
            "variable", (), {"name": self.name}, self._value.shape, value.dtype, user_location()
        )

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._node.dtype

    def _read(self):
        if state.tapes and self.trainable and self._node.dtype.is_differentiable:
            for tape in state.tapes:
                if tape._watch_accessed_variables:
                    tape._watch_variable(self)
        if state.trace is not None:
            return state.trace.read(self)
        return Tensor(self._value, self._node)

    def value(self):
        """The current value as a Tensor (a snapshot: later assigns do not change it)."""
        return self._read()

    read_value = value

    def assign(self, value, use_locking=None, name=None, read_value=True):
        new = self._checked(value, "assign")
        if state.trace is not None:
            state.trace.assign(self, new)
        else:
            self._value = np.array(new.numpy(), dtype=self._value.dtype)
        return self

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        from tracer.ops.math_ops import add

        return self.assign(add(self._current(), self._checked(delta, "assign_add")))

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        from tracer.ops.math_ops import subtract

        return self.assign(subtract(self._current(), self._checked(delta, "assign_sub")))

    def _current(self):
        """The value to update from: no tape watches or records an assign (as in TensorFlow)."""
        return state.trace.read(self) if state.trace is not None else Tensor(self._value)

    def _checked(self, value, method):
        """`value` as a Tensor of this variable's dtype and shape, or a clear error."""
        tensor = convert_to_tensor(value, self.dtype if not isinstance(value, TensorLike) else None)
        if tensor.dtype != self.dtype:
            raise TypeError(
                f"{method}: {self.name} has dtype {self.dtype.name}, the value {tensor.dtype.name}"
            )
        if tensor.shape != self.shape:
            raise ValueError(
                f"{method}: {self.name} has shape {self.shape}, the value shape {tensor.shape}"
            )
        return tensor

    def __repr__(self):
        value = self._value
        text = str(value[()]) if value.ndim == 0 else repr(value)
        return f"<tracer.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={text}>"
