"""`tt.data.Dataset` against the outputs TensorFlow 2.21 gives for the same pipelines (quoted
in each test's docstring, as tf.data's API documentation shows them)."""

import logging
import re

import numpy as np
import pytest

import tracer as tt
from tracer.concrete import ConcreteFunction

Dataset = tt.data.Dataset


def _listed(dataset):
    return [_plain(element) for element in dataset.as_numpy_iterator()]


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return np.asarray(value).tolist()


def test_range_batch_and_drop_remainder():
    """range(8).batch(3): [0, 1, 2], [3, 4, 5], [6, 7]; with drop_remainder=True the last
    goes; the element_spec's batch dimension is None, or 3 when the remainder is dropped."""
    assert _listed(Dataset.range(8).batch(3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert _listed(Dataset.range(8).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert Dataset.range(8).batch(3).element_spec == tt.TensorSpec([None], tt.int64)
    assert Dataset.range(8).batch(3, True).element_spec == tt.TensorSpec([3], tt.int64)
    assert int(Dataset.range(8).batch(3).cardinality()) == 3
    assert int(Dataset.range(8).batch(3, True).cardinality()) == 2
    assert _listed(Dataset.range(2, 9, 3)) == [2, 5, 8]


def test_from_tensor_slices_keeps_the_structure_and_tensorflows_dtypes():
    """from_tensor_slices(([1, 2], [3., 4.])): (1, 3.0), (2, 4.0), int32 and float32; a
    dict gives dicts; a list of lists is one tensor, sliced by rows."""
    dataset = Dataset.from_tensor_slices(([1, 2], [3.0, 4.0]))
    assert _listed(dataset) == [(1, 3.0), (2, 4.0)]
    assert dataset.element_spec == (tt.TensorSpec([], tt.int32), tt.TensorSpec([], tt.float32))
    first = next(iter(dataset))
    assert isinstance(first[0], tt.Tensor) and first[1].dtype == tt.float32
    features = Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0, 2.0], [3.0, 4.0]]})
    assert _listed(features) == [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}]
    assert _listed(Dataset.from_tensor_slices([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    assert Dataset.from_tensor_slices(x).element_spec == tt.TensorSpec([2], tt.float64)
    with pytest.raises(ValueError, match="leading sizes differ"):
        Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))


def test_map_filter_and_the_calling_convention():
    """range(5).map(lambda x: x * 2): [0, 2, 4, 6, 8]; a tuple element's components are
    map_func's arguments; filter keeps the elements whose predicate is True."""
    assert _listed(Dataset.range(5).map(lambda x: x * 2)) == [0, 2, 4, 6, 8]
    pairs = Dataset.from_tensor_slices(([1.0, 2.0], [10.0, 20.0]))
    assert _listed(pairs.map(lambda a, b: a + b)) == [11.0, 22.0]
    assert _listed(Dataset.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert int(Dataset.range(10).filter(lambda x: x > 2).cardinality()) == -2  # UNKNOWN
    mapped = Dataset.range(4).batch(2).map(lambda x: tt.cast(x, tt.float32) / 2.0)
    assert mapped.element_spec == tt.TensorSpec([None], tt.float32)
    assert _listed(mapped) == [[0.0, 0.5], [1.0, 1.5]]
    with pytest.raises(TypeError, match="scalar bool"):
        list(Dataset.range(3).filter(lambda x: x))
    traces = []

    def doubled(x):
        traces.append(x)  # runs when traced, not for each element
        return x * 2

    assert _listed(Dataset.range(10).map(doubled)) == list(range(0, 20, 2))
    assert len(traces) == 1


def test_a_list_a_map_function_returns_is_a_tuple_of_components():
    """TensorFlow 2.21 printed, for range(3).map(lambda x: [x, tf.cast(x, tf.float32)]):
    element_spec (TensorSpec(shape=(), dtype=tf.int64, name=None), TensorSpec(shape=(),
    dtype=tf.float32, name=None)) and elements (0, 0.0), (1, 1.0), (2, 2.0): a list of
    results is that many components (as tt.py_function returns them), not one tensor."""
    mapped = Dataset.range(3).map(lambda x: [x, tt.cast(x, tt.float32)])
    assert mapped.element_spec == (tt.TensorSpec([], tt.int64), tt.TensorSpec([], tt.float32))
    assert _listed(mapped) == [(0, 0.0), (1, 1.0), (2, 2.0)]
    assert all(type(e[0]) is np.int64 for e in mapped.as_numpy_iterator())

    def unequal(x):  # components that cannot stack, through tt.py_function
        return tt.py_function(lambda a: [a, tt.stack([a, a])], [x], [tt.int64, tt.int64])

    assert _listed(Dataset.range(2).map(unequal)) == [(0, [0, 0]), (1, [1, 1])]


def test_a_map_runs_its_trace_on_each_elements_arrays(monkeypatch):
    """After its first element, a map calls its trace on each element's arrays directly
    (`ConcreteFunction.call_on_arrays`), with the values and structure of a call of the
    tt.function on tensors: nested and dict results, Python values among the results, a
    variable read at each call; a map that assigns a variable, or one iterated under a
    tape, calls the function as before, once per element."""
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int64)
    scale = tt.Variable(2.0)

    def nested(a, b):
        return (a * scale, (b + 1, {"z": tt.reduce_sum(a), "k": 7}))

    pairs = Dataset.from_tensor_slices((x, y))
    want = [(x[k] * 2.0, (y[k] + 1, {"k": 7, "z": x[k].sum()})) for k in range(6)]
    served = []
    call_on_arrays = ConcreteFunction.call_on_arrays
    monkeypatch.setattr(
        ConcreteFunction,
        "call_on_arrays",
        lambda self, arrays: served.append(call_on_arrays(self, arrays)) or served[-1],
    )
    assert _listed(pairs.map(nested)) == [_plain(w) for w in want]
    assert len(served) == 5 and None not in served  # every element after the traced one
    scale.assign(3.0)  # read again at each call: the next pass scales by 3
    assert _listed(pairs.map(nested))[-1][0] == (x[-1] * 3.0).tolist()
    features = Dataset.from_tensor_slices({"a": x, "b": y}).map(
        lambda d: d["a"][1] - tt.cast(d["b"], tt.float32)
    )
    assert _listed(features) == (x[:, 1] - y).tolist()

    counter = tt.Variable(0, dtype=tt.int64)

    def counted(b):
        counter.assign_add(1)
        return b * 2

    assert _listed(Dataset.from_tensor_slices(y).map(counted)) == (y * 2).tolist()
    assert int(counter.numpy()) == 6
    with tt.GradientTape() as tape:
        tape.watch(scale)
        served.clear()
        assert _listed(pairs.map(nested))[2][0] == (x[2] * 3.0).tolist()
        assert served == [None] * 5  # the function itself, as its call is watched


def test_repeat_take_skip_enumerate_concatenate_zip():
    """range(3).repeat(2): 0 1 2 0 1 2; take(2) and skip(2) of range(5); enumerate(start=5)
    of [7, 8]: (5, 7), (6, 8); range(3) then range(10, 12); zip of range(3) and range(3, 6)
    gives (0, 3), (1, 4), (2, 5); cardinalities -1 (INFINITE) and counts."""
    assert _listed(Dataset.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert int(Dataset.range(3).repeat().cardinality()) == tt.data.INFINITE_CARDINALITY
    assert _listed(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert _listed(Dataset.range(5).take(2)) == [0, 1]
    assert _listed(Dataset.range(5).skip(2)) == [2, 3, 4]
    assert int(Dataset.range(5).skip(2).cardinality()) == 3
    assert _listed(Dataset.from_tensor_slices([7, 8]).enumerate(start=5)) == [(5, 7), (6, 8)]
    assert _listed(Dataset.range(3).concatenate(Dataset.range(10, 12))) == [0, 1, 2, 10, 11]
    zipped = Dataset.zip((Dataset.range(3), Dataset.range(3, 6)))
    assert _listed(zipped) == [(0, 3), (1, 4), (2, 5)]
    assert len(Dataset.zip((Dataset.range(3), Dataset.range(5)))) == 3
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(2).repeat())
    assert _listed(Dataset.range(0).repeat()) == []  # an empty dataset forever: empty


def test_repeat_of_zero_or_a_negative_count():
    """range(3).repeat(0) is empty, cardinality 0 (also after repeat(): no pass at all);
    any negative count repeats forever, as -1 does: repeat(-2).take(5) gives 0 1 2 0 1,
    cardinality -1 (INFINITE), also where the upstream's count is UNKNOWN (-2)."""
    endless = Dataset.range(3).repeat()
    assert _listed(endless.repeat(0)) == [] and int(endless.repeat(0).cardinality()) == 0
    assert int(Dataset.range(3).filter(lambda x: x > 0).repeat(0).cardinality()) == 0
    assert _listed(Dataset.range(3).repeat(-2).take(5)) == [0, 1, 2, 0, 1]
    assert int(Dataset.range(3).repeat(-2).cardinality()) == tt.data.INFINITE_CARDINALITY
    unknown = Dataset.range(3).filter(lambda x: x > 0).repeat()
    assert int(unknown.cardinality()) == tt.data.INFINITE_CARDINALITY
    assert int(Dataset.range(0).repeat(-5).cardinality()) == 0
    assert _listed(Dataset.range(0).repeat(-5)) == []


def test_shuffle_is_a_permutation_reproducible_with_a_seed_and_new_each_pass():
    """shuffle with a buffer as large as the data permutes it; a seed makes the orders the
    same in another process; reshuffle_each_iteration=False repeats the first order."""
    dataset = Dataset.range(50).shuffle(50, seed=7)
    first, second = _listed(dataset), _listed(dataset)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first != second  # a new order each pass
    again = Dataset.range(50).shuffle(50, seed=7)
    assert _listed(again) == first and _listed(again) == second
    fixed = Dataset.range(50).shuffle(50, seed=3, reshuffle_each_iteration=False)
    assert _listed(fixed) == _listed(fixed)
    small = _listed(Dataset.range(100).shuffle(4, seed=1))
    assert sorted(small) == list(range(100))
    assert all(value <= position + 3 for position, value in enumerate(small))  # buffer of 4


@pytest.mark.parametrize("count, buffer", [(3000, 100), (40, 40), (40, 64), (500, 1)])
def test_shuffle_draws_as_one_draw_an_element(count, buffer):
    """The draws from a full buffer, whose number a known count gives, are made a block at
    a time: the order is the one drawn one by one (a draw below the buffer's length for
    each element taken), and so is the order after a filter, whose count is unknown."""
    rng = np.random.default_rng(np.random.SeedSequence(5).spawn(1)[0])
    pending, want = [], []
    for value in range(count):
        pending.append(value)
        if len(pending) == buffer:
            k = int(rng.integers(len(pending)))
            pending[k], pending[-1] = pending[-1], pending[k]
            want.append(pending.pop())
    while pending:
        k = int(rng.integers(len(pending)))
        pending[k], pending[-1] = pending[-1], pending[k]
        want.append(pending.pop())
    assert _listed(Dataset.range(count).shuffle(buffer, seed=5)) == want
    unknown = Dataset.range(count).filter(lambda x: x >= 0).shuffle(buffer, seed=5)
    assert _listed(unknown) == want


def test_unbatch_padded_batch_cache_and_reduce():
    """batch(3).unbatch() gives back the elements; padded_batch of range(1, 5) mapped to
    fill([x], x) and batched by 2: [[1, 0], [2, 2]] and [[3, 3, 3, 0], [4, 4, 4, 4]];
    reduce sums them."""
    assert _listed(Dataset.range(7).batch(3).unbatch()) == list(range(7))
    ragged = Dataset.range(1, 5).map(lambda x: tt.fill([x], x))
    assert _listed(ragged.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert _listed(ragged.padded_batch(2, padded_shapes=[5], padding_values=-1)) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]],
        [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]],
    ]
    with pytest.raises(ValueError, match="padded_batch pads them"):
        list(ragged.batch(2))
    cached = Dataset.range(4).cache()
    assert _listed(cached) == _listed(cached) == [0, 1, 2, 3]
    total = Dataset.range(5).reduce(tt.constant(0, tt.int64), lambda state, x: state + x)
    assert int(total) == 10


