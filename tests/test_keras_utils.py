"""tt.keras.utils against Keras 3.15's printed outputs for the same inputs: to_categorical,
array_to_img and img_to_array, plot_model without pydot."""

import sys

import numpy as np
import pytest

import tracer as tt


def test_to_categorical_of_numbers_and_arrays():
    rows = tt.keras.utils.to_categorical([0, 2, 1])
    np.testing.assert_array_equal(rows, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert rows.dtype == np.float64 and isinstance(rows, np.ndarray)
    assert tt.keras.utils.to_categorical(np.array([[1], [0]]), 3).shape == (2, 3)
    nested = tt.keras.utils.to_categorical([[1, 2], [0, 1]])
    assert nested.shape == (2, 2, 3) and nested[0, 1].tolist() == [0, 0, 1]
    assert tt.keras.utils.to_categorical([], num_classes=3).shape == (0, 3)
    assert tt.keras.utils.to_categorical([0, 1], num_classes=4).tolist() == [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
    ]


def test_to_categorical_of_a_tensor_is_a_float32_tensor():
    rows = tt.keras.utils.to_categorical(tt.constant([[1], [0]]), 3)
    assert isinstance(rows, tt.Tensor) and rows.dtype == tt.float32
    np.testing.assert_array_equal(rows.numpy(), [[0, 1, 0], [1, 0, 0]])


@pytest.mark.parametrize("labels, classes", [([-1, 2], None), ([0, 3], 3)])
def test_to_categorical_refuses_labels_outside_the_classes(labels, classes):
    with pytest.raises(ValueError, match="is not one of the 3 classes"):
        tt.keras.utils.to_categorical(labels, classes)


def test_array_to_img_and_back_as_keras_converts_them():
    pytest.importorskip("PIL")
    x = np.array(
        [[[0.1, -0.2, 0.3], [0.5, 0.0, 1.2]], [[0.7, 0.9, -1.0], [0.25, 0.4, 0.6]]], np.float32
    )
    utils = tt.keras.utils
    # Keras 3.15 on TensorFlow 2.21 printed these pixels, modes and arrays for the same calls.
    img = utils.array_to_img(tt.constant(x))
    assert (img.mode, img.size) == ("RGB", (2, 2))
    assert np.asarray(img).tolist() == [
        [[127, 92, 150], [173, 115, 255]],
        [[197, 220, 0], [144, 162, 185]],
    ]
    unscaled = utils.array_to_img(x * 100, scale=False)  # cast to uint8: negatives wrap
    assert np.asarray(unscaled).tolist() == [
        [[10, 236, 30], [50, 0, 120]],
        [[70, 90, 156], [25, 40, 60]],
    ]
    mask = utils.array_to_img(np.array([[[0], [1]], [[2], [1]]], np.int64))
    assert mask.mode == "L" and np.asarray(mask).tolist() == [[0, 127], [255, 127]]
    wide = utils.array_to_img(np.array([[[300.0], [2.0]]]), scale=False)
    assert wide.mode == "I" and np.asarray(wide).tolist() == [[300, 2]]
    assert utils.array_to_img(np.full((2, 1, 4), 0.5)).mode == "RGBA"
    first = utils.array_to_img(x.transpose(2, 0, 1), data_format="channels_first")
    assert np.asarray(first).tolist() == np.asarray(img).tolist()
    back = utils.img_to_array(img)
    assert back.dtype == np.float32 and back.shape == (2, 2, 3)
    assert back[0, 1].tolist() == [173.0, 115.0, 255.0]
    gray = utils.img_to_array(mask)
    assert gray.shape == (2, 2, 1) and gray.ravel().tolist() == [0.0, 127.0, 255.0, 127.0]
    assert utils.img_to_array(mask, data_format="channels_first", dtype="int32").shape == (1, 2, 2)
    for bad in (np.zeros((2, 2)), np.zeros((2, 2, 2))):
        with pytest.raises(ValueError):
            utils.array_to_img(bad)


def test_plot_model_fails_as_keras_does_and_never_draws(monkeypatch):
    from tracer.keras import model_visualization

    model = tt.keras.Sequential([tt.keras.Input((2,)), tt.keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="not yet been built"):
        tt.keras.utils.plot_model(tt.keras.Sequential([tt.keras.layers.Dense(1)]))
    # Keras 3.15 on TensorFlow 2.21, without pydot, raised these messages.
    monkeypatch.setattr(model_visualization, "_has_pydot", lambda: False)
    with pytest.raises(ImportError) as error:
        tt.keras.utils.plot_model(model, show_shapes=True, expand_nested=True, dpi=64)
    assert str(error.value) == (
        "You must install pydot (`pip install pydot`) for `plot_model` to work."
    )
    with pytest.raises(ImportError, match="for model_to_dot to work"):
        tt.keras.utils.model_to_dot(model)
    monkeypatch.setitem(sys.modules, "IPython.core.magics.namespace", object())
    assert tt.keras.utils.plot_model(model) is None  # a notebook's cell goes on
    monkeypatch.setattr(model_visualization, "_has_pydot", lambda: True)
    with pytest.raises(NotImplementedError, match="tracer does not draw models"):
        tt.keras.utils.plot_model(model)


def test_the_legacy_backend_values_as_kerass_guides_use_them():
    # the TF-docs callbacks guide: lr = float(get_value(...learning_rate)); set_value(...)
    # (TF 2.21 printed get_value 0.1, then 0.2 once set, and int_shape (None, None, 3))
    backend = tt.keras.backend
    optimizer = tt.keras.optimizers.SGD(0.1)
    assert float(backend.get_value(optimizer.learning_rate)) == float(np.float32(0.1))
    backend.set_value(optimizer.learning_rate, 0.2)
    assert optimizer.learning_rate.numpy() == np.float32(0.2)
    v, w = tt.Variable([1.0, 2.0]), tt.Variable(3, dtype=tt.int64)
    backend.batch_set_value([(v, [5, 6]), (w, 7.0)])
    got = backend.batch_get_value([v, w])
    assert got[0].tolist() == [5.0, 6.0] and got[1] == 7 and got[1].dtype == np.int64
    assert backend.get_value(4) == 4
    assert backend.int_shape(tt.keras.Input((None, 3))) == (None, None, 3)
    assert backend.int_shape(tt.ones((2, 3))) == (2, 3)


def test_applications_preprocess_input_as_keras():
    """Each model's convention, against Keras 3.15's printed outputs: "tf" scales to [-1, 1]
    (a uint8 array becomes float32; a float array is preprocessed in place), "caffe" flips
    to BGR and subtracts ImageNet's means, "torch" normalizes each channel."""
    apps = tt.keras.applications
    pixels = np.array([[[0, 127, 255]]], np.uint8)
    scaled = apps.inception_v3.preprocess_input(pixels)
    assert scaled.dtype == np.float32
    np.testing.assert_allclose(scaled, [[[-1.0, -0.00392157, 1.0]]], rtol=1e-6)
    floats = np.array([[[0.0, 127.5, 255.0]]], np.float32)
    assert apps.inception_v3.preprocess_input(floats) is floats
    assert floats.tolist() == [[[-1.0, 0.0, 1.0]]]
    tensor = apps.inception_v3.preprocess_input(tt.constant([[[0.0, 127.5, 255.0]]]))
    assert tensor.numpy().tolist() == [[[-1.0, 0.0, 1.0]]]
    rgb = np.array([[[10.0, 20.0, 30.0]]])
    np.testing.assert_allclose(
        apps.resnet50.preprocess_input(rgb.copy()), [[[-73.939, -96.779, -113.68]]]
    )
    np.testing.assert_allclose(
        apps.vgg16.preprocess_input(tt.constant(rgb, tt.float32)).numpy(),
        [[[-73.939, -96.779, -113.68]]],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        apps.densenet.preprocess_input(rgb.copy()), [[[-1.94665639, -1.68557423, -1.28156863]]]
    )
    first = apps.resnet50.preprocess_input(
        rgb.reshape(3, 1, 1).copy(), data_format="channels_first"
    )
    np.testing.assert_allclose(first.ravel(), [-73.939, -96.779, -113.68])
    with pytest.raises(TypeError, match="floating dtype, not uint8"):
        apps.inception_v3.preprocess_input(tt.constant(pixels))
    with pytest.raises(ValueError, match="mode to be one of"):
        apps.imagenet_utils.preprocess_input(rgb, mode="keras")
    with pytest.raises(AttributeError, match="pretrained models are not in tracer"):
        getattr(apps, "InceptionV3")  # noqa: B009 (the attribute a user would ask for)
    from tracer.keras.applications.mobilenet_v2 import preprocess_input

    assert preprocess_input(np.array([255.0])).tolist() == [1.0]
