"""Fusion: elementwise chains, the view ops that feed them and the reduction that ends them
become one `fused` node, whose body is a small graph the backends run as one loop.

    %1 = sin %0
    %2 = mul %0, %0                           %4 = fused[kernel=k_reduce_sum_add_sin_mul_4] %0
    %3 = add %1, %2                =>           %0: f32[4] = input[name='p0']
    %4 = reduce_sum[axis=(0,)] %3               %1 = sin %0 ... %4 = reduce_sum %3
                                                return %4

What fuses is what each op's record says (`OpDef.fusion`): elementwise ops and views are
computed inside the kernels that read them, and a reduction ends a kernel. Which values are
stored (the kernel roots): graph outputs, reductions, fusible values that
a non-fusible op (matmul, gather, ...) reads, and computed values that are broadcast into
a larger kernel. Every other elementwise value is recomputed inside each kernel that needs
it instead of being stored: memory traffic, not arithmetic, bounds these loops. Except for
a value that calls the math library (the target's cost hints say it is costly) and fits in the caches
(STORED_COSTLY_BYTES): computing it costs more than keeping it, so several kernels that
need it read it stored once. And
except for a value several kernels read whose computation is long (SHARED_CONE) or, small,
reads several other such values (RECURRENCE: an unrolled recurrence's state), which would
otherwise be recomputed from the recurrence's start in every kernel. A contiguous block of
a stored value (`x[t]`) is a root too: the C backend reads it through a pointer into that
value, so kernels that read different blocks are the same code.

A concat is a view too (`forms.Pieces`): the loop that reads it is cut where the input it
reads changes (codegen/loops.py). It is stored where a reduction would read it, directly or
through fused values (loops with accumulators are not cut), and it is no fusible op where a
size is known only when the code runs; a stored concat of stored values stays a concat, whose
computed parts are written straight into its storage (codegen/placement.py).

A view whose record says it `needs_stored_input` (a reshape that does more than add or drop
size-1 axes) is fused only when it reads a stored value (then it is an index remap of a
contiguous buffer); otherwise its input is made a root. Stored values of one shape whose
kernels read the same stored values are siblings: one kernel computes them all. So are a
reduction over every axis and the values of its input's shape that read the same stored
values (inputs and constants aside): a loss and its gradient over x are one loop over x.
And so are reductions over every axis of one shape that read only values computed before
the first of them: a kernel matrix's gradients with respect to each of its parameters are
one loop over its elements, with an accumulator each. And so are stored elementwise values
of one shape that only the last of them reads: an optimizer's new slots and the variable's
update that reads them are one loop, made where the update was, that writes all three.
Last, a large product of a short depth that one kernel reads row by row moves into that
kernel's body (tracer/passes/row_products.py).

Invariants: the result computes the same values; each fused body has one output (or, for
siblings, several of one shape, or full reductions of one shape first and values of that
shape, which `get` nodes take out); body inputs are `input` nodes standing for the fused node's
inputs, in order.
"""

import numpy as np

from codegen import forms
from codegen.string_handles import computes_on_strings
from codegen.targets import C_MODULE
from runtime.straight_line import straight_line
from tracer.ir import GraphAttribute, Node, dims
from tracer.ir.graph import LEAF_OPS, TupleType
from tracer.ir.rewrite import on_new_inputs, with_outputs
from tracer.ops.registry import OPS, STRING_OPS, primitive, unbatchable
from tracer.ops.tuple_ops import GET, TupleValue
from tracer.passes.row_products import products_in_rows


class Kernel(GraphAttribute):
    """A fused node's body graph (`kernel.body`), with its short deterministic name."""

    __slots__ = ("_program",)
    shown = True

    @property
    def body(self):
        return self.graph

    def program(self):
        """The body as a straight-line program of numpy kernels, made at its first run."""
        program = getattr(self, "_program", None)
        if program is None:
            program = self._program = straight_line(self.graph)
        return program


def _infer_fused(attrs, *inputs):
    outputs = attrs["kernel"].body.outputs
    if len(outputs) > 1:
        return (), TupleType([(out.shape, out.dtype) for out in outputs])
    return outputs[0].shape, outputs[0].dtype


