"""Jacobians for GradientTape: the gradient graph run with one-hot seeds, one per row.

Vectorized (`experimental_use_pfor=True`, the default): the gradient graph is rewritten by
the vectorize pass so that all seeds go through it in one run (or in runs of at most
`parallel_iterations` rows, to bound memory). Looped: one run per row. The seeds are the
`one_hot_seeds` op (`tracer/ops/seed_ops.py`): kind "full" for `jacobian`, "per_example"
for `batch_jacobian`.

In one eager run, the seeds are a node of the vectorized graph, which is then simplified
as a compiled jacobian is: the products with the one-hot seeds' zeros go (a 256x256 GEMM
becomes a broadcast multiply), the seeds factor out of elementwise products (one rows x
size product where there were one per op), and the result is cached with the gradient
graph. It agrees with the GEMM for finite values; a NaN or Inf stays in the rows that
depend on it (see `seed_ops.py`), as in a compiled jacobian.
"""

import functools

from tracer.backprop import PreparedGradient, SparseOutput, run_gradient
from tracer.context import building_graph, state
from tracer.control.loops import while_loop
from tracer.indexed_slices import IndexedSlices
from tracer.ir.rewrite import rebuild, with_outputs
from tracer.ops import array_ops, index_ops, seed_ops, structure_ops
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.core import apply, apply_symbolic, graph_node_of
from tracer.ops.index_ops import SCATTER_ADD
from tracer.ops.registry import NotVectorizable
from tracer.passes.cse import eliminate_common_subexpressions
from tracer.passes.gradient import GradientGraph
from tracer.passes.simplify import simplify
from tracer.passes.vectorize import vectorize
from tracer.tensor import Tensor
from tracer.tensor_array import TensorArray

PFOR_HINT = (
    "\nEncountered an exception while vectorizing the jacobian computation. "
    "Vectorization can be disabled by setting experimental_use_pfor to False."
)


def gradient_rows(rec, prepared, kind, target, use_pfor, parallel_iterations):
    """Run the gradient graph once per row of the seeds of `kind` for `target`.

    Returns, for each source, a Tensor [rows, *source.shape], or None where unconnected.
    """
    if (
        use_pfor
        and not parallel_iterations
        and state.trace is None
        and prepared.grad.seeds[0] is not None
    ):
        in_graph, seed_values = _with_seeds_in_graph(prepared, kind, target)
        return [_dense(g, batched=True) for g in run_gradient(rec, in_graph, seed_values)]
    rows = seed_ops.seed_count(kind, target.shape)
    if not use_pfor and state.trace is not None and rows > 1:
        return _looped_in_trace(rec, prepared, kind, target, rows)
    if not use_pfor:
        per_row = [
            run_gradient(
                rec, prepared, [array_ops.reshape(_seeds(kind, target, r, 1), target.shape)]
            )
            for r in range(rows)
        ]
        return [
            _stack([_dense(row[k]) for row in per_row]) for k in range(len(prepared.source_outputs))
        ]
    chunk = rows if not parallel_iterations else max(1, int(parallel_iterations))
    parts = []
    for start in range(0, rows, chunk):
        count = min(chunk, rows - start)
        batched = _vectorized(prepared, count)
        seeds = _seeds(kind, target, start, count)
        parts.append([_dense(g, batched=True) for g in run_gradient(rec, batched, [seeds])])
    return [
        None if parts[0][k] is None else structure_ops.concat([p[k] for p in parts], 0)
        for k in range(len(prepared.source_outputs))
    ]


def _looped_in_trace(rec, prepared, kind, target, rows):
    """The rows as one `while_loop` (as TensorFlow's jacobian with pfor off in a graph): the
    compiled code holds the gradient graph once, whatever the number of rows, where one run
    per row would grow with it. Each row is written into a TensorArray per source."""
    connected = [k for k, out in enumerate(prepared.grad.source_outputs) if out is not None]

    def body(i, *arrays):
        grads = run_gradient(rec, prepared, [_seed_row(kind, target, i, rows)])
        return (i + 1, *[a.write(i, _dense(grads[k])) for a, k in zip(arrays, connected)])

    outputs = prepared.grad.graph.outputs
    arrays = [
        TensorArray(_dtype(prepared.grad.source_outputs[k], outputs), size=rows) for k in connected
    ]
    results = while_loop(lambda i, *_: i < rows, body, (0, *arrays), maximum_iterations=rows)
    stacked = dict(zip(connected, (a.stack() for a in results[1:])))
    return [stacked.get(k) for k in range(len(prepared.grad.source_outputs))]


def _dtype(output, outputs):
    """The dtype of a source's gradient, dense or IndexedSlices."""
    return outputs[output.values if isinstance(output, SparseOutput) else output].dtype


def _seed_row(kind, target, i, rows):
    """Seed row `i` (a tensor) of `kind` for `target`: a one in the i-th element of the
    target ("full"), or of each example ("per_example")."""
    one = index_ops.one_hot(i, rows, dtype=target.dtype)
    if kind == "per_example":
        return broadcast_to(array_ops.reshape(one, target.shape[1:]), target.shape)
    return array_ops.reshape(one, target.shape)


