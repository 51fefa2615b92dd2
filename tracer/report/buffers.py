"""The buffer plan of the final graph, as the report shows it: the workspace's blocks, the
values each holds and when (the first and last step that uses each), and the peak.

It is recomputed with the C backend's own planner (`codegen.lower.plan_buffers`), which is
deterministic: the same graph and updates give the plan the module was built with. A step
is one computed node (a kernel call, a structured op); a value lives from the step that
computes it to the last step that reads it, and its block is free for a later value after.
"""

import itertools

from codegen.lower import plan_buffers
from tracer.ir import dims
from tracer.ir.printer import format_type


class Value:
    """A value that lives in a workspace block (`block`, its index)."""

    def __init__(self, name, what, size, first, last, node, block):
        self.name = name  # as the final IR prints it: `%4`, `%4.1` (a result), `scratch of %7`
        self.what = what  # its type, or what the block holds
        self.size = size  # bytes: an int, or text where it is known only at run time
        self.first = first
        self.last = last
        self.node = node
        self.block = block


class Block:
    """A workspace block: where it starts (bytes), its size, and the values it holds."""

    def __init__(self, index, offset, size):
        self.index = index
        self.offset = offset
        self.size = size
        self.values = []


class BufferSummary:
    """`blocks` (each with its `values`, in step order), `steps` (the computed nodes),
    `workspace` (bytes: the blocks' sum), `peak` (the bytes of the blocks in use at the
    fullest step: at most the workspace, less where best fit leaves gaps), its step
    `peak_step` and the values live there (`at_peak`); the peak is None where sizes are
    known only at run time. `outputs`: values written straight into the caller's buffers."""

    def __init__(self, blocks, steps, workspace, outputs):
        self.blocks = blocks
        self.steps = steps
        self.workspace = workspace
        self.outputs = outputs
        self.peak = self.peak_step = None
        self.at_peak = []
        values = [v for b in blocks for v in b.values]
        if steps and all(isinstance(b.size, int) for b in blocks):
            # a block's values live at disjoint steps: a step uses each block once at most
            change = [0] * (len(steps) + 1)
            for v in values:
                change[v.first] += blocks[v.block].size
                change[v.last + 1] -= blocks[v.block].size
            used = list(itertools.accumulate(change[:-1]))
            self.peak_step = max(range(len(steps)), key=used.__getitem__)
            self.peak = used[self.peak_step]
            self.at_peak = [v for v in values if v.first <= self.peak_step <= v.last]
            self.at_peak.sort(key=lambda v: v.first)


def summarize(graph, updates, names):
    """The BufferSummary of `graph` run with `updates` (ConcreteFunction._updates), values
    named with `names` (the final IR's: id(node) -> '%k')."""
    plan = plan_buffers(graph, updates)
    layout = plan.layout
    steps = layout.computed
    step_of = {id(node): s for s, node in enumerate(steps)}
    last_use = {}
    for s, node in enumerate(steps):
        for value in node.inputs:
            last_use[layout._key(value)] = s  # the planner's own key: aliases, projections
    blocks = [Block(k, *place) for k, place in enumerate(zip(layout.offsets, layout.blocks))]
    by_id = {id(node): node for node in steps}
    for key, k in layout.placement.items():
        node, name, what, size = _described(key, by_id, names, layout.blocks[k])
        first = step_of[id(node)]
        last = first if isinstance(key, tuple) and key[0] == "scratch" else last_use.get(key, first)
        blocks[k].values.append(Value(name, what, size, first, last, node, k))
    for block in blocks:
        block.values.sort(key=lambda v: v.first)
    outputs = [names.get(id(o), "?") for o in graph.outputs if id(o) in plan.buffer_args]
    return BufferSummary(blocks, steps, layout.size, outputs)


def _described(key, by_id, names, block_size):
    """(node, name, what, bytes) of a placement key: id(node), (id(node), result index), or
    ("scratch", id(node)) for a structured op's scratch area."""
    if isinstance(key, int):
        node = by_id[key]
        return node, names.get(key, "?"), format_type(node), _bytes(node.shape, node.dtype)
    if key[0] == "scratch":
        node = by_id[key[1]]
        return node, f"scratch of {names.get(key[1], '?')}", f"{node.op}'s graphs", block_size
    node = by_id[key[0]]
    shape, dtype = node.dtype.parts[key[1]]
    what = f"{dtype.short_name}[{','.join(map(str, shape))}]"
    return node, f"{names.get(key[0], '?')}.{key[1]}", what, _bytes(shape, dtype)


def _bytes(shape, dtype):
    """The bytes of a value: an int, or its expression where a size is known at run time."""
    size = dims.size(shape) * dtype.itemsize
    return size if isinstance(size, int) else str(size)
