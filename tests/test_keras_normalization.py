"""tt.keras.layers.BatchNormalization and LayerNormalization: values against numpy and against
Keras 3, moving statistics, training vs inference, gradients, tt.function, tape.jacobian,
Model.fit and .keras files."""

import pathlib

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order

layers = tt.keras.layers
DATA = pathlib.Path(__file__).parent / "data" / "keras_normalization"


def inputs(shape, shift=0.0):
    """Fixed float32 inputs, the same as those given to Keras for the values below."""
    n = int(np.prod(shape))
    values = (np.arange(n) * 0.37 % 2.3) * np.cos(np.arange(n)) + 5 + shift
    return values.reshape(shape).astype(np.float32)


# Produced for this test by TensorFlow 2.21 / Keras 3.15.1 (keras.layers.BatchNormalization and
# LayerNormalization on `inputs(...)`, with the weights set as in the tests below), rounded to
# 7 decimals.
BN_TRAIN_1 = [
    [-1.8147151, -0.3320999, -1.7657986, -1.5196381, 3.3283348, 3.786129],
    [-0.5034771, -0.0085907, -0.5712986, -0.5683212, 0.4150429, 1.7922535],
    [-0.7038498, -0.4936523, 0.4170113, 0.717041, -0.8414459, -0.0315952],
    [-0.9779572, -1.5656738, 1.1200848, 2.1709232, -0.5019341, -1.5467863],
]
BN_MEAN_1 = [0.6324419, 0.518441, 0.4969842, 0.4191104, 0.3838461, 0.480243]
BN_VAR_1 = [0.9659662, 0.9001143, 0.9037085, 0.9054739, 0.9013634, 0.9267872]
BN_MEAN_4 = [2.4554677, 2.0634186, 1.9896288, 1.7218206, 1.6005468, 1.9320557]
BN_VAR_4 = [0.8829578, 0.6564931, 0.6688534, 0.6749249, 0.6607887, 0.7482212]
BN_INFER_4 = [
    [0.3532007, 2.4944882, 3.4320855, 3.9110205, 5.6823401, 9.3013411],
    [1.4867892, 2.5129571, 3.7169061, 4.184206, 5.2491241, 8.1068954],
    [1.3135636, 2.4852648, 3.9525619, 4.553319, 5.0622807, 7.0143061],
    [1.0765927, 2.4240632, 4.1202049, 4.9708252, 5.1127667, 6.1066208],
]
BN_AXIS1_TRAIN = [
    [[0.4231439, 0.7013559, -0.0054202, -1.1061554], [-1.0367079, 0.4483533, 2.0475039, 0.1436682]],
    [[0.2895012, -0.8828921, -1.2116556, 0.4340453], [1.7233253, 0.1157336, 0.0050073, -0.7921886]],
    [
        [-1.3360858, -0.2240205, 2.3161716, 0.6020174],
        [0.1291471, -0.5481772, -1.3079686, -0.9276981],
    ],
]
BN_AXIS1_MEAN = [0.0469595, 0.0507428]
BN_AXIS1_VAR = [0.9951533, 1.0000859]
LN = [
    [-0.767983, 0.0411658, -0.2613134, -1.7470388, -1.386941, 3.6995602],
    [-0.015116, -0.4550245, -0.3242784, -1.0608845, -1.3065591, 0.9682579],
    [-0.0348628, -0.3908243, -0.0388198, -0.7534342, -1.510385, 0.1683159],
    [-0.1083138, -0.3392568, 0.256804, -0.3460126, -1.5986772, -0.682456],
]
LN_AXES_12 = [
    [
        [-0.0930748, 0.1193728, -0.4203343, -1.2608757],
        [-1.1211305, 0.4646072, 2.1721692, 0.1392665],
    ],
    [[0.0114126, -0.9609575, -1.2336307, 0.1312966], [2.2066355, 0.3422108, 0.2137947, -0.7107639]],
    [
        [-1.1444755, -0.1692643, 2.0583234, 0.5551186],
        [0.6472712, -0.1832972, -1.1149912, -0.6486845],
    ],
]
GAMMA, BETA = np.linspace(0.5, 2, 6), np.linspace(-1, 1, 6)


def close(actual, expected, atol=2e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=0, atol=atol)


def batch_norm(momentum=0.9, **kwargs):
    """A BatchNormalization built for 6 features, with gamma and beta set as given to Keras."""
    layer = layers.BatchNormalization(momentum=momentum, **kwargs)
    layer.build((None, 6))
    layer.set_weights([GAMMA, BETA, np.zeros(6), np.ones(6)])
    return layer


