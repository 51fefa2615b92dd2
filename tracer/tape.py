"""GradientTape: records the ops run inside it that touch a watched value, and differentiates them.

Behaviour follows TensorFlow 2 (`tensorflow/python/eager/backprop.py`): see API.md and the
seed documents. What is recorded is an IR graph (`tape.ir()` prints it); `gradient` prunes
it to the paths from the sources to the targets, builds the gradient graph, and executes
it through the normal op path, so an enclosing tape records that computation too.
"""

import contextlib
import enum
import logging

from tracer import collector, dtypes, nest
from tracer import jacobian as jacobians
from tracer.backprop import gradient_graph, gradients, ones_seed
from tracer.config import settings
from tracer.context import state
from tracer.explain import UnconnectedGradientError, explain
from tracer.indexed_slices import IndexedSlices
from tracer.ir import Literal, Node, format_nodes, user_location
from tracer.ops import array_ops, math_ops, structure_ops
from tracer.recording import Recording
from tracer.tensor import Tensor, TensorLike, _from_python, convert_to_tensor
from tracer.variable import Variable

log = logging.getLogger(__name__)


class UnconnectedGradients(enum.Enum):
    """What `gradient` gives for a source the target does not depend on: None, or zeros."""

    NONE = "none"
    ZERO = "zero"


