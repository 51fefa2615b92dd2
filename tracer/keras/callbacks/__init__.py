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

from tracer.keras.callbacks.base import Callback
from tracer.keras.callbacks.callback_list import CallbackList
from tracer.keras.callbacks.checkpoint import ModelCheckpoint
from tracer.keras.callbacks.csv_logger import CSVLogger
from tracer.keras.callbacks.early_stopping import EarlyStopping
from tracer.keras.callbacks.history import History
from tracer.keras.callbacks.lambda_callback import LambdaCallback
from tracer.keras.callbacks.learning_rate import LearningRateScheduler, ReduceLROnPlateau
from tracer.keras.callbacks.progbar_logger import ProgbarLogger
from tracer.keras.callbacks.tensorboard import TensorBoard
from tracer.keras.callbacks.terminate_on_nan import TerminateOnNaN

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
    "TensorBoard",
    "TerminateOnNaN",
]

# NOTE: doctest.testmod(this package) skips classes defined in its submodules; `__test__`
# hands it their docstrings, so that tests/test_keras_callbacks.py still runs their examples
__test__ = {name: globals()[name] for name in __all__}
