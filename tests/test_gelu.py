"""GELU is one op and its gradient another (gelu, gelu_grad: PyTorch's gelu and
gelu_backward), with TensorFlow's formula 0.5 * x * (1 + erf(x / sqrt(2))): their values
against that formula in float64 and their derivatives against the analytic ones; eager
(one C loop each, codegen/array_math.py) and the interpreter give the same bits, compiled
code the same C expression; numpy's composite where no module can be built."""

import math

import numpy as np
import pytest

import tracer as tt
from codegen import array_math

RNG = np.random.default_rng(20261130)


def _gelu(x):
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


def _slope(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2))) + x * math.exp(-x * x / 2) / math.sqrt(
        2 * math.pi
    )


def _curvature(x):
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi) * (2 - x * x)


def _value_and_gradient(x, g):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.nn.gelu(x)
    return y, tape.gradient(y, x, output_gradients=g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [5, 13, 100, 4099])
def test_eager_interpreter_and_compiled_agree(dtype, size):
    x = (RNG.standard_normal(size) * 4).astype(dtype)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    g = RNG.standard_normal(size).astype(dtype)
    eager = _value_and_gradient(tt.constant(x), tt.constant(g))
    compiled = tt.function(_value_and_gradient, backend="c")
    assert "gelu_grad" in compiled.get_concrete_function(x, g).ir("traced")
    interpreted = tt.function(_value_and_gradient, backend="interpreter")
    for got, want in zip(interpreted(x, g), eager):
        assert got.numpy().tobytes() == want.numpy().tobytes()
    # the same C expression; a compiled loop of a known count may end with libm's scalar
    # erf or exp where the eager loop calls the vector one (or the other way), an ulp apart
    # (an ulp of erf near -1 is many of 1 + erf: the bound scales with x, not the result)
    bound = 4 * np.finfo(dtype).eps * (1 + np.abs(x) * (1 + np.abs(g)))
    for got, want in zip(compiled(x, g), eager):
        got, want = got.numpy(), want.numpy()
        assert (np.isnan(got) == np.isnan(want)).all()
        finite = np.isfinite(want)
        assert (got[~finite] == want[~finite])[~np.isnan(want[~finite])].all()
        with np.errstate(invalid="ignore"):  # inf - inf where the values are infinite
            assert (np.abs(got - want)[finite] <= bound[finite]).all()
    y, gradient = (t.numpy() for t in eager)
    # TensorFlow's formula at -inf is -inf * 0, and its slope's x * p(x) at either infinity
    assert y[1] == np.inf and y[3] == 0 and np.signbit(y[3])
    assert np.isnan(y[[0, 2]]).all() and np.isnan(gradient[:3]).all()


def test_values_and_derivatives_of_every_order_are_the_formulas():
    x = tt.constant(np.linspace(-3, 3, 61))
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.nn.gelu(x)
        slope = inner.gradient(y, x)
    curvature = outer.gradient(slope, x)
    points = x.numpy()
    np.testing.assert_allclose(y.numpy(), [_gelu(v) for v in points], rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(slope.numpy(), [_slope(v) for v in points], rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(curvature.numpy(), [_curvature(v) for v in points], atol=1e-15)


def test_a_jacobian_and_forward_mode_agree_with_the_slope():
    x = tt.constant(RNG.standard_normal(6))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.nn.gelu(x)
    slopes = [_slope(v) for v in x.numpy()]
    np.testing.assert_allclose(np.diag(tape.jacobian(y, x).numpy()), slopes, rtol=1e-14)
    with tt.autodiff.ForwardAccumulator(x, tt.ones_like(x)) as accumulator:
        y = tt.nn.gelu(x)
    np.testing.assert_allclose(accumulator.jvp(y).numpy(), slopes, rtol=1e-14)


def test_float16_and_the_tanh_form():
    x = RNG.standard_normal(200)
    half = tt.nn.gelu(tt.constant(x.astype(np.float16)))
    assert half.dtype == tt.float16
    np.testing.assert_allclose(
        half.numpy(), [_gelu(float(v)) for v in x.astype(np.float16)], rtol=1e-3
    )
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(tt.nn.gelu(x, approximate=True).numpy(), tanh_form, rtol=1e-14)


def test_numpys_composite_where_no_module_can_be_built(monkeypatch):
    x = (RNG.standard_normal(300) * 3).astype(np.float32)
    g = RNG.standard_normal(300).astype(np.float32)
    built = [t.numpy() for t in _value_and_gradient(tt.constant(x), tt.constant(g))]
    monkeypatch.setattr(array_math, "_entries", {"float32": None, "float64": None})
    assert array_math.apply("gelu", x) is None
    composite = [t.numpy() for t in _value_and_gradient(tt.constant(x), tt.constant(g))]
    for got, want in zip(composite, built):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
