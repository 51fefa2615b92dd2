"""jacobian and batch_jacobian: values against stacked per-row gradients, vectorized and looped."""

import numpy as np
import pytest

import tracer as tt
import tracer.backprop
from tests.test_gradients import ALL_CASES

rng = np.random.default_rng(7)
W = rng.standard_normal((4, 3))
B = rng.standard_normal(4)


def mlp(x):
    return tt.tanh(tt.matmul(W, x[:, None])[:, 0] + B)


FUNCTIONS = {
    "elementwise": lambda x: tt.sin(x) * x,
    "matmul_broadcast": mlp,
    "reduction": lambda x: tt.reduce_sum(x[None, :] * x[:, None], axis=0) / tt.reduce_max(x),
    "softmax": lambda x: tt.nn.softmax(x * 2.0),
    "slices": lambda x: tt.concat([x[::-1], x[1:] ** 2], axis=0),
    "gather": lambda x: tt.gather(x, [2, 0, 0]) * tt.reduce_sum(x),
}


def per_row_jacobian(function, x):
    """The reference: one gradient per element of the output, stacked."""
    rows = []
    y = np.asarray(function(tt.constant(x)))
    for i in range(y.size):
        xt = tt.constant(x)
        with tt.GradientTape() as tape:
            tape.watch(xt)
            yi = tt.reshape(function(xt), [-1])[i]
        rows.append(tt.convert_to_tensor(tape.gradient(yi, xt)))
    return np.asarray(tt.stack(rows)).reshape(y.shape + x.shape)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("use_pfor", [True, False])
def test_jacobian_matches_stacked_gradients(name, use_pfor):
    function = FUNCTIONS[name]
    x = rng.uniform(0.5, 1.5, 3)
    xt = tt.constant(x)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        y = function(xt)
    jac = tape.jacobian(y, xt, experimental_use_pfor=use_pfor)
    assert jac.shape == y.shape + xt.shape
    np.testing.assert_allclose(jac.numpy(), per_row_jacobian(function, x), rtol=1e-12, atol=1e-12)


def test_vectorized_jacobian_runs_the_gradient_graph_once(monkeypatch):
    runs = []
    original = tracer.backprop.execute_gradient

    def counting(grad, inputs):
        runs.append(grad)
        return original(grad, inputs)

    monkeypatch.setattr("tracer.backprop.execute_gradient", counting)
    x = tt.constant(rng.standard_normal(3))
    for use_pfor, expected_runs in ((True, 1), (False, 4)):
        runs.clear()
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = mlp(x)
        tape.jacobian(y, x, experimental_use_pfor=use_pfor)
        assert len(runs) == expected_runs
    runs.clear()
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = mlp(x)
    tape.jacobian(y, x, parallel_iterations=3)
    assert len(runs) == 2  # 4 rows in chunks of at most 3


