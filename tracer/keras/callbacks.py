"""`tt.keras.callbacks`: Keras 3's callbacks, which `Model.fit`, `evaluate` and `predict`
call at fixed points of their loops, and which a hand-written training loop can call too.

>>> history = History()
>>> callbacks = CallbackList([history], add_progbar=True, verbose=0, epochs=2, steps=1)
>>> callbacks.on_train_begin()
>>> for epoch in range(2):
...     callbacks.on_epoch_begin(epoch)
...     callbacks.on_train_batch_begin(0)
...     callbacks.on_train_batch_end(0, {"loss": 1.0 / (epoch + 1)})
...     callbacks.on_epoch_end(epoch, {"loss": 1.0 / (epoch + 1)})
>>> callbacks.on_train_end()
>>> history.history, history.epoch
({'loss': [1.0, 0.5]}, [0, 1])

The behaviour, messages and warnings are Keras 3's (see docs/keras_callbacks.md). A
callback reaches the model through `self.model`: `stop_training`, `optimizer.learning_rate`
(a Variable), `get_weights`/`set_weights`, `save`/`save_weights`; nothing else is assumed.
"""

import collections
import csv
import math
import operator
import os
import warnings

import numpy as np

from tracer.keras.progbar import Progbar

__all__ = [
    "CSVLogger",
    "Callback",
    "CallbackList",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "ProgbarLogger",
    "ReduceLROnPlateau",
    "TerminateOnNaN",
]


class Callback:
    """The base class: every hook does nothing, so a subclass overrides only the ones it needs.

    `params` is what the loop tells its callbacks ({"verbose", "epochs", "steps"}) and
    `model` the model it runs. The `logs` of a hook are a dict of Python floats: the running
    means of the loss and metrics after a batch, the epoch's results (with "val_"-prefixed
    validation results) at an epoch's end, the final results at the end of a test or train
    run; predict's batch logs hold {"outputs": ...}. Begin hooks get no logs.

    >>> class Count(Callback):
    ...     def on_epoch_end(self, epoch, logs=None):
    ...         print(f"epoch {epoch}: loss {logs['loss']}")
    >>> Count().on_epoch_end(0, {"loss": 0.5})
    epoch 0: loss 0.5
    """

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """The older name of on_train_batch_begin, which calls it."""

    def on_batch_end(self, batch, logs=None):
        """The older name of on_train_batch_end, which calls it."""

    def on_epoch_begin(self, epoch, logs=None):
        """Before epoch `epoch` (0-based) of fit."""

    def on_epoch_end(self, epoch, logs=None):
        """After epoch `epoch` of fit and its validation; `logs` are the epoch's results."""

    def on_train_batch_begin(self, batch, logs=None):
        """Before training batch `batch` (0-based, counted within the epoch)."""
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        """After training batch `batch`; `logs` are the running results of the epoch."""
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Before a batch of evaluate, or of fit's validation."""

    def on_test_batch_end(self, batch, logs=None):
        """After a batch of evaluate, or of fit's validation."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Before a batch of predict."""

    def on_predict_batch_end(self, batch, logs=None):
        """After a batch of predict; `logs` are {"outputs": the batch's predictions}."""

    def on_train_begin(self, logs=None):
        """At the start of fit."""

    def on_train_end(self, logs=None):
        """At the end of fit; `logs` are the last epoch's results."""

    def on_test_begin(self, logs=None):
        """At the start of evaluate, or of fit's validation."""

    def on_test_end(self, logs=None):
        """At the end of evaluate, or of fit's validation; `logs` are its results."""

    def on_predict_begin(self, logs=None):
        """At the start of predict."""

    def on_predict_end(self, logs=None):
        """At the end of predict."""


