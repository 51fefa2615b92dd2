"""Keras's Lambda, TimeDistributed, Normalization, UnitNormalization, the noise layers and
ActivityRegularization (tracer/keras/layers/wrappers.py, preprocessing.py,
regularization.py): values against numpy, the draws' statistics, and Keras's files."""

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers
rng = np.random.default_rng(21)


def test_gaussian_noise_adds_draws_of_its_stddev_in_training_only():
    x = np.zeros((200, 50), np.float32)
    layer = layers.GaussianNoise(0.5, seed=3)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    noisy = layer(x, training=True).numpy()
    assert abs(noisy.mean()) < 0.02 and abs(noisy.std() - 0.5) < 0.02
    step = tt.function(lambda a: layer(a, training=True))
    assert not np.array_equal(step(x).numpy(), step(x).numpy())


def test_gaussian_dropout_multiplies_by_draws_around_one():
    x = np.ones((200, 50), np.float32)
    layer = layers.GaussianDropout(0.2, seed=1)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    noisy = layer(x, training=True).numpy()
    assert abs(noisy.mean() - 1.0) < 0.02
    assert abs(noisy.std() - np.sqrt(0.2 / 0.8)) < 0.02


def test_spatial_dropout_drops_whole_channels():
    x = rng.random((4, 6, 8)).astype(np.float32) + 1.0
    out = layers.SpatialDropout1D(0.5, seed=2)(x, training=True).numpy()
    kept = out != 0
    assert np.all(kept.all(axis=1) | (~kept).all(axis=1))  # a channel is kept at every step or none
    np.testing.assert_allclose(out[kept], (x * 2.0)[kept], rtol=1e-6)
    assert 0 < kept.mean() < 1
    images = rng.random((3, 4, 5, 6)).astype(np.float32) + 1.0
    first = layers.SpatialDropout2D(0.5, data_format="channels_first", seed=2)
    maps = first(images, training=True).numpy() != 0
    assert np.all(maps.all(axis=(2, 3)) | (~maps).all(axis=(2, 3)))
    with pytest.raises(ValueError, match=r"\(batch, steps, channels\)"):
        layers.SpatialDropout1D(0.5)(images, training=True)


def test_activity_regularization_adds_its_penalty_per_example():
    x = rng.normal(size=(4, 3)).astype(np.float32)
    layer = layers.ActivityRegularization(l1=0.1, l2=0.2)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    expected = (0.1 * np.abs(x).sum() + 0.2 * (x**2).sum()) / 4
    np.testing.assert_allclose(float(layer.losses[0]), expected, rtol=1e-6)


def test_lambda_in_a_sequential_and_a_functional_model():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    model = tt.keras.Sequential(
        [layers.Lambda(lambda t, k: t * k, arguments={"k": 3.0}), layers.Dense(2)]
    )
    dense = model.layers[1]
    y = model(x).numpy()
    np.testing.assert_allclose(y, (3 * x) @ dense.kernel.numpy() + dense.bias.numpy(), rtol=1e-5)
    inputs = tt.keras.Input((4,))
    outputs = layers.Lambda(lambda t: tt.reduce_sum(t, axis=-1, keepdims=True))(inputs)
    functional = tt.keras.Model(inputs, outputs)
    np.testing.assert_allclose(functional(x).numpy(), x.sum(-1, keepdims=True), rtol=1e-6)
    compiled = tt.function(lambda a: model(a))
    np.testing.assert_allclose(compiled(x).numpy(), y, rtol=1e-6)
    with pytest.raises(TypeError, match="takes a function"):
        layers.Lambda(3)


def test_a_lambda_passes_the_mask_on_and_is_given_it():
    ids = np.array([[1, 2, 0], [3, 0, 0]], np.int32)
    seen = []

    def double(t, mask=None):
        seen.append(mask)
        return t * 2.0

    embed = layers.Embedding(4, 2, mask_zero=True)
    dropped = layers.Lambda(double)(embed(ids))
    np.testing.assert_array_equal(seen[0].numpy(), ids != 0)
    assert dropped._keras_mask is None  # Keras's: a Lambda without `mask` gives none
    kept = layers.Lambda(double, mask=lambda inputs, mask: mask)(embed(ids))
    np.testing.assert_array_equal(kept._keras_mask.numpy(), ids != 0)


def test_a_model_with_a_lambda_is_not_saved_as_code(tmp_path):
    pytest.importorskip("h5py")
    model = tt.keras.Sequential([tt.keras.Input((2,)), layers.Lambda(lambda t: t + 1.0)])
    with pytest.raises(ValueError, match="Lambda"):
        model.save(tmp_path / "m.keras")


