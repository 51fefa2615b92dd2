"""The simplify pass: each rule gives the interpreter's values on the original graph (for
the one-hot seed rule: on finite inputs).

Graphs are built by hand here, so that each rule is tested on exactly the shape it claims
to match and on near misses it must leave alone.
"""

import numpy as np
import pytest

import tracer as tt
from runtime.interpreter import evaluate
from tracer.ir import Graph, Literal, Node
from tracer.passes.simplify import simplify

rng = np.random.default_rng(5)
F64 = tt.float64


def _input(name, shape):
    return Node("input", (), {"name": name}, shape, F64)


def _const(array):
    return Node("const", (), {"value": Literal(array)}, array.shape, F64)


def _node(op, inputs, result_shape, **attrs):
    return Node(op, tuple(inputs), attrs, result_shape, F64)


def _ops(graph):
    return [n.op for n in graph.nodes if n.op not in ("input", "const")]


def _check(outputs, inputs, values):
    """Simplify the graph of `outputs`; its values must equal the original's, bit for bit."""
    graph = Graph(inputs, inputs + _closure(outputs, inputs), outputs)
    simplified = simplify(graph)
    for got, want in zip(evaluate(simplified, values), evaluate(graph, values)):
        np.testing.assert_array_equal(got, want)
    return simplified


def _closure(outputs, inputs):
    from tracer.ir.graph import topological_closure

    leaves = {id(n) for n in inputs}
    return [n for n in topological_closure(outputs) if id(n) not in leaves]


def test_a_transpose_between_reshapes_that_only_add_unit_axes_is_a_transpose():
    x = _input("x", (3, 4))
    expanded = _node("reshape", [x], (3, 4, 1), shape=(3, 4, 1))
    moved = _node("transpose", [expanded], (4, 3, 1), perm=(1, 0, 2))
    out = _node("reshape", [moved], (4, 3), shape=(4, 3))
    simplified = _check([out], [x], [rng.standard_normal((3, 4))])
    assert _ops(simplified) == ["transpose"] and simplified.outputs[0].attrs["perm"] == (1, 0)


def test_a_transpose_that_also_moves_a_unit_axis_of_the_input_is_left_alone():
    x = _input("x", (3, 1))
    expanded = _node("reshape", [x], (3, 1, 1), shape=(3, 1, 1))
    moved = _node("transpose", [expanded], (1, 3, 1), perm=(1, 0, 2))
    out = _node("reshape", [moved], (1, 3), shape=(1, 3))
    simplified = _check([out], [x], [rng.standard_normal((3, 1))])
    assert "transpose" in _ops(simplified)


def _seeds(shape, kind, start=0):
    """A jacobian's seeds (tracer/ops/seed_ops.py): rows `start`... of an identity, per example
    for kind per_example."""
    attrs = {"shape": shape, "dtype": F64, "kind": kind, "start": start}
    return Node("one_hot_seeds", (), attrs, shape, F64)


@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("u_shape", [(2, 4), (4,), (1, 2, 4)])
def test_one_hot_seed_rows_times_a_matrix_become_a_broadcast_product(u_shape, transpose_b):
    n, middle, columns = 4, (2,), 5
    seeds = _seeds((n,) + middle + (n,), "per_example")
    u = _input("u", u_shape)
    w = _input("w", (columns, n) if transpose_b else (n, columns))
    scaled = _node("mul", [seeds, u], (n,) + middle + (n,))
    rows = _node("reshape", [scaled], (n * 2, n), shape=(n * 2, n))
    attrs = {"transpose_b": True} if transpose_b else {}
    out = _node("matmul", [rows, w], (n * 2, columns), **attrs)
    values = [rng.standard_normal(u_shape), rng.standard_normal(w.shape)]
    simplified = _check([out], [u, w], values)
    assert "matmul" not in _ops(simplified)