def test_the_element_spec_of_a_map_tracer_cannot_trace():
    """range(1, 4).map(lambda x: fill([x], x)): element_spec TensorSpec(shape=(None,),
    dtype=tf.int64), and the dataset's repr shows it; padded_batch of it, (None, None)."""
    ragged = Dataset.range(1, 4).map(lambda x: tt.fill([x], x))
    assert ragged.element_spec == tt.TensorSpec([None], tt.int64)
    assert "TensorSpec(shape=(None,), dtype=tt.int64" in repr(ragged)
    assert ragged.padded_batch(2).element_spec == tt.TensorSpec([None, None], tt.int64)
    assert _listed(ragged) == [[1], [2, 2], [3, 3, 3]]
    pairs = Dataset.from_tensor_slices(([1, 2], [3.0, 4.0]))
    mixed = pairs.map(lambda a, b: (tt.fill([a], b), {"a": a}))
    assert mixed.element_spec == (
        tt.TensorSpec([None], tt.float32),
        {"a": tt.TensorSpec([], tt.int32)},
    )
    # with no element to run it on, the spec is unknown: element_spec says why, repr too
    empty = Dataset.range(0).map(lambda x: tt.fill([x], x))
    with pytest.raises(ValueError, match="no element to run it on"):
        print(empty.element_spec)
    assert "element_spec=unknown (ValueError: map: <lambda> cannot be traced" in repr(empty)


