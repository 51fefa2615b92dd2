"""`History`, the callback that records each epoch's logs; fit returns it."""

from tracer.keras.callbacks.base import Callback


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
