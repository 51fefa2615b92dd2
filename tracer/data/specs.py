"""What the stages of a pipeline share: the cardinalities that are no count, and the
TensorSpecs of elements.

A stage (sources.py, transforms.py) yields its elements as structures of numpy arrays
(`arrays()`), says how many it has (`cardinality()`: a count, INFINITE or UNKNOWN) and
gives the structure of TensorSpecs of its elements (`spec()`)."""

from tracer import nest
from tracer.signature import TensorSpec

INFINITE = -1
UNKNOWN = -2


def spec_of_arrays(element):
    """The TensorSpecs of one element of numpy arrays, structured as it is."""
    return nest.pack_sequence_as(
        element, [TensorSpec(a.shape, a.dtype) for a in nest.flatten(element)]
    )


def combined_spec(first, second):
    """`first` with None wherever `second` (of the same structure) has another size."""
    flat = []
    for a, b in zip(nest.flatten(first), nest.flatten(second)):
        if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
            flat.append(TensorSpec(None, a.dtype))
        else:
            flat.append(a.generalized(b))
    return nest.pack_sequence_as(first, flat)


class DatasetSpec:
    """The spec of an element that is itself a dataset (a `window`'s): the spec of its
    elements, as TensorFlow's tf.data.DatasetSpec (whose shape is a scalar's)."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec
        self.shape = tuple(dataset_shape)

    def __eq__(self, other):
        return (
            isinstance(other, DatasetSpec)
            and self.element_spec == other.element_spec
            and self.shape == other.shape
        )

    def __hash__(self):
        return hash((DatasetSpec, self.shape))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape({list(self.shape)}))"
