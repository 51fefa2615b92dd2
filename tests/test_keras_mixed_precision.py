"""`tt.keras.mixed_precision`: Keras 3's dtype policies, `"mixed_float16"` and its
`LossScaleOptimizer`, against what TensorFlow 2.21 (Keras 3.15, on the CPU) printed for the
same programs.

The expected values were made by running each program below with `/tmp/peers/bin/python`
(`import tensorflow as tf, keras`, `keras.mixed_precision.set_global_policy(...)`) and
copying what it printed; the comments say which program. float16 values are compared to
float16's precision, float32 ones (gradients, losses after several steps) to ~1e-3.
"""

import doctest
import json
import zipfile

import numpy as np
import pytest

import tracer as tt
from tracer.keras import autocast, loss_scale_optimizer

keras = tt.keras
mixed_precision = keras.mixed_precision
L = keras.layers

# the three ways a step runs: eagerly, compiled to C, on the interpreter
RUNS = {
    "eager": lambda f: f,
    "c": lambda f: tt.function(f),
    "interpreter": lambda f: tt.function(f, backend="interpreter"),
}


@pytest.fixture(autouse=True)
def _float32_afterwards():
    yield
    mixed_precision.set_global_policy("float32")


def test_policies_print_and_name_their_dtypes():
    """TensorFlow 2.21 printed <DTypePolicy "float32"> float32 float32 float32 for a
    float32 policy's str, name, compute_dtype and variable_dtype; <DTypePolicy
    "mixed_float16"> float16 float32 for mixed_float16's; the global policy and a Dense
    layer's dtype_policy <DTypePolicy "float32">; and Keras's ValueError for 'foo'."""
    policy = mixed_precision.Policy("float32")
    assert (str(policy), policy.name, policy.compute_dtype, policy.variable_dtype) == (
        '<DTypePolicy "float32">',
        "float32",
        "float32",
        "float32",
    )
    mixed = mixed_precision.Policy("mixed_float16")
    assert (repr(mixed), mixed.compute_dtype, mixed.variable_dtype) == (
        '<DTypePolicy "mixed_float16">',
        "float16",
        "float32",
    )
    assert repr(mixed_precision.global_policy()) == '<DTypePolicy "float32">'
    dense = keras.layers.Dense(2)
    assert repr(dense.dtype_policy) == '<DTypePolicy "float32">'
    assert (dense.compute_dtype, dense.variable_dtype) == ("float32", "float32")
    with pytest.raises(ValueError, match="^Cannot convert 'foo' to a mixed precision"):
        mixed_precision.Policy("foo")
    with pytest.raises(ValueError, match="Invalid `policy` argument"):
        mixed_precision.set_global_policy(None)
    # Keras 3's other names
    mixed_precision.set_dtype_policy("mixed_float16")
    assert repr(mixed_precision.dtype_policy()) == '<DTypePolicy "mixed_float16">'


def test_a_float_global_policy_is_the_dtype_of_new_layers():
    """TensorFlow 2.21: after set_global_policy("float64") a new Dense layer's policy is
    <DTypePolicy "float64">, its kernel and its output float64; a layer's own dtype wins."""
    mixed_precision.set_global_policy("float64")
    dense = keras.layers.Dense(2, kernel_initializer="ones")
    out = dense(np.ones((1, 3), np.float32))
    assert repr(dense.dtype_policy) == '<DTypePolicy "float64">'
    assert dense.kernel.dtype == tt.float64 and out.dtype == tt.float64
    np.testing.assert_array_equal(out.numpy(), [[3.0, 3.0]])
    assert keras.layers.Dense(2, dtype="float32").compute_dtype == "float32"
    mixed_precision.set_global_policy("float32")
    assert keras.layers.Dense(2).dtype == tt.float32


def test_mixed_bfloat16_is_refused_by_name():
    """tracer has no bfloat16 dtype (numpy has none), so "mixed_bfloat16" is refused where
    TensorFlow runs it; the policy itself can still be made and printed."""
    assert mixed_precision.Policy("mixed_bfloat16").compute_dtype == "bfloat16"
    with pytest.raises(NotImplementedError, match="'mixed_bfloat16'.*no bfloat16 dtype"):
        mixed_precision.set_global_policy("mixed_bfloat16")
    assert mixed_precision.global_policy().name == "float32"  # unchanged
    with pytest.raises(NotImplementedError, match="mixed_bfloat16"):
        keras.layers.Dense(2, dtype="mixed_bfloat16")