def numpy_normalize(x, axes, gamma=1.0, beta=0.0, epsilon=1e-3):
    mean, variance = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def test_batch_norm_weights_are_kerass_in_kerass_order():
    layer = layers.BatchNormalization(name="bn")
    layer(inputs((4, 6)))
    names = [v.path for v in layer.weights]
    assert names == ["bn/gamma", "bn/beta", "bn/moving_mean", "bn/moving_variance"]
    assert [v.path for v in layer.trainable_weights] == names[:2]
    assert [v.path for v in layer.non_trainable_weights] == names[2:]
    assert layer.count_params() == 24
    bare = layers.BatchNormalization(center=False, scale=False)
    bare(inputs((4, 6)))
    assert bare.gamma is None and bare.beta is None and len(bare.weights) == 2


def test_batch_norm_in_training_matches_numpy_and_keras_and_moves_the_statistics():
    layer, x = batch_norm(), inputs((4, 6))
    y = layer(x, training=True)
    close(y, numpy_normalize(x.astype(np.float64), 0, GAMMA, BETA), atol=1e-5)
    close(y, BN_TRAIN_1)
    close(layer.moving_mean.numpy(), 0.1 * x.mean(0))
    close(layer.moving_variance.numpy(), 0.9 + 0.1 * x.var(0))
    close(layer.moving_mean.numpy(), BN_MEAN_1)
    close(layer.moving_variance.numpy(), BN_VAR_1)


def test_batch_norm_after_several_training_calls_and_in_inference():
    layer = batch_norm()
    mean, variance = np.zeros(6), np.ones(6)
    for k in range(4):
        x = inputs((4, 6), 0.5 * k)
        layer(x, training=True)
        mean = 0.9 * mean + 0.1 * x.mean(0)
        variance = 0.9 * variance + 0.1 * x.var(0)
    close(layer.moving_mean.numpy(), mean, atol=1e-5)
    close(layer.moving_variance.numpy(), variance, atol=1e-5)
    close(layer.moving_mean.numpy(), BN_MEAN_4)
    close(layer.moving_variance.numpy(), BN_VAR_4)
    x = inputs((4, 6))
    expected = (x - mean) / np.sqrt(variance + 1e-3) * GAMMA + BETA
    for training in (False, None):  # inference: the moving statistics, left as they are
        close(layer(x, training=training), expected, atol=1e-5)
        close(layer(x, training=training), BN_INFER_4, atol=4e-6)
    close(layer.moving_mean.numpy(), BN_MEAN_4)


def test_a_frozen_batch_norm_runs_in_inference_mode_as_in_keras_3():
    layer = batch_norm()
    layer.trainable = False
    x = inputs((4, 6))
    close(layer(x, training=True), x / np.sqrt(1 + 1e-3) * GAMMA + BETA, atol=1e-5)
    close(layer.moving_mean.numpy(), np.zeros(6))


def test_batch_norm_on_another_axis():
    layer, x = layers.BatchNormalization(axis=1), inputs((3, 2, 4))
    y = layer(x, training=True)
    assert layer.gamma.shape == (2,)
    close(y, numpy_normalize(x.astype(np.float64), (0, 2)), atol=1e-5)
    close(y, BN_AXIS1_TRAIN)
    close(layer.moving_mean.numpy(), BN_AXIS1_MEAN)
    close(layer.moving_variance.numpy(), BN_AXIS1_VAR)
    with pytest.raises(ValueError, match="one axis"):
        layers.BatchNormalization(axis=[1, 2])


def test_layer_norm_matches_numpy_and_keras():
    layer, x = layers.LayerNormalization(), inputs((4, 6))
    layer.build((None, 6))
    layer.set_weights([GAMMA, BETA])
    assert [v.path.split("/")[-1] for v in layer.weights] == ["gamma", "beta"]
    y = layer(x)
    close(y, numpy_normalize(x.astype(np.float64), -1, GAMMA, BETA), atol=1e-5)
    close(y, LN)
    close(layer(x, training=True), y)  # the same in training


def test_layer_norm_over_several_axes():
    layer, x = layers.LayerNormalization(axis=[1, 2], epsilon=1e-5), inputs((3, 2, 4))
    y = layer(x)
    assert layer.gamma.shape == (2, 4)
    close(y, numpy_normalize(x.astype(np.float64), (1, 2), epsilon=1e-5), atol=1e-5)
    close(y, LN_AXES_12)
    middle = layers.LayerNormalization(axis=1, center=False)
    close(middle(x), numpy_normalize(x.astype(np.float64), 1), atol=1e-4)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("cls", [layers.BatchNormalization, layers.LayerNormalization])
