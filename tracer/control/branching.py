"""Branch regions: nodes that hold graphs of one signature and run one of them.

    cond       (pred: bool[], operands...)          "true" when pred holds, else "false"
    switch     (index: int32/int64[], operands...)  branch `index`, the last one outside [0, n)
    recompute  (operands...)                        its one graph, "function"

`tt.cond`, `tt.case`, `tt.switch_case` and `tt.recompute_grad` make them. The three ops
share every rule, written once here and read off the node: its held graphs are its
`Subgraph` attributes in order, each taking the operands and giving the results; when it
holds more than one, its first input (the selector) picks the one that runs.

- the interpreter runs the chosen graph (`run_subgraph`);
- C writes the chosen graph's code in an `if`, a `switch`, or alone;
- the gradient is a branch of the graphs' vector-Jacobian products on the same selector:
  the reverse takes the branch the forward took. With one graph there is nothing to
  select, and its product joins the gradient's graph (the recomputation of
  `tt.recompute_grad`);
- dead code: every graph narrowed to the results read, and the operands none reads dropped;
- batching: `region_batching.batch_branch`.
"""

import numpy as np

from codegen import forms
from codegen.ctypes import storage
from tracer.context import state
from tracer.control.region import (
    at_user_line,
    held,
    indented,
    inputs_read,
    new_variables,
    run_subgraph,
    selectors,
    union,
)
from tracer.control.region_batching import batch_branch
from tracer.control.subgraph import tensors_of, trace_function
from tracer.errors import RunsAsPython
from tracer.ir import Node, Subgraph, TupleType
from tracer.ir.rewrite import with_outputs
from tracer.ops.core import apply, apply_symbolic, execute_graph
from tracer.ops.registry import ALL_INPUTS, OPS, primitive
from tracer.ops.tangent_rules import TRANSPOSED_VJP
from tracer.ops.tuple_ops import TupleValue, get
from tracer.passes.gradient import vjp_graph


def traced_branches(op, selector, named_fns, what, check):
    """The results of a branch node of `op` choosing among `named_fns` ((attribute name,
    function of no arguments), in branch order) by `selector`, each function traced into
    a graph (`what`, with {name} for the attribute's name, says what each is in errors);
    `check(traced)` raises where the traced branches' results differ. Variables a
    branch assigns are results of every branch (each branch is traced once, as in
    TensorFlow), assigned after the node. Returns (the results, the first branch's Traced)."""
    traced = [trace_function(fn, (), what.format(name=name)) for name, fn in named_fns]
    variables = new_variables([], [v for t in traced for v in t.assigned])
    traced = [t.with_variables(variables) for t in traced]
    check(traced)
    captures = union(*(t.captures for t in traced))
    attrs = {
        name: Subgraph(t.with_captures(captures), name) for (name, _), t in zip(named_fns, traced)
    }
    node = apply_symbolic(op, (selector, *tensors_of(traced, captures)), attrs)
    results = [get(node, k) for k in range(len(traced[0].graph.outputs))]
    for variable, value in zip(variables, results[traced[0].n_results :]):
        state.trace.assign(variable, value)
    return results[: traced[0].n_results], traced[0]


def check_same_results(traced, what):
    """A ValueError where two traced branches return tensors of other dtypes; where only
    their shapes differ, RunsAsPython: TensorFlow's graph takes a result whose shape is known
    only when it runs, tracer's compiled code holds sizes known when tracing, so the traced
    function runs as Python at each call."""
    first = traced[0].graph.outputs
    for other in traced[1:]:
        for k, (a, b) in enumerate(zip(first, other.graph.outputs)):
            if a.dtype == b.dtype and a.shape == b.shape:
                continue
            differ = (
                f"return different tensors at position {k}: {a.dtype.name}{list(a.shape)} and "
                f"{b.dtype.name}{list(b.shape)}{at_user_line()}"
            )
            if a.dtype == b.dtype and state.trace is not None:
                raise RunsAsPython(
                    f"has a {what} whose branches {differ}: compiled code holds sizes known "
                    "when tracing, so the function runs as Python at each call"
                )
            raise ValueError(f"the branches of {what} {differ}")


def chosen(selector, count):
    """The position of the branch that runs for `selector`, among `count`."""
    if np.asarray(selector).dtype == np.bool_:
        return 0 if selector else 1
    index = int(selector)
    return index if 0 <= index < count else count - 1


