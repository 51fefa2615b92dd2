"""tt.linalg's LAPACK ops against numpy and scipy: values in float32 and float64, batched,
eagerly and compiled (through LAPACKE, and through the plain C used where no LAPACK is
linked); TensorFlow's semantics (which triangle is read, singular matrices, broadcasting);
errors that name the argument, and the same error eagerly and from compiled code;
batching rules against a Python loop; exported C calling LAPACKE; and a Gaussian process's
negative log marginal likelihood with its gradient, the workload these ops exist for.

The catalogue (tests/catalogue/lapack.py) checks the gradients of every order against
finite differences, and eager = interpreter = C = exported C, forward mode and jacobians.
"""

import os
import subprocess

import numpy as np
import pytest
import scipy.linalg

import tracer as tt
from codegen import array_linalg, build
from codegen.errors import CompileError
from tests import exported_c

rng = np.random.default_rng(77)
TOLERANCE = {np.float32: 1e-4, np.float64: 1e-11}


def spd(*shape):
    """Symmetric positive definite matrices X X^T + n I (the last two axes n x n)."""
    x = rng.standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def general(*shape):
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


def _loop(function, *arrays):
    """numpy's `function` over the leading batch axis of `arrays`, stacked."""
    return np.stack([function(*parts) for parts in zip(*arrays)])


def _factorizations(a, b, s):
    """Every op of item 1, on general matrices `a`, right-hand sides `b`, and symmetric
    positive definite `s` (one batch shape)."""
    chol = tt.linalg.cholesky(s)
    sign, log_abs = tt.linalg.slogdet(a)
    return [
        chol,
        tt.linalg.triangular_solve(a, b),
        tt.linalg.triangular_solve(a, b, lower=False, adjoint=True),
        tt.linalg.cholesky_solve(chol, b),
        tt.linalg.solve(a, b),
        tt.linalg.solve(a, b, adjoint=True),
        tt.linalg.inv(a),
        tt.linalg.inv(a, adjoint=True),
        tt.linalg.det(a),
        sign,
        log_abs,
        tt.linalg.logdet(s),
    ]


def _references(a, b, s):
    transpose = np.swapaxes(a, -1, -2)
    sign, log_abs = np.linalg.slogdet(a)
    chol = np.linalg.cholesky(s)
    return [
        chol,
        _loop(lambda m, r: scipy.linalg.solve_triangular(m, r, lower=True), a, b),
        _loop(lambda m, r: scipy.linalg.solve_triangular(m, r, lower=False, trans="T"), a, b),
        _loop(lambda c, r: scipy.linalg.cho_solve((c, True), r), chol, b),
        np.linalg.solve(a, b),
        np.linalg.solve(transpose, b),
        np.linalg.inv(a),
        np.linalg.inv(transpose),
        np.linalg.det(a),
        sign,
        log_abs,
        2 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1),
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_match_numpy_and_scipy_eagerly_and_compiled(dtype):
    a, b, s = general(2, 3, 4, 4), rng.standard_normal((2, 3, 4, 2)), spd(2, 3, 4, 4)
    inputs = [tt.constant(v.astype(dtype)) for v in (a, b, s)]
    want = _references(a, b, s)
    eager = _factorizations(*inputs)
    compiled = tt.function(_factorizations, backend="c")(*inputs)
    for k, (e, c, w) in enumerate(zip(eager, compiled, want)):
        assert e.dtype == tt.as_dtype(dtype) and c.dtype == e.dtype, k
        assert e.shape == w.shape, k
        np.testing.assert_allclose(e.numpy(), w, rtol=TOLERANCE[dtype], atol=1e-5, err_msg=k)
        np.testing.assert_allclose(c.numpy(), w, rtol=TOLERANCE[dtype], atol=1e-5, err_msg=k)


