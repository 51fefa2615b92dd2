"""Ops at edges where tracer gave other values than TensorFlow 2.21 (a held-out differential
test, benchmarks/held_out/ops_edges.py, found each): TensorFlow's printed values, eagerly and
in both backends."""

import numpy as np
import pytest

import tracer as tt

MODES = ["eager", "interpreter", "c"]


def run(mode, function, *args):
    if mode == "eager":
        return function(*args)
    return tt.function(function, backend=mode)(*args)


@pytest.mark.parametrize("mode", MODES)
def test_float_floordiv_is_the_floor_of_the_quotient(mode):
    """TF 2.21: [inf, 1, -1, 1, 7] // [3, -inf, inf, 0.1, -2] is [inf, -0, -0, 10, -4]
    (floor(x / y)); Python's rule gave [nan, -1, -1, 9, -4]."""
    x = tt.constant([np.inf, 1.0, -1.0, 1.0, 7.0])
    y = tt.constant([3.0, -np.inf, np.inf, 0.1, -2.0])
    got = run(mode, lambda a, b: a // b, x, y).numpy()
    np.testing.assert_array_equal(got, [np.inf, -0.0, -0.0, 10.0, -4.0])
    assert np.signbit(got[1]) and np.signbit(got[2])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [tt.int32, tt.int64, tt.uint8])
