"""tf.data's methods that read, keep or regroup a pipeline's elements: save/load, snapshot,
cache(filename), ignore_errors, bucket_by_sequence_length, rejection_resample, random,
get_next_as_optional, tf.data.experimental.scan, reduce, and map with tt.py_function. Each
expected value is what TensorFlow 2.21 printed for the same pipeline (run on this machine),
as each docstring says; where tracer's values are its own (random draws), the test holds
the properties TensorFlow's have."""

import json
import os

import numpy as np
import pytest

import tracer as tt

Dataset = tt.data.Dataset


def _listed(dataset):
    def plain(value):
        value = np.asarray(value)
        return value.tolist() if value.dtype != object or value.ndim else value[()]

    return [tt.nest.map_structure(plain, element) for element in dataset.as_numpy_iterator()]


def _lengths():
    lengths = [1, 5, 2, 7, 3, 6, 2, 8, 4]
    return Dataset.from_generator(
        lambda: (np.full([n], n, np.int32) for n in lengths),
        output_signature=tt.TensorSpec([None], tt.int32),
    )


# --- bucket_by_sequence_length -------------------------------------------------------------


def test_bucket_by_sequence_length_gives_tensorflows_batches_in_its_order():
    """TF 2.21, lengths 1 5 2 7 3 6 2 8 4, boundaries [3, 6], batch sizes 2: [[1, 0], [2,
    2]], [[5]*5, [3, 3, 3, 0, 0]], [[7]*7, [6]*6 + [0]], then the buckets left in order:
    [[2, 2]], [[4]*4], [[8]*8]; spec TensorSpec([None, None], int32), cardinality -2.
    Boundaries [4], sizes 3, drop_remainder: [[1, 0, 0], [2, 2, 0], [3, 3, 3]] and [[5]*5 +
    [0, 0], [7]*7, [6]*6 + [0]]."""
    batches = _lengths().bucket_by_sequence_length(
        lambda x: tt.shape(x)[0], bucket_boundaries=[3, 6], bucket_batch_sizes=[2, 2, 2]
    )
    assert batches.element_spec == tt.TensorSpec([None, None], tt.int32)
    assert int(batches.cardinality()) == -2
    assert _listed(batches) == [
        [[1, 0], [2, 2]],
        [[5] * 5, [3, 3, 3, 0, 0]],
        [[7] * 7, [6] * 6 + [0]],
        [[2, 2]],
        [[4] * 4],
        [[8] * 8],
    ]
    dropped = _lengths().bucket_by_sequence_length(
        lambda x: tt.shape(x)[0], [4], [3, 3], drop_remainder=True
    )
    assert _listed(dropped) == [
        [[1, 0, 0], [2, 2, 0], [3, 3, 3]],
        [[5] * 5 + [0, 0], [7] * 7, [6] * 6 + [0]],
    ]


def test_bucket_by_sequence_length_pads_to_boundaries_shapes_and_values():
    """TF 2.21: pad_to_bucket_boundary with boundaries [3, 6, 9] pads bucket i to its
    boundary less one: [[1, 0], [2, 2]], [[5]*5, [3, 3, 3, 0, 0]], [[7]*7 + [0], [6]*6 + [0,
    0]], [[2, 2]], [[4]*4 + [0]], [[8]*8]; an element in the last bucket (no boundary above)
    raises InvalidArgumentError. padded_shapes [10] with padding_values -1 gives spec
    (None, 10); no_padding batches as `batch` (range(10), boundaries [4], sizes 3: [0, 1,
    2], [4, 5, 6], [7, 8, 9], [3]); the element's components are the function's arguments."""
    to_boundary = _lengths().bucket_by_sequence_length(
        lambda x: tt.shape(x)[0], [3, 6, 9], [2, 2, 2, 2], pad_to_bucket_boundary=True
    )
    assert _listed(to_boundary) == [
        [[1, 0], [2, 2]],
        [[5] * 5, [3, 3, 3, 0, 0]],
        [[7] * 7 + [0], [6] * 6 + [0, 0]],
        [[2, 2]],
        [[4] * 4 + [0]],
        [[8] * 8],
    ]
    over = _lengths().bucket_by_sequence_length(
        lambda x: tt.shape(x)[0], [3, 6], [2, 2, 2], pad_to_bucket_boundary=True
    )
    with pytest.raises(tt.errors.InvalidArgumentError, match="length < max"):
        list(over)
    padded = _lengths().bucket_by_sequence_length(
        lambda x: tt.shape(x)[0], [4], [3, 3], padded_shapes=[10], padding_values=-1
    )
    assert padded.element_spec == tt.TensorSpec([None, 10], tt.int32)
    assert _listed(padded)[0][0] == [1] + [-1] * 9
    plain = Dataset.range(10).bucket_by_sequence_length(
        lambda x: tt.cast(x, tt.int32), [4], [3, 3], no_padding=True
    )
    assert plain.element_spec == tt.TensorSpec([None], tt.int64)
    assert _listed(plain) == [[0, 1, 2], [4, 5, 6], [7, 8, 9], [3]]
    pairs = Dataset.zip((_lengths(), Dataset.range(9)))
    first = next(iter(pairs.bucket_by_sequence_length(lambda x, i: tt.shape(x)[0], [4], [2, 2])))
    assert [np.asarray(t).tolist() for t in first] == [[[1, 0], [2, 2]], [0, 2]]


