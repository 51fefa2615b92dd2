"""tt.linalg at TensorFlow's edges: a NaN in slogdet, det, solve and inv (TensorFlow 2.21's
values, the same in every backend, with and without a LAPACK); matmul's `adjoint_a` and
`adjoint_b`, with gradients; and tt.eye of a size known only from a shape inside a function.
"""

import numpy as np
import pytest

import tracer as tt
from codegen import build

nan = np.nan
BACKENDS = ("eager", "interpreter", "c")


def _run(function, backend, *args):
    call = function if backend == "eager" else tt.function(function, backend=backend)
    result = call(*args)
    if isinstance(result, (tuple, list)):
        return [np.asarray(part) for part in result]
    return np.asarray(result)


def _slogdet(a):
    return list(tt.linalg.slogdet(a))


def _with_nan(position, n=3):
    a = np.array([[4.0, 1.0, 2.0], [1.0, 5.0, 3.0], [2.0, 3.0, 6.0]])[:n, :n]
    a[position] = nan
    return a


# --- a NaN in the matrix -------------------------------------------------------------------


@pytest.fixture(params=["lapack", "plain C"])
def lapack(request, monkeypatch):
    """Compiled code through the module's LAPACK, and through the plain C used without one."""
    if request.param == "plain C":
        monkeypatch.setattr(build, "blas", lambda: None)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("position", [(0, 0), (1, 1), (0, 1), (1, 0)])
def test_a_nan_makes_slogdet_and_det_nan_in_every_backend(dtype, position, lapack):
    """TensorFlow: slogdet of a matrix holding a NaN is (nan, nan), det nan, wherever the NaN
    is (LAPACK read a NaN pivot as a zero one: det 0, slogdet (0, -inf))."""
    a = tt.constant(_with_nan(position, n=2), dtype)
    for backend in BACKENDS:
        sign, log_abs = _run(_slogdet, backend, a)
        assert np.isnan(sign) and np.isnan(log_abs), (backend, sign, log_abs)
        assert sign.dtype == dtype
        assert np.isnan(_run(tt.linalg.det, backend, a)), backend


def test_in_a_batch_only_the_matrices_holding_a_nan_are_nan(lapack):
    """The others keep TensorFlow's values: a sign and log, 0 and -inf for a singular matrix,
    (1, inf) for [[inf, 1], [1, 1]] and (-1, inf) for [[-inf, 1], [1, 1]]; and the gradient
    of log |det A|, A^-T, is unchanged for a finite A."""
    good = np.array([[-2.0, 1.0], [1.0, 3.0]])  # det -7
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    infinite = [[np.inf, 1.0], [1.0, 1.0]], [[-np.inf, 1.0], [1.0, 1.0]]
    batch = np.stack([good, _with_nan((0, 0), n=2), singular, _with_nan((1, 0), n=2), *infinite])
    x = tt.constant(good)

    def log_abs_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            log_abs = tt.linalg.slogdet(x)[1]
        return tape.gradient(log_abs, x)

    for backend in BACKENDS:
        sign, log_abs = _run(_slogdet, backend, tt.constant(batch))
        np.testing.assert_array_equal(sign, [-1.0, nan, 0.0, nan, 1.0, -1.0])
        expected = [np.log(7.0), nan, -np.inf, nan, np.inf, np.inf]
        np.testing.assert_allclose(log_abs, expected, rtol=1e-12)
        det = _run(tt.linalg.det, backend, tt.constant(batch))
        np.testing.assert_allclose(det, [-7.0, nan, 0.0, nan, np.inf, -np.inf], rtol=1e-12)
        gradient = _run(log_abs_gradient, backend, x)
        np.testing.assert_allclose(gradient, np.linalg.inv(good).T, rtol=1e-12)


