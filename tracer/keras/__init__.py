"""`tt.keras`: TensorFlow's keras names for what tracer has, so that Keras code runs with the
import changed: `tt.keras.layers.Dense`, `tt.keras.Sequential`, `tt.keras.optimizers`, ...

Not `Model.fit`: the training loop is the user's, with a tape, as in TensorFlow's guides.
"""

from tracer import optimizers
from tracer.keras import activations, initializers, layers, losses, models
from tracer.keras.models import Model, Sequential

__all__ = [
    "Model",
    "Sequential",
    "activations",
    "initializers",
    "layers",
    "losses",
    "models",
    "optimizers",
]
