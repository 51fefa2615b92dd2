"""`tt.keras.layers`: the layers of `tracer.layers` by their Keras names."""

from tracer.layers import Dense, Layer

__all__ = ["Dense", "Layer"]