def test_the_plain_c_without_a_lapack_gives_the_same_values_and_errors(monkeypatch):
    """Without scipy-openblas32 the module has no LAPACK: its kernels are plain C loops."""
    monkeypatch.setattr(build, "blas", lambda: None)
    a, b, s = general(2, 5, 5), rng.standard_normal((2, 5, 3)), spd(2, 5, 5)
    compiled = tt.function(_factorizations, backend="c")
    for got, want in zip(compiled(a, b, s), _references(a, b, s)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    assert "potrf" not in compiled.get_concrete_function(a, b, s).c_source()
    with pytest.raises(np.linalg.LinAlgError, match="cholesky: the input is not positive"):
        compiled(a, b, -s)
    singular = a.copy()
    singular[1, 2] = 2 * singular[1, 0]
    with pytest.raises(np.linalg.LinAlgError, match="solve: the input matrix is not invertible"):
        compiled(singular, b, s)


def test_only_the_triangle_tensorflow_reads_is_read():
    s, a, b = spd(4, 4), general(4, 4), rng.standard_normal((4, 2))
    lower, upper = np.tril(s), np.triu(a)
    garbage = np.triu(rng.standard_normal((4, 4)) * 100, 1)

    def run(s_in, a_in):
        return [
            tt.linalg.cholesky(s_in),
            tt.linalg.logdet(s_in),
            tt.linalg.triangular_solve(a_in, b, lower=False),
        ]

    want = run(lower + lower.T - np.diag(np.diag(s)), upper)
    for backend in ("eager", "c"):
        call = run if backend == "eager" else tt.function(run, backend="c")
        for got, w in zip(call(lower + garbage, upper + garbage.T), want):
            np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-12, err_msg=backend)


def test_singular_matrices_give_tensorflows_values_without_errors():
    """det 0, slogdet (0, -inf), and a triangular solve with a zero on the diagonal gives
    inf and NaN: TensorFlow raises only in solve and inv (and in det's gradient)."""
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    zero_pivot = np.array([[1.0, 0.0], [2.0, 0.0]])
    rhs = np.ones((2, 1))

    def run(m, z):
        sign, log_abs = tt.linalg.slogdet(m)
        return tt.linalg.det(m), sign, log_abs, tt.linalg.triangular_solve(z, rhs)

    for call in (run, tt.function(run, backend="c")):
        det, sign, log_abs, solved = (t.numpy() for t in call(singular, zero_pivot))
        assert det == 0 and sign == 0 and log_abs == -np.inf
        assert solved[0, 0] == 1 and solved[1, 0] == -np.inf


def _substitution(lower, b):
    """x with lower x = b, one row after the other (what BLAS's trsm computes)."""
    x = np.zeros_like(b)
    for i in range(len(b)):
        known = sum((lower[i, j] * x[j] for j in range(i)), np.zeros_like(b[i]))
        x[i] = (b[i] - known) / lower[i, i]
    return x


def test_a_triangular_solve_takes_nan_and_inf_only_to_the_rows_that_depend_on_them(monkeypatch):
    """As substitution does, eagerly (where np.linalg.solve's pivoting spread them to every
    row), in C through BLAS and in plain C."""
    a, b = general(4, 4), rng.standard_normal((4, 2))
    a[2, 0], b[1, 1], a[0, 3] = np.inf, np.nan, np.nan  # the last above the diagonal: unread

    def run(a, b):
        return [
            tt.linalg.triangular_solve(a, b),
            tt.linalg.triangular_solve(tt.linalg.adjoint(a), b, lower=False, adjoint=True),
        ]

    want = _substitution(np.tril(a), b)
    assert np.isfinite(want[:2, 0]).all() and np.isfinite(want[0]).all()
    calls = [run, tt.function(run, backend="c")]
    monkeypatch.setattr(build, "blas", lambda: None)
    calls.append(tt.function(run, backend="c"))
    for call in calls:
        for got in call(a, b):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("way", ["trsm", "by blocks"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_a_large_eager_triangular_solve_matches_scipy(lower, adjoint, way, monkeypatch):
    """The eager kernel calls BLAS's trsm; where that cannot be built, past 64 rows it
    solves by blocks (two halves by recursion, the block beside them through a product):
    scipy's solve_triangular's values either way, batched too."""
    if way == "by blocks":
        monkeypatch.setattr(array_linalg, "triangular_solve", lambda *arguments: None)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 201, 201)) / 15 + 3 * np.eye(201)
    b = rng.standard_normal((201, 5))
    x = tt.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint).numpy()
    for k in range(2):
        expected = scipy.linalg.solve_triangular(a[k], b, lower=lower, trans=2 if adjoint else 0)
        np.testing.assert_allclose(x[k], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(build.blas() is None, reason="no scipy-openblas32 to link")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_eager_triangular_solve_gives_the_compiled_codes_bits(dtype):
    """Both make the same calls: trsv for a single right-hand side; else the same parts of
    the right-hand sides on tracer's threads, each solved by halves of the triangle (trsm
    below 64 rows, a GEMM between the halves)."""
    rng = np.random.default_rng(11)
    for n, k in [(7, 3), (201, 130), (201, 1), (600, 1)]:
        a = (rng.standard_normal((2, n, n)) / n + 2 * np.eye(n)).astype(dtype)
        b = rng.standard_normal((n, k)).astype(dtype)
        for lower, adjoint in [(True, False), (False, True), (True, True), (False, False)]:
            eager = tt.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint)
            compiled = tt.function(
                lambda a, b: tt.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint),
                backend="c",
            )(tt.constant(a), tt.constant(b))
            np.testing.assert_array_equal(eager.numpy(), compiled.numpy())
            want = scipy.linalg.solve_triangular(a[1], b, lower=lower, trans=2 if adjoint else 0)
            tolerance = 1e-4 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(eager.numpy()[1], want, rtol=tolerance, atol=tolerance)