@pytest.mark.parametrize(
    "divide, expected",
    [
        (lambda a, b: a // b, np.floor_divide),
        (lambda a, b: a % b, np.mod),
        (tt.truncatediv, np.floor_divide),  # (non-negative operands below)
        (tt.truncatemod, np.mod),
    ],
)
def test_an_integer_divided_by_zero_raises(mode, dtype, divide, expected):
    """TF 2.21: [5, 6] // [1, 0] raises InvalidArgumentError "Integer division by zero"
    (tracer answered 0); a nonzero divisor still divides, a constant one in the loop too."""
    x, y = tt.constant([5, 6], dtype), tt.constant([1, 0], dtype)
    with pytest.raises(tt.errors.InvalidArgumentError, match="Integer division by zero"):
        run(mode, divide, x, y)
    with pytest.raises(ZeroDivisionError):
        run(mode, divide, x, y)
    got = run(mode, lambda a, b: divide(a, b) + divide(a, 2), x, x - 2).numpy()
    np.testing.assert_array_equal(got, expected([5, 6], [3, 4]) + expected([5, 6], 2))


@pytest.mark.parametrize("mode", MODES)
def test_an_integer_mean_rounds_toward_zero(mode):
    """TF 2.21: reduce_mean([-1, -2]) is -1; over axis 1 of [[-3, 0], [3, 0]], [-1, 1]."""
    assert int(run(mode, tt.reduce_mean, tt.constant([-1, -2]))) == -1
    rows = run(mode, lambda x: tt.reduce_mean(x, axis=1), tt.constant([[-3, 0], [3, 0], [-4, 0]]))
    np.testing.assert_array_equal(rows.numpy(), [-1, 1, -2])


@pytest.mark.parametrize("mode", MODES)
def test_relu6_keeps_nan_and_its_gradient_is_zero_at_both_corners(mode):
    """TF 2.21: relu6 of NaN is NaN (tracer gave 6)."""
    got = run(mode, tt.nn.relu6, tt.constant([np.nan, -1.0, 3.0, 7.0, 6.0])).numpy()
    np.testing.assert_array_equal(got, [np.nan, 0.0, 3.0, 6.0, 6.0])
    x = tt.constant([-1.0, 0.0, 3.0, 6.0, 7.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.nn.relu6(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 0.0, 1.0, 0.0, 0.0])


def test_one_hot_takes_its_dtype_from_its_values():
    """TF 2.21: int32 for on_value=5, off_value=0; float32 for 5.0; int64 for an int64
    tensor; dtype= wins; on_value and off_value of two dtypes are a TypeError."""
    assert tt.one_hot([1], 2, on_value=5, off_value=0).dtype == tt.int32
    assert tt.one_hot([1], 2, on_value=5.0).dtype == tt.float32
    assert tt.one_hot([1], 2, on_value=tt.constant(3, tt.int64)).dtype == tt.int64
    np.testing.assert_array_equal(tt.one_hot([1], 2, on_value=5, off_value=0).numpy(), [[0, 5]])
    assert tt.one_hot([1], 2, on_value=1, dtype=tt.float32).dtype == tt.float32
    with pytest.raises(TypeError, match="does not match"):
        tt.one_hot([1], 2, on_value=5, off_value=0.0)


@pytest.mark.parametrize("mode", MODES)
def test_argmax_and_argmin_take_a_nan_for_the_least_extreme_value(mode):
    """TF 2.21's (argmax, argmin) of each row (numpy's argmax takes the first NaN)."""
    nan, inf = np.nan, np.inf
    rows = {
        (nan, 1.0, 3.0): (2, 1),
        (1.0, nan, 3.0): (2, 0),
        (nan, nan): (0, 0),
        (inf, nan, 2.0): (0, 2),
        (nan, -inf): (0, 1),
        (nan, inf): (1, 0),
        (-inf, nan, -inf): (0, 0),
        (3.0, 3.0): (0, 0),
    }
    for row, expected in rows.items():
        x = tt.constant(row)
        got = (int(run(mode, tt.argmax, x)), int(run(mode, tt.argmin, x)))
        assert got == expected, row


@pytest.mark.parametrize("mode", MODES)
def test_the_sign_of_a_negative_zero_is_zero(mode):
    """TF 2.21: sign(-0.0) is 0.0 (compiled code gave -0.0)."""
    got = run(mode, tt.math.sign, tt.constant([-0.0, 0.0, -2.0])).numpy()
    np.testing.assert_array_equal(got, [0.0, 0.0, -1.0])
    assert not np.signbit(got[0])


@pytest.mark.parametrize("mode", MODES)
def test_truncating_division_rint_xlog1py_euclidean_norm_and_cumulative_logsumexp(mode):
    """TensorFlow 2.21's values for the ops a held-out program found missing; the gradient
    of cumulative_logsumexp against finite differences in float64."""
    ints = tt.constant([7, -7, 7, -7]), tt.constant([2, 2, -2, -2])
    np.testing.assert_array_equal(run(mode, tt.truncatediv, *ints).numpy(), [3, -3, -3, 3])
    np.testing.assert_array_equal(run(mode, tt.truncatemod, *ints).numpy(), [1, -1, 1, -1])
    floats = tt.constant([7.5, -7.5]), tt.constant([2.0, 2.0])
    np.testing.assert_array_equal(run(mode, tt.truncatediv, *floats).numpy(), [3.0, -3.0])
    np.testing.assert_array_equal(run(mode, tt.truncatemod, *floats).numpy(), [1.5, -1.5])
    inf = float("inf")
    by_inf = tt.constant([5.0, -1.0, inf, 3.0]), tt.constant([inf, inf, 2.0, 0.0])
    got = run(mode, tt.truncatemod, *by_inf).numpy()  # TF 2.21: [5, -1, nan, nan]
    np.testing.assert_array_equal(got, [5.0, -1.0, np.nan, np.nan])
    rint = run(mode, tt.math.rint, tt.constant([0.5, 1.5, -0.5, 2.4])).numpy()
    np.testing.assert_array_equal(rint, [0.0, 2.0, -0.0, 2.0])
    got = run(mode, tt.math.xlog1py, tt.constant([0.0, 2.0]), tt.constant([-1.0, 1.0])).numpy()
    np.testing.assert_allclose(got, [0.0, 2 * np.log(2.0)], rtol=1e-6)
    norms = run(
        mode,
        lambda x: tt.math.reduce_euclidean_norm(x, axis=1),
        tt.constant([[3.0, 4.0], [5.0, 12.0]]),
    )
    np.testing.assert_allclose(norms.numpy(), [5.0, 13.0])
    assert int(run(mode, tt.math.reduce_euclidean_norm, tt.constant([3, 4, 1]))) == 5
    x = tt.constant([1.0, 2.0, 3.0, -np.inf])
    exclusive = run(mode, lambda v: tt.math.cumulative_logsumexp(v, exclusive=True), x).numpy()
    np.testing.assert_allclose(exclusive, [-np.inf, 1.0, 2.3132617, 3.4076061], rtol=1e-6)
    reverse = run(mode, lambda v: tt.math.cumulative_logsumexp(v, reverse=True), x).numpy()
    np.testing.assert_allclose(reverse, [3.4076061, 3.3132617, 3.0, -np.inf], rtol=1e-6)
    spread = tt.constant([-np.inf, 0.0, -np.inf, 1000.0])  # TF 2.21: [-inf, 0, 0, 1000]
    got = run(mode, tt.math.cumulative_logsumexp, spread).numpy()
    np.testing.assert_array_equal(got, [-np.inf, 0.0, 0.0, 1000.0])
    values = np.array([0.3, -1.2, 2.5])

    def summed(v):
        return tt.reduce_sum(
            tt.math.cumulative_logsumexp(v) * tt.constant([1.0, 2.0, 3.0], tt.float64)
        )

    v = tt.constant(values)
    with tt.GradientTape() as tape:
        tape.watch(v)
        y = run(mode, summed, v)
    gradient = tape.gradient(y, v).numpy()
    step = 1e-6
    numeric = [
        (
            float(summed(tt.constant(values + step * e)))
            - float(summed(tt.constant(values - step * e)))
        )
        / (2 * step)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6)


@pytest.mark.parametrize(
    "op, expected",
    [
        (tt.math.divide_no_nan, [0.5, 0.0]),
        (tt.math.xlogy, [np.log(2.0), 0.0]),
        (tt.math.xdivy, [0.5, 0.0]),
        (tt.math.xlog1py, [np.log(3.0), 0.0]),
        (tt.truncatemod, [1.0, 0.0]),
    ],
)
def test_a_python_number_takes_the_tensors_dtype_in_binary_composites(op, expected):
    """TF 2.21: tf.math.xlogy(float64 tensor, 2.0) is float64 (tracer raised: its 2.0 was
    float32)."""
    got = op(tt.constant([1.0, 0.0], tt.float64), 2.0)
    assert got.dtype == tt.float64
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-15)
    assert tt.truncatediv(tt.constant([-7], tt.int64), 2).numpy().tolist() == [-3]


@pytest.mark.parametrize("mode", MODES)
def test_elu_at_zero_takes_the_linear_sides_derivatives(mode):
    """TF 2.21: tf.nn.elu's first derivative at [-1, 0, 2] is [e^-1, 1, 1] and its second
    [e^-1, 0, 0] (tracer's second was 1 at 0); Keras 3's elu with alpha 0.5 has derivative
    0.5 at 0."""

    def derivatives(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = tt.nn.elu(x)
            first = inner.gradient(y, x)
        with tt.GradientTape() as tape:
            tape.watch(x)
            scaled = tt.keras.activations.elu(x, alpha=0.5)
        return first, outer.gradient(first, x), tape.gradient(scaled, x)

    x = tt.constant([-1.0, 0.0, 2.0], tt.float64)
    first, second, scaled = run(mode, derivatives, x)
    np.testing.assert_allclose(first.numpy(), [np.exp(-1.0), 1.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(second.numpy(), [np.exp(-1.0), 0.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(scaled.numpy(), [0.5 * np.exp(-1.0), 0.5, 1.0], rtol=1e-15)


@pytest.mark.parametrize("mode", MODES)
def test_relus_second_derivative_is_zero_not_none(mode):
    """TF 2.21: the second derivative of relu (and relu6, and Keras's relu) is zeros, its
    ReluGrad having a zero gradient with respect to the activations (tracer gave None); a
    jacobian of relu's gradient is zeros too."""

    def second(x):
        with tt.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = tt.nn.relu(x) + tt.nn.relu6(3.0 * x)
            first = inner.gradient(y, x)
        return first, outer.gradient(first, x), outer.jacobian(first, x)

    first, derivative, jacobian = run(mode, second, tt.constant([-1.0, 0.0, 2.5], tt.float64))
    np.testing.assert_array_equal(first.numpy(), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(derivative.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(jacobian.numpy(), np.zeros((3, 3)))


@pytest.mark.parametrize("mode", MODES)
def test_a_float16_product_sums_in_float(mode):
    """TF 2.21: a (1, 4096) row of float16 0.1 times a column of ones is 409.5 (the sum in
    float, rounded once); tracer's C loops added in float16 and stopped at 256."""
    row = tt.constant(np.full((1, 4096), 0.1, np.float16))
    column = tt.constant(np.ones((4096, 1), np.float16))
    got = run(mode, tt.matmul, row, column)
    assert got.dtype == tt.float16 and float(got[0, 0]) == 409.5
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 5, 7)).astype(np.float16)
    b = rng.standard_normal((2, 7, 3)).astype(np.float16)
    expected = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(
        run(mode, tt.matmul, tt.constant(a), tt.constant(b)).numpy(), expected
    )


@pytest.mark.parametrize("mode", MODES)
def test_an_integer_mean_sums_without_wrapping(mode):
    """TF 2.21: the mean of int32 [2^30] * 3 is 2^30, of int8 [100] * 3 100, of int8
    [-100, -100, -101] -100, of uint8 [255, 255, 0] 170, and of no elements 0 (tracer's sum
    wrapped first: -357913941, 14, 84)."""
    cases = [
        ([2**30] * 3, tt.int32, 2**30),
        ([100] * 3, tt.int8, 100),
        ([-100, -100, -101], tt.int8, -100),
        ([255, 255, 0], tt.uint8, 170),
    ]
    for values, dtype, expected in cases:
        got = run(mode, tt.reduce_mean, tt.constant(values, dtype))
        assert got.dtype == dtype and int(got) == expected
    assert int(run(mode, tt.reduce_mean, tt.zeros([0], tt.int32))) == 0


@pytest.mark.parametrize("mode", MODES)
def test_complex_values_cast_to_bool_by_their_real_part_and_have_no_order(mode):
    """TF 2.21: cast([1j, 0, 2, 1 + 1j], bool) is [False, False, True, True] (the real
    part's, as casts to real numbers take it; tracer gave True for 1j); tf.norm of complex
    values is complex with a zero imaginary part; maximum, less and reduce_max refuse
    complex values (tracer's C failed to compile, its eager mode ordered them)."""
    x = tt.constant([1j, 0j, 2 + 0j, 1 + 1j], tt.complex64)
    got = run(mode, lambda x: tt.cast(x, tt.bool), x)
    np.testing.assert_array_equal(got.numpy(), [False, False, True, True])
    norm = run(mode, tt.norm, tt.constant([3 + 4j, 1j], tt.complex128))
    assert norm.dtype == tt.complex128 and complex(norm.numpy()) == pytest.approx(np.sqrt(26.0))
    for ordered in (lambda a: tt.maximum(a, a), lambda a: a < a, tt.reduce_max, tt.argmax):
        with pytest.raises(TypeError, match="complex64 values have no order"):
            run(mode, ordered, x)


def test_saturate_cast_dtype_hint_and_dtype_properties_as_tensorflows():
    """TF 2.21's printed values: saturate_cast clips to the target's range first (300.0 as
    uint8 is 255, 3e9 as int32 2147483647); convert_to_tensor's dtype_hint applies where the
    value converts (1 -> float32; 1.5 with hint int32 stays float32; a tensor keeps its
    dtype); a numpy float array given an integer dtype is cut toward zero; DType's
    is_unsigned, size, min, max and real_dtype. (tracer had none of them, and refused the
    numpy array.)"""
    np.testing.assert_array_equal(
        tt.saturate_cast(tt.constant([300.0, -5.0, 7.9]), tt.uint8).numpy(), [255, 0, 7]
    )
    np.testing.assert_array_equal(
        tt.saturate_cast(tt.constant([3e9, -3e9], tt.float64), tt.int32).numpy(),
        [2147483647, -2147483648],
    )
    assert tt.convert_to_tensor(1, dtype_hint=tt.float32).dtype == tt.float32
    assert tt.convert_to_tensor(1.5, dtype_hint=tt.int32).dtype == tt.float32
    assert tt.convert_to_tensor(tt.constant(1), dtype_hint=tt.float32).dtype == tt.int32
    np.testing.assert_array_equal(
        tt.constant(np.array([1.5, -2.7]), dtype=tt.int32).numpy(), [1, -2]
    )
    assert (tt.uint8.is_unsigned, tt.uint8.size, tt.uint8.min, tt.uint8.max) == (True, 1, 0, 255)
    assert tt.float16.max == 65504.0 and tt.complex64.real_dtype == tt.float32
    with pytest.raises(TypeError):
        _ = tt.bool.min


@pytest.mark.parametrize("mode", MODES)
def test_transpose_conjugates_where_asked(mode):
    """TF 2.21: tf.transpose([[1+2j, 3-1j]], conjugate=True) is [[1-2j], [3+1j]] (tracer
    ignored `conjugate`); real values and conjugate=False transpose alone."""
    x = tt.constant(np.array([[1 + 2j, 3 - 1j]]))
    got = run(mode, lambda x: tt.transpose(x, conjugate=True), x)
    np.testing.assert_array_equal(got.numpy(), [[1 - 2j], [3 + 1j]])
    np.testing.assert_array_equal(run(mode, tt.transpose, x).numpy(), [[1 + 2j], [3 - 1j]])
    real = run(mode, lambda y: tt.transpose(y, [1, 0], conjugate=True), tt.ones([2, 3]))
    assert real.shape == (3, 2)


@pytest.mark.parametrize("mode", MODES)
def test_strided_slice_with_its_masks_as_tensorflows(mode):
    """TF 2.21's printed values of tf.strided_slice (tracer had none): begin and end masks,
    an ellipsis, a new axis, a shrunk axis and negative strides, on arange tensors."""
    m = tt.constant(np.arange(12.0).reshape(3, 4))
    cube = tt.constant(np.arange(24.0).reshape(2, 3, 4))
    cases = [
        (
            lambda m, c: tt.strided_slice(m, [0, 1], [2, 0], [1, 1], end_mask=2),
            [[1, 2, 3], [5, 6, 7]],
        ),
        (
            lambda m, c: tt.strided_slice(c, [0, 3], [0, 4], [1, 1], ellipsis_mask=1)[..., 0],
            [[3, 7, 11], [15, 19, 23]],
        ),
        (
            lambda m, c: tt.strided_slice(m, [0, 0, 1], [0, 2, 3], [1, 1, 1], new_axis_mask=1),
            [[[1, 2], [5, 6]]],
        ),
        (
            lambda m, c: tt.strided_slice(c, [1, 0, 3], [2, 3, 4], [1, 1, 1], shrink_axis_mask=5),
            [15, 19, 23],
        ),
        (lambda m, c: tt.strided_slice(m, [-1, -1], [-4, -5], [-1, -2]), [[11, 9], [7, 5], [3, 1]]),
    ]
    for slicer, expected in cases:
        np.testing.assert_array_equal(run(mode, slicer, m, cube).numpy(), expected)


@pytest.mark.parametrize("mode", MODES)
def test_leaky_relus_second_derivative_is_zero_not_none(mode):
    """TF 2.21: leaky_relu's first derivative is alpha at 0 and its second is zeros (its
    LeakyReluGrad has a zero gradient with respect to the features; tracer gave None), for
    an alpha whose slope adds back to 1 and for one that does not (1e8 in float32)."""

    def derivatives(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = tt.nn.leaky_relu(x) + tt.nn.leaky_relu(x, 1e8)
            first = inner.gradient(y, x)
        return first, outer.gradient(first, x)

    first, second = run(mode, derivatives, tt.constant([-1.0, 0.0, 2.0]))
    np.testing.assert_allclose(first.numpy(), [0.2 + 1e8, 0.2 + 1e8, 2.0], rtol=1e-7)
    np.testing.assert_array_equal(second.numpy(), [0.0, 0.0, 0.0])


def test_leaky_relu_keeps_its_values_exactly_and_casts_integers():
    """x where x > 0 and alpha * x elsewhere, bit for bit (NaN, -0 and infinities
    included); integers become float32, as TF 2.21 prints [-0.6 4.] for [-3, 4]."""
    x = np.array([-2.0, -0.0, 0.0, 1.5, np.nan, np.inf, -np.inf, 3e-45], np.float32)
    for alpha in (0.2, 0.01, 0.3, 1e-9, 2.5, 1e8):
        got = tt.nn.leaky_relu(tt.constant(x), alpha).numpy()
        want = np.where(x > 0, x, np.float32(alpha) * x)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    ints = tt.nn.leaky_relu(tt.constant([-3, 4]))
    assert ints.dtype == tt.float32
    np.testing.assert_allclose(ints.numpy(), [-0.6, 4.0], rtol=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_complex_pow_is_exp_of_y_log_x(mode):
    """TF 2.21: complex 0 ** [0, 1, 2 + 1j] is [nan+nanj, 0-0j, 0-0j] (C's cpow, exp(y log
    x)); tracer's eager kernel gave numpy's 1 for 0 ** 0 where its C gave NaN."""
    x = tt.constant(np.zeros(3, np.complex128))
    y = tt.constant(np.array([0, 1, 2 + 1j], np.complex128))
    got = run(mode, tt.pow, x, y).numpy()
    assert np.isnan(got[0].real) and np.isnan(got[0].imag)
    np.testing.assert_array_equal(got[1:], [0j, 0j])
    z = np.array([2 + 3j, -1 - 0.5j, 1e-3 + 2j], np.complex128)
    w = np.array([2, 0.5 - 1j, -3], np.complex128)
    np.testing.assert_allclose(run(mode, tt.pow, z, w).numpy(), z**w, rtol=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_float16_cumulative_sums_round_at_each_step(mode):
    """TF 2.21: the last cumsum of 3000 float16 0.1s is 256 (0.1 no longer adds to 256 in
    float16), as numpy's; tracer's C kept the running sum in float (299.75)."""
    x = tt.constant(np.full(3000, 0.1, np.float16))
    got = run(mode, lambda v: tt.math.cumsum(v)[-3:], x).numpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.cumsum(np.full(3000, 0.1, np.float16))[-3:])
    np.testing.assert_array_equal(got, [256, 256, 256])


@pytest.mark.parametrize("mode", MODES)
def test_float64_to_float16_rounds_through_float32(mode):
    """TF 2.21: tf.cast of float64 [1 + 2^-11 + 2^-40, 1 + 2^-11, 1 + 3 * 2^-11] to float16
    is [1, 1, 1.00195] (through float32, as the C's conversion is); numpy's direct
    conversion, tracer's eager kernel, gave 1.00098 first."""
    x = tt.constant([1 + 2**-11 + 2**-40, 1 + 2**-11, 1 + 3 * 2**-11], tt.float64)
    got = run(mode, lambda v: tt.cast(v, tt.float16), x).numpy()
    np.testing.assert_array_equal(got, np.array([1.0, 1.0, 1.00195], np.float16))


@pytest.mark.parametrize("mode", MODES)
def test_mixed_dtypes_raise_invalid_argument_and_type_errors(mode):
    """TF 2.21: int32 + float32 tensors raise InvalidArgumentError eagerly and TypeError in
    a tf.function; tracer's error is both."""
    with pytest.raises(tt.errors.InvalidArgumentError, match="different dtypes") as raised:
        run(mode, lambda a, b: a + b, tt.constant([1]), tt.constant([1.0]))
    assert isinstance(raised.value, TypeError)


@pytest.mark.parametrize("mode", MODES)
def test_angle_of_real_values_is_pi_where_negative_without_gradient(mode):
    """TF 2.21: tf.math.angle of float64 [-2, -0, 0, 3, nan, -inf] is [pi, 0, 0, 0, 0, pi]
    and its gradient None (tracer gave pi at -0, NaN at NaN, and a gradient)."""

    def angle_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.math.angle(x)
            total = tt.reduce_sum(y)
        return y, tape.gradient(total, x)

    x = tt.constant([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf], tt.float64)
    y, gradient = run(mode, angle_and_gradient, x)
    np.testing.assert_array_equal(y.numpy(), [np.pi, 0, 0, 0, 0, np.pi])
    assert gradient is None


def test_a_list_takes_its_first_numpy_floats_dtype():
    """TF 2.21: tf.constant([np.float64(1), 2.0]) is float64, [np.float16(1), 2.0] float16,
    [1.0, np.float64(2)] float32, [np.zeros(2), np.ones(2)] float64; numpy integers and
    complex numbers take the Python defaults ([np.int64(1), 2] int32, [np.complex64(1)]
    complex128). tracer gave float32 for every list of floats."""
    cases = [
        ([np.float64(1), 2.0], tt.float64),
        ([np.float16(1), 2.0], tt.float16),
        ([1.0, np.float64(2)], tt.float32),
        ([np.zeros(2), np.ones(2)], tt.float64),
        ([[np.float64(1)]], tt.float64),
        ([np.int16(3), 1.5], tt.float32),
        ([np.int64(1), 2], tt.int32),
        ([np.int64(2**40), 2], tt.int64),
        ([np.complex64(1)], tt.complex128),
    ]
    for value, dtype in cases:
        assert tt.constant(value).dtype == dtype, value