# TensorFlow 2.21, under set_global_policy("mixed_float16"): Dense(2) built for (None, 3),
# set_weights([KERNEL, BIAS]), called on X inside a GradientTape with the loss
# reduce_sum(cast(y, float32) ** 2); then Activation("softmax", dtype="float32") of y
KERNEL = np.array([[0.5, -1.0], [0.25, 0.125], [2.0, -0.3]], np.float32)
BIAS = np.array([0.1, 0.2], np.float32)
X = np.array([[0.1, -0.2, 0.3], [1.5, 2.25, -0.75]], np.float32)
DENSE_Y = [[0.7, -0.015015], [-0.0875, -0.794]]  # float16
KERNEL_GRAD = [[-0.12255859, -2.3847656], [-0.6738281, -3.5664062], [0.55126953, 1.1816406]]
BIAS_GRAD = [1.2255859, -1.6181641]  # both float32
DENSE_LOSS = 1.1285086
SOFTMAX = [[0.67155135, 0.32844865], [0.66960984, 0.3303902]]  # float32


@pytest.mark.parametrize("run", RUNS)
def test_a_dense_layer_computes_in_float16_on_float32_weights(run):
    mixed_precision.set_global_policy("mixed_float16")
    dense = L.Dense(2)
    dense.build((None, 3))
    dense.set_weights([KERNEL, BIAS])
    softmax = L.Activation("softmax", dtype="float32")

    def step(x):
        with tt.GradientTape() as tape:
            y = dense(x)
            loss = tt.reduce_sum(tt.cast(y, tt.float32) ** 2)
        return y, loss, tape.gradient(loss, dense.trainable_variables), softmax(y)

    y, loss, (kernel_grad, bias_grad), probabilities = RUNS[run](step)(tt.constant(X))
    assert y.dtype == tt.float16 and probabilities.dtype == tt.float32
    np.testing.assert_allclose(y.numpy(), DENSE_Y, rtol=1e-3)
    assert kernel_grad.dtype == bias_grad.dtype == tt.float32
    np.testing.assert_allclose(kernel_grad.numpy(), KERNEL_GRAD, rtol=1e-5)
    np.testing.assert_allclose(bias_grad.numpy(), BIAS_GRAD, rtol=1e-5)
    np.testing.assert_allclose(float(loss), DENSE_LOSS, rtol=1e-6)
    np.testing.assert_allclose(probabilities.numpy(), SOFTMAX, rtol=1e-6)
    assert dense.kernel.dtype == dense.bias.dtype == tt.float32  # the weights stay float32


def test_a_mixed_layer_reports_its_policy_as_keras_does():
    """TensorFlow 2.21 under mixed_float16: a Dense layer's dtype_policy <DTypePolicy
    "mixed_float16">, compute_dtype float16, variable_dtype and dtype float32; its config's
    dtype entry names "mixed_float16" and from_config gives the policy back; an
    Activation(dtype="float32") has <DTypePolicy "float32">; LayerNormalization and
    Embedding have autocast False, BatchNormalization True."""
    mixed_precision.set_global_policy("mixed_float16")
    dense = L.Dense(2)
    assert repr(dense.dtype_policy) == '<DTypePolicy "mixed_float16">'
    assert (dense.compute_dtype, dense.variable_dtype, dense.dtype) == (
        "float16",
        "float32",
        tt.float32,
    )
    config = dense.get_config()
    assert config["dtype"] == {
        "module": "keras",
        "class_name": "DTypePolicy",
        "config": {"name": "mixed_float16"},
        "registered_name": None,
    }
    mixed_precision.set_global_policy("float32")
    copy = L.Dense.from_config(config)
    assert repr(copy.dtype_policy) == '<DTypePolicy "mixed_float16">'
    assert copy(X).dtype == tt.float16 and copy.kernel.dtype == tt.float32
    assert repr(L.Activation("softmax", dtype="float32").dtype_policy) == '<DTypePolicy "float32">'
    mixed_precision.set_global_policy("mixed_float16")
    assert (L.LayerNormalization().autocast, L.Embedding(3, 2).autocast) == (False, False)
    assert L.BatchNormalization().autocast is True