def test_time_distributed_applies_the_layer_at_each_step():
    x = rng.normal(size=(3, 5, 4)).astype(np.float32)
    wrapped = layers.TimeDistributed(layers.Dense(2, activation="tanh"))
    y = wrapped(x).numpy()
    kernel, bias = (w.numpy() for w in wrapped.layer.weights)
    np.testing.assert_allclose(y, np.tanh(x @ kernel + bias), rtol=1e-5, atol=1e-6)
    assert [w.path for w in wrapped.weights][0].startswith(f"{wrapped.name}/")
    unknown = tt.function(lambda a: wrapped(a), input_signature=[tt.TensorSpec([None, None, 4])])
    np.testing.assert_allclose(unknown(x).numpy(), y, rtol=1e-6)
    np.testing.assert_allclose(unknown(x[:2, :3]).numpy(), y[:2, :3], rtol=1e-6)
    images = rng.normal(size=(2, 3, 6, 6, 1)).astype(np.float32)
    conv = layers.TimeDistributed(layers.Conv2D(2, 3))
    per_step = conv(images).numpy()
    for t in range(3):
        np.testing.assert_allclose(
            per_step[:, t], conv.layer(images[:, t]).numpy(), rtol=1e-5, atol=1e-6
        )
    with pytest.raises(ValueError, match="rank 3 or more"):
        layers.TimeDistributed(layers.Dense(2))(x[:, 0])


def test_time_distributed_batch_normalization_uses_each_steps_statistics():
    x = (rng.normal(size=(8, 3, 2)) * [[[1.0], [5.0], [0.1]]]).astype(np.float32)
    wrapped = layers.TimeDistributed(layers.BatchNormalization(epsilon=1e-3))
    out = wrapped(x, training=True).numpy()
    mean, var = x.mean(axis=0, keepdims=True), x.var(axis=0, keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)


def test_time_distributed_passes_the_mask_to_the_next_layer():
    ids = np.array([[1, 2, 0, 0], [3, 1, 2, 0]], np.int32)
    embed = layers.Embedding(4, 3, mask_zero=True)
    wrapped = layers.TimeDistributed(layers.Dense(3))
    lstm = layers.LSTM(2)
    padded = lstm(wrapped(embed(ids))).numpy()
    for row, length in enumerate([2, 3]):
        alone = lstm(wrapped(embed(ids[row : row + 1, :length]))).numpy()
        np.testing.assert_allclose(padded[row], alone[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, None, (1, 2)])
def test_normalization_adapts_to_an_array_and_a_dataset(axis):
    data = (rng.normal(size=(40, 3, 2)) * [[2.0, 0.5]] + 3.0).astype(np.float32)
    reduced = tuple(
        a for a in range(3) if axis is not None and a not in ((2,) if axis == -1 else axis)
    )
    reduced = reduced if axis is not None else (0, 1, 2)
    mean = data.astype(np.float64).mean(axis=reduced, keepdims=True)
    std = data.astype(np.float64).std(axis=reduced, keepdims=True)
    for source in (data, tt.data.Dataset.from_tensor_slices(data).batch(7)):
        layer = layers.Normalization(axis=axis)
        layer.adapt(source)
        np.testing.assert_allclose(layer(data).numpy(), (data - mean) / std, rtol=1e-4, atol=1e-5)
        compiled = tt.function(lambda a: layer(a))
        np.testing.assert_allclose(compiled(data).numpy(), layer(data).numpy(), rtol=1e-6)


def test_normalization_given_statistics_and_inverted():
    x = rng.normal(size=(5, 2)).astype(np.float32)
    layer = layers.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.0])
    np.testing.assert_allclose(layer(x).numpy(), (x - [1.0, 2.0]) / [2.0, 1e-7], rtol=1e-5)
    inverse = layers.Normalization(mean=3.0, variance=9.0, invert=True)
    np.testing.assert_allclose(inverse(x).numpy(), x * 3.0 + 3.0, rtol=1e-6)
    with pytest.raises(ValueError, match="together"):
        layers.Normalization(mean=1.0)
    adapted = layers.Normalization()
    adapted.adapt(x)
    assert [w.path.split("/")[-1] for w in adapted.weights] == ["mean", "variance", "count"]
    assert int(adapted.count.numpy()) == 5
    np.testing.assert_allclose(adapted.mean.numpy(), x.mean(axis=0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(adapted.variance.numpy(), x.var(axis=0, keepdims=True), rtol=1e-5)


def test_unit_normalization():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        layers.UnitNormalization()(x).numpy(),
        x / np.linalg.norm(x, axis=-1, keepdims=True),
        rtol=1e-5,
    )


def test_the_new_layers_go_through_a_keras_file(tmp_path):
    pytest.importorskip("h5py")
    data = rng.normal(size=(10, 3, 4)).astype(np.float32)
    norm = layers.Normalization()
    norm.adapt(data)
    model = tt.keras.Sequential(
        [
            tt.keras.Input((3, 4)),
            norm,
            layers.GaussianNoise(0.1),
            layers.SpatialDropout1D(0.2),
            layers.TimeDistributed(layers.Dense(2)),
            layers.GaussianDropout(0.1),
            layers.ActivityRegularization(l2=0.01),
            layers.UnitNormalization(),
        ]
    )
    model.save(tmp_path / "m.keras")
    again = tt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again(data).numpy(), model(data).numpy(), rtol=1e-6)
    assert [type(layer).__name__ for layer in again.layers] == [
        type(layer).__name__ for layer in model.layers
    ]