def _no_compiler(*arguments, **keywords):
    raise CompileError("no compiler here")


def test_the_eager_solve_and_factorization_need_no_compiler(monkeypatch):
    """They call the BLAS through cffi and a loop installed with tracer: nothing is built."""
    monkeypatch.setattr(build, "load", _no_compiler)
    a, b = np.tril(general(5, 5)) + 5 * np.eye(5), rng.standard_normal((5, 2))
    solved = array_linalg.triangular_solve(a, b, True, False)
    np.testing.assert_allclose(solved, scipy.linalg.solve_triangular(a, b, lower=True), rtol=1e-12)
    m = general(6, 6)
    spd_matrix = m @ m.T + 6 * np.eye(6)
    np.testing.assert_allclose(
        array_linalg.cholesky(spd_matrix), np.linalg.cholesky(spd_matrix), rtol=1e-12
    )


def test_without_the_blas_the_eager_triangular_solve_is_numpys(monkeypatch):
    monkeypatch.setattr(array_linalg.blas_library, "function", lambda name, signature: None)
    # nor the installed blocked solves (a CPU without AVX-512)
    monkeypatch.setattr(array_linalg.blocked_products, "solve_geometry", lambda *args: None)
    a, b = np.tril(general(5, 5)) + 5 * np.eye(5), rng.standard_normal((5, 2))
    assert array_linalg.triangular_solve(a, b, True, False) is None
    got = tt.linalg.triangular_solve(a, b).numpy()
    np.testing.assert_allclose(got, scipy.linalg.solve_triangular(a, b, lower=True), rtol=1e-12)


@pytest.mark.skipif(build.blas() is None, reason="no scipy-openblas32 to link")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_eager_cholesky_gives_the_compiled_codes_bits(dtype):
    """Both call potrf on the lower triangle, the upper one ignored; numpy's factors to
    rounding; a matrix that is not positive definite raises in both."""
    rng = np.random.default_rng(13)
    for shape in [(5, 5), (2, 3, 130, 130)]:
        m = rng.standard_normal(shape)
        a = (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)
        a[..., 0, -1] = 1e3  # above the diagonal: never read
        eager = tt.linalg.cholesky(a).numpy()
        compiled = tt.function(tt.linalg.cholesky, backend="c")(tt.constant(a)).numpy()
        np.testing.assert_array_equal(eager, compiled)
        want = np.linalg.cholesky(np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2))
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(eager, want, rtol=tolerance, atol=tolerance)
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]], dtype)
    for run in (tt.linalg.cholesky, tt.function(tt.linalg.cholesky, backend="c")):
        with pytest.raises(tt.errors.InvalidArgumentError, match="not positive definite"):
            run(tt.constant(indefinite))


