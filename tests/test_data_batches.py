"""A batch of a map: the map's compiled module run on each element of the batch from one call
(`ConcreteFunction.call_on_batch`), which must give what mapping element by element and
stacking gives, bit for bit, and fall back to that wherever it cannot run so."""

import numpy as np
import pytest

import tracer as tt
from tracer.concrete import ConcreteFunction

Dataset = tt.data.Dataset
RNG = np.random.default_rng(7)
X = RNG.standard_normal((300, 5, 7)).astype(np.float32)  # 35 floats a row: odd strides
Y = RNG.integers(0, 10, 300)
W = RNG.standard_normal((7, 3)).astype(np.float32)


def _softmax_and_labels(a, b):
    return tt.exp(a) / tt.reduce_sum(tt.exp(a)), tt.one_hot(b, 10), tt.reduce_max(a, axis=0)


SCALE = tt.Variable(1.5)  # a 0-d variable the map reads
Pair = __import__("collections").namedtuple("Pair", "first second")
WIDE = {f"leaf{k}": X[:, k % 5, k % 7] for k in range(40)}  # 40 leaves in, 40 out

# (the pipeline before its map, the map's function, the batch size, drop_remainder)
PIPELINES = {
    "shuffled slices": (
        lambda: Dataset.from_tensor_slices((X, Y)).shuffle(100, seed=3),
        _softmax_and_labels,
        32,
        False,
    ),
    "a dict, the remainder dropped": (
        lambda: Dataset.from_tensor_slices({"a": X, "b": Y}),
        lambda d: {"t": tt.tanh(d["a"]) @ W, "b": d["b"] + 1, "k": 4},
        64,
        True,
    ),
    "a variable, an input as it is, a namedtuple": (
        lambda: Dataset.from_tensor_slices(X),
        lambda a: Pair(a, (tt.sin(a) * SCALE, tt.reduce_sum(a * a))),
        20,
        False,
    ),
    "forty leaves": (
        lambda: Dataset.from_tensor_slices(WIDE).shuffle(50, seed=1),
        lambda d: {key: value * 2.0 + 1.0 for key, value in d.items()},
        16,
        False,
    ),
}


def _batched(name):
    """Two passes of the pipeline with its batches, each batch's leaves as arrays."""
    source, function, size, drop = PIPELINES[name]
    dataset = source().map(function).batch(size, drop)
    return [[np.asarray(leaf) for leaf in tt.nest.flatten(b)] for _ in range(2) for b in dataset]


def _element_by_element(name):
    """The same two passes without the batch: each element mapped alone, its leaves stacked
    here in groups of the batch size (a dropped remainder left out)."""
    source, function, size, drop = PIPELINES[name]
    dataset = source().map(function)
    batches = []
    for _ in range(2):
        elements = [[np.asarray(leaf) for leaf in tt.nest.flatten(e)] for e in dataset]
        stop = len(elements) - len(elements) % size if drop else len(elements)
        for start in range(0, stop, size):
            group = elements[start : start + size]
            batches.append([np.stack(leaves) for leaves in zip(*group)])
    return batches


def _served(monkeypatch):
    """The list each later call_on_batch's result is appended to (None: not run so)."""
    served = []
    call_on_batch = ConcreteFunction.call_on_batch
    monkeypatch.setattr(
        ConcreteFunction,
        "call_on_batch",
        lambda self, arrays, count: served.append(call_on_batch(self, arrays, count)) or served[-1],
    )
    return served


def _same_bits(one, other):
    assert len(one) == len(other)
    for batch, expected in zip(one, other):
        assert len(batch) == len(expected)
        for got, want in zip(batch, expected):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("name", PIPELINES)
def test_a_map_run_on_whole_batches_gives_each_elements_bits(name, monkeypatch):
    """Every batch after the first (which traces the function) runs on the module from one
    call, and each of its leaves has the dtype, shape and bits of each element mapped alone
    and the results stacked."""
    served = _served(monkeypatch)
    batched = _batched(name)
    assert served and all(s is not None for s in served)
    assert len(served) == len(batched) - 1  # the first pass's first batch: element by element
    monkeypatch.undo()
    _same_bits(batched, _element_by_element(name))


def test_batches_of_a_map_against_numpy():
    """x * 0.5 and each row's number, shuffled: every row once, each scaled as numpy scales."""
    dataset = Dataset.from_tensor_slices((X, np.arange(300))).shuffle(300, seed=1)
    batches = list(dataset.map(lambda a, i: (a * 0.5, i)).batch(50))
    features = np.concatenate([f.numpy() for f, _ in batches])
    rows = np.concatenate([i.numpy() for _, i in batches])
    assert sorted(rows.tolist()) == list(range(300)) and rows.tolist() != list(range(300))
    np.testing.assert_array_equal(features, X[rows] * np.float32(0.5))


