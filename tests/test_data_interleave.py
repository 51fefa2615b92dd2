"""tf.data's transformations that read several datasets, or make datasets: flat_map,
interleave, window, choose_from_datasets, sample_from_datasets; and scan, take_while, shard,
unique, apply, get_single_element, counter. Each expected output is what TensorFlow 2.21
printed for the same pipeline (run on this machine, 2026-12-04), quoted in the docstrings."""

import numpy as np
import pytest

import tracer as tt

Dataset = tt.data.Dataset


def _listed(dataset):
    return [np.asarray(element).tolist() for element in dataset.as_numpy_iterator()]


def _windows(dataset):
    return [_listed(window) for window in dataset]


def test_flat_map_and_interleave_in_tensorflows_order():
    """flat_map of [[1, 2, 3], [4, 5, 6]] by from_tensor_slices: 1 .. 6. interleave of
    range(1, 6), each x repeated 6 times, cycle 2, block 4: 1 1 1 1 2 2 2 2 1 1 2 2 3 3 3 3
    4 4 4 4 3 3 4 4 5 5 5 5 5 5. range(1, 4) to range(10x, 10x + x), cycle 2: 10 20 21 30
    31 32 (an ended dataset's place is filled when its turn comes again). A tuple's
    components are the function's arguments: (1, 3), (2, 4) -> 4, 6."""
    rows = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6]])
    assert _listed(rows.flat_map(Dataset.from_tensor_slices)) == [1, 2, 3, 4, 5, 6]
    repeated = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4
    )
    assert (
        _listed(repeated)
        == [1] * 4
        + [2] * 4
        + [1, 1, 2, 2]
        + [3] * 4
        + [4] * 4
        + [
            3,
            3,
            4,
            4,
        ]
        + [5] * 6
    )
    ragged = Dataset.range(1, 4).interleave(
        lambda x: Dataset.range(x * 10, x * 10 + x), cycle_length=2
    )
    assert _listed(ragged) == [10, 20, 21, 30, 31, 32]
    assert ragged.element_spec == tt.TensorSpec([], tt.int64)
    assert int(ragged.cardinality()) == tt.data.UNKNOWN_CARDINALITY
    pairs = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert _listed(pairs.flat_map(lambda a, b: Dataset.from_tensors(a + b))) == [4, 6]
    filled = Dataset.range(3).interleave(
        lambda x: Dataset.from_tensor_slices(tt.fill([x + 1, 2], x))
    )
    # TensorFlow's trace knows the 2 of fill([x + 1, 2], x); tracer, which calls map_func on
    # the first element, leaves each size open: another element's dataset may differ
    assert filled.element_spec == tt.TensorSpec([None], tt.int64)
    with pytest.raises(TypeError, match="must return a tt.data.Dataset"):
        list(Dataset.range(3).flat_map(lambda x: x))


def test_window_and_its_datasets():
    """range(7).window(3): [0 1 2] [3 4 5] [6]; window(3, 2, 1, True): [0 1 2] [2 3 4]
    [4 5 6]; window(3, 1, 2): [0 2 4] [1 3 5] [2 4 6] [3 5] [4 6] [5] [6]; a tuple's windows
    are tuples of datasets: ([1 2], [4 5]), ([3], [6]); cardinalities 3 and 2; the spec
    DatasetSpec(TensorSpec(shape=(), dtype=int64), TensorShape([]))."""
    assert _windows(Dataset.range(7).window(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    shifted = Dataset.range(7).window(3, shift=2, stride=1, drop_remainder=True)
    assert _windows(shifted) == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert _listed(shifted.flat_map(lambda w: w.batch(3))) == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    strided = Dataset.range(7).window(3, shift=1, stride=2)
    assert _windows(strided) == [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5], [4, 6], [5], [6]]
    pairs = Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6])).window(2)
    assert [(_listed(a), _listed(b)) for a, b in pairs] == [([1, 2], [4, 5]), ([3], [6])]
    assert int(Dataset.range(7).window(3).cardinality()) == 3
    assert int(Dataset.range(7).window(3, drop_remainder=True).cardinality()) == 2
    assert int(strided.cardinality()) == 7 and int(shifted.cardinality()) == 3
    spec = Dataset.range(7).window(3).element_spec
    assert spec == tt.data.DatasetSpec(tt.TensorSpec([], tt.int64))
    assert repr(spec).startswith("DatasetSpec(TensorSpec(shape=(), dtype=tt.int64")
    with pytest.raises(TypeError, match="datasets \\(windows\\) cannot be stacked"):
        list(Dataset.range(7).window(3).batch(2))
    endless = Dataset.counter().window(4, shift=10).take(2)
    assert _windows(endless) == [[0, 1, 2, 3], [10, 11, 12, 13]]


