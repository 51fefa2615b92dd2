"""The stages that datasets' methods add to a pipeline (tracer/data/specs.py says what a stage
is): batches, a shuffled order, mapped and filtered elements, repeats, slices of the
sequence, numbering, concatenation, a cache."""

import functools
import itertools

import numpy as np

from tracer import nest
from tracer.data import dropping, ragged_elements, sparse_elements, traced_specs
from tracer.data.sources import as_arrays
from tracer.data.sparse_elements import is_sparse, tensor_of
from tracer.data.specs import (
    INFINITE,
    UNKNOWN,
    combined_spec,
    leaf_spec,
    packed_spec,
    refuse_sparse,
    spec_leaves,
    spec_of_arrays,
)
from tracer.dtypes import as_dtype
from tracer.errors import FailedPreconditionError, InvalidArgumentError, RunsAsPython
from tracer.py_function import raised_while_traced
from tracer.ragged_tensor import RaggedTensorSpec
from tracer.signature import TensorSpec
from tracer.sparse_tensor import SparseTensorSpec
from tracer.tensor_shape import is_unknown_rank


class Batch:
    """Consecutive elements stacked along a new leading axis; the last batch is smaller
    unless `drop_remainder`."""

    def __init__(self, upstream, batch_size, drop_remainder):
        self._upstream, self._size = upstream, _positive("batch_size", batch_size)
        self._drop = bool(drop_remainder)

    def arrays(self):
        sliced = _rows_of(self._upstream)
        if sliced is not None:  # rows of from_tensor_slices: each batch gathered at once
            structure, rows = sliced
            leaves = nest.flatten(structure)
            for group in _groups(rows, self._size, self._drop):
                taken = np.array(group, dtype=np.intp)
                yield nest.pack_sequence_as(structure, [leaf[taken] for leaf in leaves])
            return
        # the map's function run on each batch at once (element by element where an error
        # leaves an element out: ignore_errors, tracer/data/dropping.py)
        if isinstance(self._upstream, Map) and dropping.active() is None:
            yield from self._upstream.batches(self._size, self._drop)
            return
        for rows in _groups(self._upstream.arrays(), self._size, self._drop):
            yield _stacked(rows, "batch")

    def cardinality(self):
        return _batches(self._upstream.cardinality(), self._size, self._drop)

    def spec(self):
        return _batched_spec(self._upstream.spec(), self._size if self._drop else None)


class RaggedBatch:
    """`ragged_batch`: consecutive elements batched, each component whose shape is not fully
    known as a ragged tensor with a ragged dimension for each dimension up to its last
    unknown one (tracer/data/ragged_elements.py), the others stacked as `batch` stacks them."""

    def __init__(self, upstream, batch_size, drop_remainder):
        self._upstream, self._size = upstream, _positive("batch_size", batch_size)
        self._drop = bool(drop_remainder)

    def arrays(self):
        ranks = [_element_ragged_rank(s) for s in spec_leaves(self._upstream.spec())]
        for rows in _groups(self._upstream.arrays(), self._size, self._drop):
            flat = [nest.flatten(row) for row in rows]
            leaves = []
            for k, rank in enumerate(ranks):
                parts = [row[k] for row in flat]
                if rank is None:
                    leaves.append(nest.flatten(_stacked([[p] for p in parts], "ragged_batch"))[0])
                else:
                    ragged = [ragged_elements.with_ragged_rank(p, rank) for p in parts]
                    leaves.append(ragged_elements.stack(ragged))
            yield nest.pack_sequence_as(rows[0], leaves)

    def cardinality(self):
        return _batches(self._upstream.cardinality(), self._size, self._drop)

    def spec(self):
        spec = self._upstream.spec()
        size = self._size if self._drop else None
        leaves = []
        for s in spec_leaves(spec):
            rank = _element_ragged_rank(s)
            if rank is None:
                leaves.append(_batched_spec(s, size))
            else:
                leaves.append(RaggedTensorSpec((size, *s.shape), s.dtype, rank + 1))
        return packed_spec(spec, leaves)


def _element_ragged_rank(spec):
    """The ragged rank an element of `spec` is batched from by ragged_batch: its own for a
    ragged one, for a dense one of a shape not fully known the count of its dimensions
    before its last unknown one; None for one batched as `batch` batches it."""
    if isinstance(spec, RaggedTensorSpec):
        return spec.ragged_rank
    if isinstance(spec, SparseTensorSpec) or is_unknown_rank(spec.shape) or None not in spec.shape:
        return None
    return max(k for k, d in enumerate(spec.shape) if d is None)


