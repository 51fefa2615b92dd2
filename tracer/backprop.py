"""Running gradients for a tape: prune, build the gradient graph, execute it through the op path.

Execution goes through `apply`, the path every op takes, so an outer tape that tracks the
values involved records the gradient computation, and higher orders follow.

A tape's structure seen for the first time is differentiated without a graph: its gradient
rules run on its own tensors, as TensorFlow's and PyTorch's eager tapes do. Building the
gradient graph costs several times that, and pays only when the graph runs again, so it is
built the second time a tape of the same structure asks for its gradient (a training loop's
second step), and every later step runs the cached graph.
"""

import collections

import numpy as np

from runtime.straight_line import straight_line
from tracer import collector
from tracer.context import location_override, numerics, state
from tracer.indexed_slices import IndexedSlices
from tracer.ir import user_location
from tracer.ops import core
from tracer.ops.core import apply, execute_graph, inline_graph
from tracer.ops.index_ops import CHECK_INDICES
from tracer.passes.gradient import Rows, SparseOutput, build_gradient, reverse_sweep, summed
from tracer.passes.over_the_tape import over_the_tape
from tracer.passes.prune import fed_sources, prune
from tracer.tensor import Tensor
from tracer.tracing import Trace


class PreparedGradient:
    """A gradient graph, and where its residuals are among a tape's saved values: for each
    of `grad.residuals`, the (position on the tape, slot) of the value that feeds it."""

    __slots__ = ("grad", "residual_sources")

    def __init__(self, grad, residual_sources):
        self.grad = grad
        self.residual_sources = residual_sources

    @property
    def source_outputs(self):
        return self.grad.source_outputs


# Both caches drop their oldest entry when full (first in, first out), and a hit does not
# reorder them: a hit then looks its key up once, and a tape's key is as long as the tape.
_CACHE_SIZE = 256
_gradient_cache = {}  # structure_key of a pruned graph -> GradientGraph
_recording_cache = {}  # tape_key(...) -> PreparedGradient
_seen_once = {}  # tape_key(...) -> None: differentiated once, eagerly, and not yet built

# A custom gradient's function is new at every call (its CustomGradient compares by
# identity), so an entry that holds one is found again only for the same tape (a persistent
# tape differentiated twice), while it keeps the function and what it captured alive: up to
# 256 captured activations. At most _CUSTOM_KEPT such entries stay in each cache.
_CUSTOM_KEPT = 4
_custom_entries = collections.deque()  # (cache, key) of such entries, oldest first


def gradients(recording, target_nodes, source_nodes, seed_values):
    """`tape.gradient`'s values: one Tensor (or None, when unconnected) per source.

    Eager, the first time the tape's key is seen, the rules run on the tape's tensors
    (`eager_gradient`); otherwise through the cached gradient graph (`gradient_graph`).
    A tape that holds a custom gradient is never remembered: its function is new at every
    call, so its key never comes again, and remembering it would keep what the function
    captured.
    """
    key = _key(recording, target_nodes, source_nodes)
    if key not in _recording_cache and state.trace is None and not state.building:
        if key not in _seen_once:
            swept = _swept(recording, source_nodes, target_nodes)
            if not any(node.op == "custom_gradient" for node in swept.nodes):
                _cache_put(_seen_once, key, None)
            return eager_gradient(recording, swept, target_nodes, source_nodes, seed_values)
        _seen_once.pop(key, None)
    return run_gradient(
        recording, gradient_graph(recording, target_nodes, source_nodes, key), seed_values
    )


def gradient_graph(recording, target_nodes, source_nodes, key=None):
    """Prune the tape to the paths from sources to targets, and build (or reuse) its gradient graph.

    Building runs every gradient rule symbolically; a training loop records the same
    structure every step, so graphs are cached: first by the tape's whole signature (no
    pruning, no walk over nodes), then by the structure of the pruned graph.
    """
    key = key or _key(recording, target_nodes, source_nodes)
    known = _recording_cache.get(key)
    if known is None:
        known = _prepare(recording, key, target_nodes, source_nodes)
    if state.trace is not None:
        state.trace.gradient_graphs.append(known.grad.graph)
    return known


