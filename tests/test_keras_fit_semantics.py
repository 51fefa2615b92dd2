"""Where `fit` and `evaluate` could silently disagree with Keras 3: the names of clashing
metrics, `steps_per_epoch` on arrays, class weights, and the order of returned lists.

Each expected number is the output of the same program run by Keras 3.15 on TensorFlow 2.21.
"""

import warnings

import numpy as np
import pytest

import tracer as tt
from tracer.keras import data_adapter

keras = tt.keras


def _logistic():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
    model.set_weights([np.array([[1.0], [-0.5]], np.float32), np.zeros(1, np.float32)])
    return model


def test_clashing_metric_names_are_renamed_as_keras_does():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2)
    y = np.array([[0], [1], [1], [0], [1], [0]], np.float32)
    weights = np.array([1, 0, 0, 1, 1, 1], np.float32)
    model = _logistic()
    model.compile(
        optimizer="sgd",
        loss="binary_crossentropy",
        metrics=[
            "accuracy",
            "mse",
            "mse",
            keras.metrics.Precision(thresholds=0.3, name="precision"),
            keras.metrics.Precision(thresholds=0.7, name="precision"),
        ],
        weighted_metrics=["accuracy"],
    )
    logs = model.evaluate(x, y, sample_weight=weights, verbose=0, return_dict=True)
    values = model.evaluate(x, y, sample_weight=weights, verbose=0)
    # Keras 3.15 on TensorFlow 2.21's outputs for this program. (The list holds a value twice
    # where two metrics share a name; Keras lists the others' values after, sorted by name.)
    keras_logs = {
        "loss": 0.4339207708835602,
        "accuracy": 0.5,
        "mse": 0.2648085057735443,
        "mse_1": 0.2648085057735443,
        "precision": 0.5,
        "precision_1": 0.0,
        "weighted_accuracy": 0.75,
    }
    keras_values = [0.43392077, 0.5, 0.26480851, 0.26480851, 0.5, 0.5, 0.5, 0.26480851, 0.0]
    keras_values.append(0.75)
    assert logs.keys() == keras_logs.keys()
    np.testing.assert_allclose([logs[k] for k in keras_logs], list(keras_logs.values()), 1e-5)
    np.testing.assert_allclose(values, keras_values, rtol=1e-5)


def test_steps_per_epoch_on_arrays_goes_on_where_the_last_epoch_stopped():
    x = np.zeros((10, 1), np.float32)
    y = np.arange(10, dtype=np.float32).reshape(10, 1)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    with pytest.warns(UserWarning, match="Your input ran out of data"):
        history = model.fit(
            x, y, batch_size=2, steps_per_epoch=3, epochs=3, shuffle=False, verbose=0
        )
    # Keras 3.15 on TensorFlow 2.21's outputs for this program: the second epoch takes the
    # last two batches only (and warns that the input ran out), the third starts a new pass.
    np.testing.assert_allclose(history.history["loss"], [9.1667, 57.5, 9.1667], rtol=1e-4)


def test_steps_per_epoch_on_a_dataset_of_known_length_starts_a_new_pass_at_its_end():
    x = np.zeros((10, 1), np.float32)
    y = np.arange(10, dtype=np.float32).reshape(10, 1)
    dataset = tt.data.Dataset.from_tensor_slices((x, y)).batch(2)  # five batches

    def fit(data, steps_per_epoch):
        model = keras.Sequential(
            [keras.Input((1,)), keras.layers.Dense(1, kernel_initializer="zeros")]
        )
        model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = model.fit(data, steps_per_epoch=steps_per_epoch, epochs=3, verbose=0)
        ran_out = sum("ran out of data" in str(w.message) for w in caught)
        return history.history["loss"], int(model.optimizer.iterations.numpy()), ran_out

    # Keras 3.15 on TensorFlow 2.21's outputs for this program: four batches used up exactly
    # by two epochs start again for the third, without a warning; five batches in epochs of
    # three give a second epoch of two, with a warning, and a third on a new pass.
    losses, iterations, ran_out = fit(dataset.take(4), 2)
    np.testing.assert_allclose(losses, [3.5, 31.5, 3.5], rtol=1e-6)
    assert (iterations, ran_out) == (6, 0)
    losses, iterations, ran_out = fit(dataset, 3)
    np.testing.assert_allclose(losses, [9.166666984558105, 57.5, 9.166666984558105], rtol=1e-6)
    assert (iterations, ran_out) == (8, 1)


