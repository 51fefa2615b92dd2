"""Keras 3.15's Conv1D, Conv2DTranspose, DepthwiseConv2D, MaxPooling1D, AveragePooling1D and
GlobalMaxPooling1D: values (Keras's outputs for the same weights), gradients against finite
differences, eager and compiled, configs and the .keras round trip."""

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order
from tracer.keras.saving import layer_configs

layers = tt.keras.layers

# name: (class, arguments, input shape); the same layers were given to Keras 3.15
CASES = {
    "conv1d_causal_strided": (
        "Conv1D",
        dict(filters=2, kernel_size=3, strides=2, padding="causal", activation="tanh"),
        (2, 7, 3),
    ),
    "conv1d_same_dilated": (
        "Conv1D",
        dict(filters=2, kernel_size=2, padding="same", dilation_rate=2, activation="relu"),
        (1, 6, 3),
    ),
    "conv1d_causal_dilated": (
        "Conv1D",
        dict(filters=2, kernel_size=3, padding="causal", dilation_rate=2),
        (1, 6, 2),
    ),
    "conv1d_valid_no_bias": (
        "Conv1D",
        dict(filters=3, kernel_size=3, strides=2, use_bias=False),
        (1, 7, 2),
    ),
    "conv2d_transpose_valid": (
        "Conv2DTranspose",
        dict(filters=2, kernel_size=3, strides=2),
        (1, 2, 2, 1),
    ),
    "conv2d_transpose_same": (
        "Conv2DTranspose",
        dict(filters=2, kernel_size=(2, 3), strides=(2, 1), padding="same", activation="relu"),
        (1, 2, 2, 2),
    ),
    "conv2d_transpose_small_kernel": (
        "Conv2DTranspose",
        dict(filters=1, kernel_size=1, strides=3, use_bias=False),
        (1, 2, 2, 2),
    ),
    "depthwise_same": (
        "DepthwiseConv2D",
        dict(kernel_size=2, depth_multiplier=2, padding="same", activation="tanh"),
        (1, 3, 3, 2),
    ),
    "depthwise_strided": (
        "DepthwiseConv2D",
        dict(kernel_size=3, strides=2, use_bias=False),
        (1, 5, 5, 2),
    ),
    "max_pooling1d_same": ("MaxPooling1D", dict(pool_size=3, strides=2, padding="same"), (2, 5, 2)),
    "max_pooling1d_default": ("MaxPooling1D", dict(), (1, 5, 2)),
    "average_pooling1d_same": ("AveragePooling1D", dict(pool_size=2, padding="same"), (1, 5, 2)),
    "average_pooling1d_strided": ("AveragePooling1D", dict(pool_size=3, strides=1), (1, 5, 2)),
    "global_max_pooling1d": ("GlobalMaxPooling1D", dict(keepdims=True), (2, 4, 3)),
}