def test_from_generator_checks_its_signature():
    """from_generator(gen, output_signature=TensorSpec(shape=(), dtype=tf.int32)) of a
    generator of 0, 1, 2 gives them; each pass calls the generator again."""

    def count():
        yield from range(3)

    dataset = Dataset.from_generator(count, output_signature=tt.TensorSpec((), tt.int32))
    assert _listed(dataset) == [0, 1, 2] and _listed(dataset) == [0, 1, 2]
    assert dataset.element_spec == tt.TensorSpec((), tt.int32)
    shaped = Dataset.from_generator(lambda: iter([[1, 2]]), tt.float32, output_shapes=(3,))
    with pytest.raises(ValueError, match="does not fit"):
        list(shaped)
    pairs = Dataset.from_generator(
        lambda: iter([(1, [2.0, 3.0])]),
        output_signature=(tt.TensorSpec((), tt.int64), tt.TensorSpec((None,), tt.float32)),
    )
    assert _listed(pairs) == [(1, [2.0, 3.0])]
    with pytest.raises(ValueError, match="structure"):
        list(Dataset.from_generator(lambda: iter([1]), output_signature=pairs.element_spec))


def test_a_training_loop_over_a_dataset_learns_as_the_same_loop_over_arrays():
    """The loop of TensorFlow's training guides: from_tensor_slices((x, y)).shuffle().batch()
    feeding a compiled step; the same batches from numpy give the same weights."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.1
    dataset = Dataset.from_tensor_slices((x, y)).shuffle(64, seed=4).batch(16)

    def train(batches):
        w, b = tt.Variable(np.zeros((3, 1), np.float32)), tt.Variable(np.zeros(1, np.float32))

        @tt.function
        def step(xb, yb):
            with tt.GradientTape() as tape:
                loss = tt.reduce_mean(tt.square(xb @ w + b - yb))
            gw, gb = tape.gradient(loss, [w, b])
            w.assign_sub(0.1 * gw)
            b.assign_sub(0.1 * gb)
            return loss

        for _ in range(20):
            for xb, yb in batches():
                step(xb, yb)
        return w.numpy(), b.numpy()

    seeded = Dataset.from_tensor_slices((x, y)).shuffle(64, seed=4).batch(16)
    orders = iter([list(seeded.as_numpy_iterator()) for _ in range(20)])  # the same orders
    from_dataset = train(lambda: dataset)
    from_arrays = train(lambda: [(np.array(a), np.array(b)) for a, b in next(orders)])
    np.testing.assert_allclose(from_dataset[0], from_arrays[0], rtol=1e-6)
    np.testing.assert_allclose(from_dataset[0][:, 0], [1.0, -2.0, 0.5], atol=0.05)
    assert len(dataset) == 4


def test_batches_of_slices_are_gathered_as_stacking_would_give_them():
    """`batch` gathers the rows of from_tensor_slices at once (also after a shuffle); a
    `map` in between takes the element-by-element path: both give the same batches."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((23, 3)).astype(np.float32), np.arange(23)

    def pipeline(identity_map):
        dataset = tt.data.Dataset.from_tensor_slices({"x": x, "y": y}).shuffle(10, seed=4)
        if identity_map:
            dataset = dataset.map(lambda element: element)
        return list(dataset.batch(5).as_numpy_iterator())

    gathered, stacked = pipeline(False), pipeline(True)
    assert [len(b["y"]) for b in gathered] == [5, 5, 5, 5, 3]
    for a, b in zip(gathered, stacked, strict=True):
        np.testing.assert_array_equal(a["x"], b["x"])
        np.testing.assert_array_equal(a["y"], b["y"])
    assert sorted(np.concatenate([b["y"] for b in gathered]).tolist()) == list(range(23))
    plain = list(tt.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True))
    assert len(plain) == 2
    np.testing.assert_array_equal(plain[1][0].numpy(), x[8:16])


