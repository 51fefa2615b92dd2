"""`tt.dtypes`: TensorFlow's `tf.dtypes`, the dtypes of tracer/dtypes.py with `cast` beside
them (which tracer/dtypes.py, imported by the ops, cannot import itself)."""

from tracer.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tracer.ops.array_ops import cast  # noqa: F401
