"""Triangular solves through the installed kernel `blocked_solves` (runtime/
blocked_solves_typed.h; codegen/blocked_products.py's rule): eager solves of every triangle
and transpose against float64 numpy by their backward error, triangles that fill no whole
block, broadcast batches; the same bits on one thread and on two; compiled modules that call
the same kernel and give the eager bits; gradients through a tape against finite
differences; a zero on the diagonal; and what stays with the BLAS."""

import numpy as np
import pytest

import tracer as tt
from codegen import array_linalg, blocked_products
from runtime import installed_kernels
from tests.thread_counts import results_on_one_thread_and_two

rng = np.random.default_rng(20261202)

needs_kernel = pytest.mark.skipif(
    installed_kernels.function("blocked_solves_f32", "void *") is None,
    reason="the installed blocked solves need AVX-512",
)

# (n, k): one row, one triangle of rows, ragged halves, a part of columns per thread
SIZES = [(1, 2), (16, 3), (17, 40), (33, 64), (100, 130), (300, 70)]


def _triangle(n, dtype, batch=()):
    """Matrices whose lower and upper triangles are both well conditioned: the half a solve
    does not read holds values that would change its result."""
    return (rng.standard_normal((*batch, n, n)) + (n + 2) * np.eye(n)).astype(dtype)


def _operator(a, lower, adjoint):
    t = np.tril(a) if lower else np.triu(a)
    return np.swapaxes(t, -1, -2) if adjoint else t


def _assert_backward_stable(a, b, x, lower, adjoint):
    """op(T) x = b to within T's rounding: |op(T) x - b| <= 4 n eps (|op(T)| |x| + |b|)."""
    t = _operator(a.astype(np.float64), lower, adjoint)
    x64 = x.astype(np.float64)
    residual = np.abs(t @ x64 - b.astype(np.float64))
    bound = np.abs(t) @ np.abs(x64) + np.abs(b.astype(np.float64))
    n = a.shape[-1]
    assert np.all(residual <= 4 * n * np.finfo(x.dtype).eps * bound)


@needs_kernel
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", SIZES)
def test_an_eager_blocked_solve_is_backward_stable(size, dtype, lower, adjoint):
    n, k = size
    a = _triangle(n, dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    assert blocked_products.solve_geometry(a.dtype, 1, n, k, lower, adjoint) is not None
    x = tt.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint).numpy()
    assert x.dtype == dtype and x.shape == (n, k)
    _assert_backward_stable(a, b, x, lower, adjoint)
    want = np.linalg.solve(_operator(a.astype(np.float64), lower, adjoint), b)
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(x, want, rtol=tolerance, atol=tolerance)


@needs_kernel
def test_a_blocked_solve_broadcasts_its_batch():
    a = _triangle(40, np.float64, batch=(3, 1))
    b = rng.standard_normal((1, 4, 40, 9))
    x = array_linalg.triangular_solve(a, b, True, True)
    assert x.shape == (3, 4, 40, 9)
    want = np.linalg.solve(_operator(np.broadcast_to(a, (3, 4, 40, 40)), True, True), b)
    np.testing.assert_allclose(x, want, rtol=1e-12, atol=1e-12)


@needs_kernel
@pytest.mark.parametrize("layout", ["transposed", "every other column", "reversed rows"])
def test_a_blocked_solve_reads_its_right_hand_sides_through_their_strides(layout):
    """No copy of a view: a transposed one (a Cholesky gradient's), strided, reversed; one
    matrix of right-hand sides for a batch of triangles."""
    a = _triangle(60, np.float64, batch=(3,))
    if layout == "transposed":
        b = rng.standard_normal((50, 60)).T
    elif layout == "every other column":
        b = rng.standard_normal((60, 100))[:, ::2]
    else:
        b = rng.standard_normal((60, 50))[::-1]
    for lower, adjoint in [(True, False), (True, True), (False, False), (False, True)]:
        x = array_linalg.triangular_solve(a, b, lower, adjoint)
        want = np.linalg.solve(_operator(a, lower, adjoint), np.broadcast_to(b, (3, 60, 50)))
        np.testing.assert_allclose(x, want, rtol=1e-12, atol=1e-12)
        contiguous = array_linalg.triangular_solve(a, np.ascontiguousarray(b), lower, adjoint)
        assert x.tobytes() == contiguous.tobytes()


