"""`tt.keras.layers`: Keras's layers, each a `tt.Module`, differentiable and compilable."""

from tracer.keras.layers.convolutional import Conv2D, Convolution2D, MaxPool2D, MaxPooling2D
from tracer.keras.layers.core import Dense, Dropout, Embedding, Flatten
from tracer.keras.layers.input_layer import InputLayer
from tracer.keras.layers.layer import Layer
from tracer.keras.layers.merging import (
    Activation,
    Add,
    Average,
    Concatenate,
    Maximum,
    Minimum,
    Multiply,
    Reshape,
    Subtract,
    add,
    average,
    concatenate,
    maximum,
    minimum,
    multiply,
    subtract,
)
from tracer.keras.layers.normalization import BatchNormalization, LayerNormalization

__all__ = [
    "Activation",
    "Add",
    "Average",
    "BatchNormalization",
    "Concatenate",
    "Conv2D",
    "Convolution2D",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "InputLayer",
    "Layer",
    "LayerNormalization",
    "MaxPool2D",
    "MaxPooling2D",
    "Maximum",
    "Minimum",
    "Multiply",
    "Reshape",
    "Subtract",
    "add",
    "average",
    "concatenate",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
]
