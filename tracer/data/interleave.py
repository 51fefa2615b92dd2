"""Stages whose elements come from several datasets in turn, or are datasets
(tracer/data/specs.py says what a stage is): `interleave` and `flat_map` read the datasets a
function makes of each upstream element, a few at a time; `choose_from_datasets` and
`sample_from_datasets` read given datasets in the order that a dataset of indices, or
weighted draws, decide; `window` makes a dataset of each window of elements;
`group_by_window` one of each group of elements of a key, and reads what a function makes
of it."""

import os

import numpy as np

from tracer import nest
from tracer.data.sparse_elements import tensor_of
from tracer.data.specs import (
    INFINITE,
    UNKNOWN,
    DatasetSpec,
    combined_spec,
    refuse_sparse,
    spec_of_arrays,
)
from tracer.data.transforms import arguments_of, first_element
from tracer.errors import InvalidArgumentError
from tracer.signature import TensorSpec
from tracer.tensor_shape import is_unknown_rank

_END = object()


class Interleave:
    """TensorFlow's interleave: `map_func` of each upstream element is a dataset; `cycle_length`
    of them are open at once, and each in turn gives up to `block_length` elements. A dataset
    that ends closes its place and the turn moves on; the place is filled with the next
    upstream element's dataset when its turn comes again, and read at once. `flat_map` is
    one place of blocks of one: each dataset whole, in order.

    `map_func` runs eagerly, on the element's Tensors (a tuple's components as its
    arguments), where tf.data traces it once: its Python side effects happen per element."""

    def __init__(self, upstream, map_func, cycle_length, block_length, what):
        if not callable(map_func):
            raise TypeError(f"{what}: map_func must be callable, not {type(map_func).__name__}")
        self._upstream, self._function, self._what = upstream, map_func, what
        self._cycle = _usable_cores() if cycle_length in (None, -1) else _positive(cycle_length)
        self._block = 1 if block_length in (None, -1) else _positive(block_length)

    def arrays(self):
        inputs = self._upstream.arrays()
        places = [None] * self._cycle
        turn = given = 0
        more_inputs = True
        while True:
            if places[turn] is None:
                element = next(inputs, _END) if more_inputs else _END
                if element is not _END:
                    places[turn] = self._dataset_of(element).arrays()
                    continue
                more_inputs = False
                if all(place is None for place in places):
                    return
            else:
                value = next(places[turn], _END)
                if value is not _END:
                    yield value
                    given += 1
                    if given < self._block:
                        continue
                else:
                    places[turn] = None
            turn, given = (turn + 1) % self._cycle, 0

    @property
    def one_at_a_time(self):
        """Whether this is flat_map's: one dataset at a time, read whole."""
        return self._what == "flat_map"

    def _dataset_of(self, element):
        """The stage of the dataset `map_func` makes of `element`."""
        made = self._function(*arguments_of(element))
        stage = getattr(made, "_stage", None)  # (a tt.data.Dataset's)
        if stage is None:
            raise TypeError(
                f"{self._what}: map_func must return a tt.data.Dataset, not {type(made).__name__}"
            )
        return stage

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        """The element_spec of the dataset made of the upstream's first element (from a
        pass of its own), every dimension None (another element's dataset may have other
        sizes): tf.data traces `map_func` instead, and knows the sizes that cannot vary."""
        first = first_element(
            self._upstream,
            f"{self._what}: the upstream dataset has no element to call map_func on, so the "
            "element_spec is unknown",
        )
        spec = self._dataset_of(first).spec()  # (its sizes may differ from the next one's)
        return nest.pack_sequence_as(spec, [_unsized(s) for s in nest.flatten(spec)])


class Choose:
    """`choose_from_datasets`: for each index that `choices` gives, the next element of that
    dataset. A dataset that has ended ends the whole where `stop_on_empty`, else its index
    is passed over."""

    def __init__(self, stages, choices, stop_on_empty):
        spec = choices.spec()
        if not isinstance(spec, TensorSpec) or spec.shape != () or spec.dtype.name != "int64":
            raise TypeError(
                "Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar "
                f"`tt.int64` tensors but are {spec}."
            )
        self._spec = compatible_spec(stages)
        self._stages, self._choices, self._stop = stages, choices, bool(stop_on_empty)

    def arrays(self):
        readers = [stage.arrays() for stage in self._stages]
        ended = [False] * len(readers)
        for choice in self._choices.arrays():
            k = int(choice)
            if not 0 <= k < len(readers):
                raise InvalidArgumentError(
                    None, None, f"Selector index out of range: {k} >= {len(readers)}"
                )
            element = _END if ended[k] else next(readers[k], _END)
            if element is not _END:
                yield element
                continue
            if self._stop:
                return
            ended[k] = True
            if all(ended):
                return

    def cardinality(self):
        return _directed_cardinality(self._stages)

    def spec(self):
        return self._spec


