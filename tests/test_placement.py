"""Values computed straight into the storage of the value that holds them (codegen/placement.py):
a concat's parts and the box a slice's gradient writes. Each test compares the compiled
values with numpy's and asserts where the layout put the part."""

import os

import numpy as np
import pytest

import tracer as tt
from codegen import placement
from codegen.lower import plan_buffers
from codegen.targets import C_MODULE
from tests import exported_c

RNG = np.random.default_rng(7)


def _compiled(function, *arguments):
    """(the C module's values, the interpreter's, the optimized graph)."""
    compiled = tt.function(function, backend="c")
    values = compiled(*arguments)
    interpreted = tt.function(function, backend="interpreter")(*arguments)
    graph = compiled.get_concrete_function(*arguments).stages.final
    return values, interpreted, graph


def _placed_ops(graph):
    """[(part's op, holder's op, byte offset)] the module's layout computes in place."""
    layout = plan_buffers(graph, target=C_MODULE).layout
    nodes = {id(n): n for n in graph.nodes}
    return sorted((nodes[k].op, holder.op, offset) for k, (holder, offset) in layout.placed.items())


def _rate(x, y):
    return tt.concat([x[:1], x[1:] * y[:-1]], 0)


def _rate_numpy(x, y):
    return np.concatenate([x[:1], x[1:] * y[:-1]])


def test_a_computed_part_is_written_in_the_concats_block():
    x, y = RNG.uniform(size=1000), RNG.uniform(size=1000)

    def f(x, y):
        return tt.exp(_rate(x, y)) * 2.0

    values, interpreted, graph = _compiled(f, x, y)
    want = np.exp(_rate_numpy(x, y)) * 2.0
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-14)
    assert _placed_ops(graph) == [("fused", "concat", 8)]  # after x[:1]'s one double


def test_a_concat_output_holds_its_parts_in_the_callers_buffer():
    a, b = RNG.normal(size=(3, 5)), RNG.normal(size=(4, 5))

    def f(a, b):
        return tt.concat([tt.tanh(a), b * b, a + 1.0], 0)

    values, _, graph = _compiled(f, a, b)
    want = np.concatenate([np.tanh(a), b * b, a + 1.0])
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    assert sorted(offset for *_, offset in _placed_ops(graph)) == [0, 120, 280]


def test_a_part_read_after_its_holder_keeps_its_values():
    """The holder's block lives to the part's last reader: values computed between them
    (which could take a freed block) leave the part as it was."""
    x = RNG.normal(size=4096)

    def f(x):
        part = tt.sin(x) * 3.0
        joined = tt.concat([part, tt.cos(x)], 0)
        later = tt.exp(joined) + 1.0
        again = tt.sqrt(later) * 2.0
        return tt.reduce_sum(again) + part

    values, _, graph = _compiled(f, x)
    part = np.sin(x) * 3.0
    joined = np.concatenate([part, np.cos(x)])
    want = np.sum(np.sqrt(np.exp(joined) + 1.0) * 2.0) + part
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-12)
    assert ("concat", 0) in {(holder, offset) for _, holder, offset in _placed_ops(graph)}


def test_a_part_joined_twice_is_placed_once_and_copied_once():
    x = RNG.normal(size=(2, 7))

    def f(x):
        twice = tt.concat([x * 2.0, x * 2.0, x], 0)
        return twice + 1.0

    values, _, graph = _compiled(f, x)
    np.testing.assert_allclose(values.numpy(), np.concatenate([x * 2, x * 2, x]) + 1.0)
    assert _placed_ops(graph) == [("fused", "concat", 0)]


def test_an_output_part_is_not_placed():
    x = RNG.normal(size=100)

    def f(x):
        part = x * 3.0
        return part, tt.concat([part, x], 0) * 2.0

    (part, joined), _, graph = _compiled(f, x)
    np.testing.assert_allclose(part.numpy(), x * 3.0)
    np.testing.assert_allclose(joined.numpy(), np.concatenate([x * 3.0, x]) * 2.0)
    assert _placed_ops(graph) == []


@pytest.mark.parametrize(("shape", "placed"), [((1, 3, 4), True), ((2, 3, 4), False)])
def test_a_concat_on_a_later_axis_holds_its_parts_where_the_axes_before_have_one_element(
    shape, placed
):
    a = RNG.normal(size=shape)

    def f(a):
        return tt.concat([a * 2.0, tt.exp(a)], 1) + 1.0

    values, interpreted, graph = _compiled(f, a)
    want = np.concatenate([a * 2.0, np.exp(a)], 1) + 1.0
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-14)
    assert bool(_placed_ops(graph)) == placed


def test_a_concat_of_placed_parts_is_itself_copied_into_an_outer_concat():
    a = RNG.normal(size=50)

    def f(a):
        inner = tt.concat([a * 2.0, a * 3.0], 0)
        return tt.concat([inner, a * 4.0], 0) + 1.0

    values, _, graph = _compiled(f, a)
    want = np.concatenate([a * 2, a * 3, a * 4]) + 1.0
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    holders = [holder for _, holder, _ in _placed_ops(graph)]
    assert holders.count("concat") >= 2


