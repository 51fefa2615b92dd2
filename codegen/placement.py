"""Values computed straight into the storage of the value that holds them.

A concat of parts that are contiguous runs of its result (`x[:1]` and `x[1:] * y[:-1]`
joined along their one axis), or the gradient of a slice that read one contiguous block
(zeros around the block), copies a value its graph computed just before into a larger one,
and the copy reads and writes every element once more. Where the part is a value of this
graph's own code, its kernel can write it at its place in the larger value's block
instead: the part is then a view of that block, which the op around it leaves alone
(codegen.forms.LoopNests's `holds`), and the block lives from the part's step.

`placed_parts` chooses such parts for one graph's layout (codegen/lower.py's `_Layout`):
the holder and the part each a single value of one step; the holder in a block of the
workspace or an output buffer of the caller's, never over an input's storage (which still
holds the input until the holder's own step); the part not a graph output, not stored
elsewhere, not placed in two holders, and not a holder of placed parts itself.
"""

from codegen.forms import LoopNests, Projection, Structured
from tracer.ir import LEAF_OPS, dims


def placed_parts(graph, computed, stored_elsewhere, output_buffers, target):
    """(id(part) -> (holder node, byte offset), id(holder) -> frozenset of the positions of
    its placed inputs), for the values of `graph` computed at their place in a larger
    value's storage. `computed` lists the graph's steps in order; `stored_elsewhere` the
    values that take no workspace block (`output_buffers` among them the caller's fresh
    output buffers, the only ones a holder may be in)."""
    steps = {id(node) for node in computed}
    steps |= {id(n) for n in graph.nodes if n.op == "get" and id(n.inputs[0]) in steps}
    outputs = {id(node) for node in graph.outputs}
    placed, positions = {}, {}
    for holder in computed:
        form = target.form_for(holder.op)
        if not isinstance(form, LoopNests) or form.holds is None or not _single(holder, target):
            continue
        if id(holder) in stored_elsewhere and id(holder) not in output_buffers:
            continue
        for position, offset in form.holds(holder).items():
            part = holder.inputs[position]
            if (
                id(part) not in steps
                or id(part) in placed
                or id(part) in positions
                or id(part) in outputs
                or id(part) in stored_elsewhere
                or not _single(part, target)
                or part.dtype != holder.dtype
                or not dims.is_known(part.shape)
            ):
                continue
            placed[id(part)] = (holder, offset * holder.dtype.itemsize)
            positions[id(holder)] = positions.get(id(holder), frozenset()) | {position}
    return placed, positions


def _single(node, target):
    """Whether `node` is one value that one step computes into a block of its own: not a
    leaf, not a structured op or its result, not a step of several results; a result of a
    fused kernel of several (`get`) is one."""
    form = target.form_for(node.op)
    if isinstance(form, Projection):
        kernel = node.inputs[0]
        return kernel.op == "fused" and getattr(node.dtype, "name", "") != "string"
    return (
        node.op not in LEAF_OPS
        and not isinstance(form, Structured)
        and not getattr(node.dtype, "is_tuple", False)
        and getattr(node.dtype, "name", "") != "string"
    )
