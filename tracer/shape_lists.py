"""`tt.shape_n`: the shapes of several tensors at once, as TensorFlow's.

>>> tt.shape_n([tt.zeros([1, 2]), tt.zeros([3])])
[<tracer.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>, <tracer.Tensor: shape=(1,), dtype=int32, numpy=array([3], dtype=int32)>]
"""

from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.ops.array_ops import shape


def shape_n(input, out_type=dtypes.int32, name=None):
    """[tt.shape(x, out_type) for x in input]: a list of int32 (or int64) vectors, each
    size read when the function runs where it is unknown while tracing."""
    out_type = as_dtype(out_type)
    if out_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"shape_n: out_type must be int32 or int64, not {out_type.name}")
    return [shape(x, out_type) for x in input]
