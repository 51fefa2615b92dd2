"""Keras's Discretization against what Keras 3.15 on TensorFlow 2.21 printed for the same
inputs: buckets of given boundaries in every output mode, and the boundaries `adapt`
learns from an array, a dataset of batches and a small vector (numpy's generator seeded
0: 1000 x 3 normal values times 3 plus 1)."""

import numpy as np
import pytest

import tracer as tt

Discretization = tt.keras.layers.Discretization
X = [[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]]
DATA = np.random.default_rng(0).standard_normal((1000, 3)).astype(np.float32) * 3 + 1


def test_buckets_of_given_boundaries():
    buckets = Discretization(bin_boundaries=[0.0, 1.0, 2.0])(tt.constant(X))
    assert buckets.dtype == tt.int32 and buckets.numpy().tolist() == [[0, 2, 3, 1], [1, 3, 2, 1]]
    one_hot = Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="one_hot")(
        tt.constant(X[0])
    )
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(4)[[0, 2, 3, 1]])
    multi = Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="multi_hot")(tt.constant(X))
    np.testing.assert_array_equal(multi.numpy(), [[1, 1, 1, 1], [0, 1, 1, 1]])
    count = Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="count")(tt.constant(X))
    np.testing.assert_array_equal(count.numpy(), [[1, 1, 1, 1], [0, 2, 1, 1]])
    assert count.dtype == tt.float32


@pytest.mark.parametrize(
    ("bins", "epsilon", "boundaries", "first_rows"),
    [
        (4, 0.01, [-1.08914, 0.82607, 2.93873], [[2, 1, 2], [2, 1, 2], [3, 3, 0]]),
        (5, 0.001, [-1.62072, 0.05558, 1.66795, 3.4184], [[2, 2, 3], [2, 1, 3], [4, 4, 1]]),
        (3, 0.1, [-0.45126, 2.20595], [[1, 1, 2], [1, 0, 1], [2, 2, 0]]),
    ],
)
def test_adapt_learns_kerass_boundaries(bins, epsilon, boundaries, first_rows):
    layer = Discretization(num_bins=bins, epsilon=epsilon)
    layer.adapt(DATA)
    np.testing.assert_allclose(layer.bin_boundaries, boundaries, atol=1e-5)
    assert layer(DATA[:3]).numpy().tolist() == first_rows


def test_adapt_on_batches_and_a_small_vector_and_the_config():
    layer = Discretization(num_bins=4)
    layer.adapt(tt.data.Dataset.from_tensor_slices(DATA).batch(64))
    np.testing.assert_allclose(layer.bin_boundaries, [-0.94834, 0.88926, 3.07676], atol=1e-5)
    small = Discretization(num_bins=4)
    small.adapt(np.arange(10.0))
    np.testing.assert_allclose(small.bin_boundaries, [1.5, 4.0, 6.5], rtol=1e-7)
    config = small.get_config()
    assert sorted(config) == ["bin_boundaries", "dtype", "epsilon", "name", "num_bins", "output_mode", "sparse"]  # fmt: skip
    restored = Discretization.from_config(config)
    assert restored.bin_boundaries == small.bin_boundaries
    np.testing.assert_array_equal(
        tt.function(restored)(np.arange(10.0)).numpy(), small(np.arange(10.0)).numpy()
    )


def test_errors():
    with pytest.raises(ValueError, match="either `num_bins` or `bin_boundaries`"):
        Discretization()
    with pytest.raises(ValueError, match="pass the `bin_boundaries`"):
        Discretization(num_bins=3)(tt.constant(X))
    with pytest.raises(ValueError, match="Cannot adapt"):
        Discretization(bin_boundaries=[1.0]).adapt(DATA)
