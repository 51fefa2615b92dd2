"""`Callback`, the base class of every callback: one do-nothing method per hook."""


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
