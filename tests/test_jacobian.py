"""jacobian and batch_jacobian: values against stacked per-row gradients, vectorized and looped."""

import numpy as np
import pytest

import tracer.backprop
import tracer as tt

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
            np.testing.assert_allclose(bj.numpy()[i], per_row_jacobian(lambda r: f(r[None])[0], x[i]), rtol=1e-12)


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
    np.testing.assert_allclose(g.numpy(), [np.cos(a) + np.cos(b) - a * np.sin(a) + np.cos(a), -a * np.sin(b) + np.cos(b)], rtol=1e-6)