def test_a_float32_layer_makes_plain_variables_and_casts_nothing():
    """No cost where no mixed policy is used: the weights are plain Variables, and a
    float32 input reaches `call` as it is."""
    dense = L.Dense(2)
    dense.build((None, 3))
    assert type(dense.kernel) is tt.Variable and dense._mixed_compute is None
    mixed_precision.set_global_policy("mixed_float16")
    mixed = L.Dense(2)
    mixed.build((None, 3))
    assert type(mixed.kernel) is autocast.AutocastVariable


def test_a_weight_is_read_in_float16_only_inside_the_call():
    """TensorFlow 2.21, a layer of one's own under mixed_float16 whose call multiplies its
    float16 inputs by a weight `w` (Constant(1.5)): the output float16, and inside the call
    convert_to_tensor(self.w) is float16 and the inputs are float16; outside it
    convert_to_tensor(layer.w) and layer.w.dtype are float32. (Keras's `self.w.dtype` is
    float16 inside the call; tracer's stays the variable's, float32.)"""
    mixed_precision.set_global_policy("mixed_float16")

    class Scale(L.Layer):
        def build(self, shape):
            self.w = self.add_weight(
                shape=(shape[-1],), initializer=keras.initializers.Constant(1.5), name="w"
            )

        def call(self, x):
            self.seen = (tt.convert_to_tensor(self.w).dtype.name, x.dtype.name)
            return x * self.w

    layer = Scale()
    y = layer(X)
    assert y.dtype == tt.float16 and layer.seen == ("float16", "float16")
    assert layer.w.dtype == tt.convert_to_tensor(layer.w).dtype == tt.float32
    np.testing.assert_allclose(y.numpy(), X * 1.5, rtol=1e-3)


# TensorFlow 2.21 under mixed_float16, on X3 (two sequences of two steps of three features):
# BatchNormalization()(X3, training=True) and its moving statistics after it,
# LayerNormalization()(X3), an Embedding of a constant table, LSTM(2) and GRU(2,
# return_sequences=True) with Constant(0.1) kernels, Constant(-0.2) recurrent kernels and
# Constant(0.05) biases
X3 = np.array(
    [[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[-2.0, 1.0, 0.125], [0.3, 0.6, -0.9]]], np.float32
)
BATCH_NORMALIZED = [
    [[0.3315, -1.618, 1.629], [1.111, 0.05002, -0.7524]],
    [[-1.619, 1.051, 0.00539], [0.1755, 0.517, -0.882]],
]
MOVING_MEAN = [0.00075012, 0.00212524, 0.00118774]
MOVING_VARIANCE = [1.0064188, 0.9956049, 1.0033288]
LAYER_NORMALIZED = [
    [[0.0, -1.225, 1.225], [1.267, -0.09045, -1.177]],
    [[-1.355, 1.025, 0.3306], [0.4624, 0.925, -1.387]],
]
EMBEDDED = [[[0.3, 0.4], [0.7, 0.8]]]
LSTM_OUT = [[0.07794, 0.07794], [0.007206, 0.007206]]
GRU_OUT = [[[0.09814, 0.09814], [0.12415, 0.12415]], [[-0.006115, -0.006115], [0.03354, 0.03354]]]


def _recurrent(cls, **kwargs):
    constant = keras.initializers.Constant
    return cls(
        2,
        kernel_initializer=constant(0.1),
        recurrent_initializer=constant(-0.2),
        bias_initializer=constant(0.05),
        **kwargs,
    )