class GradientTape:
    """Records operations for automatic differentiation.

    >>> x = tt.constant(3.0)
    >>> with tt.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> print(g.gradient(y, x))
    tracer.Tensor(6.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._recording_state = None  # a Recording; None before entry and after a one-shot gradient
        self._recording = False
        self._released_variables = ()
        self._released = (
            None  # after a one-shot gradient: the recording without its values, for explain
        )

    # --- recording ----------------------------------------------------------------------

    def __enter__(self):
        self._push()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._recording:
            self._pop()

    def _push(self):
        if self._recording:
            raise ValueError(
                "Tape is still recording. This can happen if you try to re-enter an already-active tape."
            )
        if self._recording_state is None:
            self._recording_state = Recording()
        state.tapes.append(self)
        self._recording = True
        collector.pause()

    def _pop(self):
        if not self._recording:
            raise ValueError("Tape is not recording.")
        try:
            state.tapes.remove(self)
        finally:  # the collector comes back even for a tape popped in a wrong place
            self._recording = False
            collector.untrack_records(self._recording_state)
            collector.resume()

    def watch(self, tensor):
        """Ensure that `tensor` (a Tensor, a Variable, or a nested structure of them) is traced."""
        if self._recording_state is None:
            self._recording_state = Recording()
        for t in nest.flatten(tensor):
            if not isinstance(t, TensorLike):
                raise ValueError(
                    f"Passed in object of type {type(t).__name__} ({t!r}), not a tracer.Tensor or "
                    "tracer.Variable; convert it with tt.constant first"
                )
            if not t.dtype.is_differentiable:
                log.warning(  # as TensorFlow logs it
                    "The dtype of the watched tensor must be floating or complex (e.g. "
                    "tt.float32), got %s: its gradients will be None",
                    t.dtype.name,
                )
                continue
            if isinstance(t, Variable):
                self._watch_variable(t)
            else:
                self._recording_state.watch_node(watched_node(t))

    def _watch_variable(self, variable):
        self._recording_state.watch_node(variable._node)
        self._recording_state.variables[variable._unique_id] = variable

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording: nothing computed inside is recorded on this tape."""
        if self._recording_state is None:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._pop()
        state.paused.append(self)
        try:
            yield
        finally:
            state.paused.remove(self)
            self._push()

    def reset(self):
        """Clear everything recorded, as if the context were exited and entered with a new tape."""
        self._pop()
        self._recording_state = None
        self._push()

    def watched_variables(self):
        """The variables this tape watches, in order of their construction."""
        if self._recording_state is None:
            return self._released_variables
        variables = self._recording_state.variables
        return tuple(variables[k] for k in sorted(variables))

    def ir(self):
        """What the tape recorded, as IR text (one line per node, with the user's source line)."""
        if self._recording_state is None:
            return "# (nothing recorded: the tape was released or never entered)"
        rec = self._recording_state
        return format_nodes(rec.watched + rec.nodes)

    # --- differentiation ----------------------------------------------------------------

    def gradient(
        self,
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=UnconnectedGradients.NONE,
    ):
        """The gradient of `target` (summed over its elements and over nested targets) with
        respect to each of `sources`, in the structure of `sources`."""
        rec = self._start_differentiation("gradient")
        unconnected = _unconnected(unconnected_gradients)
        flat_targets = [_target_tensor(t) for t in nest.flatten(target)]
        flat_sources = _source_list(sources)
        seeds = _seeds(flat_targets, output_gradients)
        source_nodes, read_owners = _source_nodes(rec, flat_sources)
        grads = gradients(rec, [rec.tracked_node(t) for t in flat_targets], source_nodes, seeds)
        grads = _add_reads(grads, read_owners)
        grads = _seed_sources_that_are_targets(
            rec, grads, flat_sources, nest.flatten(target), seeds
        )
        if settings.strict_gradients and unconnected is UnconnectedGradients.NONE and None in grads:
            text = explain(self, rec, target, [s for s, g in zip(flat_sources, grads) if g is None])
            self._finish_differentiation()
            raise UnconnectedGradientError(f"no gradient (strict gradients are on):\n{text}")
        self._finish_differentiation()
        return nest.pack_sequence_as(sources, _fill_unconnected(grads, flat_sources, unconnected))

    def explain(self, target, sources):
        """Why `tape.gradient(target, sources)` is None for some sources: one line each, with
        the reason and the line of your code where it arises ('' when none is None).

        >>> print(tape.explain(y, [x0, x1]))
        x1:0: it is a Variable with trainable=False, which tapes do not watch; call tape.watch on it
        """
        rec = self._recording_state or self._released
        if rec is None:
            return "# nothing recorded: the tape was never entered"
        return explain(self, rec, target, sources)

    @collector.paused
    def jacobian(
        self,
        target,
        sources,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """d target[i...] / d source[j...] for each source, shaped target.shape + source.shape.

        Vectorized by default: the gradient graph runs once for all rows of the jacobian.
        """
        self._check_loop_allowed(experimental_use_pfor, "jacobian")
        rec = self._start_differentiation("jacobian")
        unconnected = _unconnected(unconnected_gradients)
        target = _target_tensor(target)
        flat_sources = _source_list(sources)
        source_nodes, read_owners = _source_nodes(rec, flat_sources)
        prepared = gradient_graph(rec, [rec.tracked_node(target)], source_nodes)
        rows = jacobians.gradient_rows(
            rec,
            prepared,
            "full",
            target,
            experimental_use_pfor,
            parallel_iterations,
        )
        rows = _add_reads(list(rows), read_owners)
        self._finish_differentiation()
        results = []
        for source, row in zip(flat_sources, rows):
            shape = target.shape + source.shape
            if row is None:
                zero = unconnected is UnconnectedGradients.ZERO
                results.append(array_ops.zeros(shape, source.dtype) if zero else None)
            else:
                results.append(array_ops.reshape(row, shape))
        return nest.pack_sequence_as(sources, results)

    @collector.paused
    def batch_jacobian(
        self,
        target,
        source,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """Per-example jacobians, shaped [b, y1.., x1..], for target[i] depending only on source[i]."""
        self._check_loop_allowed(experimental_use_pfor, "batch_jacobian")
        target = _target_tensor(target)
        (source,) = _source_list([source])
        if target.ndim < 2 or source.ndim < 2:
            raise ValueError(
                f"batch_jacobian needs target and source of rank 2 or more, got shapes "
                f"{target.shape} and {source.shape}"
            )
        if target.shape[0] != source.shape[0]:
            raise ValueError(
                f"Need first dimension of target shape ({target.shape}) and source shape "
                f"({source.shape}) to match."
            )
        rec = self._start_differentiation("batch_jacobian")
        _unconnected(unconnected_gradients)
        prepared = gradient_graph(rec, [rec.tracked_node(target)], [rec.tracked_node(source)])
        shape = target.shape + source.shape[1:]
        if prepared.source_outputs[0] is None:
            # NOTE: TensorFlow returns zeros here even for unconnected_gradients='none'.
            self._finish_differentiation()
            return array_ops.zeros(shape, source.dtype)
        (rows,) = jacobians.gradient_rows(
            rec,
            prepared,
            "per_example",
            target,
            experimental_use_pfor,
            parallel_iterations,
        )
        self._finish_differentiation()
        # rows: [y, b, x...] -> [b, y, x...] -> [b, y1.., x1..]
        perm = (1, 0) + tuple(range(2, rows.ndim))
        return array_ops.reshape(array_ops.transpose(rows, perm), shape)

    def _check_loop_allowed(self, use_pfor, method):
        if not use_pfor and not self._persistent and self._recording_state is not None:
            raise RuntimeError(
                f"GradientTape must be created with persistent=True to compute the {method} "
                "with eager execution enabled and with experimental_use_pfor set to False."
            )

    def _start_differentiation(self, method):
        if self._recording_state is None:
            raise RuntimeError(
                f"GradientTape.{method} can only be called once on non-persistent tapes "
                "(create the tape with persistent=True to call it more than once)."
            )
        if self._recording and not self._persistent:
            self._pop()
        return self._recording_state

    def _finish_differentiation(self):
        if not self._persistent:
            self._released_variables = self.watched_variables()
            self._released = self._recording_state
            self._released.saved = []  # the values go; the structure stays for explain
            self._recording_state = None


def watched_node(tensor):
    """The node a watched tensor is traced from: its own if a tape made it, else a new input;
    an eager value watched inside a traced function is the constant the graph reads it as
    (a new const node of its value would not be the one the tape watches)."""
    node = tensor._node
    if tensor._value is not None and state.trace is not None:
        if node is None or node.op != "const" or "value" not in node.attrs:
            attrs = {"value": Literal(tensor._value)}
            node = tensor._node = Node("const", (), attrs, tensor.shape, tensor.dtype)
        return node
    if node is None or node.op == "const":
        node = Node("input", (), {}, tensor.shape, tensor.dtype, user_location())
        tensor._node = node
    return node


def _unconnected(value):
    """`UnconnectedGradients(value)` without the enum's lookup for a member, which is a
    visible part of a scalar gradient's time."""
    return value if type(value) is UnconnectedGradients else UnconnectedGradients(value)


def _target_tensor(target):
    if isinstance(target, Variable):
        return Tensor(target._value, target._node)
    if not isinstance(target, TensorLike):
        raise ValueError(f"the target must be a Tensor or Variable, got {type(target).__name__}")
    return target


def _source_list(sources):
    flat = nest.flatten(sources)
    for s in flat:
        if not isinstance(s, TensorLike):
            raise ValueError(
                f"sources must be Tensors or Variables, got {type(s).__name__} ({s!r})"
            )
    return flat


def _source_nodes(rec, sources):
    """The tape's nodes of `sources`, then the reads after assigns in traced code of those
    that are Variables (`Variable._read_after_assign`), and for each read the position of
    its variable among `sources`."""
    nodes = [rec.tracked_node(s) for s in sources]
    owners = []
    if rec.variable_reads:
        for k, source in enumerate(sources):
            if isinstance(source, Variable):
                for node in rec.variable_reads.get(source._unique_id, ()):
                    nodes.append(node)
                    owners.append(k)
    return nodes, owners


def _add_reads(grads, owners):
    """The gradient of each source: its own node's plus its reads' (`_source_nodes`)."""
    total = grads[: len(grads) - len(owners)]
    for k, g in zip(owners, grads[len(total) :]):
        if g is not None:
            total[k] = g if total[k] is None else _sum_of_two(total[k], g)
    return total


def _sum_of_two(a, b):
    """a + b for gradients of one variable, IndexedSlices kept where both are."""
    if isinstance(a, IndexedSlices) and isinstance(b, IndexedSlices):
        i, j = a.indices, b.indices
        if i.dtype != j.dtype:  # (a gather by int32 ids and one by int64 ids)
            i, j = array_ops.cast(i, dtypes.int64), array_ops.cast(j, dtypes.int64)
        return IndexedSlices(
            structure_ops.concat([a.values, b.values], 0), structure_ops.concat([i, j], 0), a.shape
        )
    return math_ops.add(convert_to_tensor(a), convert_to_tensor(b))


def _seeds(targets, output_gradients):
    if output_gradients is None:
        return [ones_seed(t) for t in targets]
    flat = nest.flatten(output_gradients)
    if len(flat) != len(targets):
        raise ValueError(f"output_gradients has {len(flat)} entries for {len(targets)} targets")
    seeds = []
    for target, g in zip(targets, flat):
        if g is None:
            seeds.append(ones_seed(target))
            continue
        g = g._read() if isinstance(g, TensorLike) else Tensor(_from_python(g, target.dtype))
        if g.shape != target.shape:
            raise ValueError(
                f"an output gradient has shape {g.shape}, its target shape {target.shape}"
            )
        seeds.append(g)
    return seeds


def _seed_sources_that_are_targets(rec, grads, sources, targets, seeds):
    """A source that is itself a target, and that the tape does not track, gets that target's
    seed as its gradient, as in TensorFlow (`tape.gradient(v, v)` is 1 for a Variable `v`
    the tape never read); a tracked one already has it from the gradient graph."""
    for k, source in enumerate(sources):
        if grads[k] is not None or rec.tracked_node(source) is not None:
            continue
        matching = [seed for target, seed in zip(targets, seeds) if target is source]
        if matching:
            grads[k] = matching[0] if len(matching) == 1 else math_ops.add_n(matching)
    return grads


def _fill_unconnected(grads, sources, unconnected):
    if unconnected is UnconnectedGradients.NONE:
        return grads
    return [array_ops.zeros(s.shape, s.dtype) if g is None else g for g, s in zip(grads, sources)]
