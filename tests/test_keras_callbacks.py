"""tt.keras.callbacks and the progress bar, driven as Keras 3's fit drives them, with a small
fake model and hand-written logs. The expected sequences (which epoch stops, which rates)
were checked against Keras 3.15 driving the same logs; the progress bar's expected output is
Keras's own, recorded under a fake clock (tests/data/keras_progbar/README.md)."""

import doctest
import json
import math
import pathlib
import re
import sys
import warnings

import numpy as np
import pytest

import tracer as tt
from tracer.keras import callbacks as cb
from tracer.keras import progbar

DATA = pathlib.Path(__file__).parent / "data" / "keras_progbar"
SCENARIOS = json.loads((DATA / "scenarios.json").read_text())


class FakeModel:
    """What callbacks use of a model: a stop flag, an optimizer, weights, save."""

    def __init__(self, learning_rate=0.1):
        self.stop_training = False
        self.optimizer = tt.optimizers.SGD(learning_rate)
        self.weights = [tt.Variable([0.0, 0.0]), tt.Variable(0.0)]
        self.saved = []

    def get_weights(self):
        return [w.numpy().copy() for w in self.weights]

    def set_weights(self, values):
        for w, value in zip(self.weights, values, strict=True):
            w.assign(value)

    def save(self, filepath, overwrite=False):
        self.saved.append(("model", filepath, overwrite))

    def save_weights(self, filepath, overwrite=False):
        self.saved.append(("weights", filepath, overwrite))


def fit(callbacks, epoch_logs, model=None, batches=1, batch_logs=None):
    """Keras 3's fit loop around the callbacks: epoch `e` sets every weight to `e`, its
    batches get `batch_logs(e, b)` (default: the epoch's logs), its end gets epoch_logs[e];
    returns (model, learning rate seen during each epoch)."""
    model = model or FakeModel()
    callbacks = cb.CallbackList(
        callbacks, add_history=True, model=model, verbose=0, epochs=len(epoch_logs), steps=batches
    )
    model.stop_training = False
    callbacks.on_train_begin()
    rates, logs = [], None
    for epoch, logs in enumerate(epoch_logs):
        callbacks.on_epoch_begin(epoch)
        rates.append(float(model.optimizer.learning_rate))
        model.set_weights([np.full(2, float(epoch)), np.float32(epoch)])
        for batch in range(batches):
            callbacks.on_train_batch_begin(batch)
            callbacks.on_train_batch_end(batch, batch_logs(epoch, batch) if batch_logs else logs)
            if model.stop_training:
                break
        callbacks.on_epoch_end(epoch, dict(logs))
        if model.stop_training:
            break
    callbacks.on_train_end(logs)
    return model, rates


def val_losses(*values):
    return [{"loss": v, "val_loss": v} for v in values]


# --- History and CallbackList -----------------------------------------------------------------


def test_history_records_each_epoch_and_is_the_models_history():
    model, _ = fit([], [{"loss": 0.5, "val_loss": 0.7}, {"loss": 0.25, "val_loss": 0.6}])
    assert model.history.history == {"loss": [0.5, 0.25], "val_loss": [0.7, 0.6]}
    assert model.history.epoch == [0, 1]
    assert model.history.params == {"verbose": 0, "epochs": 2, "steps": 1}


def test_callback_list_order_defaults_and_logs():
    calls = []

    class Record(cb.Callback):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def on_epoch_end(self, epoch, logs=None):
            calls.append((self.name, epoch, list(logs.items())))

    first, second, history = Record("a"), Record("b"), cb.History()
    model = FakeModel()
    callbacks = cb.CallbackList(
        [first, [second, history]], add_history=True, add_progbar=True, model=model, verbose=0,
        epochs=1, steps=1,
    )  # fmt: skip
    # the user's History is kept (not a second one), the ProgbarLogger comes last
    assert callbacks.callbacks[:3] == [first, second, history]
    assert isinstance(callbacks.callbacks[3], cb.ProgbarLogger)
    assert len(callbacks.callbacks) == 4
    assert model.history is history and first.model is model
    assert first.params == {"verbose": 0, "epochs": 1, "steps": 1}
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    callbacks.on_epoch_end(0, {"val_loss": tt.constant(0.5), "loss": np.float32(2.0), "x": "s"})
    # keys sorted, tensors and numpy scalars as Python floats, in the order the list was given
    expected = [("loss", 2.0), ("val_loss", 0.5), ("x", "s")]
    assert calls == [("a", 0, expected), ("b", 0, expected)]
    assert type(calls[0][2][1][1]) is float


