"""tt.keras.utils.to_categorical against Keras 3.15's printed outputs for the same labels."""

import numpy as np
import pytest

import tracer as tt


def test_to_categorical_of_numbers_and_arrays():
    rows = tt.keras.utils.to_categorical([0, 2, 1])
    np.testing.assert_array_equal(rows, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert rows.dtype == np.float64 and isinstance(rows, np.ndarray)
    assert tt.keras.utils.to_categorical(np.array([[1], [0]]), 3).shape == (2, 3)
    nested = tt.keras.utils.to_categorical([[1, 2], [0, 1]])
    assert nested.shape == (2, 2, 3) and nested[0, 1].tolist() == [0, 0, 1]
    assert tt.keras.utils.to_categorical([], num_classes=3).shape == (0, 3)
    assert tt.keras.utils.to_categorical([0, 1], num_classes=4).tolist() == [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
    ]


def test_to_categorical_of_a_tensor_is_a_float32_tensor():
    rows = tt.keras.utils.to_categorical(tt.constant([[1], [0]]), 3)
    assert isinstance(rows, tt.Tensor) and rows.dtype == tt.float32
    np.testing.assert_array_equal(rows.numpy(), [[0, 1, 0], [1, 0, 0]])


@pytest.mark.parametrize("labels, classes", [([-1, 2], None), ([0, 3], 3)])
def test_to_categorical_refuses_labels_outside_the_classes(labels, classes):
    with pytest.raises(ValueError, match="is not one of the 3 classes"):
        tt.keras.utils.to_categorical(labels, classes)
