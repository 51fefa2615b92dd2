"""The IR: the text printer (golden), the DOT printer, the registry's completeness, and the passes."""

import numpy as np

import tracer as tt
from runtime.kernels import KERNELS
from tracer.backprop import gradient_graph
from tracer.ir import Graph, Node, format_graph, to_dot
from tracer.ir.graph import GraphAttribute, topological_closure
from tracer.ir.literal import Literal
from tracer.ops.registry import ALL_INPUTS, ALL_INPUTS_AND_OUT, OPS
from tracer.passes.prune import prune


def line(offset=0):
    """`test_ir.py:N` for the line `offset` lines below the caller's."""
    import sys

    return f"test_ir.py:{sys._getframe(1).f_lineno + offset}"


def test_every_primitive_has_a_numpy_kernel_and_a_shape_rule():
    assert sorted(set(OPS) - set(KERNELS)) == []
    assert sorted(set(KERNELS) - set(OPS)) == []
    for op in OPS.values():
        assert callable(op.infer), op.name
        assert op.grad is None or callable(op.grad), op.name
        assert op.saves in (ALL_INPUTS, ALL_INPUTS_AND_OUT) or all(
            slot == "out" or isinstance(slot, int) for slot in op.saves
        ), op.name


def test_tape_ir_golden():
    x = tt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = tt.Variable(np.ones((3, 4), np.float32), name="w")
    where_w = line(-1)
    with tt.GradientTape() as tape:
        tape.watch(x)
        where_watch = line(-1)
        y = tt.nn.relu(x @ w) * 2.0
        where_y = line(-1)
        loss = tt.reduce_sum(y, axis=1)
        where_loss = line(-1)
    expected = [
        ("%0: f32[2,3] = input", where_watch),
        ("%1: f32[3,4] = variable[name='w:0']", where_w),
        ("%2: f32[2,4] = matmul %0, %1", where_y),
        ("%3: f32[2,4] = relu %2", where_y),
        ("%4: f32[2,4] = mul %3, 2.0", where_y),
        ("%5: f32[2] = reduce_sum[axis=(1,), keepdims=False] %4", where_loss),
    ]
    got = tape.ir().splitlines()
    assert len(got) == len(expected)
    for text, (body, where) in zip(got, expected):
        assert text.split("#")[0].rstrip() == body
        assert text.endswith(f"# {where}")


def test_printer_names_nodes_in_order_and_inlines_scalar_constants():
    a = Node("input", (), {"name": "a"}, (2,), tt.float32)
    from tracer.ir import Literal

    two = Node("const", (), {"value": Literal(np.float32(2.0))}, (), tt.float32)
    vec = Node("const", (), {"value": Literal(np.array([1.0, 2.0], np.float32))}, (2,), tt.float32)
    m = Node("mul", (a, two), {}, (2,), tt.float32)
    s = Node("add", (m, vec), {}, (2,), tt.float32)
    text = format_graph(Graph([a], [a, two, vec, m, s], [s]))
    assert text.splitlines() == [
        "%0: f32[2] = input[name='a']",
        "%1: f32[2] = const[value=[1.,2.]]",
        "%2: f32[2] = mul %0, 2.0",
        "%3: f32[2] = add %2, %1",
        "return %3",
    ]


def test_dot_output_has_every_node_and_edge():
    a = Node("input", (), {}, (2,), tt.float32)
    b = Node("sin", (a,), {}, (2,), tt.float32)
    dot = to_dot(Graph([a], [a, b], [b]))
    assert dot.startswith("digraph tracer {") and dot.rstrip().endswith("}")
    assert 'n1 [label="sin\\nf32[2]"];' in dot
    assert 'n0 -> n1 [label="0"];' in dot
    assert "n1 -> out0;" in dot


def test_prune_keeps_only_paths_from_sources_to_targets():
    x = Node("input", (), {}, (), tt.float32)
    c = Node("const", (), {}, (), tt.float32)
    s = Node("sin", (x,), {}, (), tt.float32)
    unrelated = Node("mul", (c, c), {}, (), tt.float32)
    z = Node("mul", (s, s), {}, (), tt.float32)
    dead_end = Node("exp", (s,), {}, (), tt.float32)
    pruned = prune(Graph([x], [x, s, unrelated, z, dead_end], []), [x], [z])
    assert [n.op for n in pruned.nodes] == ["input", "sin", "mul"]
    assert pruned.nodes[2] is z and pruned.outputs == (z,)
    assert prune(Graph([x], [x, s, unrelated, z], []), [x], [unrelated]).nodes == ()


