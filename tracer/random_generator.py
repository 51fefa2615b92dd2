"""`tt.random.Generator`: TensorFlow's stateful random generator, drawing TensorFlow's numbers.

A Generator holds its Philox state in an int64 Variable of three elements (the 128-bit
counter's two halves and the key, named `StateVar` as TensorFlow names it); each draw reads
the state, computes TensorFlow's values from it (`tracer/ops/philox.py`, the same bits as
TensorFlow's CPU kernels) and moves the counter on by 256 for every element, as TensorFlow
does. So `Generator.from_seed(1).normal([2, 3])` prints what TensorFlow prints, and a
compiled function that draws from a Generator made outside it draws anew at each call
(its state is a Variable the function reads and assigns). The state goes through
checkpoints as any Variable of a Module does.

Only the Philox algorithm is TensorFlow's on a CPU ("philox", 1, and "auto_select", which
picks Philox there); ThreeFry is refused.
"""

import os

import numpy as np

from tracer import dtypes, errors
from tracer.context import outside_trace
from tracer.module import Module
from tracer.ops import array_ops, bitwise_ops, math_ops, philox
from tracer.ops.convert import known_value
from tracer.ops.structure_ops import stack
from tracer.variable import Variable

PHILOX = 1
_ALGORITHMS = {"philox": PHILOX, PHILOX: PHILOX, "auto_select": PHILOX, 3: PHILOX, None: PHILOX}
_INT64_MIN = np.int64(-(2**63))


class Generator(Module):
    """Random numbers from a state of TensorFlow's, as `tf.random.Generator` draws them.

    >>> g = tt.random.Generator.from_seed(1)
    >>> g.normal([3]).numpy()
    array([ 0.43842274, -0.53439844, -0.07710262], dtype=float32)
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        if copy_from is not None:
            state, alg = copy_from.state.numpy(), copy_from.algorithm
        elif state is None:
            raise ValueError("tt.random.Generator: give copy_from or state (or use from_seed)")
        self._algorithm = _algorithm(alg)
        with outside_trace():
            self._state_var = Variable(_state(state), trainable=False, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose state is the seed's 64-bit words (from the lowest), zeros after."""
        return cls(state=philox.seed_state(known_value(seed, "Generator.from_seed: seed")), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator whose state comes from the operating system's entropy."""
        words = np.frombuffer(os.urandom(24), dtype=np.int64)
        return cls(state=words, alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        """A generator of the key (a scalar) and the counter (two int64 words)."""
        return cls(state=_key_counter_state(key, counter), alg=alg)

    @property
    def state(self):
        """The int64 Variable [counter low, counter high, key]."""
        return self._state_var

    @property
    def algorithm(self):
        return self._algorithm

    @property
    def key(self):
        return self._state_var.value()[2]

    def reset(self, state):
        self._state_var.assign(_state(state))

    def reset_from_seed(self, seed):
        self.reset(philox.seed_state(known_value(seed, "Generator.reset_from_seed: seed")))

    def reset_from_key_counter(self, key, counter):
        self.reset(_key_counter_state(key, counter))

    def skip(self, delta):
        """Move the counter on as a draw of `delta` elements would."""
        self._advance(int(known_value(delta, "Generator.skip: delta")))

    # --- draws ----------------------------------------------------------------------------

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        dtype = _floating(dtype, "normal")
        values = self._draw(shape, dtype, "normal")
        return values * array_ops.cast(stddev, dtype) + array_ops.cast(mean, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        dtype = _floating(dtype, "truncated_normal")
        values = self._draw(shape, dtype, "truncated_normal")
        return values * array_ops.cast(stddev, dtype) + array_ops.cast(mean, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        """Uniforms in [minval, maxval): floats (maxval 1 by default) or integers (maxval
        needed; known when traced)."""
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if maxval is None:
                raise ValueError("Generator.uniform: integers need maxval")
            low = int(known_value(minval, "Generator.uniform: minval"))
            high = int(known_value(maxval, "Generator.uniform: maxval"))
            if high <= low:
                raise errors.InvalidArgumentError(
                    None, None, f"Generator.uniform: need minval < maxval, got {low} >= {high}"
                )
            return self._draw(shape, dtype, "integers", low, high)
        dtype = _floating(dtype, "uniform")
        values = self._draw(shape, dtype, "uniform")
        maxval = 1.0 if maxval is None else maxval
        low, high = array_ops.cast(minval, dtype), array_ops.cast(maxval, dtype)
        return values * (high - low) + low

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None):
        """Integers over the whole range of `dtype`."""
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64):
            raise TypeError(
                f"Generator.uniform_full_int: dtype must be a 32- or 64-bit integer, not {dtype.name}"
            )
        return self._draw(shape, dtype, "integers")

    def make_seeds(self, count=1):
        """int64 [2, count]: seeds for the stateless functions (the second row zeros)."""
        keys = self.uniform_full_int([count], dtypes.int64)
        return stack([keys, array_ops.zeros_like(keys)])

    def split(self, count=1):
        """`count` new generators, each keyed by a draw of this one (counters zero)."""
        keys = self.uniform_full_int([count], dtypes.int64).numpy()
        return [Generator(state=[0, 0, int(key)], alg=self._algorithm) for key in keys]

    def _draw(self, shape, dtype, distribution, low=None, high=None):
        shape = _static_shape(shape)
        values = philox.draw(self._state_var.value(), shape, dtype, distribution, low, high)
        self._advance(int(np.prod(shape, dtype=np.int64)))
        return values

    def _advance(self, elements):
        """The 128-bit counter plus 256 for each element (the low word's carry included)."""
        delta = np.int64(philox.BLOCKS_PER_ELEMENT * elements)
        state = self._state_var.value()
        low, high = state[0], state[1]
        moved = low + delta
        # unsigned comparison of the low words: the sign bit flipped, then signed
        carried = math_ops.less(
            bitwise_ops.bitwise_xor(moved, _INT64_MIN), bitwise_ops.bitwise_xor(low, _INT64_MIN)
        )
        high = high + array_ops.cast(carried, dtypes.int64)
        self._state_var.assign(stack([moved, high, state[2]]))


_global = None


def get_global_generator():
    """The generator tt.random's stateful functions would share: made from the operating
    system's entropy the first time it is asked for."""
    global _global
    if _global is None:
        _global = Generator.from_non_deterministic_state()
    return _global


def set_global_generator(generator):
    """Make `generator` the global one (TensorFlow warns that functions traced before keep
    the old one; so do tracer's)."""
    global _global
    _global = generator


def _algorithm(alg):
    key = alg.lower() if isinstance(alg, str) else alg
    if key not in _ALGORITHMS:
        raise NotImplementedError(
            f"tt.random.Generator: algorithm {alg!r}; tracer draws with Philox ('philox', 1), "
            "TensorFlow's choice on a CPU"
        )
    return _ALGORITHMS[key]


def _state(state):
    values = np.asarray(state.numpy() if hasattr(state, "numpy") else state, dtype=np.int64)
    if values.shape != (3,):
        raise ValueError(
            f"tt.random.Generator: a Philox state has 3 int64 words, not shape {values.shape}"
        )
    return values


def _floating(dtype, what):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"Generator.{what}: dtype must be float32 or float64, not {dtype.name}")
    return dtype


def _static_shape(shape):
    value = np.asarray(known_value(shape, "Generator: shape"), np.int64)
    return tuple(int(d) for d in value.reshape(-1))


def _key_counter_state(key, counter):
    """The state of a key (a scalar) and a counter (two int64 words)."""
    return [*np.asarray(counter, np.int64).reshape(-1), int(key)]