def test_without_the_blas_the_eager_cholesky_is_numpys(monkeypatch):
    monkeypatch.setattr(array_linalg.blas_library, "function", lambda name, signature: None)
    m = general(6, 6)
    a = m @ m.T + 6 * np.eye(6)
    assert array_linalg.cholesky(a) is None
    np.testing.assert_allclose(tt.linalg.cholesky(a).numpy(), np.linalg.cholesky(a), rtol=1e-12)
    with pytest.raises(tt.errors.InvalidArgumentError, match="not positive definite"):
        tt.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_triangular_and_cholesky_solves_broadcast_batches_but_solve_does_not():
    a, b = general(3, 3), rng.standard_normal((2, 4, 3, 1))
    got = tt.linalg.triangular_solve(a, b).numpy()
    assert got.shape == (2, 4, 3, 1)
    np.testing.assert_allclose(got[1, 2], scipy.linalg.solve_triangular(a, b[1, 2], lower=True))
    chol = np.linalg.cholesky(spd(2, 1, 3, 3))
    got = tt.linalg.cholesky_solve(chol, b).numpy()
    np.testing.assert_allclose(got[1, 3], scipy.linalg.cho_solve((chol[1, 0], True), b[1, 3]))
    with pytest.raises(ValueError, match=r"solve: `matrix` and `rhs` must have the same batch"):
        tt.linalg.solve(a, b)
    with pytest.raises(ValueError, match=r"batch shapes of `matrix` \(2,\) and `rhs` \(3,\)"):
        tt.linalg.triangular_solve(general(2, 3, 3), rng.standard_normal((3, 3, 1)))


def test_empty_matrices():
    empty = np.zeros((2, 0, 0))

    def run(m):
        return tt.linalg.det(m), tt.linalg.cholesky(m), tt.linalg.solve(m, np.zeros((2, 0, 3)))

    for call in (run, tt.function(run, backend="c")):
        det, chol, solved = call(empty)
        np.testing.assert_array_equal(det.numpy(), [1.0, 1.0])
        assert chol.shape == (2, 0, 0) and solved.shape == (2, 0, 3)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: tt.linalg.cholesky(np.ones((2, 3))), ValueError, "cholesky: `input` must be a"),
        (lambda: tt.linalg.det(np.ones(3)), ValueError, r"det: `input` must be .* rank 2"),
        (lambda: tt.linalg.logdet(np.ones((3, 2))), ValueError, "logdet: `matrix` must be"),
        (
            lambda: tt.linalg.cholesky(tt.constant([[1, 0], [0, 1]])),
            TypeError,
            "cholesky: `input` must be float32 or float64, not int32",
        ),
        (
            lambda: tt.linalg.solve(np.eye(2), np.ones((3, 1))),
            ValueError,
            r"solve: `rhs` has 3 rows where `matrix` of shape \(2, 2\) needs 2",
        ),
        (
            lambda: tt.linalg.triangular_solve(np.eye(2), np.ones(2)),
            ValueError,
            "triangular_solve: `rhs` must be a .*matrices",
        ),
        (
            lambda: tt.linalg.cholesky_solve(np.ones((2, 3)), np.ones((2, 1))),
            ValueError,
            "cholesky_solve: `matrix` must be a .*square",
        ),
        (
            lambda: tt.linalg.solve(tt.eye(2, dtype=tt.float64), tt.ones((2, 1))),
            TypeError,
            "solve: `matrix` is float64 but `rhs` is float32",
        ),
    ],
)
def test_bad_arguments_raise_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_failed_factorization_raises_the_same_error_eagerly_and_compiled():
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]])
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    cases = [
        (tt.linalg.cholesky, indefinite, "cholesky: the input is not positive definite"),
        (tt.linalg.logdet, indefinite, "cholesky: the input is not positive definite"),
        (tt.linalg.inv, singular, "solve: the input matrix is not invertible"),
        (lambda m: tt.linalg.solve(m, np.ones((2, 1))), singular, "solve: the input matrix"),
    ]
    for function, matrix, message in cases:
        with pytest.raises(np.linalg.LinAlgError, match=message):
            function(matrix)
        with pytest.raises(np.linalg.LinAlgError, match=message) as info:
            tt.function(function, backend="c")(matrix)
        assert "(at test_lapack.py:" in str(info.value)  # the line of the user's call


