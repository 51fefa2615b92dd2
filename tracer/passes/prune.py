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
gradient starts, as in TensorFlow, whatever it was computed from.
"""

from tracer.ir import Graph


def prune(graph, sources, targets):
    leaves = {
        id(n) for n in graph.inputs
    }  # watched values: where gradients start, never pass through
    reached = {id(s) for s in sources}
    for node in graph.nodes:  # (loops, not generators: a tape's graph has 10^5 nodes)
        key = id(node)
        if key in reached or key in leaves:
            continue
        for i in node.inputs:
            if id(i) in reached:
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
    inputs = [s for s in sources if id(s) in needed]
    kept_inputs = {id(s) for s in inputs}
    return Graph(
        inputs,
        inputs + [n for n in kept if id(n) not in kept_inputs],
        [t for t in targets if id(t) in needed],
    )