def _fused_kernel(*inputs, kernel):
    """The body run op by op (the compiled backend runs it as one loop)."""
    with np.errstate(all="ignore"):
        results = kernel.program()(*inputs)
    return results[0] if len(results) == 1 else TupleValue(results)


FUSED = primitive(
    "fused",
    _infer_fused,
    batch=unbatchable("is made after gradients and jacobians are built"),
    kernel=_fused_kernel,
    c=forms.FusedBody(),
)


# Values up to this size that call the math library are stored, not recomputed, when
# several kernels read them: a second-level cache's worth, where reading a stored value back
# costs a fraction of a libm call per element.
STORED_COSTLY_BYTES = 1024 * 1024
COSTLY_CONE = 16  # the most values the kernel of a stored costly value may recompute
# A value that several kernels read is stored when computing it takes more values than this:
# a recurrence (the cell state of an LSTM step by step) recomputed from its start in every
# kernel that reads a step would make the work and the C quadratic in the number of steps.
SHARED_CONE = 32
# A small value is stored when its computation reads this many others that several kernels
# read (a recurrence's earlier states, not yet stored): each step's state is then stored
# every few steps, in a pattern that repeats, so unrolled steps are alike and share kernels.
RECURRENCE = 4
KERNEL_INPUTS = 64  # the most stored values one kernel reads
CHAINED_MEMBERS = 8  # the most values one kernel of chained siblings stores
READERS_WALK = 32  # the most values looked at to find what reads a chained sibling


_FUSION = {}  # op name -> its fusion kind (an op is declared once, and never removed)


def _fusion(node):
    try:
        return _FUSION[node.op]
    except KeyError:
        op = OPS.get(node.op)
        if op is None:
            return None
        _FUSION[node.op] = op.fusion
        return op.fusion


def is_fusible(node):
    """Elementwise ops and views are computed inside the kernels that read them; not those
    that compute on tt.string values (`==` or `+` of strings): a compiled module runs them
    in Python (codegen/string_handles.py)."""
    kind = _fusion(node)
    if kind != "elementwise" and kind != "view":
        return False
    if kind == "view" and _joins(node):  # a concat: read piecewise where every size is known
        return all(dims.is_known(v.shape) for v in (node, *node.inputs)) and (
            node.op not in STRING_OPS or not computes_on_strings(node)
        )
    return node.op not in STRING_OPS or not computes_on_strings(node)


def _is_view(node):
    return _fusion(node) == "view"


def _is_reduction(node):
    return _fusion(node) == "reduction"


def _needs_stored_input(node):
    op = OPS.get(node.op)
    return op is not None and op.needs_stored_input is not None and op.needs_stored_input(node)


def fuse(graph, target=C_MODULE):
    """`graph` fused for `target` (a codegen.targets.Target), whose cost hints say which
    values are costly, which views are pointers into their inputs, which reductions may be
    reassociated and which kernels check their elements."""
    consumers = _consumers(graph)
    roots, siblings = _roots(graph, target.cost_hints, consumers)
    chained = _chained_siblings(graph, roots, siblings, consumers, target.cost_hints)
    siblings.update(chained)
    # a chained group's kernel is made at its last member, when every value it reads is made
    later = {id(member) for group in chained.values() for member in group[:-1]}
    mapping = {}  # id(original node) -> its node in the fused graph
    kernels = {}  # each distinct kernel, once: an unrolled loop's steps share theirs
    for node in graph.nodes:
        if id(node) in mapping or id(node) in later:  # computed with a sibling
            continue
        if id(node) in roots:
            group = siblings.get(id(node), [node])
            if len(group) == 1 and _joins_stored_values(node, roots):
                mapping[id(node)] = on_new_inputs(node, mapping)  # its own kernel (placement)
                continue
            fused = _fused_node(group, roots, mapping, kernels)
            if len(group) == 1:
                mapping[id(node)] = fused
                continue
            for k, member in enumerate(group):  # the kernel's results, taken out by `get`
                attrs = {"index": k}
                mapping[id(member)] = Node(
                    GET.name, (fused,), attrs, member.shape, member.dtype, member.location
                )
        elif not is_fusible(node):
            mapping[id(node)] = on_new_inputs(node, mapping)
        # other fusible nodes are recomputed inside the kernels that read them
    fused = with_outputs(graph.inputs, [mapping.get(id(o), o) for o in graph.outputs])
    return products_in_rows(fused, target.cost_hints)


