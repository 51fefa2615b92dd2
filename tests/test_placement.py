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


def _summed(value):
    """A reduction that reads `value` as it is stored (a concat read by a reduction is
    stored, not read piecewise by a fused loop)."""
    return tt.reduce_sum(value, axis=0)


def test_computed_parts_are_written_in_the_concats_block():
    a, b, c, w = (RNG.normal(size=shape) for shape in ((3, 4), (2, 5), (2, 4), (4, 5)))

    def f(a, b, c, w):
        return _summed(tt.concat([a @ w, b, c @ w], 0))

    values, interpreted, graph = _compiled(f, a, b, c, w)
    want = np.concatenate([a @ w, b, c @ w]).sum(axis=0)
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-13)
    # after a @ w's 15 doubles and b's 10
    assert _placed_ops(graph) == [("matmul", "concat", 0), ("matmul", "concat", 200)]


def test_a_concat_output_holds_its_parts_in_the_callers_buffer():
    a, b, w = RNG.normal(size=(3, 4)), RNG.normal(size=(2, 5)), RNG.normal(size=(4, 5))

    def f(a, b, w):
        return tt.concat([b, a @ w], 0)

    values, _, graph = _compiled(f, a, b, w)
    np.testing.assert_allclose(values.numpy(), np.concatenate([b, a @ w]), rtol=1e-14)
    assert _placed_ops(graph) == [("matmul", "concat", 80)]


def test_a_part_read_after_its_holder_keeps_its_values():
    """The holder's block lives to the part's last reader: values computed between them
    (which could take a freed block) leave the part as it was."""
    a, w = RNG.normal(size=(64, 32)), RNG.normal(size=(32, 64))

    def f(a, w):
        part = a @ w
        joined = _summed(tt.concat([part, part @ tt.transpose(w) @ w], 0))
        later = tt.reduce_sum(tt.sqrt(tt.tanh(joined) + 1.0))
        return later + part * 3.0

    values, _, graph = _compiled(f, a, w)
    part = a @ w
    joined = np.concatenate([part, part @ w.T @ w]).sum(axis=0)
    want = np.sum(np.sqrt(np.tanh(joined) + 1.0)) + part * 3.0
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-12)
    assert ("concat", 0) in {(holder, offset) for _, holder, offset in _placed_ops(graph)}


def test_a_part_joined_twice_is_placed_once_and_copied_once():
    a, w = RNG.normal(size=(2, 7)), RNG.normal(size=(7, 7))

    def f(a, w):
        return _summed(tt.concat([a @ w, a @ w, a], 0))

    values, _, graph = _compiled(f, a, w)
    want = np.concatenate([a @ w, a @ w, a]).sum(axis=0)
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    assert _placed_ops(graph) == [("matmul", "concat", 0)]


def test_an_output_part_is_not_placed():
    a, w = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4))

    def f(a, w):
        part = a @ w
        return part, _summed(tt.concat([part, a], 0))

    (part, joined), _, graph = _compiled(f, a, w)
    np.testing.assert_allclose(part.numpy(), a @ w, rtol=1e-14)
    np.testing.assert_allclose(joined.numpy(), np.concatenate([a @ w, a]).sum(axis=0))
    assert _placed_ops(graph) == []


@pytest.mark.parametrize(("batch", "placed"), [(1, True), (2, False)])
def test_a_concat_on_a_later_axis_holds_its_parts_where_the_axes_before_have_one_element(
    batch, placed
):
    a, w, v = (RNG.normal(size=(batch, *shape)) for shape in ((3, 4), (4, 5), (4, 5)))

    def f(a, w, v):
        return tt.concat([a @ w, a @ v], 1)

    values, interpreted, graph = _compiled(f, a, w, v)
    want = np.concatenate([a @ w, a @ v], 1)
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-14)
    assert bool(_placed_ops(graph)) == placed


def test_a_concat_of_placed_parts_is_itself_copied_into_an_outer_concat():
    a, w = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 3))

    def f(a, w):
        inner = tt.concat([a @ w, a @ (w * 2.0)], 0)
        return _summed(tt.concat([inner, inner @ w], 0))

    values, _, graph = _compiled(f, a, w)
    inner = np.concatenate([a @ w, a @ (w * 2.0)])
    want = np.concatenate([inner, inner @ w]).sum(axis=0)
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-13)
    holders = [holder for _, holder, _ in _placed_ops(graph)]
    assert holders.count("concat") == 3  # the inner's two parts, and the outer's product


def test_same_shaped_concats_of_placed_and_stored_parts_are_two_kernels():
    """A concat whose part is placed has a kernel without that part's copy; one of the same
    shapes whose parts are inputs copies them all: the two never share a kernel."""
    a, b, w = RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4))

    def f(a, b, w):
        return _summed(tt.concat([a, b], 0)) + _summed(tt.concat([a @ w, b], 0))

    values, _, graph = _compiled(f, a, b, w)
    want = np.concatenate([a, b]).sum(0) + np.concatenate([a @ w, b]).sum(0)
    np.testing.assert_allclose(values.numpy(), want, rtol=1e-14)
    assert _placed_ops(graph) == [("matmul", "concat", 0)]


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
    graph = gradient.get_concrete_function(tt.constant(x)).stages.final
    plan = plan_buffers(graph, target=C_MODULE)
    held = [layout.placed for layout in plan.held_layouts.values()]
    assert any(held)  # the reverse loop's slices' gradients


def test_sizes_known_only_at_run_time_are_copied():
    spec = tt.TensorSpec((None,), tt.float64)

    @tt.function(input_signature=[spec, spec], backend="c")
    def f(x, y):
        return tt.exp(_rate(x, y))

    for n in (5, 40):
        x, y = RNG.uniform(size=n), RNG.uniform(size=n)
        np.testing.assert_allclose(f(x, y).numpy(), np.exp(_rate_numpy(x, y)), rtol=1e-14)
    assert "concat" in [node.op for node in f.get_concrete_function().stages.final.nodes]
    graph = f.get_concrete_function().stages.final
    assert _placed_ops(graph) == []
    assert placement.placed_parts(graph, [], {}, {}, C_MODULE) == ({}, {})


def test_exported_c_with_placed_parts_builds_strictly_and_computes_the_values(tmp_path):
    """The holder's kernel of exported C has no parameter for a placed part, and a holder
    whose parts are all placed has no kernel: the strict build (-Wall -Wextra -Werror
    -pedantic) finds no unused parameter."""
    a, b, w = RNG.normal(size=(3, 4)), RNG.normal(size=(2, 5)), RNG.normal(size=(4, 5))
    specs = [tt.TensorSpec(v.shape, tt.float64) for v in (a, b, w)]

    def f(a, b, w):
        square = w @ tt.transpose(w)
        return tt.concat([a @ w, b], 0), tt.concat([b @ tt.transpose(w), a @ square], 0)

    want = [np.concatenate([a @ w, b]), np.concatenate([b @ w.T, a @ (w @ w.T)])]
    graph = tt.function(f, backend="c").get_concrete_function(a, b, w).stages.final
    assert len(_placed_ops(graph)) == 3
    tt.export_c(tt.function(f), specs, str(tmp_path), prefix="joined")
    calls = [exported_c.Call("joined", [a, b, w], want)]
    main = os.path.join(str(tmp_path), "main.c")
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("joined", calls))
    program = exported_c.build(str(tmp_path), "joined", [*exported_c.STRICT, "-O2"], [main])
    (got,) = exported_c.run(program, calls)
    for value, expected in zip(got, want):
        np.testing.assert_allclose(value, expected, rtol=1e-13)
