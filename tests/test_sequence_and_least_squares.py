"""tt.repeat, tt.searchsorted, tt.histogram_fixed_width, tt.math.polyval, tt.linalg.pinv and
tt.linalg.lstsq (tracer/ops/sequence_composites.py, least_squares.py, math_composites.py)
against numpy, finite differences in float64, and the same values eagerly, compiled to C and
on the interpreter."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(31)


def everywhere(fn, *args):
    """fn(*args) eagerly, compiled and interpreted: the three must agree."""
    eager = fn(*args)
    for backend in ("c", "interpreter"):
        traced = tt.function(fn, backend=backend)(*args)
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-6, atol=1e-7)
    return eager.numpy()


def numeric_gradient(f, x, step=1e-6):
    flat = x.ravel()
    gradient = np.zeros_like(flat)
    for k in range(flat.size):
        plus, minus = flat.copy(), flat.copy()
        plus[k] += step
        minus[k] -= step
        gradient[k] = (f(plus.reshape(x.shape)) - f(minus.reshape(x.shape))) / (2 * step)
    return gradient.reshape(x.shape)


def tape_gradient(f, x):
    value = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(value)
        y = f(value)
    return tape.gradient(y, value).numpy()


@pytest.mark.parametrize(
    "repeats, axis", [(2, None), ([1, 0, 3], 0), (3, 1), ([2, 1, 1, 0], -1), ([2], 0)]
)
def test_repeat_is_numpys(repeats, axis):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    if isinstance(repeats, list) and len(repeats) not in (1, x.shape[axis]):
        pytest.skip("not a valid count for this axis")
    got = everywhere(lambda a: tt.repeat(a, repeats, axis=axis), x)
    np.testing.assert_array_equal(got, np.repeat(x, repeats, axis=axis))


def test_repeats_gradient_sums_the_copies():
    x = rng.normal(size=(3, 2))
    weights = rng.normal(size=(6, 2))
    grad = tape_gradient(lambda a: tt.reduce_sum(tt.repeat(a, [1, 2, 3], axis=0) * weights), x)
    expected = np.stack([weights[0], weights[1] + weights[2], weights[3:].sum(0)])
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_repeat_errors_are_named():
    with pytest.raises(ValueError, match="one count or 3"):
        tt.repeat(tt.ones((3, 2)), [1, 2], axis=0)
    with pytest.raises(ValueError, match="must not be negative"):
        tt.repeat(tt.ones((3,)), -1)
    # repeats known only when the function runs (TF 2.21 takes them): it runs as Python
    repeated = tt.function(lambda a, r: tt.repeat(a, r))(tt.constant([1.0, 2.0]), tt.constant(2))
    np.testing.assert_array_equal(repeated.numpy(), [1.0, 1.0, 2.0, 2.0])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_is_numpys_row_by_row(side):
    sequence = np.sort(rng.integers(0, 6, size=(3, 7)), axis=-1).astype(np.float32)
    values = rng.integers(-1, 8, size=(3, 5)).astype(np.float32)
    got = everywhere(lambda s, v: tt.searchsorted(s, v, side=side), sequence, values)
    expected = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(sequence, values)])
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int32
    flat = tt.searchsorted(sequence[0], values[0], side=side, out_type=tt.int64).numpy()
    np.testing.assert_array_equal(flat, expected[0])
    with pytest.raises(ValueError, match='side must be "left" or "right"'):
        tt.searchsorted(sequence, values, side="middle")


def test_histogram_fixed_width_as_tensorflow_documents_it():
    values = np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0, 1e30], np.float32)
    got = everywhere(lambda v: tt.histogram_fixed_width(v, [0.0, 5.0], nbins=5), values)
    np.testing.assert_array_equal(got, [2, 1, 1, 0, 3])
    data = rng.normal(size=1000).astype(np.float32)
    counts = tt.histogram_fixed_width(data, [-1.0, 1.0], nbins=8).numpy()
    inside, _ = np.histogram(np.clip(data, -1.0, 1.0 - 1e-6), bins=8, range=(-1.0, 1.0))
    np.testing.assert_array_equal(counts, inside)


def test_polyval_and_its_derivative():
    x = rng.normal(size=(5,))
    coeffs = [2.0, -1.0, 0.5, 3.0]
    got = everywhere(lambda a: tt.math.polyval(coeffs, a), x)
    np.testing.assert_allclose(got, np.polyval(coeffs, x), rtol=1e-12)
    grad = tape_gradient(lambda a: tt.reduce_sum(tt.math.polyval(coeffs, a)), x)
    np.testing.assert_allclose(grad, np.polyval(np.polyder(coeffs), x), rtol=1e-12)
    np.testing.assert_array_equal(tt.math.polyval([], tt.constant([1.0, 2.0])).numpy(), [0.0, 0.0])


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_pinv_is_numpys(shape):
    a = rng.normal(size=shape)
    got = everywhere(tt.linalg.pinv, a)
    np.testing.assert_allclose(got, np.linalg.pinv(a), rtol=1e-9, atol=1e-12)


def test_pinv_of_a_rank_deficient_matrix_and_its_gradient():
    low_rank = rng.normal(size=(5, 2)) @ rng.normal(size=(2, 4))
    np.testing.assert_allclose(
        tt.linalg.pinv(low_rank).numpy(), np.linalg.pinv(low_rank), rtol=1e-8, atol=1e-10
    )
    a = rng.normal(size=(4, 3))
    weights = rng.normal(size=(3, 4))
    grad = tape_gradient(lambda m: tt.reduce_sum(tt.linalg.pinv(m) * weights), a)
    numeric = numeric_gradient(lambda m: (np.linalg.pinv(m) * weights).sum(), a)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_lstsq_tall_wide_and_regularized():
    tall, rhs = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    got = everywhere(tt.linalg.lstsq, tall, rhs)
    np.testing.assert_allclose(got, np.linalg.lstsq(tall, rhs, rcond=None)[0], rtol=1e-9)
    wide, rhs_wide = rng.normal(size=(2, 5)), rng.normal(size=(2, 1))
    np.testing.assert_allclose(
        tt.linalg.lstsq(wide, rhs_wide).numpy(), np.linalg.pinv(wide) @ rhs_wide, rtol=1e-9
    )
    ridge = tt.linalg.lstsq(tall, rhs, l2_regularizer=0.5).numpy()
    np.testing.assert_allclose(
        ridge, np.linalg.solve(tall.T @ tall + 0.5 * np.eye(3), tall.T @ rhs), rtol=1e-9
    )
    batch = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 1))
    expected = np.stack([np.linalg.lstsq(m, b, rcond=None)[0] for m, b in zip(*batch)])
    np.testing.assert_allclose(tt.linalg.lstsq(*batch).numpy(), expected, rtol=1e-9)
    grad = tape_gradient(lambda m: tt.reduce_sum(tt.linalg.lstsq(m, rhs) ** 2), tall)
    numeric = numeric_gradient(lambda m: (np.linalg.lstsq(m, rhs, rcond=None)[0] ** 2).sum(), tall)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


# TensorFlow 2.21's tf.linalg.lstsq(A, B, fast=False) of a rank-2 4 x 3 A (its complete
# orthogonal factorization: the minimum-norm solution), the same with l2_regularizer=0.5
RANK_TWO = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
RANK_TWO_RHS = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0], [1.0, 1.0]])
TF_MINIMUM_NORM = [
    [-0.33333333333333337, 1.666666666666666],
    [0.47435897435897445, -1.2179487179487176],
    [0.141025641025641, 0.44871794871794857],
]


def test_lstsq_takes_a_regularizer_tensor_in_a_traced_function():
    tall, rhs = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    solve = tt.function(lambda a, b, l2: tt.linalg.lstsq(a, b, l2_regularizer=l2))
    got = solve(tall, rhs, tt.constant(0.3, tt.float64)).numpy()
    want = np.linalg.solve(tall.T @ tall + 0.3 * np.eye(3), tall.T @ rhs)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_lstsq_without_fast_is_the_minimum_norm_solution_of_any_rank():
    for l2 in (0.0, 0.5):  # TensorFlow ignores the regularizer there
        got = everywhere(
            lambda a, b: tt.linalg.lstsq(a, b, l2_regularizer=l2, fast=False),
            RANK_TWO,
            RANK_TWO_RHS,
        )
        np.testing.assert_allclose(got, TF_MINIMUM_NORM, rtol=1e-12)
    tall, rhs = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    grad = tape_gradient(lambda m: tt.reduce_sum(tt.linalg.lstsq(m, rhs, fast=False) ** 2), tall)
    numeric = numeric_gradient(lambda m: ((np.linalg.pinv(m) @ rhs) ** 2).sum(), tall)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
