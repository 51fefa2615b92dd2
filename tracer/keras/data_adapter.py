"""What `fit`, `evaluate` and `predict` iterate: their data, as one epoch's batches at a time.

Keras takes numpy arrays (or tensors, or lists and dicts of them, for several inputs),
`tt.data.Dataset`s, Python generators and `tt.keras.utils.PyDataset`s; each becomes an
adapter here with `steps` (the batches of an epoch, None where only the end of the data
tells) and `batches()`, which yields one epoch's batches as a step gets them: `(x,)`,
`(x, y)` or `(x, y, sample_weight)`.

Arrays are cut into `batch_size` batches, the last one smaller, in a new random order for
each pass over them when shuffling (each epoch, unless `steps_per_epoch` makes an epoch a
part of a pass). A dataset yields its own batches: `(x,)`, `(x, y)` or
`(x, y, sample_weight)` tuples, or a lone x. With `steps_per_epoch`, an epoch takes that
many batches from an iterator that goes on where the previous epoch stopped (so that a
repeated dataset or an endless generator serves every epoch), as Keras does. `shuffle`
(fit's default) does not shuffle a dataset or a generator: Keras 3.15 warns so, and so does
this. It shuffles the order of a PyDataset's batches (not an endless one's).
"""

import math
import random
import types
import warnings

import numpy as np

from tracer import nest
from tracer.data.sparse_elements import SparseArrays, is_sparse
from tracer.keras.py_dataset import PyDataset
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import TensorLike

# Keras 3.15's warning where fit's `shuffle` (True unless told) meets data it cannot shuffle
_IGNORED = "`shuffle=True` was passed, but will be ignored since the data `x` was provided as "
_SHUFFLED_ALREADY = {  # by whether x is a dataset (else a generator)
    True: _IGNORED + "a tf.data.Dataset. The Dataset is expected to already be shuffled "
    "(via `.shuffle(buffer_size)`).",
    False: _IGNORED + "a generator. The generator is expected to yield already-shuffled data.",
}


def adapter(
    x,
    y=None,
    sample_weight=None,
    batch_size=None,
    steps=None,
    shuffle=False,
    what="fit",
    class_weight=None,
):
    """The adapter for Keras's `x` (and `y`, `sample_weight`) as `what` was given them;
    `class_weight` only to be refused for a generator, as Keras refuses it."""
    from tracer.data.dataset import Dataset

    if isinstance(x, PyDataset):
        _refuse_parts(what, "a PyDataset", y, sample_weight)
        endless = _batch_count(x) is None
        if shuffle and endless:
            warnings.warn(
                _IGNORED + "an infinite PyDataset. The PyDataset is expected to already be "
                "shuffled.",
                stacklevel=2,
            )
        return PyDatasetAdapter(x, steps, shuffle and not endless, what)
    if isinstance(x, Dataset) or _is_iterator(x):
        # (a batch_size is ignored, as Keras 3 ignores it: fit passes its own to the
        # evaluate of a validation dataset)
        _refuse_parts(
            what, "a dataset" if isinstance(x, Dataset) else "a generator", y, sample_weight
        )
        if class_weight is not None and isinstance(x, types.GeneratorType):
            raise ValueError(
                "Argument `class_weight` is not supported for Python generator inputs. "
                f"Received: class_weight={class_weight}"
            )
        if shuffle:
            warnings.warn(
                _SHUFFLED_ALREADY[isinstance(x, Dataset)],
                stacklevel=2,  # NOTE: in fit, as Keras's: shown once, not once per user's line
            )
        return StreamAdapter(x, steps)
    leaves = nest.flatten((x, y, sample_weight), expand_composites=False)
    if not all(leaf is None or _array_like(leaf) for leaf in leaves):
        # Keras 3's words, naming x whichever part is not arrays: a Python number (as in a
        # list of numbers, which Keras reads as a structure of inputs) is not an input
        raise ValueError(f"Unrecognized data type: x={x} (of type {type(x)})")
    return ArrayAdapter(x, y, sample_weight, batch_size or 32, steps, shuffle, what)