def test_gradients_match_finite_differences_in_float64(cls, training):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)) * 2 + 1
    layer = cls(dtype="float64")
    layer.build((None, 4))
    layer.gamma.assign(np.linspace(0.5, 2, 4))
    layer.beta.assign(np.linspace(-1, 1, 4))
    if cls is layers.BatchNormalization:
        layer.moving_mean.assign(np.linspace(0.5, 1, 4))  # not updated: momentum 1 below
        layer.momentum = 1.0
    check_first_order(lambda x: layer(x, training=training), [x])
    # gamma and beta: L = sum(y * w) gives dL/dgamma = sum(w * normalized), dL/dbeta = sum(w)
    w = rng.standard_normal((5, 4))
    with tt.GradientTape() as tape:
        y = layer(x, training=training)
        loss = tt.reduce_sum(y * w)
    d_gamma, d_beta = tape.gradient(loss, [layer.gamma, layer.beta])
    normalized = (y.numpy() - layer.beta.numpy()) / layer.gamma.numpy()
    close(d_gamma, (w * normalized).sum(0), atol=1e-12)
    close(d_beta, w.sum(0), atol=1e-12)


def test_gradients_reach_gamma_and_beta_but_not_the_moving_statistics():
    layer, x = batch_norm(), tt.constant(inputs((4, 6)))
    with tt.GradientTape() as tape:
        tape.watch(x)
        loss = tt.reduce_sum(layer(x, training=True) ** 2)
    grads = tape.gradient(loss, [x, *layer.trainable_variables])
    assert all(g is not None for g in grads)
    assert len(layer.trainable_variables) == 2
    np.testing.assert_allclose(grads[0].numpy().sum(0), 0, atol=1e-4)  # batch-centred


def test_inside_tt_function_equals_eager_and_updates_the_moving_statistics():
    eager, compiled = batch_norm(), batch_norm()
    step = tt.function(lambda x: compiled(x, training=True))
    for k in range(3):
        x = inputs((4, 6), 0.5 * k)
        # compiled sums may round differently; x * inv and the offset cancel to a few ulps
        # of their size (about 70 in the second column)
        close(step(x), eager(x, training=True), atol=2e-5)
    close(compiled.moving_mean.numpy(), eager.moving_mean.numpy())
    close(compiled.moving_variance.numpy(), eager.moving_variance.numpy())
    norm = layers.LayerNormalization()
    x = inputs((4, 6))
    close(tt.function(norm)(x), norm(x))


def test_jacobian_through_batch_norm_as_in_tensorflows_guide():
    x = tt.random.normal([7, 5])
    layer1 = layers.Dense(8, activation=tt.nn.elu)
    layer2 = layers.Dense(6, activation=tt.nn.elu)
    bn = layers.BatchNormalization()
    with tt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(bn(layer1(x), training=True))
    jacobian = tape.jacobian(y, x)
    assert jacobian.shape == (7, 6, 7, 5)
    # rows mix through the batch statistics: other examples' inputs move an output
    assert np.abs(jacobian.numpy()[0, :, 1, :]).max() > 0
    assert tape.jacobian(y, layer1.kernel) is None  # not watched, as in TensorFlow


def test_fit_trains_with_batch_statistics_and_moves_them():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((32, 3)) * 2 + 1).astype(np.float32)
    model = tt.keras.Sequential(
        [layers.Dense(4), layers.BatchNormalization(), layers.LayerNormalization(), layers.Dense(1)]
    )
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, x[:, :1], batch_size=8, epochs=1, verbose=0)
    bn = model.layers[1]
    assert np.abs(bn.moving_mean.numpy()).max() > 0  # four training steps moved them
    assert not np.allclose(bn.moving_variance.numpy(), 1)
    before = bn.moving_mean.numpy()
    model.predict(x, verbose=0)
    model.evaluate(x, x[:, :1], verbose=0)
    close(bn.moving_mean.numpy(), before, atol=0)


pytest.importorskip("h5py")  # the tests below read and write Keras's files


