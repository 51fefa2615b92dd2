"""Eager sums of large float arrays over their leading axes (a bias's gradient), and over
consecutive axes after a few (an NHWC batch's image axes), through the installed column sums
(codegen/array_math.py's `leading_sums`): the compiled code's order and bits, closer to the
exact sum than float32 pairwise sums, and numpy's way elsewhere.
"""

import numpy as np
import pytest

import tracer as tt
from tracer.ops import broadcast_ops

rng = np.random.default_rng(20261203)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, axis",
    [
        ((16, 28, 28, 32), [0, 1, 2]),  # a bias of 32 channels
        ((300, 400), 0),
        ((14000, 10), 0),  # fewer columns than a vector
        ((2000, 70), 0),  # a last vector of columns part full
        ((128, 512), 0),  # B2's bias: one block of columns, cut into one per thread
        ((70, 1000), 0),  # cut per thread into whole lines, the last block narrower
    ],
)
def test_large_sums_over_leading_axes_are_the_compiled_codes(shape, axis, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    assert x.size >= broadcast_ops.LEADING_SUMS_FROM
    eager = tt.reduce_sum(x, axis=axis)
    columns = x.reshape(-1, eager.numpy().size).astype(np.float64)
    in_order = np.cumsum(columns, axis=0)[-1].astype(dtype).reshape(eager.shape)
    assert eager.dtype == dtype
    # each column's terms added in the order of the rows, in double, rounded once
    np.testing.assert_array_equal(eager.numpy(), in_order)
    compiled = tt.function(lambda x: tt.reduce_sum(x, axis=axis), backend="c")(x)
    np.testing.assert_array_equal(compiled.numpy(), eager.numpy())
    kept = tt.reduce_sum(x, axis=axis, keepdims=True)
    np.testing.assert_array_equal(kept.numpy(), eager.numpy().reshape(kept.shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, axis",
    [
        ((4, 64, 64, 16), [1, 2]),  # GlobalAveragePooling's, an instance norm's moments
        ((8, 64, 64, 32), [1, 2]),
        ((4, 300, 200), 1),
        ((2, 3, 200, 200), [2]),  # six blocks
    ],
)
def test_large_sums_over_axes_after_others_are_the_compiled_codes_for_each_block(
    shape, axis, dtype
):
    """numpy adds such an array's rows one after another in its own type: over a float32
    batch of 64 x 64 images, 2.9e-6 of the sum off where TensorFlow's is 5.4e-7 (a held-out
    CycleGAN's instance norm); each block's columns in order, in double, are 6e-8 off."""
    x = rng.uniform(0, 1, shape).astype(dtype)
    axes = [axis] if isinstance(axis, int) else axis
    eager = tt.reduce_sum(x, axis=axis)
    blocks = x.reshape(int(np.prod(shape[: axes[0]])), int(np.prod([shape[a] for a in axes])), -1)
    in_order = np.cumsum(blocks.astype(np.float64), axis=1)[:, -1].astype(dtype)
    assert eager.dtype == dtype
    np.testing.assert_array_equal(eager.numpy(), in_order.reshape(eager.shape))
    exact = x.astype(np.float64).sum(axis=tuple(axes))
    assert np.max(np.abs(eager.numpy() - exact) / exact) < 2e-7
    compiled = tt.function(lambda x: tt.reduce_sum(x, axis=axis), backend="c")(x)
    np.testing.assert_array_equal(compiled.numpy(), eager.numpy())
    kept = tt.reduce_sum(x, axis=axis, keepdims=True)
    assert kept.shape == tuple(1 if i in axes else d for i, d in enumerate(shape))
    np.testing.assert_array_equal(kept.numpy(), eager.numpy().reshape(kept.shape))


@pytest.mark.parametrize(
    "x, axis",
    [
        (np.ones((100, 28, 28, 4), np.float32), (1, 2)),  # more blocks than MIDDLE_SUM_BLOCKS
        (np.ones((32, 16, 16, 64), np.float32), (1, 2)),  # blocks too small
        (np.ones((16, 28, 28, 32), np.float32), (1, 2, 3)),  # a column a block
        (np.ones((16, 28, 28, 32), np.float32), (0, 2)),  # axes apart
        (np.ones((10, 20), np.float32), 0),  # small: numpy's
        (np.ones((300, 400), np.int32), 0),  # integers: numpy's
        (np.ones((300, 400), np.float32), None),  # every axis: numpy's
    ],
)
def test_other_sums_are_numpys(x, axis):
    np.testing.assert_array_equal(tt.reduce_sum(x, axis=axis).numpy(), np.sum(x, axis=axis))


def test_a_sum_over_no_axis_keeps_a_large_array():
    """No axis and keepdims: the array itself (the consecutive-axes rule found no first axis
    there and raised IndexError)."""
    x = rng.standard_normal((300, 400)).astype(np.float32)
    np.testing.assert_array_equal(tt.reduce_sum(x, axis=[], keepdims=True).numpy(), x)