def test_gradient_graph_holds_only_what_the_sources_need():
    x = tt.constant(2.0)
    c = tt.constant(3.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = tt.sin(x) * c
    rec = tape._recording_state
    only_x = gradient_graph(rec, [rec.tracked_node(y)], [rec.tracked_node(x)]).grad.graph
    ops = [n.op for n in only_x.nodes]
    assert "cos" in ops and ops.count("mul") == 2  # g * c, then * cos(x); nothing for d/dc
    assert len(only_x.outputs) == 1
    np.testing.assert_allclose(float(tape.gradient(y, x)), 3.0 * np.cos(2.0), rtol=1e-6)


def test_gradient_graph_is_reused_for_the_same_structure():
    grads = []
    for value in (1.0, 2.0):
        x = tt.constant(value)
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.exp(x) * x
        rec = tape._recording_state
        prepared = gradient_graph(rec, [rec.tracked_node(y)], [rec.tracked_node(x)])
        grads.append(prepared.grad)
        np.testing.assert_allclose(
            float(tape.gradient(y, x)), np.exp(value) * (value + 1), rtol=1e-6
        )
    assert grads[0] is grads[1]


def test_values_from_outside_the_tape_are_declared_as_const_at_first_use():
    w = tt.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    outside = tt.constant([[1.0, 0.5]])
    with tt.GradientTape() as tape:
        y = outside @ w
    lines = [text.split("#")[0].rstrip() for text in tape.ir().splitlines()]
    assert lines == [
        "%0: f32[2,2] = variable[name='w:0']",
        "%1: f32[1,2] = const",
        "%2: f32[1,2] = matmul %1, %0",
    ]
    assert y.shape == (1, 2)


class _Stub:
    """A node of a random graph: its inputs alone."""

    def __init__(self, inputs, number):
        self.inputs = inputs
        self.number = number


def _depth_first(outputs, expand=None):
    """The plain recursive order: each node after its inputs, inputs in order."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if expand is None or expand(node):
            for i in node.inputs:
                visit(i)
        order.append(node)

    for o in outputs:
        visit(o)
    return order


def test_topological_closure_is_the_depth_first_order_on_random_graphs():
    rng = np.random.default_rng(5)
    for trial in range(300):
        nodes = []
        for number in range(int(rng.integers(1, 30))):
            count = int(rng.integers(0, 4)) if nodes else 0
            inputs = tuple(nodes[int(k)] for k in rng.integers(0, max(len(nodes), 1), count))
            nodes.append(_Stub(inputs, number))
        outputs = [nodes[int(k)] for k in rng.integers(0, len(nodes), int(rng.integers(1, 4)))]
        expand = (lambda node: node.number % 3 != 0) if trial % 2 else None
        got = [n.number for n in topological_closure(outputs, expand)]
        assert got == [n.number for n in _depth_first(outputs, expand)], trial


def test_graph_attributes_are_equal_exactly_when_their_graphs_compute_the_same():
    """Held graphs (fused bodies, branches) compare by structure: the same ops on the same
    inputs with equal attributes are equal (and hash alike) whatever the node objects; a
    constant that differs only in the middle, which the printed text shortens to its ends,
    makes them differ."""

    def scaled(values, op="mul"):
        x = Node("input", (), {"name": "x"}, (20,), tt.float64)
        c = Node("const", (), {"value": Literal(values)}, (20,), tt.float64)
        out = Node(op, (x, c), {}, (20,), tt.float64)
        return GraphAttribute(Graph([x], [x, c, out], [out]), "body")

    first = np.arange(20.0)
    middle = first.copy()
    middle[10] = 100.0
    assert scaled(first) == scaled(first.copy())
    assert hash(scaled(first)) == hash(scaled(first.copy()))
    assert format_graph(scaled(first).graph) == format_graph(scaled(middle).graph)
    assert scaled(first) != scaled(middle)
    assert scaled(first) != scaled(first, op="add")


def test_attributes_that_differ_only_in_a_zeros_sign_keep_their_nodes_apart():
    """-0.0 == 0.0 in Python, not in what a kernel computes with it (1 / x): common-
    subexpression elimination, held graphs and kernels compare float attributes by their
    type and digits too."""
    from tracer.passes.cse import eliminate_common_subexpressions

    def fill(value):
        return Node(
            "fill", (), {"shape": (2,), "dtype": tt.float32, "value": value}, (2,), tt.float32
        )

    positive, negative = fill(0.0), fill(-0.0)
    both = Node("sub", (positive, negative), {}, (2,), tt.float32)
    graph = Graph([], [positive, negative, both], [both])
    assert len(eliminate_common_subexpressions(graph).nodes) == 3
    same = Node("sub", (positive, fill(0.0)), {}, (2,), tt.float32)
    assert len(eliminate_common_subexpressions(Graph([], [*same.inputs, same], [same])).nodes) == 2
    assert GraphAttribute(Graph([], [positive], [positive]), "a") != GraphAttribute(
        Graph([], [negative], [negative]), "b"
    )
