"""`tt.data.Dataset`: an input pipeline as TensorFlow's tf.data builds one, in Python.

A dataset is a recipe: iterating it (a Python `for`, `iter`, `as_numpy_iterator`) starts
a new pass over its elements, so that `shuffle` reshuffles and `repeat` starts over as in
TensorFlow. An element is a structure (a tensor, a tuple, a dict, nested) whose leaves
come out as eager tracer Tensors; inside the pipeline they are numpy arrays, and functions
given to `map` and `filter` see Tensors and run under `tt.function`, compiled once per
element signature, as tf.data traces them.

A Dataset holds the last stage of its pipeline (the sources in sources.py, the
transformations in transforms.py; specs.py says what a stage is); each method returns a
new Dataset around a new stage.
"""

import numpy as np

from tracer import nest
from tracer.context import outside_trace, state
from tracer.data import (
    buckets,
    dropping,
    file_cache,
    files,
    interleave,
    random_source,
    resample,
    saved,
    sources,
    transforms,
)
from tracer.data.optional import Optional
from tracer.data.options import Options
from tracer.data.ragged_elements import is_ragged
from tracer.data.sparse_elements import is_sparse, tensor_of
from tracer.data.specs import INFINITE, UNKNOWN
from tracer.errors import InvalidArgumentError, OutOfRangeError, RunsAsPython
from tracer.ir import format_location, user_location
from tracer.ragged_tensor import require_int64_splits
from tracer.tensor import Tensor, constant

AUTOTUNE = -1
_NONE = object()  # no element


