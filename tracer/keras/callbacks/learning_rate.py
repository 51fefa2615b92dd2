"""The callbacks that set the optimizer's learning rate: `ReduceLROnPlateau` when the
monitored metric stalls, `LearningRateScheduler` from a schedule of the epoch."""

import warnings

import numpy as np

from tracer.keras.callbacks.base import Callback
from tracer.keras.callbacks.monitor import _MonitorCallback


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