def test_nested_logs_are_flattened_and_batch_hooks_reach_the_old_names():
    seen = []

    class Old(cb.Callback):
        def on_batch_begin(self, batch, logs=None):
            seen.append(("begin", batch))

        def on_batch_end(self, batch, logs=None):
            seen.append(("end", batch, logs))

    callbacks = cb.CallbackList([Old()])
    callbacks.on_train_batch_begin(3)
    callbacks.on_train_batch_end(3, {"out": {"b": 1, "a": 2}})
    assert seen == [("begin", 3), ("end", 3, {"a": 2.0, "b": 1.0})]


def test_lambda_callback_calls_the_given_functions():
    events = []
    callback = cb.LambdaCallback(
        on_train_begin=lambda logs: events.append("train_begin"),
        on_epoch_end=lambda epoch, logs: events.append(("epoch_end", epoch, logs["loss"])),
        on_train_batch_end=lambda batch, logs: events.append(("batch", batch)),
        on_test_begin=lambda logs: events.append("test_begin"),
    )
    fit([callback], [{"loss": 1.0}, {"loss": 0.5}])
    cb.CallbackList([callback]).on_test_begin()
    assert events == [
        "train_begin",
        ("batch", 0),
        ("epoch_end", 0, 1.0),
        ("batch", 0),
        ("epoch_end", 1, 0.5),
        "test_begin",
    ]


# --- EarlyStopping -----------------------------------------------------------------------------


def test_early_stopping_stops_after_patience_and_restores_the_best_weights(capsys):
    stopper = cb.EarlyStopping(patience=2, restore_best_weights=True, verbose=1)
    model, _ = fit([stopper], val_losses(1.0, 0.8, 0.9, 0.85, 0.95, 0.7))
    assert stopper.stopped_epoch == 3 and model.history.epoch == [0, 1, 2, 3]
    assert stopper.best_epoch == 1 and stopper.best == 0.8
    np.testing.assert_array_equal(model.get_weights()[0], [1.0, 1.0])  # epoch 1's weights
    assert capsys.readouterr().out == (
        "Epoch 4: early stopping\nRestoring model weights from the end of the best epoch: 2.\n"
    )


def test_early_stopping_min_delta_start_from_epoch_and_max_mode():
    # improvements of less than min_delta do not count; epochs before start_from_epoch are
    # not watched, and the first watched one is the best so far
    stopper = cb.EarlyStopping(
        patience=0, start_from_epoch=2, min_delta=0.1, restore_best_weights=True
    )
    model, _ = fit([stopper], val_losses(1.0, 1.5, 2.0, 1.95, 1.0))
    assert stopper.stopped_epoch == 3 and len(model.history.epoch) == 4
    np.testing.assert_array_equal(model.get_weights()[0], [2.0, 2.0])

    # "accuracy" goes up (mode "auto" by its name)
    stopper = cb.EarlyStopping(monitor="val_accuracy", patience=1)
    logs = [{"val_accuracy": a} for a in (0.5, 0.6, 0.55, 0.58, 0.9)]
    model, _ = fit([stopper], logs)
    assert stopper.stopped_epoch == 2 and model.history.epoch == [0, 1, 2]