class PaddedBatch:
    """Batches whose elements are first padded to one shape: `padded_shapes` (None, or -1,
    for a dimension padded to the batch's longest) or the batch's longest everywhere, with
    `padding_values` (by default 0, False for bools and b"" for strings, as TensorFlow pads)."""

    def __init__(self, upstream, batch_size, padded_shapes, padding_values, drop_remainder):
        self._upstream, self._size = upstream, _positive("batch_size", batch_size)
        self._drop = bool(drop_remainder)
        self._shapes, self._values = padded_shapes, padding_values

    def arrays(self):
        for rows in _groups(self._upstream.arrays(), self._size, self._drop):
            refuse_sparse(rows[0], "padded_batch")
            flat_rows = [nest.flatten(row) for row in rows]
            count = len(flat_rows[0])
            shapes = self._flat_shapes(rows[0], count)
            values = [None] * count if self._values is None else nest.flatten(self._values)
            leaves = [
                _padded([row[k] for row in flat_rows], shape, value)
                for k, (shape, value) in enumerate(zip(shapes, values))
            ]
            yield nest.pack_sequence_as(rows[0], leaves)

    def _flat_shapes(self, structure, count):
        return [None] * count if self._shapes is None else _flat_shapes(structure, self._shapes)

    def cardinality(self):
        return _batches(self._upstream.cardinality(), self._size, self._drop)

    def spec(self):
        spec = self._upstream.spec()
        specs = nest.flatten(spec)
        batch = self._size if self._drop else None
        leaves = []
        for s, shape in zip(specs, self._flat_shapes(spec, len(specs))):
            # (no padded shape: the element's, its known sizes known, as TensorFlow's default)
            known = shape if shape is not None else list(s.shape or ())
            padded = tuple(None if d is None or d == -1 else int(d) for d in known)
            leaves.append(TensorSpec((batch, *padded), s.dtype))
        return nest.pack_sequence_as(spec, leaves)


class Unbatch:
    """Each element's rows as elements of their own."""

    def __init__(self, upstream):
        self._upstream = upstream

    def arrays(self):
        for element in self._upstream.arrays():
            leaves = nest.flatten(element)
            if any(leaf.ndim == 0 for leaf in leaves):
                raise ValueError("unbatch: an element has a component without a leading axis")
            for row in range(leaves[0].shape[0]):
                yield nest.pack_sequence_as(element, [leaf[row] for leaf in leaves])

    def cardinality(self):
        """The upstream count times the rows of each element, where the spec knows them (a
        batch that drops its remainder: TensorFlow's count too), else unknown."""
        count = self._upstream.cardinality()
        rows = {s.shape[0] if s.shape else None for s in spec_leaves(self._upstream.spec())}
        if count == INFINITE:
            return INFINITE
        if count >= 0 and len(rows) == 1 and None not in rows:
            return count * rows.pop()
        return UNKNOWN

    def spec(self):
        spec = self._upstream.spec()
        return packed_spec(spec, [leaf_spec(s, s.shape[1:]) for s in spec_leaves(spec)])


class Shuffle:
    """Elements drawn at random from a buffer of the next `buffer_size`, as TensorFlow
    shuffles: a buffer at least as large as the dataset gives a uniform permutation. With a
    seed the orders are the same in every process; each pass draws a new one unless
    `reshuffle_each_iteration=False`."""

    def __init__(self, upstream, buffer_size, seed, reshuffle_each_iteration):
        self._upstream = upstream
        self._buffer = _positive("buffer_size", buffer_size)
        self._seeds = np.random.SeedSequence(seed)
        self._reshuffle = bool(reshuffle_each_iteration)
        self._passes = 0

    def arrays(self):
        yield from self._shuffled(self._upstream.arrays())

    def rows(self):
        """The upstream's rows (see TensorSlices.rows), in the order `arrays` gives them."""
        sliced = _rows_of(self._upstream)
        if sliced is None:
            return None
        structure, rows = sliced
        return structure, self._shuffled(rows)

    def _shuffled(self, elements):
        """`elements` in this pass's random order."""
        spawn = self._seeds.spawn(1)[0] if self._reshuffle or not self._passes else None
        if spawn is not None:
            self._first = spawn
        self._passes += 1
        rng = np.random.default_rng(self._first)
        # where the upstream's count is known, so is the number of draws from a full buffer:
        # those are drawn in blocks, the same numbers in the same order as one by one
        full = _draws(rng, self._buffer, self._upstream.cardinality() - self._buffer + 1)
        elements = iter(elements)
        # the buffer less one: each next element fills it, and the element drawn from the
        # full buffer takes its place there (drawn last: the new element itself)
        last = self._buffer - 1
        buffer = list(itertools.islice(elements, last))
        for element in elements:
            k = next(full, None)
            if k is None:
                k = int(rng.integers(self._buffer))
            if k == last:
                yield element
            else:
                yield buffer[k]
                buffer[k] = element
        # the rest, each drawn from what is left: one draw of every bound, numpy's numbers
        # in the order one draw a bound gives them
        for k in rng.integers(np.arange(len(buffer), 0, -1)).tolist():
            yield _take(buffer, k)

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._upstream.spec()


