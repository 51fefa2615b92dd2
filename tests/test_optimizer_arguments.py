"""Keras's optimizer arguments `clipnorm`, `clipvalue`, `global_clipnorm` and `weight_decay`,
and AdamW, Adamax, Nadam, Adadelta and Lion: five steps of each on a small least-squares problem, against the variables
TensorFlow 2.21's Keras leaves (printed by the same program with `import tensorflow as tf`),
eagerly and compiled."""

import re

import numpy as np
import pytest

import tracer as tt
from tracer.keras.saving import model_configs

optimizers = tt.keras.optimizers

# the weights and bias after five steps in TensorFlow 2.21
KERAS = {
    "adam_clipnorm": [
        [[0.5061371922492981, -1.4997811317443848], [0.03727924823760986, 2.4996025562286377]],
        [-0.19998767971992493, -0.22811967134475708],
    ],
    "sgd_clipvalue": [
        [[0.8500001430511475, -1.8500001430511475], [0.3499999940395355, 2.8500001430511475]],
        [0.15000000596046448, -0.18247993290424347],
    ],
    "adam_global": [
        [[0.5058582425117493, -1.4996379613876343], [0.03669644147157669, 2.4995038509368896]],
        [-0.18362247943878174, -0.20979587733745575],
    ],
    "adamw": [
        [[0.7297759056091309, -1.7035579681396484], [0.2459045648574829, 2.6788876056671143]],
        [0.04863753169775009, -0.22541317343711853],
    ],
    "sgd_wd": [
        [[0.38638728857040405, -1.709518551826477], [0.1802668571472168, 2.456240653991699]],
        [0.5683161020278931, 0.6419758200645447],
    ],
    "rms_wd_clip": [
        [[0.8940184116363525, -1.8913661241531372], [0.3972303867340088, 2.8904826641082764]],
        [0.19326534867286682, -0.17568214237689972],
    ],
    "adamax": [
        [[0.5604690909385681, -1.5195688009262085], [0.12004949152469635, 2.5206902027130127]],
        [-0.11001608520746231, -0.22529269754886627],
    ],
    "adadelta": [
        [[0.9948110580444336, -1.9948054552078247], [0.4948190748691559, 2.9948062896728516]],
        [0.2948148846626282, -0.10511575639247894],
    ],
    "lion": [
        [[0.74775230884552, -1.7452549934387207], [0.24900104105472565, 2.742757558822632]],
        [0.04950063303112984, -0.2496003359556198],
    ],
    "nadam": [
        [[0.6350084543228149, -1.6140013933181763], [0.17890752851963043, 2.6130287647247314]],
        [-0.045225102454423904, -0.22962644696235657],
    ],
    "nadam_clip": [
        [[0.7799074053764343, -1.7734167575836182], [0.2919194996356964, 2.773481845855713]],
        [0.07399576157331467, -0.20378248393535614],
    ],
}

MAKERS = {
    "adam_clipnorm": lambda: optimizers.Adam(0.1, clipnorm=0.5),
    "sgd_clipvalue": lambda: optimizers.SGD(0.1, clipvalue=0.3),
    "adam_global": lambda: optimizers.Adam(0.1, global_clipnorm=0.7),
    "adamw": lambda: optimizers.AdamW(0.05, weight_decay=0.1),
    "sgd_wd": lambda: optimizers.SGD(0.1, momentum=0.9, weight_decay=0.05),
    "rms_wd_clip": lambda: optimizers.RMSprop(0.01, weight_decay=0.02, clipnorm=1.0),
    "adamax": lambda: optimizers.Adamax(0.1),
    "adadelta": lambda: optimizers.Adadelta(1.0, rho=0.9),
    "lion": lambda: optimizers.Lion(0.05, weight_decay=0.01),
    "nadam": lambda: optimizers.Nadam(0.1),
    "nadam_clip": lambda: optimizers.Nadam(0.05, beta_1=0.8, clipnorm=0.5),
}
X = np.array([[1.0, 2.0], [-1.0, 0.5], [2.0, -1.0]], np.float32)


def _five_steps(optimizer, compiled):
    w = tt.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
    b = tt.Variable(np.array([0.3, -0.1], np.float32))

    def step(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum((tt.matmul(x, w) + b) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))

    run = tt.function(step) if compiled else step
    for _ in range(5):
        run(tt.constant(X))
    return w.numpy(), b.numpy()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_clipping_and_weight_decay_step_as_keras(name, compiled):
    w, b = _five_steps(MAKERS[name](), compiled)
    np.testing.assert_allclose(w, KERAS[name][0], atol=1e-6)
    np.testing.assert_allclose(b, KERAS[name][1], atol=1e-6)


def test_the_arguments_are_checked_and_kept_in_the_config():
    with pytest.raises(ValueError, match="one of clipnorm, clipvalue and global_clipnorm"):
        optimizers.Adam(clipnorm=1.0, clipvalue=0.5)
    with pytest.raises(ValueError, match="AdamW: weight_decay must be a number"):
        optimizers.AdamW(weight_decay=None)
    model = tt.keras.Sequential([tt.keras.Input((2,)), tt.keras.layers.Dense(1)])
    model.compile(optimizer=optimizers.AdamW(0.01, weight_decay=0.02, clipnorm=1.0), loss="mse")
    config = model_configs.compile_config(model)["optimizer"]["config"]
    assert config["weight_decay"] == 0.02 and config["clipnorm"] == 1.0