def test_batching_rules_agree_with_a_python_loop():
    a, b, s = general(3, 3, 3), rng.standard_normal((3, 3, 2)), spd(3, 3, 3)
    shared = general(3, 3)  # not batched: broadcast to the batch by the rules

    def one(a, b, s):
        sign, log_abs = tt.linalg.slogdet(a)
        chol = tt.linalg.cholesky(s)
        return tt.concat(
            [
                tt.reshape(chol, [-1]),
                tt.reshape(tt.linalg.triangular_solve(shared, b, adjoint=True), [-1]),
                tt.reshape(tt.linalg.solve(a, b), [-1]),
                tt.reshape(tt.linalg.solve(shared, b), [-1]),
                tt.stack([sign, log_abs, tt.linalg.logdet(s)]),
            ],
            axis=0,
        )

    batched = tt.vectorized_map(lambda e: one(*e), (a, b, s), fallback_to_while_loop=False)
    looped = np.stack([one(*e).numpy() for e in zip(a, b, s)])
    np.testing.assert_allclose(batched.numpy(), looped, rtol=1e-12)


def test_gradients_follow_tensorflows_conventions():
    """cholesky's gradient is symmetric (TensorFlow symmetrizes it); triangular_solve's
    gradient with respect to the matrix lies on the triangle it reads."""
    s, a, b = tt.constant(spd(3, 3)), tt.constant(general(3, 3)), tt.constant(np.ones((3, 2)))
    weights = tt.constant(rng.standard_normal((3, 3)))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([s, a])
        chol = tt.reduce_sum(tt.linalg.cholesky(s) * weights)
        upper = tt.reduce_sum(tt.linalg.triangular_solve(a, b, lower=False) * weights[:, :2])
    g = tape.gradient(chol, s).numpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-14)
    g = tape.gradient(upper, a).numpy()
    assert np.all(np.tril(g, -1) == 0) and np.all(g[np.triu_indices(3)] != 0)


def gp_nll(params, x, y):
    """-log p(y | x) of a zero-mean Gaussian process with an RBF kernel (lengthscale, signal
    variance) and Gaussian noise (its variance): the three entries of `params`."""
    lengthscale, signal, noise = params[0], params[1], params[2]
    n = x.shape[0]
    distance = (x[:, None] - x[None, :]) / lengthscale
    k = signal * tt.exp(-0.5 * tt.square(distance)) + noise * tt.eye(n, dtype=x.dtype)
    chol = tt.linalg.cholesky(k)
    alpha = tt.linalg.cholesky_solve(chol, y[:, None])
    fit = 0.5 * tt.reduce_sum(y[:, None] * alpha)
    return fit + 0.5 * tt.linalg.logdet(k) + 0.5 * n * np.log(2 * np.pi)


def test_a_gaussian_process_likelihood_and_its_gradient_match_the_closed_form():
    x = np.sort(rng.uniform(-3, 3, 40))
    y = np.sin(2 * x) + 0.1 * rng.standard_normal(40)
    params = np.array([0.7, 1.3, 0.05])
    # numpy: K^-1 and dK/dtheta give 0.5 tr((K^-1 - alpha alpha^T) dK/dtheta)
    d2 = (x[:, None] - x[None, :]) ** 2
    rbf = np.exp(-0.5 * d2 / params[0] ** 2)
    k = params[1] * rbf + params[2] * np.eye(40)
    k_inv = np.linalg.inv(k)
    alpha = k_inv @ y
    value = 0.5 * y @ alpha + 0.5 * np.linalg.slogdet(k)[1] + 20 * np.log(2 * np.pi)
    inner = k_inv - np.outer(alpha, alpha)
    derivatives = [params[1] * rbf * d2 / params[0] ** 3, rbf, np.eye(40)]
    gradient = [0.5 * np.sum(inner * dk) for dk in derivatives]

    def value_and_gradient(params, x, y):
        with tt.GradientTape() as tape:
            tape.watch(params)
            nll = gp_nll(params, x, y)
        return nll, tape.gradient(nll, params)

    for call in (value_and_gradient, tt.function(value_and_gradient, backend="c")):
        got_value, got_gradient = call(tt.constant(params), tt.constant(x), tt.constant(y))
        np.testing.assert_allclose(float(got_value), value, rtol=1e-10)
        np.testing.assert_allclose(got_gradient.numpy(), gradient, rtol=1e-8)


