"""`TerminateOnNaN`, which stops fit at the first NaN or infinite loss."""

import math

from tracer.keras.callbacks.base import Callback


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
