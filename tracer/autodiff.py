"""Forward mode: `tt.autodiff.ForwardAccumulator` (TensorFlow's) and the functional `tt.jvp`.

    with tt.autodiff.ForwardAccumulator(primals=x, tangents=v) as acc:
        y = f(x)
    acc.jvp(y)            # J_f(x) v, computed alongside y

While an accumulator is active, every op whose inputs carry tangents gives its result a
tangent, by the forward-mode rule in the op's record (`OpDef.jvp`, written with tracer
ops). So tapes record the tangent computations (reverse over forward), accumulators outside
see an inner one's (forward over forward), and an accumulator around a tape sees the
gradient's ops, since while one is active gradients run op by op: the Hessian-vector
product of TensorFlow's guide is forward over reverse. Inside `tt.function` the tangent
ops are graph nodes like any: compiled, in C.

Ops whose record says TRANSPOSED_VJP get J t by differentiating their gradient rule once
more: <J^T u, t> is linear in u, and its gradient with respect to u is J t.
"""

import threading

from tracer import nest
from tracer.context import state
from tracer.ir import Node
from tracer.ops import convert, core
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.registry import OPS, OUT, saved_slots
from tracer.ops.tangent_rules import TRANSPOSED_VJP, zeros
from tracer.ops.tuple_ops import TupleCotangent
from tracer.tape import GradientTape, UnconnectedGradients, watched_node
from tracer.tensor import Tensor
from tracer.variable import Variable

__all__ = ["ForwardAccumulator"]


