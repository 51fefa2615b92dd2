"""TensorFlow's Philox draws (tracer/ops/philox.py): no gradient flows through a draw. The
case draws from a state made of its float64 argument (three elements); the values are
checked against TensorFlow's in tests/test_random_generator.py."""

import tracer as tt
from tracer.ops import philox


def _drawn(x):
    state = tt.cast(tt.floor(x * 1000.0), tt.int64)
    return philox.draw(state, (3,), tt.float64, "normal")


NO_GRADIENT = {"philox_sample": _drawn}
