"""Jacobians for GradientTape: the gradient graph run with one-hot seeds, one per row.

Vectorized (`experimental_use_pfor=True`, the default): the gradient graph is rewritten by
the vectorize pass so that all seeds go through it in one run (or in runs of at most
`parallel_iterations` rows, to bound memory). Looped: one run per row.

In one eager run, the seeds are a constant of the vectorized graph, which is then
simplified as a compiled jacobian is: the products with the one-hot seeds' zeros go (a
256x256 GEMM becomes a broadcast multiply), and the result is cached with the gradient
graph. It agrees with the GEMM for finite values; a NaN or Inf stays in the rows that
depend on it (see `tracer/passes/simplify.py`), as in a compiled jacobian.
"""

import numpy as np

from tracer.backprop import PreparedGradient, run_gradient
from tracer.context import state
from tracer.dtypes import as_dtype
from tracer.indexed_slices import IndexedSlices
from tracer.ir import Literal, Node
from tracer.ir.rewrite import rebuild, with_outputs
from tracer.ops import structure_ops
from tracer.ops.core import apply
from tracer.ops.index_ops import SCATTER_ADD
from tracer.passes.cse import eliminate_common_subexpressions
from tracer.passes.gradient import GradientGraph
from tracer.passes.simplify import simplify
from tracer.passes.vectorize import NotVectorizable, vectorize
from tracer.tensor import Tensor

PFOR_HINT = (
    "\nEncountered an exception while vectorizing the jacobian computation. "
    "Vectorization can be disabled by setting experimental_use_pfor to False."
)


def gradient_rows(rec, prepared, make_seeds, target, use_pfor, parallel_iterations):
    """Run the gradient graph once per seed in `make_seeds(target.shape, target.dtype)` (an
    array [rows, *target.shape]: one_hot_rows or per_example_rows).

    Returns, for each source, a Tensor [rows, *source.shape], or None where unconnected.
    """
    if (
        use_pfor
        and not parallel_iterations
        and state.trace is None
        and prepared.grad.seeds[0] is not None
    ):
        constant_seeds = _with_constant_seeds(prepared, make_seeds, target)
        if constant_seeds is not None:
            return [_dense(g, batched=True) for g in run_gradient(rec, constant_seeds, [])]
    seeds = make_seeds(target.shape, target.dtype)
    rows = seeds.shape[0]
    if not use_pfor:
        per_row = [run_gradient(rec, prepared, [Tensor(seed)]) for seed in seeds]
        return [
            _stack([_dense(row[k]) for row in per_row]) for k in range(len(prepared.source_outputs))
        ]
    chunk = rows if not parallel_iterations else max(1, int(parallel_iterations))
    parts = []
    for start in range(0, rows, chunk):
        block = seeds[start : start + chunk]
        batched = _vectorized(prepared, block.shape[0])
        parts.append(
            [_dense(g, batched=True) for g in run_gradient(rec, batched, [_seed_tensor(block)])]
        )
    return [
        None if parts[0][k] is None else structure_ops.concat([p[k] for p in parts], 0)
        for k in range(len(prepared.source_outputs))
    ]


def _seed_tensor(block):
    """The seeds as a Tensor; while tracing, marked as one-hot seeds in the graph, which lets
    the simplify pass drop the products with their zeros (and only with these)."""
    if state.trace is None:
        return Tensor(block)
    attrs = {"value": Literal(block), "one_hot_seeds": True}
    return Tensor(block, Node("const", (), attrs, block.shape, as_dtype(block.dtype)))


def _vectorized(prepared, size):
    """`prepared` with its gradient graph vectorized over `size` seeds (cached per size)."""
    grad = prepared.grad
    cached = grad.vectorized.get(size)
    if cached is None:
        seeds = [s for s in grad.seeds if s is not None]
        try:
            graph = vectorize(grad.graph, seeds, size)
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


def _with_constant_seeds(prepared, make_seeds, target):
    """`prepared` vectorized over all of its seeds, which it holds as a constant, and simplified;
    None when the simplified graph still reads the seeds (it would keep a rows x size array
    alive for nothing: they are then fed as an input, as in a chunked run)."""
    grad = prepared.grad
    key = (make_seeds, target.shape)
    if key not in grad.with_constant_seeds:
        seeds = make_seeds(target.shape, target.dtype)
        batched = _vectorized(prepared, seeds.shape[0]).grad
        (seed_input,) = batched.seeds
        attrs = {"value": Literal(seeds), "one_hot_seeds": True}
        constant = Node("const", (), attrs, seeds.shape, seed_input.dtype, seed_input.location)
        graph = rebuild(batched.graph, lambda node: constant if node is seed_input else node)
        graph = eliminate_common_subexpressions(simplify(graph))
        graph = with_outputs([i for i in graph.inputs if i is not seed_input], graph.outputs)
        reads_seeds = any(node.attrs.get("one_hot_seeds") for node in graph.nodes)
        grad.with_constant_seeds[key] = (
            None
            if reads_seeds
            else GradientGraph(graph, [None], batched.residuals, batched.source_outputs)
        )
    cached = grad.with_constant_seeds[key]
    return None if cached is None else PreparedGradient(cached, prepared.residual_sources)


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


def one_hot_rows(shape, dtype):
    """Seeds for a full jacobian: row i is 1 at element i of a tensor of `shape`."""
    size = int(np.prod(shape))
    return np.eye(size, dtype=dtype.as_numpy_dtype).reshape((size,) + tuple(shape))


def per_example_rows(shape, dtype):
    """Seeds for batch_jacobian: row j is 1 at element j of every example of `shape` [b, ...]."""
    batch, per_example = shape[0], int(np.prod(shape[1:]))
    eye = np.eye(per_example, dtype=dtype.as_numpy_dtype)
    return np.broadcast_to(eye[:, None, :], (per_example, batch, per_example)).reshape(
        (per_example,) + tuple(shape)
    )