def _refuse_parts(what, kind, y, sample_weight):
    """A ValueError where `y` or `sample_weight` is given beside an x of `kind` whose
    elements hold the batches."""
    for name, value in (("y", y), ("sample_weight", sample_weight)):
        if value is not None:
            raise ValueError(
                f"{what}: `{name}` must not be given when x is {kind} (its elements hold "
                f"the batches), given {name}={_describe(value)}"
            )


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
        self._steps_given = steps is not None
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
                if self._steps_given:
                    warn_ran_out()
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

    def __init__(self, source, steps, length=None):
        self._source = source
        self._iterator = None
        self._continues = steps is not None
        # batches in a pass, where known
        self._length = _known_length(source) if length is None else length
        self.steps = int(steps) if steps is not None else self._length
        self._taken = 0  # batches taken from the current pass, as Keras's `_steps_seen`
        self.ran_out = False

    def batches(self):
        if not self._continues or self._iterator is None:
            self._iterator, self._taken = iter(self._source), 0  # a generator is its iterator
        taken = 0
        while not self._continues or taken < self.steps:
            if self._continues and self._taken == self._length:
                _interrupted_warning()
                break
            try:
                data = next(self._iterator)
            except StopIteration:
                self._iterator = None
                self.ran_out = taken == 0
                if self.ran_out or self._continues:
                    warn_ran_out()
                return
            taken += 1
            self._taken += 1
            yield data
        if self._taken == self._length:
            self._iterator = None  # the next epoch starts a new pass, as in Keras


class PyDatasetAdapter(StreamAdapter):
    """The batches of a PyDataset, read by index: in order, or in a new random order of the
    indices each epoch when shuffling (Python's `random`, as Keras's). Its on_epoch_begin
    runs before an epoch's first batch and its on_epoch_end after the last (not after an
    epoch that fit stops early). fit and evaluate also call on_epoch_end before they start,
    as Keras's do when they reset their iterator, so that it runs once more than the epochs
    there."""

    def __init__(self, dataset, steps, shuffle, what):
        self._dataset = dataset
        super().__init__(_Indexed(dataset, shuffle), steps, length=_batch_count(dataset))
        if what in ("fit", "evaluate"):
            dataset.on_epoch_end()

    def batches(self):
        self._dataset.on_epoch_begin()
        yield from super().batches()
        self._dataset.on_epoch_end()


class _Indexed:
    """A PyDataset's batches, one pass per `iter`."""

    def __init__(self, dataset, shuffle):
        self._dataset = dataset
        self._shuffle = shuffle

    def __iter__(self):
        count = _batch_count(self._dataset)
        if count is None:
            yield from self._dataset
            return
        indices = list(range(count))
        if self._shuffle:
            random.shuffle(indices)
        for index in indices:
            yield self._dataset[index]


def _batch_count(dataset):
    """A PyDataset's batches per epoch, None for one without end."""
    try:
        return dataset.num_batches
    except NotImplementedError:
        return None


def _interrupted_warning():
    # NOTE: Keras's words, although its fit goes on with the next epoch (on a new pass)
    warnings.warn(
        "Your input ran out of data; interrupting training. Make sure that your dataset or "
        "generator can generate at least `steps_per_epoch * epochs` batches. You may need to "
        "use the `.repeat()` function when building your dataset.",
        stacklevel=4,
    )


def warn_ran_out():
    """Keras's warning where an epoch finds the data used up before its steps_per_epoch (or
    a generator used up): shown at one place, so once."""
    warnings.warn(
        "Your input ran out of data; interrupting training. Make sure that your dataset or "
        "generator can generate at least `steps_per_epoch * epochs` batches. You may need to "
        "use the `.repeat()` function when building your dataset.",
        stacklevel=1,
    )


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
