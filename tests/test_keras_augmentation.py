"""Keras's image augmentation and sizing layers, and the projective sampler under them,
against outputs of Keras 3.15.1 on TensorFlow 2.21 (tests/data/keras/augmentation_cases.json,
each with a fixed draw), finite differences, and the draws' own properties."""

import json
import os

import numpy as np
import pytest

import tracer as tt
from tracer.ops.affine_image import affine_transform

CASES_FILE = os.path.join(os.path.dirname(__file__), "data", "keras", "augmentation_cases.json")
with open(CASES_FILE) as handle:
    CASES = json.load(handle)
SAMPLER_CASES = [c for c in CASES if c["layer"] == "ops.image.affine_transform"]
LAYER_CASES = [c for c in CASES if c["layer"] != "ops.image.affine_transform"]
ALWAYS_ACTING = ("Resizing", "CenterCrop", "Rescaling")
layers = tt.keras.layers

# a layer's dtype in its config, as TF 2.21 (Keras 3.15) prints it
POLICY = {
    "module": "keras",
    "class_name": "DTypePolicy",
    "config": {"name": "float32"},
    "registered_name": None,
}


def _name(case):
    config = ",".join(f"{k}={v}" for k, v in sorted(case["config"].items()) if k != "transform")
    return f"{case['layer']}[{config}]"


@pytest.mark.parametrize("case", SAMPLER_CASES, ids=_name)
def test_the_sampler_reads_the_pixels_tensorflows_transform_reads(case):
    config = case["config"]
    image = np.array(case["input"], np.float32)
    out = affine_transform(image, config["transform"], config["interpolation"],
                           config["fill_mode"], config["fill_value"])  # fmt: skip
    np.testing.assert_allclose(out.numpy(), np.array(case["output"]), atol=1e-5)


def _called(case, layer, images):
    if case["layer"] in ALWAYS_ACTING:
        return layer(images)
    return layer(images, training=case.get("training", True))


@pytest.mark.parametrize("case", LAYER_CASES, ids=_name)
def test_each_layer_gives_keras_outputs_eagerly_and_compiled(case):
    images = tt.constant(np.array(case["input"], case["input_dtype"]))
    expected = np.array(case["output"])
    layer = getattr(layers, case["layer"])(**case["config"])
    eager = _called(case, layer, images)
    assert eager.dtype.name == case["output_dtype"] and eager.shape == expected.shape
    np.testing.assert_allclose(eager.numpy(), expected, atol=1e-4)
    for backend in ("interpreter", "c"):
        compiled = tt.function(lambda x: _called(case, layer, x), backend=backend)(images)
        np.testing.assert_allclose(compiled.numpy(), expected, atol=1e-4)


def test_the_samplers_gradient_with_respect_to_the_images_is_the_finite_differences():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(2, 5, 6, 2))
    angle = np.deg2rad([30.0, -75.0])
    transform = np.stack(
        [np.cos(angle), -np.sin(angle), [1.0, 2.5], np.sin(angle), np.cos(angle), [-0.5, 1.2],
         [0.0, 0.0], [0.0, 0.0]], axis=1)  # fmt: skip
    weights = rng.normal(size=(2, 5, 6, 2))

    def loss(x, fill_mode, interpolation):
        out = affine_transform(x, transform, interpolation, fill_mode, 0.5)
        return tt.reduce_sum(out * weights)

    for fill_mode in ("constant", "reflect", "wrap", "nearest"):
        for interpolation in ("bilinear", "nearest"):
            x = tt.constant(images)
            with tt.GradientTape() as tape:
                tape.watch(x)
                value = loss(x, fill_mode, interpolation)
            gradient = tape.gradient(value, x).numpy()
            numeric = np.zeros_like(images)
            for index in np.ndindex(images.shape):
                step = np.zeros_like(images)
                step[index] = 1e-6
                numeric[index] = (
                    float(loss(tt.constant(images + step), fill_mode, interpolation))
                    - float(loss(tt.constant(images - step), fill_mode, interpolation))
                ) / 2e-6
            np.testing.assert_allclose(gradient, numeric, atol=1e-6)


def test_augmentation_happens_unless_training_is_false_and_each_image_draws_its_own():
    images = tt.constant(np.arange(32 * 4 * 5 * 1, dtype=np.float32).reshape(32, 4, 5, 1))
    flip = layers.RandomFlip("horizontal", seed=3)
    flipped = flip(images).numpy()  # training defaults to True, as in Keras 3
    mirrored = images.numpy()[:, :, ::-1]
    same = [np.array_equal(flipped[i], images.numpy()[i]) for i in range(32)]
    turned = [np.array_equal(flipped[i], mirrored[i]) for i in range(32)]
    assert all(a != b for a, b in zip(same, turned)) and 4 < sum(turned) < 28
    both = layers.RandomFlip(seed=4)(images).numpy()  # both axes on one draw
    half_turn = images.numpy()[:, ::-1, ::-1]
    assert all(np.array_equal(b, x) or np.array_equal(b, h)
               for b, x, h in zip(both, images.numpy(), half_turn))  # fmt: skip
    np.testing.assert_array_equal(flip(images, training=False).numpy(), images.numpy())
    rotation = layers.RandomRotation(0.2, seed=5)
    first, second = rotation(images).numpy(), rotation(images).numpy()
    assert not np.allclose(first, second)  # a new draw each call
    assert not np.allclose(first[0], first[1] - 20.0)  # and each image its own angle
    model = tt.keras.Sequential([layers.RandomTranslation(0.3, 0.3), layers.Flatten()])
    np.testing.assert_array_equal(model.predict(images, verbose=0), images.numpy().reshape(32, 20))
    assert not np.allclose(model(images).numpy(), images.numpy().reshape(32, 20))