def _infer(attrs, *inputs):
    (_, first), *_ = held(attrs)
    return (), TupleType([(o.shape, o.dtype) for o in first.graph.outputs])


def _kernel(*inputs, **attrs):
    graphs = [graph for _, graph in held(attrs)]
    if len(graphs) == 1:
        return TupleValue(run_subgraph(graphs[0], inputs))
    return TupleValue(run_subgraph(graphs[chosen(inputs[0], len(graphs))], inputs[1:]))


def _grad(node, g, *inputs):
    k = selectors(node.attrs)
    operands = inputs[k:]
    outputs = [j for j, (_, dtype) in enumerate(node.dtype.parts) if dtype.is_differentiable]
    sources = [i for i, x in enumerate(operands) if x.dtype.is_differentiable]
    grads = [None] * len(inputs)
    if not outputs or not sources:
        return tuple(grads)
    vjps = {}
    for name, subgraph in held(node.attrs):
        graph = subgraph.graph
        restricted = with_outputs(graph.inputs, [graph.outputs[j] for j in outputs])
        vjp = vjp_graph(restricted, [graph.inputs[i] for i in sources])
        vjps[name] = subgraph.with_graph(vjp)
    arguments = [*operands, *g.dense(node, outputs)]
    if k == 0:
        (vjp,) = vjps.values()
        results = execute_graph(vjp.graph, arguments)
    else:
        reverse = apply(OPS[node.op], (inputs[0], *arguments), vjps)
        results = [get(reverse, position) for position in range(len(sources))]
    for i, value in zip(sources, results):
        grads[k + i] = value
    return tuple(grads)


def _narrow(node, used):
    """The node computing only the results some `get` reads, from the operands they need."""
    k = selectors(node.attrs)
    kept = sorted(used)
    branches = held(node.attrs)
    outputs = {name: [s.graph.outputs[j] for j in kept] for name, s in branches}
    read = set().union(*(inputs_read(s.graph, outputs[name]) for name, s in branches))
    operands = sorted(read)
    if len(kept) == len(node.dtype.parts) and len(operands) == len(node.inputs) - k:
        return None
    attrs = dict(node.attrs)
    for name, subgraph in branches:
        inputs = [subgraph.graph.inputs[i] for i in operands]
        attrs[name] = subgraph.with_graph(with_outputs(inputs, outputs[name]))
    inputs = (*node.inputs[:k], *(node.inputs[k + i] for i in operands))
    shape, dtype = _infer(attrs, *inputs)
    narrowed = Node(node.op, inputs, attrs, shape, dtype, node.location)
    return narrowed, {j: position for position, j in enumerate(kept)}


def _emit(node, site):
    """The chosen graph's code, writing the results: alone, in an if/else, or in a switch
    whose last branch is its default."""
    k = selectors(node.attrs)
    operands = [site.input(i) for i in range(k, len(node.inputs))]
    parts = node.dtype.parts

    def branch(subgraph):
        lines, outputs = site.region(subgraph.graph, operands)
        for j, (output, part) in enumerate(zip(outputs, parts)):
            lines.append(f"memcpy({site.result(j)}, {output}, {site.bytes(*part)});")
        return lines

    graphs = [subgraph for _, subgraph in held(node.attrs)]
    if k == 0:
        return branch(graphs[0])
    selector = node.inputs[0]
    value = f"*(const {storage(selector.dtype)} *){site.input(0)}"
    if selector.dtype.is_bool:
        return [
            f"if ({value}) {{",
            *indented(branch(graphs[0])),
            "} else {",
            *indented(branch(graphs[1])),
            "}",
        ]
    lines = [f"switch ({value}) {{"]
    for position, subgraph in enumerate(graphs):
        last = position == len(graphs) - 1
        lines.append("default: {" if last else f"case {position}: {{")
        lines += indented(branch(subgraph) + ([] if last else ["break;"]))
        lines.append("}")
    lines.append("}")
    return lines


def _branch_primitive(name, **options):
    return primitive(
        name,
        _infer,
        grad=_grad,
        saves=ALL_INPUTS,
        jvp=TRANSPOSED_VJP,
        batch=batch_branch,
        kernel=_kernel,
        c=forms.Structured(_emit),
        narrow=_narrow,
        **options,
    )


COND = _branch_primitive("cond", strings=True)
SWITCH = _branch_primitive("switch", strings=True)
RECOMPUTE = _branch_primitive("recompute")
BRANCH_OPS = (COND, SWITCH, RECOMPUTE)  # (a new target registers its branch form for each)