def test_early_stopping_with_a_baseline_waits_only_on_values_above_it():
    # as in Keras 3: values that improve on the best but not on the baseline keep the wait
    # running, yet the patience check is reached only by values that do not improve at all
    stopper = cb.EarlyStopping(patience=1, baseline=0.5)
    model, _ = fit([stopper], val_losses(1.0, 0.9, 0.8, 0.7, 0.6))
    assert stopper.stopped_epoch == 0 and len(model.history.epoch) == 5
    stopper = cb.EarlyStopping(patience=1, baseline=0.5)
    model, _ = fit([stopper], val_losses(1.0, 1.0, 1.0))
    assert stopper.stopped_epoch == 1 and len(model.history.epoch) == 2


def test_monitor_warnings_and_errors():
    with pytest.raises(ValueError, match="monitor=val_foo, but it cannot tell whether"):
        fit([cb.EarlyStopping(monitor="val_foo")], val_losses(1.0))
    with pytest.raises(ValueError, match="ReduceLROnPlateau callback received monitor=foo"):
        fit([cb.ReduceLROnPlateau(monitor="foo")], val_losses(1.0))
    with pytest.warns(UserWarning) as record:
        fit([cb.EarlyStopping(monitor="foo", mode="min")], val_losses(1.0))
    assert str(record[0].message) == (
        "Early stopping conditioned on metric `foo` which is not available. "
        "Available metrics are: loss,val_loss"
    )
    with pytest.warns(UserWarning) as record:
        fit([cb.ReduceLROnPlateau(monitor="foo", mode="min")], val_losses(1.0))
    assert str(record[0].message) == (
        "Learning rate reduction is conditioned on metric `foo` which is not available. "
        "Available metrics are: loss,val_loss,learning_rate."
    )
    with pytest.warns(UserWarning, match="EarlyStopping mode 'bogus' is unknown, fallback"):
        stopper = cb.EarlyStopping(mode="bogus")
    assert stopper.mode == "auto"


def test_auto_mode_prefers_the_models_metric_direction():
    class Metric:
        name, _direction = "my_score", "up"

    model = FakeModel()
    model.metrics = [type("Container", (), {"metrics": [Metric()]})()]
    stopper = cb.EarlyStopping(monitor="val_my_score", patience=0)
    fit([stopper], [{"val_my_score": s} for s in (0.1, 0.2, 0.15)], model=model)
    assert stopper.stopped_epoch == 2
    for name, up in [("val_acc", True), ("auc", True), ("val_mae", False), ("loss", False)]:
        stopper = cb.EarlyStopping(monitor=name)
        stopper.set_model(FakeModel())
        stopper._set_monitor_op()
        assert stopper._is_improvement(1.0, 0.5) is up, name


def test_auto_mode_reads_the_direction_of_tracers_own_metrics_whatever_their_names():
    # as the imbalanced-data tutorial names them; the values were printed by TF 2.21
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4)).astype(np.float32)
    y = (x[:, :1] + 0.3 * rng.normal(size=(200, 1)) > 0).astype(np.float32)
    keras = tt.keras

    def run(monitor):
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
        model.set_weights([np.array([[-1.0], [0.5], [0.2], [0.1]], np.float32), np.zeros(1)])
        model.compile(
            optimizer=keras.optimizers.Adam(0.05),
            loss="binary_crossentropy",
            metrics=[
                keras.metrics.AUC(name="prc", curve="PR"),
                keras.metrics.FalseNegatives(name="fn"),
                keras.metrics.MeanSquaredError(name="Brier score"),
            ],
        )
        stopper = cb.EarlyStopping(monitor=monitor, patience=2, restore_best_weights=True)
        history = model.fit(
            x, y, batch_size=50, epochs=15, validation_data=(x[:100], y[:100]),
            shuffle=False, verbose=0, callbacks=[stopper],
        )  # fmt: skip
        return len(history.epoch), stopper.best_epoch, round(float(stopper.best), 5)

    assert run("val_prc") == (15, 14, 0.98208)  # an AUC: up
    assert run("val_Brier score") == (15, 14, 0.10473)  # a mean squared error: down
    with pytest.raises(ValueError, match="monitor=val_fn"):  # a count says nothing
        run("val_fn")
    directions = {
        name: getattr(keras.metrics, name)()._direction
        for name in ("Precision", "Recall", "R2Score", "CosineSimilarity", "Hinge", "Mean")
    }
    assert directions == {
        "Precision": "up",
        "Recall": "up",
        "R2Score": "up",
        "CosineSimilarity": "up",
        "Hinge": "down",
        "Mean": None,
    }