def test_scan_take_while_shard_and_unique():
    """scan(0, (s + x, s * x)) over range(5): 0 0 2 9 24; a tuple state ((0, 1), ((s0 + x,
    2 s1), s0 + s1)) over range(4): 1 2 5 11; a tuple element is one argument: 3, 4.
    take_while(x < 5) of range(10): 0 .. 4; shard(3, 1) of range(10): 1 4 7 (cardinality
    3); unique of [1, 37, 2, 37, 2, 1]: 1 37 2, of two equal vectors one, of a b a: a b."""
    assert _listed(Dataset.range(5).scan(np.int64(0), lambda s, x: (s + x, s * x))) == [
        0,
        0,
        2,
        9,
        24,
    ]
    paired = Dataset.range(4).scan(
        (np.int64(0), np.int64(1)), lambda s, x: ((s[0] + x, s[1] * 2), s[0] + s[1])
    )
    assert _listed(paired) == [1, 2, 5, 11]
    tupled = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert _listed(tupled.scan(np.int32(0), lambda s, x: (s + x[0], x[1]))) == [3, 4]
    spec = Dataset.range(3).scan(np.int64(0), lambda s, x: (s + x, tt.cast(x, tt.float32)))
    assert spec.element_spec == tt.TensorSpec([], tt.float32)
    with pytest.raises(TypeError, match="element types for the new state must match"):
        list(Dataset.range(5).scan(np.int64(0), lambda s, x: (tt.cast(s, tt.float32), x)))
    with pytest.raises(TypeError, match="should return a pair"):
        list(Dataset.range(5).scan(np.int64(0), lambda s, x: s + x))
    assert _listed(Dataset.range(10).take_while(lambda x: x < 5)) == [0, 1, 2, 3, 4]
    assert _listed(tupled.take_while(lambda a, b: a < 2)) == [[1, 3]]
    with pytest.raises(ValueError, match="must return a `tt.bool` scalar"):
        list(Dataset.range(5).take_while(lambda x: x))
    sharded = Dataset.range(10).shard(num_shards=3, index=1)
    assert _listed(sharded) == [1, 4, 7] and int(sharded.cardinality()) == 3
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"between 0 and 2 \(currently"):
        Dataset.range(10).shard(3, 3)
    with pytest.raises(tt.errors.InvalidArgumentError, match="greater than zero"):
        Dataset.range(10).shard(0, 0)
    assert _listed(Dataset.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()) == [1, 37, 2]
    assert _listed(Dataset.from_tensor_slices([[1, 2], [1, 2]]).unique()) == [[1, 2]]
    assert _listed(Dataset.from_tensor_slices(["a", "b", "a"]).unique()) == [b"a", b"b"]
    with pytest.raises(TypeError, match="does not support type tt.float32"):
        Dataset.from_tensor_slices([1.0, 2.0]).unique()


def test_apply_get_single_element_and_counter():
    """apply(filter x < 3) of range(5): 0 1 2; from_tensors([1, 2]).get_single_element():
    [1 2], and InvalidArgumentError "Dataset had more than one element." / "Dataset was
    empty."; counter(start=2, step=5): 2 7 12, cardinality -1 (INFINITE), int64 or the
    dtype asked."""
    assert _listed(Dataset.range(5).apply(lambda d: d.filter(lambda x: x < 3))) == [0, 1, 2]
    with pytest.raises(TypeError, match="must return a `tt.data.Dataset` object"):
        Dataset.range(5).apply(lambda d: 3)
    single = Dataset.from_tensors([1, 2]).get_single_element()
    assert isinstance(single, tt.Tensor) and single.numpy().tolist() == [1, 2]
    with pytest.raises(tt.errors.InvalidArgumentError, match="more than one element"):
        Dataset.range(2).get_single_element()
    with pytest.raises(tt.errors.InvalidArgumentError, match="Dataset was empty"):
        Dataset.range(0).get_single_element()
    assert _listed(Dataset.counter(start=2, step=5).take(3)) == [2, 7, 12]
    assert int(Dataset.counter().cardinality()) == tt.data.INFINITE_CARDINALITY
    assert Dataset.counter(dtype=tt.int32).element_spec == tt.TensorSpec([], tt.int32)


def test_choose_from_datasets():
    """foo and bar forever, chosen by range(2) twice: foo bar foo bar. range(2) and
    range(10, 12) chosen by 0 0 0 1: 0 1 (the empty first dataset ends it), or 0 1 10 where
    an empty dataset's turn is passed over; choices of int32, or of datasets whose specs
    differ: TypeError; an index out of range: InvalidArgumentError."""
    words = [Dataset.from_tensors("foo").repeat(), Dataset.from_tensors("bar").repeat()]
    chosen = Dataset.choose_from_datasets(words, Dataset.range(2).repeat(2))
    assert _listed(chosen) == [b"foo", b"bar", b"foo", b"bar"]
    two = [Dataset.range(2), Dataset.range(10, 12)]
    choices = Dataset.from_tensor_slices(np.array([0, 0, 0, 1], np.int64))
    assert _listed(Dataset.choose_from_datasets(two, choices)) == [0, 1]
    passed = tt.data.experimental.choose_from_datasets(two, choices, stop_on_empty_dataset=False)
    assert _listed(passed) == [0, 1, 10]
    with pytest.raises(TypeError, match="must be scalar `tt.int64` tensors"):
        Dataset.choose_from_datasets(two, Dataset.range(2).map(lambda x: tt.cast(x, tt.int32)))
    with pytest.raises(TypeError, match="must have compatible element specs"):
        Dataset.choose_from_datasets([two[0], Dataset.from_tensors("a")], Dataset.range(2))
    with pytest.raises(tt.errors.InvalidArgumentError, match="Selector index out of range: 2"):
        list(Dataset.choose_from_datasets(two, Dataset.range(3)))