def test_bucket_by_sequence_length_refuses_what_tensorflow_refuses():
    """TF 2.21: sizes that are not one more than the boundaries are a ValueError (`len(
    bucket_batch_sizes)` must equal ...); an int64 length is a TypeError (compared with
    int32 bounds)."""
    with pytest.raises(ValueError, match="must equal `len\\(bucket_boundaries\\) \\+ 1`"):
        _lengths().bucket_by_sequence_length(lambda x: tt.shape(x)[0], [4], [2])
    with pytest.raises(TypeError, match="int32"):
        _lengths().bucket_by_sequence_length(
            lambda x: tt.cast(tt.shape(x)[0], tt.int64), [4], [2, 2]
        )


# --- reduce, scan -------------------------------------------------------------------------


def test_reduce_converts_its_initial_state_as_tensorflow_does():
    """TF 2.21, range(1, 5): reduce(0, s + x) raises TypeError (0 is int32, x int64);
    reduce(0.0, s + float(x)) is float32 10.0; (0, int64 1) with (s0 + 1, s1 * x) gives
    (int32 4, int64 24); a new state of another dtype is a TypeError ("The element types
    for the new state must match the initial state")."""
    numbers = Dataset.range(1, 5)
    with pytest.raises(TypeError):
        numbers.reduce(0, lambda s, x: s + x)
    total = numbers.reduce(0.0, lambda s, x: s + tt.cast(x, tt.float32))
    assert total.dtype == tt.float32 and float(total) == 10.0
    count, product = numbers.reduce(
        (0, tt.constant(1, tt.int64)), lambda s, x: (s[0] + 1, s[1] * x)
    )
    assert (count.dtype, int(count), product.dtype, int(product)) == (tt.int32, 4, tt.int64, 24)
    with pytest.raises(TypeError, match="element types for the new state"):
        numbers.reduce(tt.constant(0, tt.int64), lambda s, x: tt.cast(s, tt.float32))


def test_experimental_scan_gives_the_running_values():
    """TF 2.21: range(1, 6).apply(tf.data.experimental.scan(1, lambda s, x: (s * 2, s +
    x))) gives 2 4 7 12 21."""
    scanned = Dataset.range(1, 6).apply(
        tt.data.experimental.scan(tt.constant(1, tt.int64), lambda s, x: (s * 2, s + x))
    )
    assert _listed(scanned) == [2, 4, 7, 12, 21]


# --- map: when its function runs ------------------------------------------------------------


def test_map_traces_its_function_when_built_and_raises_its_type_errors_then():
    """TF 2.21: after map() the Python body ran once, and two passes later still once;
    map(lambda x: x + tf.constant("s")) raises TypeError at map()."""
    calls = []

    def plus_one(x):
        calls.append(1)
        return x + 1

    mapped = Dataset.range(5).map(plus_one)
    assert len(calls) == 1
    assert _listed(mapped) == _listed(mapped) == [1, 2, 3, 4, 5]
    assert len(calls) == 1
    with pytest.raises(TypeError):
        Dataset.range(3).map(lambda x: x + tt.constant("s"))


