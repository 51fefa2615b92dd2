"""`CallbackList`, which hands each hook and its logs (as Python floats) to every callback."""

from tracer.keras.callbacks.base import Callback
from tracer.keras.callbacks.history import History
from tracer.keras.callbacks.progbar_logger import ProgbarLogger


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