def _invariants(a, w):
    """Functions of qr, eigh and svd that do not depend on the vectors' signs: of general
    (batch, 4, 3) matrices `a` and square (batch, 3, 3) `w`."""
    batch = a.shape[0]
    q, r = tt.linalg.qr(a)
    e, v = tt.linalg.eigh(w)
    s, u, vt = tt.linalg.svd(a)
    return tt.concat(
        [
            tt.reshape(tt.matmul(q, r), [batch, -1]),
            tt.reshape(r * r, [batch, -1]),
            e,
            tt.reshape(tt.matmul(v * e[..., None, :], v, transpose_b=True), [batch, -1]),
            s,
            tt.reshape(u * u, [batch, -1]),
            tt.reshape(vt * vt, [batch, -1]),
        ],
        axis=-1,
    )


def test_exported_c_calls_lapacke_where_asked_and_plain_c_otherwise(tmp_path):
    blas = pytest.importorskip("scipy_openblas32")
    a, b, s = general(2, 4, 4), rng.standard_normal((2, 4, 2)), spd(2, 4, 4)
    tall, square = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3, 3))

    def solver(a, b, s, tall, square):
        solved = tt.reshape(tt.stack(_factorizations(a, b, s)[3:6], axis=1), [2, -1])
        return tt.concat([solved, _invariants(tall, square)], axis=-1)

    arrays = [a, b, s, tall, square]
    spec = [tt.TensorSpec(v.shape, tt.float64) for v in arrays]
    directory = str(tmp_path)
    tt.export_c(solver, spec, directory)
    want = solver(*arrays).numpy()
    calls = [exported_c.Call("solver", arrays, [want])]
    main = os.path.join(directory, "main.c")
    (tmp_path / "main.c").write_text(exported_c.main_source("solver", calls))
    functions = ["getrf_work", "getrs_work", "potrf_work", "geqrf", "orgqr", "syevd", "gesdd"]
    renamed = [f"-DLAPACKE_d{f}=scipy_LAPACKE_d{f}" for f in functions]
    lapacke = [
        "-DSOLVER_USE_CBLAS",
        "-DSOLVER_USE_LAPACKE",
        "-Dcblas_dtrsm=scipy_cblas_dtrsm",
        "-Dcblas_dgemm=scipy_cblas_dgemm",
        "-I" + blas.get_include_dir(),
        *renamed,
    ]
    libraries = ["-L" + blas.get_lib_dir(), "-l" + blas.get_library()]
    libraries.append("-Wl,-rpath," + blas.get_lib_dir())
    for flags, extra in [([], []), (lapacke, libraries)]:
        program = exported_c.build(directory, "solver", ["-std=c99", "-O2", *flags], [main], extra)
        np.testing.assert_allclose(exported_c.run(program, calls)[0][0], want, rtol=1e-10)
        symbols = subprocess.run(["nm", program], capture_output=True, text=True).stdout
        assert ("scipy_LAPACKE_dgesdd" in symbols) == bool(flags)


# --- qr, eigh, svd ---------------------------------------------------------------------


def _decompositions(tall, wide, square):
    """Every decomposition's results: qr of tall and wide matrices, reduced and full;
    eigh; svd reduced, full and values only."""
    return [
        *tt.linalg.qr(tall),
        *tt.linalg.qr(tall, full_matrices=True),
        *tt.linalg.qr(wide),
        *tt.linalg.qr(wide, full_matrices=True),
        *tt.linalg.eigh(square),
        *tt.linalg.svd(tall),
        *tt.linalg.svd(wide, full_matrices=True),
        tt.linalg.svd(square, compute_uv=False),
    ]