def _seeds(kind, target, start, count):
    """Rows `start` to `start + count` of the seeds: eagerly a value, kept for the next
    jacobian of the same shape (a training loop asks again at every step); while tracing
    always a node, which lets the simplify pass drop the products with their zeros."""
    attrs = seed_ops.seed_attrs(kind, target.shape, target.dtype, start, count)
    if state.trace is not None:
        return apply_symbolic(seed_ops.ONE_HOT_SEEDS, (), attrs)
    key = tuple(attrs.values())
    seeds = _EAGER_SEEDS.get(key)
    if seeds is None:
        seeds = apply(seed_ops.ONE_HOT_SEEDS, (), attrs)
        if len(_EAGER_SEEDS) >= _EAGER_SEEDS_KEPT:
            _EAGER_SEEDS.pop(next(iter(_EAGER_SEEDS)))
        _EAGER_SEEDS[key] = seeds
    return seeds


_EAGER_SEEDS = {}  # seed attributes -> eager Tensor; the oldest goes first
_EAGER_SEEDS_KEPT = 8


def _vectorized(prepared, size):
    """`prepared` with its gradient graph vectorized over `size` seeds (cached per size)."""
    grad = prepared.grad
    cached = grad.vectorized.get(size)
    if cached is None:
        seeds = [s for s in grad.seeds if s is not None]
        try:
            graph = _every_output_batched(vectorize(grad.graph, seeds, size), grad, size)
        except NotVectorizable as error:
            raise ValueError(str(error) + PFOR_HINT) from None
        new_inputs = dict(zip(map(id, grad.graph.inputs), graph.inputs))
        cached = GradientGraph(
            graph,
            [None if s is None else new_inputs[id(s)] for s in grad.seeds],
            grad.residuals,
            grad.source_outputs,
        )
        grad.vectorized[size] = cached
    return PreparedGradient(cached, prepared.residual_sources)


def _every_output_batched(graph, grad, size):
    """The vectorized `graph` of gradient graph `grad` whose outputs that do not depend on
    the seeds (a zero cotangent, as relu_grad's rule gives its output: the gradient graph's
    own nodes) are broadcast to the rows too, so that every gradient has them; the indices
    of sparse gradients, the same for every row, stay as they are."""
    indices = {o.indices for o in grad.source_outputs if isinstance(o, SparseOutput)}
    unbatched = [
        k
        for k, (new, old) in enumerate(zip(graph.outputs, grad.graph.outputs))
        if new is old and k not in indices
    ]
    if not unbatched:
        return graph
    outputs = list(graph.outputs)
    with building_graph():
        for k in unbatched:
            row = array_ops.expand_dims(Tensor(None, outputs[k]), 0)
            outputs[k] = graph_node_of(broadcast_to(row, (size, *outputs[k].shape)))
    return with_outputs(graph.inputs, outputs)


def _with_seeds_in_graph(prepared, kind, target):
    """`prepared` vectorized over all of its seeds and simplified with the seeds a node of
    it (their products with zeros drop, they factor out of elementwise products: see
    seed_ops.py), and the values to feed it: none when the simplified graph no longer reads
    the seeds, else the eager seeds (as a node, they would make a rows x size array at
    every run)."""
    grad = prepared.grad
    key = (kind, target.shape)
    rows = seed_ops.seed_count(kind, target.shape)
    if key not in grad.with_constant_seeds:
        batched = _vectorized(prepared, rows).grad
        (seed_input,) = batched.seeds
        attrs = seed_ops.seed_attrs(kind, target.shape, target.dtype, 0, rows)
        seeds = apply_symbolic(seed_ops.ONE_HOT_SEEDS, (), attrs)._node
        graph = rebuild(batched.graph, lambda node: seeds if node is seed_input else node)
        graph = eliminate_common_subexpressions(simplify(graph))
        is_seeds = functools.partial(seed_ops.same_seeds, seeds)
        if any(map(is_seeds, graph.nodes)):  # fed, as in a chunked run
            graph = rebuild(graph, lambda node: seed_input if is_seeds(node) else node)
            fed = [seed_input]
        else:
            graph = with_outputs([i for i in graph.inputs if i is not seed_input], graph.outputs)
            fed = [None]
        grad.with_constant_seeds[key] = GradientGraph(
            graph, fed, batched.residuals, batched.source_outputs
        )
    cached = grad.with_constant_seeds[key]
    seed_values = [] if cached.seeds[0] is None else [_seeds(kind, target, 0, rows)]
    return PreparedGradient(cached, prepared.residual_sources), seed_values


def _dense(gradient, batched=False):
    """Jacobians are dense, as in TensorFlow: an IndexedSlices row (or batch of rows) is summed out."""
    if not isinstance(gradient, IndexedSlices):
        return gradient
    if not batched:
        return gradient._densify()
    rows = gradient.values
    attrs = {"axis": 1, "shape": rows.shape[:1] + gradient.shape}
    return apply(SCATTER_ADD, (rows, gradient.indices), attrs)


def _stack(rows):
    if rows[0] is None:
        return None
    return structure_ops.stack(rows)