def test_a_function_that_iterates_a_dataset_sees_a_new_pass_at_each_call(caplog):
    """TensorFlow runs `for batch in dataset` inside a tf.function at every call; tracer's
    pipelines run in Python, so such a function runs as Python at each call (with a
    log line naming the user's line) rather than keep one pass's elements as constants."""
    dataset = tt.data.Dataset.from_tensor_slices(np.arange(6.0, dtype=np.float32))
    dataset = dataset.shuffle(6, seed=1).batch(2)
    total = tt.Variable(0.0)
    firsts, sums = [], []

    @tt.function
    def accumulate():
        for batch in dataset:
            total.assign_add(tt.reduce_sum(batch * batch))
            firsts.append(float(batch[0]))
            sums.append(float(tt.reduce_sum(batch * batch)))
            break

    with caplog.at_level(logging.WARNING, logger="tracer"):
        accumulate()
    [notice] = caplog.records  # a notice of speed, logged as TensorFlow logs its retraces
    assert re.search(r"iterates a tt.data.Dataset at .*test_data.py:\d+", notice.getMessage())
    for _ in range(5):
        accumulate()
    assert len(set(firsts)) > 1  # each call drew a new shuffle
    assert accumulate.experimental_get_tracing_count() == 1
    assert len(sums) == 6  # one pass a call: the trace stops before taking an element
    assert total.numpy() == pytest.approx(sum(sums))  # what the six calls assigned


