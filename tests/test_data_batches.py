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


PIPELINES = {
    "shuffled slices": lambda: (
        Dataset.from_tensor_slices((X, Y)).shuffle(100, seed=3).map(_softmax_and_labels).batch(32)
    ),
    "a dict, the remainder dropped": lambda: (
        Dataset.from_tensor_slices({"a": X, "b": Y})
        .map(lambda d: {"t": tt.tanh(d["a"]) @ W, "b": d["b"] + 1, "k": 4})
        .batch(64, drop_remainder=True)
    ),
    "range's elements": lambda: (
        Dataset.range(200).map(lambda i: (tt.cast(i, tt.float64) ** 1.5, i * 2)).batch(33)
    ),
    "filtered elements, an input as it is": lambda: (
        Dataset.from_tensor_slices(X)
        .filter(lambda a: tt.reduce_sum(a) > 0)
        .map(lambda a: (a, tt.sin(a) * 2.0, tt.reduce_sum(a * a)))
        .batch(20)
    ),
}


def _passes(make, batched):
    """Two passes of the pipeline, each batch's leaves as arrays; `batched`: whether the
    module may run on whole batches."""
    with pytest.MonkeyPatch.context() as patch:
        if not batched:
            patch.setattr(ConcreteFunction, "call_on_batch", lambda self, arrays, count: None)
        dataset = make()
        return [
            [np.asarray(leaf) for leaf in tt.nest.flatten(b)] for _ in range(2) for b in dataset
        ]


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
    call, and each of its leaves has the dtype, shape and bits of mapping element by
    element."""
    served = []
    call_on_batch = ConcreteFunction.call_on_batch
    monkeypatch.setattr(
        ConcreteFunction,
        "call_on_batch",
        lambda self, arrays, count: served.append(call_on_batch(self, arrays, count)) or served[-1],
    )
    batched = _passes(PIPELINES[name], True)
    assert served and None not in served
    assert len(served) == len(batched) - 1  # the first pass's first batch: element by element
    monkeypatch.undo()
    _same_bits(batched, _passes(PIPELINES[name], False))


def test_batches_of_a_map_against_numpy():
    """x * 0.5 and each row's number, shuffled: every row once, each scaled as numpy scales."""
    dataset = Dataset.from_tensor_slices((X, np.arange(300))).shuffle(300, seed=1)
    batches = list(dataset.map(lambda a, i: (a * 0.5, i)).batch(50))
    features = np.concatenate([f.numpy() for f, _ in batches])
    rows = np.concatenate([i.numpy() for _, i in batches])
    assert sorted(rows.tolist()) == list(range(300)) and rows.tolist() != list(range(300))
    np.testing.assert_array_equal(features, X[rows] * np.float32(0.5))


def test_elements_of_other_shapes_in_a_batch_are_mapped_one_by_one():
    """Generator rows of lengths 3 and 4, each mapped to its sum and its first element: a
    batch that mixes the lengths cannot be stacked before the map, so its elements are
    mapped one by one; the values are numpy's."""
    rows = [np.arange(3 + k % 2, dtype=np.float64) * (k + 1) for k in range(10)]
    dataset = Dataset.from_generator(
        lambda: iter(rows), output_signature=tt.TensorSpec([None], tt.float64)
    )
    got = [b.numpy() for b in dataset.map(lambda v: tt.stack([tt.reduce_sum(v), v[0]])).batch(4)]
    want = np.array([[r.sum(), r[0]] for r in rows])
    np.testing.assert_array_equal(np.concatenate(got), want)


def test_a_map_calling_python_or_assigning_runs_once_per_element_in_order():
    """A tt.py_function's calls and a variable's assign_add happen once per element, in the
    elements' order, as without batches."""
    seen = []

    def record(v):
        seen.append(int(v))
        return v

    mapped = Dataset.range(10).map(lambda i: tt.py_function(record, [i], tt.int64) + 1)
    assert np.concatenate([b.numpy() for b in mapped.batch(4)]).tolist() == list(range(1, 11))
    assert seen[-10:] == list(range(10))
    counter = tt.Variable(0, dtype=tt.int64)

    def counted(i):
        counter.assign_add(1)
        return i * 3

    got = np.concatenate([b.numpy() for b in Dataset.range(9).map(counted).batch(4)])
    assert got.tolist() == [3 * k for k in range(9)] and int(counter.numpy()) == 9


def test_a_variable_the_map_reads_is_read_when_its_batch_is_made():
    """The loop changes the scale after each batch: each batch is scaled by the value it had
    when the batch was made, as when each element is mapped as it comes."""
    scale = tt.Variable(1.0)
    dataset = Dataset.from_tensor_slices(X[:40]).map(lambda a: a * scale).batch(10)
    for k, batch in enumerate(dataset):
        np.testing.assert_array_equal(batch.numpy(), X[10 * k : 10 * k + 10] * np.float32(k + 1))
        scale.assign(float(k + 2))


def test_an_error_in_a_batch_is_the_error_of_its_elements_call():
    """A gather whose index is out of range at element 70: the same error, with the same
    message, as the call of that element alone raises."""
    table = tt.constant(np.arange(5.0))
    indices = np.arange(100) % 5
    indices[70] = 9

    def errors(batched):
        with pytest.MonkeyPatch.context() as patch:
            if not batched:
                patch.setattr(ConcreteFunction, "call_on_batch", lambda self, a, c: None)
            dataset = Dataset.from_tensor_slices(indices).map(lambda i: tt.gather(table, i))
            with pytest.raises(tt.errors.InvalidArgumentError) as raised:
                list(dataset.batch(16))
        return str(raised.value)

    assert errors(True) == errors(False)


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
