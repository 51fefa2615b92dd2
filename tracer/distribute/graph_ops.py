"""`allreduce` as an op of the IR, so that a whole Horovod-style training step compiles:
`DistributedGradientTape.gradient` inside `@tt.function` packs the gradients of each dtype
into one flat tensor, reduces it with one `allreduce` node and reads the gradients back as
views of the result.

The numpy kernel reduces through mpi4py; the C form calls the same Python function back
from the compiled module (codegen.forms.HostCall), on the node's buffer, in place.
Sum and Average are linear, so their gradient and tangent are the same reduction of the
cotangent or tangent (as Horovod's); Min, Max and Product have neither.
"""

import numpy as np

from codegen import forms
from runtime.host import HOST_FUNCTIONS
from tracer.distribute import agreement, reduction
from tracer.distribute.process import communicator
from tracer.ops import array_ops, structure_ops
from tracer.ops.batching import elementwise
from tracer.ops.core import apply
from tracer.ops.registry import primitive

HOST_FUNCTION = "tracer.distribute.allreduce"
OPS = {
    op.name: op
    for op in (reduction.Average, reduction.Sum, reduction.Min, reduction.Max, reduction.Product)
}


def reduce_flat(source, target, op):
    """The flat `source` combined over the processes, into `target` (the host function)."""
    agreement.agree("allreduce", (("op", op), ("tensors", agreement.shapes_of([source]))))
    if target.dtype in reduction.REDUCED_AS_FLOAT32:
        wire = source.astype(np.float32)
        reduction.reduce_into(wire, wire, OPS[op])
        target[...] = wire
    else:
        reduction.reduce_into(source, target, OPS[op])


HOST_FUNCTIONS[HOST_FUNCTION] = reduce_flat


def _infer(attrs, x):
    if x.dtype.name == "bool" or not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError(f"allreduce combines numbers, not {x.dtype.name} tensors")
    if attrs["op"] == "Average" and not x.dtype.is_floating:
        raise TypeError(
            f"the Average of {x.dtype.name} tensors is not a {x.dtype.name}; use op=Sum"
        )
    return x.shape, x.dtype


def _kernel(x, op):
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    reduce_flat(x.reshape(-1), out.reshape(-1), op)
    return out


def _linear(node, name):
    if node.attrs["op"] not in ("Sum", "Average"):
        raise NotImplementedError(
            f"the {name} of allreduce with op={node.attrs['op']} is not defined (Sum and "
            "Average only, as Horovod)"
        )


def _grad(node, g):
    _linear(node, "gradient")
    return (allreduce_node(g, node.attrs["op"]),)


def _jvp(node, tangents, inputs, out):
    _linear(node, "tangent")
    return allreduce_node(tangents[0], node.attrs["op"])


ALLREDUCE = primitive(
    "allreduce",
    _infer,
    grad=_grad,
    jvp=_jvp,
    batch=elementwise,  # each element is combined on its own: a batch axis changes nothing
    kernel=_kernel,
    c=forms.HostCall(lambda node: (HOST_FUNCTION, {"op": node.attrs["op"]})),
)


def allreduce_node(x, op):
    return apply(ALLREDUCE, (x,), {"op": op})


def grouped_allreduce_traced(tensors, op, prescale_factor=1.0, postscale_factor=1.0):
    """`tensors` of a trace combined with one allreduce node per dtype: each dtype's tensors
    flattened and concatenated (which fusion writes straight into one buffer), reduced, and
    sliced back to their shapes (views of the result). Tensors with a dimension known only
    at run time are reduced each on its own. A job of one process needs no reduction: its
    graph holds none."""
    for t in tensors:
        reduction.check_reducible(t.dtype.as_numpy_dtype, op)
    if communicator().size == 1:
        return [_scaled(t, prescale_factor * postscale_factor) for t in tensors]
    groups = {}
    for k, t in enumerate(tensors):
        packable = all(isinstance(d, int) for d in t.shape)
        groups.setdefault((t.dtype, packable) if packable else k, []).append(k)
    results = [None] * len(tensors)
    for positions in groups.values():
        scaled = [_scaled(tensors[k], prescale_factor) for k in positions]
        if len(positions) == 1:
            results[positions[0]] = _scaled(allreduce_node(scaled[0], op.name), postscale_factor)
            continue
        flat = [array_ops.reshape(t, [-1]) for t in scaled]
        fused = _scaled(allreduce_node(structure_ops.concat(flat, 0), op.name), postscale_factor)
        start = 0
        for k in positions:
            size = int(np.prod(tensors[k].shape, dtype=np.int64))
            results[k] = array_ops.reshape(fused[start : start + size], tensors[k].shape)
            start += size
    return results


def _scaled(tensor, factor):
    return tensor if factor == 1.0 else tensor * np.asarray(factor, tensor.dtype.as_numpy_dtype)