def test_a_keras_3_file_with_batch_norm_loads_with_kerass_outputs():
    # batchnorm.keras was saved by Keras 3.15.1 (TensorFlow 2.21): see its make_files.py
    model = tt.keras.models.load_model(DATA / "batchnorm.keras")
    expected = np.load(DATA / "batchnorm.npz")
    assert [type(layer).__name__ for layer in model.layers][1:3] == [
        "BatchNormalization",
        "LayerNormalization",
    ]
    close(model(expected["x"], training=False), expected["y"], atol=1e-5)


@pytest.mark.parametrize("functional", [False, True])
def test_a_model_with_both_layers_saves_and_loads(tmp_path, functional):
    body = [
        layers.Dense(4),
        layers.BatchNormalization(momentum=0.5, epsilon=1e-2, center=False),
        layers.LayerNormalization(axis=[-1], scale=False),
    ]
    if functional:
        inputs_ = tt.keras.Input((3,))
        outputs = inputs_
        for layer in body:
            outputs = layer(outputs)
        model = tt.keras.Model(inputs_, outputs)
    else:
        model = tt.keras.Sequential([tt.keras.Input((3,)), *body])
    x = inputs((5, 3))
    model(x, training=True)  # moving statistics away from their start
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    bn = [layer for layer in loaded.layers if isinstance(layer, layers.BatchNormalization)][0]
    assert (bn.momentum, bn.epsilon, bn.center) == (0.5, 1e-2, False)
    for ours, theirs in zip(model.weights, loaded.weights):
        close(theirs.numpy(), ours.numpy(), atol=0)
    close(loaded(x, training=False), model(x, training=False), atol=0)


def test_kerass_options_tracer_lacks_are_refused_when_set():
    from tracer.keras.saving import layer_configs

    entry = layer_configs.layer_config(layers.BatchNormalization())
    assert entry["config"]["renorm"] is False and entry["config"]["axis"] == -1
    for key, value in (("renorm", True), ("synchronized", True)):
        changed = {**entry, "config": {**entry["config"], key: value}}
        with pytest.raises(ValueError, match=key):
            layer_configs.make_layer(changed)
    entry = layer_configs.layer_config(layers.LayerNormalization(axis=(1, 2)))
    assert entry["config"]["axis"] == [1, 2]


@pytest.mark.parametrize("backend", [None, "c", "interpreter"])
def test_batch_norm_in_training_leaves_masked_steps_out_of_its_moments(backend):
    """Keras 3 on TF 2.21: after Masking(0.0), [[1], [2], [0]], [[4], [0], [0]] normalize by
    the moments of {1, 2, 4} alone (mean 7/3): outputs -1.0687 -0.2672 -1.8702 1.3359
    -1.8702 -1.8702 and moving statistics 1.1667 and 1.2778 with momentum 0.5 (tracer took
    the padding's zeros in: -0.1139 ... and 0.5833)."""
    x = np.array([[[1.0], [2.0], [0.0]], [[4.0], [0.0], [0.0]]], np.float32)
    norm = layers.BatchNormalization(momentum=0.5)
    model = tt.keras.Sequential([layers.Masking(0.0), norm])
    model.build((None, 3, 1))
    run = model if backend is None else tt.function(model, backend=backend)
    got = run(tt.constant(x), training=True).numpy().ravel()
    kept = np.array([1.0, 2.0, 4.0])
    mean, variance = kept.mean(), kept.var()
    expected = (x.ravel() - mean) / np.sqrt(variance + 1e-3)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    np.testing.assert_allclose(got[:2], [-1.0687, -0.2672], atol=1e-4)
    np.testing.assert_allclose(norm.moving_mean.numpy(), [0.5 * mean], rtol=1e-5)
    np.testing.assert_allclose(norm.moving_variance.numpy(), [0.5 + 0.5 * variance], rtol=1e-5)


def test_unit_normalization_scales_tiny_rows_to_unit_length_as_keras_3():
    """Keras 3: [1e-8, 2e-8, 0] becomes [0.44721, 0.89443, 0] (x / |x|: the inverse norm is
    capped at 1e12, not the sum of squares at 1e-12), a zero row stays zero and its
    gradient is 1e12 times the incoming one (tracer gave [0.01, 0.02, 0])."""
    x = tt.constant([[1e-8, 2e-8, 0.0], [0.0, 0.0, 0.0]])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = layers.UnitNormalization()(x)
    np.testing.assert_allclose(y.numpy()[0], [1 / np.sqrt(5), 2 / np.sqrt(5), 0], rtol=1e-6)
    np.testing.assert_array_equal(y.numpy()[1], [0, 0, 0])
    np.testing.assert_allclose(tape.gradient(y, x).numpy()[1], [1e12] * 3, rtol=1e-6)
