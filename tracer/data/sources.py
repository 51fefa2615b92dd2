"""The stages that start a pipeline (tracer/data/specs.py says what a stage is): slices of
tensors, whole tensors, a range of integers, other pipelines side by side, a Python
generator."""

import numpy as np

from tracer import nest
from tracer.data.ragged_elements import RaggedArrays
from tracer.data.sparse_elements import SparseArrays
from tracer.data.specs import (
    INFINITE,
    UNKNOWN,
    leaf_spec,
    spec_of_arrays,
)
from tracer.dtypes import BY_NUMPY, as_dtype
from tracer.errors import InvalidArgumentError, mixed
from tracer.extension_type import ExtensionType, ExtensionTypeSpec, refuse_shaped
from tracer.ragged_tensor import RaggedTensor
from tracer.signature import TensorSpec
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import constant


def as_arrays(structure):
    """A structure of values as numpy arrays, with TensorFlow's dtypes (a Python float is
    float32, a numpy float64 array stays float64). Tuples and dicts are structures; a list
    is one tensor, as tf.data reads it."""
    if isinstance(structure, dict):
        return {key: as_arrays(value) for key, value in structure.items()}
    if isinstance(structure, SparseTensor):
        return SparseArrays.of(structure)
    if isinstance(structure, ExtensionType):  # its tensors, each an array of the element
        return structure._from_components([as_arrays(t) for t in structure._tensor_components()])
    if isinstance(structure, RaggedTensor):
        return RaggedArrays.of(structure)
    if isinstance(structure, tuple):
        parts = [as_arrays(value) for value in structure]
        return type(structure)(*parts) if hasattr(structure, "_fields") else tuple(parts)
    if (
        type(structure) is np.ndarray
        and structure.dtype.kind in "biufc"
        and structure.dtype in BY_NUMPY
    ):
        return structure.copy()  # what a tensor of it holds: its own copy, of its dtype
    return np.asarray(constant(structure)._value)


class TensorSlices:
    """`from_tensor_slices`: one element per row of the leading axis, which every leaf
    must share."""

    def __init__(self, tensors):
        refuse_shaped(tensors, "tt.data: from_tensor_slices")
        self._structure = as_arrays(tensors)
        leaves = nest.flatten(self._structure)
        if not leaves or any(leaf.ndim == 0 for leaf in leaves):
            raise ValueError("from_tensor_slices: every component needs a leading axis to slice")
        sizes = {leaf.shape[0] for leaf in leaves}
        if len(sizes) > 1:
            raise ValueError(
                f"from_tensor_slices: the components' leading sizes differ: {sorted(sizes)}"
            )
        self._count = sizes.pop()

    def arrays(self):
        leaves = nest.flatten(self._structure)
        if type(self._structure) is tuple and len(leaves) == len(self._structure):
            for row in range(self._count):  # a tuple of arrays, each element a tuple of rows
                yield tuple([leaf[row] for leaf in leaves])
            return
        for row in range(self._count):
            yield nest.pack_sequence_as(self._structure, [leaf[row] for leaf in leaves])

    def rows(self):
        """(the sliced structure, the rows in the order this stage gives them): what lets
        `batch` gather a batch's rows at once instead of stacking them one by one."""
        return self._structure, iter(range(self._count))

    def cardinality(self):
        return self._count

    def spec(self):
        return nest.pack_sequence_as(
            self._structure,
            [leaf_spec(leaf, leaf.shape[1:]) for leaf in nest.flatten(self._structure)],
        )


class Tensors:
    """`from_tensors`: one element, the whole structure."""

    def __init__(self, tensors):
        self._structure = as_arrays(tensors)

    def arrays(self):
        yield self._structure

    def cardinality(self):
        return 1

    def spec(self):
        return spec_of_arrays(self._structure)


class Range:
    """`range(stop)`, `range(start, stop[, step])`: integers, int64 unless `dtype` says."""

    def __init__(self, *args, dtype="int64"):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range takes 1 to 3 arguments (start, stop, step), not {len(args)}")
        self._range = range(*(int(a) for a in args))
        self._dtype = np.dtype(as_dtype(dtype).name)

    def arrays(self):
        for value in self._range:
            yield np.asarray(value, self._dtype)

    def cardinality(self):
        return len(self._range)

    def spec(self):
        return TensorSpec((), self._dtype)