def _joins_stored_values(node, roots):
    """Whether `node` is a concat of stored values only: it stays a concat, whose kernel
    copies what is not computed in its storage (codegen/placement.py)."""
    return _joins(node) and all(id(i) in roots or not is_fusible(i) for i in node.inputs)


def _consumers(graph):
    """id(node) -> the nodes that read it."""
    consumers = {}
    for node in graph.nodes:
        for inp in node.inputs:
            consumers.setdefault(id(inp), []).append(node)
    return consumers


def _roots(graph, hints, consumers):
    """ids of the nodes that become fused kernels (their values are stored)."""
    outputs = {id(o) for o in graph.outputs}
    roots = set()
    for node in graph.nodes:
        if _is_reduction(node) and any(is_fusible(i) for i in node.inputs):
            roots.add(id(node))
        elif is_fusible(node) and (
            id(node) in outputs
            or any(not is_fusible(c) and not _is_reduction(c) for c in consumers.get(id(node), ()))
            or _broadcast_into_more(node, consumers)
        ):
            roots.add(id(node))
    roots |= {id(node) for node in graph.nodes if _is_block_of_stored(node, roots, hints)}
    roots |= _pieces_stored(graph, consumers)
    roots |= _shared(graph, consumers, roots, hints)
    roots |= _bounded_inputs(graph, roots)
    changed = True
    while changed:  # a view that can only read a stored value (a reshape that reorders) gets one
        changed = False
        for node in graph.nodes:
            if _needs_stored_input(node) and (
                id(node) in roots or _reaches_root(node, consumers, roots)
            ):
                (source,) = node.inputs
                if is_fusible(source) and id(source) not in roots:
                    roots.add(id(source))
                    changed = True
    return roots, _siblings(graph, roots, hints)


def _pieces_stored(graph, consumers):
    """ids of the concats a reduction would read, directly or through values computed in
    its kernel: a fused loop's loops are cut where a concat's input changes only where they
    have no accumulators. (Through any fusible value, stored or not, as the roots are not
    all known yet: one pass over the graph, from its end.) A concat of sizes known only
    when the code runs is no fusible op at all (`is_fusible`)."""
    feeds = set()  # ids of the fusible values a reduction reads through fusible values
    for node in reversed(graph.nodes):
        if any(_is_reduction(r) or id(r) in feeds for r in consumers.get(id(node), ())):
            if is_fusible(node):
                feeds.add(id(node))
    return {id(node) for node in graph.nodes if id(node) in feeds and _joins(node)}