@needs_kernel
def test_a_blocked_solve_has_the_same_bits_on_one_thread_and_on_two():
    script = (
        "import json, numpy as np\n"
        "from codegen import array_linalg\n"
        "rng = np.random.default_rng(7)\n"
        "a = rng.standard_normal((200, 200)).astype(np.float32) + 200 * np.eye(200, dtype=np.float32)\n"
        "b = rng.standard_normal((200, 300)).astype(np.float32)\n"
        "x = np.concatenate([array_linalg.triangular_solve(a, b, lower, adjoint).ravel()\n"
        "                    for lower in (True, False) for adjoint in (False, True)])\n"
        "print(json.dumps(x.view(np.uint32).tolist()))\n"
    )
    one, two = results_on_one_thread_and_two(script)
    assert one == two


@needs_kernel
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_compiled_solve_calls_the_same_kernel_and_gives_the_eager_bits(dtype, lower, adjoint):
    a = _triangle(70, dtype, batch=(2,))
    b = rng.standard_normal((2, 70, 45)).astype(dtype)

    def solve(a, b):
        return tt.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint)

    eager = solve(tt.constant(a), tt.constant(b)).numpy()
    function = tt.function(solve, backend="c")
    compiled = function(a, b).numpy()
    suffix = "f32" if dtype == np.float32 else "f64"
    assert f"blocked_solves_{suffix}" in function.get_concrete_function(a, b).c_source()
    assert eager.tobytes() == compiled.tobytes()
    _assert_backward_stable(a, b, eager, lower, adjoint)


@needs_kernel
@pytest.mark.parametrize("adjoint", [False, True])
def test_a_blocked_solves_gradients_match_finite_differences(adjoint):
    a = _triangle(40, np.float64)
    b = rng.standard_normal((40, 24))
    ta, tb = tt.Variable(a), tt.Variable(b)
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.sin(tt.linalg.triangular_solve(ta, tb, adjoint=adjoint)))
    da, db = (g.numpy() for g in tape.gradient(loss, [ta, tb]))

    def objective(a, b):
        return np.sum(np.sin(np.linalg.solve(_operator(a, True, adjoint), b)))

    step = 1e-6
    for i, j in [(0, 0), (7, 3), (39, 20), (25, 25)]:
        e = np.zeros_like(a)
        e[i, j] = step
        numeric = (objective(a + e, b) - objective(a - e, b)) / (2 * step)
        np.testing.assert_allclose(da[i, j], numeric, rtol=1e-6, atol=1e-8)
        e = np.zeros_like(b)
        e[i, j % 24] = step
        numeric = (objective(a, b + e) - objective(a, b - e)) / (2 * step)
        np.testing.assert_allclose(db[i, j % 24], numeric, rtol=1e-6, atol=1e-8)
    assert np.all(np.triu(da, 1) == 0), "the upper triangle is never read"


@needs_kernel
def test_a_zero_on_the_diagonal_reaches_only_the_rows_after_it():
    """TensorFlow's inf and NaN, no error; the rows solved before it keep their values."""
    a = _triangle(50, np.float64)
    a[20, 20] = 0.0
    b = rng.standard_normal((50, 8))
    x = tt.linalg.triangular_solve(a, b).numpy()
    want = np.linalg.solve(np.tril(a)[:20, :20], b[:20])
    np.testing.assert_allclose(x[:20], want, rtol=1e-12, atol=1e-12)
    assert not np.isfinite(x[20:]).any()


@pytest.mark.parametrize(
    "dtype, count, n, k",
    [
        (np.float64, 1, 100, 1),  # one right-hand side: trsv's
        (np.int32, 1, 10, 10),
        (np.complex64, 1, 10, 10),
    ],
)
def test_other_solves_stay_with_the_blas(dtype, count, n, k):
    assert blocked_products.solve_geometry(np.dtype(dtype), count, n, k, True, False) is None