def _key(recording, target_nodes, source_nodes):
    tracked = recording.tracked
    return tape_key(
        recording.signature,
        tuple(None if t is None else tracked[t] for t in target_nodes),
        tuple(None if s is None else tracked[s] for s in source_nodes),
    )


@collector.paused  # the sweep makes a tensor or two per node, while the tape's are all alive
def eager_gradient(recording, swept, target_nodes, source_nodes, seed_values):
    """The gradients of a tape's targets with respect to its sources, by calling each gradient
    rule of the graph `swept` (`_swept`) on the tensors the tape kept: every op runs at once,
    and no graph is left behind. A source's sum of rows (a gather's) is IndexedSlices, as
    the graph gives it."""
    reachable = {id(n) for n in swept.nodes}
    cotangents = {}
    for target, seed in zip(target_nodes, seed_values):
        if target is not None and id(target) in reachable:
            known = cotangents.get(id(target))
            cotangents[id(target)] = seed if known is None else known + seed
    tracked, saved = recording.tracked, recording.saved
    with location_override(state.location or user_location()):
        reverse_sweep(
            swept,
            cotangents,
            lambda node, op: saved[tracked[node]],
            structured=False,
            reachable=reachable,
            staying=fed_sources(swept, source_nodes),
        )
    gradients = [None if s is None else summed(cotangents, s) for s in source_nodes]
    return [
        IndexedSlices(g.values, g.indices, g.shape) if type(g) is Rows else g for g in gradients
    ]


@collector.paused  # building runs every rule, making a graph as large as the tape
def _prepare(recording, key, target_nodes, source_nodes):
    """The tape's gradient, built (or found by its structure: the pruned graph's, or the
    tape's key where nothing is pruned) and cached under `key`."""
    tracked = recording.tracked
    if _sources_are_the_watched(recording, source_nodes):
        # the whole tape (`_swept`), and its key as its structure's: a tape's signature
        # holds all that `structure_key` reads (the Recording's docstring), and more
        forward, structure = recording.graph(), ("whole tape", key)
    else:
        forward = prune(
            recording.graph(),
            [s for s in source_nodes if s is not None],
            [t for t in target_nodes if t is not None],
        )
        structure = structure_key(forward, target_nodes, source_nodes)
    grad = _gradient_cache.get(structure)
    if grad is None:
        built = over_the_tape(build_gradient(forward, target_nodes, source_nodes), forward)
        grad = _cache_put(_gradient_cache, structure, built)
    positions = [tracked[n] for n in forward.nodes]
    residual_sources = [(positions[at], slot) for _, at, slot in grad.residuals]
    known = _cache_put(_recording_cache, key, PreparedGradient(grad, residual_sources))
    if any(node.op == "custom_gradient" for node in forward.nodes):
        _custom_entries.extend([(_gradient_cache, structure), (_recording_cache, key)])
        while len(_custom_entries) > 2 * _CUSTOM_KEPT:
            cache, stale = _custom_entries.popleft()
            cache.pop(stale, None)
    return known


def tape_key(signature, targets, sources):
    """The `_recording_cache` key of a tape: its signature, and its targets' and sources'
    positions; a long signature's key hashes a sample of its entries (`SampledKey`)."""
    key = (tuple(signature), targets, sources)
    return key if len(key[0]) <= SampledKey.SAMPLED else SampledKey(key)


class SampledKey(tuple):
    """A key whose hash reads at most `SAMPLED` of its signature's entries, evenly spaced
    from the last one; equality (a tuple's) compares them all.

    A hit compares every entry anyway, and hashing all of them too cost as much again: on
    a 200-op tape, a twelfth of `tape.gradient`. Tapes that differ only between the sampled
    entries share a hash and are told apart by equality.
    """

    SAMPLED = 16

    __slots__ = ()

    def __hash__(self):
        entries, targets, sources = self
        step = len(entries) // self.SAMPLED + 1
        return hash((len(entries), targets, sources, *entries[::-step]))


def _cache_put(cache, key, value):
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.pop(next(iter(cache)), None)
    return value


