"""Keras's training API: `fit`, `evaluate`, `predict` and the `*_on_batch` methods against
hand-written loops with a tape, step by step; Keras 3's logs, return values and summary."""

import contextlib
import importlib.util
import io
import pathlib

import numpy as np
import pytest

import tracer as tt

keras = tt.keras


def _data(samples=40, features=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, features)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def _mlp(seed=1):
    model = keras.Sequential([keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(1)])
    model(np.zeros((1, 3), np.float32))
    rng = np.random.default_rng(seed)
    model.set_weights(
        [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in model.get_weights()]
    )
    return model


def _twin(model):
    """A model of the same layers and weights, for the hand-written loop."""
    twin = _mlp()
    twin.set_weights(model.get_weights())
    return twin


def _hand_loop(model, x, y, batch_size, epochs, learning_rates, order=None, weights=None):
    """Keras's fit written out: SGD on the mean squared error of each batch; returns each
    epoch's loss (the batches' losses weighted by their sizes) and the weights."""
    optimizer = tt.optimizers.SGD(learning_rates[0])
    epoch_losses = []
    for epoch in range(epochs):
        optimizer.learning_rate = learning_rates[epoch]
        rows = np.arange(len(x)) if order is None else order[epoch]
        total, count = 0.0, 0
        for start in range(0, len(x), batch_size):
            batch = rows[start : start + batch_size]
            with tt.GradientTape() as tape:
                squared = tt.square(model(x[batch]) - y[batch])
                per_sample = tt.reduce_mean(squared, axis=-1)
                if weights is not None:
                    per_sample = per_sample * weights[batch]
                loss = tt.reduce_mean(per_sample)
            variables = model.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            total += float(loss) * len(batch)
            count += len(batch)
        epoch_losses.append(total / count)
    return epoch_losses, model.get_weights()


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_takes_the_same_steps_as_the_hand_written_loop(run_eagerly):
    x, y = _data()
    model = _mlp()
    twin = _twin(model)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    losses, weights = _hand_loop(twin, x, y, 16, 3, [0.05] * 3)
    np.testing.assert_allclose(history.history["loss"], losses, rtol=2e-5)
    for got, want in zip(model.get_weights(), weights):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert history.epoch == [0, 1, 2] and history.params["steps"] == 3
    if not run_eagerly:  # one compiled step for the full batches, one generalized for any size
        assert model.train_function.experimental_get_tracing_count() <= 2


def test_shuffled_epochs_follow_numpys_global_seed():
    x, y = _data()
    model = _mlp()
    twin = _twin(model)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    np.random.seed(7)
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    np.random.seed(7)
    order = [np.random.permutation(len(x)) for _ in range(2)]
    losses, weights = _hand_loop(twin, x, y, 16, 2, [0.05] * 2, order=order)
    np.testing.assert_allclose(history.history["loss"], losses, rtol=2e-5)
    np.testing.assert_allclose(model.get_weights()[0], weights[0], rtol=2e-5, atol=1e-6)


def test_a_learning_rate_schedule_reaches_the_compiled_step():
    x, y = _data()
    model = _mlp()
    twin = _twin(model)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    schedule = keras.callbacks.LearningRateScheduler(lambda epoch, rate: 0.1 / (epoch + 1))
    history = model.fit(
        x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, callbacks=[schedule]
    )
    losses, weights = _hand_loop(twin, x, y, 8, 3, [0.1, 0.05, 0.1 / 3])
    np.testing.assert_allclose(history.history["loss"], losses, rtol=2e-5)
    np.testing.assert_allclose(model.get_weights()[2], weights[2], rtol=2e-5, atol=1e-6)
    assert model.train_function.experimental_get_tracing_count() == 1