def test_a_matrix_times_a_diagonal_of_one_hot_seeds_becomes_a_column_scaling():
    n = 6
    a, v = _input("a", (n, n)), _input("v", (n,))
    diagonal = _node("mul", [_seeds((n, n), "full"), v], (n, n))
    out = _node("matmul", [a, diagonal], (n, n), transpose_a=True)
    simplified = _check([out], [a, v], [rng.standard_normal((n, n)), rng.standard_normal(n)])
    assert "matmul" not in _ops(simplified)


@pytest.mark.parametrize(
    "case",
    [
        "rows from a later start",
        "u varies along the rows",
        "a constant identity",
        "examples of two axes",
    ],
)
def test_near_misses_of_one_hot_seeds_stay_matrix_products(case):
    n = 4
    seeds = {
        "rows from a later start": _seeds((n, n), "full", start=1),
        "a constant identity": _const(np.eye(n)),
        "examples of two axes": _seeds((2, 3, 2, 2), "per_example"),  # rows 0-1 of 4 per example
    }.get(case, _seeds((n, n), "full"))
    u = _input("u", (n, n) if case == "u varies along the rows" else (seeds.shape[-1],))
    scaled = _node("mul", [seeds, u], seeds.shape)
    rows = _node("reshape", [scaled], (12, 2), shape=(12, 2)) if len(seeds.shape) > 2 else scaled
    w = _input("w", (rows.shape[1], 3))
    out = _node("matmul", [rows, w], (rows.shape[0], 3))
    simplified = _check([out], [u, w], [rng.standard_normal(u.shape), rng.standard_normal(w.shape)])
    assert "matmul" in _ops(simplified)


@pytest.mark.parametrize("kind", ["full", "per_example"])
def test_one_hot_seeds_factor_out_of_elementwise_products_negations_and_sums(kind):
    """(E a) b - (-(c E)) * d => E ((a b) - (-c d)): one product of the seeds' size, not five."""
    n = 4
    shape = (n, n) if kind == "full" else (n, 3, n)
    seeds = _seeds(shape, kind)
    a, b, c, d = (_input(name, shape[1:]) for name in "abcd")
    left = _node("mul", [_node("mul", [seeds, a], shape), b], shape)
    right = _node("mul", [_node("neg", [_node("mul", [c, seeds], shape)], shape), d], shape)
    out = _node("sub", [left, right], shape)
    values = [rng.standard_normal(shape[1:]) for _ in range(4)]
    simplified = _check([out], [a, b, c, d], values)
    big = [node.op for node in simplified.nodes if node.shape == shape]
    assert sorted(big) == ["mul", "one_hot_seeds"]


@pytest.mark.parametrize(
    "case", ["a sum with a value of its own", "seeds of two starts", "a factor of full size"]
)
def test_seeds_stay_where_they_do_not_factor_out(case):
    n = 4
    seeds, later = _seeds((n, n), "full"), _seeds((n, n), "full", start=1)
    a, b = _input("a", (n,)), _input("b", (n, n) if case == "a factor of full size" else (n,))
    product = _node("mul", [seeds, a], (n, n))
    if case == "a sum with a value of its own":
        out = _node("add", [product, b], (n, n))
    elif case == "seeds of two starts":
        out = _node("add", [product, _node("mul", [later, b], (n, n))], (n, n))
    else:
        out = _node("mul", [product, b], (n, n))
    simplified = _check([out], [a, b], [rng.standard_normal(a.shape), rng.standard_normal(b.shape)])
    assert simplified.outputs[0].op == out.op and simplified.outputs[0].inputs[0] is product


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_users_own_diagonal_product_compiles_to_eagers_values_even_with_inf():
    def f(d, w):
        return tt.matmul(tt.constant(np.eye(2)) * d, w)

    d, w = tt.constant([np.inf, 1.0], tt.float64), tt.constant(np.ones((2, 2)))
    eager = f(d, w).numpy()
    assert np.isnan(eager[1]).all()  # 0 * inf in the product's zero terms, as numpy computes it
    np.testing.assert_array_equal(tt.function(f)(d, w).numpy(), eager)


