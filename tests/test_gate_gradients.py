"""sigmoid's and tanh's gradients are one op each (sigmoid_grad, tanh_grad: TensorFlow's
SigmoidGrad and TanhGrad), computing g * (y * (1 - y)) and g * (1 - y * y) in that order, so
their values are the three ops' bit for bit, eager and compiled; complex values keep the
three ops, whose rules conjugate."""

import numpy as np
import pytest

import tracer as tt

RNG = np.random.default_rng(11)


def _gradient(function, x, g):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = function(x)
    return tape.gradient(y, x, output_gradients=g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_the_gradients_give_the_three_ops_bits_eager_and_compiled(name, dtype):
    x = (RNG.standard_normal((5, 7)) * 4).astype(dtype)
    x[0, :3] = [np.nan, np.inf, -np.inf]
    g = RNG.standard_normal((5, 7)).astype(dtype)
    function = {"sigmoid": tt.sigmoid, "tanh": tt.tanh}[name]

    def value_and_gradient(x, g):
        return function(x), _gradient(function, x, g)

    compiled = tt.function(value_and_gradient, backend="c")
    assert f"{name}_grad" in compiled.get_concrete_function(x, g).ir("traced")
    for y, gradient in (value_and_gradient(tt.constant(x), tt.constant(g)), compiled(x, g)):
        y = y.numpy()  # each backend's own sigmoid or tanh may differ in the last bit
        want = g * (y * (1 - y)) if name == "sigmoid" else g * (1 - y * y)
        assert gradient.numpy().tobytes() == want.tobytes()


def test_an_lstm_gate_records_one_gradient_op_per_gate():
    x = tt.constant(RNG.standard_normal((3, 4)))

    def gates(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sigmoid(x) * tt.tanh(x))
        return tape.gradient(y, x)

    text = tt.function(gates).get_concrete_function(x).ir("traced")
    assert text.count("sigmoid_grad") == 1 and text.count("tanh_grad") == 1
    s, t = 1 / (1 + np.exp(-x.numpy())), np.tanh(x.numpy())
    want = s * (1 - s) * t + s * (1 - t * t)
    np.testing.assert_allclose(gates(x).numpy(), want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_complex_values_keep_the_conjugating_rules(name):
    z = tt.constant(RNG.standard_normal(4) + 1j * RNG.standard_normal(4))
    g = tt.constant(RNG.standard_normal(4) + 1j * RNG.standard_normal(4))
    function = {"sigmoid": tt.sigmoid, "tanh": tt.tanh}[name]
    y = function(z).numpy()
    slope = y * (1 - y) if name == "sigmoid" else 1 - y * y
    np.testing.assert_allclose(
        _gradient(function, z, g).numpy(), g.numpy() * np.conj(slope), rtol=1e-14
    )


def test_a_gate_gradient_of_integers_is_refused():
    from tracer.ops.core import apply
    from tracer.ops.math_ops import TANH_GRAD

    with pytest.raises(TypeError, match="tanh_grad.*real floating.*int32"):
        apply(TANH_GRAD, (tt.constant([1, 2]), tt.constant([1, 2])), {})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [7, 300_000])  # the second on the installed kernel's threads
def test_relus_gradient_is_one_op_with_the_selections_bits(dtype, size):
    x = (RNG.standard_normal(size) * 2).astype(dtype)
    x[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    g = RNG.standard_normal(size).astype(dtype)
    g[5:7] = [np.nan, np.inf]
    want = np.where(np.maximum(x, 0) > 0, g, np.zeros((), dtype))  # TensorFlow's ReluGrad
    compiled = tt.function(lambda x, g: _gradient(tt.nn.relu, x, g), backend="c")
    assert "relu_grad" in compiled.get_concrete_function(x, g).ir("traced")
    for got in (_gradient(tt.nn.relu, tt.constant(x), tt.constant(g)), compiled(x, g)):
        assert got.numpy().tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [7, 3000, 40_000, 300_000])  # numpy's twice; installed; threads
def test_relu_gives_numpys_maximum_bits_eager_and_compiled(dtype, size):
    x = (RNG.standard_normal(size) * 2).astype(dtype)
    tiny = np.finfo(dtype).tiny / 4
    x[:7] = [np.nan, -np.nan, np.inf, -np.inf, -0.0, tiny, -tiny]
    want = np.maximum(x, np.zeros((), dtype))  # NaN kept, -0 made +0
    compiled = tt.function(lambda x: tt.nn.relu(x), backend="c")
    for got in (tt.nn.relu(tt.constant(x)), compiled(x)):
        assert got.numpy().tobytes() == want.tobytes()


def test_relus_gradient_of_every_order_and_under_a_jacobian():
    x = tt.constant(RNG.standard_normal((3, 4)))
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.reduce_sum(tt.nn.relu(x) * x)
        slope = inner.gradient(y, x)
    positive = (x.numpy() > 0).astype(float)
    np.testing.assert_array_equal(slope.numpy(), 2 * x.numpy() * positive)
    np.testing.assert_array_equal(outer.gradient(slope, x).numpy(), 2 * positive)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.nn.relu(x)
    jacobian = tape.jacobian(y, x).numpy().reshape(12, 12)
    np.testing.assert_array_equal(jacobian, np.diag(positive.ravel()))