class CallbackList(Callback):
    """Calls each hook on every callback, in the order given.

    `add_history` and `add_progbar` append a `History` and a `ProgbarLogger` after the
    user's callbacks (unless the list already has one), so that those see the logs that the
    user's callbacks added (ReduceLROnPlateau's "learning_rate"). `model` and `params`
    (the remaining keywords) are handed to every callback, and `model.history` is set to
    the History. Logs reach the callbacks as a new dict per hook: keys sorted, nested dicts
    flattened, values converted with `float()` where they can be.
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = _flatten(callbacks)
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        has_progbar = any(isinstance(c, ProgbarLogger) for c in self.callbacks)
        if add_progbar and not has_progbar:
            self.callbacks.append(ProgbarLogger())
        self.set_model(model)
        self.set_params(params)

    def set_params(self, params):
        self.params = params
        if params:
            for callback in self.callbacks:
                callback.set_params(params)

    def set_model(self, model):
        if not model:
            return
        super().set_model(model)
        if self._history:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def _call(self, hook, *args, logs=None):
        logs = _python_logs(logs)
        for callback in self.callbacks:
            getattr(callback, hook)(*args, logs)

    def on_batch_begin(self, batch, logs=None):
        self._call("on_batch_begin", batch, logs=logs)

    def on_batch_end(self, batch, logs=None):
        self._call("on_batch_end", batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs=logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", batch, logs=logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", batch, logs=logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", batch, logs=logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call("on_predict_batch_end", batch, logs=logs)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs=logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs=logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs=logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs=logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs=logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs=logs)


class History(Callback):
    """Records the logs of every epoch: `history` maps each log key to its list of values,
    `epoch` lists the epochs seen (0-based). fit returns it, and it is also `model.history`.
    """

    def __init__(self):
        super().__init__()
        self.history = {}

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints the progress bar of fit (one per epoch, after an "Epoch i/n" line when there
    is more than one epoch), of evaluate and of predict, from `params`: "verbose" (1 or
    "auto": the bar; 2: one line per epoch), "epochs", and "steps" (None when unknown: then
    the bar counts up, and the count of the first epoch becomes the target of the next).
    Inside fit the validation prints nothing: its results appear on the epoch's line.
    """

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        self.verbose = 1 if params["verbose"] == "auto" else params["verbose"]
        self.epochs = params["epochs"]
        self.target = params["steps"]

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_epoch_begin(self, epoch, logs=None):
        self._new_progbar()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._new_progbar()

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_begin(self, logs=None):
        self._new_progbar()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)  # the predictions are not shown

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _new_progbar(self):
        self.seen = 0
        self.progbar = Progbar(self.target, verbose=self.verbose, stateless_metrics=())

    def _update(self, batch, logs):
        self._ensure_progbar()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        self._ensure_progbar()
        if self.target is None:
            self.target = self.progbar.target = self.seen
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)

    def _ensure_progbar(self):
        if self.progbar is None:  # a hook called without its begin hook
            self._new_progbar()


# --- callbacks that watch a metric ----------------------------------------------------------

# Keras 3 learns whether a metric improves upward or downward from the metric object
# (`_direction`); the metrics by their Keras names, for models whose metrics do not say.
METRIC_DIRECTIONS = {
    **dict.fromkeys(
        [
            "acc",
            "accuracy",
            "auc",
            "binary_accuracy",
            "binary_io_u",
            "categorical_accuracy",
            "concordance_correlation",
            "cosine_similarity",
            "f1_score",
            "fbeta_score",
            "io_u",
            "mean_io_u",
            "one_hot_io_u",
            "one_hot_mean_io_u",
            "pearson_correlation",
            "precision",
            "precision_at_recall",
            "r2_score",
            "recall",
            "recall_at_precision",
            "sensitivity_at_specificity",
            "sparse_categorical_accuracy",
            "sparse_top_k_categorical_accuracy",
            "specificity_at_sensitivity",
            "top_k_categorical_accuracy",
        ],
        "max",
    ),
    **dict.fromkeys(
        [
            "binary_crossentropy",
            "categorical_crossentropy",
            "categorical_hinge",
            "ce",
            "crossentropy",
            "hinge",
            "kl_divergence",
            "logcosh",
            "loss",
            "mae",
            "mape",
            "mean_absolute_error",
            "mean_absolute_percentage_error",
            "mean_squared_error",
            "mean_squared_logarithmic_error",
            "mse",
            "msle",
            "poisson",
            "root_mean_squared_error",
            "sparse_categorical_crossentropy",
            "squared_hinge",
        ],
        "min",
    ),
}