def test_jacobian_of_several_sources_and_unconnected_ones():
    x, z = tt.constant([1.0, 2.0]), tt.constant(3.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * x
    jx, jz = tape.jacobian(y, [x, z])
    np.testing.assert_array_equal(jx.numpy(), [[2.0, 0.0], [0.0, 4.0]])
    assert jz is None
    _, jz = tape.jacobian(y, [x, z], unconnected_gradients="zero")
    assert jz.shape == (2,) and not np.any(jz.numpy())


def test_batch_jacobian_matches_per_example_jacobians():
    x = rng.standard_normal((5, 3))
    weights = rng.standard_normal((3, 2))

    def f(t):
        return tt.tanh(t @ weights) * tt.reduce_sum(t, axis=1, keepdims=True)

    for use_pfor in (True, False):
        xt = tt.constant(x)
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(xt)
            y = f(xt)
        bj = tape.batch_jacobian(y, xt, experimental_use_pfor=use_pfor)
        assert bj.shape == (5, 2, 3)
        for i in range(5):
            np.testing.assert_allclose(
                bj.numpy()[i], per_row_jacobian(lambda r: f(r[None])[0], x[i]), rtol=1e-12
            )


def test_hessian_by_jacobian_of_a_gradient_and_by_nested_tapes():
    x = tt.constant(rng.standard_normal(4))

    def f(t):
        return tt.reduce_sum(tt.sin(t) * t**2)

    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    hessian = outer.jacobian(g, x)
    v = x.numpy()
    expected = np.diag(2 * np.sin(v) + 4 * v * np.cos(v) - v**2 * np.sin(v))
    np.testing.assert_allclose(hessian.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_jacobian_can_itself_be_differentiated():
    x = tt.constant([0.3, 0.7])
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.sin(x) * x[0]
        j = inner.jacobian(y, x)
        total = tt.reduce_sum(j)
    g = outer.gradient(total, x)
    # sum of the jacobian = x0*(cos x0 + cos x1) + sin x0 + sin x1
    a, b = x.numpy()
    np.testing.assert_allclose(
        g.numpy(),
        [np.cos(a) + np.cos(b) - a * np.sin(a) + np.cos(a), -a * np.sin(b) + np.cos(b)],
        rtol=1e-6,
    )


def test_an_eager_jacobian_holds_its_seeds_as_a_constant_and_drops_the_products_with_their_zeros(
    monkeypatch,
):
    """The vectorized gradient of tanh(W @ x + b) multiplies one-hot seeds into W: eagerly,
    as compiled, that GEMM becomes a broadcast product, with the GEMM's values."""
    graphs = []
    original = tracer.backprop.execute_gradient
    monkeypatch.setattr(
        "tracer.backprop.execute_gradient",
        lambda grad, inputs: graphs.append(grad.graph) or original(grad, inputs),
    )
    w, b = rng.standard_normal((6, 5)), rng.standard_normal(6)
    x = tt.constant(rng.standard_normal(5))
    for step in range(2):  # the second step finds the simplified graph in the cache
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.tanh(tt.matmul(w, x[:, None])[:, 0] + b)
        jac = tape.jacobian(y, x)
        assert not any(node.op == "matmul" for node in graphs[-1].nodes)
        derivative = 1 - np.tanh(w @ x.numpy() + b) ** 2
        np.testing.assert_allclose(jac.numpy(), derivative[:, None] * w, rtol=1e-14, atol=1e-15)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.tanh(tt.matmul(w, x[:, None])[:, 0] + b)
    chunked = tape.jacobian(y, x, parallel_iterations=4)  # runs of seeds as inputs: the GEMM stays
    assert any(node.op == "matmul" for node in graphs[-1].nodes)
    np.testing.assert_allclose(chunked.numpy(), jac.numpy(), rtol=1e-14, atol=1e-15)
    with tt.GradientTape() as tape:  # seeds that no rule removes stay an input, not a kept constant
        tape.watch(x)
        y = tt.sin(x) * x
    elementwise = tape.jacobian(y, x)
    assert not any(node.op == "one_hot_seeds" for node in graphs[-1].nodes)
    assert graphs[-1].inputs[0].attrs["name"] == "seed0" and graphs[-1].inputs[0].shape == (5, 5)
    np.testing.assert_allclose(
        elementwise.numpy(),
        np.diag(np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())),
        rtol=1e-14,
        atol=1e-15,
    )


def test_an_eager_hessian_of_elementwise_functions_makes_one_product_of_the_seeds_size(
    monkeypatch,
):
    """B5's hessian: the seeds factor out of every elementwise product of the vectorized
    gradient (tracer/ops/seed_ops.py), so one op makes a rows x size array; the values are
    the compiled ones and the analytic ones."""
    graphs = []
    original = tracer.backprop.execute_gradient
    monkeypatch.setattr(
        "tracer.backprop.execute_gradient",
        lambda grad, inputs: graphs.append(grad.graph) or original(grad, inputs),
    )

    def hessian(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = tt.reduce_sum(tt.sin(x) * x**2)
            g = inner.gradient(y, x)
        return outer.jacobian(g, x)

    x = rng.uniform(-3, 3, 7)
    want = np.diag((2 - x**2) * np.sin(x) + 4 * x * np.cos(x))
    for _ in range(2):  # the second call finds the simplified graph in the cache
        eager = hessian(tt.constant(x)).numpy()
        np.testing.assert_allclose(eager, want, rtol=1e-13, atol=1e-14)
        big = [n for n in graphs[-1].nodes if n.shape == (7, 7) and n.op != "input"]
        assert [n.op for n in big] == ["mul"]
    np.testing.assert_allclose(tt.function(hessian)(tt.constant(x)).numpy(), eager, rtol=1e-14)


def test_eager_and_compiled_jacobians_agree_where_the_matrix_holds_nan_and_inf():
    # values of its own, whatever ran before: where tanh nears 1, its derivative 1 - t^2
    # loses digits, and a tanh that differs by an ulp fails the 1e-14 comparison below
    rng = np.random.default_rng(223)
    w, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    w[1, 2], w[3, 0] = np.nan, np.inf

    def jacobian(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.tanh(tt.matmul(w, x[:, None])[:, 0] + b)
        return tape.jacobian(y, x)

    x = tt.constant(rng.standard_normal(3))
    with np.errstate(invalid="ignore"):
        eager = jacobian(x).numpy()
    compiled = tt.function(jacobian)(x).numpy()
    np.testing.assert_array_equal(np.isnan(eager), np.isnan(compiled))
    # row 1 reads the NaN; row 3 is 0 * w[3] (tanh saturates), NaN only where w is Inf
    assert np.isnan(eager[1]).all() and np.isnan(eager[3]).tolist() == [True, False, False]
    finite = ~np.isnan(eager)
    assert finite[[0, 2]].all()
    derivative = 1 - np.tanh(w[[0, 2]] @ x.numpy() + b[[0, 2]]) ** 2
    np.testing.assert_allclose(eager[[0, 2]], derivative[:, None] * w[[0, 2]], rtol=1e-14)
    np.testing.assert_allclose(eager[finite], compiled[finite], rtol=1e-14)


def test_eager_batch_jacobian_with_constant_seeds_matches_per_example_jacobians_and_second_order():
    w = rng.standard_normal((3, 5))
    x = tt.constant(rng.standard_normal((4, 5)))
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.tanh(tt.matmul(x, w, transpose_b=True))
        jac = tape.batch_jacobian(y, x)
        total = tt.reduce_sum(jac * jac)
    derivative = 1 - np.tanh(x.numpy() @ w.T) ** 2  # [b, 3]
    np.testing.assert_allclose(jac.numpy(), derivative[:, :, None] * w[None], rtol=1e-13)
    # d/dx sum_b,i,j (d_bi w_ij)^2, with d = 1 - tanh(z)^2, dd/dz = -2 tanh(z) d
    z = x.numpy() @ w.T
    dd = -2 * np.tanh(z) * derivative
    expected = (2 * derivative * dd * (w**2).sum(axis=1)[None]) @ w
    np.testing.assert_allclose(outer.gradient(total, x).numpy(), expected, rtol=1e-12)


def _catalogue_jacobians(function, inputs, use_pfor):
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(inputs)
        y = function(*inputs)
        y = tt.math.real(y) if y.dtype.is_complex else y
    return tape.jacobian(y, inputs, experimental_use_pfor=use_pfor)


# cases of compiled functions, whose jacobians loop (structured ops have no batching rules)
LOOPED_ONLY = ("call", "cond", "get", "recompute", "switch", "while")


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_over_the_catalogue_vectorized_and_compiled_jacobians_equal_looped_ones(name):
    """Every op's batching rule against a loop of gradients, eagerly and compiled."""
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a) for a in args]
    looped = _catalogue_jacobians(function, inputs, use_pfor=False)
    if name in LOOPED_ONLY:  # a compiled function on a tape: its jacobian loops over its rows
        with pytest.raises(ValueError, match="experimental_use_pfor"):
            _catalogue_jacobians(function, inputs, use_pfor=True)
        compiled = tt.function(lambda *xs: _catalogue_jacobians(function, list(xs), False))
        for want, traced in zip(looped, compiled(*inputs)):
            np.testing.assert_allclose(traced.numpy(), want.numpy(), rtol=1e-12, atol=1e-13)
        return
    vectorized = _catalogue_jacobians(function, inputs, use_pfor=True)
    compiled = tt.function(lambda *xs: _catalogue_jacobians(function, list(xs), True))(*inputs)
    for want, eager, traced in zip(looped, vectorized, compiled):
        if want is None:
            assert eager is None and traced is None
            continue
        np.testing.assert_allclose(eager.numpy(), want.numpy(), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(traced.numpy(), want.numpy(), rtol=1e-12, atol=1e-13)


def test_a_compiled_looped_jacobian_is_one_loop_whatever_its_rows():
    """With pfor off inside tt.function, the rows run in a while_loop: the C holds the gradient
    graph once (its size does not grow with the rows), with the eager loop's values, for
    several sources (an unconnected one, a gathered one) and for batch_jacobian."""
    weights = rng.standard_normal((3, 2))

    def jacobians(x, table):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch([x, table])
            rows = tt.gather(table, [2, 0, 2])
            y = tt.sin(x) * tt.reduce_sum(x * x) + tt.reduce_sum(rows) * x
            examples = tt.reshape(y[:6], (2, 3))
            b = tt.tanh(examples @ weights) * tt.reduce_sum(examples, axis=1, keepdims=True)
        j = tape.jacobian(y, [x, table, tt.constant(1.0)], experimental_use_pfor=False)
        assert j[2] is None
        return [*j[:2], tape.batch_jacobian(b, examples, experimental_use_pfor=False)]

    sizes = {}
    for n in (6, 60):
        x, table = tt.constant(np.linspace(0.1, 1.0, n)), tt.constant(rng.standard_normal((4, 2)))
        eager = jacobians(x, table)
        compiled = tt.function(jacobians, backend="c")
        for want, got in zip(eager, compiled(x, table)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
        sizes[n] = len(compiled.get_concrete_function(x, table).c_source())
    assert sizes[60] < 1.2 * sizes[6]  # unrolled, 10x the rows made about 10x the C
