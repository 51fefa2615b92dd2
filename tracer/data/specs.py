"""What the stages of a pipeline share: the cardinalities that are no count, and the
TensorSpecs of elements.

A stage (sources.py, transforms.py) yields its elements as structures of numpy arrays
(`arrays()`), says how many it has (`cardinality()`: a count, INFINITE or UNKNOWN) and
gives the structure of TensorSpecs of its elements (`spec()`)."""

from tracer import nest
from tracer.data.ragged_elements import is_ragged
from tracer.data.sparse_elements import is_sparse
from tracer.extension_type import ExtensionTypeSpec, refuse_shaped
from tracer.ragged_tensor import RaggedTensorSpec
from tracer.signature import TensorSpec
from tracer.sparse_tensor import SparseTensorSpec
from tracer.tensor_shape import is_unknown_rank

INFINITE = -1
UNKNOWN = -2


def leaf_spec(leaf, shape):
    """The spec of shape `shape` of the kind of `leaf` (an element's array or spec): a
    SparseTensorSpec for a sparse one (tracer/data/sparse_elements.py), a RaggedTensorSpec
    for a ragged one (its ragged rank one less for a row, one more for a batch:
    tracer/data/ragged_elements.py), else a TensorSpec."""
    if isinstance(leaf, RaggedTensorSpec) or is_ragged(leaf):
        rank = leaf.ragged_rank + len(shape) - len(leaf.shape)
        return RaggedTensorSpec(shape, leaf.dtype, rank)
    sparse = isinstance(leaf, SparseTensorSpec) or is_sparse(leaf)
    return SparseTensorSpec(shape, leaf.dtype) if sparse else TensorSpec(shape, leaf.dtype)


def spec_leaves(spec):
    """An element spec's leaves, a SparseTensorSpec or RaggedTensorSpec one of them; an
    extension type's spec gives its TensorSpecs (its tensors are batched, sliced and
    unbatched each on its own)."""
    return [leaf for item in nest.flatten(spec, expand_composites=False) for leaf in _parts(item)]


def packed_spec(spec, leaves):
    """`spec` with its leaves (as spec_leaves gives them) replaced by `leaves`."""
    leaves, items = iter(leaves), []
    for item in nest.flatten(spec, expand_composites=False):
        if isinstance(item, ExtensionTypeSpec):
            refuse_shaped(item, "tt.data: batching or unbatching")
            item = item._from_components([next(leaves) for _ in _parts(item)])
        else:
            item = next(leaves)
        items.append(item)
    return nest.pack_sequence_as(spec, items, expand_composites=False)


def _parts(item):
    return item._tensor_components() if isinstance(item, ExtensionTypeSpec) else (item,)


def refuse_sparse(element, what):
    """A NotImplementedError naming `what` where an element holds a sparse leaf."""
    if any(is_sparse(leaf) for leaf in nest.flatten(element)):
        raise NotImplementedError(
            f"tt.data: {what} of SparseTensor elements is not supported (tracer batches, "
            "unbatches, maps, filters and reorders them); make them dense with "
            "tt.sparse.to_dense in a map first"
        )


def spec_of_arrays(element):
    """The specs of one element of numpy arrays, structured as it is."""
    return nest.pack_sequence_as(element, [leaf_spec(a, a.shape) for a in nest.flatten(element)])


def combined_spec(first, second):
    """`first` with None wherever `second` (of the same structure) has another size."""
    flat = []
    for a, b in zip(spec_leaves(first), spec_leaves(second)):
        if is_unknown_rank(a.shape) or is_unknown_rank(b.shape) or len(a.shape) != len(b.shape):
            flat.append(TensorSpec(None, a.dtype))
        else:
            flat.append(a.generalized(b))
    return packed_spec(first, flat)


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
