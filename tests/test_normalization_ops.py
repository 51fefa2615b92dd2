"""tt.nn.local_response_normalization (lrn), weighted_moments and crelu against TensorFlow's
documented formulas computed here with numpy, eagerly and compiled, float32 and float64.
Their gradients of every order in every backend are the catalogue's (tests/catalogue/
layout_and_sort.py); TF 2.21 gave the same values and gradients within 2e-7 on a
(2, 3, 2, 7) float32 input (a run kept out of the tree)."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(12)


def _lrn(x, radius, bias, alpha, beta):
    """TensorFlow's definition: sqr_sum[..., d] = sum(x[..., d - r : d + r + 1] ** 2), and
    x / (bias + alpha * sqr_sum) ** beta."""
    squares = np.zeros_like(x)
    for d in range(x.shape[-1]):
        squares[..., d] = np.sum(x[..., max(0, d - radius) : d + radius + 1] ** 2, axis=-1)
    return x / (bias + alpha * squares) ** beta


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("params", [(5, 1.0, 1.0, 0.5), (2, 0.5, 0.3, 0.75), (9, 2.0, 0.1, 1.0)])
def test_local_response_normalization_is_tensorflows_formula(params, dtype):
    x = rng.standard_normal((2, 3, 2, 7)).astype(dtype)
    radius, bias, alpha, beta = params
    want = _lrn(x.astype(np.float64), *params)
    kwargs = dict(depth_radius=radius, bias=bias, alpha=alpha, beta=beta)
    eager = tt.nn.local_response_normalization(x, **kwargs)
    compiled = tt.function(lambda x: tt.nn.lrn(x, **kwargs))(x)
    tolerance = 1e-6 if dtype == np.float32 else 1e-13
    for got in (eager, compiled):
        assert got.dtype == tt.as_dtype(np.dtype(dtype).name)
        np.testing.assert_allclose(got.numpy(), want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("keepdims", [False, True])
def test_weighted_moments_are_the_weighted_mean_and_variance(keepdims):
    x = rng.standard_normal((2, 3, 4))
    weights = rng.uniform(0.5, 2.0, (2, 1, 4))
    full = np.broadcast_to(weights, x.shape)
    mean = np.sum(full * x, axis=(0, 2), keepdims=True) / np.sum(full, axis=(0, 2), keepdims=True)
    variance = np.sum(full * (x - mean) ** 2, axis=(0, 2), keepdims=True) / np.sum(
        full, axis=(0, 2), keepdims=True
    )
    if not keepdims:
        mean, variance = mean.reshape(3), variance.reshape(3)
    for run in (tt.nn.weighted_moments, tt.function(tt.nn.weighted_moments)):
        got_mean, got_variance = run(x, [0, 2], weights, keepdims=keepdims)
        np.testing.assert_allclose(got_mean.numpy(), mean, rtol=1e-13)
        np.testing.assert_allclose(got_variance.numpy(), variance, rtol=1e-13)


def test_crelu_joins_both_halves_along_its_axis():
    x = rng.standard_normal((2, 3))
    np.testing.assert_array_equal(
        tt.nn.crelu(x).numpy(), np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1)
    )
    np.testing.assert_array_equal(
        tt.nn.crelu(x, axis=0).numpy(), np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], 0)
    )


def test_lrn_refuses_what_it_cannot_normalize():
    with pytest.raises(ValueError, match="must be 4-D"):
        tt.nn.lrn(tt.ones((2, 3)))
    with pytest.raises(TypeError, match="must be floating"):
        tt.nn.lrn(tt.ones((1, 1, 1, 3), tt.int32))