def test_cache_to_a_file_is_read_by_later_passes_and_pipelines(tmp_path):
    """cache(filename): the first complete pass is written beside `filename`; a new
    pipeline with the same filename reads the file instead of running its source."""
    produced = []

    def source():
        for i in range(5):
            produced.append(i)
            yield np.float32(i), np.full(2, i, np.int64)

    signature = (tt.TensorSpec([], tt.float32), tt.TensorSpec([2], tt.int64))

    def pipeline():
        dataset = tt.data.Dataset.from_generator(source, output_signature=signature)
        return dataset.map(lambda a, b: (a * 2.0, b)).cache(str(tmp_path / "cache"))

    first = list(pipeline().as_numpy_iterator())
    assert produced == [0, 1, 2, 3, 4]
    assert sorted(p.name for p in tmp_path.iterdir())[-1] == "cache.index"  # TensorFlow's name
    again = list(pipeline().as_numpy_iterator())  # a new pipeline: read from the file
    assert produced == [0, 1, 2, 3, 4]
    for (a, b), (c, d) in zip(first, again, strict=True):
        assert a == c and np.array_equal(b, d) and b.dtype == d.dtype
    assert [float(a) for a, _ in again] == [0.0, 2.0, 4.0, 6.0, 8.0]
    unfinished = tt.data.Dataset.range(10).cache(str(tmp_path / "partial"))
    next(iter(unfinished))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("partial")]
    # a file that does not hold this pipeline's elements is refused, naming it
    other = tt.data.Dataset.range(3).cache(str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="cache.index"):
        list(other)
    (tmp_path / "broken.index").write_bytes(b"not a manifest")
    with pytest.raises(ValueError, match="broken.index"):
        list(tt.data.Dataset.range(3).cache(str(tmp_path / "broken")))
    with pytest.raises(ValueError, match="does not exist"):
        tt.data.Dataset.range(3).cache(str(tmp_path / "missing" / "cache"))


def test_reprs_name_tensorflows_dataset_classes():
    """repr of each transformation's dataset names the class TensorFlow 2.21's repr shows:
    _TensorSliceDataset, _BatchDataset, _MapDataset, _ZipDataset (zip and enumerate),
    _FlatMapDataset (flat_map and from_generator), _InterleaveDataset, _WindowDataset,
    _PrefetchDataset, _OptionsDataset, CacheDataset, _DirectedInterleaveDataset, and a
    window's _VariantDataset."""
    r = Dataset.range(10)
    kinds = {
        Dataset.from_tensor_slices([1, 2]): "_TensorSliceDataset",
        r: "_RangeDataset",
        r.batch(2): "_BatchDataset",
        r.map(lambda x: x): "_MapDataset",
        r.enumerate(): "_ZipDataset",
        r.flat_map(lambda x: Dataset.range(x)): "_FlatMapDataset",
        r.interleave(lambda x: Dataset.range(x), cycle_length=2): "_InterleaveDataset",
        r.window(2): "_WindowDataset",
        r.prefetch(1): "_PrefetchDataset",
        r.with_options(tt.data.Options()): "_OptionsDataset",
        r.cache(): "CacheDataset",
        Dataset.sample_from_datasets([r, r]): "_DirectedInterleaveDataset",
        next(iter(r.window(2))): "_VariantDataset",
    }
    for dataset, kind in kinds.items():
        assert repr(dataset).startswith(f"<{kind} element_spec="), kind