class _MonitorCallback(Callback):
    """A callback that compares a monitored value with the best one so far.

    mode "min" or "max" says which way is better; "auto" takes it from the metric's name
    without "val_" ("loss" goes down), from the model's metric of that name when it has a
    `_direction` ("up" or "down"), or from METRIC_DIRECTIONS, and raises when none knows.
    A value improves on the best when it is better by more than `min_delta`.
    """

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.",
                stacklevel=3,
            )
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        mode = self.mode if self.mode != "auto" else self._auto_mode()
        self.monitor_op = operator.lt if mode == "min" else operator.gt
        if mode == "min":
            self.min_delta *= -1

    def _auto_mode(self):
        name = self.monitor.removeprefix("val_")
        metrics = getattr(self.model, "metrics", None) or ()
        # a container of metrics (Keras's compiled metrics) stands for the ones it holds
        metrics = [m for metric in metrics for m in (metric, *getattr(metric, "metrics", ()))]
        for metric in metrics:
            direction = getattr(metric, "_direction", None)
            if getattr(metric, "name", None) == name and direction in ("up", "down"):
                return "max" if direction == "up" else "min"
        if name in METRIC_DIRECTIONS:
            return METRIC_DIRECTIONS[name]
        raise ValueError(
            f"{type(self).__name__} callback received monitor={self.monitor}, but it cannot "
            "tell whether that metric should be maximized or minimized. Pass `mode='max'` "
            "to keep the highest value, or `mode='min'` to keep the lowest."
        )

    def _is_improvement(self, value, reference):
        return reference is None or bool(self.monitor_op(value - self.min_delta, reference))


class EarlyStopping(_MonitorCallback):
    """Stops fit (`model.stop_training = True`) when `monitor` has not improved by more than
    `min_delta` for `patience` epochs, counting from epoch `start_from_epoch`; never after
    the first epoch. With a `baseline`, the wait restarts only on values that also beat
    the baseline. `restore_best_weights` puts back the weights of the best epoch when fit
    ends (those of the first watched epoch when none improved). With `verbose`, prints the
    epoch it stopped at and the epoch whose weights it restored.

    >>> stopper = EarlyStopping(monitor="loss", patience=1)
    >>> stopper.set_model(type("M", (), {"stop_training": False})())
    >>> stopper.on_train_begin()
    >>> for epoch, loss in enumerate([0.5, 0.4, 0.45]):
    ...     stopper.on_epoch_end(epoch, {"loss": loss})
    >>> stopper.model.stop_training, stopper.stopped_epoch
    (True, 2)
    """

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = _monitored_value(logs, self.monitor, "Early stopping conditioned on metric")
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping", flush=True)
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(
                    "Restoring model weights from the end of the best epoch: "
                    f"{self.best_epoch + 1}.",
                    flush=True,
                )
            self.model.set_weights(self.best_weights)


