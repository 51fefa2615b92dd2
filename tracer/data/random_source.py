"""`Dataset.random(seed)`: an endless stream of int64 scalars drawn at random, as TensorFlow's
tf.data.Dataset.random: uniform over [0, 2**32), the range TensorFlow's values take.

With a `seed`, every pass draws the same values, in every process (unless
`rerandomize_each_iteration`, which draws new ones at each pass, the same sequence of passes
in every process); without one, each pass draws new ones. The values are numpy's, not
TensorFlow's.
"""

import numpy as np

from tracer.data.specs import INFINITE
from tracer.signature import TensorSpec

_BLOCK = 1024  # values drawn at a time


class Random:
    def __init__(self, seed, rerandomize_each_iteration):
        self._seeds = np.random.SeedSequence(None if seed is None else int(seed))
        self._rerandomize = seed is None or bool(rerandomize_each_iteration)
        self._first = self._seeds.spawn(1)[0]

    def arrays(self):
        seed = self._seeds.spawn(1)[0] if self._rerandomize else self._first
        rng = np.random.default_rng(seed)
        while True:
            for value in rng.integers(0, 1 << 32, size=_BLOCK, dtype=np.int64):
                yield np.asarray(value)

    def cardinality(self):
        return INFINITE

    def spec(self):
        return TensorSpec((), "int64")