def test_a_generators_elements_are_mapped_as_they_come():
    """A generator that sets a variable before each element, and refills one array for each:
    the map reads each element, and the variable, as each element comes, so every batch
    holds its own elements' values (read ahead, the later ones would overwrite them)."""
    step = tt.Variable(0.0)
    buffer = np.zeros(2, np.float32)

    def rows():
        for k in range(12):
            step.assign(float(k))
            buffer[:] = [k, -k]
            yield buffer

    dataset = Dataset.from_generator(rows, output_signature=tt.TensorSpec([2], tt.float32))
    got = np.concatenate([b.numpy() for b in dataset.map(lambda v: v * 2.0 + step).batch(4)])
    k = np.arange(12, dtype=np.float32)
    np.testing.assert_array_equal(got, np.stack([3 * k, -k], axis=1))


def test_results_other_than_tuples_and_dicts_of_tensors_are_mapped_one_by_one():
    """A list result (a tuple of components, to tf.data: TensorFlow 2.21 gives two (8, 3)
    tensors a batch) and a string among the results: each batch has the shapes and values
    of the elements mapped alone and stacked."""
    rows = X[:20, 0, :3]
    listed = Dataset.from_tensor_slices(rows).map(lambda a: [a, a * 2.0]).batch(8)
    shapes = [tuple(t.shape for t in b) for b in listed]
    assert shapes == [((8, 3), (8, 3)), ((8, 3), (8, 3)), ((4, 3), (4, 3))]
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in listed]), rows * 2)
    named = Dataset.from_tensor_slices(rows).map(lambda a: (a * 2.0, "abc")).batch(8)
    assert [tuple(label.shape) for _, label in named] == [(8,), (8,), (4,)]


def test_a_map_calling_python_or_assigning_runs_once_per_element_in_order():
    """A tt.py_function's calls and a variable's assign_add happen once per element, in the
    elements' order, as without batches."""
    seen = []

    def record(v):
        seen.append(int(v))
        return v

    numbers = Dataset.from_tensor_slices(np.arange(10))
    mapped = numbers.map(lambda i: tt.py_function(record, [i], tt.int64) + 1)
    assert np.concatenate([b.numpy() for b in mapped.batch(4)]).tolist() == list(range(1, 11))
    assert seen[-10:] == list(range(10))
    counter = tt.Variable(0, dtype=tt.int64)

    def counted(i):
        counter.assign_add(1)
        return i * 3

    got = np.concatenate([b.numpy() for b in numbers.map(counted).batch(4)])
    assert got.tolist() == [3 * k for k in range(10)] and int(counter.numpy()) == 10


def test_a_variable_the_map_reads_is_read_when_its_batch_is_made(monkeypatch):
    """The loop changes the scale after each batch: each batch is scaled by the value it had
    when the batch was made, as when each element is mapped as it comes; the batches after
    the first run on the module."""
    served = _served(monkeypatch)
    scale = tt.Variable(1.0)
    dataset = Dataset.from_tensor_slices(X[:40]).map(lambda a: a * scale).batch(10)
    for k, batch in enumerate(dataset):
        np.testing.assert_array_equal(batch.numpy(), X[10 * k : 10 * k + 10] * np.float32(k + 1))
        scale.assign(float(k + 2))
    assert len(served) == 3 and all(s is not None for s in served)


@pytest.mark.parametrize("bad, drop", [(70, False), (99, True)])
def test_an_error_in_a_batch_is_the_error_of_its_elements_call(bad, drop):
    """A gather whose index is out of range at one element, inside a batch or in the
    remainder that drop_remainder drops (whose elements are still mapped): the error, and
    its message, of that element's call alone."""
    table = tt.constant(np.arange(5.0))
    indices = np.arange(100) % 5
    indices[bad] = 9
    mapped = Dataset.from_tensor_slices(indices).map(lambda i: tt.gather(table, i))
    with pytest.raises(tt.errors.InvalidArgumentError) as raised:
        list(mapped.batch(16, drop_remainder=drop))
    with pytest.raises(tt.errors.InvalidArgumentError) as alone:
        list(mapped.skip(bad).take(1))
    assert str(raised.value) == str(alone.value)


def test_under_a_tape_each_element_calls_the_function():
    """Iterated under a GradientTape, the map's calls are the tt.function's own, one per
    element, as the tape watches them: no batch runs the module directly."""
    served = []
    call_on_batch = ConcreteFunction.call_on_batch
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            ConcreteFunction,
            "call_on_batch",
            lambda self, a, c: served.append(call_on_batch(self, a, c)) or served[-1],
        )
        dataset = Dataset.from_tensor_slices(X[:30]).map(lambda a: a * 2.0).batch(10)
        list(dataset)  # traced
        served.clear()
        with tt.GradientTape():
            got = np.concatenate([b.numpy() for b in dataset])
    assert served == [None] * 3
    np.testing.assert_array_equal(got, X[:30] * np.float32(2.0))
