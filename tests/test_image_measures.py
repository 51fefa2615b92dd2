"""tt.image.total_variation, image_gradients, sobel_edges and psnr against what TensorFlow
2.21 printed for the same images (numpy's generator seeded 0); their gradients are the
catalogue's (tests/catalogue/image_measures.py)."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(0)
X = rng.uniform(0, 1, (2, 5, 6, 3)).astype(np.float32)
Y = rng.uniform(0, 1, (2, 5, 6, 3)).astype(np.float32)


def test_total_variation_and_image_gradients():
    np.testing.assert_allclose(tt.image.total_variation(X).numpy(), [48.46853, 56.67085], rtol=1e-6)
    np.testing.assert_allclose(tt.image.total_variation(X[0]).numpy(), 48.46853, rtol=1e-6)
    dy, dx = tt.image.image_gradients(X)
    assert dy.shape == dx.shape == X.shape
    np.testing.assert_allclose(
        [dy.numpy().sum(), dx.numpy().sum()], [1.7692813, 0.8396833], rtol=1e-6
    )
    assert not dy.numpy()[:, -1].any() and not dx.numpy()[:, :, -1].any()


def test_sobel_edges():
    edges = tt.image.sobel_edges(X)
    assert edges.shape == (2, 5, 6, 3, 2)
    np.testing.assert_allclose(edges.numpy()[0, 1, :, 1, 0], [0.75592, -0.25537, -1.61361, -0.76992, 1.02273, 1.62473], atol=1e-5)  # fmt: skip
    # the reflected top row cancels (to float32's rounding of the sum)
    np.testing.assert_allclose(edges.numpy()[0, 0, :, 1, 0], 0.0, atol=1e-6)
    np.testing.assert_allclose(edges.numpy().sum(), 10.575165, rtol=1e-5)


def test_psnr_of_float_and_integer_images():
    np.testing.assert_allclose(tt.image.psnr(X, Y, 1.0).numpy(), [7.7050147, 7.473344], rtol=1e-6)
    a, b = tt.cast(tt.constant(X) * 255, tt.uint8), tt.cast(tt.constant(Y) * 255, tt.uint8)
    np.testing.assert_allclose(tt.image.psnr(a, b, 255).numpy(), [7.7055807, 7.469325], rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="rank 4"):
        tt.image.sobel_edges(X[0])
    with pytest.raises(TypeError, match="one dtype"):
        tt.image.psnr(X, X.astype(np.float64), 1.0)