def test_a_py_function_map_has_an_unknown_shape_and_runs_once_an_element():
    """TF 2.21: range(5).map(py_function(x * 3)) has spec TensorSpec(None, int64),
    cardinality 5, values 0 3 6 9 12 and five calls of the Python function; the same with
    numpy_function is TensorSpec(None, float32), and a map of ensure_shape(v, []) after it
    TensorSpec([], float32)."""
    calls = []

    def times_three(x):
        calls.append(int(x))
        return x * 3

    mapped = Dataset.range(5).map(lambda x: tt.py_function(times_three, [x], tt.int64))
    assert mapped.element_spec == tt.TensorSpec(None, tt.int64)
    assert int(mapped.cardinality()) == 5
    assert [int(v) for v in mapped] == [0, 3, 6, 9, 12]
    assert calls == [0, 1, 2, 3, 4]
    doubled = Dataset.range(3).map(
        lambda x: tt.numpy_function(lambda v: np.float32(v * 2), [x], tt.float32)
    )
    assert doubled.element_spec == tt.TensorSpec(None, tt.float32)
    assert _listed(doubled) == [0.0, 2.0, 4.0]
    fixed = doubled.map(lambda v: tt.ensure_shape(v, []))
    assert fixed.element_spec == tt.TensorSpec([], tt.float32)


def test_cache_calls_the_function_once_an_element_and_writes_an_index_file(tmp_path):
    """TF 2.21: range(4).map(py_function(x * 2)).cache() has spec TensorSpec(None, int64)
    and two passes [0, 2, 4, 6] with 4 calls; cache(path) over range(3) (x + 100) writes
    `path.index`, 3 calls for two passes, and a new pipeline with that path reads [100,
    101, 102] without a call."""
    calls = []

    def slow(x):
        calls.append(1)
        return x * 2

    cached = Dataset.range(4).map(lambda x: tt.py_function(slow, [x], tt.int64)).cache()
    assert cached.element_spec == tt.TensorSpec(None, tt.int64)
    assert _listed(cached) == _listed(cached) == [0, 2, 4, 6] and len(calls) == 4
    path = str(tmp_path / "cache_file")
    calls.clear()

    def pipeline():
        plus = Dataset.range(3).map(lambda x: tt.py_function(lambda v: v + 100, [x], tt.int64))
        return plus.map(lambda v: tt.py_function(lambda w: calls.append(1) or w, [v], tt.int64))

    first = pipeline().cache(path)
    assert _listed(first) == _listed(first) == [100, 101, 102] and len(calls) == 3
    assert os.path.exists(path + ".index")
    assert _listed(pipeline().cache(path)) == [100, 101, 102] and len(calls) == 3


# --- save, load ------------------------------------------------------------------------------


def test_save_and_load_round_trip_nested_elements(tmp_path):
    """TF 2.21: ({"a": [1, 2], "b": (["x", "yz"], [[0.5], [1.5]])}, [True, False]) saved and
    loaded: the same spec ({a: int32[], b: (string[], float32[1])}, bool[]), the elements
    ({a: 1, b: (b"x", [0.5])}, True), ({a: 2, b: (b"yz", [1.5])}, False), cardinality 2;
    range(10).filter(x % 3 == 0) loads with cardinality 4; range(5).batch(2) with spec
    (None,) and [0, 1], [2, 3], [4]; range(0) with cardinality 0; a second save replaces
    the first."""
    nested = Dataset.from_tensor_slices(
        ({"a": [1, 2], "b": (["x", "yz"], [[0.5], [1.5]])}, [True, False])
    )
    nested.save(str(tmp_path / "nested"))
    back = Dataset.load(str(tmp_path / "nested"))
    assert back.element_spec == nested.element_spec
    assert int(back.cardinality()) == 2
    assert _listed(back) == [({"a": 1, "b": (b"x", [0.5])}, True), ({"a": 2, "b": (b"yz", [1.5])}, False)]  # fmt: skip
    again = Dataset.load(str(tmp_path / "nested"), element_spec=nested.element_spec)
    assert _listed(again) == _listed(back)
    Dataset.range(10).filter(lambda x: x % 3 == 0).save(tmp_path / "filtered")
    filtered = Dataset.load(tmp_path / "filtered")
    assert int(filtered.cardinality()) == 4 and _listed(filtered) == [0, 3, 6, 9]
    Dataset.range(5).batch(2).save(tmp_path / "batched")
    batched = Dataset.load(tmp_path / "batched")
    assert batched.element_spec == tt.TensorSpec([None], tt.int64)
    assert _listed(batched) == [[0, 1], [2, 3], [4]]
    Dataset.range(0).save(tmp_path / "empty")
    assert int(Dataset.load(tmp_path / "empty").cardinality()) == 0
    Dataset.range(3).save(tmp_path / "nested")  # replaces what was there
    assert _listed(Dataset.load(tmp_path / "nested")) == [0, 1, 2]
    assert len(os.listdir(tmp_path / "nested")) == 2  # the manifest and one shard