def test_sample_and_class_weights_weigh_the_loss():
    x, y = _data(32)
    weights = np.linspace(0.5, 2.0, 32).astype(np.float32)
    model = _mlp()
    twin = _twin(model)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    history = model.fit(
        x, y, sample_weight=weights, batch_size=16, epochs=2, shuffle=False, verbose=0
    )
    losses, _ = _hand_loop(twin, x, y, 16, 2, [0.05] * 2, weights=weights)
    np.testing.assert_allclose(history.history["loss"], losses, rtol=2e-5)
    # class weights: each sample weighs its class's weight
    labels = np.arange(32) % 3
    classifier = keras.Sequential([keras.layers.Dense(3)])
    classifier.compile(
        optimizer=keras.optimizers.SGD(0.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    plain = classifier.evaluate(x, labels, batch_size=32, verbose=0)
    class_weight = {0: 1.0, 1: 0.0, 2: 3.0}
    weighted = classifier.fit(
        x, labels, class_weight=class_weight, batch_size=32, verbose=0, shuffle=False
    )
    logits = classifier.predict(x, verbose=0)
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    per_sample = -log_p[np.arange(32), labels]
    expected = np.mean(per_sample * np.array([class_weight[c] for c in labels]))
    np.testing.assert_allclose(weighted.history["loss"][0], expected, rtol=1e-5)
    np.testing.assert_allclose(plain, per_sample.mean(), rtol=1e-5)


def test_validation_logs_evaluate_and_predict():
    x, y = _data(40)
    model = _mlp()
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    history = model.fit(
        x, y, batch_size=10, epochs=2, validation_split=0.25, shuffle=False, verbose=0
    )
    assert list(history.history) == ["loss", "mae", "val_loss", "val_mae"]
    held_out_x, held_out_y = x[30:], y[30:]
    predictions = model.predict(held_out_x, batch_size=4, verbose=0)
    np.testing.assert_allclose(predictions, model(held_out_x).numpy(), rtol=1e-6)
    mse = float(np.mean((predictions - held_out_y) ** 2))
    mae = float(np.mean(np.abs(predictions - held_out_y)))
    np.testing.assert_allclose(history.history["val_loss"][-1], mse, rtol=1e-5)
    np.testing.assert_allclose(history.history["val_mae"][-1], mae, rtol=1e-5)
    loss, mae_value = model.evaluate(held_out_x, held_out_y, batch_size=3, verbose=0)
    np.testing.assert_allclose(
        [loss, mae_value], [mse, mae], rtol=1e-5
    )  # partial batches weigh less
    assert model.evaluate(held_out_x, held_out_y, verbose=0, return_dict=True).keys() == {
        "loss",
        "mae",
    }
    only_loss = _mlp()
    only_loss.compile(optimizer="sgd", loss="mse")
    assert isinstance(only_loss.evaluate(x, y, verbose=0), float)
    with_data = model.fit(
        x[:30], y[:30], validation_data=(held_out_x, held_out_y), epochs=1, verbose=0
    )
    assert "val_loss" in with_data.history


def test_accuracy_resolves_by_shape_and_matches_the_predictions():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 4)).astype(np.float32)
    labels = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5)
    model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = model.fit(x, labels, batch_size=20, epochs=5, verbose=0)
    assert len(history.history["accuracy"]) == 5
    loss, accuracy = model.evaluate(x, labels, verbose=0)
    predicted = model.predict(x, verbose=0).argmax(axis=1)
    assert accuracy == pytest.approx(np.mean(predicted == labels), abs=1e-6)
    assert model.metrics_names == ["loss", "compile_metrics"]