def test_fit_on_a_dataset_warns_that_shuffle_is_ignored_as_keras_3_15_does():
    dataset = tt.data.Dataset.from_tensor_slices((np.zeros((4, 1)), np.zeros((4, 1)))).batch(2)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")

    def messages(run):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
        return [str(w.message)[:30] for w in caught]

    # What Keras 3.15 on TensorFlow 2.21 warns: fit only, and only where shuffle is truthy
    ignored = "`shuffle=True` was passed, but"
    assert messages(lambda: model.fit(dataset, validation_data=dataset, verbose=0)) == [ignored]
    assert messages(lambda: model.fit(dataset, shuffle="batch", verbose=0)) == [ignored]
    assert messages(lambda: model.fit(dataset, shuffle=False, verbose=0)) == []
    assert messages(lambda: (model.evaluate(dataset, verbose=0), model.predict(dataset))) == []


def test_a_shuffled_pass_is_drawn_once_and_shared_by_the_epochs_it_spans():
    y = np.arange(10)
    batches = data_adapter.adapter(np.zeros((10, 1)), y, None, 2, 3, True, "fit")
    with pytest.warns(UserWarning, match="ran out of data"):  # the second epoch's
        epochs = [[b[1].tolist() for b in batches.batches()] for _ in range(3)]
    assert [len(e) for e in epochs] == [3, 2, 3]
    first_pass = sorted(v for batch in epochs[0] + epochs[1] for v in batch)
    assert first_pass == list(range(10))  # one permutation, each sample once


def test_class_weights_round_labels_default_to_one_and_exclude_sample_weights():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2)
    soft = np.array([[0.1], [0.9], [0.8], [0.2], [0.6], [0.0]], np.float32)

    def fit(**weights):
        model = _logistic()
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss="binary_crossentropy")
        history = model.fit(x, soft, batch_size=6, epochs=2, shuffle=False, verbose=0, **weights)
        return history.history["loss"]

    # Keras 3.15 on TensorFlow 2.21's outputs for this program (soft labels are rounded).
    keras_losses = [1.5043182373046875, 1.4308162927627563]
    np.testing.assert_allclose(fit(class_weight={0: 1.0, 1: 3.0}), keras_losses, rtol=1e-5)
    np.testing.assert_allclose(fit(class_weight={1: 3.0}), keras_losses, rtol=1e-5)
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        fit(class_weight={0: 1.0, 1: 3.0}, sample_weight=np.ones(6, np.float32))


