"""`tt.vectorized_map`: a function of one element, run on a whole batch at once.

The function is traced once on symbolic elements (`subgraph.trace_function`); the vectorize
pass, with the batching rules that vectorized jacobians use, gives every value that
depends on the element a leading batch axis; the batched graph then runs through the op
path, so tapes record it and traced functions inline it. An op without a batching rule
makes it fall back to a loop over the elements, as TensorFlow's
`fallback_to_while_loop=True` does (here a Python loop, unrolled when traced).
"""

from tracer import nest, printing
from tracer.context import state
from tracer.control.subgraph import trace_function
from tracer.ops import array_ops, broadcast_ops, convert, structure_ops
from tracer.ops.core import execute_graph
from tracer.ops.registry import NotVectorizable
from tracer.passes.vectorize import vectorize


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """`fn` applied to each element of `elems` (tensors, or a nested structure of them,
    split along their first axis), the results stacked: `tt.stack([fn(e) for e in
    elems])`, computed as one batched program.

    >>> tt.vectorized_map(lambda row: tt.reduce_sum(row * row), tt.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([ 5., 25.], dtype=float32)
    """
    flat = [convert.as_tensor(e) for e in nest.flatten(elems)]
    sizes = {t.shape[0] if t.ndim else None for t in flat}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(
            "tt.vectorized_map: every tensor of elems needs the same first dimension, not "
            f"shapes {[tuple(t.shape) for t in flat]}"
        )
    (size,) = sizes
    elements = [array_ops.getitem(t, 0) for t in flat]  # (shapes and dtypes of one element)
    structure = nest.pack_sequence_as(elems, elements)
    if state.accumulators and state.trace is None and not state.building:
        # eagerly, a value fn reads from outside is a constant of the traced graph, and its
        # tangent would be lost: under forward mode, the loop (whose eager ops carry them)
        return _looped(fn, structure, flat, size)
    traced = trace_function(fn, [structure], "the function of tt.vectorized_map")
    arguments = traced.graph.inputs[: traced.n_arguments]
    try:
        if traced.assigned:  # a side effect (a print, an assignment) happens once per element
            effects = printing.side_effects(traced.assigned)
            raise NotVectorizable(f"the function of tt.vectorized_map {effects}, once per element")
        batched = vectorize(traced.graph, arguments, size)
    except NotVectorizable:
        if not fallback_to_while_loop:
            raise
        return _looped(fn, structure, flat, size)
    results = execute_graph(batched, [*flat, *traced.capture_tensors()])
    # an output that does not depend on the element is the traced graph's own node
    results = [
        _tiled(r, size) if out is traced.graph.outputs[k] else r
        for k, (r, out) in enumerate(zip(results, batched.outputs))
    ]
    return nest.pack_sequence_as(traced.structure, results)


def _tiled(value, size):
    """A result that does not depend on the element, once per element."""
    return broadcast_ops.broadcast_to(array_ops.expand_dims(value, 0), (size, *value.shape))


def _looped(fn, structure, flat, size):
    rows = [
        fn(nest.pack_sequence_as(structure, [array_ops.getitem(t, k) for t in flat]))
        for k in range(size)
    ]
    leaves = [nest.flatten(r) for r in rows]
    stacked = [structure_ops.stack([row[j] for row in leaves]) for j in range(len(leaves[0]))]
    return nest.pack_sequence_as(rows[0], stacked)
