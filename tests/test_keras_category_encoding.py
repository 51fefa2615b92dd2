"""Keras's CategoryEncoding against what Keras 3.15 on TensorFlow 2.21 printed for the same
inputs (every mode, ranks 0 to 3, categories out of range, count weights, dtypes), traced
as eagerly, and through a `.keras` config."""

import numpy as np
import pytest

import tracer as tt

CategoryEncoding = tt.keras.layers.CategoryEncoding
I4 = np.eye(4, dtype=np.float32)


def _encoded(mode, values, **kwargs):
    return CategoryEncoding(num_tokens=4, output_mode=mode, **kwargs)(tt.constant(values))


def test_one_hot_as_keras():
    np.testing.assert_array_equal(_encoded("one_hot", [3, 2, 0, 1]).numpy(), I4[[3, 2, 0, 1]])
    np.testing.assert_array_equal(_encoded("one_hot", [[0], [1], [3]]).numpy(), I4[[0, 1, 3]])
    pairs = _encoded("one_hot", [[0, 1], [0, 0], [1, 2]])
    np.testing.assert_array_equal(pairs.numpy(), I4[[[0, 1], [0, 0], [1, 2]]])
    np.testing.assert_array_equal(_encoded("one_hot", 2).numpy(), I4[[2]])
    np.testing.assert_array_equal(
        _encoded("one_hot", [5, -1]).numpy(), [[0, 0, 0, 0], [0, 0, 0, 0]]
    )
    assert _encoded("one_hot", [[[0, 1]]]).shape == (1, 1, 2, 4)
    floats = CategoryEncoding(num_tokens=3, output_mode="one_hot")(tt.constant([0.0, 2.0]))
    np.testing.assert_array_equal(floats.numpy(), [[1, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("mode", ["multi_hot", "count"])
def test_multi_hot_and_count_as_keras(mode):
    np.testing.assert_array_equal(_encoded(mode, [3, 2, 0, 1]).numpy(), [1, 1, 1, 1])
    np.testing.assert_array_equal(_encoded(mode, [[0], [1], [3]]).numpy(), I4[[0, 1, 3]])
    rows = [[1, 1, 0, 0], [2 if mode == "count" else 1, 0, 0, 0], [0, 1, 1, 0]]
    np.testing.assert_array_equal(_encoded(mode, [[0, 1], [0, 0], [1, 2]]).numpy(), rows)
    np.testing.assert_array_equal(_encoded(mode, 2).numpy(), [0, 0, 1, 0])
    np.testing.assert_array_equal(_encoded(mode, [5, 1]).numpy(), [0, 1, 0, 0])
    np.testing.assert_array_equal(_encoded(mode, [[[0, 1]]]).numpy(), [I4[[0, 1]]])
    with pytest.raises(tt.errors.InvalidArgumentError, match="non-negative"):
        _encoded(mode, [-1, 1])


def test_count_weights_dtypes_and_traced_calls():
    layer = CategoryEncoding(num_tokens=4, output_mode="count")
    weighted = layer(
        tt.constant([[0, 1], [0, 0]]), count_weights=tt.constant([[0.1, 0.2], [0.1, 0.4]])
    )
    np.testing.assert_allclose(weighted.numpy(), [[0.1, 0.2, 0, 0], [0.5, 0, 0, 0]], rtol=1e-6)
    assert weighted.dtype == tt.float32
    ints = CategoryEncoding(num_tokens=3, output_mode="multi_hot", dtype="int32")(
        tt.constant([0, 2])
    )
    assert ints.dtype == tt.int32 and ints.numpy().tolist() == [1, 0, 1]
    values = np.array([[0, 3], [2, 2]])
    np.testing.assert_array_equal(tt.function(layer)(values).numpy(), layer(values).numpy())
    model = tt.keras.Sequential(
        [tt.keras.Input((2,), dtype="int64"), CategoryEncoding(num_tokens=4)]
    )
    assert model.output_shape == (None, 4)
    np.testing.assert_array_equal(model(np.array([[1, 3]])).numpy(), [[0, 1, 0, 1]])
    restored = tt.keras.Sequential.from_config(model.get_config())
    np.testing.assert_array_equal(restored(np.array([[1, 3]])).numpy(), [[0, 1, 0, 1]])
    assert layer.get_config()["num_tokens"] == 4 and layer.get_config()["output_mode"] == "count"


def test_arguments_keras_refuses():
    with pytest.raises(ValueError, match="num_tokens must be set"):
        CategoryEncoding()
    with pytest.raises(ValueError, match="output_mode"):
        CategoryEncoding(num_tokens=2, output_mode="tf_idf")
    with pytest.raises(NotImplementedError, match="SparseTensor"):
        CategoryEncoding(num_tokens=2, sparse=True)
