"""GroupNormalization and SeparableConv2D against numpy references, finite differences and
the outputs TensorFlow 2.21's Keras gives for the same model and weights."""

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers
rng = np.random.default_rng(0)

# TensorFlow 2.21's first outputs and sum for `_model()` on `_inputs()` (the same program with
# `import tensorflow as tf`, weights from the same numpy generator)
KERAS_FIRST = [-0.06047184392809868, -0.3270258903503418, -0.43619897961616516,
               -0.13139164447784424, -0.07498739659786224, -0.29152369499206543]  # fmt: skip
KERAS_SUM = -2.999433994293213


def _model_and_inputs():
    generator = np.random.default_rng(0)
    x = generator.normal(size=(2, 5, 6, 8)).astype(np.float32) * 3 + 1
    model = tt.keras.Sequential([
        tt.keras.Input((5, 6, 8)),
        layers.SeparableConv2D(6, 3, padding="same", depth_multiplier=2, activation="relu"),
        layers.GroupNormalization(groups=3),
        layers.SeparableConv2D(4, (2, 3), strides=(2, 1), padding="valid"),
        layers.GroupNormalization(groups=-1, epsilon=1e-5),
    ])  # fmt: skip
    model.set_weights(
        [generator.normal(0, 0.5, w.shape).astype(np.float32) for w in model.get_weights()]
    )
    return model, x


def test_a_model_of_both_gives_kerass_outputs_eagerly_compiled_and_from_its_file(tmp_path):
    model, x = _model_and_inputs()
    out = model(x).numpy()
    np.testing.assert_allclose(out.ravel()[:6], KERAS_FIRST, atol=1e-5)
    assert float(out.sum()) == pytest.approx(KERAS_SUM, abs=1e-4)
    np.testing.assert_allclose(tt.function(model)(x).numpy(), out, atol=1e-5)
    assert model.layers[3].get_config()["groups"] == 4  # -1 resolved, as Keras writes it
    model.save(tmp_path / "m.keras")
    again = tt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(again(x).numpy(), out)


def _group_norm_reference(x, groups, gamma, beta, epsilon):
    grouped = x.reshape(*x.shape[:-1], groups, x.shape[-1] // groups)
    axes = tuple(a for a in range(1, grouped.ndim) if a != grouped.ndim - 2)
    mean = grouped.mean(axis=axes, keepdims=True)
    variance = grouped.var(axis=axes, keepdims=True)
    normalized = ((grouped - mean) / np.sqrt(variance + epsilon)).reshape(x.shape)
    return normalized * gamma + beta


def test_group_normalization_is_the_numpy_formula_and_differentiates():
    x = rng.normal(size=(3, 4, 6)) * 2.0 + 0.5
    layer = layers.GroupNormalization(groups=2, epsilon=1e-3, dtype="float64")
    layer.build(x.shape)
    layer.gamma.assign(rng.normal(size=6))
    layer.beta.assign(rng.normal(size=6))
    expected = _group_norm_reference(x, 2, layer.gamma.numpy(), layer.beta.numpy(), 1e-3)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)
    weights = rng.normal(size=x.shape)
    xt = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(xt)
        value = tt.reduce_sum(layer(xt) * weights)
    gradient = tape.gradient(value, xt).numpy()
    gamma, beta = layer.gamma.numpy(), layer.beta.numpy()

    def loss(v):
        return np.sum(_group_norm_reference(v, 2, gamma, beta, 1e-3) * weights)

    numeric = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = 1e-6
        numeric[index] = (loss(x + step) - loss(x - step)) / 2e-6
    np.testing.assert_allclose(gradient, numeric, atol=1e-6)
    with pytest.raises(ValueError, match="groups=4 must divide the 6 channels"):
        layers.GroupNormalization(groups=4)(tt.ones([1, 6]))


def _separable_reference(x, depthwise, pointwise, bias):
    """'valid' padding, stride 1: each channel with its own filters, then the 1 x 1 mixing."""
    kh, kw, channels, multiplier = depthwise.shape
    rows, columns = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    mid = np.zeros((x.shape[0], rows, columns, channels * multiplier))
    for i in range(rows):
        for j in range(columns):
            window = x[:, i : i + kh, j : j + kw, :]  # [batch, kh, kw, channels]
            products = np.einsum("bhwc,hwcm->bcm", window, depthwise)
            mid[:, i, j, :] = products.reshape(x.shape[0], -1)
    return mid @ pointwise[0, 0] + bias


def test_separable_conv2d_is_depthwise_then_pointwise_and_differentiates():
    x = rng.normal(size=(2, 5, 4, 3))
    layer = layers.SeparableConv2D(5, (3, 2), depth_multiplier=2, dtype="float64")
    layer.build(x.shape)
    layer.bias.assign(rng.normal(size=5))
    reference = _separable_reference(
        x, layer.depthwise_kernel.numpy(), layer.pointwise_kernel.numpy(), layer.bias.numpy()
    )
    np.testing.assert_allclose(layer(x).numpy(), reference, rtol=1e-10)
    xt = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(xt)
        value = tt.reduce_sum(layer(xt) ** 2)
    gradient = tape.gradient(value, xt).numpy()
    kernels = (layer.depthwise_kernel.numpy(), layer.pointwise_kernel.numpy(), layer.bias.numpy())
    for index in [(0, 0, 0, 0), (1, 2, 1, 2), (1, 4, 3, 1)]:
        step = np.zeros_like(x)
        step[index] = 1e-6
        numeric = (
            np.sum(_separable_reference(x + step, *kernels) ** 2)
            - np.sum(_separable_reference(x - step, *kernels) ** 2)
        ) / 2e-6
        assert gradient[index] == pytest.approx(numeric, rel=1e-6)