def _directed_cardinality(stages):
    """TensorFlow's DirectedInterleave (choose_ and sample_from_datasets): infinite where one
    of the datasets is, whatever the choices or `stop_on_empty_dataset`; else unknown."""
    return INFINITE if any(stage.cardinality() == INFINITE for stage in stages) else UNKNOWN


class Sample:
    """`sample_from_datasets`: each element from a dataset drawn at random with `weights`
    (equal by default). A dataset that has ended ends the whole where `stop_on_empty`, else
    it is drawn no more. A seed gives the same draws in every process; each pass draws the
    same sequence unless `rerandomize_each_iteration` (as TensorFlow's default). The draws
    are numpy's, not TensorFlow's generator's."""

    def __init__(self, stages, weights, seed, stop_on_empty, rerandomize):
        self._spec = compatible_spec(stages)
        if weights is None:
            weights = np.ones(len(stages))
        weights = np.asarray(getattr(weights, "_value", weights), np.float64).reshape(-1)
        if len(weights) != len(stages):
            raise ValueError(
                "Invalid `weights`. `weights` should have the same length as `datasets` but "
                f"got `len(weights)={len(weights)}` vs. `len(datasets)={len(stages)}`."
            )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError(f"sample_from_datasets: weights must be finite and >= 0: {weights}")
        self._stages, self._weights, self._stop = stages, weights, bool(stop_on_empty)
        self._seeds = np.random.SeedSequence(seed)
        self._rerandomize = bool(rerandomize)
        self._first = None

    def arrays(self):
        if self._first is None or self._rerandomize:
            self._first = self._seeds.spawn(1)[0]
        rng = np.random.default_rng(self._first)
        readers = [stage.arrays() for stage in self._stages]
        weights = self._weights.copy()
        while weights.sum() > 0:
            k = int(rng.choice(len(readers), p=weights / weights.sum()))
            element = next(readers[k], _END)
            if element is not _END:
                yield element
            elif self._stop:
                return
            else:
                weights[k] = 0

    def cardinality(self):
        return _directed_cardinality(self._stages)

    def spec(self):
        return self._spec