def _rows_of(stage):
    """(structure, rows) where `stage` gives rows of a from_tensor_slices source, else None."""
    rows = getattr(stage, "rows", None)
    return rows() if rows is not None else None


def _draws(rng, bound, count):
    """`count` integers below `bound` from `rng` (none where `count` is not positive), drawn
    a block at a time."""
    while count > 0:
        block = min(count, 1024)
        yield from rng.integers(bound, size=block).tolist()
        count -= block


def _take(buffer, k):
    """Remove and return element `k` of `buffer` (the last one takes its place)."""
    buffer[k], buffer[-1] = buffer[-1], buffer[k]
    return buffer.pop()


class Map:
    """`map_func` of each element (its components as arguments where it is a tuple), run
    as a `tt.function`: traced and compiled once per element signature. A function tracer
    cannot compile (one whose result's shape depends on the element's values, as
    `tt.fill([x], x)`) runs eagerly instead, with the same values."""

    def __init__(self, upstream, map_func):
        self._upstream = upstream
        self._function = _TracedOrEager(map_func)
        self._function.prepare(upstream)

    def arrays(self):
        call = self._function.arrays_of
        for element in self._upstream.arrays():
            record = dropping.active()
            if record is None:
                yield call(element)
                continue
            result = record.attempt(call, element)  # (ignore_errors: an error leaves it out)
            if result is not dropping.FAILED:
                yield result

    def batches(self, size, drop_remainder):
        """The mapped elements stacked `size` at a time, as `batch` stacks them. Over rows
        of from_tensor_slices (shuffled or not), once the function is traced for their
        signature, a batch's rows are gathered first and the function's compiled module
        runs on each of them from one call (`ConcreteFunction.call_on_batch`): the same bits
        as a call per element, without the Python of each. The rows are slices of arrays
        the pipeline holds, so reading them ahead of the map changes nothing another stage
        could see. The first batch of a signature, a batch the module cannot run so, a
        remainder that `drop_remainder` drops (whose calls may raise) and the elements of
        any other upstream are mapped element by element, as `arrays` maps them."""
        sliced = _rows_of(self._upstream)
        if sliced is None:
            for group in _groups(self.arrays(), size, drop_remainder):
                yield _stacked(group, "batch")
            return
        structure, rows = sliced
        leaves = nest.flatten(structure)
        for group in _groups(rows, size, False):
            dropped = len(group) < size and drop_remainder
            first = _row(structure, leaves, group[0])
            concrete = None if dropped else self._function.batchable(first)
            mapped = None
            if concrete is not None:
                taken = np.array(group, dtype=np.intp)
                mapped = concrete.call_on_batch([leaf[taken] for leaf in leaves], len(group))
            if mapped is None:
                elements = [first, *(_row(structure, leaves, row) for row in group[1:])]
                mapped = [self._function.arrays_of(element) for element in elements]
                if dropped:
                    return
                mapped = _stacked(mapped, "batch")
            yield mapped

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._function.spec(self._upstream)


def _row(structure, leaves, row):
    """Element `row` of from_tensor_slices' `structure` (whose leaves are `leaves`)."""
    return nest.pack_sequence_as(structure, [leaf[row] for leaf in leaves])


class Filter:
    """The elements for which `predicate` gives True (a scalar boolean)."""

    def __init__(self, upstream, predicate):
        self._upstream, self._function = upstream, _TracedOrEager(predicate)

    def arrays(self):
        call = self._function.arrays_of
        for element in self._upstream.arrays():
            record = dropping.active()
            kept = call(element) if record is None else record.attempt(call, element)
            if kept is dropping.FAILED:  # (ignore_errors: an error leaves it out)
                continue
            if not _scalar_bool(kept):
                raise TypeError(f"filter: the predicate gives {kept!r}, not a scalar bool")
            if kept:
                yield element

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return self._upstream.spec()


