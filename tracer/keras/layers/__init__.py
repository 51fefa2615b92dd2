"""`tt.keras.layers`: Keras's layers, each a `tt.Module`, differentiable and compilable."""

from tracer.keras.layers.convolutional import Conv2D, Convolution2D, MaxPool2D, MaxPooling2D
from tracer.keras.layers.core import Dense, Dropout, Embedding, Flatten
from tracer.keras.layers.layer import Layer

__all__ = [
    "Conv2D",
    "Convolution2D",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "Layer",
    "MaxPool2D",
    "MaxPooling2D",
]
