"""`tt.where`'s kernel (select): numpy's np.where bit for bit, also where it picks the bits
through masks (large inputs of one fixed-width dtype) or in the loop installed with tracer
(large float32 and float64 arrays, on the threads past 2^17 elements), NaN payloads, signed
zeros and broadcasting included; and relu's eager gradient, which is a select, against its
definition."""

import numpy as np
import pytest

import tracer as tt
from tracer.ops.math_ops import SELECT_BY_BITS_FROM, SELECT_IN_ONE_LOOP_FROM, _select_kernel

rng = np.random.default_rng(20261130)
DTYPES = [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64]
DTYPES += [np.complex64, np.complex128, np.bool_]  # (these take np.where itself)
SHAPES = [  # condition, x, y
    ((64, 64), (64, 64), ()),
    ((64, 64), (), (64, 64)),
    ((64, 1), (1, 64), (64, 64)),
    ((SELECT_BY_BITS_FROM,), (SELECT_BY_BITS_FROM,), (SELECT_BY_BITS_FROM,)),
    ((SELECT_IN_ONE_LOOP_FROM,), (SELECT_IN_ONE_LOOP_FROM,), ()),
    ((512, 512), (512, 512), (512, 512)),  # on the threads
    ((512, 512), (512, 512), ()),
    ((512, 512), (512, 1), ()),  # broadcast: the masks'
    ((3,), (3,), ()),
]


def _values(shape, dtype):
    values = (rng.standard_normal(shape) * 100).astype(dtype)
    if np.issubdtype(dtype, np.floating) and values.size >= 3:
        flat = values.reshape(-1)
        flat[:3] = [np.nan, -0.0, -np.inf]
    return values


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES)
def test_the_kernel_gives_np_wheres_bits(dtype, shapes):
    condition_shape, x_shape, y_shape = shapes
    condition = rng.random(condition_shape) > 0.5
    x, y = _values(x_shape, dtype), _values(y_shape, dtype)
    expected = np.where(condition, x, y)
    result = _select_kernel(condition, x, y)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    assert result.tobytes() == expected.tobytes()


def test_a_nonzero_scalar_and_a_negative_zero_are_picked_too():
    condition = rng.random((128, 64)) > 0.5
    x = rng.standard_normal((128, 64)).astype(np.float32)
    for other in (np.float32(2.5), np.float32(-0.0)):
        result = _select_kernel(condition, x, np.asarray(other))
        assert result.tobytes() == np.where(condition, x, other).tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize(
    "shapes", [((128, 64), (128, 64)), ((128, 1), (1, 64)), ((64,), (128, 64))]
)
def test_a_zero_y_gives_x_masked(dtype, shapes):
    """y of zero bits (relu's gradient's 0.0): x's bits ANDed with the mask, nothing added;
    a new array, whatever broadcasts."""
    condition_shape, x_shape = shapes
    condition = rng.random(condition_shape) > 0.5
    x = _values(x_shape, dtype)
    zero = np.zeros((), dtype)
    expected = np.where(condition, x, zero)
    result = _select_kernel(condition, x, zero)
    assert result.dtype == expected.dtype and result.tobytes() == expected.tobytes()
    assert not np.shares_memory(result, x)


def test_relus_eager_gradient_is_the_mask_of_the_positive_inputs():
    x = tt.constant(rng.standard_normal((128, 512)).astype(np.float32))
    upstream = rng.standard_normal((128, 512)).astype(np.float32)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.nn.relu(x)
    gradient = tape.gradient(y, x, output_gradients=tt.constant(upstream)).numpy()
    np.testing.assert_array_equal(gradient, np.where(x.numpy() > 0, upstream, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_float_selects_take_the_installed_loop_where_it_is_built(dtype):
    from codegen import array_math, conv_kernels

    if not conv_kernels.available():
        pytest.skip("the installed kernels were not built here")
    condition = np.tril(np.ones((512, 512), bool))  # a Cholesky gradient's mask
    x = _values((512, 512), dtype)
    for y in (np.zeros((), dtype), _values((512, 512), dtype)):
        found = array_math.select(condition, x, y)
        assert found is not None and found.tobytes() == np.where(condition, x, y).tobytes()
    assert array_math.select(condition, x, np.zeros((512, 1), dtype)) is None  # broadcast