class Counter:
    """`counter(start, step)`: start, start + step, ... forever, of `dtype`."""

    def __init__(self, start, step, dtype):
        self._dtype = np.dtype(as_dtype(dtype).name)
        self._start = np.asarray(start, self._dtype)
        self._step = np.asarray(step, self._dtype)

    def arrays(self):
        value = self._start
        while True:
            yield value
            value = np.add(value, self._step, dtype=self._dtype)  # (wraps, as TensorFlow's)

    def cardinality(self):
        return INFINITE

    def spec(self):
        return TensorSpec((), self._dtype)


class Zip:
    """`zip(datasets)`: the elements of several stages side by side, in their structure,
    until the shortest ends."""

    def __init__(self, stages):
        self._stages = stages

    def arrays(self):
        iterators = [stage.arrays() for stage in nest.flatten(self._stages)]
        for elements in zip(*iterators):
            yield nest.pack_sequence_as(self._stages, list(elements))

    def cardinality(self):
        counts = [stage.cardinality() for stage in nest.flatten(self._stages)]
        finite = [c for c in counts if c >= 0]
        if finite:
            return min(finite) if UNKNOWN not in counts else UNKNOWN
        return UNKNOWN if UNKNOWN in counts else INFINITE

    def spec(self):
        return nest.pack_sequence_as(
            self._stages, [stage.spec() for stage in nest.flatten(self._stages)]
        )


class Generator:
    """`from_generator(generator, output_signature=...)`: the elements a new call of
    `generator(*args)` yields on each pass, checked against the signature (TensorFlow's
    older `output_types`/`output_shapes` are taken too)."""

    def __init__(self, generator, args, signature, types, shapes):
        if not callable(generator):
            raise TypeError("from_generator takes a callable that returns an iterator")
        if signature is None:
            if types is None:
                raise TypeError("from_generator needs output_signature (or output_types)")
            signature = _signature_of(types, shapes)
        self._generator, self._args, self._signature = generator, tuple(args), signature

    def arrays(self):
        specs = nest.flatten(self._signature)
        for element in self._generator(*self._args):
            leaves = _leaves_like(self._signature, element)
            arrays = [_array(leaf, s.dtype) for leaf, s in zip(leaves, specs)]
            for array, spec in zip(arrays, specs):
                if not spec.admits(array.shape, spec.dtype):  # (TensorFlow's class, and tracer's)
                    raise mixed(InvalidArgumentError, ValueError)(
                        f"from_generator: an element of shape {array.shape} does not fit "
                        f"the output_signature's {spec.text()}"
                    )
            yield nest.pack_sequence_as(self._signature, arrays)

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return self._signature


def _leaves_like(signature, element):
    """The components of a generator's element, read in the signature's structure (a list
    where the signature has one tensor is that tensor, as TensorFlow reads it)."""
    if isinstance(signature, TensorSpec):
        return [element]
    if isinstance(signature, ExtensionTypeSpec):  # an extension type's tensors
        if not isinstance(element, signature.value_type):
            raise ValueError(
                f"from_generator: an element {element!r} is not of the output_signature's "
                f"type {signature.value_type.__qualname__}"
            )
        return list(element._tensor_components())
    keys = nest.sorted_keys(signature) if isinstance(signature, dict) else range(len(signature))
    try:
        parts = [element[key] for key in keys]
        complete = len(element) == len(signature)
    except (KeyError, IndexError, TypeError):
        complete = False
    if not complete:
        raise ValueError(
            f"from_generator: an element {element!r} does not have the output_signature's "
            f"structure {signature}"
        )
    signatures = [signature[key] for key in keys]
    return [leaf for s, part in zip(signatures, parts) for leaf in _leaves_like(s, part)]


def _signature_of(types, shapes):
    """TensorSpecs from TensorFlow's older output_types and output_shapes (a shape is a
    tuple too, so the two are walked together, not flattened)."""
    if isinstance(types, dict):
        return {
            k: _signature_of(t, None if shapes is None else shapes[k]) for k, t in types.items()
        }
    if isinstance(types, (tuple, list)):
        shapes = [None] * len(types) if shapes is None else shapes
        return tuple(_signature_of(t, s) for t, s in zip(types, shapes))
    return TensorSpec(None if shapes is None else tuple(shapes), types)


def _array(value, dtype):
    """A generated value as an array of `dtype` (strings as tt.string tensors hold them)."""
    if dtype.is_string:
        return np.asarray(constant(value, dtype=dtype)._value)
    return np.asarray(value, dtype.as_numpy_dtype)
