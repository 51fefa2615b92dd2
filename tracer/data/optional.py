"""`tt.experimental.Optional`: a value that may be missing, as TensorFlow's
tf.experimental.Optional; what an iterator's `get_next_as_optional()` gives, empty at the
end of the data instead of raising.

    optional = iterator.get_next_as_optional()
    if optional.has_value():
        element = optional.get_value()
"""

import numpy as np

from tracer import nest
from tracer.data.sources import as_arrays
from tracer.data.sparse_elements import tensor_of
from tracer.data.specs import spec_of_arrays
from tracer.errors import InvalidArgumentError
from tracer.tensor import constant


class Optional:
    """A structure of tensors (`get_value`), or none (`has_value()` False), of `element_spec`."""

    def __init__(self, value, element_spec, has_value):
        self._value, self._spec, self._has = value, element_spec, has_value

    @staticmethod
    def from_value(value):
        """The Optional that holds `value` (a structure of tensors, or values converted to
        them as TensorFlow converts: a Python int is int32)."""
        arrays = as_arrays(value)
        leaves = [tensor_of(a) for a in nest.flatten(arrays)]
        return Optional(nest.pack_sequence_as(arrays, leaves), spec_of_arrays(arrays), True)

    @staticmethod
    def empty(element_spec):
        """The Optional of `element_spec` that holds nothing."""
        return Optional(None, element_spec, False)

    def has_value(self, name=None):
        """A bool scalar tensor: whether it holds a value."""
        return constant(np.bool_(self._has))

    def get_value(self, name=None):
        """The value; InvalidArgumentError where there is none, as TensorFlow's."""
        if not self._has:
            raise InvalidArgumentError(None, None, "The given optional does not have a value.")
        return self._value

    @property
    def element_spec(self):
        return self._spec

    def __repr__(self):
        return f"<tt.experimental.Optional has_value={self._has} element_spec={self._spec}>"
