"""tt.math.confusion_matrix against TensorFlow's documented example and numpy counts, with
weights, a given num_classes, in a traced function, and its errors; tt.newaxis."""

import numpy as np
import pytest

import tracer as tt


def test_tensorflow_documented_example():
    matrix = tt.math.confusion_matrix([1, 2, 4], [2, 2, 4])
    expected = np.zeros((5, 5), np.int32)
    expected[1, 2] = expected[2, 2] = expected[4, 4] = 1
    np.testing.assert_array_equal(matrix.numpy(), expected)
    assert matrix.dtype == tt.int32


def test_weights_and_num_classes_in_a_traced_function():
    rng = np.random.default_rng(0)
    labels, predictions = rng.integers(0, 4, 50), rng.integers(0, 4, 50)
    weights = rng.uniform(0, 1, 50)
    expected = np.zeros((6, 6))
    np.add.at(expected, (labels, predictions), weights)

    @tt.function
    def matrix(labels, predictions, weights):
        return tt.math.confusion_matrix(labels, predictions, 6, weights, dtype=tt.float64)

    np.testing.assert_allclose(matrix(labels, predictions, weights).numpy(), expected)


def test_errors():
    with pytest.raises(tt.errors.InvalidArgumentError, match="negative"):
        tt.math.confusion_matrix([0, -1], [0, 1])
    with pytest.raises(tt.errors.InvalidArgumentError, match="out of bound"):
        tt.math.confusion_matrix([0, 3], [0, 1], num_classes=3)
    with pytest.raises(TypeError, match="give num_classes"):
        tt.function(lambda a, b: tt.math.confusion_matrix(a, b))(
            tt.constant([0, 1]), tt.constant([1, 1])
        )


def test_newaxis_indexes_as_none():
    x = tt.constant([1.0, 2.0])
    assert tt.newaxis is None
    assert x[..., tt.newaxis].shape == (2, 1)
