"""`tt.experimental`: the names TensorFlow keeps there that tracer has: the shape of a ragged
tensor (tracer/ragged_shape.py)."""

from tracer.ragged_shape import DynamicRaggedShape, RowPartition

__all__ = ["DynamicRaggedShape", "RowPartition"]