def test_save_and_load_ragged_and_sparse_elements(tmp_path):
    """TF 2.21: ragged [[1, 2], [3], []] batched by 2, saved and loaded: spec
    RaggedTensorSpec([None, None], int32, 1), elements [[1, 2], [3]] and [[]]. A sparse
    element comes back with its indices, values and dense shape."""
    ragged = Dataset.from_tensor_slices(tt.ragged.constant([[1, 2], [3], []])).batch(2)
    ragged.save(tmp_path / "ragged")
    back = Dataset.load(tmp_path / "ragged")
    assert back.element_spec == tt.RaggedTensorSpec([None, None], tt.int32, 1)
    assert [t.to_list() for t in back] == [[[1, 2], [3]], [[]]]
    sparse = tt.sparse.SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 2])
    Dataset.from_tensors(sparse).save(tmp_path / "sparse")
    (element,) = list(Dataset.load(tmp_path / "sparse"))
    assert tt.sparse.to_dense(element).numpy().tolist() == [[0.0, 5.0], [0.0, 0.0], [6.0, 0.0]]


def _saved(tmp_path):
    path = tmp_path / "saved"
    Dataset.from_tensor_slices({"a": [1, 2, 3], "b": ["x", "y", "z"]}).save(path)
    manifest = path / "tracer-dataset.json"
    return path, manifest, json.loads(manifest.read_text())


def test_loading_a_hostile_directory_raises_a_clear_error(tmp_path):
    """A directory tracer did not save into is NotFoundError (TensorFlow's class for a load
    of a path without its spec file); a manifest or shard that is not what tracer writes is
    DataLossError, also a ValueError, naming the file: garbage, a shard name with a path
    in it, a shard that is a link, an array of another dtype, counts that do not add up, a
    pickled object array. Nothing is unpickled and nothing outside the directory is read."""
    with pytest.raises(tt.errors.NotFoundError, match="holds no dataset"):
        Dataset.load(tmp_path / "nowhere")
    path, manifest, good = _saved(tmp_path)
    shard = path / good["shards"][0]["file"]
    outside = tmp_path / "outside.npz"
    outside.write_bytes(shard.read_bytes())

    def refused(content, match="tracer-dataset.json"):
        manifest.write_text(content if isinstance(content, str) else json.dumps(content))
        with pytest.raises(tt.errors.DataLossError, match=match) as raised:
            list(Dataset.load(path))
        assert isinstance(raised.value, ValueError)

    refused("not json {")
    refused("[" * 100000)
    refused({**good, "version": 99})
    refused({**good, "count": 5})
    refused({**good, "shards": [{"file": "../outside.npz", "count": 3}]})
    refused({**good, "element_spec": {"tensor": [[], "resource"]}})
    refused({**good, "element_spec": {"pickle": "cos\nsystem\n"}})
    link = path / "shard-link-00000.npz"
    link.symlink_to(outside)
    refused({**good, "shards": [{"file": link.name, "count": 3}]}, match="link")
    wrong = {**good, "element_spec": {"dict": [["a", {"tensor": [[], "float32"]}], ["b", {"tensor": [[], "string"]}]]}}  # fmt: skip
    refused(wrong, match="shard")
    manifest.write_text(json.dumps(good))
    np.savez(shard, **{"0.ndim": np.array([0, 0, 0]), "0.values": np.array([object()] * 3)})
    with pytest.raises(tt.errors.DataLossError, match="shard"):
        list(Dataset.load(path))
    shard.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(tt.errors.DataLossError, match="shard"):
        list(Dataset.load(path))


# --- snapshot ---------------------------------------------------------------------------------


