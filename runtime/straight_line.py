"""A graph as straight-line Python: one numpy kernel call per node, no interpreter loop.

    %0 = input            def run(v0, v1):
    %1 = input                v2 = k_cos(v1)
    %2 = cos %1      =>       v3 = v0 * v2
    %3 = mul %0, %2           del v2
                              return [v3]

The values are the interpreter's, bit for bit: the same kernels, called in the same order
(floating add, sub and mul as the infix operators those kernels use: `v3 = v0 * v2`).
What goes is the per-node work of the interpreter loop (looking nodes up, building
argument lists), which is most of the time of an eager gradient on small tensors. Each
value is dropped after its last use, so memory peaks no higher than in the interpreter.
`source(graph)` is the generated text, for reading.
"""

from runtime.kernels import FLOATING_INFIX, KERNELS


def straight_line(graph):
    """A function taking the values of `graph.inputs` positionally, returning a list of the
    values of `graph.outputs`."""
    text, names = _generate(graph)
    scope = dict(names)
    exec(compile(text, "<tracer straight-line graph>", "exec"), scope)
    return scope["run"]


def source(graph):
    """The Python text `straight_line` runs for `graph`."""
    return _generate(graph)[0]


def _floating(dtype):
    return dtype.is_floating or dtype.is_complex


def _generate(graph):
    params = [f"v{k}" for k in range(len(graph.inputs))]
    var = {}
    for name, node in zip(params, graph.inputs):
        var.setdefault(id(node), name)  # an input listed twice is read from its first position
    body, names = [], {}
    computed = [node for node in graph.nodes if id(node) not in var]
    for k, node in enumerate(computed, start=len(params)):
        var[id(node)] = f"v{k}"
    last_use = {}
    for step, node in enumerate(computed):
        for i in node.inputs:
            last_use[id(i)] = step
    kept = {id(n) for n in graph.outputs} | {id(n) for n in graph.inputs}
    for step, node in enumerate(computed):
        name = var[id(node)]
        if node.op == "const":
            names[name + "_value"] = node.attrs["value"].array
            body.append(f"{name} = {name}_value")
            continue
        args = [var[id(i)] for i in node.inputs]
        if node.op in FLOATING_INFIX and _floating(node.inputs[0].dtype):
            body.append(f"{name} = {args[0]} {FLOATING_INFIX[node.op]} {args[1]}")
        else:
            kernel = "k_" + node.op
            names[kernel] = KERNELS[node.op]
            if node.attrs:
                names[name + "_attrs"] = dict(node.attrs)
                args.append(f"**{name}_attrs")
            body.append(f"{name} = {kernel}({', '.join(args)})")
        dead = [
            var[id(i)]
            for i in dict.fromkeys(node.inputs)
            if last_use[id(i)] == step and id(i) not in kept
        ]
        if dead:
            body.append(f"del {', '.join(dead)}")
    outputs = ", ".join(var[id(n)] for n in graph.outputs)
    text = (
        f"def run({', '.join(params)}):\n"
        + "".join(f"    {line}\n" for line in body)
        + f"    return [{outputs}]\n"
    )
    return text, names
