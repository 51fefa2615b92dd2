"""`tnp.random`: numpy's random functions on tracer's random ops (`tt.random`'s global seed
and streams; the draws are not numpy's)."""

from tracer import random as _random
from tracer.experimental.numpy.behavior import default_float, numpy_dtype


def seed(s):
    """Seed the draws that follow, as `tt.random.set_seed` does."""
    _random.set_seed(s)


def randn(*size):
    """Draws from the standard normal distribution, of shape `size`, the default float."""
    return _random.normal(size, dtype=default_float())


def standard_normal(size=None):
    return _random.normal(() if size is None else size, dtype=default_float())


def normal(loc=0.0, scale=1.0, size=None):
    shape = () if size is None else size
    return _random.normal(shape, mean=loc, stddev=scale, dtype=default_float())


def rand(*size):
    """Draws from [0, 1), of shape `size`, the default float."""
    return _random.uniform(size, dtype=default_float())


def uniform(low=0.0, high=1.0, size=None):
    shape = () if size is None else size
    return _random.uniform(shape, minval=low, maxval=high, dtype=default_float())


def randint(low, high=None, size=None, dtype=int):
    """Integers in [low, high) (in [0, low) without `high`), of shape `size`."""
    if high is None:
        low, high = 0, low
    shape = () if size is None else size
    return _random.uniform(shape, minval=low, maxval=high, dtype=numpy_dtype(dtype))
