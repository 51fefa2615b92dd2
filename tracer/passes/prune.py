"""Prune: keep only the nodes on some path from a source to a target.

    sources {x}, targets {z}
    %0 = input          (x)            %0 = input
    %1 = sin %0                   =>   %1 = sin %0
    %2 = mul %c, %c     (not from x)   %3 = mul %1, %1
    %3 = mul %1, %1     (z)
    %4 = exp %1         (not to z)

Invariants: the result keeps the input's order; a node is kept iff it depends on a source
and a target depends on it; sources that reach no target are dropped from the inputs. The
graph's inputs are leaves: a watched value that some earlier tape computed is where its
gradient starts, as in TensorFlow, whatever it was computed from. A source the graph
computes from another source (h = f(x), asked for with x) stays a node, so that x's
gradient passes through it, as TensorFlow's does; its own gradient is the cotangent its
node receives (`fed_sources`).
"""

from tracer.ir import Graph


def prune(graph, sources, targets):
    leaves = {
        id(n) for n in graph.inputs
    }  # watched values: where gradients start, never pass through
    source_ids = {id(s) for s in sources}
    reached = set(source_ids)
    fed = set()  # sources computed from another source: nodes, not inputs (`fed_sources`)
    for node in graph.nodes:  # (loops, not generators: a tape's graph has 10^5 nodes)
        key = id(node)
        if key in leaves or (key in reached and key not in source_ids):
            continue
        for i in node.inputs:
            if id(i) in reached:
                if key in source_ids:
                    fed.add(key)
                reached.add(key)
                break
    needed = {id(t) for t in targets if id(t) in reached}
    kept = []
    for node in reversed(graph.nodes):
        key = id(node)
        if key in needed:
            kept.append(node)
            if key not in leaves:
                for i in node.inputs:
                    if id(i) in reached:
                        needed.add(id(i))
    kept.reverse()
    inputs = [s for s in sources if id(s) in needed and id(s) not in fed]
    kept_inputs = {id(s) for s in inputs}
    return Graph(
        inputs,
        inputs + [n for n in kept if id(n) not in kept_inputs],
        [t for t in targets if id(t) in needed],
    )


def fed_sources(graph, sources):
    """The ids of the sources that `graph` (a pruned one) computes, from another source: the
    gradient with respect to such a source is the cotangent that reaches its node, and the
    other source's passes on through it."""
    inputs = {id(n) for n in graph.inputs}
    return {id(s) for s in sources if s is not None and id(s) not in inputs}