def test_normalization_embedding_and_recurrent_layers_under_mixed_float16():
    mixed_precision.set_global_policy("mixed_float16")
    batch_norm = L.BatchNormalization()
    out = batch_norm(X3, training=True)
    assert out.dtype == tt.float16 and batch_norm.moving_mean.dtype == tt.float32
    np.testing.assert_allclose(out.numpy(), BATCH_NORMALIZED, rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(batch_norm.moving_mean.numpy(), MOVING_MEAN, rtol=1e-4)
    np.testing.assert_allclose(batch_norm.moving_variance.numpy(), MOVING_VARIANCE, rtol=1e-6)
    out = L.LayerNormalization()(X3)
    assert out.dtype == tt.float16
    np.testing.assert_allclose(out.numpy(), LAYER_NORMALIZED, rtol=2e-3, atol=1e-4)
    table = keras.initializers.Constant([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8]])
    embedding = L.Embedding(4, 2, embeddings_initializer=table)
    out = embedding(np.array([[1, 3]]))
    assert out.dtype == tt.float16 and embedding.embeddings.dtype == tt.float32
    np.testing.assert_allclose(out.numpy(), EMBEDDED, rtol=1e-3)
    lstm = _recurrent(L.LSTM)
    out = lstm(X3)
    assert out.dtype == tt.float16 and lstm.cell.kernel.dtype == tt.float32
    np.testing.assert_allclose(out.numpy(), LSTM_OUT, rtol=1e-2, atol=1e-4)
    out = _recurrent(L.GRU, return_sequences=True)(X3)
    assert out.dtype == tt.float16
    np.testing.assert_allclose(out.numpy(), GRU_OUT, rtol=1e-2, atol=1e-4)


def test_the_guides_functional_model_and_compile_wrap_the_optimizer():
    """TensorFlow 2.21, the mixed precision guide's model under mixed_float16: Input((3,))
    -> Dense(4, relu) -> Dense(2) -> Activation("softmax", dtype="float32"): the hidden
    KerasTensor float16, the output float32; the model's policy <DTypePolicy
    "mixed_float16">, its layers' mixed_float16 x3 and float32; compile(RMSprop()) made
    the optimizer a LossScaleOptimizer named loss_scale_optimizer around rm_sprop. Under
    float32, compile("sgd") kept SGD, also for a model whose only layer is mixed (the
    model's policy decides); compile(auto_scale_loss=False) keeps the optimizer given."""
    mixed_precision.set_global_policy("mixed_float16")
    inputs = keras.Input((3,))
    hidden = L.Dense(4, activation="relu", name="dense_1")(inputs)
    outputs = L.Activation("softmax", dtype="float32", name="predictions")(L.Dense(2)(hidden))
    assert (hidden.dtype, outputs.dtype) == ("float16", "float32")
    model = keras.Model(inputs, outputs)
    assert repr(model.dtype_policy) == '<DTypePolicy "mixed_float16">'
    assert [layer.dtype_policy.name for layer in model.layers] == [
        "mixed_float16",
        "mixed_float16",
        "mixed_float16",
        "float32",
    ]
    rmsprop = keras.optimizers.RMSprop()  # ("rm_sprop" in a new process, as Keras names it)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=rmsprop)
    optimizer = model.optimizer
    assert isinstance(optimizer, mixed_precision.LossScaleOptimizer)
    assert optimizer.name == "loss_scale_optimizer" and optimizer.inner_optimizer is rmsprop
    model.compile(loss="mse", optimizer="sgd", auto_scale_loss=False)
    assert type(model.optimizer).__name__ == "SGD"
    mixed_precision.set_global_policy("float32")
    model = keras.Sequential([keras.Input((3,)), L.Dense(2)])
    model.compile("sgd", "mse")
    assert type(model.optimizer).__name__ == "SGD"
    model = keras.Sequential([keras.Input((3,)), L.Dense(2, dtype="mixed_float16")])
    model.compile("sgd", "mse")
    assert type(model.optimizer).__name__ == "SGD"


# TensorFlow 2.21: w = Variable([1.0, 2.0]), LossScaleOptimizer(SGD(0.5), initial_scale=8,
# dynamic_growth_steps=2), apply_gradients of each gradient in turn (eagerly and in a
# tf.function, the same); after each: w, dynamic_scale, step_counter, iterations
SCALED_GRADIENTS = ([np.inf, 1.0], [8.0, 16.0], [np.nan, 4.0], [4.0, -4.0], [2.0, 2.0], [1.0, 1.0])
LOSS_SCALE_STEPS = [
    ([1.0, 2.0], 4.0, 0, 0),  # infinite: skipped, the scale halved, not counted
    ([0.0, 0.0], 4.0, 1, 1),  # [8, 16] / 4 times 0.5
    ([0.0, 0.0], 2.0, 0, 1),  # NaN: skipped
    ([-1.0, 1.0], 2.0, 1, 2),
    ([-1.5, 0.5], 4.0, 0, 3),  # the second finite step in a row doubles the scale
    ([-1.625, 0.375], 4.0, 1, 4),
]