def test_class_weights_weigh_each_element_of_a_datasets_segmentation_targets():
    # Keras weighs a tf.data dataset's targets element by element (a map with tf.gather), so
    # per-pixel labels work; arrays of such targets fail in its per-sample conversion.
    x = np.linspace(-1, 1, 36, dtype=np.float32).reshape(2, 3, 3, 2)
    y = np.array([0, 1, 2, 2, 1, 0, 1, 1, 1] * 2).reshape(2, 3, 3, 1).astype(np.int64)
    inputs = keras.Input((3, 3, 2))
    model = keras.Model(inputs, keras.layers.Dense(3)(inputs))
    kernel = np.array([[1.0, -0.5, 0.2], [0.3, 0.8, -1.0]], np.float32)
    model.set_weights([kernel, np.zeros(3, np.float32)])
    model.compile(
        optimizer=keras.optimizers.SGD(0.5),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    dataset = tt.data.Dataset.from_tensor_slices((x, y)).batch(2)
    history = model.fit(dataset, epochs=2, class_weight={0: 2.0, 1: 3.0, 2: 0.5}, verbose=0)
    # Keras 3.15 on TensorFlow 2.21's outputs for this program.
    keras_losses = [2.706129550933838, 1.9611859321594238]
    np.testing.assert_allclose(history.history["loss"], keras_losses, rtol=1e-5)
    with pytest.raises(TypeError, match="one class per sample"):
        model.fit(x, y, class_weight={0: 2.0, 1: 3.0, 2: 0.5}, verbose=0)


def test_returned_lists_follow_keras_order_for_several_outputs():
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    inputs = keras.Input((2,))
    a = keras.layers.Dense(1, kernel_initializer="ones", name="a")(inputs)
    b = keras.layers.Dense(2, kernel_initializer="ones", name="b")(inputs)
    model = keras.Model(inputs, [a, b])
    model.compile(
        optimizer="sgd",
        loss=["mse", "mae"],
        loss_weights=[1.0, 0.5],
        metrics=[["mae"], ["mse", "mae"]],
    )
    targets = [np.ones((4, 1), np.float32), np.zeros((4, 2), np.float32)]
    # Keras 3.15 on TensorFlow 2.21's outputs for this program:
    # [loss, a_loss, b_loss, a_mae, b_mae, b_mse].
    keras_values = [3.2040817737579346, 2.63265323638916, 1.1428571939468384]
    keras_values += [1.3571428060531616, 1.1428571939468384, 1.6326531171798706]
    np.testing.assert_allclose(model.evaluate(x, targets, verbose=0), keras_values, rtol=1e-5)
    np.testing.assert_allclose(model.test_on_batch(x, targets), keras_values, rtol=1e-5)
    np.testing.assert_allclose(model.train_on_batch(x, targets), keras_values, rtol=1e-5)


def test_fit_warns_that_a_dataset_or_generator_is_not_shuffled_as_keras_does():
    x = np.zeros((4, 1), np.float32)
    dataset = tt.data.Dataset.from_tensor_slices((x, x)).batch(2)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    # Keras 3.15 on TensorFlow 2.21 warned so (fit's shuffle defaults to True).
    with pytest.warns(UserWarning, match=r"`shuffle=True` was passed, but will be ignored since"):
        model.fit(dataset, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(dataset, shuffle=False, verbose=0)
        model.evaluate(dataset, verbose=0)
        model.fit(x, x, verbose=0)

    def generator():
        yield x[:2], x[:2]

    with pytest.warns(UserWarning, match="provided as a generator. The generator is expected"):
        model.fit(generator(), verbose=0)
    # Keras 3.15 refuses class weights for a generator with this message
    with pytest.raises(ValueError, match="`class_weight` is not supported for Python generator"):
        model.fit(generator(), class_weight={0: 1.0}, verbose=0)


def test_steps_per_epoch_beyond_the_arrays_goes_on_and_warns_as_keras():
    # TF 2.21 printed the epoch losses 2.51896 0.53523 0.48029 0.07024 (3, 1, 3, 1 batches)
    # and Keras's "Your input ran out of data" UserWarning for this fit
    rng = np.random.default_rng(0)
    x = rng.random((200, 4)).astype(np.float32)
    y = x.sum(1).astype(np.float32)
    model = tt.keras.Sequential([tt.keras.Input((4,)), tt.keras.layers.Dense(1)])
    model.set_weights([np.full((4, 1), 0.1, np.float32), np.zeros(1, np.float32)])
    model.compile(tt.keras.optimizers.SGD(0.05), "mse")
    with pytest.warns(UserWarning, match="^Your input ran out of data; interrupting training"):
        history = model.fit(
            x, y, batch_size=64, steps_per_epoch=3, epochs=4, verbose=0, shuffle=False
        )
    np.testing.assert_allclose(
        history.history["loss"], [2.51896, 0.53523, 0.48029, 0.07024], atol=6e-6
    )  # (printed to 5 decimals)
    assert int(model.optimizer.iterations.numpy()) == 8


class _Probe(tt.keras.layers.Layer):
    """Tells which `training` its call got: 2x in training, 1x otherwise, +10 for None."""

    def call(self, inputs, training=None):
        return inputs * (2.0 if training else 1.0) + (10.0 if training is None else 0.0)


class _Outer(tt.keras.Model):
    def __init__(self):
        super().__init__()
        self.probe = _Probe()

    def call(self, inputs):
        return self.probe(inputs)


class _OuterDefault(_Outer):
    def call(self, inputs, training=False):
        return self.probe(inputs)


class _Mixed(tt.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.a, self.b = _Probe(), _Probe()

    def call(self, inputs):
        return self.a(inputs, training=False) + self.b(inputs)


def test_inner_layers_take_the_outer_calls_training_as_keras_3_passes_it_down():
    """Keras 3's call context (the values Keras 3.15 printed): a layer called without
    `training` takes the one given to, or defaulted by, the call it is inside; the SNGP
    tutorial's spectral normalization and Gaussian process layers update in fit so."""
    x = np.ones((1, 1), np.float32)
    for model, expected in ((_Outer(), [11.0, 2.0, 1.0]), (_OuterDefault(), [1.0, 2.0, 1.0])):
        got = [model(x), model(x, training=True), model(x, training=False)]
        assert [float(g[0, 0]) for g in got] == expected
    assert float(_Mixed()(x, training=True)[0, 0]) == 2.0  # (a's False passes on to b)
    assert float(_Probe()(x)[0, 0]) == 11.0


class _Counting(tt.keras.layers.Layer):
    """Counts the calls made in training (an assign, as a covariance accumulates)."""

    def build(self, shape):
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False)
        self.scale = self.add_weight(shape=(), initializer="ones")

    def call(self, inputs, training=None):
        if training:
            self.count.assign_add(1.0)
        return inputs * self.scale


class _WithTraining(tt.keras.Model):
    def __init__(self):
        super().__init__()
        self.inner = _Counting()

    def call(self, inputs, training=False):
        return self.inner(inputs)


class _WithoutTraining(_WithTraining):
    def call(self, inputs):
        return self.inner(inputs)


def test_fit_passes_training_only_to_a_model_whose_call_takes_it():
    """Keras 3's train step calls `model(x, training=True)` where the model's call takes
    `training`, else `model(x)`: a subclassed model without it runs its layers as their
    defaults say (Keras 3.15 left a BatchNormalization's moving mean at 0 so)."""
    data, targets = np.ones((8, 1), np.float32), np.zeros((8, 1), np.float32)
    for model, expected in ((_WithTraining(), 2.0), (_WithoutTraining(), 0.0)):
        model.compile(optimizer=tt.keras.optimizers.SGD(0.0), loss="mse")
        model.fit(data, targets, batch_size=4, epochs=1, verbose=0)
        assert float(model.inner.count.numpy()) == expected


def test_a_train_step_returning_compile_metrics_result_logs_its_metrics_flat():
    """Keras 3's guide's train_step returns {m.name: m.result() for m in self.metrics}, where
    compile_metrics' result is itself a dict: Keras 3 on TF 2.21 flattens it into the logs
    (History has loss and mae); tracer raised a TypeError converting the dict to a float."""

    class Net(tt.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tt.keras.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            x, y = data
            with tt.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    y = x.sum(axis=1, keepdims=True)
    model = Net()
    model(x)
    w, b = (v.numpy() for v in model.dense.weights)  # the first step's predictions' weights
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0).history
    assert sorted(history) == ["loss", "mae"] and len(history["mae"]) == 2
    np.testing.assert_allclose(history["mae"][0], np.abs(x @ w + b - y).mean(), rtol=1e-5)
