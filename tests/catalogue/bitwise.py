"""Catalogue cases of tt.bitwise (tracer/ops/bitwise_ops.py): no gradient flows through them;
each is a function of one float64 argument, through integers made of it (shift amounts
beyond the width included, which TensorFlow clamps)."""

import tracer as tt


def _integers(x):
    return tt.cast(tt.math.floor(x * 40.0), tt.int32)


def _as_float(y):
    return tt.cast(y, tt.float64)


NO_GRADIENT = {
    "bitwise_and": lambda x: _as_float(tt.bitwise.bitwise_and(_integers(x), 0x35)),
    "bitwise_or": lambda x: _as_float(tt.bitwise.bitwise_or(_integers(x), 0x35)),
    "bitwise_xor": lambda x: _as_float(tt.bitwise.bitwise_xor(_integers(x), 0x35)),
    "invert": lambda x: _as_float(tt.bitwise.invert(_integers(x))),
    "left_shift": lambda x: _as_float(
        tt.bitwise.left_shift(_integers(x), tt.constant([3, 40, -2], tt.int32))
    ),
    "right_shift": lambda x: _as_float(
        tt.bitwise.right_shift(_integers(x), tt.constant([1, 33, -1], tt.int32))
    ),
}
