"""Keras 3 features added to tracer's Keras API, against the values Keras 3 on TensorFlow
2.21 gives for the same programs: grouped Conv1D/Conv2D, transposed convolutions with
output_padding and Conv1DTranspose, bilinear UpSampling2D, LayerNormalization's rms_scaling,
the hard_sigmoid and hard_silu activations, PyDataset, the Keras 2 shims compiled_loss and
compiled_metrics, steps_per_execution's callbacks, and the optimizer's learning-rate
variable.

Every reference number below was printed by Keras 3 on TensorFlow 2.21 running the same
program with `import tensorflow as tf, keras` (inputs and weights from the same numpy
generators)."""

import doctest
import warnings

import numpy as np
import pytest

import tracer as tt
from tracer.keras import py_dataset

keras = tt.keras
L = keras.layers

# Keras 3 on TensorFlow 2.21: the summaries (`_summary`) of the output and gradients of each
# case of `LAYER_CASES`, its input and weights drawn as the test draws them
# fmt: off
LAYERS = {
    "CONV2D_GROUPS": [
        [29.351003, 470.38992, 1.6282111, 0.22817141, -3.731482, 0.71471024],
        [10.295991, 202.49143, -0.40385681, 0.25142202, 0.4380241, -0.22435114],
        [-128.88129, 728.69438, 3.9054036, -0.55748516, -4.5078249, 3.6935916],
        [0.065980673, 127.04346, 3.609374, 6.3310399, 3.2319767, -2.8385508],
    ],
    "CONV1D_GROUPS": [
        [28.911473, 103.14395, 1.1714592, -1.0288353, 1.8550534, 1.0812132],
        [-0.053029507, 39.092935, -0.29089901, -0.55734169, 1.3572714, 0.92787582],
        [-5.0678772, 123.47, 0.90488982, 1.4611299, 1.871382, -0.18707842],
        [-0.40395613, 0.17663973, 0.19273588, -0.08703649, -0.28678775, -0.22286777],
    ],
    "CONV2DT_SAME": [
        [-6.0775089, 273.7718, -1.0634056, 1.4601161, -0.68841797, -0.71795219],
        [-1.107938, 27.977144, -0.86179632, -0.21888328, -0.56414211, 0.36831057],
        [-8.9506929, 474.6537, 2.77301, -3.9535253, -2.0128183, -1.2183397],
        [-0.38497789, 0.097437564, 0.047016025, -0.18503177, -0.24696214],
    ],
    "CONV2DT_VALID": [
        [71.440135, 163.25671, 0.70572561, -0.17426899, 0.96123493, -0.1595538],
        [-1.3258324, 8.0881192, 0.6727562, 0.35038924, 0.8727659, 0.33562502],
        [-20.06463, 116.41206, 1.0690672, 2.9119072, 1.1398028, -1.1140811],
        [0.66088712, 0.22036574, 0.29898053, 0.36190659],
    ],
    "CONV1DT_VALID": [
        [14.866012, 78.107014, 0.60241634, 0.85453194, 1.6116711, -0.60157549],
        [-2.060916, 54.576064, -0.43993407, -1.8937836, -0.5460394, 0.61753917],
        [-2.4316587, 94.855419, -0.018967152, -0.36956069, 0.1781055, -0.93033636],
        [1.490438, 1.1932828, 0.36514211, 0.8384124, 0.54085058, -0.25396711],
    ],
    "CONV1DT_SAME": [
        [10.094092, 8.9989297, 0, 1.4969758, 0, 0],
        [2.6311665, 4.8168475, -0.041345589, 0.29328445, -0.14207634, 0.073436238],
        [4.486522, 61.67733, 0.61537063, 2.4360447, 1.8204337, 1.8882334],
        [9.1501527, 47.319763, 2.9232416, 6.2269111],
    ],
    "UP_BILINEAR": [
        [-95.949961, 141.23726, 0.0012301534, 0.29874554, 0.0012301534, 0.29874554],
        [-0.54189163, 7.1482499, 0.81366241, 0.47915688, 0.0065015256, -0.0065262113],
    ],
    "UP_BILINEAR_CF": [
        [-29.075513, 160.78598, -1.7382663, -1.6378604, -1.4370487, -1.3366427],
        [0.64258992, 10.263485, 0.89089525, -0.22148295, 0.090053976, -0.22217613],
    ],
    "RMS": [
        [1.3279681, 31.895339, -0.12837842, 0.047507953, 1.195503, 0.77141833],
        [-0.92370973, 5.738631, -0.020167483, 0.098242261, -0.068710111, -0.47909367],
        [3.614281, 40.730122, -2.8142397, 2.0010948, -1.3486215, 0.61803979],
    ],
    "RMS_AXES": [
        [6.7256152, 18.478067, 0.76490515, 0.53072554, 0.063782007, 0.12534744],
        [-1.1446079, 1.7788647, -0.358643, -0.20406947, 0.0098044965, -0.22378828],
        [-3.1767472, 21.960614, -1.4611213, 0.99203008, 0.93897223, -0.42261285],
    ],
}
# fmt: on


