"""`tt.keras`: TensorFlow's keras names for what tracer has, so that Keras code runs with the
import changed: `tt.keras.layers.Dense`, `tt.keras.Sequential`, `tt.keras.optimizers`, ...

Keras's training API too: `Model.compile/fit/evaluate/predict` on one compiled step
(tracer/keras/training.py), `tt.keras.metrics` and `tt.keras.callbacks`.
"""

from tracer import optimizers
from tracer.keras import (
    activations,
    applications,
    backend,
    callbacks,
    constraints,
    datasets,
    functional,  # (functional and saving plug into Model when imported: extensions.py)
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    preprocessing,
    regularizers,
    saving,
    utils,
)
from tracer.keras.layers.input_layer import Input
from tracer.keras.loss_scale_optimizer import LossScaleOptimizer
from tracer.keras.models import Model, Sequential

# Keras 3 lists mixed precision's wrapper among its optimizers too; `tt.keras.optimizers` is
# tracer's optimizers module, which tracer.keras builds on, so the name is given it from here
optimizers.LossScaleOptimizer = LossScaleOptimizer

__all__ = [
    "Input",
    "Model",
    "Sequential",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "constraints",
    "datasets",
    "functional",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "optimizers",
    "preprocessing",
    "regularizers",
    "saving",
    "utils",
]