def test_get_config_and_from_config_as_keras_3():
    # the configs TF 2.21 (Keras 3.15) prints (its names made unique in the process)
    keras_off = {
        "use_ema": False,
        "ema_momentum": 0.99,
        "ema_overwrite_frequency": None,
        "loss_scale_factor": None,
        "gradient_accumulation_steps": None,
    }
    adam = {
        "learning_rate": 0.0010000000474974513,
        "weight_decay": None,
        "clipnorm": None,
        "global_clipnorm": None,
        "clipvalue": None,
        **keras_off,
        "beta_1": 0.9,
        "beta_2": 0.999,
        "epsilon": 1e-07,
        "amsgrad": False,
    }
    config = optimizers.Adam().get_config()
    assert re.fullmatch(r"adam(_\d+)?", config.pop("name"))  # Keras's: "adam", "adam_1", ...
    assert list(config.items()) == list(adam.items())
    sgd = optimizers.SGD(0.1, momentum=0.9, nesterov=True, clipnorm=1.0)
    config = optimizers.SGD.from_config(sgd.get_config()).get_config()
    assert list(config.items())[1:] == [
        ("learning_rate", 0.10000000149011612),
        ("weight_decay", None),
        ("clipnorm", 1.0),
        ("global_clipnorm", None),
        ("clipvalue", None),
        *keras_off.items(),
        ("momentum", 0.9),
        ("nesterov", True),
    ]
    rms = list(optimizers.RMSprop().get_config())[-4:]
    assert rms == ["rho", "momentum", "epsilon", "centered"]
    schedule = optimizers.schedules.InverseTimeDecay(0.001, decay_steps=20, decay_rate=1)
    config = optimizers.Adam(schedule).get_config()
    assert config["learning_rate"] == {
        "module": "keras.optimizers.schedules",
        "class_name": "InverseTimeDecay",
        "config": {
            "initial_learning_rate": 0.001,
            "decay_steps": 20,
            "decay_rate": 1,
            "staircase": False,
            "name": "InverseTimeDecay",
        },
        "registered_name": None,
    }
    again = optimizers.Adam.from_config(config)
    assert again._schedule.get_config() == schedule.get_config()
    with pytest.raises(NotImplementedError, match="loss_scale_factor=2.0"):
        optimizers.Adam.from_config({**config, "loss_scale_factor": 2.0})
    assert optimizers.Adam.from_config({**config, "use_ema": True}).use_ema
    assert optimizers.Adam.from_config(optimizers.Adam(amsgrad=True).get_config()).amsgrad


@pytest.mark.parametrize("compiled", [False, True])
def test_adam_with_amsgrad_steps_as_kerass(compiled):
    """TensorFlow 2.21 (Keras 3): Adam(0.1, amsgrad=True) on [1, -2] with the gradients
    [1, .5], [.1, -3], [2, 0] leaves [0.743138, -1.989403] (printed to six digits), where
    plain Adam leaves [0.743138, -1.989379]: the second variable's v falls below its largest
    at the third step, whose gradient is 0."""
    variable = tt.Variable([1.0, -2.0])
    optimizer = optimizers.Adam(0.1, amsgrad=True)

    def step(gradient):
        optimizer.apply_gradients([(gradient, variable)])

    run = tt.function(step) if compiled else step
    for gradient in ([1.0, 0.5], [0.1, -3.0], [2.0, 0.0]):
        run(tt.constant(gradient))
    np.testing.assert_allclose(variable.numpy(), [0.743138, -1.989403], atol=1e-6)
    v, v_hat = (optimizer._slots_of(variable)[name].numpy() for name in ("v", "v_hat"))
    assert v[1] < v_hat[1] and v_hat[0] == v[0]


def test_default_names_are_kerass():
    # TF 2.21's: the class name in snake case, made unique in the process as layers' are
    tt.keras.backend.clear_session()
    names = [cls().name for cls in (optimizers.SGD, optimizers.SGD, optimizers.RMSprop)]
    assert names == ["sgd", "sgd_1", "rm_sprop"]
    assert optimizers.AdamW().name == "adam_w" and optimizers.Adam(name="mine").name == "mine"
    assert optimizers.SGD().iterations.name == "sgd_2/iterations:0"