class ReduceLROnPlateau(_MonitorCallback):
    """Multiplies the optimizer's learning rate by `factor` (down to `min_lr`) when
    `monitor` has not improved by more than `min_delta` for `patience` epochs; after a
    reduction it waits `cooldown` epochs before counting again. It also puts the current
    rate into each epoch's logs as "learning_rate", so History, CSVLogger and the progress
    bar show it.
    """

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
    ):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}"
            )
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs or {}  # NOTE: as in Keras, empty logs get no "learning_rate" for the others
        logs["learning_rate"] = float(self.model.optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is "
                f"not available. Available metrics are: {','.join(logs)}.",
                stacklevel=2,
            )
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter == 0:
            self.wait += 1
            if self.wait >= self.patience and self._reduce(epoch):
                self.cooldown_counter = self.cooldown
                self.wait = 0

    def _reduce(self, epoch):
        """Lowers the rate unless it is at `min_lr` already; says whether it did."""
        optimizer = self.model.optimizer
        rate = optimizer.learning_rate.numpy()
        old_lr = float(rate)
        # NOTE: min_lr is rounded to the rate's dtype first (float32 in Keras, float64 in
        # tracer), so that a rate that was set to min_lr counts as there
        if not old_lr > np.asarray(self.min_lr, dtype=rate.dtype):
            return False
        new_lr = max(old_lr * self.factor, self.min_lr)
        optimizer.learning_rate = new_lr
        if self.verbose > 0:
            print(
                f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.",
                flush=True,
            )
        return True


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of each epoch to
    `schedule(epoch, current_rate)` (or `schedule(epoch)`, for a one-argument schedule),
    which must return a float; puts the rate into each epoch's logs as "learning_rate".

    >>> import tracer as tt
    >>> model = type("M", (), {"optimizer": tt.optimizers.SGD(0.1)})()
    >>> scheduler = LearningRateScheduler(lambda epoch, lr: lr / 2)
    >>> scheduler.set_model(model)
    >>> scheduler.on_epoch_begin(0)
    >>> round(float(model.optimizer.learning_rate), 6)
    0.05
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        try:
            learning_rate = self.schedule(epoch, float(optimizer.learning_rate))
        except TypeError:  # a schedule of the epoch alone
            learning_rate = self.schedule(epoch)
        if not isinstance(learning_rate, (float, np.float32, np.float64)):
            raise ValueError(
                f"The output of the `schedule` function should be a float. Got: {learning_rate}"
            )
        optimizer.learning_rate = learning_rate
        if self.verbose > 0:
            print(
                f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                f"{learning_rate}.",
                flush=True,
            )

    def on_epoch_end(self, epoch, logs=None):
        if logs:  # NOTE: as in ReduceLROnPlateau, not into empty logs
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class ModelCheckpoint(_MonitorCallback):
    """Saves the model (`model.save(path, overwrite=True)`) or its weights
    (`model.save_weights(path, overwrite=True)` with `save_weights_only`) after every
    epoch, or after every `save_freq` training batches when `save_freq` is an int.

    `filepath` is formatted with `epoch` (1-based), `batch` (1-based, when saving by
    batches) and the logs: "ckpt/{epoch:02d}-{val_loss:.2f}.keras". It must end in ".keras"
    (or ".h5"), or in ".weights.h5" with `save_weights_only`. Missing directories are made.
    With `save_best_only`, it saves only when `monitor` improved on the best so far (or on
    `initial_value_threshold`), and always when `monitor` is missing from the logs.
    """

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(
                f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or "
                "integer values"
            )
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError(
                    "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath "
                    "provided must end in `.weights.h5` (Keras weights format). Received: "
                    f"filepath={self.filepath}"
                )
        elif not self.filepath.endswith((".keras", ".h5")):
            raise ValueError(
                "The filepath provided must end in `.keras` (Keras model format). Received: "
                f"filepath={self.filepath}"
            )

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _should_save_on_batch(self, batch):
        """Counts the batches since the last save; a batch index that did not grow means a
        new epoch began."""
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            self._batches_seen_since_last_saving += batch + 1
        else:
            self._batches_seen_since_last_saving += batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _save(self, epoch, batch, logs):
        logs = logs or {}
        filepath = self._file_path(epoch, batch, logs)
        if not self._should_save(epoch, logs, filepath):
            return
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if os.path.isdir(filepath):
            raise OSError(
                "Please specify a non-directory filepath for ModelCheckpoint. Filepath used "
                f"is an existing directory: {filepath}"
            )
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}", flush=True)

    def _should_save(self, epoch, logs, filepath):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {filepath}", flush=True)
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=4)
            return True
        if np.ndim(current) > 0:
            warnings.warn(
                "Can save best model only when `monitor` is a scalar value. Received: "
                f"{current}. Falling back to `save_best_only=False`.",
                stacklevel=4,
            )
            return True
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                    f"{current:.5f}, saving model to {filepath}",
                    flush=True,
                )
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}", flush=True)
        return False

    def _file_path(self, epoch, batch, logs):
        fields = dict(logs, epoch=epoch + 1)
        if batch is not None and "batch" not in logs:
            fields["batch"] = batch + 1
        try:
            return self.filepath.format(**fields)
        except KeyError as e:
            raise KeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}'
            ) from e


