"""tt.image.adjust_contrast: TensorFlow 2.21's values, gradients against finite differences,
compiled as eager."""

import numpy as np
import pytest

import tracer as tt

IMAGE = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]


def test_adjust_contrast_gives_tensorflows_values():
    got = tt.image.adjust_contrast(IMAGE, 2.0)
    assert got.dtype == tt.float32
    assert got.numpy().tolist() == [  # what tf.image.adjust_contrast(IMAGE, 2.) returns
        [[-3.5, -2.5, -1.5], [2.5, 3.5, 4.5]],
        [[8.5, 9.5, 10.5], [14.5, 15.5, 16.5]],
    ]
    assert tt.image.adjust_contrast(tt.constant(IMAGE, tt.float64), 0.5).dtype == tt.float64
    ints = tt.constant([[[10], [200]], [[30], [40]]], tt.int32)
    assert tt.image.adjust_contrast(ints, 2.0).numpy().tolist() == [[[-50], [330]], [[-10], [10]]]
    with pytest.raises(ValueError, match=r"\[\.\.\., height, width, channels\]"):
        tt.image.adjust_contrast(tt.constant([1.0, 2.0]), 2.0)


def test_adjust_contrast_of_a_batch_differentiates_and_compiles():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((2, 3, 4, 2))
    weights = rng.standard_normal(images.shape)

    def loss(x, factor):
        return tt.reduce_sum(tt.image.adjust_contrast(x, factor) * weights)

    x, factor = tt.constant(images), tt.constant(1.7, tt.float64)
    with tt.GradientTape() as tape:
        tape.watch([x, factor])
        value = loss(x, factor)
    dx, dfactor = tape.gradient(value, [x, factor])
    mean = images.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(value.numpy(), np.sum(((images - mean) * 1.7 + mean) * weights))
    # d/dfactor: sum((x - mean) * w); d/dx: factor * w + (1 - factor) * mean of w per channel
    np.testing.assert_allclose(dfactor.numpy(), np.sum((images - mean) * weights), rtol=1e-12)
    w_mean = weights.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(dx.numpy(), 1.7 * weights + (1 - 1.7) * w_mean, rtol=1e-12)
    compiled = tt.function(loss)
    np.testing.assert_allclose(compiled(x, factor).numpy(), value.numpy(), rtol=1e-12)
