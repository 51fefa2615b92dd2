"""tt.random: seeding, dtypes and the distributions' moments."""

import numpy as np
import pytest

import tracer as tt


def test_set_seed_makes_draws_repeatable_and_op_seeds_pick_streams():
    tt.random.set_seed(5)
    first = [tt.random.normal((3,)).numpy(), tt.random.uniform((2,)).numpy()]
    tt.random.set_seed(5)
    second = [tt.random.normal((3,)).numpy(), tt.random.uniform((2,)).numpy()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    a = tt.random.normal((4,), seed=1).numpy()
    b = tt.random.normal((4,), seed=1).numpy()
    c = tt.random.normal((4,), seed=2).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_normal_and_uniform_moments_and_dtypes():
    tt.random.set_seed(0)
    n = tt.random.normal((200_000,), mean=2.0, stddev=3.0, dtype=tt.float64)
    assert n.dtype == tt.float64 and n.shape == (200_000,)
    assert abs(n.numpy().mean() - 2.0) < 0.05 and abs(n.numpy().std() - 3.0) < 0.05
    u = tt.random.uniform((100_000,), minval=-1.0, maxval=3.0)
    assert u.dtype == tt.float32
    assert u.numpy().min() >= -1.0 and u.numpy().max() < 3.0 and abs(u.numpy().mean() - 1.0) < 0.05
    k = tt.random.uniform((1000,), minval=0, maxval=5, dtype=tt.int32)
    assert k.dtype == tt.int32 and set(np.unique(k.numpy())) == {0, 1, 2, 3, 4}


def test_bad_random_arguments():
    with pytest.raises(TypeError, match="floating"):
        tt.random.normal((2,), dtype=tt.int32)
    with pytest.raises(ValueError, match="maxval"):
        tt.random.uniform((2,), dtype=tt.int32)