# name: (the layer, made when the case runs; the input's shape; the seed of its input and
# weights)
LAYER_CASES = {
    "CONV2D_GROUPS": (
        lambda: L.Conv2D(6, 3, groups=2, padding="same", strides=(1, 2)),
        (2, 5, 5, 4),
        1,
    ),
    "CONV1D_GROUPS": (
        lambda: L.Conv1D(4, 2, groups=2, padding="causal", dilation_rate=2),
        (2, 7, 6),
        2,
    ),
    "CONV2DT_SAME": (
        lambda: L.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1),
        (1, 3, 4, 2),
        3,
    ),
    "CONV2DT_VALID": (
        lambda: L.Conv2DTranspose(2, (3, 2), strides=(2, 3), output_padding=(1, 2)),
        (1, 3, 4, 2),
        4,
    ),
    "CONV1DT_VALID": (lambda: L.Conv1DTranspose(4, 3, strides=2, output_padding=1), (2, 5, 3), 5),
    "CONV1DT_SAME": (
        lambda: L.Conv1DTranspose(2, 2, strides=3, padding="same", activation="relu"),
        (2, 5, 3),
        6,
    ),
    "UP_BILINEAR": (lambda: L.UpSampling2D((2, 3), interpolation="bilinear"), (2, 3, 4, 2), 7),
    "UP_BILINEAR_CF": (
        lambda: L.UpSampling2D(2, data_format="channels_first", interpolation="bilinear"),
        (2, 3, 4, 2),
        8,
    ),
    "RMS": (lambda: L.LayerNormalization(rms_scaling=True), (3, 4, 5), 9),
    "RMS_AXES": (
        lambda: L.LayerNormalization(axis=[1, 2], rms_scaling=True, epsilon=0.1),
        (3, 4, 5),
        10,
    ),
}


# Keras's output shapes and weights' shapes for the cases above
SHAPES = {
    "CONV2D_GROUPS": ((2, 5, 3, 6), [(3, 3, 2, 6), (6,)]),
    "CONV1D_GROUPS": ((2, 7, 4), [(2, 3, 4), (4,)]),
    "CONV2DT_SAME": ((1, 6, 8, 3), [(3, 3, 3, 2), (3,)]),
    "CONV2DT_VALID": ((1, 8, 13, 2), [(3, 2, 2, 2), (2,)]),
    "CONV1DT_VALID": ((2, 12, 4), [(3, 4, 3), (4,)]),
    "CONV1DT_SAME": ((2, 15, 2), [(2, 2, 3), (2,)]),
    "UP_BILINEAR": ((2, 6, 12, 2), []),
    "UP_BILINEAR_CF": ((2, 3, 8, 4), []),
    "RMS": ((3, 4, 5), [(5,)]),
    "RMS_AXES": ((3, 4, 5), [(4, 5)]),
}


def _summary(value):
    """The sum, the sum of squares and the first four elements."""
    value = np.asarray(value, np.float64)
    return [value.sum(), (value**2).sum(), *value.ravel()[:4]]