def test_datasets_and_generators_feed_fit_as_arrays_do():
    x, y = _data(32)
    reference = _mlp()
    from_dataset, from_generator = _twin(reference), _twin(reference)
    for model in (reference, from_dataset, from_generator):
        model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    expected = reference.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    dataset = tt.data.Dataset.from_tensor_slices((x, y)).batch(8)
    got = from_dataset.fit(dataset, epochs=2, verbose=0)
    np.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-5)

    def batches():
        while True:
            for start in range(0, 32, 8):
                yield x[start : start + 8], y[start : start + 8]

    got = from_generator.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)
    np.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-5)
    # a batch_size beside a dataset is ignored, as Keras 3 on TF 2.21 ignores it (fit hands
    # its own to the evaluate of a validation dataset)
    with_batch_size = reference.fit(dataset, batch_size=3, epochs=1, verbose=0)
    assert len(with_batch_size.history["loss"]) == 1
    reference.fit(x, y, batch_size=4, validation_data=dataset, epochs=1, verbose=0)
    assert "val_loss" in reference.history.history


def test_on_batch_methods_give_that_batchs_values():
    x, y = _data(16)
    model = _mlp()
    twin = _twin(model)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    before = float(np.mean((twin(x).numpy() - y) ** 2))
    assert model.test_on_batch(x, y)[0] == pytest.approx(before, rel=1e-5)
    loss, _ = model.train_on_batch(x, y)
    assert loss == pytest.approx(before, rel=1e-5)  # the loss before the step
    _, weights = _hand_loop(twin, x, y, 16, 1, [0.1])
    np.testing.assert_allclose(model.get_weights()[0], weights[0], rtol=1e-5, atol=1e-7)
    after = float(np.mean((model(x).numpy() - y) ** 2))
    assert model.train_on_batch(x, y, return_dict=True)["loss"] == pytest.approx(after, rel=1e-5)
    np.testing.assert_allclose(model.predict_on_batch(x), model(x).numpy(), rtol=1e-6)