def _layer_jacobian(w, b, x, batched):
    with tt.GradientTape() as tape:
        tape.watch(x)
        if batched:
            y = tt.tanh(tt.matmul(x, w, transpose_b=True) + b)
        else:
            y = tt.tanh(tt.matmul(w, x[:, None])[:, 0] + b)
    return tape.batch_jacobian(y, x) if batched else tape.jacobian(y, x)


@pytest.mark.parametrize("batched", [False, True])
def test_compiled_layer_jacobians_need_no_matmul_with_the_seeds_and_equal_eager(batched):
    n = 16
    w = tt.constant(rng.standard_normal((n, n)) / 4)
    b = tt.constant(rng.standard_normal(n))
    x = tt.constant(rng.standard_normal((3, n) if batched else n))
    compiled = tt.function(_layer_jacobian)
    got = compiled(w, b, x, batched)
    # C's tanh and BLAS may differ from numpy's in the last bit; the rule itself is exact
    np.testing.assert_allclose(
        got.numpy(), _layer_jacobian(w, b, x, batched).numpy(), rtol=1e-14, atol=1e-15
    )
    optimized = compiled.get_concrete_function(w, b, x, batched).stages["optimized"]
    assert sum(n.op == "matmul" for n in optimized.nodes) == 1  # the forward one
    dtanh = 1 - np.tanh(x.numpy() @ w.numpy().T + b.numpy()) ** 2
    expected = dtanh[..., :, None] * w.numpy()
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_a_nan_in_the_matrix_stays_in_the_jacobian_rows_that_depend_on_it():
    n = 5
    w_values = rng.standard_normal((n, n))
    w_values[2, 3] = np.nan  # y[2] is NaN, and so is row 2 of the jacobian; no other row
    w, b, x = tt.constant(w_values), tt.constant(np.zeros(n)), tt.constant(np.ones(n))
    jac = tt.function(_layer_jacobian)(w, b, x, False).numpy()
    assert np.isnan(jac[2]).all() and np.isfinite(np.delete(jac, 2, axis=0)).all()


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_a_product_over_an_inner_dimension_of_one_is_an_outer_product(
    transpose_a, transpose_b, batch
):
    m, n = 3, 4
    a = _input("a", batch + ((1, m) if transpose_a else (m, 1)))
    b = _input("b", (n, 1) if transpose_b else (1, n))
    attrs = {
        k: True for k, flag in (("transpose_a", transpose_a), ("transpose_b", transpose_b)) if flag
    }
    out = _node("matmul", [a, b], batch + (m, n), **attrs)
    values = [rng.standard_normal(a.shape), rng.standard_normal(b.shape)]
    simplified = _check([out], [a, b], values)
    assert "matmul" not in _ops(simplified) and "mul" in _ops(simplified)


def test_a_real_power_of_zero_is_one_nan_and_zero_included():
    """x ** 0 is 1 for every real x (numpy's too: NaN ** 0 and 0 ** 0 are 1): no pow left (a
    broadcast of one, folded); a complex power of zero stays a pow."""
    x = _input("x", (6,))
    out = _node("pow", [x, _const(np.array(0.0))], (6,))
    values = [np.array([0.0, -0.0, -2.5, np.nan, np.inf, -np.inf])]
    simplified = _check([out], [x], values)
    assert _ops(simplified) == []
    z = Node("input", (), {"name": "z"}, (2,), tt.complex128)
    zero = Node("const", (), {"value": Literal(np.array(0j))}, (), tt.complex128)
    power = Node("pow", (z, zero), {}, (2,), tt.complex128)
    graph = Graph([z], [z, zero, power], [power])
    assert [n.op for n in simplify(graph).nodes if n.op not in ("input", "const")] == ["pow"]
