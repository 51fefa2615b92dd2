"""Loop kernels of few elements are compiled at -O1 (TR_LIGHT, codegen/lower.py's
LIGHT_ELEMENTS), the others at -O3; their `omp simd` sums and vector maths still vectorize,
so a module gives the same bits either way."""

import numpy as np
import pytest

import tracer as tt
from codegen import lower

RNG = np.random.default_rng(21)


def _mixture(x, mu, w):
    """Small kernels (the parameters') beside a large one (the points'), with exp, sums and
    maxima."""
    scores = -0.5 * tt.reduce_sum(tt.square(x[:, None, :] - mu[None, :, :]), axis=2)
    top = tt.reduce_max(scores, axis=1, keepdims=True)
    weights = tt.nn.softmax(w)
    return tt.reduce_sum(tt.math.log(tt.reduce_sum(tt.exp(scores - top) * weights, axis=1)))


def _value_and_gradients(x, mu, w):
    with tt.GradientTape() as tape:
        tape.watch([mu, w])
        value = _mixture(x, mu, w)
    return [value, *tape.gradient(value, [mu, w])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_light_kernels_give_the_bits_of_minus_o3(monkeypatch, tmp_path, dtype):
    x, mu, w = (RNG.standard_normal(s).astype(dtype) for s in ((600, 7), (9, 7), (9,)))
    outputs, sources = [], []
    for light in (lower.LIGHT_ELEMENTS, 0):
        monkeypatch.setattr(lower, "LIGHT_ELEMENTS", light)
        monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / str(light)))  # no stored plan
        compiled = tt.function(_value_and_gradients, backend="c")
        outputs.append([r.numpy() for r in compiled(x, mu, w)])
        sources.append(compiled.get_concrete_function(x, mu, w).c_source())
    assert "\nTR_LIGHT\n" in sources[0] and "\nTR_LIGHT\n" not in sources[1]
    for a, b in zip(*outputs, strict=True):
        assert a.tobytes() == b.tobytes()
    eager = [r.numpy() for r in _value_and_gradients(*map(tt.constant, (x, mu, w)))]
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    for a, b in zip(outputs[0], eager, strict=True):
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)


def test_only_loop_kernels_of_few_elements_are_light():
    x, mu, w = (RNG.standard_normal(s) for s in ((600, 7), (9, 7), (9,)))
    source = tt.function(_value_and_gradients, backend="c").get_concrete_function(x, mu, w)
    source = source.c_source()
    light = source.split("\nTR_LIGHT\n")[1:]
    assert light
    for text in light:
        definition = text.split("{", 1)[0]
        assert "600x9" not in definition and "matmul" not in definition, definition


def _gates(x):
    return tt.tanh(x) * tt.sigmoid(x) + tt.exp(x) * 0.5 + tt.maximum(x, 0.1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_light_kernels_helpers_are_inlined_and_vectorized(monkeypatch, tmp_path, dtype):
    """The helpers (tr_exp, tr_sigmoid, tr_maximum) are inlined into a light kernel too
    (TR_INLINE): GCC inlines nothing into a function of another optimization level
    otherwise, and the loop then called libm's scalar exp where -O3's calls the vector one,
    a few elements in a thousand rounding otherwise."""
    x = RNG.uniform(-20.0, 20.0, 2000).astype(dtype)
    outputs = []
    for light in (lower.LIGHT_ELEMENTS, 0):
        monkeypatch.setattr(lower, "LIGHT_ELEMENTS", light)
        monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / str(light)))
        compiled = tt.function(_gates, backend="c")
        outputs.append(compiled(x).numpy())
        source = compiled.get_concrete_function(x).c_source()
        assert ("\nTR_LIGHT\n" in source) == bool(light)
        assert "static inline TR_INLINE " in source
    assert outputs[0].tobytes() == outputs[1].tobytes()
    eager = _gates(tt.constant(x)).numpy()
    np.testing.assert_allclose(outputs[0], eager, rtol=1e-5 if dtype == np.float32 else 1e-13)


def _second_moment(v, g):
    return v * 0.999 + g * g * 0.001


@pytest.mark.parametrize("size", [100, 20_000])
def test_a_light_kernel_squaring_floats_is_written_once_at_the_modules_level(size, monkeypatch):
    """A kernel whose float32 squares flow into a sum is written twice, numpy's operations and
    on float's grid, under a chooser (codegen/lower.py's _loop_kernel_text), where the CPU
    makes subnormals slowly (set so here); a light one once, numpy's operations, and not at
    -O1 (the chooser's versions are not either). The bits are numpy's either way, subnormal
    squares included."""
    from codegen import subnormals

    monkeypatch.setattr(subnormals, "slow", lambda: True)
    g = (RNG.choice([-1.0, 1.0], size) * 2.0 ** RNG.integers(-80, 10, size)).astype(np.float32)
    g[:4] = [0.0, -0.0, 1e-45, 2.0**-70]
    v = np.abs(RNG.standard_normal(size)).astype(np.float32)
    compiled = tt.function(_second_moment, backend="c")
    got = compiled(v, g).numpy()
    source = compiled.get_concrete_function(v, g).c_source()
    light = size < lower.LIGHT_ELEMENTS
    assert ("_grid(" in source and "_plain(" in source) == (not light)
    assert "\nTR_LIGHT\n" not in source
    want = _second_moment(tt.constant(v), tt.constant(g)).numpy()
    assert got.tobytes() == want.tobytes()
