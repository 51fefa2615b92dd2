"""The graph interpreter: one loop over the nodes in order."""

from runtime.kernels import KERNELS


def run_graph(graph, bindings, apply_node):
    """Evaluate `graph.outputs`.

    `bindings` maps id(node) to the value of each graph input; `apply_node(node, args)`
    computes one node from its input values (the caller decides what a value is: numpy
    arrays, or tracer tensors run through the normal op path so that tapes record them).
    Each value is dropped after the last node that reads it (the outputs are kept), so that
    memory peaks no higher than in the straight-line program (runtime/straight_line.py): a
    gradient run op by op (under the profiler, a recording tape) held every cotangent of a
    large step to its end.
    """
    env = dict(bindings)
    last_reader = {}
    for position, node in enumerate(graph.nodes):
        for i in node.inputs:
            last_reader[id(i)] = position
    for out in graph.outputs:
        last_reader[id(out)] = len(graph.nodes)  # kept to the end
    for position, node in enumerate(graph.nodes):
        if id(node) not in env:
            env[id(node)] = apply_node(node, [env[id(i)] for i in node.inputs])
        for i in node.inputs:
            if last_reader[id(i)] == position:
                env.pop(id(i), None)
        if id(node) not in last_reader:  # read by nothing: computed for its effects alone
            env.pop(id(node), None)
    return [env[id(out)] for out in graph.outputs]


def evaluate(graph, input_values):
    """Run `graph` on numpy values (one per graph input, in order) with the numpy kernels."""
    bindings = {id(node): value for node, value in zip(graph.inputs, input_values)}
    return run_graph(graph, bindings, _apply_kernel)


def _apply_kernel(node, args):
    if node.op == "const":
        return node.attrs["value"].array
    return KERNELS[node.op](*args, **node.attrs)