# --- learning rates -------------------------------------------------------------------------


def test_reduce_lr_on_plateau_respects_patience_cooldown_and_min_lr(capsys):
    reducer = cb.ReduceLROnPlateau(factor=0.5, patience=1, cooldown=2, min_lr=0.02, verbose=1)
    model, rates = fit([reducer], val_losses(*[1.0] * 8))
    # the rate is a float32 Variable, as Keras's: 0.1 * 0.5 shows as 0.05000000074505806;
    # at min_lr it stops (epoch 8 would reduce again otherwise)
    after = [float(np.float32(r)) for r in (0.1, 0.05, 0.05, 0.025, 0.025, 0.02, 0.02, 0.02)]
    assert rates[1:] + [float(model.optimizer.learning_rate)] == after
    # the rate of each epoch, as the epoch's logs had it (before that epoch's reduction)
    assert model.history.history["learning_rate"] == rates
    assert capsys.readouterr().out == (
        "\nEpoch 2: ReduceLROnPlateau reducing learning rate to 0.05000000074505806.\n"
        "\nEpoch 4: ReduceLROnPlateau reducing learning rate to 0.02500000037252903.\n"
        "\nEpoch 6: ReduceLROnPlateau reducing learning rate to 0.02.\n"
    )


def test_reduce_lr_on_plateau_min_delta_and_errors():
    reducer = cb.ReduceLROnPlateau(factor=0.5, patience=2, cooldown=1, min_delta=0.01)
    model, rates = fit([reducer], val_losses(1.0, 0.9, 0.895, 0.89, 0.7, 0.7, 0.7, 0.7))
    assert rates == pytest.approx([0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025])
    with pytest.raises(ValueError, match=r"factor >= 1.0. Received factor=1.0"):
        cb.ReduceLROnPlateau(factor=1.0)


def test_learning_rate_scheduler(capsys):
    scheduler = cb.LearningRateScheduler(lambda epoch, lr: lr if epoch == 0 else lr / 2, 1)
    model, rates = fit([scheduler], val_losses(1.0, 1.0, 1.0))
    assert rates == pytest.approx([0.1, 0.05, 0.025])
    assert model.history.history["learning_rate"] == rates
    assert capsys.readouterr().out.splitlines()[1:4:2] == [
        # the float32 rate as Keras's prints it
        "Epoch 1: LearningRateScheduler setting learning rate to 0.10000000149011612.",
        "Epoch 2: LearningRateScheduler setting learning rate to 0.05000000074505806.",
    ]
    # a schedule of the epoch alone; tracer's Variable is assigned, not replaced
    model = FakeModel()
    rate = model.optimizer.learning_rate
    fit([cb.LearningRateScheduler(lambda epoch: 0.5**epoch)], val_losses(1.0, 1.0), model)
    assert model.optimizer.learning_rate is rate and float(rate) == 0.5
    with pytest.raises(ValueError, match="should be a float. Got: 1"):
        fit([cb.LearningRateScheduler(lambda epoch: 1)], val_losses(1.0))


# --- ModelCheckpoint --------------------------------------------------------------------------