def test_snapshot_writes_its_first_pass_and_reads_it_afterwards(tmp_path):
    """TF 2.21: range(4).map(py_function(x * 2)).snapshot(path): spec TensorSpec(None,
    int64), cardinality 4, [0, 2, 4, 6] with 4 calls, then [0, 2, 4, 6] with no more, the
    directory there; a pipeline with another function writes its own snapshot; a first
    pass left unfinished writes nothing, so the next pass runs the pipeline again."""
    path, calls = str(tmp_path / "snap"), []

    def double(x):
        calls.append(int(x))
        return x * 2

    snapped = Dataset.range(4).map(lambda x: tt.py_function(double, [x], tt.int64)).snapshot(path)
    assert snapped.element_spec == tt.TensorSpec(None, tt.int64)
    assert int(snapped.cardinality()) == 4
    assert _listed(snapped) == [0, 2, 4, 6] and len(calls) == 4
    assert _listed(snapped) == [0, 2, 4, 6] and len(calls) == 4  # read from the files
    assert os.path.isdir(path)
    other = Dataset.range(4).map(lambda x: tt.py_function(double, [x + 1], tt.int64))
    assert _listed(other.snapshot(path)) == [2, 4, 6, 8] and len(calls) == 8
    unfinished = Dataset.range(4).map(lambda x: x * 3).snapshot(str(tmp_path / "part"))
    next(iter(unfinished))
    assert [len(files) for _, _, files in os.walk(tmp_path / "part")] in ([0], [0, 0])
    words = Dataset.from_tensor_slices({"w": ["a", "bc"], "n": [[1, 2], [3, 4]]})
    words = words.snapshot(str(tmp_path / "words"))
    assert _listed(words) == _listed(words) == [{"n": [1, 2], "w": b"a"}, {"n": [3, 4], "w": b"bc"}]  # fmt: skip


# --- ignore_errors -----------------------------------------------------------------------------


def _reciprocals():
    values = Dataset.from_tensor_slices([1.0, 0.0, 4.0, 0.0, 8.0])
    return values.map(lambda x: tt.debugging.check_numerics(1.0 / x, "division"))


def test_ignore_errors_leaves_out_the_elements_that_raise():
    """TF 2.21: check_numerics(1 / x) over [1, 0, 4, 0, 8].ignore_errors(): 1.0 0.25 0.125,
    cardinality -2 (also of range(5).ignore_errors()); without it the pass raises
    InvalidArgumentError; a batch(2) an element failed in is dropped ([0.125]); a filter
    whose predicate raises on x % 3 == 0 over range(6) keeps 1 2 4 5; a py_function that
    raises at x == 2 over range(5): 0 1 3 4; a generator that raises after 1, 2: 1 2."""
    assert _listed(_reciprocals().ignore_errors()) == [1.0, 0.25, 0.125]
    assert _listed(_reciprocals().apply(tt.data.experimental.ignore_errors())) == [1.0, 0.25, 0.125]  # fmt: skip
    assert int(Dataset.range(5).ignore_errors().cardinality()) == -2
    with pytest.raises(tt.errors.InvalidArgumentError):
        list(_reciprocals())
    assert _listed(_reciprocals().batch(2).ignore_errors()) == [[0.125]]
    kept = Dataset.range(6).filter(
        lambda x: tt.debugging.check_numerics(1.0 / tt.cast(x % 3, tt.float32), "d") > 0
    )
    assert _listed(kept.ignore_errors()) == [1, 2, 4, 5]

    def refuse_two(x):
        if int(x) == 2:
            raise ValueError("two")
        return x

    parsed = Dataset.range(5).map(lambda x: tt.py_function(refuse_two, [x], tt.int64))
    assert _listed(parsed.ignore_errors()) == [0, 1, 3, 4]

    def generate():
        yield 1
        yield 2
        raise ValueError("boom")

    generated = Dataset.from_generator(generate, output_signature=tt.TensorSpec([], tt.int32))
    assert _listed(generated.ignore_errors()) == [1, 2]


# --- sources and iterators ----------------------------------------------------------------------


def test_random_gives_int64_scalars_the_same_at_each_pass_with_a_seed():
    """TF 2.21: Dataset.random(seed=4): spec TensorSpec([], int64), cardinality -1, the same
    values at each pass, each in [0, 2**32); with rerandomize_each_iteration=True, or
    without a seed, new values at each pass (tracer's values are numpy's, not TF's)."""
    drawn = Dataset.random(seed=4)
    assert drawn.element_spec == tt.TensorSpec([], tt.int64)
    assert int(drawn.cardinality()) == -1 and int(drawn.take(3).cardinality()) == 3
    first = _listed(drawn.take(2000))
    assert first == _listed(drawn.take(2000)) == _listed(Dataset.random(seed=4).take(2000))
    assert 0 <= min(first) and max(first) < 2**32 and len(set(first)) > 1990
    again = Dataset.random(seed=4, rerandomize_each_iteration=True).take(3)
    assert _listed(again) != _listed(again)
    unseeded = Dataset.random().take(3)
    assert _listed(unseeded) != _listed(unseeded)