class Dataset:
    """A pipeline's elements. Sources are static methods (`from_tensor_slices`,
    `from_tensors`, `range`, `zip`, `from_generator`); transformations are methods that
    return a new dataset and leave this one as it was."""

    def __init__(self, stage, kind=None, options=None):
        self._stage = stage
        self._kind = kind  # the name its repr shows, where not its stage's (`_kind_of`)
        self._options = options  # what `with_options` set, kept by later transformations

    # --- iterating ------------------------------------------------------------------------

    def __iter__(self):
        return _Iterator(self._stage, tensor_of)

    def as_numpy_iterator(self):
        """The elements with numpy arrays (and numpy scalars) as leaves."""
        return _Iterator(self._stage, _numpy_leaf)

    def __len__(self):
        count = self._stage.cardinality()
        if count == INFINITE:
            raise TypeError("the dataset is infinite")
        if count == UNKNOWN:
            raise TypeError("the dataset's length is unknown")
        return count

    def __bool__(self):
        return True

    def cardinality(self):
        """How many elements, as an int64 scalar: INFINITE (-1) or UNKNOWN (-2) where it
        cannot be told without iterating (after `filter`, `from_generator`)."""
        return constant(np.int64(self._stage.cardinality()))

    @property
    def element_spec(self):
        """The structure of TensorSpecs of an element: a dimension that differs between
        elements (a last partial batch) is None."""
        return self._stage.spec()

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception as error:  # NOTE: a map tracer cannot trace runs the user's function
            # for its spec, which may raise; a repr shows why rather than raising
            spec = f"unknown ({type(error).__name__}: {error})"
        return f"<{self._kind or _kind_of(self._stage)} element_spec={spec}>"

    def reduce(self, initial_state, reduce_func, name=None):
        """`reduce_func(state, element)` over every element, from `initial_state` (a
        structure of tensors, or values converted as TensorFlow converts them: a Python int
        is int32), under `tt.function` as `map`'s function. Each new state must have the
        initial state's dtypes (TypeError otherwise, as TensorFlow's); its shapes may
        change."""
        _refuse_trace("reduces a tt.data.Dataset")
        state = transforms.reduced(self._stage, initial_state, reduce_func)
        return nest.pack_sequence_as(state, [tensor_of(a) for a in nest.flatten(state)])

    def _then(self, stage):
        """The dataset of `stage`, a transformation of this one's: its options go on."""
        return Dataset(stage, options=self._options)

    # --- transformations ---------------------------------------------------------------------

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):  # fmt: skip
        return self._then(transforms.Batch(self._stage, batch_size, drop_remainder))

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=None, name=None):
        """Batches of consecutive elements, each component whose shape is not fully known a
        RaggedTensor (a ragged dimension where it had an unknown one), as TensorFlow's."""
        require_int64_splits(row_splits_dtype, "tt.data.Dataset.ragged_batch")
        return self._then(transforms.RaggedBatch(self._stage, batch_size, drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):  # fmt: skip
        stage = transforms.PaddedBatch(
            self._stage, batch_size, padded_shapes, padding_values, drop_remainder
        )
        return self._then(stage)

    def unbatch(self, name=None):
        return self._then(transforms.Unbatch(self._stage))

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """The rows of the batches batched again, `batch_size` a batch, as TensorFlow's
        rebatch of one size: `unbatch().batch(batch_size, drop_remainder)`."""
        return self.unbatch().batch(batch_size, drop_remainder=drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        return self._then(
            transforms.Shuffle(self._stage, buffer_size, seed, reshuffle_each_iteration)
        )

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        return self._then(transforms.Map(self._stage, map_func))

    def filter(self, predicate, name=None):
        return self._then(transforms.Filter(self._stage, predicate))

    def repeat(self, count=None, name=None):
        return self._then(transforms.Repeat(self._stage, count))

    def take(self, count, name=None):
        return self._then(transforms.Take(self._stage, count))

    def skip(self, count, name=None):
        return self._then(transforms.Skip(self._stage, count))

    def enumerate(self, start=0, name=None):
        return self._then(transforms.Enumerate(self._stage, start))

    def concatenate(self, dataset, name=None):
        return self._then(transforms.Concatenate(self._stage, _stage_of(dataset)))

    def cache(self, filename="", name=None):
        """The first complete pass's elements, given again by later passes: kept in memory,
        or with a `filename` in a file beside it, which later programs read too."""
        if filename:
            return self._then(file_cache.FileCache(self._stage, filename))
        return self._then(transforms.Cache(self._stage))

    def flat_map(self, map_func, name=None):
        """The elements of the dataset `map_func` makes of each element, one dataset after
        another (`map_func` runs eagerly, on the element's Tensors)."""
        return self._then(interleave.Interleave(self._stage, map_func, 1, 1, "flat_map"))

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None, deterministic=None, name=None):  # fmt: skip
        """The datasets `map_func` makes of the elements, `cycle_length` at a time (by
        default the usable cores, as TensorFlow's AUTOTUNE), `block_length` elements (1) from
        each in turn: TensorFlow's order, with or without `num_parallel_calls`."""
        stage = interleave.Interleave(
            self._stage, map_func, cycle_length, block_length, "interleave"
        )
        return self._then(stage)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):  # fmt: skip
        """Groups of elements of one `key_func` key, `window_size` (or `window_size_func(key)`)
        at most, each a dataset given to `reduce_func(key, window)`, whose elements come out:
        a group as soon as it is full, the groups left at the end in the order of their keys
        (the functions run eagerly, on the elements' Tensors)."""
        stage = interleave.GroupByWindow(
            self._stage, key_func, reduce_func, window_size, window_size_func, Dataset
        )
        return self._then(stage)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of `size` elements, `stride` apart, one every `shift` (`size`) elements:
        each a dataset (a structure of datasets, one per component); `flat_map` them into
        tensors, as `window(3).flat_map(lambda w: w.batch(3))`."""
        window = interleave.Window(self._stage, size, shift, stride, drop_remainder, Dataset)
        return self._then(window)

    def take_while(self, predicate, name=None):
        return self._then(transforms.TakeWhile(self._stage, predicate))

    def scan(self, initial_state, scan_func, name=None):
        return self._then(transforms.Scan(self._stage, initial_state, scan_func))

    def shard(self, num_shards, index, name=None):
        return self._then(transforms.Shard(self._stage, num_shards, index))

    def unique(self, name=None):
        return self._then(transforms.Unique(self._stage))

    def ignore_errors(self, log_warning=False, name=None):
        """The elements, those whose making raised an error left out (a `map` or `filter`
        that raises on an element; tracer/data/dropping.py says which errors end the pass
        instead). With `log_warning`, each error is logged."""
        return self._then(dropping.IgnoreErrors(self._stage, log_warning))

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False, no_padding=False, drop_remainder=False, name=None):  # fmt: skip
        """Batches of elements of similar `element_length_func` length (an int32 scalar),
        each padded as `padded_batch` pads, in TensorFlow's order (tracer/data/buckets.py)."""
        stage = buckets.BucketBySequenceLength(
            self._stage,
            element_length_func,
            bucket_boundaries,
            bucket_batch_sizes,
            padded_shapes,
            padding_values,
            pad_to_bucket_boundary,
            no_padding,
            drop_remainder,
        )
        return self._then(stage)

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None):  # fmt: skip
        """`(class, element)` pairs whose classes (`class_func(element)`, an integer) come in
        the proportions `target_dist` (tracer/data/resample.py)."""
        stage = resample.RejectionResample(self._stage, class_func, target_dist, initial_dist, seed)
        return self._then(stage)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None):  # fmt: skip
        """The same elements, written under `path` by the first complete pass and read from
        there by later passes and programs (tracer/data/saved.py); tracer writes its own
        uncompressed files, in order (`reader_func` and `shard_func` are not supported)."""
        _refuse_functions("snapshot", reader_func=reader_func, shard_func=shard_func)
        return self._then(saved.Snapshot(self._stage, path))

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        """Write the elements into the directory `path`, for `tt.data.Dataset.load`
        (tracer's own uncompressed files, tracer/data/saved.py)."""
        _refuse_trace("saves a tt.data.Dataset")
        _refuse_functions("save", shard_func=shard_func, checkpoint_args=checkpoint_args)
        saved.save(self._stage, path)

    def apply(self, transformation_func):
        """`transformation_func(self)`, which must return a dataset."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(
                f"`transformation_func` must return a `tt.data.Dataset` object. Got {type(result)}."
            )
        return result

    def get_single_element(self, name=None):
        """The dataset's only element, as iterating gives it; InvalidArgumentError where it
        has none or more than one."""
        elements = iter(self)
        first = next(elements, _NONE)
        if first is _NONE:
            raise InvalidArgumentError(None, None, "Dataset was empty.")
        if next(elements, _NONE) is not _NONE:
            raise InvalidArgumentError(None, None, "Dataset had more than one element.")
        return first

    def prefetch(self, buffer_size, name=None):
        """The same elements: tracer's pipeline runs in the caller's thread, so there is
        nothing to overlap (the argument is accepted as TensorFlow takes it)."""
        return Dataset(self._stage, "_PrefetchDataset", self._options)

    def with_options(self, options, name=None):
        """The same elements, with `options` (tt.data.Options) merged into the dataset's:
        accepted and given back by `options()`; none changes what the pipeline computes."""
        if not isinstance(options, Options):
            raise TypeError(f"with_options takes a tt.data.Options, not {type(options).__name__}")
        merged = (self._options or Options()).merge(options)  # (a copy: `options` may change)
        return Dataset(self._stage, "_OptionsDataset", merged)

    def options(self):
        """The options set on this dataset (tt.data.Options; every one None where none was)."""
        return Options().merge(self._options or Options())  # (a copy: the dataset's stay)

    # --- sources -------------------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        _refuse_symbolic(tensors)
        return Dataset(sources.TensorSlices(tensors))

    @staticmethod
    def from_tensors(tensors, name=None):
        _refuse_symbolic(tensors)
        return Dataset(sources.Tensors(tensors))

    @staticmethod
    def range(*args, output_type="int64", name=None, dtype=None):
        """`range(stop)`, `range(start, stop[, step])` of `output_type` (int64), as
        TensorFlow's; `dtype` is tracer's older name for it (TensorFlow 2.21 takes it and
        ignores it)."""
        _refuse_symbolic(args)
        return Dataset(sources.Range(*args, dtype=output_type if dtype is None else dtype))

    @staticmethod
    def zip(*datasets, name=None):
        """The datasets' elements side by side: `zip((a, b))`, or `zip(a, b)` as TensorFlow
        2.21 also takes them."""
        structure = datasets[0] if len(datasets) == 1 else datasets
        stages = nest.pack_sequence_as(structure, [_stage_of(d) for d in nest.flatten(structure)])
        return Dataset(sources.Zip(stages))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The names of the files that match the glob pattern(s), sorted, then shuffled
        (unless `shuffle=False`) with `seed` as `shuffle` does; InvalidArgumentError where
        none matches."""
        names = files.matching_files(file_pattern)
        stage = sources.TensorSlices(files.string_array(names))
        if shuffle is None or shuffle:
            stage = transforms.Shuffle(stage, len(names), seed, True)
        return Dataset(stage)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """Endless int64 scalars drawn at random (tracer/data/random_source.py): the same
        at every pass with a `seed`, unless `rerandomize_each_iteration`."""
        return Dataset(random_source.Random(seed, rerandomize_each_iteration))

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
        """The elements `Dataset.save` wrote into `path`, with their element_spec and
        cardinality; NotFoundError where it holds none, DataLossError (also a ValueError)
        where its files are not what tracer writes."""
        _refuse_functions("load", reader_func=reader_func)
        return Dataset(saved.Loaded(path, element_spec))

    @staticmethod
    def counter(start=0, step=1, dtype="int64", name=None):
        return Dataset(sources.Counter(start, step, dtype))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """For each index `choice_dataset` gives, the next element of that dataset."""
        stages = [_stage_of(d) for d in datasets]
        choices = _stage_of(choice_dataset)
        return Dataset(interleave.Choose(stages, choices, stop_on_empty_dataset))

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False, rerandomize_each_iteration=None):  # fmt: skip
        """Each element from a dataset drawn at random with `weights` (numpy's draws)."""
        stages = [_stage_of(d) for d in datasets]
        stage = interleave.Sample(
            stages, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration
        )
        return Dataset(stage)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None, name=None):  # fmt: skip
        stage = sources.Generator(
            generator, args or (), output_signature, output_types, output_shapes
        )
        return Dataset(stage)