def test_model_checkpoint_formats_paths_and_makes_directories(tmp_path, capsys):
    path = str(tmp_path / "ckpt" / "m-{epoch:02d}-{val_loss:.2f}.keras")
    model, _ = fit([cb.ModelCheckpoint(path, verbose=1)], val_losses(0.5, 0.25))
    expected = [str(tmp_path / "ckpt" / name) for name in ("m-01-0.50.keras", "m-02-0.25.keras")]
    assert model.saved == [("model", expected[0], True), ("model", expected[1], True)]
    assert (tmp_path / "ckpt").is_dir()
    assert capsys.readouterr().out == (
        f"\nEpoch 1: saving model to {expected[0]}\n"
        f"\nEpoch 1: finished saving model to {expected[0]}\n"
        f"\nEpoch 2: saving model to {expected[1]}\n"
        f"\nEpoch 2: finished saving model to {expected[1]}\n"
    )
    with pytest.raises(KeyError, match="Failed to format this callback filepath"):
        fit([cb.ModelCheckpoint("{nope}.keras")], val_losses(1.0))


def test_model_checkpoint_best_only(capsys):
    checkpoint = cb.ModelCheckpoint(
        "w{epoch}.weights.h5", save_best_only=True, save_weights_only=True, verbose=1
    )
    model, _ = fit([checkpoint], val_losses(0.5, 0.6, 0.4, 0.4))
    assert [path for _, path, _ in model.saved] == ["w1.weights.h5", "w3.weights.h5"]
    assert {kind for kind, _, _ in model.saved} == {"weights"}
    out = capsys.readouterr().out
    assert (
        "\nEpoch 1: val_loss improved from None to 0.50000, saving model to w1.weights.h5\n" in out
    )
    assert "\nEpoch 2: val_loss did not improve from 0.50000\n" in out
    assert "\nEpoch 4: val_loss did not improve from 0.40000\n" in out
    # initial_value_threshold is the best to beat; mode "max"
    checkpoint = cb.ModelCheckpoint(
        "m{epoch}.keras", "acc", mode="max", save_best_only=True, initial_value_threshold=0.7
    )
    model, _ = fit([checkpoint], [{"acc": a} for a in (0.6, 0.8, 0.75)])
    assert [path for _, path, _ in model.saved] == ["m2.keras"]
    with pytest.warns(UserWarning, match="Can save best model only with val_loss available"):
        model, _ = fit([cb.ModelCheckpoint("m.keras", save_best_only=True)], [{"loss": 1.0}])
    assert len(model.saved) == 1


def test_model_checkpoint_suffix_and_save_freq_errors():
    with pytest.raises(ValueError, match=r"must end in `.weights.h5` \(Keras weights format\)"):
        cb.ModelCheckpoint("a.h5", save_weights_only=True)
    with pytest.raises(ValueError, match=r"must end in `.keras` \(Keras model format\). Recei"):
        cb.ModelCheckpoint("a.weights")
    with pytest.raises(ValueError, match="Unrecognized save_freq: batch"):
        cb.ModelCheckpoint("a.keras", save_freq="batch")
    with pytest.raises(ValueError, match=r"must end in `.keras`"):
        cb.ModelCheckpoint("a.h5")  # Keras 2's format, which tracer does not write


def test_model_checkpoint_save_freq_counts_batches_across_epochs():
    checkpoint = cb.ModelCheckpoint("e{epoch}-b{batch}.keras", save_freq=3)
    model, _ = fit([checkpoint], val_losses(1.0, 1.0, 1.0), batches=4)
    assert [path for _, path, _ in model.saved] == [
        "e1-b3.keras",
        "e2-b2.keras",
        "e3-b1.keras",
        "e3-b4.keras",
    ]


# --- CSVLogger, TerminateOnNaN -----------------------------------------------------------------