class _CustomStep(keras.Model):
    """Keras 3's guide to customizing fit: a subclass with its own train_step and trackers."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tt.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tt.reduce_mean(tt.square(y_pred - y))
        variables = self.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


def test_a_subclass_with_its_own_train_step_trains_compiled():
    x, y = _data(32)
    model = _CustomStep()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    history = model.fit(x, y, batch_size=32, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.05 * history.history["loss"][0]
    assert set(history.history) == {"loss", "mae"}
    assert model.train_function.experimental_get_tracing_count() == 1


def test_early_stopping_ends_fit():
    x, y = _data(16)
    model = _mlp()
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")  # the loss never improves
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=2)
    history = model.fit(x, y, epochs=20, verbose=0, callbacks=[stop])
    assert len(history.history["loss"]) == 3


def test_verbose_two_prints_one_line_per_epoch():
    x, y = _data(16)
    model = _mlp()
    model.compile(optimizer="sgd", loss="mse")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.fit(x, y, batch_size=8, epochs=2, verbose=2)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    assert lines[1].startswith("2/2 - ") and " - loss: " in lines[1]


def test_errors_name_what_was_wrong():
    x, y = _data(16)
    model = _mlp()
    with pytest.raises(RuntimeError, match="must be compiled"):
        model.fit(x, y, verbose=0)
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"different numbers of samples: \[15, 16\]"):
        model.fit(x, y[:15], verbose=0)
    with pytest.raises(ValueError, match="unknown optimizer 'sgdd'"):
        model.compile(optimizer="sgdd", loss="mse")
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(x, y, validation_split=1.5, verbose=0)


def test_python_numbers_are_not_data():
    """Keras 3 (TensorFlow 2.21) raised these ValueErrors, naming x whichever part holds
    Python numbers (a list of numbers is a structure of inputs, not an array)."""
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError) as raised:
        model.fit([1, 2, 3], [0.0, 0.0, 1.0], verbose=0)
    assert str(raised.value) == "Unrecognized data type: x=[1, 2, 3] (of type <class 'list'>)"
    with pytest.raises(ValueError) as raised:
        model.fit(np.ones((3, 1)), [0.0, 0.0, 1.0], verbose=0)
    assert str(raised.value) == (
        "Unrecognized data type: x=[[1.]\n [1.]\n [1.]] (of type <class 'numpy.ndarray'>)"
    )
    with pytest.raises(ValueError, match=r"^Unrecognized data type: x=\[1, 2\] "):
        model.predict([1, 2], verbose=0)
    model.fit(np.ones((3, 1)), np.zeros(3), verbose=0)  # arrays are data


# Printed by TensorFlow 2.21's Keras 3 for the same model (`model.summary()`, stdout a pipe).
KERAS_SUMMARY = """\
Model: "sequential_keras"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ a_rather_long_convolution_laye… │ (None, 26, 26, 4)      │            40 │
│ (Conv2D)                        │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ flatten (Flatten)               │ (None, 2704)           │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense (Dense)                   │ (None, 10)             │        27,050 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 27,090 (105.82 KB)
 Trainable params: 27,090 (105.82 KB)
 Non-trainable params: 0 (0.00 B)"""


def test_summary_prints_keras_table():
    model = keras.Sequential(
        [
            keras.layers.Conv2D(
                4, 3, name="a_rather_long_convolution_layer_name_here", input_shape=(28, 28, 1)
            ),
            keras.layers.Flatten(name="flatten"),
            keras.layers.Dense(10, name="dense"),
        ],
        name="sequential_keras",
    )
    texts = []
    model.summary(print_fn=texts.append)
    assert texts == [KERAS_SUMMARY + "\n"]  # Keras gives print_fn the whole text at once
    unbuilt = keras.Sequential([keras.layers.Dense(2, name="d")], name="s")
    texts = []
    unbuilt.summary(print_fn=texts.append)
    assert (
        texts[0].splitlines()[4]
        == "│ d (Dense)                       │ ?                      │   0 (unbuilt) │"
    )


# Printed by TensorFlow 2.21's Keras 3 (stdout a pipe): show_trainable, then line_length=80
# after the first layer is frozen, then a fitted model's Adam parameters (a float32 rate)
KERAS_TRAINABLE = """\
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━┓
┃ Layer (type)                ┃ Output Shape          ┃    Param # ┃ Trai… ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━┩
│ dense (Dense)               │ (None, 16)            │        464 │   Y   │
├─────────────────────────────┼───────────────────────┼────────────┼───────┤
│ dropout (Dropout)           │ (None, 16)            │          0 │   -   │
└─────────────────────────────┴───────────────────────┴────────────┴───────┘"""
KERAS_80 = """\
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                      ┃ Output Shape             ┃       Param # ┃"""


def test_summary_show_trainable_line_length_and_optimizer_params():
    model = keras.Sequential(
        [
            keras.Input((28,)),
            keras.layers.Dense(16, name="dense"),
            keras.layers.Dropout(0.5, name="dropout"),
        ]
    )
    texts = []
    model.summary(show_trainable=True, print_fn=texts.append)
    assert "\n".join(texts[0].splitlines()[1:8]) == KERAS_TRAINABLE
    model.layers[0].trainable = False
    model.summary(line_length=80, print_fn=texts.append)
    assert "\n".join(texts[1].splitlines()[1:3]) == KERAS_80
    assert " Non-trainable params: 464 (1.81 KB)" in texts[1]
    model.layers[0].trainable = True
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 28), np.float32), np.ones((4, 16), np.float32), verbose=0)
    model.summary(print_fn=texts.append)
    assert texts[2].splitlines()[-1] == " Optimizer params: 930 (3.64 KB)"
    assert texts[2].splitlines()[-4] == " Total params: 1,394 (5.45 KB)"