def test_sample_from_datasets():
    """range(2) and range(10, 13), sampled until both end: every element once, each
    dataset's in its order (TensorFlow's draws differ; its set is the same: 0 1 10 11 12); a
    seed gives the same order in every pass and pipeline; a zero weight never draws that
    dataset; stop_on_empty_dataset ends at the first dataset that ends; weights of another
    length: ValueError."""
    two = [Dataset.range(2), Dataset.range(10, 13)]
    sampled = Dataset.sample_from_datasets(two, seed=3)
    got = _listed(sampled)
    assert sorted(got) == [0, 1, 10, 11, 12]
    assert [v for v in got if v < 10] == [0, 1] and [v for v in got if v >= 10] == [10, 11, 12]
    assert _listed(sampled) == got == _listed(Dataset.sample_from_datasets(two, seed=3))
    ones = [Dataset.from_tensors(1).repeat(), Dataset.from_tensors(2).repeat()]
    assert set(_listed(Dataset.sample_from_datasets(ones, [1.0, 0.0], seed=1).take(20))) == {1}
    stopped = _listed(Dataset.sample_from_datasets(two, seed=3, stop_on_empty_dataset=True))
    assert stopped == got[: len(stopped)]  # the same draws, up to the first ended dataset
    endless = [Dataset.range(1), Dataset.counter(100)]
    stops = Dataset.sample_from_datasets(endless, seed=5, stop_on_empty_dataset=True)
    values = _listed(stops)  # ends at range(1)'s second turn: its one element, counter's
    assert values.count(0) == 1 and [v for v in values if v] == list(range(100, len(values) + 99))
    with pytest.raises(ValueError, match="same length as `datasets`"):
        Dataset.sample_from_datasets(two, weights=[0.5])


def test_choose_and_sample_are_infinite_where_one_of_their_datasets_is():
    # TF 2.21's cardinalities: infinite when one chosen-from dataset is (whatever the
    # choices and stop_on_empty_dataset), unknown otherwise
    finite, endless = Dataset.range(5), Dataset.range(100, 103).repeat()
    sample, choose = Dataset.sample_from_datasets, Dataset.choose_from_datasets
    cardinalities = [
        sample([finite, endless]),
        sample([finite, endless], stop_on_empty_dataset=True),
        sample([endless, endless]).batch(4),
        sample([finite, finite]),
        sample([finite.filter(lambda x: x > 1).repeat(), finite]),
        sample([endless, endless]).take(7),
        choose([endless, finite], Dataset.range(2)),
        choose([finite, finite], Dataset.range(2).repeat()),
    ]
    assert [int(d.cardinality()) for d in cardinalities] == [-1, -1, -1, -2, -1, 7, -1, -2]


def test_review_findings_windows_counter_lines_and_options(tmp_path):
    """TensorFlow 2.21's outputs: windows of one element three million apart keep none of
    the elements between them (checked through the window's count); windows over elements
    of lengths 1, 2, 1, 3 have the spec (None,); counter(0, 0.5, float32): 0 0.5 1 and an
    int32 counter wraps at its limit; TextLineDataset drops every "\\r" (x\\ry\\rz\\n: xyz;
    a lone \\r: no line); options set on a dataset do not change with the Options object
    afterwards, and equal Options compare equal."""
    far = Dataset.range(7).window(1, shift=3)
    assert _windows(far) == [[0], [3], [6]]
    rows = [np.arange(n) for n in (1, 2, 1, 3)]
    ragged = Dataset.from_generator(
        lambda: iter(rows), output_signature=tt.TensorSpec([None], tt.int64)
    )
    spec = next(iter(ragged.window(4))).element_spec
    assert spec == tt.TensorSpec([None], tt.int64)
    assert _listed(Dataset.counter(0, 0.5, tt.float32).take(3)) == [0.0, 0.5, 1.0]
    top = Dataset.counter(2**31 - 2, 1, tt.int32).take(3)
    assert _listed(top) == [2**31 - 2, 2**31 - 1, -(2**31)]
    (tmp_path / "cr.txt").write_bytes(b"x\ry\rz\n")
    (tmp_path / "lone.txt").write_bytes(b"\r")
    assert [e.numpy() for e in tt.data.TextLineDataset(str(tmp_path / "cr.txt"))] == [b"xyz"]
    assert list(tt.data.TextLineDataset(str(tmp_path / "lone.txt"))) == []
    options = tt.data.Options()
    options.deterministic = False
    dataset = Dataset.range(3).with_options(options)
    options.deterministic = True
    assert dataset.options().deterministic is False
    assert tt.data.Options() == tt.data.Options() and dataset.options() != tt.data.Options()