class TextLineDataset(Dataset):
    """The lines of text files (tracer/data/files.py): `filenames` a name, names, or a dataset
    of names; `compression_type` "", "GZIP" or "ZLIB"; with `num_parallel_reads` of 2 or
    more, that many files are read in turns of a line each, TensorFlow's order for it."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):  # fmt: skip
        names = files.file_names(filenames)
        if num_parallel_reads in (None, 1):
            stage = files.TextLines(names, compression_type)
        else:
            if isinstance(names, list):
                names = sources.TensorSlices(files.string_array(names))
            stage = interleave.Interleave(
                names,
                lambda name: TextLineDataset(name, compression_type),
                num_parallel_reads,
                1,
                "TextLineDataset",
            )
        super().__init__(stage, "TextLineDatasetV2")


class _Iterator:
    """A pass over a dataset's elements, each leaf made by `leaf(array)`.

    Pulling an element while a tt.function is traced stops the trace before the element is
    taken (RunsAsPython): tracer's pipelines run in Python, so such a function runs as
    Python at each call (tracer/function.py), and its first call gets the first element,
    as in TensorFlow, where the iterator is an op of the graph.

    A `tt.train.Checkpoint` saves an iterator's position: how many elements it has given
    (`position`, an int64 Variable made the first time a checkpoint walks the iterator).
    Restored, the iterator starts a new pass and passes over that many elements at its next
    element. TensorFlow saves the pipeline's own state (a shuffle's buffer, a generator's);
    replaying gives the same elements where the pipeline is deterministic, and new draws
    where it shuffles or draws without a seed (docs/data.md).
    """

    def __init__(self, stage, leaf):
        self._stage = stage
        self._arrays = stage.arrays()
        self._leaf = leaf
        self._given = 0  # elements taken from `_arrays`, including those passed over
        self._position = None  # the checkpointed position's Variable, once checkpointed
        self._written = 0  # the value this iterator last gave `_position`

    def __iter__(self):
        return self

    def _checkpoint_children(self):
        """{"position": Variable}, its value the elements given so far; or, while a restored
        position waits for the next element, that position."""
        if self._position is None:
            from tracer.variable import Variable  # (variables build on the ops; data on less)

            with outside_trace():
                self._position = Variable(
                    np.int64(self._given), trainable=False, name="iterator_position"
                )
            self._written = self._given
        elif int(self._position._value) == self._written:  # no restored position waits
            with outside_trace():
                self._position.assign(np.int64(self._given))
            self._written = self._given
        return {"position": self._position}

    def _replay(self, position):
        """A new pass, `position` elements passed over: where a restored checkpoint was."""
        self._arrays = self._stage.arrays()
        self._given, self._written = 0, position
        for _ in range(position):
            if next(self._arrays, _NONE) is _NONE:
                break
            self._given += 1

    def next(self):
        """The next element (TensorFlow's iterators have this name too)."""
        return self.__next__()

    def get_next(self):
        """The next element; OutOfRangeError at the end, as TensorFlow's `get_next`."""
        try:
            return self.__next__()
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        """The next element as a `tt.experimental.Optional`, an empty one at the end."""
        try:
            element = self.__next__()
        except StopIteration:
            return Optional.empty(self.element_spec)
        return Optional(element, self.element_spec, True)

    @property
    def element_spec(self):
        """The dataset's element_spec."""
        return self._stage.spec()

    def __next__(self):
        _refuse_trace("iterates a tt.data.Dataset")
        if self._position is not None and int(self._position._value) != self._written:
            self._replay(int(self._position._value))  # a checkpoint restored it
        element = next(self._arrays)
        self._given += 1
        leaves = [a if isinstance(a, Dataset) else self._leaf(a) for a in nest.flatten(element)]
        return nest.pack_sequence_as(element, leaves)


# the class name TensorFlow's repr shows for the dataset each stage makes (its own
# implementation's: enumerate zips with a counter, from_generator flat-maps a range)
_KINDS = {
    "TensorSlices": "_TensorSliceDataset",
    "Tensors": "_TensorDataset",
    "Range": "_RangeDataset",
    "Zip": "_ZipDataset",
    "Generator": "_FlatMapDataset",
    "Counter": "_ScanDataset",
    "Batch": "_BatchDataset",
    "PaddedBatch": "_PaddedBatchDataset",
    "Unbatch": "_UnbatchDataset",
    "Shuffle": "_ShuffleDataset",
    "Map": "_MapDataset",
    "Filter": "_FilterDataset",
    "Repeat": "_RepeatDataset",
    "Take": "_TakeDataset",
    "AssertCardinality": "_AssertCardinalityDataset",
    "Skip": "_SkipDataset",
    "Enumerate": "_ZipDataset",
    "Concatenate": "_ConcatenateDataset",
    "Cache": "CacheDataset",
    "FileCache": "CacheDataset",
    "Window": "_WindowDataset",
    "Scan": "_ScanDataset",
    "TakeWhile": "_TakeWhileDataset",
    "Shard": "_ShardDataset",
    "Unique": "_UniqueDataset",
    "IgnoreErrors": "_IgnoreErrorsDataset",
    "BucketBySequenceLength": "_GroupByWindowDataset",
    "RejectionResample": "_DirectedInterleaveDataset",
    "Snapshot": "_MapDataset",
    "Loaded": "_LoadDataset",
    "Random": "_RandomDataset",
    "Choose": "_DirectedInterleaveDataset",
    "Sample": "_DirectedInterleaveDataset",
    "_Listed": "_VariantDataset",
}


def _refuse_trace(what):
    """RunsAsPython where a tt.function is being traced: tracer's datasets run in Python, so
    the function runs as Python at each call (tracer/function.py)."""
    if state.trace is not None:
        where = format_location(user_location())
        raise RunsAsPython(
            f"{what}{f' at {where}' if where else ''}; tracer's "
            "datasets run in Python, so it runs as Python at each call (each step's ops "
            "eagerly, new elements each call). For compiled speed, iterate outside and "
            "pass each batch to a tt.function step, as Model.fit does."
        )


def _refuse_symbolic(values):
    """RunsAsPython where a dataset is made of a tensor a traced tt.function computes (as
    `range(n)` of its argument n): made as Python at each call, it has the value."""
    if state.trace is not None and any(
        isinstance(v, Tensor) and v._value is None for v in nest.flatten(values)
    ):
        _refuse_trace("makes a tt.data.Dataset of a tensor computed when it runs")


def _refuse_functions(method, **given):
    """NotImplementedError for the functions tracer's `method` does not take."""
    for argument, value in given.items():
        if value is not None:
            raise NotImplementedError(
                f"tt.data.Dataset.{method}: {argument} is not supported (tracer writes and "
                "reads its files in order, one pass)"
            )


def _kind_of(stage):
    """The name of the dataset `stage` makes, as TensorFlow's repr shows it."""
    name = type(stage).__name__
    if name == "Interleave":
        return "_FlatMapDataset" if stage.one_at_a_time else "_InterleaveDataset"
    return _KINDS.get(name, f"{name}Dataset")


def _numpy_leaf(value):
    """An element's leaf as as_numpy_iterator gives it: a 0-d array's scalar (a string slice
    is its bytes already), a sparse one's dense array, as TensorFlow's."""
    if is_sparse(value):
        return value.dense()
    if is_ragged(value):
        return value.numpy()
    return value[()] if getattr(value, "ndim", None) == 0 else value


def _stage_of(dataset):
    if not isinstance(dataset, Dataset):
        raise TypeError(f"expected a tt.data.Dataset, not {type(dataset).__name__}")
    return dataset._stage