def test_same_shaped_concats_of_placed_and_stored_parts_are_two_kernels():
    """A concat whose part is placed has a kernel without that part's copy; one of the same
    shapes whose parts are inputs copies them all: the two never share a kernel."""
    a, b = RNG.normal(size=64), RNG.normal(size=64)

    def f(a, b):
        stored = tt.concat([a, b], 0)
        computed = tt.concat([a * b, b], 0)
        return tt.exp(stored) + tt.exp(computed)

    values, _, graph = _compiled(f, a, b)
    want = np.exp(np.concatenate([a, b])) + np.exp(np.concatenate([a * b, b]))
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    assert _placed_ops(graph) == [("fused", "concat", 0)]


def test_the_gradient_of_a_slice_is_computed_inside_its_zeros():
    x = RNG.uniform(0.5, 1.5, size=300)

    @tt.function(backend="c")
    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.exp(x[1:]) * x[:-1])
        return tape.gradient(y, x)

    want = np.zeros_like(x)
    want[1:] += np.exp(x[1:]) * x[:-1]
    want[:-1] += np.exp(x[1:])
    np.testing.assert_allclose(gradient(tt.constant(x)).numpy(), want, rtol=1e-13)
    graph = gradient.get_concrete_function(tt.constant(x)).stages.final
    assert any(holder == "slice_grad" for _, holder, _ in _placed_ops(graph))


def _solve(x, steps):
    h = 2.0 / steps

    def step(i, y):
        k1 = _rate(x, y)
        k2 = _rate(x, y + h / 2 * k1)
        return i + 1, y + h * k2

    start = (tt.constant(0), tt.zeros_like(x))
    return tt.while_loop(lambda i, y: i < steps, step, start, maximum_iterations=steps)[1]


def _solve_numpy(x, steps):
    h, y = 2.0 / steps, np.zeros_like(x)
    for _ in range(steps):
        k1 = _rate_numpy(x, y)
        y = y + h * _rate_numpy(x, y + h / 2 * k1)
    return y


def test_a_loop_body_computes_its_parts_in_place_and_its_gradient_matches_differences():
    x = RNG.uniform(0, 1, size=200)

    @tt.function(backend="c")
    def solve(x):
        return _solve(x, 5)

    @tt.function(backend="c")
    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            last = _solve(x, 5)[-1]
        return tape.gradient(last, x)

    np.testing.assert_allclose(solve(tt.constant(x)).numpy(), _solve_numpy(x, 5), rtol=1e-13)
    eps, differences = 1e-6, np.empty_like(x)
    for k in range(x.size):
        up, down = x.copy(), x.copy()
        up[k] += eps
        down[k] -= eps
        differences[k] = (_solve_numpy(up, 5)[-1] - _solve_numpy(down, 5)[-1]) / (2 * eps)
    np.testing.assert_allclose(gradient(tt.constant(x)).numpy(), differences, atol=1e-8)
    graph = solve.get_concrete_function(tt.constant(x)).stages.final
    plan = plan_buffers(graph, target=C_MODULE)
    held = [layout.placed for layout in plan.held_layouts.values()]
    assert any(held)


def test_sizes_known_only_at_run_time_are_copied():
    spec = tt.TensorSpec((None,), tt.float64)

    @tt.function(input_signature=[spec, spec], backend="c")
    def f(x, y):
        return tt.exp(_rate(x, y))

    for n in (5, 40):
        x, y = RNG.uniform(size=n), RNG.uniform(size=n)
        np.testing.assert_allclose(f(x, y).numpy(), np.exp(_rate_numpy(x, y)), rtol=1e-14)
    graph = f.get_concrete_function().stages.final
    assert _placed_ops(graph) == []
    assert placement.placed_parts(graph, [], {}, {}, C_MODULE) == ({}, {})


def test_exported_c_with_placed_parts_builds_strictly_and_computes_the_values(tmp_path):
    """The holder's kernel of exported C has no parameter for a placed part, and a holder
    whose parts are all placed has no kernel: the strict build (-Wall -Wextra -Werror
    -pedantic) finds no unused parameter."""
    x, y = RNG.uniform(size=64), RNG.uniform(size=64)
    spec = tt.TensorSpec((64,), tt.float64)

    def f(x, y):
        return tt.exp(_rate(x, y)) * 2.0, tt.exp(tt.concat([x * 2.0, tt.sin(y)], 0))

    want = [np.exp(_rate_numpy(x, y)) * 2.0, np.exp(np.concatenate([x * 2.0, np.sin(y)]))]
    graph = tt.function(f, backend="c").get_concrete_function(x, y).stages.final
    assert len(_placed_ops(graph)) == 3
    tt.export_c(tt.function(f), [spec, spec], str(tmp_path), prefix="rate")
    calls = [exported_c.Call("rate", [x, y], want)]
    main = os.path.join(str(tmp_path), "main.c")
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("rate", calls))
    program = exported_c.build(str(tmp_path), "rate", [*exported_c.STRICT, "-O2"], [main])
    (got,) = exported_c.run(program, calls)
    for value, expected in zip(got, want):
        np.testing.assert_allclose(value, expected, rtol=1e-14)
