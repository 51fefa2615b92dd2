"""A model's Keras config in memory: get_config and from_config, clone_model, to_json and
model_from_json, and tt.keras.backend's clear_session; the expected values are what
TensorFlow 2.21's Keras prints for the same program."""

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers


def _sequential():
    return tt.keras.Sequential([tt.keras.Input((3,)), layers.Dense(2, name="d")], name="seq")


def test_a_sequential_models_config_makes_a_new_model_with_new_weights():
    model = _sequential()
    config = model.get_config()
    assert sorted(config) == ["build_input_shape", "dtype", "layers", "name", "trainable"]
    assert [entry["class_name"] for entry in config["layers"]] == ["InputLayer", "Dense"]
    clone = tt.keras.models.clone_model(model)
    assert type(clone) is tt.keras.Sequential and clone.name == "seq"
    assert [layer.name for layer in clone.layers] == ["d"]
    assert not np.allclose(clone.layers[0].kernel.numpy(), model.layers[0].kernel.numpy())
    clone.set_weights(model.get_weights())
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(clone(x).numpy(), model(x).numpy())
    again = tt.keras.models.model_from_json(model.to_json())
    assert type(again) is tt.keras.Sequential and again.layers[0].get_config()["units"] == 2
    with pytest.raises(NotImplementedError, match="clone_function"):
        tt.keras.models.clone_model(model, clone_function=lambda layer: layer)


def test_a_functional_models_config_makes_the_same_graph():
    inputs = tt.keras.Input((4,), name="x")
    hidden = layers.Dense(3, activation="relu", name="h")(inputs)
    outputs = layers.Add(name="sum")([layers.Dense(3, name="a")(hidden), hidden])
    model = tt.keras.Model(inputs, outputs, name="net")
    clone = type(model).from_config(model.get_config())
    assert clone.name == "net" and [layer.name for layer in clone.layers] == [
        layer.name for layer in model.layers
    ]
    clone.set_weights(model.get_weights())
    x = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)
    np.testing.assert_allclose(clone(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_a_layer_from_its_config_and_names_after_clear_session():
    dense = layers.Dense.from_config(layers.Dense(3, name="x").get_config())
    assert dense.name == "x" and dense.units == 3
    tt.keras.backend.clear_session()
    assert [layers.Dense(1).name, layers.Dense(1).name] == ["dense", "dense_1"]
    backend = tt.keras.backend
    assert (backend.epsilon(), backend.floatx(), backend.image_data_format()) == (
        1e-7,
        "float32",
        "channels_last",
    )