def test_csv_logger_file_layout(tmp_path):
    path = tmp_path / "log.csv"
    logs = [{"loss": 0.5, "acc": 0.25}, {"loss": 0.125, "acc": 0.75}]
    fit([cb.CSVLogger(path)], logs)
    # keys sorted, "val_" columns added for a run without validation, rows end in "\r\n"
    assert path.read_bytes() == (
        b"epoch,acc,loss,val_acc,val_loss\r\n0,0.25,0.5,NA,NA\r\n1,0.75,0.125,NA,NA\r\n"
    )
    fit([cb.CSVLogger(path, append=True)], [{"loss": 2.0, "acc": 1.0}])
    assert path.read_bytes().endswith(b"1,0.75,0.125,NA,NA\r\n0,1.0,2.0,NA,NA\r\n")
    assert path.read_bytes().count(b"epoch") == 1


def test_csv_logger_separator_validation_keys_and_lists(tmp_path):
    path = tmp_path / "log.csv"
    fit([cb.CSVLogger(str(path), separator=";")], [{"val_loss": 1.5, "loss": 2.0, "v": [1, 2]}])
    assert path.read_bytes() == b'epoch;loss;v;val_loss\r\n0;2.0;"""[1, 2]""";1.5\r\n'
    fit([cb.CSVLogger(path, append=True)], [{"loss": 1.0}])  # appending to a file, no header
    assert path.read_bytes().splitlines()[-1] == b"0,1.0,NA"


def test_terminate_on_nan(capsys):
    batch_logs = [{"loss": 1.0}, {"loss": 0.5}, {"loss": math.nan}, {"loss": 0.1}]
    terminate = cb.TerminateOnNaN()
    model, _ = fit(
        [terminate], [{"loss": 1.0}] * 3, batches=4, batch_logs=lambda e, b: batch_logs[b]
    )
    assert model.stop_training and model.history.epoch == [0]
    assert capsys.readouterr().out == "Batch 2: Invalid loss, terminating training\n"
    with pytest.raises(
        RuntimeError, match="NaN or Inf loss encountered at batch 0. Loss value: inf"
    ):
        fit([cb.TerminateOnNaN(raise_error=True)], [{"loss": math.inf}], batches=2)


# --- the progress bar --------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progbar, "_now", clock)
    monkeypatch.setattr(progbar, "_dynamic_display", lambda: True)  # as Keras on POSIX
    return clock


def replay(spec, clock):
    """Runs a scenario of scenarios.json on tracer's Progbar or CallbackList."""
    if "progbar" in spec:
        target = progbar.Progbar(**spec["progbar"])
        target._dynamic_display = spec.get("dynamic", True)
    else:
        params = dict(spec["callbacks"])
        add_history = params.pop("add_history", False)
        target = cb.CallbackList(
            add_history=add_history, add_progbar=params["verbose"] != 0, model=FakeModel(), **params
        )
    for step in spec["steps"]:
        if step[0] == "tick":
            clock.now += step[1]
        elif step[0] == "update":
            target.update(step[1], step[2] and [tuple(v) for v in step[2]], finalize=step[3])
        elif step[0] == "add":
            target.add(step[1], [tuple(v) for v in step[2]])
        else:
            getattr(target, step[1])(*([] if step[2] is None else [step[2]]), step[3])


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_progress_output_is_keras_byte_for_byte(name, clock, capsys):
    replay(SCENARIOS[name], clock)
    assert capsys.readouterr().out == recorded(f"{name}.txt")


def recorded(name):
    """A file of Keras's output, its carriage returns kept."""
    with open(DATA / name, encoding="utf-8", newline="") as f:
        return f.read()


def skeleton(text):
    """Keras's progress output with the times masked: the clock (ETA or elapsed), the time
    per step, and the padding and backspaces whose count depends on their widths."""
    text = re.sub(r"\x1b\[1m[\d:]+s?\x1b\[0m", "\x1b[1mT\x1b[0m", text)
    text = re.sub(r" \d+(s|ms|us)/step", " T/step", text)
    text = re.sub(r" - \d+s - ", " - T - ", text)
    text = re.sub(r": -?\d+\.\d+(e[-+]\d+)?", ": V", text)
    return re.sub(r" *\x08+", "<BS>", text).replace(" \n", "\n")