def test_get_next_as_optional_is_empty_at_the_end():
    """TF 2.21: range(2) mapped to (x, as_string(x)): two Optionals with values (0, b"0"),
    (1, b"1"), then one whose has_value() is False, with the same element_spec, whose
    get_value() raises InvalidArgumentError ("The given optional does not have a value.")."""
    iterator = iter(Dataset.range(2).map(lambda x: (x, tt.strings.as_string(x))))
    got = []
    for _ in range(3):
        optional = iterator.get_next_as_optional()
        assert optional.element_spec == (tt.TensorSpec([], tt.int64), tt.TensorSpec([], tt.string))
        if optional.has_value():
            got.append(tuple(np.asarray(t)[()] for t in optional.get_value()))
    assert got == [(0, b"0"), (1, b"1")] and not bool(optional.has_value())
    with pytest.raises(tt.errors.InvalidArgumentError, match="does not have a value"):
        optional.get_value()
    made = tt.experimental.Optional.from_value({"a": tt.constant(1.0), "b": 3})
    assert made.element_spec == {"a": tt.TensorSpec([], tt.float32), "b": tt.TensorSpec([], tt.int32)}  # fmt: skip
    assert not bool(tt.data.experimental.Optional.empty(tt.TensorSpec([], tt.int32)).has_value())


def test_a_generator_element_of_the_wrong_shape_is_invalid_argument():
    """TF 2.21: a generator yielding [3, 4, 5] for TensorSpec([2], int32) raises
    InvalidArgumentError (tracer's is also the ValueError it raised before)."""
    bad = Dataset.from_generator(
        lambda: iter([[1, 2], [3, 4, 5]]), output_signature=tt.TensorSpec([2], tt.int32)
    )
    with pytest.raises(tt.errors.InvalidArgumentError) as raised:
        list(bad)
    assert isinstance(raised.value, ValueError)


def test_a_dataset_made_in_a_function_from_its_argument():
    """TF 2.21: a tf.function making range(n).map(x * 2) of its argument n = 4 and reducing
    it gives int64 12; tracer runs such a function as Python at each call."""

    @tt.function
    def build_inside(n):
        made = Dataset.range(n).map(lambda x: x * 2)
        return made.reduce(tt.constant(0, tt.int64), lambda s, x: s + x)

    assert int(build_inside(tt.constant(4, tt.int64))) == 12
    assert int(build_inside(tt.constant(5, tt.int64))) == 20


# --- rejection_resample --------------------------------------------------------------------------


def test_rejection_resample_gives_class_element_pairs_in_the_target_proportions():
    """TF 2.21: classes [0, 0, 0, 1, 0, 1, 0, 0] with values, target [0.5, 0.5], initial
    [0.75, 0.25], seed 1: spec (int32[], (int32[], float32[])), cardinality -2, at least 4
    pairs, the same at each pass; over range(10000) with class x % 4 == 0 (25%), target
    [0.5, 0.5], about half of each class (TF: 7434 pairs, 3734 of class 1), with and
    without initial_dist. tracer's draws are numpy's, not TF's."""
    data = Dataset.from_tensor_slices(([0, 0, 0, 1, 0, 1, 0, 0], np.arange(8.0, dtype=np.float32)))
    resampled = data.rejection_resample(
        class_func=lambda c, v: c, target_dist=[0.5, 0.5], initial_dist=[0.75, 0.25], seed=1
    )
    assert resampled.element_spec == (
        tt.TensorSpec([], tt.int32),
        (tt.TensorSpec([], tt.int32), tt.TensorSpec([], tt.float32)),
    )
    assert int(resampled.cardinality()) == -2
    pairs = _listed(resampled)
    assert len(pairs) >= 4 and pairs == _listed(resampled)
    assert all(label == element[0] for label, element in pairs)
    big = Dataset.range(10000).map(lambda x: tt.cast(x % 4 == 0, tt.int64))
    for initial in (None, [0.75, 0.25]):
        labels = [label for label, _ in _listed(big.rejection_resample(lambda x: x, [0.5, 0.5], initial, seed=3))]  # fmt: skip
        assert 6000 < len(labels) and 0.45 < np.mean(labels) < 0.55
    with pytest.raises(TypeError, match="integer"):
        data.rejection_resample(lambda c, v: tt.cast(c, tt.float32), [0.5, 0.5])