def test_the_keras_fit_example_trains_exports_and_its_c_program_agrees(tmp_path):
    """examples/keras_fit/keras_fit.py: fit on a tt.data pipeline with callbacks, then the
    model's forward pass and gradient in standalone C; main() checks the C program's
    numbers against tracer's."""
    path = (
        pathlib.Path(__file__).resolve().parent.parent / "examples" / "keras_fit" / "keras_fit.py"
    )
    spec = importlib.util.spec_from_file_location("keras_fit_example", path)
    example = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        spec.loader.exec_module(example)
        accuracy = example.main(str(tmp_path))
    assert accuracy > 0.9
    assert "the C program agrees with tracer" in printed.getvalue()
    log = (tmp_path / "training.csv").read_text().splitlines()
    assert log[0].startswith("epoch,") and len(log) > 5


def test_build_makes_a_sequentials_weights_for_an_input_shape():
    model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(2)])
    model.build((None, 3))
    assert [w.shape for w in model.get_weights()] == [(3, 4), (4,), (4, 2), (2,)]
    assert model.layers[1]._output_shape == (None, 2)
    x = np.ones((5, 3), np.float32)
    kernel, bias, kernel2, bias2 = model.get_weights()
    np.testing.assert_allclose(model(x).numpy(), (x @ kernel + bias) @ kernel2 + bias2, rtol=1e-6)


class _TrackedRegression(keras.Model):
    """Keras's "customizing what happens in fit" guide: a functional model made through a
    subclass that overrides train_step and test_step, with its own metrics."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    def train_step(self, data):
        x, y = data
        with tt.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = keras.losses.MeanSquaredError()(y, y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return self._tracked(loss, y, y_pred)

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        return self._tracked(keras.losses.MeanSquaredError()(y, y_pred), y, y_pred)

    def _tracked(self, loss, y, y_pred):
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


class _Deeper(_TrackedRegression):
    """A subclass of that subclass: its Model base, two classes up, becomes functional."""


@pytest.mark.parametrize("cls", [_TrackedRegression, _Deeper])
def test_a_subclass_given_inputs_and_outputs_is_functional_with_its_own_train_step(cls):
    """What TensorFlow 2.21's Keras printed for this program (the guide's model, weights
    from numpy's default_rng(0), Adam(0.01), three epochs of 1,000 rows in batches of 32)."""
    inputs = keras.Input(shape=(32,))
    model = cls(inputs, keras.layers.Dense(1)(inputs))
    assert isinstance(model, tt.keras.Model) and len(model.layers) == 2
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(0, 0.1, w.shape).astype(np.float32) for w in model.weights])
    model.compile(optimizer=keras.optimizers.Adam(0.01))
    x = rng.random((1000, 32)).astype(np.float32)
    y = rng.random((1000, 1)).astype(np.float32)
    history = model.fit(x, y, epochs=3, verbose=0, shuffle=False).history
    np.testing.assert_allclose(history["loss"], [0.17317, 0.09867, 0.0961], atol=6e-6)
    np.testing.assert_allclose(history["mae"], [0.34166, 0.26576, 0.26492], atol=6e-6)
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), [0.0906936, 0.256542], rtol=1e-5)


def test_a_sequential_of_an_input_of_any_length_builds_as_layers_are_added():
    # TF 2.21 printed these rows and totals for the Keras guide's model ("Working with RNNs")
    model = keras.Sequential()
    model.add(keras.Input((None,), dtype="int32"))
    model.add(keras.layers.Embedding(input_dim=1000, output_dim=64, name="embedding"))
    model.add(keras.layers.LSTM(128, name="lstm"))
    assert model.output_shape == (None, 128)
    model.add(keras.layers.Dense(10, name="dense"))
    printed = []
    model.summary(print_fn=printed.append)  # the whole table in one call, as Keras 3's
    lines = "".join(printed).splitlines()
    assert lines[4:9:2] == [
        "│ embedding (Embedding)           │ (None, None, 64)       │        64,000 │",
        "│ lstm (LSTM)                     │ (None, 128)            │        98,816 │",
        "│ dense (Dense)                   │ (None, 10)             │         1,290 │",
    ]
    assert lines[10] == " Total params: 164,106 (641.04 KB)"
    ids = np.array([[3, 5, 0], [7, 0, 0]], np.int32)
    assert model(ids).shape == (2, 10)
    assert model.pop().name == "dense" and model.output_shape == (None, 128)


