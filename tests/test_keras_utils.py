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


def test_the_legacy_backend_values_as_kerass_guides_use_them():
    # the TF-docs callbacks guide: lr = float(get_value(...learning_rate)); set_value(...)
    # (TF 2.21 printed get_value 0.1, then 0.2 once set, and int_shape (None, None, 3))
    backend = tt.keras.backend
    optimizer = tt.keras.optimizers.SGD(0.1)
    assert float(backend.get_value(optimizer.learning_rate)) == float(np.float32(0.1))
    backend.set_value(optimizer.learning_rate, 0.2)
    assert optimizer.learning_rate.numpy() == np.float32(0.2)
    v, w = tt.Variable([1.0, 2.0]), tt.Variable(3, dtype=tt.int64)
    backend.batch_set_value([(v, [5, 6]), (w, 7.0)])
    got = backend.batch_get_value([v, w])
    assert got[0].tolist() == [5.0, 6.0] and got[1] == 7 and got[1].dtype == np.int64
    assert backend.get_value(4) == 4
    assert backend.int_shape(tt.keras.Input((None, 3))) == (None, None, 3)
    assert backend.int_shape(tt.ones((2, 3))) == (2, 3)