@pytest.mark.parametrize("run", RUNS)
def test_the_loss_scale_skips_halves_and_grows(run):
    w = tt.Variable([1.0, 2.0])
    sgd = keras.optimizers.SGD(0.5)
    optimizer = mixed_precision.LossScaleOptimizer(sgd, initial_scale=8.0, dynamic_growth_steps=2)
    step = RUNS[run](lambda g: optimizer.apply_gradients([(g, w)]))
    for gradient, (weights, scale, counter, iterations) in zip(SCALED_GRADIENTS, LOSS_SCALE_STEPS):
        step(tt.constant(gradient, tt.float32))
        np.testing.assert_array_equal(w.numpy(), weights)
        assert float(optimizer.dynamic_scale.numpy()) == scale
        assert int(optimizer.step_counter.numpy()) == counter
        assert int(optimizer.iterations.numpy()) == int(sgd.iterations.numpy()) == iterations


# TensorFlow 2.21: the same with Adam(0.5), Nadam(0.5) and RMSprop(0.5) (the update after
# each unscaled gradient, the skipped steps changing no slot); w after the six steps
ADAPTIVE = {
    "Adam": [-0.8794509, 1.0415533],
    "Nadam": [-0.2706423, 1.4759498],
    "RMSprop": [-2.4410646, 0.67951673],
}


@pytest.mark.parametrize("name", ADAPTIVE)
@pytest.mark.parametrize("run", ["c", "interpreter"])
def test_a_skipped_step_leaves_the_slots_of_a_compiled_update(name, run):
    w = tt.Variable([1.0, 2.0])
    inner = getattr(keras.optimizers, name)(0.5)
    optimizer = mixed_precision.LossScaleOptimizer(inner, initial_scale=8.0, dynamic_growth_steps=2)
    step = RUNS[run](lambda g: optimizer.apply_gradients([(g, w)]))
    for gradient in SCALED_GRADIENTS:
        step(tt.constant(gradient, tt.float32))
    np.testing.assert_allclose(w.numpy(), ADAPTIVE[name], rtol=1e-6)
    assert float(optimizer.dynamic_scale.numpy()) == 4.0 and int(optimizer.iterations) == 4


def test_the_loss_scale_optimizers_variables_config_and_rate():
    """TensorFlow 2.21, after the steps above: the variables' paths
    ['loss_scale_optimizer/iteration', 'loss_scale_optimizer/learning_rate',
    'loss_scale_optimizer/step_counter', 'loss_scale_optimizer/dynamic_scale',
    'sgd/iteration', 'sgd/learning_rate'], step_counter int64; learning_rate 0.5, and
    setting it to 0.25 sets SGD's; get_config as below; scale_loss(3.0) 12.0 (scale 4),
    of a float16 loss float16; Keras's ValueErrors for dynamic=False and clipnorm."""
    w = tt.Variable([1.0, 2.0])
    optimizer = mixed_precision.LossScaleOptimizer(
        keras.optimizers.SGD(0.5), initial_scale=8.0, dynamic_growth_steps=2, name="lso"
    )
    optimizer.apply_gradients([(tt.constant([np.inf, 1.0]), w)])
    assert [v.path for v in optimizer.variables] == [
        "lso/iteration",
        "lso/learning_rate",
        "lso/step_counter",
        "lso/dynamic_scale",
        f"{optimizer.inner_optimizer.name}/iteration",
        f"{optimizer.inner_optimizer.name}/learning_rate",
    ]
    assert optimizer.step_counter.dtype == tt.int64
    assert float(optimizer.learning_rate.numpy()) == 0.5
    optimizer.learning_rate = 0.25
    assert float(optimizer.inner_optimizer.learning_rate.numpy()) == 0.25
    config = optimizer.get_config()
    assert (config["name"], config["initial_scale"], config["dynamic_growth_steps"]) == (
        "lso",
        8.0,
        2,
    )
    assert config["inner_optimizer"]["class_name"] == "SGD"
    assert config["inner_optimizer"]["config"]["learning_rate"] == 0.25
    copy = mixed_precision.LossScaleOptimizer.from_config(config)
    assert type(copy.inner_optimizer).__name__ == "SGD" and copy.initial_scale == 8.0
    assert float(optimizer.scale_loss(tt.constant(3.0))) == 12.0
    assert optimizer.scale_loss(tt.constant(2.0, tt.float16)).dtype == tt.float16
    with pytest.raises(ValueError, match="no longer supports `dynamic=False`"):
        mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), clipnorm=1.0)


