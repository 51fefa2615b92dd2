"""`tt.optimizers`: SGD (with momentum) and Adam, updating variables in place.

Updates are plain numpy on the variables' values: an optimizer step is not differentiated,
and it runs outside any tape (as Keras optimizers do). A None gradient leaves its variable
alone; an IndexedSlices gradient updates only its rows under SGD without momentum, and is
made dense otherwise.
"""

import numpy as np

from tracer.indexed_slices import IndexedSlices


class Optimizer:
    def __init__(self, learning_rate):
        self.learning_rate = float(learning_rate)
        self.iterations = 0
        self._slots = {}  # id(variable) -> per-variable state

    def apply_gradients(self, grads_and_vars):
        """Apply one update for each (gradient, variable) pair; returns the iteration count."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        self.iterations += 1
        for grad, variable in pairs:
            if isinstance(grad, IndexedSlices) and self._sparse_update(grad, variable):
                continue
            self._dense_update(np.asarray(grad, dtype=variable._value.dtype), variable)
        return self.iterations

    def _slot(self, variable, make):
        state = self._slots.get(id(variable))
        if state is None or state[0] is not variable:
            state = self._slots[id(variable)] = (variable, make(variable._value))
        return state[1]

    def _sparse_update(self, grad, variable):
        return False


class SGD(Optimizer):
    """v <- momentum * v - lr * g; x <- x + v (x <- x - lr * g without momentum)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name=None):
        super().__init__(learning_rate)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _dense_update(self, grad, variable):
        if not self.momentum:
            variable._value = variable._value - self.learning_rate * grad
            return
        velocity = self._slot(variable, lambda value: [np.zeros_like(value)])
        velocity[0] = self.momentum * velocity[0] - self.learning_rate * grad
        step = (
            self.momentum * velocity[0] - self.learning_rate * grad
            if self.nesterov
            else velocity[0]
        )
        variable._value = variable._value + step

    def _sparse_update(self, grad, variable):
        if self.momentum:
            return False
        value = variable._value.copy()
        rows = np.asarray(grad.values.numpy(), dtype=value.dtype)
        np.subtract.at(value, grad.indices.numpy(), self.learning_rate * rows)
        variable._value = value
        return True


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Keras's defaults and its epsilon placement."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None):
        super().__init__(learning_rate)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _dense_update(self, grad, variable):
        moments = self._slot(variable, lambda value: [np.zeros_like(value), np.zeros_like(value)])
        t = self.iterations
        moments[0] = self.beta_1 * moments[0] + (1 - self.beta_1) * grad
        moments[1] = self.beta_2 * moments[1] + (1 - self.beta_2) * grad * grad
        rate = self.learning_rate * np.sqrt(1 - self.beta_2**t) / (1 - self.beta_1**t)
        step = rate * moments[0] / (np.sqrt(moments[1]) + self.epsilon)
        variable._value = (variable._value - step).astype(variable._value.dtype, copy=False)