REAL_FIT_KEYS = {"accuracy": 0.5, "loss": 0.7, "mae": 0.4}


def drive_like_keras_fit(verbose, clock, epochs):
    """A 4-step fit with validation, steps after the first one being quicker than the bar's
    redraw interval (as in the recorded run, where Keras drew only the first and the last)."""
    callbacks = cb.CallbackList(
        add_history=True, add_progbar=True, model=FakeModel(), verbose=verbose, epochs=epochs,
        steps=4,
    )  # fmt: skip
    callbacks.on_train_begin()
    for epoch in range(epochs):
        callbacks.on_epoch_begin(epoch)
        for batch in range(4):
            clock.now += 1.0 if batch == 0 else 0.001
            callbacks.on_train_batch_end(batch, REAL_FIT_KEYS)
        callbacks.on_test_begin()
        callbacks.on_test_batch_end(0, REAL_FIT_KEYS)
        callbacks.on_test_end(REAL_FIT_KEYS)
        val = {f"val_{k}": v for k, v in REAL_FIT_KEYS.items()}
        callbacks.on_epoch_end(epoch, {**REAL_FIT_KEYS, **val})
    callbacks.on_train_end()


@pytest.mark.parametrize("verbose, epochs", [(1, 3), (2, 2)])
def test_fit_output_has_the_shape_of_a_real_keras_fit(verbose, epochs, clock, capsys):
    """tests/data/keras_progbar/real_fit_verbose*.txt: Keras 3's model.fit, stdout a pipe."""
    drive_like_keras_fit(verbose, clock, epochs)
    assert skeleton(capsys.readouterr().out) == skeleton(recorded(f"real_fit_verbose{verbose}.txt"))


@pytest.mark.parametrize("what", ["evaluate", "predict"])
def test_evaluate_and_predict_output_has_the_shape_of_real_keras(what, clock, capsys):
    callbacks = cb.CallbackList(add_progbar=True, model=FakeModel(), verbose=1, epochs=1, steps=4)
    hook = "test" if what == "evaluate" else "predict"
    getattr(callbacks, f"on_{hook}_begin")()
    logs = REAL_FIT_KEYS if what == "evaluate" else {"outputs": np.zeros(3)}
    for batch in range(4):
        clock.now += 0.02 if batch == 0 else 0.001
        getattr(callbacks, f"on_{hook}_batch_end")(batch, logs)
    getattr(callbacks, f"on_{hook}_end")(REAL_FIT_KEYS if what == "evaluate" else None)
    assert skeleton(capsys.readouterr().out) == skeleton(recorded(f"real_{what}_verbose1.txt"))


def test_rates_put_into_the_logs_reach_the_progress_line(clock, capsys):
    """The user's callbacks run before the ProgbarLogger, which shows what they added."""
    model = FakeModel()
    callbacks = cb.CallbackList(
        [cb.ReduceLROnPlateau(monitor="loss")], add_progbar=True, model=model, verbose=2,
        epochs=1, steps=1,
    )  # fmt: skip
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    clock.now += 0.25
    callbacks.on_train_batch_end(0, {"loss": 0.5})
    callbacks.on_epoch_end(0, {"loss": 0.5})
    assert (
        capsys.readouterr().out == "1/1 - 0s - 250ms/step - loss: 0.5000 - learning_rate: 0.1000\n"
    )


def test_progbar_argument_checks_and_the_display_rule(monkeypatch):
    with pytest.raises(ValueError, match="at most one of `stateful_metrics`"):
        progbar.Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])
    monkeypatch.setattr(progbar.os, "name", "nt")
    monkeypatch.delenv("PYCHARM_HOSTED", raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert progbar._dynamic_display() is False  # pytest's captured stdout is not a terminal
    monkeypatch.setattr(progbar.os, "name", "posix")
    assert progbar._dynamic_display() is True


@pytest.mark.parametrize("module", [cb, progbar])
def test_docstring_examples(module):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = doctest.testmod(module, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
