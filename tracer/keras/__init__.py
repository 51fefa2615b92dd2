"""`tt.keras`: TensorFlow's keras names for what tracer has, so that Keras code runs with the
import changed: `tt.keras.layers.Dense`, `tt.keras.Sequential`, `tt.keras.optimizers`."""

from tracer import optimizers
from tracer.keras import layers
from tracer.layers import Sequential

__all__ = ["Sequential", "layers", "optimizers"]