def test_nadams_state_goes_through_a_keras_file(tmp_path):
    """Nadam's slots and its momentum factors' product are saved after the slots, as Keras
    orders them; a loaded model's next step is the original's."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 2)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    model = tt.keras.Sequential([tt.keras.Input((2,)), tt.keras.layers.Dense(1)])
    model.compile(optimizer=optimizers.Nadam(0.05), loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    model.save(tmp_path / "nadam.keras")
    loaded = tt.keras.models.load_model(tmp_path / "nadam.keras")
    assert loaded.optimizer.u_product.numpy() == model.optimizer.u_product.numpy() != 1.0
    for each in (model, loaded):
        each.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_keras_3_apply_and_build():
    """Keras 3's `optimizer.apply(grads, variables)` (what its custom-loop guide calls) and
    `build` then `apply(grads)`: TensorFlow 2.21's values."""
    v = tt.Variable([1.0, 2.0])
    adam = tt.keras.optimizers.Adam(0.1)
    assert adam.apply([tt.constant([0.5, -0.5])], [v]) is None
    np.testing.assert_allclose(v.numpy(), [0.9000013, 2.0999987], rtol=1e-7)
    assert int(adam.iterations) == 1
    tt.function(lambda: adam.apply([tt.constant([0.5, -0.5])], [v]))()
    np.testing.assert_allclose(v.numpy(), [0.80000275, 2.1999972], rtol=1e-7)
    w = tt.Variable([1.0])
    sgd = tt.keras.optimizers.SGD(0.1)
    assert not sgd.built
    sgd.build([w])
    sgd.apply([tt.constant([2.0])])
    np.testing.assert_allclose(w.numpy(), [0.8])
    with pytest.raises(ValueError, match="2 gradients for 1 variables"):
        sgd.apply([tt.constant([2.0])] * 2)
    with pytest.raises(ValueError, match="call .*build"):
        tt.keras.optimizers.SGD(0.1).apply([tt.constant([2.0])])


def test_variables_is_a_list_as_keras_3s_property_and_may_be_called():
    """Keras 3's `optimizer.variables` is a property, a list (`len`, iteration, indexing);
    TensorFlow's older optimizers' was a method: both forms give the same variables."""
    variable = tt.Variable([1.0, 2.0])
    optimizer = optimizers.Adam(0.1)
    optimizer.apply_gradients([(tt.constant([1.0, 1.0]), variable)])
    assert len(optimizer.variables) == 4 and optimizer.variables[0] is optimizer.iterations
    assert [v.numpy().tolist() for v in optimizer.variables()] == [
        v.numpy().tolist() for v in optimizer.variables
    ]


def _gathered_twice():
    """The gradient of sum(gather(v, [0, 2, 2])) for v of ones (3, 2): IndexedSlices whose
    row 2 appears twice."""
    v = tt.Variable(tt.ones((3, 2)))
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.gather(v, [0, 2, 2]))
    return tape.gradient(loss, v)


def test_indexed_slices_are_clipped_by_their_values_as_tensorflows():
    """TF 2.21: clip_by_norm of those slices to 1 scales by 1/sqrt(6) (the norm of the three
    slices' values), not 1/sqrt(10) (the norm of the dense sum); clip_by_value clips each
    slice before the two are added."""
    g = _gathered_twice()
    clipped = tt.clip_by_norm(g, 1.0)
    assert isinstance(clipped, tt.IndexedSlices)
    scale = 1 / np.sqrt(6.0)
    np.testing.assert_allclose(
        tt.convert_to_tensor(clipped).numpy(), [[scale] * 2, [0, 0], [2 * scale] * 2], rtol=1e-6
    )
    by_value = tt.convert_to_tensor(tt.clip_by_value(g, -0.5, 0.5)).numpy()
    np.testing.assert_array_equal(by_value, [[0.5, 0.5], [0, 0], [1.0, 1.0]])


@pytest.mark.parametrize(
    "option, row_0, row_2",
    [
        ({"clipnorm": 1.0}, 1 / np.sqrt(6.0), 2 / np.sqrt(6.0)),
        ({"global_clipnorm": 1.0}, 1 / np.sqrt(6.0), 2 / np.sqrt(6.0)),
        ({"clipvalue": 0.5}, 0.5, 1.0),
    ],
)
def test_an_optimizer_clips_sparse_gradients_by_their_slices_as_keras(option, row_0, row_2):
    """Keras 3 on TF 2.21: SGD(1.0, clipvalue=0.5) moves row 2 (gathered twice, each slice 1)
    by -1, each slice clipped before they are added; tracer clipped the dense sum (-0.5)."""
    w = tt.Variable(tt.zeros((3, 2)))
    tt.keras.optimizers.SGD(1.0, **option).apply_gradients([(_gathered_twice(), w)])
    np.testing.assert_allclose(w.numpy(), [[-row_0] * 2, [0, 0], [-row_2] * 2], rtol=1e-6)


def test_a_sparse_gradient_keeps_the_gathers_index_dtype():
    """TF 2.21: the IndexedSlices of a gather by a list of ids has int32 indices (tracer
    made them int64); two gathers by int32 and int64 ids join as int64."""
    assert _gathered_twice().indices.dtype == tt.int32
    v = tt.Variable(tt.ones((3, 2)))
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.gather(v, [0])) + tt.reduce_sum(
            tt.gather(v, tt.constant([1], tt.int64))
        )
    g = tape.gradient(loss, v)
    assert g.indices.dtype == tt.int64 and sorted(g.indices.numpy().tolist()) == [0, 1]
