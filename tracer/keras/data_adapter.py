"""What `fit`, `evaluate` and `predict` iterate: their data, as one epoch's batches at a time.

Keras takes numpy arrays (or tensors, or lists and dicts of them, for several inputs),
`tt.data.Dataset`s and Python generators; each becomes an adapter here with `steps` (the
batches of an epoch, None where only the end of the data tells) and `batches()`, which
yields one epoch's batches as a step gets them: `(x,)`, `(x, y)` or `(x, y, sample_weight)`.

Arrays are cut into `batch_size` batches, the last one smaller, in a new random order for
each pass over them when shuffling (each epoch, unless `steps_per_epoch` makes an epoch a
part of a pass). A dataset yields its own batches: `(x,)`, `(x, y)` or
`(x, y, sample_weight)` tuples, or a lone x. With `steps_per_epoch`, an epoch takes that
many batches from an iterator that goes on where the previous epoch stopped (so that a
repeated dataset or an endless generator serves every epoch), as Keras does.
"""

import math
import types
import warnings

import numpy as np

from tracer import nest
from tracer.data.sparse_elements import SparseArrays, is_sparse
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import TensorLike


def adapter(x, y=None, sample_weight=None, batch_size=None, steps=None, shuffle=False, what="fit"):
    """The adapter for Keras's `x` (and `y`, `sample_weight`) as `what` was given them."""
    from tracer.data.dataset import Dataset

    if isinstance(x, Dataset) or _is_iterator(x):
        for name, value in (("y", y), ("sample_weight", sample_weight), ("batch_size", batch_size)):
            if value is not None:
                kind = "a dataset" if isinstance(x, Dataset) else "a generator"
                raise ValueError(
                    f"{what}: `{name}` must not be given when x is {kind} (its elements hold "
                    f"the batches), given {name}={_describe(value)}"
                )
        if shuffle and (isinstance(x, Dataset) or isinstance(x, types.GeneratorType)):
            _warn_shuffle_ignored(isinstance(x, Dataset))
        return StreamAdapter(x, steps)
    leaves = nest.flatten((x, y, sample_weight), expand_composites=False)
    if not all(leaf is None or _array_like(leaf) for leaf in leaves):
        # Keras 3's words, naming x whichever part is not arrays: a Python number (as in a
        # list of numbers, which Keras reads as a structure of inputs) is not an input
        raise ValueError(f"Unrecognized data type: x={x} (of type {type(x)})")
    return ArrayAdapter(x, y, sample_weight, batch_size or 32, steps, shuffle, what)


_SHUFFLE_IGNORED = {
    True: "`shuffle=True` was passed, but will be ignored since the data `x` was provided as "
    "a tf.data.Dataset. The Dataset is expected to already be shuffled (via "
    "`.shuffle(buffer_size)`).",
    False: "`shuffle=True` was passed, but will be ignored since the data `x` was provided "
    "as a generator. The generator is expected to yield already-shuffled data.",
}


_shuffles_warned = set()


def _warn_shuffle_ignored(dataset):
    """Keras 3's warning that fit's `shuffle=True` (its default) leaves a dataset or
    generator as it is. Keras warns from its library's line, which Python shows once per
    process; tracer keeps count itself, as converting a function with AutoGraph resets
    Python's record of the warnings shown."""
    if dataset not in _shuffles_warned:
        _shuffles_warned.add(dataset)
        warnings.warn(_SHUFFLE_IGNORED[dataset], stacklevel=3)


def split_for_validation(x, y, sample_weight, validation_split):
    """(training, validation) parts of arrays: the last `validation_split` of the samples
    are held out, before any shuffling, as Keras does."""
    if not 0.0 < validation_split < 1.0:
        raise ValueError(f"validation_split must be between 0 and 1, not {validation_split}")
    flat = nest.flatten((x, y, sample_weight), expand_composites=False)
    arrays = [_as_array(a) for a in flat if a is not None and _is_array(a)]
    if not arrays or len(arrays) != sum(a is not None for a in flat):
        raise ValueError(
            "validation_split works on arrays only; give a dataset or generator "
            "validation_data instead"
        )
    count = _sample_count(arrays, "fit")
    cut = int(math.floor(count * (1.0 - validation_split)))
    if cut == 0 or cut == count:
        raise ValueError(
            f"validation_split={validation_split} of {count} samples leaves "
            f"{'no training' if cut == 0 else 'no validation'} samples"
        )

    def part(structure, where):
        return (
            nest.pack_sequence_as(
                structure,
                [
                    None if a is None else _rows(_as_array(a), where)
                    for a in nest.flatten(structure, expand_composites=False)
                ],
                expand_composites=False,
            )
            if structure is not None
            else None
        )

    head, tail = slice(0, cut), slice(cut, count)
    return (
        (part(x, head), part(y, head), part(sample_weight, head)),
        (part(x, tail), part(y, tail), part(sample_weight, tail)),
    )