@pytest.mark.parametrize("name", list(SHAPES))
def test_layers_give_kerass_outputs_and_gradients(name):
    """Per case: the output, then the gradients of sum(output * cos(index)) with respect to
    the input and each trainable weight, summarised (`_summary`)."""
    make, shape, seed = LAYER_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (rms_scaling's deprecation)
        layer = make()
    generator = np.random.default_rng(seed)
    x = generator.normal(size=shape).astype(np.float32)
    if name.startswith("RMS"):
        x *= 2.0
    layer.build(x.shape)
    layer.set_weights(
        [generator.normal(0, 0.5, w.shape).astype(np.float32) for w in layer.get_weights()]
    )
    x = tt.constant(x)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = layer(x)
        ramp = tt.reshape(tt.range(tt.size(y), dtype=tt.float32), y.shape)
        total = tt.reduce_sum(y * tt.cos(ramp))
    gradients = [tape.gradient(total, x), *tape.gradient(total, layer.trainable_weights)]
    assert (tuple(y.shape), [tuple(w.shape) for w in layer.weights]) == SHAPES[name]
    got = [_summary(y), *(_summary(g) for g in gradients)]
    assert len(got) == len(LAYERS[name])
    for ours, theirs in zip(got, LAYERS[name]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_configs_name_kerass_arguments_and_a_file_makes_the_layers_again(tmp_path):
    conv = L.Conv2D(6, 3, groups=2)
    assert conv.get_config()["groups"] == 2
    transposed = L.Conv1DTranspose(4, 3, strides=2, output_padding=1)
    config = transposed.get_config()
    # Keras's keys, in its order, after name, trainable and dtype
    assert list(config)[3:] == [
        "filters", "kernel_size", "strides", "padding", "output_padding", "data_format",
        "dilation_rate", "activation", "use_bias", "kernel_initializer", "bias_initializer",
        "kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
        "bias_constraint",
    ]  # fmt: skip
    assert config["output_padding"] == [1]
    assert L.Conv2DTranspose(3, 3, strides=2).get_config()["output_padding"] is None
    assert L.UpSampling2D(interpolation="bilinear").get_config()["interpolation"] == "bilinear"
    with pytest.warns(UserWarning, match="rms_scaling"):
        norm = L.LayerNormalization(rms_scaling=True)
    assert norm.get_config()["rms_scaling"] is True
    inputs = keras.Input((6, 8, 4))
    h = L.Conv2D(6, 3, groups=2, padding="same")(inputs)
    h = L.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=1)(h)
    h = L.UpSampling2D(2, interpolation="bilinear")(h)
    with pytest.warns(UserWarning, match="rms_scaling"):
        h = L.LayerNormalization(rms_scaling=True)(h)
    h = L.Reshape((24 * 32, 4))(h)
    h = L.Conv1D(4, 3, groups=4, padding="causal", activation="hard_swish")(h)
    outputs = L.Conv1DTranspose(2, 3, strides=2, output_padding=1, activation="hard_sigmoid")(h)
    model = keras.Model(inputs, outputs)
    assert model.output_shape == (None, 1538, 2)
    x = np.random.default_rng(0).normal(size=(2, 6, 8, 4)).astype(np.float32)
    model.save(tmp_path / "m.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_bad_groups_and_output_paddings_are_refused():
    with pytest.raises(ValueError, match="multiple of groups"):
        L.Conv2D(5, 3, groups=2)
    with pytest.raises(ValueError, match="channels must be a multiple of groups"):
        L.Conv1D(4, 3, groups=2).build((None, 7, 3))
    with pytest.raises(ValueError, match="less than the strides"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(interpolation="gaussian")


# Keras 3's hard_sigmoid, hard_silu and hard_swish of these points, and their gradients
POINTS = [-4.0, -3.0, -1.5, 0.0, 0.5, 3.0, 3.5]
HARD_SIGMOID = [0.0, 0.0, 0.25, 0.5, 0.5833333134651184, 1.0, 1.0]
HARD_SIGMOID_GRAD = [0.0, 0.0, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.0,
                     0.0]  # fmt: skip
HARD_SILU = [-0.0, -0.0, -0.375, 0.0, 0.2916666567325592, 3.0, 3.5]
HARD_SILU_GRAD = [0.0, 0.0, 0.0, 0.5, 0.6666666269302368, 1.0, 1.0]


@pytest.mark.parametrize(
    "name, values, gradients",
    [
        ("hard_sigmoid", HARD_SIGMOID, HARD_SIGMOID_GRAD),
        ("hard_silu", HARD_SILU, HARD_SILU_GRAD),
        ("hard_swish", HARD_SILU, HARD_SILU_GRAD),
    ],
)
def test_hard_activations_are_kerass(name, values, gradients):
    x = tt.constant(POINTS)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = keras.activations.get(name)(x)
    np.testing.assert_array_equal(y.numpy(), np.float32(values))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.float32(gradients))
    layer = L.Activation(name)
    np.testing.assert_array_equal(layer(x).numpy(), np.float32(values))
    # as Keras writes them: hard_swish is hard_silu's alias
    assert layer.get_config()["activation"] == (
        "hard_sigmoid" if "sigmoid" in name else "hard_silu"
    )
    assert getattr(keras.activations, name) is keras.activations.get(name)


# --- training ------------------------------------------------------------------------------

_data = np.random.default_rng(0)
X = _data.normal(size=(10, 3)).astype(np.float32)
Y = _data.normal(size=(10, 2)).astype(np.float32)
W = _data.uniform(0.5, 2.0, size=(10,)).astype(np.float32)


def _weighted(model):
    generator = np.random.default_rng(1)
    model.set_weights(
        [generator.normal(0, 0.5, w.shape).astype(np.float32) for w in model.get_weights()]
    )
    return model


def _model(cls=keras.Sequential, kernel_regularizer=None):
    return _weighted(
        cls(
            [
                keras.Input((3,)),
                L.Dense(4, activation="tanh", kernel_regularizer=kernel_regularizer),
                L.Dense(2),
            ]
        )  # fmt: skip
    )


class Batches(keras.utils.PyDataset):
    """X and Y (and W, `weighted`) in batches of `size`, counting the epoch calls."""

    def __init__(self, size, weighted=False, **kwargs):
        super().__init__(**kwargs)
        self.size, self.weighted, self.begins, self.ends = size, weighted, 0, 0

    def __len__(self):
        return -(-len(X) // self.size)

    def __getitem__(self, index):
        rows = slice(index * self.size, (index + 1) * self.size)
        return (X[rows], Y[rows], W[rows]) if self.weighted else (X[rows], Y[rows])

    def on_epoch_begin(self):
        self.begins += 1

    def on_epoch_end(self):
        self.ends += 1


# Keras 3's fit, evaluate and predict of `_model()` over `Batches` (shuffle=False)
PYDS_HISTORY = {
    "loss": [2.589231014251709, 1.1607269048690796],
    "mae": [1.384943962097168, 0.9310505986213684],
    "val_loss": [1.2222286462783813, 0.726794421672821],
    "val_mae": [0.9686354398727417, 0.7301674485206604],
}
PYDS_KERNEL = [-0.20748934149742126, -0.4151883125305176, -0.44552144408226013,
               -0.2525838017463684, -0.17550338804721832, -0.3137870728969574,
               0.8155571818351746, 0.70374596118927]  # fmt: skip
# (train begins, train ends, validation begins, validation ends): fit and evaluate also end
# an epoch before they start
PYDS_COUNTS = (2, 3, 2, 4)
PYDS_EVAL = [0.726794421672821, 0.7301674485206604]
PYDS_PREDICT = [0.13708478212356567, 0.1568470001220703, -0.0025048255920410156,
                0.5231755971908569, 0.7609823942184448, 0.4476478099822998,
                0.15933102369308472, -0.319353848695755, 0.08833235502243042,
                0.44534552097320557]  # fmt: skip


def test_a_pydataset_feeds_fit_evaluate_and_predict_as_kerass_does():
    model = _model()
    model.compile(keras.optimizers.SGD(0.1), "mse", metrics=["mae"])
    train = Batches(4, workers=2, use_multiprocessing=False)
    validation = Batches(5, weighted=True)
    history = model.fit(train, epochs=2, verbose=0, shuffle=False, validation_data=validation)
    assert list(history.history) == list(PYDS_HISTORY)
    for name, values in PYDS_HISTORY.items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[2].ravel(), PYDS_KERNEL, rtol=1e-5)
    assert (train.begins, train.ends, validation.begins, validation.ends) == PYDS_COUNTS
    evaluated = Batches(3, weighted=True)
    np.testing.assert_allclose(model.evaluate(evaluated, verbose=0), PYDS_EVAL, rtol=1e-5)
    assert (evaluated.begins, evaluated.ends) == (1, 2)
    predicted = Batches(4)
    outputs = model.predict(predicted, verbose=0)
    np.testing.assert_allclose(outputs[:, 0], PYDS_PREDICT, rtol=1e-5, atol=1e-6)
    assert (predicted.begins, predicted.ends) == (1, 1)
    assert (train.workers, train.use_multiprocessing, train.max_queue_size) == (2, False, 10)


def test_a_pydataset_is_shuffled_by_batch_and_refuses_targets_beside_it():
    assert keras.utils.Sequence is keras.utils.PyDataset
    order = []

    class Logged(Batches):
        def __getitem__(self, index):
            order.append(index)
            return super().__getitem__(index)

    model = _model()
    model.compile(keras.optimizers.SGD(0.1), "mse")
    keras.utils.set_random_seed(3)
    model.fit(Logged(2), epochs=2, verbose=0)  # shuffle=True: the batches' order, each epoch
    assert sorted(order[:5]) == sorted(order[5:]) == [0, 1, 2, 3, 4]
    assert order != [0, 1, 2, 3, 4] * 2
    with pytest.raises(ValueError, match="`y` must not be given when x is a PyDataset"):
        model.fit(Batches(2), Y, verbose=0)


def test_the_pydataset_example_runs():
    result = doctest.testmod(py_dataset, extraglobs={"tt": tt, "np": np})
    assert result.attempted > 0 and result.failed == 0


class OldStyle(keras.Sequential):
    """A Keras 2 train_step, on the shims Keras 3 keeps."""

    def train_step(self, data):
        x, y = data
        with tt.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


# Keras 3's history of OldStyle (the "loss" is the mean of the predictions: compiled_metrics
# updates the loss tracker, a Mean, with y_pred), its order, and the kernel after it
OLD_HISTORY = {
    "mae": [1.3839025497436523, 0.9245378375053406],
    "loss": [-0.8297704458236694, -0.09327951818704605],
}
OLD_KERNEL = [-0.20781803131103516, -0.41482335329055786, -0.44805973768234253,
              -0.2539505064487457, -0.17584025859832764, -0.3139536380767822,
              0.8208284378051758, 0.7080532312393188]  # fmt: skip
OLD_COMPILED_LOSS = 0.830357015132904  # mse + the l2 penalty, after fit
OLD_EVAL = {"loss": 0.8303569555282593, "mae": 0.7286078929901123}


def test_a_keras_2_train_step_runs_on_compiled_loss_and_compiled_metrics():
    model = _model(OldStyle, kernel_regularizer=keras.regularizers.l2(0.05))
    model.compile(keras.optimizers.SGD(0.1), "mse", metrics=["mae"])
    with pytest.warns(UserWarning, match="deprecated"):
        history = model.fit(X, Y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    assert list(history.history) == list(OLD_HISTORY)
    for name, values in OLD_HISTORY.items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[2].ravel(), OLD_KERNEL, rtol=1e-5)
    with pytest.warns(UserWarning, match="compiled_loss"):
        loss = model.compiled_loss(tt.constant(Y), model(X))
    assert float(loss) == pytest.approx(OLD_COMPILED_LOSS, rel=1e-5)
    evaluated = model.evaluate(X, Y, verbose=0, return_dict=True)
    assert evaluated == pytest.approx(OLD_EVAL, rel=1e-5)


class Calls(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_batch_begin(self, batch, logs=None):
        self.calls.append(("begin", batch))

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(("end", batch, round(logs["loss"], 6)))

    def on_test_batch_end(self, batch, logs=None):
        self.calls.append(("test_end", batch))

    def on_predict_batch_end(self, batch, logs=None):
        self.calls.append(("predict_end", batch, logs["outputs"].shape))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, round(logs["loss"], 6)))


# Keras 3's callback calls with steps_per_execution=2: fit over 5 batches, evaluate over 3,
# predict over 4 (its outputs are the execution's, joined); and the kernel after fit
SPE_CALLS = [("begin", 0), ("end", 1, 1.149933), ("begin", 2), ("end", 3, 1.634088),
             ("begin", 4), ("end", 5, 2.092393), ("epoch_end", 0, 2.092393), ("test_end", 1),
             ("test_end", 3), ("predict_end", 1, (6, 2)), ("predict_end", 3, (4, 2))]  # fmt: skip
SPE_KERNEL = [-0.1454896181821823, -0.37560710310935974, -0.39383894205093384,
              -0.22924353182315826, -0.14569689333438873, -0.28907614946365356,
              0.7547568678855896, 0.6728271245956421]  # fmt: skip


def test_steps_per_execution_calls_the_batch_callbacks_once_per_execution():
    model = _model()
    model.compile(keras.optimizers.SGD(0.1), "mse", steps_per_execution=2)
    calls = Calls()
    model.fit(X, Y, batch_size=2, epochs=1, verbose=0, shuffle=False, callbacks=[calls])
    model.evaluate(X, Y, batch_size=4, verbose=0, callbacks=[calls])
    assert model.predict(X, batch_size=3, verbose=0, callbacks=[calls]).shape == (10, 2)
    # the calls as Keras makes them, each loss to float32's rounding (6 decimals can straddle
    # a rounding boundary: 1.1499325 is either neighbour)
    assert [c[:2] for c in calls.calls] == [c[:2] for c in SPE_CALLS]
    losses = [c[2] for c in calls.calls if c[0] in ("end", "epoch_end")]
    want = [c[2] for c in SPE_CALLS if c[0] in ("end", "epoch_end")]
    np.testing.assert_allclose(losses, want, rtol=2e-6)
    assert [c for c in calls.calls if c[0] == "predict_end"] == [
        c for c in SPE_CALLS if c[0] == "predict_end"
    ]
    np.testing.assert_allclose(model.get_weights()[2].ravel(), SPE_KERNEL, rtol=1e-5)
    with pytest.raises(ValueError, match="steps_per_execution"):
        model.compile("sgd", "mse", steps_per_execution=0)


# Keras 3's optimizer variables of Adam(0.01) after fitting `_model()`: iteration, the
# learning rate, then the slots (shapes)
OPT_PATHS = ["adam/iteration", "adam/learning_rate"]
OPT_SHAPES = [(), (), (3, 4), (3, 4), (4,), (4,), (4, 2), (4, 2), (2,), (2,)]
OPT_LR = 0.009999999776482582


def test_the_optimizers_variables_hold_the_learning_rate_after_iterations(tmp_path):
    model = _model()
    optimizer = keras.optimizers.Adam(0.01, name="adam")
    model.compile(optimizer, "mse")
    model.fit(X, Y, epochs=1, verbose=0, shuffle=False)
    variables = optimizer.variables
    assert [tuple(v.shape) for v in variables] == OPT_SHAPES
    assert [v.path for v in variables[:2]] == OPT_PATHS
    assert variables[0] is optimizer.iterations and variables[1] is optimizer.learning_rate
    assert float(variables[1].numpy()) == OPT_LR
    assert [v.dtype.name for v in variables[:3]] == ["int64", "float32", "float32"]
    # a schedule gives the rate: no variable for it, as in Keras
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    scheduled = keras.optimizers.SGD(schedule, momentum=0.9)
    model.compile(scheduled, "mse")
    model.fit(X, Y, epochs=1, verbose=0)
    assert len(scheduled.variables) == 5 and scheduled.variables[0].path.endswith("/iteration")
    # the .keras file keeps Keras's layout, and gives the same variables back
    model.compile(optimizer, "mse")
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras").optimizer.variables
    assert len(loaded) == len(variables)
    for ours, theirs in zip(variables, loaded):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