# --- the others ------------------------------------------------------------------------------


class CSVLogger(Callback):
    """Writes one CSV row per epoch to `filename`: a header `epoch,<keys>` with the log keys
    of the first epoch, sorted (and "val_" copies of them when there are none, so that a
    later validation fits in), then `epoch,<values>` with "NA" for missing ones and lists
    written as "[a, b]". Rows end in "\\r\\n", as the csv module's excel dialect writes them.
    With `append`, rows go after those of an existing file, without a second header.
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as f:
                self.append_header = not f.readline()
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys += [f"val_{key}" for key in self.keys]
        if self.writer is None:
            self.writer = csv.DictWriter(
                self.csv_file, fieldnames=["epoch", *self.keys], delimiter=self.sep
            )
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict(epoch=epoch)
        row.update((key, _csv_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class TerminateOnNaN(Callback):
    """Stops fit after a training batch whose loss is NaN or infinite (or, with
    `raise_error`, raises RuntimeError there)."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(loss):
            return
        if self.raise_error:
            raise RuntimeError(
                f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. "
                "Terminating training immediately."
            )
        print(f"Batch {batch}: Invalid loss, terminating training", flush=True)
        self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback made of functions: `on_epoch_begin(epoch, logs)`, `on_epoch_end(epoch,
    logs)`, `on_train_begin(logs)`, `on_train_end(logs)`, `on_train_batch_begin(batch,
    logs)`, `on_train_batch_end(batch, logs)`; any other hook can be given by its name as a
    keyword.

    >>> losses = []
    >>> callback = LambdaCallback(on_epoch_end=lambda epoch, logs: losses.append(logs["loss"]))
    >>> callback.on_epoch_end(0, {"loss": 0.5})
    >>> losses
    [0.5]
    """

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ):
        super().__init__()
        hooks = dict(
            kwargs,
            on_epoch_begin=on_epoch_begin,
            on_epoch_end=on_epoch_end,
            on_train_begin=on_train_begin,
            on_train_end=on_train_end,
            on_train_batch_begin=on_train_batch_begin,
            on_train_batch_end=on_train_batch_end,
        )
        # an instance attribute hides the hook of the class
        self.__dict__.update({name: f for name, f in hooks.items() if f is not None})


# --- helpers --------------------------------------------------------------------------------


def _flatten(callbacks):
    """The callbacks of a list that may hold lists, as one new list."""
    if not callbacks:
        return []
    if isinstance(callbacks, (list, tuple)):
        return [c for item in callbacks for c in _flatten(item)]
    return [callbacks]


def _python_logs(logs):
    """A copy of `logs` with sorted keys, the entries of nested dicts lifted to the top,
    and each value that `float()` accepts (tensors, numpy scalars) turned into a float."""
    result = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(_python_logs(value))
            continue
        try:
            value = float(value)
        except (TypeError, ValueError):
            pass
        result[key] = value
    return result


def _monitored_value(logs, monitor, what):
    """logs[monitor], or None with a warning that names the keys there are."""
    logs = logs or {}
    value = logs.get(monitor)
    if value is None:
        warnings.warn(
            f"{what} `{monitor}` which is not available. Available metrics are: {','.join(logs)}",
            stacklevel=3,
        )
    return value


def _csv_value(value):
    """Lists and arrays as one quoted "[a, b]" field; everything else as csv writes it."""
    if isinstance(value, str) or np.ndim(value) == 0:
        return value
    return f'"[{", ".join(map(str, value))}]"'
