"""runtime/interpreter.py's run_graph: each value is dropped after its last reader, so a
graph run op by op (a gradient under the profiler or a recording tape) holds no more than
the straight-line program does; the outputs are kept, whoever reads them."""

import weakref

import numpy as np

import tracer as tt
from runtime.interpreter import run_graph
from tracer import dtypes
from tracer.ir import Node
from tracer.ir.graph import Graph


class _Value:
    def __init__(self, number):
        self.number = number


def _chain(length):
    """x -> y1 = x + 1 -> ... -> y_length, with y1 an output too (read by y2 as well)."""
    x = Node("input", (), {}, (), dtypes.float64, None)
    nodes, last = [x], x
    for _ in range(length):
        last = Node("add_one", (last,), {}, (), dtypes.float64, None)
        nodes.append(last)
    return Graph([x], nodes, [nodes[1], last])


def _counting():
    """(apply_node adding one to its first input, the weak references to the values it made,
    [the most of them alive at once])."""
    alive, most = [], [0]

    def apply_node(node, args):
        value = _Value(args[0].number + 1)
        alive.append(weakref.ref(value))
        most[0] = max(most[0], sum(ref() is not None for ref in alive))
        return value

    return apply_node, alive, most


def test_each_value_is_dropped_after_its_last_reader_and_outputs_are_kept():
    graph = _chain(50)
    apply_node, _, most = _counting()
    first, last = run_graph(graph, {id(graph.inputs[0]): _Value(0)}, apply_node)
    assert (first.number, last.number) == (1, 50)
    # the output y1, the value being read and the new one: never the whole chain
    assert most[0] <= 3


def test_a_value_no_node_reads_is_dropped_at_once():
    x = Node("input", (), {}, (), dtypes.float64, None)
    unread = [Node("add_one", (x,), {}, (), dtypes.float64, None) for _ in range(20)]
    out = Node("add_one", (x,), {}, (), dtypes.float64, None)
    graph = Graph([x], [x, *unread, out], [out])
    apply_node, alive, most = _counting()
    (result,) = run_graph(graph, {id(x): _Value(0)}, apply_node)
    assert result.number == 1 and len(alive) == 21
    assert most[0] == 1  # each unread value gone before the next is computed


def test_a_gradient_run_op_by_op_under_a_recording_tape_has_the_same_values():
    x = tt.constant(np.linspace(-1.0, 1.0, 7))
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.reduce_sum(tt.sin(x) * tt.exp(x) * x)
        first = inner.gradient(y, x)  # run op by op: the outer tape records it
        total = tt.reduce_sum(first)
    second = outer.gradient(total, x).numpy()
    v = x.numpy()
    d1 = np.cos(v) * np.exp(v) * v + np.sin(v) * np.exp(v) * v + np.sin(v) * np.exp(v)
    np.testing.assert_allclose(first.numpy(), d1, rtol=1e-12)
    d2 = (
        -np.sin(v) * np.exp(v) * v
        + 2 * np.cos(v) * np.exp(v) * v
        + 2 * np.cos(v) * np.exp(v)
        + np.sin(v) * np.exp(v) * v
        + 2 * np.sin(v) * np.exp(v)
    )
    np.testing.assert_allclose(second, d2, rtol=1e-12)