def structure_key(graph, target_nodes, source_nodes):
    """Everything about a pruned forward graph that its gradient graph depends on.

    Ops, attributes, wiring, shapes, dtypes and source lines of its nodes; the shapes and
    dtypes of the values it reads from outside; and where the targets and sources sit.
    """
    position = {}
    parts = []
    for node in graph.nodes:
        inputs = tuple(
            position[id(i)] if id(i) in position else (i.shape, i.dtype.name) for i in node.inputs
        )
        attrs = tuple(node.attrs.items())
        parts.append((node.op, inputs, attrs, node.shape, node.dtype.name, node.location))
        position[id(node)] = len(position)
    targets = tuple(None if t is None else position.get(id(t)) for t in target_nodes)
    sources = tuple(None if s is None else position.get(id(s)) for s in source_nodes)
    return tuple(parts), targets, sources


def run_gradient(recording, prepared, seed_values):
    """Execute a prepared gradient graph with the tape's saved values and the given seeds.

    Returns one Tensor (or None, when unconnected) per source. Through the op path when
    something must see each op (a recording tape, a paused tape, a trace, check_numerics);
    otherwise as straight-line numpy, which computes the same values without the per-op cost.
    """
    grad = prepared.grad
    inputs = [value for value, node in zip(seed_values, grad.seeds) if node is not None]
    saved = recording.saved
    inputs += [saved[position][slot] for position, slot in prepared.residual_sources]
    values = execute_gradient(grad, inputs)
    return [_source_gradient(k, values) for k in grad.source_outputs]


def execute_gradient(grad, inputs):
    """The values (Tensors) of `grad.graph`'s outputs for its input Tensors."""
    arrays = [t._value for t in inputs]
    watched = state.tapes or state.paused or state.accumulators or numerics.enabled
    watched = watched or core.op_timer is not None  # the profiler times each op
    if type(state.trace) is Trace and not watched:
        return inline_graph(grad.graph, inputs)
    if watched or state.trace is not None or _any_symbolic(arrays):
        return execute_graph(grad.graph, inputs)
    if grad.straight_line is None:
        grad.straight_line = _make_straight_line(grad.graph)
    return [Tensor(v) for v in grad.straight_line(*arrays)]


@collector.paused  # a large gradient's program holds a tuple per step, as long-lived as it
def _make_straight_line(graph):
    return straight_line(graph)


def _any_symbolic(arrays):
    for a in arrays:
        if a is None:
            return True
    return False


def _swept(recording, source_nodes, target_nodes):
    """The graph an eager gradient sweeps: the whole tape when the sources are exactly its
    watched values (every node it recorded depends on one, so pruning would keep all that
    reach a target, and the sweep passes over the others without a cotangent), else the tape
    pruned."""
    if _sources_are_the_watched(recording, source_nodes):
        return recording.graph()
    return prune(
        recording.graph(),
        [s for s in source_nodes if s is not None],
        [t for t in target_nodes if t is not None],
    )


def _sources_are_the_watched(recording, source_nodes):
    """Whether the sources are exactly the tape's watched values: every node it recorded
    then depends on one, and the gradient rules pass over those that reach no target
    without a cotangent, so its gradient is the pruned tape's without pruning it."""
    sources = {id(s) for s in source_nodes if s is not None}
    return sources == {id(w) for w in recording.watched}


def _source_gradient(output, values):
    if output is None:
        return None
    if isinstance(output, SparseOutput):
        indices = values[output.indices]
        if indices._value is None:
            indices = _checked_rows(indices, output)
        return IndexedSlices(values[output.values], indices, output.dense_shape)
    return values[output]


def _checked_rows(indices, output):
    """The row indices of a traced sparse gradient, through a `check_indices` node that
    raises gather's IndexError for one out of range: the forward gather that would raise
    may be dead code there (a function that returns only the gradient). An eager gradient's
    indices are those the eager gather checked when it ran."""
    with location_override(output.location):
        return apply(CHECK_INDICES, (indices,), {"size": output.dense_shape[0]})


def ones_seed(target):
    return Tensor(np.ones(target.shape, dtype=target.dtype.as_numpy_dtype))