# TensorFlow 2.21 under mixed_float16, numpy's default_rng(0): x normal (8, 3), y normal
# (8, 1), k1 = normal (3, 4) * 0.5, k2 = normal (4, 1) * 0.5, in that order; Sequential
# [Input((3,)), Dense(4, relu), Dense(1), Activation("linear", dtype="float32")] with
# set_weights([k1, 0.1 * ones(4), k2, zeros(1)]), compile(SGD(0.1), "mse"), fit(x, y,
# batch_size=4, epochs=2, shuffle=False): the epochs' losses, the scale, iterations and
# step_counter after it, and the second Dense's kernel; the same compiled with
# LossScaleOptimizer(SGD(0.1), initial_scale=2**30), whose every step overflows float16;
# and train_on_batch on the first four samples three times
FIT_LOSSES = [0.897146, 0.468808]
FIT_KERNEL = [0.06175, -0.12435, 0.70236, 0.8279]
OVERFLOWING_LOSSES = [1.136213, 1.136213]
TRAIN_ON_BATCH = [0.91954, 0.537305, 0.400832]


def _fit_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8, 1)).astype(np.float32)
    k1 = rng.normal(size=(3, 4)).astype(np.float32) * 0.5
    k2 = rng.normal(size=(4, 1)).astype(np.float32) * 0.5
    return x, y, [k1, np.full(4, 0.1, np.float32), k2, np.zeros(1, np.float32)]


def _mixed_model(weights):
    model = keras.Sequential(
        [
            keras.Input((3,)),
            L.Dense(4, activation="relu"),
            L.Dense(1),
            L.Activation("linear", dtype="float32"),
        ]
    )
    model.set_weights(weights)
    return model


STEP_RUNS = {"c": {}, "interpreter": {"jit_compile": False}, "eager": {"run_eagerly": True}}


@pytest.mark.parametrize("run", STEP_RUNS)
def test_fit_scales_the_loss_as_keras_does(run):
    mixed_precision.set_global_policy("mixed_float16")
    x, y, weights = _fit_data()
    model = _mixed_model(weights)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", **STEP_RUNS[run])
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], FIT_LOSSES, rtol=1e-3)
    optimizer = model.optimizer
    assert float(optimizer.dynamic_scale.numpy()) == 2.0**15
    assert int(optimizer.iterations) == 4 and int(optimizer.step_counter) == 4
    np.testing.assert_allclose(model.get_weights()[2].ravel(), FIT_KERNEL, atol=1e-4)
    assert model.predict(x[:2], verbose=0).dtype == np.float32
    assert model.layers[0](x[:2]).dtype == tt.float16

    model = _mixed_model(weights)
    big = mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=2.0**30)
    model.compile(optimizer=big, loss="mse", **STEP_RUNS[run])
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], OVERFLOWING_LOSSES, rtol=1e-5)
    assert float(big.dynamic_scale.numpy()) == 2.0**26 and int(big.iterations) == 0
    for got, expected in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(got, expected)  # every step skipped

    model = _mixed_model(weights)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", **STEP_RUNS[run])
    losses = [model.train_on_batch(x[:4], y[:4]) for _ in range(3)]
    np.testing.assert_allclose(losses, TRAIN_ON_BATCH, rtol=1e-3)
    assert int(model.optimizer.iterations) == 3


def test_a_mixed_model_is_saved_with_the_optimizer_compile_was_given(tmp_path):
    """TensorFlow 2.21: a mixed_float16 Sequential [Input, Dense(2), Activation("softmax",
    dtype="float32")] compiled with Adam(0.01), fitted and saved: the file's config gives
    the Dense layer the policy entry of "mixed_float16", the Activation "float32", and its
    compile config the optimizer Adam (compile's LossScaleOptimizer is not written)."""
    mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential(
        [keras.Input((3,)), L.Dense(2), L.Activation("softmax", dtype="float32")]
    )
    model.compile(keras.optimizers.Adam(0.01), "mse")
    x = np.ones((4, 3), np.float32)
    model.fit(x, np.zeros((4, 2), np.float32), verbose=0)
    path = tmp_path / "mixed.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    layers = [entry for entry in config["config"]["layers"] if entry["class_name"] != "InputLayer"]
    policies = [entry["config"]["dtype"]["config"]["name"] for entry in layers]
    assert policies == ["mixed_float16", "float32"]
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"