def pack(x, y=None, sample_weight=None):
    """Keras's pack_x_y_sample_weight: the batch a step gets, `(x,)`, `(x, y)` or
    `(x, y, sample_weight)` (a subclass's train_step may unpack `x, y = data`)."""
    if y is None:
        return (x,)
    return (x, y) if sample_weight is None else (x, y, sample_weight)


def unpack(data):
    """Keras's unpack_x_y_sample_weight: `(x, y, sample_weight)` of one batch."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(
        f"a batch is x, (x,), (x, y) or (x, y, sample_weight); this one is a tuple of {len(data)}"
    )


class ArrayAdapter:
    """Batches of arrays (numpy arrays, tracer tensors, nested in lists, tuples, dicts)."""

    ran_out = False

    def __init__(self, x, y, sample_weight, batch_size, steps, shuffle, what):
        if x is None:
            raise ValueError(f"{what}: x is None; give the inputs")
        self._leaves = [
            None if a is None else _as_array(a)
            for a in nest.flatten((x, y, sample_weight), expand_composites=False)
        ]
        self._structure = (x, y, sample_weight)
        self.num_samples = _sample_count([a for a in self._leaves if a is not None], what)
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"{what}: batch_size must be a positive integer, not {batch_size!r}")
        self.batch_size = int(batch_size)
        self._whole = math.ceil(self.num_samples / self.batch_size)
        self.steps = self._whole if steps is None else min(int(steps), self._whole)
        self._shuffle = shuffle
        self._pass = None  # the batches of the current pass over the data
        self._taken = 0  # how many of them epochs have taken

    def batches(self):
        """One epoch's batches: `steps` of them from the current pass over the data, fewer
        where the pass ends first; the epoch after a pass's end starts a new one, in a new
        order when shuffling. Keras's EpochIterator does the same, so that with
        `steps_per_epoch` an epoch goes on where the previous one stopped."""
        if self._pass is None:
            self._pass, self._taken = self._one_pass(), 0
        for _ in range(self.steps):
            if self._taken == self._whole:
                break
            self._taken += 1
            yield next(self._pass)
        if self._taken == self._whole:
            self._pass = None

    def _one_pass(self):
        order = None
        if self._shuffle == "batch":
            starts = np.random.permutation(self._whole) * self.batch_size
        else:
            starts = np.arange(self._whole) * self.batch_size
            if self._shuffle:
                order = np.random.permutation(self.num_samples)
        for start in starts:
            where = slice(start, start + self.batch_size)
            rows = where if order is None else order[where]
            leaves = [None if a is None else _rows(a, rows) for a in self._leaves]
            yield pack(*nest.pack_sequence_as(self._structure, leaves, expand_composites=False))


class StreamAdapter:
    """Batches that a dataset or generator makes. `ran_out` is set when an epoch found no
    batch at all (a generator already used up): fit then stops, as Keras does."""

    def __init__(self, source, steps):
        self._source = source
        self._iterator = None
        self._continues = steps is not None
        self.steps = int(steps) if steps is not None else _known_length(source)
        self.ran_out = False

    def batches(self):
        if not self._continues or self._iterator is None:
            self._iterator = iter(self._source)  # a generator's iterator is itself
        taken = 0
        while not self._continues or taken < self.steps:
            try:
                data = next(self._iterator)
            except StopIteration:
                self._iterator = None
                self.ran_out = taken == 0
                return
            taken += 1
            yield data


def _known_length(source):
    """The number of batches of a dataset of known, finite length (else None)."""
    try:
        return len(source)
    except TypeError:
        return None


def _is_iterator(value):
    return hasattr(value, "__next__") and hasattr(value, "__iter__")


def _is_array(value):
    return isinstance(value, (np.ndarray, TensorLike, list, np.generic, SparseTensor))


def _array_like(value):
    """An array Keras takes as data: numpy's, a tensor, or what converts with __array__."""
    return isinstance(value, (np.ndarray, np.generic, TensorLike, SparseTensor)) or hasattr(
        value, "__array__"
    )


def _as_array(value):
    """An input's arrays: a numpy array, or a SparseTensor's (sliced by rows as a dataset
    slices it)."""
    if isinstance(value, SparseTensor):
        return SparseArrays.of(value)
    if isinstance(value, TensorLike):
        return value.numpy()
    return np.asarray(value)


def _rows(array, rows):
    """The rows `rows` (a slice or positions) of an input, a SparseTensor for a sparse one."""
    if is_sparse(array):
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(array.shape[0]))
        return array[rows].tensor()
    return array[rows]


def _sample_count(arrays, what):
    counts = {a.shape[0] if a.ndim else None for a in arrays}
    if None in counts:
        raise ValueError(f"{what}: every input needs a batch axis; a scalar was given")
    if len(counts) != 1:
        raise ValueError(
            f"{what}: the inputs, targets and sample weights have different numbers of "
            f"samples: {sorted(counts)}"
        )
    return counts.pop()


def _describe(value):
    shape = getattr(value, "shape", None)
    return f"an array of shape {tuple(shape)}" if shape is not None else repr(value)
