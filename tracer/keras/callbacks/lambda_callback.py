"""`LambdaCallback`, a callback built from plain functions."""

from tracer.keras.callbacks.base import Callback


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