def test_the_summary_counts_the_loss_scale_optimizers_variables(capsys):
    """TensorFlow 2.21: a mixed_float16 Sequential [Input((3,)), Dense(2)] compiled with
    Adam(0.01) and fitted one step: summary() printed "Optimizer params: 22 (100.00 B)"
    (the wrapper's iteration, rate, step_counter and dynamic_scale, then Adam's)."""
    mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential([keras.Input((3,)), L.Dense(2)])
    model.compile(keras.optimizers.Adam(0.01), "mse")
    model.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), verbose=0)
    model.summary()
    assert "Optimizer params: 22 (100.00 B)" in capsys.readouterr().out


def test_set_floatx_is_the_dtype_of_layers_inputs_and_metrics_made_after_it():
    """TensorFlow 2.21 (Keras 3), the neural ODE held-out program's first line: after
    `set_floatx("float64")` a Dense layer's kernel and output, an Input and a Mean metric are
    float64 (float64 inputs given, no cast); Keras makes its global policy from floatx when
    a layer first asks for it and keeps it, so `set_floatx("float32")` afterwards still
    gives float64 layers; "float8" is Keras's ValueError."""
    saved_policy, saved_floatx = mixed_precision._global["policy"], keras.backend.floatx()
    try:
        mixed_precision._global["policy"] = None  # as in a new process
        keras.backend.set_floatx("float64")
        assert keras.backend.floatx() == "float64"
        dense = keras.layers.Dense(2, kernel_initializer="ones")
        out = dense(np.full((1, 3), 0.1))
        assert dense.kernel.dtype == tt.float64 and out.dtype == tt.float64
        np.testing.assert_array_equal(out.numpy(), [[0.1 + 0.1 + 0.1] * 2])  # not 0.3000000119
        assert keras.Input((3,)).dtype == "float64"
        assert keras.metrics.Mean().dtype == tt.float64
        keras.backend.set_floatx("float32")
        assert keras.layers.Dense(2).dtype == tt.float64
        with pytest.raises(ValueError, match="Unknown `floatx` value: float8"):
            keras.backend.set_floatx("float8")
    finally:
        mixed_precision._global["policy"] = saved_policy
        keras.backend.set_floatx(saved_floatx)


@pytest.mark.parametrize("module", [autocast, loss_scale_optimizer, mixed_precision])
def test_the_modules_examples_run(module):
    result = doctest.testmod(module, extraglobs={"tt": tt, "np": np})
    assert result.failed == 0 and result.attempted > 0


def test_a_mixed_model_saved_and_loaded_keeps_its_policies(tmp_path):
    """Keras 3.15 on TF 2.21 (the same program): a mixed_float16 Sequential with a float32
    softmax saved after a fit loads, under the float32 global policy, with the layers'
    policies ['mixed_float16', 'mixed_float16', 'float32'], float32 predictions equal to the
    original's, and its compile config's Adam (not the wrapper); the wrapper is also
    keras.optimizers.LossScaleOptimizer."""
    mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential(
        [
            keras.Input((3,)),
            L.Dense(4, activation="relu"),
            L.Dense(2),
            L.Activation("softmax", dtype="float32"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    model.fit(x, np.arange(8) % 2, epochs=1, verbose=0)
    model.save(tmp_path / "mixed.keras")
    mixed_precision.set_global_policy("float32")
    loaded = keras.models.load_model(tmp_path / "mixed.keras")
    assert [layer.dtype_policy.name for layer in loaded.layers] == [
        "mixed_float16",
        "mixed_float16",
        "float32",
    ]
    predicted = loaded.predict(x, verbose=0)
    assert predicted.dtype == np.float32
    np.testing.assert_array_equal(predicted, model.predict(x, verbose=0))
    assert type(loaded.optimizer).__name__ == "Adam"
    assert keras.optimizers.LossScaleOptimizer is mixed_precision.LossScaleOptimizer