class ForwardAccumulator:
    """Computes Jacobian-vector products of what runs inside it, along `tangents`.

    `primals` (tensors or variables, a nested structure) are watched with `tangents` of the
    same structure, shapes and dtypes; `jvp(y)` is the tangent of a tensor computed from
    them inside the `with` block (None, or zeros with unconnected_gradients="zero", for one
    that does not depend on them).
    """

    def __init__(self, primals, tangents):
        flat_primals, flat_tangents = nest.flatten(primals), nest.flatten(tangents)
        if len(flat_primals) != len(flat_tangents):
            raise ValueError(
                f"ForwardAccumulator: {len(flat_primals)} primals but {len(flat_tangents)} tangents"
            )
        self._tangents = {}  # id(tensor) -> (tensor, its tangent); the tensor is kept alive
        self._variables = {}  # id(variable) -> (variable, its tangent)
        # the constants a traced function reads its eager primals as (`watches`)
        self._constant_nodes = set()
        for primal, tangent in zip(flat_primals, flat_tangents):
            if isinstance(primal, Variable):
                self._variables[id(primal)] = (primal, _checked(primal, tangent))
            elif isinstance(primal, Tensor):
                self._tangents[id(primal)] = (primal, _checked(primal, tangent))
                if primal._value is not None and state.trace is not None:
                    self._constant_nodes.add(id(watched_node(primal)))
            else:
                # NOTE: a tangent follows a tensor by identity; a value converted here is
                # one no op of the user's will ever read (TensorFlow requires tensors too)
                raise TypeError(
                    f"ForwardAccumulator: primals must be tensors or variables, not "
                    f"{type(primal).__name__} {primal!r}; convert it with tt.constant first "
                    "and compute from that tensor"
                )
        self._recording = False

    def __enter__(self):
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        self._recording = True
        state.accumulators.append(self)
        _c_path.hold()
        return self

    def __exit__(self, *exc):
        state.accumulators.remove(self)
        _c_path.release()
        self._recording = False
        return False

    def watches(self, node):
        """Whether `node` is the constant a traced function reads one of the primals as (an
        eager tensor it captures): a loop or branch reading it takes it as a capture, whose
        tangent is the primal's."""
        return id(node) in self._constant_nodes

    def tangent_of(self, tensor):
        entry = self._tangents.get(id(tensor))
        return entry[1] if entry is not None and entry[0] is tensor else None

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangents of `primals` (a nested structure of tensors and variables)."""
        zero = UnconnectedGradients(unconnected_gradients) == UnconnectedGradients.ZERO

        def tangent(value):
            if isinstance(value, Variable):
                entry = self._variables.get(id(value))
                found = entry[1] if entry is not None and entry[0] is value else None
            else:
                found = self.tangent_of(value)
            if found is None and zero:
                value = convert.as_tensor(value)
                return zeros(value.shape, value.dtype)
            return found

        flat, kept = nest.flatten(primals), _kept_parts(primals)
        return nest.pack_sequence_as(primals, [p if k else tangent(p) for p, k in zip(flat, kept)])

    def read_variable(self, variable, tensor):
        """A read of a watched variable carries its tangent."""
        entry = self._variables.get(id(variable))
        if entry is not None and entry[0] is variable:
            self._tangents[id(tensor)] = (tensor, entry[1])

    def propagate(self, op, inputs, attrs, out, outer):
        """Give `out`, the result of `op` on `inputs`, its tangent, computed with only the
        `outer` accumulators active."""
        tangents = [self.tangent_of(t) for t in inputs]
        if op.jvp is None or not out.dtype.is_differentiable or all(t is None for t in tangents):
            return
        node = out._node if out._node is not None else _stand_in(op, inputs, attrs, out)
        saved = state.accumulators
        state.accumulators = outer
        try:
            if op.jvp == TRANSPOSED_VJP:
                tangent = _transposed_vjp(op, node, tangents, inputs, out)
            else:
                tangent = op.jvp(node, tangents, inputs, out)
        finally:
            state.accumulators = saved
        if tangent is not None:
            self._tangents[id(out)] = (out, tangent)


def _kept_parts(structure):
    """Flags in nest.flatten's order of `structure`'s leaves: whether a leaf is a part of a
    composite tensor that is not a number to differentiate (an IndexedSlices' indices, a
    SparseTensor's), which its tangent keeps as it is: the tangent of a sparse gradient is
    sparse at the same positions."""
    if hasattr(structure, "_tensor_components"):
        return [
            not convert.as_tensor(part).dtype.is_differentiable
            for part in structure._tensor_components()
        ]
    if isinstance(structure, dict):
        return [flag for key in nest.sorted_keys(structure) for flag in _kept_parts(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [flag for item in structure for flag in _kept_parts(item)]
    return [False]


def jvp(f, primals, tangents):
    """(f(*primals), its Jacobian-vector product along `tangents`), as jax.jvp: `primals`
    and `tangents` are sequences of the same length, shapes and dtypes.

    >>> y, t = tt.jvp(lambda x: x * x, [tt.constant(3.0)], [tt.constant(1.0)])
    >>> float(y), float(t)
    (9.0, 6.0)
    """
    primals = [convert.as_tensor(p) for p in primals]
    with ForwardAccumulator(primals, list(tangents)) as accumulator:
        result = f(*primals)
    return result, accumulator.jvp(result, unconnected_gradients=UnconnectedGradients.ZERO)


def _checked(primal, tangent):
    tangent = convert.as_tensor(tangent)
    if tuple(tangent.shape) != tuple(primal.shape) or tangent.dtype != primal.dtype:
        raise ValueError(
            f"ForwardAccumulator: a tangent of {tangent.dtype.name}{list(tangent.shape)} for a "
            f"primal of {primal.dtype.name}{list(primal.shape)}: they must match"
        )
    return tangent


def _stand_in(op, inputs, attrs, out):
    """A node for an eager op that no tape recorded: what its rules read (attributes and
    the inputs' shapes and dtypes)."""
    stand_ins = tuple(Node("input", (), {}, tuple(t.shape), t.dtype) for t in inputs)
    return Node(op.name, stand_ins, attrs, tuple(out.shape), out.dtype)


def _zeros_like(out, shape, dtype):
    """Zeros that are a value where `out` is one, and a graph node where it is symbolic (a
    tape differentiates with respect to them)."""
    attrs = {"shape": tuple(shape), "dtype": dtype, "value": 0}
    if out._value is None:
        return core.apply_symbolic(OPS["fill"], (), attrs)
    return zeros(shape, dtype)


def _transposed_vjp(op, node, tangents, inputs, out):
    """J t, as the gradient with respect to u of <J^T u, t> (J^T u: the op's gradient rule)."""
    parts = node.dtype.parts if node.dtype.is_tuple else [(out.shape, out.dtype)]
    us = [
        _zeros_like(out, shape, dtype) if dtype.is_differentiable else None
        for shape, dtype in parts
    ]
    watched = [u for u in us if u is not None]
    saved = [out if slot == OUT else inputs[slot] for slot in saved_slots(op, node)]
    with GradientTape() as tape:
        tape.watch(watched)
        g = TupleCotangent(us) if node.dtype.is_tuple else us[0]
        cotangents = op.grad(node, g, *saved)
        terms = [
            reduce_sum(c * t)
            for c, t in zip(cotangents, tangents)
            if c is not None and t is not None
        ]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
    grads = iter(tape.gradient(total, watched, unconnected_gradients=UnconnectedGradients.ZERO))
    # a tangent is dense: one that a gather read comes as the sparse rows of its gradient
    result = [convert.as_tensor(next(grads)) if u is not None else None for u in us]
    return TupleCotangent(result) if node.dtype.is_tuple else result[0]


class _CPathHold:
    """The C op path knows nothing of accumulators: while any is active (in any thread),
    every op takes the Python path, which propagates tangents."""

    def __init__(self):
        self._lock = threading.Lock()
        self._holds = 0
        self._was = None

    def hold(self):
        if core.fast_apply is None:
            return
        with self._lock:
            if self._holds == 0:
                self._was = core.fast_apply.set_enabled(False)
            self._holds += 1

    def release(self):
        if core.fast_apply is None:
            return
        with self._lock:
            self._holds -= 1
            if self._holds == 0:
                core.fast_apply.set_enabled(self._was)


_c_path = _CPathHold()
