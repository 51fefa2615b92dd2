"""`tt.keras.preprocessing.sequence`: Keras's `pad_sequences` (tracer/keras/sequence_utils.py),
the only name of Keras's legacy sequence module that tracer has."""

from tracer.keras.sequence_utils import pad_sequences

__all__ = ["pad_sequences"]