class Window:
    """`window(size, shift, stride, drop_remainder)`: from every `shift`-th element (`size`
    by default) on, a window of up to `size` elements `stride` apart, each component of the
    element structure its own dataset of them (TensorFlow's nested datasets). Windows go on
    while one starts at an element; with `drop_remainder` they end at the first that is not
    full."""

    def __init__(self, upstream, size, shift, stride, drop_remainder, dataset):
        self._dataset = dataset  # what makes a tt.data.Dataset of a stage
        self._upstream, self._size = upstream, _at_least_one("size", size)
        self._shift = self._size if shift is None else _at_least_one("shift", shift)
        self._stride, self._drop = _at_least_one("stride", stride), bool(drop_remainder)

    def arrays(self):
        span = (self._size - 1) * self._stride + 1  # the elements a full window reaches over
        upstream, held, base, start, more = self._upstream.arrays(), [], 0, 0, True
        while True:
            while more and not held and base < start:  # elements between windows: skipped
                more = next(upstream, _END) is not _END
                base += more
            while more and base + len(held) < start + span:
                element = next(upstream, _END)
                if element is _END:
                    more = False
                else:
                    held.append(element)
            members = held[start - base :: self._stride][: self._size]
            if not members or (self._drop and len(members) < self._size):
                return
            refuse_sparse(members[0], "window")
            columns = zip(*(nest.flatten(member) for member in members))
            yield nest.pack_sequence_as(
                members[0], [self._dataset(_Listed(list(column))) for column in columns]
            )
            start += self._shift
            gone = min(start - base, len(held))
            del held[:gone]
            base += gone

    def cardinality(self):
        inner = self._upstream.cardinality()
        if inner < 0:
            return inner
        if self._drop:
            span = (self._size - 1) * self._stride + 1
            return 0 if inner < span else (inner - span) // self._shift + 1
        return -(-inner // self._shift)

    def spec(self):
        spec = self._upstream.spec()
        return nest.pack_sequence_as(spec, [DatasetSpec(s) for s in nest.flatten(spec)])


class GroupByWindow:
    """`group_by_window(key_func, reduce_func, window_size | window_size_func)`: the upstream
    elements grouped by `key_func`'s integer key; a group that reaches its window size
    (`window_size`, or `window_size_func(key)`) is a dataset given to `reduce_func(key,
    window)`, whose elements come next; at the end the groups left, in ascending order of
    their keys, as TensorFlow's. The functions run eagerly, on the elements' Tensors."""

    def __init__(self, upstream, key_func, reduce_func, window_size, window_size_func, dataset):
        if (window_size is None) == (window_size_func is None):
            raise ValueError(
                "Either the `window_size` argument or the `window_size_func` argument must be "
                "specified."
            )
        self._upstream, self._key_func, self._reduce_func = upstream, key_func, reduce_func
        self._window_size, self._window_size_func = window_size, window_size_func
        self._dataset = dataset  # what makes a tt.data.Dataset of a stage

    def arrays(self):
        groups = {}
        for element in self._upstream.arrays():
            key = self._key(element)
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) >= self._size_of(key):
                del groups[key]
                yield from self._reduced(key, group).arrays()
        for key in sorted(groups):
            yield from self._reduced(key, groups[key]).arrays()

    def _key(self, element):
        key = np.asarray(self._key_func(*arguments_of(element)))
        if key.shape != () or key.dtype.kind not in "iu":
            raise TypeError(f"group_by_window: key_func must return an integer scalar, not {key!r}")
        return int(key)

    def _size_of(self, key):
        if self._window_size is not None:
            return int(self._window_size)
        return int(np.asarray(self._window_size_func(tensor_of(np.int64(key)))))

    def _reduced(self, key, group):
        """The stage of the dataset `reduce_func` makes of a group's window."""
        made = self._reduce_func(tensor_of(np.int64(key)), self._dataset(_Elements(group)))
        stage = getattr(made, "_stage", None)  # (a tt.data.Dataset's)
        if stage is None:
            raise TypeError(
                "group_by_window: reduce_func must return a tt.data.Dataset, not "
                f"{type(made).__name__}"
            )
        return stage

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        """The element_spec of the dataset `reduce_func` makes of the first element's window
        alone, every dimension None (as Interleave's)."""
        first = first_element(
            self._upstream,
            "group_by_window: the upstream dataset has no element to call reduce_func on, so "
            "the element_spec is unknown",
        )
        spec = self._reduced(self._key(first), [first]).spec()
        return nest.pack_sequence_as(spec, [_unsized(s) for s in nest.flatten(spec)])


class _Elements:
    """A group's elements, as a stage."""

    def __init__(self, elements):
        self._elements = elements

    def arrays(self):
        yield from self._elements

    def cardinality(self):
        return len(self._elements)

    def spec(self):
        spec = spec_of_arrays(self._elements[0])
        for element in self._elements[1:]:
            spec = combined_spec(spec, spec_of_arrays(element))
        return spec


class _Listed:
    """A window's component: the arrays given, as a stage."""

    def __init__(self, arrays):
        self._arrays = arrays

    def arrays(self):
        yield from self._arrays

    def cardinality(self):
        return len(self._arrays)

    def spec(self):
        spec = TensorSpec(self._arrays[0].shape, self._arrays[0].dtype)
        for array in self._arrays[1:]:
            spec = combined_spec(spec, TensorSpec(array.shape, array.dtype))
        return spec


def compatible_spec(stages):
    """The element_spec the stages share (None where sizes differ), or TypeError where their
    structures or dtypes differ."""
    specs = [stage.spec() for stage in stages]
    if not specs:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    first = specs[0]
    for other in specs[1:]:
        if nest.structure_difference(first, other) is not None or any(
            a.dtype != b.dtype for a, b in zip(nest.flatten(first), nest.flatten(other))
        ):
            raise TypeError("Invalid `datasets`. `datasets` must have compatible element specs.")
        first = combined_spec(first, other)
    return first


def _unsized(spec):
    """`spec` with every dimension None (its rank kept, where known)."""
    if not isinstance(spec, TensorSpec) or is_unknown_rank(spec.shape):
        return spec
    return TensorSpec((None,) * len(spec.shape), spec.dtype)


def _usable_cores():
    """The cores this process may run on: TensorFlow's default cycle length."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _at_least_one(name, value):
    value = int(value)
    if value < 1:
        raise ValueError(f"window: {name} must be at least 1, not {value}")
    return value


def _positive(value):
    value = int(value)
    if value < 1:
        raise ValueError(f"cycle_length and block_length must be at least 1, not {value}")
    return value
