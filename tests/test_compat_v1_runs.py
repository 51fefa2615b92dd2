"""tt.compat.v1 Session runs against TensorFlow's behaviour: fed sizes checked against what
the graph's ops assumed of None sizes, fetches and feeds that are not of the graph refused,
and runs cached by what they fetch, never by the id of an object that may die."""

import numpy as np
import pytest

import tracer as tt

v1 = tt.compat.v1


def test_an_index_past_a_fed_axis_raises_instead_of_reading_outside_it():
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float32, [None])
        total = tt.reduce_sum(x)  # made before the indexes: it runs on any size
        fourth = x[4]
        (slope,) = tt.gradients(fourth * 2.0, [x])
        last, far = x[-1], x[100_000_000]
        doubled = x * 2.0  # made after the indexes: a run of it is checked as they are
    session = v1.Session(graph=graph)
    assert session.run(fourth, {x: np.arange(10, dtype=np.float32)}) == 4.0
    empty = np.zeros([0], np.float32)
    for fetch, value in [(fourth, [1.0, 2.0, 3.0]), (last, empty), (far, [1.0]), (slope, [1.0])]:
        with pytest.raises(tt.errors.InvalidArgumentError, match="'Placeholder'.*fed shape"):
            session.run(fetch, {x: value})
    np.testing.assert_array_equal(session.run(slope, {x: np.ones(6)}), [0, 0, 0, 0, 2, 0])
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"\(d0 - 5\) >= 0"):
        session.run(doubled, {x: [1.0]})
    assert session.run(total, {x: [1.0, 2.0]}) == 3.0


def test_eager_tensors_fetched_give_their_own_values():
    graph = v1.Graph()
    with graph.as_default():
        v1.placeholder(tt.float32, [])
    session = v1.Session(graph=graph)
    # the short-lived constant node made for a's fetch had an id the next could reuse
    a, b, c = tt.constant(1.0), tt.constant(2.0), tt.constant(3.0)
    assert [session.run(a), session.run(b), session.run(c)] == [1.0, 2.0, 3.0]


def test_fetches_of_another_graph_or_trace_raise_value_error():
    leaked = []

    @tt.function
    def f(x):
        leaked.append(x * 2.0 + 1.0)
        return x

    f(tt.constant(1.0))
    other, graph = v1.Graph(), v1.Graph()
    with other.as_default():
        variable = tt.Variable(7.0)
        y = v1.placeholder(tt.float32, []) * variable
    with graph.as_default():
        v1.placeholder(tt.float32, [])
    session = v1.Session(graph=graph)
    for fetch in (variable, y, leaked[0]):
        with pytest.raises(ValueError, match="not an element of this graph"):
            session.run(fetch)


def test_a_feed_cannot_be_a_tensor():
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float32, [2])
        y = x * 2.0
    with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
        v1.Session(graph=graph).run(y, {x: tt.constant([1.0, 2.0])})


def test_sizes_of_a_fed_placeholder_are_fetched_without_its_values():
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float32, [None, 2])
        shape, size = tt.shape(x), tt.size(x)
    session = v1.Session(graph=graph)
    value = np.zeros([3, 2], np.float32)
    np.testing.assert_array_equal(session.run(shape, {x: value}), [3, 2])
    assert session.run(size, {x: value}) == 6
    with pytest.raises(tt.errors.InvalidArgumentError, match="must feed a value"):
        session.run(size)
