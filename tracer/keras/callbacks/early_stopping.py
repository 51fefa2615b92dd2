"""`EarlyStopping`, which stops fit when the monitored metric stops improving."""

import warnings

from tracer.keras.callbacks.monitor import _MonitorCallback


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