def test_a_sequentials_builds_take_functional_names_as_kerass():
    # Keras's Sequential builds an unnamed Functional each time it builds, so a functional
    # model made after them is numbered after them: TF 2.21 printed functional_3, then
    # functional_5, for this program
    keras.backend.clear_session()
    keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])  # built once
    growing = keras.Sequential()
    growing.add(keras.Input((None,)))
    growing.add(keras.layers.Embedding(5, 2))  # built
    growing.add(keras.layers.Dense(1))  # built again
    inputs = keras.Input((3,))
    assert keras.Model(inputs, keras.layers.Dense(1)(inputs)).name == "functional_3"
    on_call = keras.Sequential([keras.layers.Dense(2)])
    on_call(np.ones((1, 3), np.float32))  # built on its first call
    assert keras.Model(inputs, keras.layers.Dense(1)(inputs)).name == "functional_5"


class _UntrackedStep(keras.Model):
    """The text-generation tutorial's CustomTraining: a train_step that returns its loss
    without updating the compiled loss metric."""

    def __init__(self, key="loss"):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.key = key

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tt.GradientTape() as tape:
            loss = self.loss(y, self(x))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {self.key: loss}

    def test_step(self, data):
        x, y = data
        return {"loss": self.loss(y, self(x)), "other": 1.0}


@pytest.mark.parametrize(
    "key, expected",
    # printed by TF 2.21 (Keras 3.15): logs that name exactly the metrics give way to the
    # metrics' results (the loss metric, never updated: 0), others are the last step's
    [("loss", {"loss": [0.0, 0.0]}), ("mine", {"mine": [2.94138, 2.61203]})],
)
def test_epoch_logs_are_the_metrics_results_where_the_step_names_just_them(key, expected):
    x = np.arange(12, dtype=np.float32).reshape(6, 2) / 10
    y = 2 * x.sum(1, keepdims=True)
    model = _UntrackedStep(key)
    model(x)
    model.set_weights([np.ones((2, 1), np.float32), np.zeros(1, np.float32)])
    model.compile("sgd", keras.losses.MeanSquaredError())
    history = model.fit(
        x, y, batch_size=3, epochs=2, verbose=0, shuffle=False, validation_data=(x, y)
    )
    expected = {**expected, "val_loss": [2.65831, 2.36086], "val_other": [1.0, 1.0]}
    assert history.history.keys() == expected.keys()
    for name, values in expected.items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-5, atol=1e-6)
    evaluated = model.evaluate(x, y, verbose=0, return_dict=True)
    np.testing.assert_allclose(
        [evaluated["loss"], evaluated["other"]], [1.30052149, 1.0], rtol=1e-5
    )


class _First(keras.layers.Layer):
    def call(self, x):
        return x[:, 0]


def test_summary_writes_one_axis_and_several_outputs_as_keras_does():
    """Printed by TF 2.21 (Keras 3.15): `(None)` for one axis, several outputs of a layer in
    the tuple they came in."""
    keras.backend.clear_session()  # the GRU named `gru`, whatever ran before in the process

    class Stateful(keras.Model):
        def __init__(self):
            super().__init__()
            self.gru = keras.layers.GRU(4, return_sequences=True, return_state=True)

        def call(self, x):
            return self.gru(x)

    model = Stateful()
    model(np.zeros((8, 24, 3), np.float32))
    lines = []
    model.summary(print_fn=lines.append)
    assert "│ gru (GRU)                       │ ((8, 24, 4), (8, 4))   │" in "\n".join(lines)
    model = keras.Sequential([keras.Input((3,)), _First(name="first")])
    lines = []
    model.summary(print_fn=lines.append)
    assert "│ first (_First)                  │ (None)                 │" in "\n".join(lines)
