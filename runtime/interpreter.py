"""The graph interpreter: one loop over the nodes in order."""

from runtime.kernels import KERNELS


def run_graph(graph, bindings, apply_node):
    """Evaluate `graph.outputs`.

    `bindings` maps id(node) to the value of each graph input; `apply_node(node, args)`
    computes one node from its input values (the caller decides what a value is: numpy
    arrays, or tracer tensors run through the normal op path so that tapes record them).
    """
    env = dict(bindings)
    for node in graph.nodes:
        if id(node) not in env:
            env[id(node)] = apply_node(node, [env[id(i)] for i in node.inputs])
    return [env[id(out)] for out in graph.outputs]


def evaluate(graph, input_values):
    """Run `graph` on numpy values (one per graph input, in order) with the numpy kernels."""
    bindings = {id(node): value for node, value in zip(graph.inputs, input_values)}
    return run_graph(graph, bindings, _apply_kernel)


def _apply_kernel(node, args):
    if node.op == "const":
        return node.attrs["value"].array
    return KERNELS[node.op](*args, **node.attrs)
