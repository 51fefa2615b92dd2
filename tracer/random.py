"""`tt.random`: seeded normal and uniform tensors.

`set_seed(s)` makes every later draw repeatable; an op-level `seed` picks a stream of its
own within the global seed, as TensorFlow's two-level seeds do.
"""

import numpy as np

from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.tensor import Tensor

_generator = np.random.default_rng()
_global_seed = None


def set_seed(seed):
    global _generator, _global_seed
    _global_seed = int(seed)
    _generator = np.random.default_rng(_global_seed)


def _rng(seed):
    if seed is None:
        return _generator
    return np.random.default_rng([_global_seed or 0, int(seed)])


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"random.normal makes floating tensors, not {dtype.name}")
    values = _rng(seed).normal(float(mean), float(stddev), _shape(shape))
    return Tensor(values.astype(dtype.as_numpy_dtype))


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    rng, shape = _rng(seed), _shape(shape)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("random.uniform needs maxval for integer dtypes")
        return Tensor(rng.integers(int(minval), int(maxval), shape).astype(dtype.as_numpy_dtype))
    maxval = 1.0 if maxval is None else float(maxval)
    return Tensor(rng.uniform(float(minval), maxval, shape).astype(dtype.as_numpy_dtype))