def _solve_ones(a):
    return tt.linalg.solve(a, tt.ones(tuple(a.shape[:-1]) + (2,), a.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_nan_makes_all_of_solve_and_inv_nan(dtype, lapack):
    """TensorFlow: every element of X is NaN (LAPACK left some rows finite, or read a NaN
    pivot as a zero one and raised). TensorFlow raises "not invertible" for a NaN at [0, 0]:
    tracer gives NaN there too, so that a NaN flows through det's gradient (a solve)."""
    for position in [(0, 0), (1, 1), (2, 2), (1, 0), (0, 2), (2, 0)]:
        a = tt.constant(_with_nan(position), dtype)
        for backend in BACKENDS:
            for function in (tt.linalg.inv, _solve_ones):
                x = _run(function, backend, a)
                assert x.dtype == dtype and np.isnan(x).all(), (position, backend, function, x)


def test_in_a_batch_only_the_systems_holding_a_nan_are_nan(lapack):
    batch = tt.constant(np.stack([_with_nan((0, 0)), np.eye(3) * 2.0, _with_nan((1, 1))]))
    for backend in BACKENDS:
        x = _run(tt.linalg.inv, backend, batch)
        assert np.isnan(x[0]).all() and np.isnan(x[2]).all()
        np.testing.assert_array_equal(x[1], np.eye(3) / 2.0)


def test_dets_gradient_of_a_nan_matrix_is_nan_in_every_backend():
    a = tt.constant([[nan, 1.0], [1.0, 1.0]], tt.float64)

    def det_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            det = tt.linalg.det(x)
        return tape.gradient(det, x)

    for backend in BACKENDS:
        assert np.isnan(_run(det_gradient, backend, a)).all(), backend


# --- matmul's adjoints ---------------------------------------------------------------------

A_COMPLEX = np.array([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]])
B_COMPLEX = np.array([[1 + 0j], [1j]])


@pytest.mark.parametrize("matmul", [tt.matmul, tt.linalg.matmul])
def test_adjoints_are_conjugate_transposes(matmul):
    """TensorFlow's values (tf.matmul(a, b, adjoint_a=True) = a^H b)."""
    a, b = tt.constant(A_COMPLEX), tt.constant(B_COMPLEX)
    np.testing.assert_allclose(matmul(a, b, adjoint_a=True), [[1.5 - 2j], [3 + 3j]])
    np.testing.assert_allclose(
        matmul(b, a, adjoint_a=True, adjoint_b=True), [[2 - 5j, -2.5j]], atol=1e-15
    )
    r = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(matmul(r, r, adjoint_b=True), [[5.0, 11.0], [11.0, 25.0]])
    np.testing.assert_allclose(matmul(r, r, adjoint_a=True), [[10.0, 14.0], [14.0, 20.0]])
    np.testing.assert_allclose(
        matmul(r, r, transpose_a=True, adjoint_b=True, a_is_sparse=True, b_is_sparse=True),
        r.T @ r.T,
    )
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
        matmul(r, r, transpose_a=True, adjoint_a=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adjoint_products_have_the_gradients_of_their_transposes(backend):
    rng = np.random.default_rng(5)
    a = tt.constant(rng.standard_normal((2, 4, 3)))
    b = tt.constant(rng.standard_normal((2, 5, 4)))
    w = tt.constant(rng.standard_normal((2, 3, 5)))

    def loss_and_gradients(a, b):
        with tt.GradientTape() as tape:
            tape.watch([a, b])
            loss = tt.reduce_sum(w * tt.matmul(a, b, adjoint_a=True, adjoint_b=True))
        return [loss, *tape.gradient(loss, [a, b])]

    loss, da, db = _run(loss_and_gradients, backend, a, b)
    a_, b_, w_ = np.asarray(a), np.asarray(b), np.asarray(w)
    at, bt = np.swapaxes(a_, -1, -2), np.swapaxes(b_, -1, -2)
    np.testing.assert_allclose(loss, np.sum(w_ * (at @ bt)), rtol=1e-12)
    # d/dA of sum(W * A^T B^T) = B^T W^T, d/dB = W^T A^T
    np.testing.assert_allclose(da, bt @ np.swapaxes(w_, -1, -2), rtol=1e-12)
    np.testing.assert_allclose(db, np.swapaxes(w_, -1, -2) @ at, rtol=1e-12)


def test_a_complex_adjoints_gradient_is_tensorflows():
    """TensorFlow's gradient of sum(real(a^H b)) with respect to a is conj(b 1^T) = b̄ on every
    column (the cotangent of a complex value is the conjugate of d/dRe + i d/dIm)."""
    a, b = tt.constant(A_COMPLEX), tt.constant(B_COMPLEX)
    with tt.GradientTape() as tape:
        tape.watch(a)
        loss = tt.reduce_sum(tt.math.real(tt.matmul(a, b, adjoint_a=True)))
    np.testing.assert_allclose(tape.gradient(loss, a), [[1, 1], [1j, 1j]])


# --- tt.eye of a size known from a shape ---------------------------------------------------


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_eye_takes_a_size_from_a_shape_inside_a_function(backend):
    spec = [tt.TensorSpec([None, None], tt.float64)]

    @tt.function(input_signature=spec, backend=backend)
    def gram_plus_identity(a):
        return tt.matmul(a, a, transpose_b=True) + tt.eye(tt.shape(a)[0], dtype=tt.float64)

    @tt.function(input_signature=spec, backend=backend)
    def batched(a):
        return tt.eye(
            tt.shape(a)[0], tt.shape(a)[1], batch_shape=[2, tt.shape(a)[0]], dtype=tt.int32
        )

    for rows, cols in ((2, 3), (4, 1)):
        x = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
        np.testing.assert_array_equal(gram_plus_identity(x), x @ x.T + np.eye(rows))
        expected = np.broadcast_to(np.eye(rows, cols, dtype=np.int32), (2, rows, rows, cols))
        np.testing.assert_array_equal(batched(x), expected)


def test_eye_of_a_size_computed_from_values_runs_the_function_as_python():
    """TF 2.21 makes eye(sum(n)) in a tf.function (a size its graph knows when it runs);
    tracer's function runs as Python then (it raised)."""

    @tt.function(input_signature=[tt.TensorSpec([None], tt.int32)], backend="interpreter")
    def from_values(n):
        return tt.eye(tt.reduce_sum(n))

    np.testing.assert_array_equal(from_values(tt.constant([1, 2])).numpy(), np.eye(3))