# Keras 3.15's outputs (TensorFlow backend), flattened, for `data(shape, 0.3)` inputs and
# weights k set to `data(shape, 1.1 + k) * 0.5` with set_weights
KERAS_OUTPUTS = {
    "conv1d_causal_strided": [
        -0.1281257,
        -0.0736466,
        0.4056043,
        0.1649728,
        0.4032631,
        0.1562269,
        0.4110356,
        0.1764117,
        0.4519844,
        -0.1948732,
        0.411011,
        0.1763226,
        0.4058321,
        0.1655631,
        0.4031096,
        0.1559068,
    ],
    "conv1d_same_dilated": [
        0.0,
        0.0,
        0.5207117,
        0.0,
        1.4777346,
        1.4271472,
        0.0,
        0.0,
        0.5419523,
        0.0,
        0.9493911,
        0.80015,
    ],
    "conv1d_causal_dilated": [
        0.8994924,
        0.5463827,
        0.9599048,
        0.8106477,
        -0.3084846,
        -0.2571525,
        -0.8167984,
        -1.1172086,
        1.1308022,
        0.2747619,
        2.4313424,
        1.9112449,
    ],
    "conv1d_valid_no_bias": [
        0.2481464,
        0.109527,
        -0.0806047,
        -0.0679378,
        0.0286255,
        0.1117258,
        -0.1201214,
        -0.1634701,
        -0.1299363,
    ],
    "conv2d_transpose_valid": [
        0.5632896,
        0.3113899,
        0.520035,
        0.1588687,
        0.7049428,
        0.4303984,
        0.6834031,
        0.142934,
        0.1422371,
        -0.250587,
        0.3086287,
        0.1262076,
        0.4914253,
        0.3002873,
        0.2247513,
        0.1363615,
        0.6019394,
        0.5456125,
        0.8396717,
        0.4135895,
        0.8623898,
        0.5469458,
        0.5812608,
        0.016969,
        0.3210629,
        -0.2286892,
        0.2149123,
        -0.1984139,
        0.0885734,
        0.0086724,
        0.0189395,
        0.0289508,
        0.6323424,
        0.6131027,
        0.6314245,
        0.3631476,
        0.5683353,
        0.4710162,
        0.7591671,
        0.3650391,
        0.3943423,
        -0.1795265,
        -0.0619649,
        -0.240491,
        0.2757049,
        0.1394567,
        0.0954144,
        -0.1104011,
        0.342703,
        0.3093978,
    ],
    "conv2d_transpose_same": [
        0.6826878,
        0.2039852,
        0.1929261,
        0.0498679,
        0.2958565,
        0.0,
        0.4887212,
        0.4182242,
        0.0,
        0.0,
        0.9401774,
        0.538924,
        0.6434758,
        0.7409068,
        0.4146563,
        0.0,
    ],
    "conv2d_transpose_small_kernel": [
        0.5414171,
        0.0,
        0.0,
        0.7707886,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -0.2793997,
        0.0,
        0.0,
        -0.8657661,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "depthwise_same": [
        0.0384261,
        -0.4540085,
        -0.6573671,
        -0.7358015,
        0.6360774,
        0.1626403,
        -0.0599233,
        -0.5953704,
        0.5527154,
        0.5152769,
        0.1207112,
        -0.1278792,
        0.2750069,
        0.3747294,
        -0.0690415,
        -0.0426842,
        -0.1204929,
        -0.3898436,
        -0.6591309,
        -0.61852,
        0.5603539,
        0.1860129,
        -0.0530117,
        -0.5149417,
        0.7361295,
        0.6645246,
        0.2357061,
        -0.2908244,
        0.4252831,
        0.2895699,
        -0.3093729,
        -0.3426658,
        0.0414762,
        -0.2531582,
        -0.2752975,
        -0.401413,
    ],
    "depthwise_strided": [
        -0.0202141,
        0.1328263,
        0.1895326,
        0.1693355,
        0.5013884,
        0.8890036,
        -0.4423996,
        -0.841449,
    ],
    "max_pooling1d_same": [
        0.9916648,
        0.841471,
        0.9916648,
        0.6754632,
        -0.3738767,
        0.3115413,
        0.8504366,
        0.9893582,
        0.6629692,
        0.0247754,
        0.3274744,
        0.8591618,
    ],
    "max_pooling1d_default": [0.9916648, 0.841471, 0.0415807, -0.6118579],
    "average_pooling1d_same": [0.6435925, 0.7584671, -0.4679747, -0.7476563, -0.3738767, 0.3115413],
    "average_pooling1d_strided": [
        0.4429219,
        0.3016921,
        0.0185718,
        -0.2732831,
        -0.4366087,
        -0.3945904,
    ],
    "global_max_pooling1d": [0.6754632, 0.8504366, 0.9916648, 0.6629692, 0.8591618, 0.9867719],
}


def data(shape, phase):
    n = int(np.prod(shape))
    return np.sin(np.arange(n) * 0.7 + phase).reshape(shape).astype(np.float32)


def make(name, dtype="float32"):
    """The case's layer, built, with the weights Keras was given; and its input."""
    cls, kwargs, shape = CASES[name]
    layer = getattr(layers, cls)(**kwargs, dtype=dtype)
    layer.build(shape)
    weights = [data(w.shape, 1.1 + k) * 0.5 for k, w in enumerate(layer.weights)]
    if weights:
        layer.set_weights(weights)
    return layer, data(shape, 0.3).astype(dtype)


def keras_output(name, shape):
    return np.asarray(KERAS_OUTPUTS[name], np.float32).reshape(shape)


@pytest.mark.parametrize("name", list(CASES))
def test_values_match_keras_eagerly_and_compiled(name):
    layer, x = make(name)
    eager = layer(x).numpy()
    expected = keras_output(name, eager.shape)
    np.testing.assert_allclose(eager, expected, rtol=1e-5, atol=1e-6)
    for backend in ("c", "interpreter"):
        compiled = tt.function(lambda v: layer(v), backend=backend)(tt.constant(x)).numpy()
        np.testing.assert_allclose(compiled, expected, rtol=1e-5, atol=1e-6, err_msg=backend)


def test_weights_have_kerass_names_shapes_and_order():
    shapes = {
        "conv1d_causal_strided": [("kernel", (3, 3, 2)), ("bias", (2,))],
        "conv1d_valid_no_bias": [("kernel", (3, 2, 3))],
        "conv2d_transpose_valid": [("kernel", (3, 3, 2, 1)), ("bias", (2,))],
        "depthwise_same": [("kernel", (2, 2, 2, 2)), ("bias", (4,))],
        "depthwise_strided": [("kernel", (3, 3, 2, 1))],
        "max_pooling1d_same": [],
    }
    for name, expected in shapes.items():
        layer, _ = make(name)
        got = [(w.name.split("/")[-1].split(":")[0], tuple(w.shape)) for w in layer.weights]
        assert got == expected, name


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_finite_differences(name):
    layer, x = make(name, "float64")
    check_first_order(layer, [x])
    if not layer.trainable_weights:
        return
    # <dL/dweights, v> against central differences of L = sum(layer(x) * w)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(layer(x).shape)
    start = layer.get_weights()
    direction = [rng.standard_normal(v.shape) for v in start]

    def loss(step):
        layer.set_weights([v + step * d for v, d in zip(start, direction)])
        return float(np.sum(layer(x).numpy() * w))

    with tt.GradientTape() as tape:
        total = tt.reduce_sum(layer(x) * w)
    grads = tape.gradient(total, layer.trainable_weights)
    analytic = sum(float(np.sum(g.numpy() * d)) for g, d in zip(grads, direction))
    eps = 1e-6
    numeric = (loss(eps) - loss(-eps)) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_compiled_gradients_match_eager_ones():
    for name in ("conv1d_causal_strided", "conv2d_transpose_same", "depthwise_same"):
        layer, x = make(name)

        def grads(v):
            with tt.GradientTape() as tape:
                tape.watch(v)
                total = tt.reduce_sum(tt.square(layer(v)))
            return tape.gradient(total, [v, *layer.trainable_weights])

        eager = grads(tt.constant(x))
        for backend in ("c", "interpreter"):
            compiled = tt.function(grads, backend=backend)(tt.constant(x))
            for e, c in zip(eager, compiled, strict=True):
                np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


# the argument names of Keras 3.15's get_config(), in its order (after name, trainable, dtype)
KERAS_CONFIG_KEYS = {
    "Conv1D": "filters kernel_size strides padding data_format dilation_rate groups activation "
    "use_bias kernel_initializer bias_initializer kernel_regularizer bias_regularizer "
    "activity_regularizer kernel_constraint bias_constraint",
    "Conv2DTranspose": "filters kernel_size strides padding output_padding data_format "
    "dilation_rate activation use_bias kernel_initializer bias_initializer kernel_regularizer "
    "bias_regularizer activity_regularizer kernel_constraint bias_constraint",
    "DepthwiseConv2D": "depth_multiplier kernel_size strides padding data_format dilation_rate "
    "activation use_bias depthwise_initializer bias_initializer depthwise_regularizer "
    "bias_regularizer activity_regularizer depthwise_constraint bias_constraint",
    "MaxPooling1D": "pool_size padding strides data_format",
    "AveragePooling1D": "pool_size padding strides data_format",
    "GlobalMaxPooling1D": "data_format keepdims",
}


@pytest.mark.parametrize("name", list(CASES))
def test_configs_have_kerass_arguments_and_make_the_layer_again(name):
    layer, x = make(name)
    entry = layer_configs.layer_config(layer)
    cls = CASES[name][0]
    assert entry["class_name"] == cls and entry["module"] == "keras.layers"
    assert list(entry["config"])[3:] == KERAS_CONFIG_KEYS[cls].split()
    again = layer_configs.make_layer(entry)
    assert type(again) is type(layer)
    again.build(x.shape)
    again.set_weights(layer.get_weights())
    np.testing.assert_array_equal(again(x).numpy(), layer(x).numpy())


def test_kerass_config_values():
    config = layer_configs.layer_config(layers.Conv1D(2, 3, padding="causal"))["config"]
    assert config["kernel_size"] == [3] and config["padding"] == "causal"
    assert config["data_format"] == "channels_last" and config["groups"] == 1
    config = layer_configs.layer_config(layers.Conv2DTranspose(2, 3))["config"]
    assert config["output_padding"] is None and config["strides"] == [1, 1]
    config = layer_configs.layer_config(layers.DepthwiseConv2D(3))["config"]
    assert config["depthwise_initializer"]["class_name"] == "GlorotUniform"
    config = layer_configs.layer_config(layers.MaxPooling1D())["config"]
    assert config["pool_size"] == [2] and config["strides"] == [2]


def test_unsupported_arguments_are_refused():
    with pytest.raises(ValueError, match="output_padding"):  # (Keras's: below the stride)
        layers.Conv2DTranspose(2, 3, output_padding=1)
    with pytest.raises(ValueError, match="data_format"):
        layers.Conv1D(2, 3, data_format="channels_first")
    with pytest.raises(ValueError, match="padding"):
        layers.MaxPooling1D(padding="causal")
    with pytest.raises(TypeError):
        layers.AveragePooling1D()  # Keras 3's has no default pool_size


def test_aliases():
    assert layers.Convolution1D is layers.Conv1D
    assert layers.Convolution2DTranspose is layers.Conv2DTranspose
    assert layers.MaxPool1D is layers.MaxPooling1D
    assert layers.AvgPool1D is layers.AveragePooling1D
    assert layers.GlobalMaxPool1D is layers.GlobalMaxPooling1D


@pytest.mark.parametrize(
    "model, shape",
    [
        (
            lambda: tt.keras.Sequential(
                [
                    layers.Conv1D(4, 3, padding="causal", dilation_rate=2, activation="relu"),
                    layers.MaxPooling1D(2),
                    layers.Conv1D(3, 2, strides=2, padding="same"),
                    layers.AveragePooling1D(2, padding="same"),
                    layers.GlobalMaxPooling1D(),
                ]
            ),
            (2, 12, 3),
        ),
        (
            lambda: tt.keras.Sequential(
                [
                    layers.Conv2DTranspose(3, 3, strides=2, activation="tanh"),
                    layers.DepthwiseConv2D(2, depth_multiplier=2, padding="same"),
                    layers.DepthwiseConv2D(3, strides=2, use_bias=False),
                ]
            ),
            (2, 3, 3, 2),
        ),
    ],
)
def test_a_keras_file_round_trip(model, shape, tmp_path):
    model = model()
    x = data(shape, 0.3)
    y = model(x).numpy()
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    assert [type(a) for a in loaded.layers] == [type(b) for b in model.layers]
    for a, b in zip(loaded.layers, model.layers):
        assert layer_configs.layer_config(a) == layer_configs.layer_config(b)
    np.testing.assert_array_equal(loaded(x).numpy(), y)
