"""int8, int16, uint8, uint16, uint32 and uint64 tensors, as TensorFlow's: images arrive as
uint8 (`tf.cast(images, tf.float32) / 255.0`), and arithmetic wraps at the type's width.

Each op runs eagerly, compiled to C and in the interpreter, against numpy's arithmetic on the
same dtype (which wraps as TensorFlow's does); the TensorFlow figures quoted are
TensorFlow 2.21's outputs.
"""

import warnings

import numpy as np
import pytest

import tracer as tt

NEW_INTEGERS = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]


OPS = {
    "add": (lambda x, y: x + y, lambda a, b: a + b),
    "subtract": (lambda x, y: x - y, lambda a, b: a - b),
    "multiply": (lambda x, y: x * y, lambda a, b: a * b),
    "floordiv": (lambda x, y: x // y, lambda a, b: a // b),
    "floormod": (lambda x, y: x % y, lambda a, b: a % b),
    "add a Python number": (lambda x, y: x + 3, lambda a, b: a + a.dtype.type(3)),
    "maximum": (tt.maximum, np.maximum),
    "minimum": (tt.minimum, np.minimum),
    "less": (lambda x, y: x < y, lambda a, b: a < b),
    "equal": (tt.equal, np.equal),
    "where": (lambda x, y: tt.where(x > y, x, y), lambda a, b: np.where(a > b, a, b)),
    "reduce_sum": (lambda x, y: tt.reduce_sum(x, 0), lambda a, b: a.sum(0, dtype=a.dtype)),
    "reduce_sum of all": (lambda x, y: tt.reduce_sum(x), lambda a, b: a.sum(dtype=a.dtype)),
    "reduce_max": (lambda x, y: tt.reduce_max(x, 1), lambda a, b: a.max(1)),
    "reduce_min": (lambda x, y: tt.reduce_min(x), lambda a, b: a.min()),
    "reduce_prod": (lambda x, y: tt.reduce_prod(x, 1), lambda a, b: a.prod(1, dtype=a.dtype)),
    "argmax": (lambda x, y: tt.argmax(x, 1), lambda a, b: a.argmax(1)),
    "cumsum": (lambda x, y: tt.math.cumsum(x, 1), lambda a, b: a.cumsum(1, dtype=a.dtype)),
    "square": (tt.square, lambda a, b: a * a),
    "reshape": (lambda x, y: tt.reshape(x, [4, 3]), lambda a, b: a.reshape(4, 3)),
    "transpose": (lambda x, y: tt.transpose(x), lambda a, b: a.T),
    "slice": (lambda x, y: x[1:, ::2], lambda a, b: a[1:, ::2]),
    "gather": (lambda x, y: tt.gather(x, [2, 0]), lambda a, b: a[[2, 0]]),
    "concat": (lambda x, y: tt.concat([x, y], 0), lambda a, b: np.concatenate([a, b])),
    "stack": (lambda x, y: tt.stack([x, y]), lambda a, b: np.stack([a, b])),
    "tile": (lambda x, y: tt.tile(x, [2, 1]), lambda a, b: np.tile(a, (2, 1))),
    "pad": (lambda x, y: tt.pad(x, [[1, 0], [0, 1]]), lambda a, b: np.pad(a, ((1, 0), (0, 1)))),
    "sort": (lambda x, y: tt.sort(x), lambda a, b: np.sort(a, -1)),
    "matmul": (lambda x, y: tt.matmul(x, tt.transpose(y)), lambda a, b: a @ b.T),
    "clip_by_value": (
        lambda x, y: tt.clip_by_value(x, tt.constant(10, x.dtype), tt.constant(50, x.dtype)),
        lambda a, b: np.clip(a, 10, 50).astype(a.dtype),
    ),
    "cast to float32 and back": (
        lambda x, y: tt.cast(tt.cast(x, tt.float32) * 1.5, x.dtype),
        lambda a, b: (a.astype(np.float32) * np.float32(1.5)).astype(a.dtype),
    ),
}

BACKENDS = {
    "eager": lambda f: f,
    "c": lambda f: tt.function(f, backend="c"),
    "interpreter": lambda f: tt.function(f, backend="interpreter"),
}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("dtype", NEW_INTEGERS)
def test_ops_of_the_narrow_and_unsigned_integers_match_numpy_in_every_backend(dtype, backend):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 120, (3, 4)).astype(dtype)  # products and sums wrap in 8 bits
    b = rng.integers(1, 120, (3, 4)).astype(dtype)
    failures = []
    for name, (op, reference) in OPS.items():
        want = np.asarray(reference(a, b))
        got = BACKENDS[backend](op)(tt.constant(a), tt.constant(b))
        got = got.numpy()
        if got.dtype != want.dtype or not np.array_equal(got, want):
            failures.append(f"{name}: {got!r} where numpy gives {want!r}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_uint8_wraps_and_divides_as_tensorflow(backend):
    """TF 2.21, for a = [200, 100, 7] and b = [100, 200, 2] as uint8: sum 51, a + b
    [44, 44, 9], a - b [100, 156, 5], a * b [32, 32, 14], a // b [2, 0, 3], a % b [0, 100, 1],
    a / b float32; int16 / int16 is float32 too, uint32 / uint32 float64."""

    def arithmetic(a, b):
        return tt.reduce_sum(a), a + b, a - b, a * b, a // b, a % b, a / b

    a = tt.constant(np.array([200, 100, 7], np.uint8))
    b = tt.constant(np.array([100, 200, 2], np.uint8))
    total, plus, minus, times, quotient, remainder, ratio = BACKENDS[backend](arithmetic)(a, b)
    assert total.dtype == tt.uint8 and total.numpy() == 51
    for got, want in zip(
        (plus, minus, times, quotient, remainder),
        ([44, 44, 9], [100, 156, 5], [32, 32, 14], [2, 0, 3], [0, 100, 1]),
    ):
        assert got.dtype == tt.uint8
        np.testing.assert_array_equal(got.numpy(), want)
    assert ratio.dtype == tt.float32
    np.testing.assert_allclose(ratio.numpy(), [2.0, 0.5, 3.5])
    assert (tt.constant([1, 2], tt.int16) / tt.constant([3, 4], tt.int16)).dtype == tt.float32
    assert (tt.constant([1], tt.uint32) / tt.constant([3], tt.uint32)).dtype == tt.float64


@pytest.mark.parametrize("dtype", NEW_INTEGERS)
def test_float_to_integer_casts_out_of_range_give_numpys_values_compiled(dtype):
    """In range a cast truncates (TF 2.21: [-1.0, 300.0, 2.7] to uint8 is [255, 44, 2], to
    int8 [-1, 44, 2]); out of range and NaN, compiled code gives numpy's values, where C's
    own conversion would be undefined (uint32's beyond int32's range are left out: numpy's
    there follow no rule)."""
    values = [-1.0, 300.0, 2.7, -129.5, 70000.0, np.nan, -np.inf]
    values += {"uint64": [5e9, -5e9, 1e19, 2e19], "uint32": []}.get(dtype, [5e9, -5e9])
    values = np.array(values)
    x = tt.constant(values)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as TensorFlow's, the cast warns of nothing
        eager = tt.cast(x, getattr(tt, dtype)).numpy()
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(eager, values.astype(dtype))
    for backend in ("c", "interpreter"):
        got = tt.function(lambda t: tt.cast(t, getattr(tt, dtype)), backend=backend)(x)
        np.testing.assert_array_equal(got.numpy(), eager)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("source", ["float32", "float64"])
def test_float_to_int32_and_int64_at_their_bounds_and_after_a_clamp(dtype, source):
    """The smallest integer exactly, the first float past the largest, NaN and the infinities
    give numpy's values compiled; and so does a cast of clamped coordinates (floor, clip,
    cast: a loop GCC vectorizes only with the range tested as |x| < 2^31)."""
    bound = 2.0 ** (31 if dtype == "int32" else 63)
    values = np.array([-bound, bound, -bound * 2, 3.5, -3.5, np.nan, np.inf, -np.inf], source)
    x = tt.constant(values)
    with np.errstate(invalid="ignore"):
        want = values.astype(dtype)
    for backend in ("c", "interpreter"):
        got = tt.function(lambda t: tt.cast(t, getattr(tt, dtype)), backend=backend)(x)
        np.testing.assert_array_equal(got.numpy(), want)
    coordinates = np.linspace(-3.0, 40.0, 1000).astype(source)
    coordinates[7] = np.nan

    def clamped(t):
        return tt.cast(tt.clip_by_value(tt.floor(t) + 1.0, 0.0, 31.0), getattr(tt, dtype))

    with np.errstate(invalid="ignore"):
        want = np.clip(np.floor(coordinates) + 1.0, 0.0, 31.0).astype(dtype)
    for backend in ("c", "interpreter"):
        got = tt.function(clamped, backend=backend)(tt.constant(coordinates))
        np.testing.assert_array_equal(got.numpy(), want)


def test_a_uint8_image_batch_normalized_as_tensorflow_guides_do():
    """`tf.cast(images, tf.float32) / 255.0` of a uint8 batch, and its mean, in a tt.function
    and eagerly; tt.constant of a uint8 array is uint8 (it was a TypeError)."""
    images = np.arange(2 * 28 * 28, dtype=np.int64).reshape(2, 28, 28).astype(np.uint8)
    assert tt.constant(images).dtype == tt.uint8 and tt.uint8.as_numpy_dtype is np.uint8

    def normalized(x):
        scaled = tt.cast(x, tt.float32) / 255.0
        return scaled, tt.reduce_mean(scaled)

    want = images.astype(np.float32) / np.float32(255.0)
    for run in (normalized, tt.function(normalized)):
        scaled, mean = run(tt.constant(images))
        np.testing.assert_array_equal(scaled.numpy(), want)
        np.testing.assert_allclose(mean.numpy(), want.mean(), rtol=1e-6)


def test_empty_extrema_are_the_types_limits():
    """TF 2.21: reduce_max of an empty uint8 tensor is 0, reduce_min of an empty int8 127."""
    for run in (lambda f: f, tt.function):
        assert run(tt.reduce_max)(tt.constant(np.zeros(0, np.uint8))).numpy() == 0
        assert run(tt.reduce_min)(tt.constant(np.zeros(0, np.int8))).numpy() == 127
        assert run(tt.reduce_max)(tt.constant(np.zeros(0, np.uint64))).numpy() == 0
        assert run(tt.reduce_min)(tt.constant(np.zeros(0, np.uint64))).numpy() == 2**64 - 1


def _shift_reference(shift, a, b):
    width = a.dtype.itemsize * 8
    return shift(a, np.clip(b, 0, width - 1).astype(a.dtype))


BITWISE = {
    "bitwise_and": (tt.bitwise.bitwise_and, np.bitwise_and),
    "bitwise_or": (tt.bitwise.bitwise_or, np.bitwise_or),
    "bitwise_xor": (tt.bitwise.bitwise_xor, np.bitwise_xor),
    "invert": (lambda x, y: tt.bitwise.invert(x), lambda a, b: np.invert(a)),
    "left_shift": (tt.bitwise.left_shift, lambda a, b: _shift_reference(np.left_shift, a, b)),
    "right_shift": (tt.bitwise.right_shift, lambda a, b: _shift_reference(np.right_shift, a, b)),
    "& | ^ ~": (lambda x, y: (x & y) | (~x ^ y), lambda a, b: (a & b) | (~a ^ b)),
}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("dtype", ["int32", "int64", *NEW_INTEGERS])
def test_bitwise_ops_match_numpy_with_shifts_clamped_as_tensorflow(dtype, backend):
    """Shift amounts beyond the width or negative are clamped to [0, width - 1], as
    TensorFlow's kernels do (numpy and C leave them undefined); values at the type's edges."""
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, 5, info.max // 3], dtype)
    below = -3 if info.min < 0 else info.max  # an amount out of range either way
    b = np.array([below, 1, 2, info.bits - 1, info.bits + 7, 3], dtype)
    for name, (op, reference) in BITWISE.items():
        got = BACKENDS[backend](op)(tt.constant(a), tt.constant(b))
        want = reference(a, b)
        assert got.dtype.name == dtype, name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)


def test_range_takes_the_widest_of_its_bounds_dtypes_as_tensorflow():
    # TensorFlow 2.21 printed these dtypes for tf.range of the same bounds
    int64 = tt.constant(3, tt.int64)
    cases = [
        ((int64,), "int64"),
        ((3,), "int32"),
        ((int64, 10), "int64"),
        ((0, int64, 1), "int64"),
        ((3.0,), "float32"),
        ((2, 5, tt.constant(1, tt.int64)), "int64"),
        ((tt.constant(1, tt.int32), 5.0), "float32"),
    ]
    for bounds, dtype in cases:
        assert tt.range(*bounds).dtype.name == dtype, bounds
    assert tt.range(int64).numpy().tolist() == [0, 1, 2]
    assert tt.range(int64, dtype=tt.int32).dtype.name == "int32"