def _assert_orthonormal_columns(vectors, close):
    gram = np.swapaxes(vectors, -1, -2) @ vectors
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape), **close)


def _check_decompositions(results, tall, wide, square, tolerance):
    """Each result against numpy through what does not depend on the vectors' signs: |r|,
    eigen- and singular values, reconstructions, orthonormal columns; and the shapes."""
    close = dict(rtol=tolerance, atol=tolerance)
    for k, (matrix, mode) in enumerate(
        [(tall, "reduced"), (tall, "complete"), (wide, "reduced"), (wide, "complete")]
    ):
        q, r = (t.numpy() for t in results[2 * k : 2 * k + 2])
        want_q, want_r = np.linalg.qr(matrix, mode=mode)
        assert q.shape == want_q.shape and r.shape == want_r.shape
        np.testing.assert_allclose(q @ r, matrix, **close)
        np.testing.assert_allclose(np.abs(r), np.abs(want_r), **close)
        np.testing.assert_allclose(r, np.triu(r))
        _assert_orthonormal_columns(q, close)
    e, v = (t.numpy() for t in results[8:10])
    symmetric = np.tril(square) + np.swapaxes(np.tril(square, -1), -1, -2)
    np.testing.assert_allclose(e, np.linalg.eigvalsh(symmetric), **close)
    np.testing.assert_allclose((v * e[..., None, :]) @ np.swapaxes(v, -1, -2), symmetric, **close)
    for s, u, v, matrix, full in [(*results[10:13], tall, False), (*results[13:16], wide, True)]:
        s, u, v = s.numpy(), u.numpy(), v.numpy()
        want_u, want_s, want_vh = np.linalg.svd(matrix, full_matrices=full)
        assert u.shape == want_u.shape and v.shape == np.swapaxes(want_vh, -1, -2).shape
        np.testing.assert_allclose(s, want_s, **close)
        k = s.shape[-1]
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ np.swapaxes(v[..., :, :k], -1, -2)
        np.testing.assert_allclose(rebuilt, matrix, **close)
        _assert_orthonormal_columns(u, close)
        _assert_orthonormal_columns(v, close)
    np.testing.assert_allclose(
        results[16].numpy(), np.linalg.svd(square, compute_uv=False), **close
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_decompositions_match_numpy_eagerly_and_compiled(dtype):
    arrays = [rng.standard_normal(shape) for shape in [(2, 5, 3), (2, 3, 5), (2, 4, 4)]]
    tensors = [tt.constant(a.astype(dtype)) for a in arrays]
    tolerance = {np.float64: 1e-10, np.float32: 2e-4}[dtype]
    for results in (
        _decompositions(*tensors),
        tt.function(_decompositions, backend="c")(*tensors),
    ):
        assert all(t.dtype == tt.as_dtype(dtype) for t in results)
        _check_decompositions(results, *arrays, tolerance)


def test_decompositions_in_plain_c_without_a_lapack(monkeypatch):
    """Householder QR, and Jacobi's rotations for eigh and svd, where no LAPACK is linked."""
    monkeypatch.setattr(build, "blas", lambda: None)
    arrays = [rng.standard_normal(shape) for shape in [(2, 5, 3), (2, 3, 5), (2, 4, 4)]]
    compiled = tt.function(_decompositions, backend="c")
    _check_decompositions(compiled(*arrays), *arrays, 1e-10)
    assert "syevd" not in compiled.get_concrete_function(*arrays).c_source()


@pytest.mark.parametrize("lapack", [True, False])
def test_a_matrix_holding_nan_or_inf_decomposes_to_nan_in_every_backend(monkeypatch, lapack):
    """numpy raises for it (svd) or gives values from its finite part (qr, eigh), LAPACKE
    refuses a NaN: every backend gives NaN for each result of that matrix, and the other
    matrices of the batch their own values."""
    if not lapack:
        monkeypatch.setattr(build, "blas", lambda: None)
    arrays = [rng.standard_normal(shape) for shape in [(2, 5, 3), (2, 3, 5), (2, 4, 4)]]
    for array, bad in zip(arrays, [np.nan, np.inf, -np.inf]):
        array[0, -1, 0] = bad  # in the lower triangle, which eigh reads
    for call in (_decompositions, tt.function(_decompositions, backend="c")):
        results = call(*arrays)
        for k, result in enumerate(results):
            assert np.isnan(result.numpy()[0]).all(), k
        _check_decompositions([t[1] for t in results], *(a[1] for a in arrays), 1e-10)
    above = arrays[2][1].copy()
    above[0, -1] = np.nan  # above the diagonal: not read
    for eigh in (tt.linalg.eigh, tt.function(tt.linalg.eigh, backend="c")):
        want = np.linalg.eigvalsh(above, UPLO="L")
        np.testing.assert_allclose(eigh(above)[0].numpy(), want, rtol=1e-12)


def test_svd_returns_tensorflows_order_and_v_not_its_transpose():
    a = np.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]])
    s, u, v = tt.linalg.svd(a)
    np.testing.assert_allclose(s.numpy(), [4.0, 3.0])
    np.testing.assert_allclose(np.abs(v.numpy()), [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, a, atol=1e-15)
    assert tt.linalg.svd(a, compute_uv=False).shape == (2,)
    result = tt.linalg.qr(a)  # a named pair, as TensorFlow's
    assert result.q.shape == (3, 2) and result.r.shape == (2, 2)


def test_degenerate_spectra_give_tensorflows_finite_gradients():
    """TensorFlow divides by eigenvalue gaps through x / (x^2 + 1e-20): on the identity, an
    exact tie everywhere, the gradients are finite (values from TensorFlow 2.21)."""
    a = tt.constant(np.eye(3))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        e, v = tt.linalg.eigh(a)
        eigen = tt.reduce_sum(v**3) + tt.reduce_sum(e)
        s, u, _ = tt.linalg.svd(a)
        singular = tt.reduce_sum(u**3)
    np.testing.assert_allclose(tape.gradient(eigen, a).numpy(), np.eye(3))
    np.testing.assert_allclose(tape.gradient(singular, a).numpy(), np.zeros((3, 3)))


def test_eighs_gradient_lies_on_the_lower_triangle_it_reads():
    a = tt.constant(rng.standard_normal((4, 4)))
    with tt.GradientTape() as tape:
        tape.watch(a)
        e, v = tt.linalg.eigh(a)
        y = tt.reduce_sum(e * tt.constant(rng.standard_normal(4))) + tt.reduce_sum(v**4)
    g = tape.gradient(y, a).numpy()
    assert np.all(np.triu(g, 1) == 0) and np.all(g[np.tril_indices(4)] != 0)


@pytest.mark.parametrize(
    "function, shape, message",
    [
        (lambda x: tt.linalg.qr(x, full_matrices=True).q, (4, 3), "qr: the gradient with full"),
        (lambda x: tt.linalg.svd(x, full_matrices=True)[1], (5, 3), "svd: the gradient with full"),
    ],
)
def test_gradients_tensorflow_lacks_are_not_implemented_either(function, shape, message):
    x = tt.constant(rng.standard_normal(shape))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(function(x))
    with pytest.raises(NotImplementedError, match=message):
        tape.gradient(y, x)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: tt.linalg.eigh(np.ones((2, 3))), ValueError, "eigh: `tensor` must be a .*square"),
        (lambda: tt.linalg.qr(np.ones(3)), ValueError, "qr: `input` must be a .*rank 2"),
        (
            lambda: tt.linalg.svd(tt.constant([[1, 2]])),
            TypeError,
            "svd: `tensor` must be float32 or float64, not int32",
        ),
    ],
)
def test_decompositions_name_the_bad_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_decompositions_batch_as_a_python_loop():
    tall, square = rng.standard_normal((3, 4, 3)), rng.standard_normal((3, 3, 3))
    one = lambda elements: _invariants(elements[0][None], elements[1][None])[0]  # noqa: E731
    batched = tt.vectorized_map(one, (tall, square), fallback_to_while_loop=False)
    looped = np.stack([one(e).numpy() for e in zip(tall, square)])
    np.testing.assert_allclose(batched.numpy(), looped, rtol=1e-10, atol=1e-12)