def _scalar_bool(value):
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype == np.bool_


class TakeWhile:
    """The elements up to the first for which `predicate` gives False (a scalar boolean)."""

    def __init__(self, upstream, predicate):
        self._upstream, self._function = upstream, _TracedOrEager(predicate)

    def arrays(self):
        for element in self._upstream.arrays():
            taken = self._function.arrays_of(element)
            if not _scalar_bool(taken):
                raise ValueError(
                    "Invalid `predicate`. `predicate` must return a `tt.bool` scalar tensor, "
                    f"not {taken!r}."
                )
            if not taken:
                return
            yield element

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return self._upstream.spec()


class Shard:
    """Every `num_shards`-th element, from element `index`: this worker's share."""

    def __init__(self, upstream, num_shards, index):
        self._upstream, self._shards, self._index = upstream, int(num_shards), int(index)
        if self._shards < 1:
            raise InvalidArgumentError(
                None,
                None,
                "Number of shards must be greater than zero (currently num_shards = "
                f"{self._shards}).",
            )
        if not 0 <= self._index < self._shards:
            raise InvalidArgumentError(
                None,
                None,
                f"Index must be between 0 and {self._shards - 1} (currently index = {self._index}).",
            )

    def arrays(self):
        for k, element in enumerate(self._upstream.arrays()):
            if k % self._shards == self._index:
                yield element

    def cardinality(self):
        inner = self._upstream.cardinality()
        return max(0, -(-(inner - self._index) // self._shards)) if inner >= 0 else inner

    def spec(self):
        return self._upstream.spec()


class Scan:
    """`scan_func(state, element) -> (new state, output)` from `initial_state` over the
    elements, the outputs as elements; the element is one argument, a tuple too. The new
    state must keep the initial state's structure and dtypes."""

    def __init__(self, upstream, initial_state, scan_func):
        self._upstream, self._initial = upstream, as_arrays(initial_state)
        self._function = _TracedOrEager(scan_func)

    def arrays(self):
        state = self._initial
        for element in self._upstream.arrays():
            state, output = self._pair(self._function.arrays_of((state, element)))
            yield output

    def _pair(self, result):
        """(new state, output) from what `scan_func` returned, the state checked against
        the initial one."""
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(
                "Invalid `scan_func`. `scan_func` should return a pair consisting of new "
                f"state and the output value but it returned {result!r}."
            )
        state, output = as_arrays(tuple(result))
        if nest.structure_difference(self._initial, state) is not None:
            raise TypeError(
                "Invalid `scan_func`. The new state's structure must match the initial "
                f"state's: {self._initial!r}, got {state!r}."
            )
        for initial, new in zip(nest.flatten(self._initial), nest.flatten(state)):
            if initial.dtype != new.dtype:
                raise TypeError(
                    "Invalid `scan_func`. The element types for the new state must match "
                    f"the initial state. Expected {as_dtype(initial.dtype)!r}, got "
                    f"{as_dtype(new.dtype)!r}."
                )
        return state, output

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._function.spec(_WithState(self._upstream, self._initial))[1]


def reduced(upstream, initial_state, reduce_func):
    """The state `reduce_func(state, element)` leaves after the elements of `upstream`, from
    `initial_state` (converted as TensorFlow converts it: a Python int is int32), as numpy
    arrays. The function runs as `map`'s does; each new state must have as many components
    as the initial state, of its dtypes (TypeError otherwise, in TensorFlow's words), and is
    packed as it is; its shapes may change."""
    state = as_arrays(initial_state)
    function = _TracedOrEager(reduce_func)
    function.prepare(_WithState(upstream, state))  # (traced first, as TensorFlow's: its errors)
    for element in upstream.arrays():
        state = _next_state(state, as_arrays(function.arrays_of((state, element))))
    return state


def _next_state(state, new):
    """`new` in the structure of `state`, where its leaves have the dtypes of `state`'s (a
    single tensor for a 1-tuple too, as TensorFlow takes it)."""
    old, given = nest.flatten(state), nest.flatten(new)
    if len(old) != len(given):
        raise TypeError(
            "The structure of the new state must match the initial state: "
            f"{len(old)} component(s) initially, {len(given)} returned."
        )
    for a, b in zip(old, given):
        if a.dtype != b.dtype:
            raise TypeError(
                "The element types for the new state must match the initial state. Expected "
                f"{as_dtype(a.dtype)!r} but got {as_dtype(b.dtype)!r}."
            )
    return nest.pack_sequence_as(state, given)


class _WithState:
    """The stage of (state, element) pairs that Scan's function takes, for its spec."""

    def __init__(self, upstream, state):
        self._upstream, self._state = upstream, state

    def arrays(self):
        for element in self._upstream.arrays():
            yield (self._state, element)

    def spec(self):
        return (spec_of_arrays(self._state), self._upstream.spec())


class Unique:
    """Each element the first time it comes (int32, int64 or string elements, as TensorFlow
    takes them), compared whole."""

    def __init__(self, upstream):
        self._upstream = upstream
        for spec in spec_leaves(upstream.spec()):
            if isinstance(spec, SparseTensorSpec):
                raise TypeError("`tt.data.Dataset.unique` does not support SparseTensor elements")
            if spec.dtype.name not in ("int32", "int64", "string"):
                raise TypeError(
                    f"`tt.data.Dataset.unique` does not support type {spec.dtype!r} -- only "
                    "`tt.int32`, `tt.int64`, and `tt.string` are supported."
                )

    def arrays(self):
        seen = set()
        for element in self._upstream.arrays():
            key = tuple(_comparable(leaf) for leaf in nest.flatten(element))
            if key not in seen:
                seen.add(key)
                yield element

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return self._upstream.spec()


def _comparable(leaf):
    """A hashable value equal for equal leaves (arrays of numbers or strings)."""
    array = np.asarray(leaf)
    return array.shape, array.tobytes() if array.dtype != object else tuple(array.ravel().tolist())


class Repeat:
    """The upstream elements `count` times over (forever where None or negative, as
    TensorFlow's RepeatDataset reads any count below 0), each pass a new one."""

    def __init__(self, upstream, count):
        self._upstream = upstream
        self._count = None if count is None or int(count) < 0 else int(count)

    def arrays(self):
        done = 0
        while self._count is None or done < self._count:
            empty = True
            for element in self._upstream.arrays():
                empty = False
                yield element
            done += 1
            if empty:  # an empty dataset repeated forever is empty, not a hang
                return

    def cardinality(self):
        """TensorFlow's count: forever is INFINITE unless the upstream is empty (also where
        the upstream's count is UNKNOWN), and no pass at all (`count` 0) is 0 whatever the
        upstream."""
        inner = self._upstream.cardinality()
        if self._count is None:
            return 0 if inner == 0 else INFINITE
        if inner < 0 and self._count > 0:  # INFINITE or UNKNOWN, repeated
            return inner
        return inner * self._count

    def spec(self):
        return self._upstream.spec()


class AssertCardinality:
    """The elements as they are, of the cardinality `expected`: TensorFlow's
    FailedPreconditionError where there are fewer or more."""

    def __init__(self, upstream, expected):
        self._upstream, self._expected = upstream, int(expected)

    def arrays(self):
        count = 0
        for element in self._upstream.arrays():
            count += 1
            if count > self._expected:
                raise FailedPreconditionError(
                    None,
                    None,
                    f"Input dataset was expected to contain {self._expected} elements but "
                    f"contained at least {count} elements.",
                )
            yield element
        if count < self._expected:
            raise FailedPreconditionError(
                None,
                None,
                f"Input dataset was expected to contain {self._expected} elements but "
                f"contained only {count} elements.",
            )

    def cardinality(self):
        return self._expected

    def spec(self):
        return self._upstream.spec()


class Take:
    """The first `count` elements (all of them where -1)."""

    def __init__(self, upstream, count):
        self._upstream, self._count = upstream, int(count)

    def arrays(self):
        if self._count == 0:
            return
        for k, element in enumerate(self._upstream.arrays()):
            yield element
            if k + 1 == self._count:
                return

    def cardinality(self):
        inner = self._upstream.cardinality()
        if self._count < 0:
            return inner
        if inner == INFINITE:
            return self._count
        return min(inner, self._count) if inner >= 0 else UNKNOWN

    def spec(self):
        return self._upstream.spec()


class Skip:
    """The elements after the first `count` (none where -1)."""

    def __init__(self, upstream, count):
        self._upstream, self._count = upstream, int(count)

    def arrays(self):
        if self._count < 0:
            return
        for k, element in enumerate(self._upstream.arrays()):
            if k >= self._count:
                yield element

    def cardinality(self):
        inner = self._upstream.cardinality()
        if self._count < 0:
            return 0
        return max(inner - self._count, 0) if inner >= 0 else inner

    def spec(self):
        return self._upstream.spec()


class Enumerate:
    """(index, element) pairs, the index int64 from `start`."""

    def __init__(self, upstream, start):
        self._upstream, self._start = upstream, int(start)

    def arrays(self):
        for k, element in enumerate(self._upstream.arrays(), self._start):
            yield (np.asarray(k, np.int64), element)

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return (TensorSpec((), "int64"), self._upstream.spec())


class Concatenate:
    """The upstream stage's elements, then `other`'s, which must have the same structure
    and dtypes."""

    def __init__(self, upstream, other):
        first, second = upstream.spec(), other.spec()
        if nest.structure_difference(first, second) is not None or any(
            a.dtype != b.dtype for a, b in zip(nest.flatten(first), nest.flatten(second))
        ):
            raise TypeError(f"concatenate: elements {first} and {second} differ in kind")
        self._stages = (upstream, other)

    def arrays(self):
        for stage in self._stages:
            yield from stage.arrays()

    def cardinality(self):
        counts = [stage.cardinality() for stage in self._stages]
        if INFINITE in counts:
            return INFINITE
        return UNKNOWN if UNKNOWN in counts else sum(counts)

    def spec(self):
        return combined_spec(*(stage.spec() for stage in self._stages))


class Cache:
    """The elements of the first complete pass, kept in memory and given again afterwards
    (a pass left unfinished keeps nothing)."""

    def __init__(self, upstream):
        self._upstream, self._kept = upstream, None

    def arrays(self):
        if self._kept is not None:
            yield from self._kept
            return
        seen = []
        for element in self._upstream.arrays():
            seen.append(element)
            yield element
        self._kept = seen

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._upstream.spec()


# --- shared pieces ------------------------------------------------------------------------


def _positive(name, value):
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
    return value


def _groups(elements, size, drop_remainder):
    """Runs of `size` elements (the last shorter unless `drop_remainder`). While
    ignore_errors pulls them (tracer/data/dropping.py), a run an element failed in is
    dropped, as TensorFlow's batch fails and is passed over then."""
    record = dropping.active()
    failures = 0 if record is None else record.count
    group = []
    for element in elements:
        if record is not None and record.count != failures:
            group, failures = [], record.count  # (an element before this one failed)
        group.append(element)
        if len(group) == size:
            yield group
            group = []
    if record is not None and record.count != failures:
        return
    if group and not drop_remainder:
        yield group


def _batches(count, size, drop_remainder):
    if count < 0:
        return count
    return count // size if drop_remainder else -(-count // size)


def _stacked(rows, what):
    """Rows of one structure stacked leaf by leaf; rows of different shapes are refused
    (padded_batch pads them)."""
    flat = [nest.flatten(row) for row in rows]
    leaves = []
    for k in range(len(flat[0])):
        parts = [row[k] for row in flat]
        if hasattr(parts[0], "_stage"):
            raise TypeError(
                f"{what}: elements that are datasets (windows) cannot be stacked; flat_map "
                "them into tensors first, as window(n).flat_map(lambda w: w.batch(n))"
            )
        if is_sparse(parts[0]):  # sparse elements batch to their largest shape
            leaves.append(sparse_elements.stack(parts))
            continue
        if ragged_elements.is_ragged(parts[0]):  # ragged ones to one ragged dimension more
            leaves.append(ragged_elements.stack(parts))
            continue
        shapes = {p.shape for p in parts}
        if len(shapes) > 1:
            raise ValueError(
                f"{what}: elements of shapes {sorted(shapes)} cannot be stacked; "
                "padded_batch pads them to one shape"
            )
        leaves.append(np.stack(parts))
    return nest.pack_sequence_as(rows[0], leaves)


def _batched_spec(spec, size):
    return packed_spec(
        spec,
        [
            TensorSpec(None, s.dtype)
            if is_unknown_rank(s.shape)
            else leaf_spec(s, (size, *s.shape))
            for s in spec_leaves(spec)
        ],
    )


def _flat_shapes(structure, shapes):
    """`padded_shapes` leaf by leaf: one shape (a tuple or list of sizes) per component."""
    if isinstance(structure, dict):
        return [
            s
            for key in nest.sorted_keys(structure)
            for s in _flat_shapes(structure[key], shapes[key])
        ]
    if isinstance(structure, tuple):
        return [s for part, shape in zip(structure, shapes) for s in _flat_shapes(part, shape)]
    return [None if shapes is None else list(np.asarray(shapes, dtype=object).reshape(-1))]


def _padded(parts, shape, value):
    """`parts` padded at the end of each axis to `shape` (None or -1: the longest) with
    `value` (None: the dtype's zero) and stacked."""
    rank = parts[0].ndim
    if any(p.ndim != rank for p in parts):
        raise ValueError("padded_batch: the elements of a component differ in rank")
    longest = [max(p.shape[axis] for p in parts) for axis in range(rank)]
    target = [
        longest[axis] if shape is None or shape[axis] in (None, -1) else int(shape[axis])
        for axis in range(rank)
    ]
    for p in parts:
        if any(size > want for size, want in zip(p.shape, target)):
            raise ValueError(
                f"padded_batch: an element of shape {p.shape} is larger than the padded "
                f"shape {tuple(target)}"
            )
    dtype = parts[0].dtype
    if value is None:  # TensorFlow's default: the dtype's zero, b"" for a string
        value = b"" if dtype.kind == "O" else 0
    elif dtype.kind == "O" and isinstance(value, str):
        value = value.encode()
    out = np.full((len(parts), *target), np.asarray(value, dtype), dtype)
    for k, p in enumerate(parts):
        out[(k, *(slice(0, size) for size in p.shape))] = p
    return out


class _TracedOrEager:
    """A user's function of elements, under `tt.function`: each new element signature is
    traced (and compiled) first, and where that fails as tracing cannot serve the function
    (a TypeError or ValueError, as `tt.fill([x], x)` gives) but the eager call succeeds, it
    runs eagerly from there on (the eager call's own error is the one raised where both
    fail). An error raised while the function runs is the user's, raised as it is: the
    element is not run again, nor where a tt.py_function in it raised while it was traced
    (it ran on the element's values then)."""

    def __init__(self, python_function):
        from tracer.function import function

        python_function = _list_as_tuple(python_function)
        self._python, self._traced, self._eager = python_function, function(python_function), False
        self._signatures = set()  # the element signatures traced: (shape, dtype) of each leaf
        # the concrete function traced for each signature of the elements' numpy arrays,
        # which runs on the arrays themselves (`ConcreteFunction.call_on_arrays`)
        self._concretes = {}
        self._spec = None  # the results' spec, once found (`prepare`, `spec`)
        self._probe = False  # its trace from specs cannot give it: probed (`spec`)

    def arrays_of(self, element):
        """The function's result on `element`, as numpy arrays. A run on the element's
        arrays gives arrays that are used as they are: a module's results are its own, an
        interpreter's may be the element's array, which no stage writes into."""
        result = self._on_arrays(element)
        if result is None:
            return as_arrays(self._call(element))
        if _numeric_array(result) or (
            type(result) is tuple and all(_numeric_array(leaf) for leaf in result)
        ):
            return result
        return as_arrays(result)

    def batchable(self, element):
        """The concrete function traced for `element`'s signature where it can run on a
        batch of such elements (`ConcreteFunction.call_on_batch`), else None (none traced
        yet, or its module cannot)."""
        concrete = self._concretes.get(_arrays_key(_leaves(element)))
        return concrete if concrete is not None and concrete.runs_on_batches else None

    def _on_arrays(self, element):
        """The result of the concrete function traced for the element's signature, run on
        its arrays (`ConcreteFunction.call_on_arrays`), or None where there is none or the
        call needs the function itself."""
        leaves = _leaves(element)
        concrete = self._concretes.get(_arrays_key(leaves))
        return None if concrete is None else concrete.call_on_arrays(leaves)

    def _call(self, element):
        """The tt.function's call on `element` (traced first for a new signature), or the
        Python function's where the function cannot be traced."""
        arguments = arguments_of(element)
        if self._eager:
            return self._python(*arguments)
        signature = tuple((t.shape, t.dtype) for t in nest.flatten(arguments))
        if signature not in self._signatures:
            try:
                concrete = self._traced.get_concrete_function(*arguments)
            except RunsAsPython:
                pass  # code that runs only as Python: the tt.function runs it so from now on
            except (TypeError, ValueError) as error:
                if raised_while_traced(error):  # the element's own error: it ran already
                    raise
                result = self._python(*arguments)
                self._eager = True
                return result
            else:  # run on the arrays from now on, where they are what the trace saw
                key = _arrays_key(_leaves(element))
                if key is not None and [as_dtype(d) for _, d in key] == [d for _, d in signature]:
                    self._concretes[key] = concrete
            self._signatures.add(signature)
        return self._traced(*arguments)

    def prepare(self, upstream):
        """The results' spec found when the pipeline is built, as tf.data's `map` traces its
        function then (tracer/data/traced_specs.py): the function's Python body runs once,
        now, and an error of its own code on the upstream's specs (a TypeError or ValueError,
        as `x + "s"` gives) is raised now, as TensorFlow raises it. A spec that needs probes
        (a tt.py_function's results) or a run on an element (the function's, or an upstream
        stage's) is left to `spec`, for when it is asked."""
        arguments = None
        try:
            with traced_specs.without_runs():
                arguments = arguments_of(upstream.spec())
                self._spec = traced_specs.traced(self._traced, arguments)
        except traced_specs.NeedsProbe:
            self._probe = True
        except traced_specs.NeedsRun:
            pass
        except Exception as error:
            if traced_specs.raised_when_built(error, arguments):
                raise traced_specs.as_raised_when_built(error) from None
            # (a trace tracer cannot make from specs: `spec` runs the function)

    def spec(self, upstream):
        """The structure of TensorSpecs of the results for the elements of the stage
        `upstream`: traced (or probed) from its spec, or where the function cannot be traced,
        the rank and dtype of each result of an eager call on a first element, every
        dimension None (they may vary from element to element, as fill([x], x)'s do). That
        call begins a pass of its own over `upstream`: a seeded shuffle there gives its
        orders one pass on."""
        if self._spec is not None:
            return self._spec
        try:
            arguments = arguments_of(upstream.spec())
            if not self._probe:
                try:
                    self._spec = traced_specs.traced(self._traced, arguments)
                except traced_specs.NeedsProbe:
                    self._probe = True
            if self._probe:
                self._spec = traced_specs.probed(self._python, arguments)
        except (RunsAsPython, TypeError, ValueError, traced_specs.NeedsRun):
            traced_specs.refuse_run()
            self._spec = self._spec_of_a_run(upstream)
        return self._spec

    def _spec_of_a_run(self, upstream):
        """The results' TensorSpecs, every dimension None, of an eager call on the first
        element of `upstream`."""
        first = first_element(
            upstream,
            f"map: {self._traced.__name__} cannot be traced, and the dataset it maps has no "
            "element to run it on, so its element_spec is unknown",
        )
        result = as_arrays(self._python(*arguments_of(first)))
        return nest.pack_sequence_as(
            result, [leaf_spec(a, (None,) * a.ndim) for a in nest.flatten(result)]
        )


def _list_as_tuple(python_function):
    """`python_function` with a list it returns given as a tuple, as tf.data's functions
    take it: a list of results (as `tt.py_function` returns) is that many components, not
    one tensor stacked from them (`tt.stack` them to have that)."""

    @functools.wraps(python_function)
    def call(*arguments):
        result = python_function(*arguments)
        return tuple(result) if isinstance(result, list) else result

    return call


def _leaves(element):
    """An element's leaves: a tuple is its own (one holding a structure has no arrays key)."""
    return element if type(element) is tuple else nest.flatten(element)


def _numeric_array(value):
    return type(value) is np.ndarray and value.dtype.kind in "biufc"


def _arrays_key(leaves):
    """The shapes and dtypes of an element's `leaves` where each is a numeric numpy array or
    scalar (which a concrete function runs on as they are), else None."""
    for leaf in leaves:
        if not isinstance(leaf, (np.ndarray, np.generic)) or leaf.dtype.kind not in "biufc":
            return None
    return tuple((leaf.shape, leaf.dtype) for leaf in leaves)


def first_element(stage, missing):
    """The first element of `stage`, from a pass of its own; ValueError(`missing`) where it
    has none."""
    traced_specs.refuse_run()
    elements = stage.arrays()
    try:
        first = next(elements, _NONE)
    finally:
        elements.close()
    if first is _NONE:
        raise ValueError(missing)
    return first


_NONE = object()  # no element


def arguments_of(element):
    """The arguments of a call on `element` (numpy arrays, given as Tensors, or TensorSpecs)
    in TensorFlow's calling convention: a tuple's components, anything else (a tensor, a
    dict) as the one argument."""
    leaves = [
        a if isinstance(a, (TensorSpec, SparseTensorSpec)) or hasattr(a, "_stage") else tensor_of(a)
        for a in spec_leaves(element)
    ]  # (a window's datasets are given as they are)
    structure = packed_spec(element, leaves)
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return structure
    return (structure,)
