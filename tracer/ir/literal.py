"""Literal: a numpy array as a node attribute (the value of a `const` node)."""

import numpy as np


class Literal:
    """A numpy array as a hashable, comparable attribute value (for `const` nodes)."""

    __slots__ = ("array", "_key")

    def __init__(self, array):
        self.array = np.array(array)
        self.array.flags.writeable = False
        self._key = (self.array.dtype.str, self.array.shape, self.array.tobytes())

    def __eq__(self, other):
        return isinstance(other, Literal) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        if self.array.ndim == 0:
            return repr(self.array.item())
        return np.array2string(self.array, separator=",", threshold=8).replace("\n", "")