def test_a_compiled_step_draws_anew_at_each_call_and_takes_any_batch_size():
    rotation = layers.RandomRotation(0.25, fill_mode="constant", seed=7)
    spec = tt.TensorSpec([None, 6, 6, 1], tt.float32)
    step = tt.function(lambda x: rotation(x, training=True), input_signature=[spec])
    images = tt.constant(np.random.default_rng(1).uniform(size=(3, 6, 6, 1)).astype(np.float32))
    first, second = step(images).numpy(), step(images).numpy()
    assert first.shape == (3, 6, 6, 1) and not np.allclose(first, second)
    assert step(images[:2]).shape == (2, 6, 6, 1)
    contrast = layers.RandomContrast((-0.5, 0.5), value_range=(0, 1))  # c = 1.5 always
    compiled = tt.function(lambda x: contrast(x))(images).numpy()
    mean = images.numpy().mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(compiled, np.clip((images.numpy() - mean) * 1.5 + mean, 0, 1),
                               atol=1e-6)  # fmt: skip


def test_random_crop_draws_a_window_that_fits_for_the_batch():
    images = np.arange(2 * 6 * 7 * 1, dtype=np.float32).reshape(2, 6, 7, 1)
    crop = layers.RandomCrop(3, 4, seed=2)
    windows = set()
    for _ in range(40):
        out = crop(tt.constant(images)).numpy()
        top, left = divmod(int(out[0, 0, 0, 0]), 7)
        np.testing.assert_array_equal(out, images[:, top : top + 3, left : left + 4])
        windows.add((top, left))
    assert len(windows) > 5 and all(0 <= t <= 3 and 0 <= s <= 3 for t, s in windows)
    np.testing.assert_array_equal(crop(tt.constant(images), training=False).numpy(), images)


def test_a_model_of_augmentation_layers_trains_and_its_file_keeps_their_configs(tmp_path):
    model = tt.keras.Sequential([
        tt.keras.Input((8, 8, 3)),
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(0.1, fill_mode="nearest"),
        layers.RandomZoom((-0.2, 0.1), width_factor=0.15),
        layers.RandomTranslation(0.1, (-0.1, 0.2), interpolation="nearest"),
        layers.RandomContrast(0.3),
        layers.RandomBrightness(0.1, value_range=[0, 1]),
        layers.RandomCrop(6, 6),
        layers.Resizing(4, 4),
        layers.Flatten(),
        layers.Dense(2),
    ])  # fmt: skip
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    x, y = rng.uniform(size=(16, 8, 8, 3)).astype(np.float32), rng.normal(size=(16, 2))
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    path = str(tmp_path / "augment.keras")
    model.save(path)
    loaded = tt.keras.models.load_model(path)
    for original, again in zip(model.layers, loaded.layers):
        assert type(again) is type(original) and again.get_config() == original.get_config()
    flatten = {"name": "f", "trainable": True, "dtype": POLICY, "data_format": "channels_last"}
    assert layers.Flatten(name="f").get_config() == flatten  # Keras's keys
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6)
    rotation = layers.RandomRotation(0.2).get_config()
    assert rotation["factor"] == (-0.2, 0.2) and rotation["fill_mode"] == "reflect"
    assert layers.RandomContrast(0.5).get_config()["factor"] == (0.0, 0.5)
    assert layers.RandomBrightness(0.1, value_range=(1, 0)).get_config()["value_range"] == [0, 1]


def test_bad_arguments_are_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="mode must be one of"):
        layers.RandomFlip("sideways")
    with pytest.raises(NotImplementedError, match="fill_mode must be one of"):
        layers.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match=r"height_factor must be in \(-1, 1\]"):
        layers.RandomZoom(-1.0)
    with pytest.raises(ValueError, match="factor must be in"):
        layers.RandomContrast(1.5)
    with pytest.raises(ValueError, match="expected images of rank 3"):
        layers.RandomRotation(0.1)(tt.ones([4, 4]))
    with pytest.raises(ValueError, match="interpolation must be one of .*, not 'cubic'"):
        layers.Resizing(3, 3, interpolation="cubic")
    with pytest.raises(ValueError, match="channels_last"):
        layers.CenterCrop(2, 2, data_format="channels_first")


def test_a_layer_of_ones_own_extends_the_base_config_as_keras_layers_do():
    """The Keras idiom for a layer saved in a file: `super().get_config()`, then its own."""

    class Scale(tt.keras.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self._factor = factor

        def call(self, inputs):
            return inputs * self._factor

        def get_config(self):
            config = super().get_config()
            config.update(factor=self._factor)
            return config

    config = Scale(3.0, name="scale").get_config()
    assert config == {"name": "scale", "trainable": True, "dtype": POLICY, "factor": 3.0}
    again = Scale(**config)
    assert float(again(tt.constant(2.0))) == 6.0 and again.name == "scale"
    dense = layers.Dense(4, activation="relu", name="d").get_config()
    assert dense["units"] == 4 and dense["activation"] == "relu" and dense["use_bias"] is True
    assert layers.Dense(**dense).get_config() == dense
