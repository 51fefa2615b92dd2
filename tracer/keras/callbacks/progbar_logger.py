"""`ProgbarLogger`, the callback that prints the progress bars of fit, evaluate and predict."""

from tracer.keras.callbacks.base import Callback
from tracer.keras.progbar import Progbar


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