def test_options_are_kept_merged_and_checked():
    """Options set with with_options come back from options(), through later
    transformations; a second with_options merges; an unknown option is an AttributeError
    ("Cannot set the property nonexistent on Options."), as in TensorFlow."""
    options = tt.data.Options()
    options.deterministic = False
    options.threading.private_threadpool_size = 4
    dataset = Dataset.range(3).with_options(options).map(lambda x: x * 2).batch(2)
    assert dataset.options().deterministic is False
    assert dataset.options().threading.private_threadpool_size == 4
    more = tt.data.Options()
    more.experimental_optimization.map_parallelization = True
    merged = dataset.with_options(more).options()
    assert merged.deterministic is False and merged.experimental_optimization.map_parallelization
    assert Dataset.range(3).options().deterministic is None
    assert _listed(dataset) == [[0, 2], [4]]
    with pytest.raises(AttributeError, match="Cannot set the property nonexistent on Options"):
        options.nonexistent = 3


def test_unbatch_counts_and_iterators_as_tensorflows():
    """TF 2.21: unbatch of 2 elements of 3 rows has cardinality 6 (of a batch that drops its
    remainder too; unknown, -2, where the rows differ); range's output_type; an iterator's
    element_spec and get_next, OutOfRangeError at the end."""
    data = tt.data.Dataset
    assert int(data.from_tensor_slices(np.zeros((2, 3))).unbatch().cardinality()) == 6
    assert len(data.range(6).batch(2, drop_remainder=True).unbatch()) == 6
    assert int(data.range(6).batch(4).unbatch().cardinality()) == -2
    assert [x.dtype for x in data.range(2, output_type=tt.int32)] == [tt.int32, tt.int32]
    iterator = iter(data.range(2))
    assert iterator.element_spec == tt.TensorSpec([], tt.int64)
    assert [int(iterator.get_next()) for _ in range(2)] == [0, 1]
    with pytest.raises(tt.errors.OutOfRangeError):
        iterator.get_next()


def test_rebatch_batches_the_rows_again():
    """TF 2.21: range(10).batch(4).rebatch(3) is [0 1 2] [3 4 5] [6 7 8] [9] of spec (None,);
    with drop_remainder both times, [0 1 2] [3 4 5] of spec (3,)."""
    data = tt.data.Dataset.range(10)
    again = data.batch(4).rebatch(3)
    assert [x.numpy().tolist() for x in again] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert again.element_spec == tt.TensorSpec([None], tt.int64)
    dropped = data.batch(4, drop_remainder=True).rebatch(3, drop_remainder=True)
    assert [x.numpy().tolist() for x in dropped] == [[0, 1, 2], [3, 4, 5]]
    assert dropped.element_spec == tt.TensorSpec([3], tt.int64)


def test_group_by_window_groups_by_key_and_flushes_in_key_order():
    """TF 2.21: range(10) grouped by x % 3 in windows of 2, each batched, gives [0 3] [1 4]
    [2 5] [6 9] [7] [8], spec (None,), cardinality unknown; the key reaches reduce_func; a
    window_size_func of the key; both sizes or neither is TensorFlow's ValueError."""
    data = tt.data.Dataset
    grouped = data.range(10).group_by_window(lambda x: x % 3, lambda k, w: w.batch(4), 2)
    assert [x.numpy().tolist() for x in grouped] == [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]
    assert grouped.element_spec == tt.TensorSpec([None], tt.int64)
    assert int(grouped.cardinality()) == -2
    keyed = data.range(11).apply(
        tt.data.experimental.group_by_window(
            lambda x: (x * 7) % 4, lambda k, w: w.batch(10).map(lambda b: (k, b)), 3
        )
    )
    assert [(int(k), b.numpy().tolist()) for k, b in keyed] == [
        (0, [0, 4, 8]),
        (3, [1, 5, 9]),
        (2, [2, 6, 10]),
        (1, [3, 7]),
    ]
    sized = data.range(8).group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(8), window_size_func=lambda k: k + 2
    )
    assert [x.numpy().tolist() for x in sized] == [[0, 2], [1, 3, 5], [4, 6], [7]]
    with pytest.raises(ValueError, match="Either the `window_size` argument"):
        data.range(3).group_by_window(lambda x: x, lambda k, w: w)
