"""`tt.nn.dropout`, whose mask is drawn anew at every call, compiled too.

The draws here are tt.random.stateless_uniform's of a seed held in a hidden int64 Variable of
shape [2], as the Keras Dropout layer's are: each call reads it and advances it, eagerly and
in compiled code (where the Variable is state of the module). The Variable is made on the
first call, outside any trace, from `seed` or a draw; a later `seed` changes nothing
(TensorFlow's op seeds are not reproduced either).
"""

import numpy as np

from tracer import random
from tracer.ops import math_ops
from tracer.ops.convert import as_tensor

_seed_state = None  # the Variable [seed, count] the masks are drawn from


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """x / (1 - rate) where a uniform draw in [0, 1) is >= rate, else 0, as tf.nn.dropout;
    `noise_shape` broadcasts the draw."""
    x = as_tensor(x)
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be in [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = x.shape if noise_shape is None else tuple(noise_shape)
    state = _seed_stream(seed)
    unit = random.stateless_uniform(shape, seed=state, dtype=x.dtype)
    state.assign_add(np.array([0, 1], np.int64))
    return math_ops.where(unit >= rate, x * (1.0 / (1.0 - rate)), 0.0)


def _seed_stream(seed):
    global _seed_state
    if _seed_state is None:
        start = int(seed) if seed is not None else int(np.random.randint(2**31))
        _seed_state = random.seed_stream(start, "dropout_seed")
    return _seed_state
