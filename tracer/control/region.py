"""Regions: the IR form of every construct that holds graphs, and what they share.

A region is one node whose op holds functions as graphs (`Subgraph` attributes): a loop's
condition and body, a cond's branches, a recomputed function. Its inputs are the values
it carries (a loop's variables) and then its captures, the values its graphs read from
outside (`subgraph.trace_function` finds them); its results are `get`s of the node. What
every region has from one place:

- tracing: `subgraph.trace_function` (captures, variables assigned or carried, prints);
- the gradient: written with tracer's ops and other regions, so it is differentiable again;
  forward mode transposes it (`TRANSPOSED_VJP`);
- dead code: the pass pipeline runs every pass inside held graphs (`run_nested`), and a
  region narrows itself to the results read (`narrow`, with `inputs_read`);
- batching: `region_batching.py`, by vectorizing its held graphs;
- running: `run_subgraph` on the interpreter; in C, the structured form's emitter writes
  the graphs' code where the region's skeleton (an `if`, a `for`) puts it, with
  `assignments` for the values that cross an iteration.

The constructs: loops.py (`tt.while_loop`), branches.py (`tt.cond`), recompute.py,
custom.py; built on them, scan.py, folds.py, case.py. docs/adding-a-region.md is the recipe
for a new one.
"""

import numpy as np

from runtime.straight_line import straight_line
from tracer.context import numerics, state
from tracer.ir import Subgraph, format_location, topological_closure, user_location
from tracer.ops import convert
from tracer.ops.core import execute_graph
from tracer.tensor import Tensor


def truth(pred, what):
    """The Python truth of a boolean scalar (tensor or Python bool), or a clear error."""
    pred = convert.as_tensor(pred)
    if pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"{what} must be a boolean scalar, not {pred.dtype.name}{list(pred.shape)}"
            f"{at_user_line()}"
        )
    return bool(pred)


def new_variables(known, assigned):
    """The variables of `assigned` not in `known`, each once (variables compare by identity)."""
    new = {}
    for variable in assigned:
        if all(variable is not k for k in known):
            new.setdefault(id(variable), variable)
    return list(new.values())


def union(*lists):
    """The nodes of `lists`, each once, in order of first appearance."""
    seen, union = set(), []
    for nodes in lists:
        for node in nodes:
            if id(node) not in seen:
                seen.add(id(node))
                union.append(node)
    return union


def static_int(value, what):
    """A Python int (or None) for an argument that must be known when tracing."""
    if value is None:
        return None
    known = convert.static_int(value)
    if known is None:
        raise TypeError(
            f"tt.while_loop: {what} must be known when the loop is traced{at_user_line()}"
        )
    return known


def open_scope(kind, name=None):
    """The name scope TensorFlow opens for a control-flow op of the graph being traced:
    `name` or `kind` ("while", "cond") under the current scope, made unique among those the
    graph opened ("while/", "while_1/", ...), so that summaries written in the op's graphs
    (run `in_scope`) are tagged as TF tags them ("while/loss")."""
    base = state.name_scope + (name or kind)
    opened = state.trace.scopes_opened if state.trace is not None else set()
    scope, count = base, 0
    while scope in opened:
        count += 1
        scope = f"{base}_{count}"
    opened.add(scope)
    return scope + "/"


def in_scope(fn, scope):
    """`fn`, run with `scope` (from `open_scope`) as the name scope."""

    def scoped(*args):
        saved = state.name_scope
        state.name_scope = scope
        try:
            return fn(*args)
        finally:
            state.name_scope = saved

    return scoped


def at_user_line():
    where = format_location(user_location())
    return f" (at {where})" if where else ""


_RUNNERS = {}  # Subgraph -> its straight-line function (equal graphs share one)


def run_subgraph(subgraph, values):
    """The values of a held graph's outputs, run as straight-line numpy; with check_numerics
    on, op by op, so that the first op of a loop's body or a branch to make a NaN or Inf is
    the one named, and the loop stops there (the `get` of the loop's result was named, after
    the whole loop had run)."""
    if numerics.enabled:
        results = execute_graph(subgraph.graph, [Tensor(np.asarray(v)) for v in values])
        return [t._value for t in results]
    run = _RUNNERS.get(subgraph)
    if run is None:
        if len(_RUNNERS) > 1024:
            _RUNNERS.clear()
        run = _RUNNERS[subgraph] = straight_line(subgraph.graph)
    return run(*values)


def held(attrs):
    """The (name, Subgraph) pairs of a region node's attributes, in order (a branch node's
    branches in the order its selector counts them)."""
    return [(key, value) for key, value in attrs.items() if isinstance(value, Subgraph)]


def selectors(attrs):
    """How many inputs of a branch node (branching.py) select its branch: 1 with several
    branches, 0 with one."""
    return 1 if len(held(attrs)) > 1 else 0


def inputs_read(graph, outputs):
    """The positions of `graph`'s inputs that `outputs` depend on."""
    reached = set(topological_closure(outputs))
    return {k for k, node in enumerate(graph.inputs) if node in reached}


def indented(lines, depth=1):
    return ["    " * depth + line for line in lines]


def assignments(site, targets, sources, parts):
    """memcpy statements that give each target the value at its source, all at once (a
    source that is another target is read before any target is written)."""
    lines, staged = [], []
    for target, source, part in zip(targets, sources, parts):
        if source == target:
            continue
        if source in targets:  # a loop variable's old value: copied aside first
            aside = site.scratch(*part)
            lines.append(f"memcpy({aside}, {source}, {site.bytes(*part)});")
            source = aside
        staged.append(f"memcpy({target}, {source}, {site.bytes(*part)});")
    return lines + staged