def _reads_pieces(root, roots):
    """Whether the kernel of `root` would read a concat piecewise (a value computed inside
    it joins others)."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if _joins(node):
            return True
        for value in node.inputs:
            if id(value) not in seen and id(value) not in roots and is_fusible(value):
                seen.add(id(value))
                stack.append(value)
    return False


def _shared(graph, consumers, roots, hints):
    """ids of the values that more than one kernel would recompute and that are better stored:
    costly ones small enough to keep; small ones computed from RECURRENCE or more shared
    values (a recurrence: each step's state is read by its own outputs and by the next step);
    and any whose computation takes more than SHARED_CONE values. A stored value's kernel
    recomputes the values it reads that are not stored themselves: a costly one is stored
    only where those are few (COSTLY_CONE), or a chain of cheap values between costly ones
    would be recomputed from its start in every kernel."""
    # id(node) -> ids of the kernels that compute it if it is not stored, two at most: what
    # matters is whether several do, and whole sets would grow with a long chain's length
    kernels = {}
    for node in reversed(graph.nodes):
        found = set()
        for consumer in consumers.get(id(node), ()):
            if len(found) > 1:
                break
            if id(consumer) in roots:
                found.add(id(consumer))
            elif is_fusible(consumer):
                found |= kernels[id(consumer)]
        kernels[id(node)] = found if len(found) < 3 else set(sorted(found)[:2])
    stored = set()
    for node in graph.nodes:  # earliest first: a value stored ends the cones of later ones
        if id(node) in roots or len(kernels[id(node)]) < 2 or not is_fusible(node):
            continue
        cone = _cone(node, roots, stored, SHARED_CONE)
        if (
            len(cone) > SHARED_CONE
            or (
                _is_small(node, known=True)
                and _shared_inside(cone - {id(node)}, kernels) >= RECURRENCE
            )
            or (hints.is_costly(node) and _is_small(node) and len(cone) <= COSTLY_CONE)
        ):
            stored.add(id(node))
    return stored


def _bounded_inputs(graph, roots):
    """ids of the values stored so that no kernel reads more than KERNEL_INPUTS stored
    values: a sum of thousands of terms (a weight's gradient over an unrolled loop's steps)
    would be one kernel of thousands of parameters, which compilers take minutes over.
    Where a value would read too many, the input that brings the most is stored; the sum
    becomes a chain of kernels alike, which the C backend writes once."""
    reads, stored = {}, set()  # id(value computed in a kernel) -> ids of the stored values it reads

    def gathered(node):
        found = set()
        for value in node.inputs:
            if id(value) in reads and id(value) not in roots and id(value) not in stored:
                found |= reads[id(value)]
            elif value.op != "const" or value.shape:
                found.add(id(value))
        return found

    for node in graph.nodes:
        if not (is_fusible(node) or _is_reduction(node)):
            continue
        found = gathered(node)
        while len(found) > KERNEL_INPUTS:
            computed = [
                v
                for v in node.inputs
                if id(v) in reads and id(v) not in roots and id(v) not in stored
            ]
            if not computed:
                break
            stored.add(id(max(computed, key=lambda v: len(reads[id(v)]))))
            found = gathered(node)
        reads[id(node)] = found
    return stored


def _is_block_of_stored(node, roots, hints):
    """Whether `node` is a view that is one contiguous block of a stored value (x[t] of an
    input): the C backend reads it through a pointer into that value, so the kernels that
    read it are the same code whatever the block (the steps of an unrolled loop share them)."""
    if hints.block_offset(node) is None:
        return False
    if _size(node.shape) < 2:  # a scalar stays in the kernels that read it, with its siblings
        return False
    (source,) = node.inputs
    return not is_fusible(source) or id(source) in roots


def _siblings(graph, roots, hints):
    """id(node) -> its group, for the stored elementwise values of one shape and type whose
    kernels read the same stored values (sin(x) and cos(x); the two columns of a stack): one
    kernel computes the group, in one loop that reads its inputs once, computes what the
    values share once, and where a C compiler makes one `sincos` call of a sin and a cos.
    Kernels with the same inputs cannot depend on each other. Graph outputs stay alone."""
    outputs = {id(o) for o in graph.outputs}
    groups = {}
    for node in graph.nodes:
        if id(node) in roots and id(node) not in outputs and is_fusible(node):
            if _is_block_of_stored(node, roots, hints):
                continue  # a pointer into its source, not computed
            key = (_sources(node, roots), node.shape, node.dtype)
            groups.setdefault(key, []).append(node)
    siblings = {id(n): group for group in groups.values() if len(group) > 1 for n in group}
    siblings.update(_reduction_siblings(graph, roots, siblings, hints))
    return siblings


def _reduction_siblings(graph, roots, siblings, hints):
    """id(node) -> its group, for a reduction over every axis and the elementwise values of
    its input's shape computed from the same stored values (leaves aside): a loss and its
    gradient, sum(f(x)) and f'(x), in one loop that computes what they share once, instead
    of two that each call the math library. The reduction comes first in its group; graph
    outputs may be in it (the kernel writes them to their buffers). Stored values other than
    leaves (inputs, constants) that one reads must be read by the other, so that neither
    kernel depends on the other."""
    reductions = [
        node
        for node in graph.nodes
        if id(node) in roots
        and id(node) not in siblings
        and _is_full_reduction(node)
        and _vectorizes(node, hints)
        and not _may_fail(node, roots, hints)
    ]
    shapes = {node.inputs[0].shape for node in reductions}
    by_shape = {}  # (shape, stored values read, leaves aside) -> elementwise roots
    for node in graph.nodes:
        if (
            node.shape in shapes
            and id(node) in roots
            and id(node) not in siblings
            and is_fusible(node)
            and not _is_block_of_stored(node, roots, hints)
        ):
            key = (node.shape, _sources(node, roots, leaves=False))
            by_shape.setdefault(key, []).append(node)
    groups = []
    for node in reductions:
        key = (node.inputs[0].shape, _sources(node, roots, leaves=False))
        group, read = [node], set(_sources(node, roots))
        for member in by_shape.pop(key, ()):
            more = read | _sources(member, roots)
            if (
                len(more) <= KERNEL_INPUTS
                and not _may_fail(member, roots, hints)
                and not _reads_pieces(member, roots)
            ):
                group.append(member)  # the leaves they read differ
                read = more
        groups.append((group, read))
    merged = _merged(graph, groups, hints)
    return {id(m): group for group in merged if len(group) > 1 for m in group}


def _merged(graph, groups, hints):
    """The groups of `_reduction_siblings`, each (a reduction over every axis then values of
    its input's shape, the ids of what they read), with those over one shape merged where
    every value the merged kernel reads comes before its first member in the graph: several
    sums over the same elements (a kernel matrix's gradients with respect to each of its
    parameters) then read those elements once and compute what they share once, one
    accumulator each. The merged group holds its reductions first, then the other values. A
    value read by the kernel cannot depend on a member, since it comes before all of them.
    A max or min keeps a loop of its own (`hints.reruns_in_order`)."""
    position = {id(node): k for k, node in enumerate(graph.nodes)}
    merged = {}  # (shape of the elements summed) -> [reductions, others, values read, first]
    for group, read in groups:
        reduction, others = group[0], group[1:]
        if hints.reruns_in_order(reduction):
            yield group
            continue
        first = min(position[id(member)] for member in group)
        key = reduction.inputs[0].shape
        current = merged.get(key)
        if current is not None:
            reductions, values, sources, start = current
            joined = sources | read
            begin = min(start, first)
            if len(joined) <= KERNEL_INPUTS and all(
                position.get(value, begin) < begin for value in joined
            ):
                merged[key] = [reductions + [reduction], values + others, joined, begin]
                continue
            yield reductions + values
        merged[key] = [[reduction], others, read, first]
    for reductions, values, _, _ in merged.values():
        yield reductions + values


def _chained_siblings(graph, roots, siblings, consumers, hints):
    """id(node) -> its group, for stored elementwise values of one shape and type that only
    the last of them reads (an optimizer's update of a variable and its slots: the new slot
    `m' = b*m + (1-b)*g` is stored, as the slot's value, and read by the variable's update
    `x' = x - r*m'/(sqrt(v')+e)` alone): one kernel computes them all in one loop that reads
    each input once, keeps in registers the values it also stores for the one that reads
    them, and is one parallel loop instead of several. Graph outputs may be in it (each is
    written to its buffer).

    A group is a set of such values joined by what reads what, in which nothing but the
    last (in graph order) is read by a kernel or op outside it: its kernel can then run at
    the last, where `fuse` makes it, after what it reads and before what reads it. A
    recurrence's states, which its later steps read, join in groups longer than
    CHAINED_MEMBERS, which stay a kernel each (shared by the steps); nor may a group read
    more than KERNEL_INPUTS stored values, as one kernel. The members come in graph order."""
    values = {id(n): n for n in graph.nodes if _chains(n, roots, siblings, hints)}
    readers, parent, inside = {}, {k: k for k in values}, {}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for key, node in values.items():
        readers[key] = _readers(node, consumers, roots, values, inside)
        for r in readers[key] or ():
            parent[find(r)] = find(key)
    groups = {}
    for key in values:  # in graph order
        groups.setdefault(find(key), []).append(values[key])
    chained = {}
    for group in groups.values():
        if 1 < len(group) <= CHAINED_MEMBERS and _chain_allowed(group, readers, roots, hints):
            chained.update((id(m), group) for m in group)
    return chained


def _chains(node, roots, siblings, hints):
    """Whether `node` may be in a chained group: a stored elementwise value computed by a
    loop of its own (not a pointer into another value, nor one of other siblings)."""
    return (
        id(node) in roots
        and id(node) not in siblings
        and _fusion(node) == "elementwise"
        and is_fusible(node)
        and not _is_block_of_stored(node, roots, hints)
    )


def _readers(node, consumers, roots, values, inside):
    """ids of the kernels (stored values) and other ops that read the stored value `node`,
    directly or through values computed inside kernels, where all are `values` of its shape
    and type, at most CHAINED_MEMBERS; else None (also where finding them takes more than
    READERS_WALK values: a value that many computed values read is no optimizer slot).
    `inside` keeps, by id, whether a value is computed inside the kernels that read it."""
    found, seen, stack = set(), set(), [node]
    while stack:
        for consumer in consumers.get(id(stack.pop()), ()):
            if id(consumer) in seen:
                continue
            if len(seen) == READERS_WALK:
                return None
            seen.add(id(consumer))
            computed_inside = inside.get(id(consumer))
            if computed_inside is None:
                computed_inside = id(consumer) not in roots and is_fusible(consumer)
                inside[id(consumer)] = computed_inside
            if not computed_inside:
                value = values.get(id(consumer))
                if value is None or len(found) == CHAINED_MEMBERS:
                    return None
                if value.shape != node.shape or value.dtype != node.dtype:
                    return None
                found.add(id(consumer))
            else:
                stack.append(consumer)
    return found


def _chain_allowed(group, readers, roots, hints):
    """Whether one kernel at the last member of `group` (in graph order) can compute it: the
    others read by members alone, at most KERNEL_INPUTS stored values read, and no member's
    kernel checking its elements (such a loop runs in order on one thread)."""
    members = {id(m) for m in group}
    if not all(readers[id(m)] is not None for m in group[:-1]):
        return False
    read = set().union(*(_sources(m, roots) for m in group)) - members
    return len(read) <= KERNEL_INPUTS and not any(_may_fail(m, roots, hints) for m in group)


def _is_full_reduction(node):
    axes = node.attrs.get("axis")
    return (
        _is_reduction(node)
        and axes is not None
        and set(axes) == set(range(len(node.inputs[0].shape)))
        and node.inputs[0].shape
        and is_fusible(node.inputs[0])
    )


def _vectorizes(reduction, hints):
    """Whether the reduction's loop is vectorized and shared by threads: its values may add
    up in any order (max and min too: codegen/targets.py's `reassociates`; not complex
    values). Values that join it lose their own loop's vectors and threads where it has
    none."""
    return hints.reassociates(reduction) and not reduction.dtype.is_complex


def _may_fail(root, roots, hints):
    """Whether the kernel of `root` checks its elements (an integer pow's negative exponent):
    such a loop runs in order on one thread, and so would every value that joined it."""
    seen, stack = {id(root)}, [root]
    while stack:
        node = stack.pop()
        if hints.may_fail(node):
            return True
        for value in node.inputs:
            if id(value) not in seen and is_fusible(value) and id(value) not in roots:
                seen.add(id(value))
                stack.append(value)
    return False


def _sources(root, roots, leaves=True):
    """ids of the stored values and (with `leaves`) the leaves the kernel of `root` reads (as
    _fused_node builds it: scalar literals are part of the body)."""
    found, seen, stack = set(), {id(root)}, [root]
    while stack:
        for value in stack.pop().inputs:
            if id(value) in seen:
                continue
            seen.add(id(value))
            if is_fusible(value) and id(value) not in roots and value.op != "const":
                stack.append(value)
            elif value.op not in LEAF_OPS or (leaves and (value.op != "const" or value.shape)):
                found.add(id(value))
    return frozenset(found)


def _cone(node, roots, stored, limit):
    """ids of the fused values computing `node` takes (itself and the values it reads that
    are not `stored`), up to `limit` + 1 of them."""
    seen, stack = {id(node)}, [node]
    while stack and len(seen) <= limit:
        for value in stack.pop().inputs:
            kept = id(value) in roots or id(value) in stored
            if id(value) not in seen and not kept and is_fusible(value):
                seen.add(id(value))
                stack.append(value)
    return seen


def _shared_inside(cone, kernels):
    return sum(1 for k in cone if len(kernels[k]) > 1)


def _is_small(node, known=False):
    """Whether a value fits in the caches (STORED_COSTLY_BYTES): reading it back is cheap.
    With `known`, a value whose size is known only at run time is not."""
    if known and not all(isinstance(size, int) for size in node.shape):
        return False
    return _size(node.shape) * node.dtype.itemsize <= STORED_COSTLY_BYTES


def _broadcast_into_more(node, consumers):
    """Whether a computed value is read by a kernel with more elements than it has, directly
    or through views (a transpose, then a reshape, then a broadcasting mul).

    Recomputing it there would repeat its work for every element it is broadcast to (a
    tanh over 256 values, broadcast into a 256x256 kernel, would run 65536 times), so it is
    stored once instead. View ops cost nothing to repeat and stay fused.
    """
    if _is_view(node):
        return False
    readers = [(reader, _size(node.shape)) for reader in consumers.get(id(node), ())]
    while readers:
        reader, size = readers.pop()
        if not is_fusible(reader):
            continue
        if _joins(reader):  # a concat reads each element of its parts once
            readers.extend((r, _size(reader.shape)) for r in consumers.get(id(reader), ()))
            continue
        if _size(reader.shape) > size:
            return True
        if _is_view(reader):
            readers.extend((r, size) for r in consumers.get(id(reader), ()))
    return False


def _joins(node):
    """Whether `node` joins its inputs side by side (a concat: forms.Pieces)."""
    return isinstance(forms.C_FORMS.get(node.op), forms.Pieces)


def _size(shape):
    """The number of elements, as a guess where dimensions are unknown (for decisions only)."""
    size = dims.size(shape)
    return size.estimate() if isinstance(size, dims.Dim) else size


def _reaches_root(node, consumers, roots):
    """Whether `node` ends up inside some kernel (it feeds a root through fusible ops)."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        for c in consumers.get(id(current), ()):
            if id(c) in seen:
                continue
            seen.add(id(c))
            if id(c) in roots:
                return True
            if is_fusible(c):
                stack.append(c)
    return False


def _fused_node(group, roots, mapping, kernels):
    """The `fused` node computing the values of `group` (one root, or siblings) from stored
    values, with its body graph (the equal one in `kernels` where there is one: an unrolled
    loop's many fused nodes share a few distinct bodies); of a TupleType where it computes
    several."""
    params, external, body = {}, [], {}
    members = {id(root) for root in group}

    def internal(node):
        return id(node) in members or (
            is_fusible(node) and id(node) not in roots and node.op != "const"
        )

    # Walk the nodes the root needs (an explicit stack: bodies can be thousands deep),
    # copying each after its inputs.
    stack = list(group)
    while stack:
        node = stack[-1]
        if id(node) in body:
            stack.pop()
            continue
        if internal(node):
            missing = [i for i in node.inputs if id(i) not in body]
            if missing:
                stack.extend(missing)
                continue
            inputs = tuple(body[id(i)] for i in node.inputs)
            body[id(node)] = Node(
                node.op, inputs, node.attrs, node.shape, node.dtype, node.location
            )
        elif node.op == "const" and not node.shape and "value" in node.attrs:
            body[id(node)] = node  # scalar literals stay in the body
        else:
            source = mapping.get(id(node), node)
            if id(source) not in params:
                params[id(source)] = Node(
                    "input", (), {"name": f"p{len(external)}"}, node.shape, node.dtype
                )
                external.append(source)
            body[id(node)] = params[id(source)]
        stack.pop()
    inputs = [params[id(s)] for s in external]
    body_graph = with_outputs(inputs, [body[id(root)] for root in group])
    root = group[0]
    kernel = Kernel(body_graph, _kernel_name(body_graph, root))
    kernel = kernels.setdefault(kernel, kernel)
    shape, dtype = _infer_fused({"kernel": kernel})
    return Node("fused", tuple(external), {"kernel": kernel}, shape, dtype, root.location)


def _kernel_name(body, root):
    """A short, deterministic, informative name: k_<ops in order>_<shape>."""
    ops = [root.op]
    for node in body.nodes:
        if node.op not in ("input", "const") and node.op not in ops:
            ops.append(node.op)
    shape = "x".join(map(str, root.inputs[0].shape if _is_reduction(root) else root.shape)) or "1"
    return "k_" + "_".join(ops[:6]) + f"_{shape.translate(_IN_NAMES)}"


# a shape's text in a C name: `(d0 + 1)x3` as d0p1x3, `2*d0` as 2td0
_IN_NAMES = str.maketrans({"+": "p", "-": "m", "*": "t", "/": "d", " ": None, "(": None, ")": None})
