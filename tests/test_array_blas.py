"""The eager kernels' products through the compiled modules' BLAS (codegen/array_blas.py): the
products numpy would thread, on the calling thread where one core computes them quickly and
in parts on tracer's threads above, against numpy, with transposes and column-major or
strided operands; the others left to numpy; and eager products that give the compiled
code's bits, in one call and in parts.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tracer as tt
from codegen import array_blas, build, conv_kernels

rng = np.random.default_rng(20261202)

# (m, k, n): a dense layer's products in an eager CNN step, and others inside the band; a
# product of one row and one of one column (gemv's)
SHAPES = [(64, 3136, 10), (10, 64, 3136), (128, 512, 10), (100, 100, 100), (512, 128, 60)]
SHAPES += [(1, 784, 512), (512, 784, 1)]


def _matrix(rows, columns, dtype, layout):
    if layout == "F":
        return np.asfortranarray(rng.standard_normal((rows, columns)).astype(dtype))
    if layout == "strided":  # every other column of a wider matrix
        return rng.standard_normal((rows, 2 * columns)).astype(dtype)[:, ::2]
    return rng.standard_normal((rows, columns)).astype(dtype)


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_product_numpy_would_thread_is_computed_on_this_thread(shape, dtype, transposes, layout):
    m, k, n = shape
    ta, tb = transposes
    a = _matrix(*((k, m) if ta else (m, k)), dtype, layout)
    b = _matrix(*((n, k) if tb else (k, n)), dtype, layout)
    got = array_blas.product(a, b, ta, tb)
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    assert got.dtype == dtype and got.shape == (m, n) and got.flags.c_contiguous
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


@pytest.mark.parametrize(
    "a, b",
    [
        (np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)),  # numpy keeps it on one thread
        (np.ones((64, 3136), np.float32), np.ones((3136, 10))),  # two dtypes
        (np.ones((64, 3136), np.int64), np.ones((3136, 10), np.int64)),
    ],
)
def test_other_products_are_left_to_numpy(a, b):
    assert array_blas.product(a, b, False, False) is None


# (m, k, n) from ONE_THREAD_MACS: cut into rows, into columns, into the fewest parts (one
# block of 16 rows), and an eager MLP step's two products
LARGE = [(512, 512, 512), (100, 300, 700), (2000, 64, 40), (16, 2048, 256), (128, 784, 512)]
LARGE += [(1, 4096, 1024), (4096, 1024, 1)]  # one row, one column: gemv's parts


@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", LARGE)
def test_a_large_product_is_computed_in_parts_on_the_threads(shape, dtype, transposes):
    m, k, n = shape
    assert m * n * k >= array_blas.ONE_THREAD_MACS
    ta, tb = transposes
    a = _matrix(*((k, m) if ta else (m, k)), dtype, "F" if tb else "C")
    b = _matrix(*((n, k) if tb else (k, n)), dtype, "strided")
    got = array_blas.product(a, b, ta, tb)
    if got is None:
        pytest.skip("the installed kernels were not built here")
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    assert got.dtype == dtype and got.shape == (m, n) and got.flags.c_contiguous
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


# (a's shape, b's shape): batches whose products numpy would thread, batch axes broadcast
BATCHES = [
    ((4, 64, 3136), (3136, 10)),
    ((2, 8, 128, 32), (2, 8, 32, 128)),
    ((3, 1, 200, 300), (1, 5, 300, 100)),
    ((500, 600), (2, 600, 700)),
]


@pytest.mark.parametrize("layout", ["C", "transposed", "column-major"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", BATCHES)
def test_a_batch_whose_products_numpy_would_thread_is_computed_on_tracers_threads(
    shapes, dtype, layout
):
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in shapes)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    stored = [np.ascontiguousarray(np.swapaxes(x, -1, -2)) for x in (a, b)]
    if layout == "transposed":  # the transposes stored, op transposing them back
        got = array_blas.product(*stored, True, True)
    elif layout == "column-major":  # the same values, each matrix read column-major
        got = array_blas.product(*(np.swapaxes(x, -1, -2) for x in stored), False, False)
    else:
        got = array_blas.product(a, b, False, False)
    if got is None:
        pytest.skip("the installed kernels were not built here")
    assert got.dtype == dtype and got.shape == want.shape and got.flags.c_contiguous
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


# batches that numpy computes on one thread, a product at a time: products of at least
# FEWEST_BATCH_MACS each (an attention's heads; small matrices) and more than
# NUMPY_THREADS_MACS in all
SMALL_PRODUCTS = [((8, 4, 64, 32), (8, 4, 32, 64)), ((151, 24, 24), (151, 24, 24))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SMALL_PRODUCTS)
def test_a_batch_of_products_numpy_computes_one_at_a_time_is_on_tracers_threads(shapes, dtype):
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in shapes)
    m, k = a.shape[-2:]
    assert array_blas.FEWEST_BATCH_MACS <= m * k * b.shape[-1] <= array_blas.NUMPY_THREADS_MACS
    if not conv_kernels.available() or array_blas.gemm(dtype) is None:
        pytest.skip("the installed kernels or the BLAS are not here")
    got = array_blas.product(a, b, False, False)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got is not None, "left to numpy"
    assert got.dtype == dtype and got.shape == want.shape and got.flags.c_contiguous
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


@pytest.mark.parametrize("shapes", [((20000, 8, 8), (20000, 8, 8)), ((512, 16, 16), (16, 16))])
def test_a_batch_of_products_below_a_blas_calls_worth_is_left_to_numpy(shapes):
    """A product of fewer than FEWEST_BATCH_MACS multiply-adds is computed faster by numpy's
    own loop than by a call of the BLAS, however many the batch holds."""
    a, b = (np.ones(shape, np.float32) for shape in shapes)
    assert array_blas.product(a, b, False, False) is None


@pytest.mark.parametrize("shape", [(2, 8, 128, 32), (8, 4, 64, 32)])
def test_a_batch_gives_the_compiled_batchs_bits(shape):
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)

    def scores(a, b):
        return tt.matmul(a, b, transpose_b=True)

    eager = scores(tt.constant(a), tt.constant(b)).numpy()
    compiled = tt.function(scores, backend="c")(a, b).numpy()
    assert eager.tobytes() == compiled.tobytes()


@pytest.mark.parametrize(
    "shape", [(64, 3136, 10), (128, 512, 10), *LARGE[:3], (1, 784, 512), (1, 4096, 1024)]
)
def test_eager_products_give_the_compiled_products_bits(shape):
    """Both are one call of the same BLAS below the size where compiled code cuts a product
    into parts for the threads, and the same parts above; gemv's where the product has one
    row or one column (the second product of each pair then has one column)."""
    m, k, n = shape
    a = tt.constant(rng.standard_normal((m, k)).astype(np.float32))
    b = tt.constant(rng.standard_normal((n, k)).astype(np.float32))

    def products(a, b):
        return [
            tt.matmul(a, b, transpose_b=True),
            tt.matmul(b, a, transpose_b=True),
        ]

    eager = products(a, b)
    for got, want in zip(tt.function(products, backend="c")(a, b), eager):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("installed", [True, False])
@pytest.mark.parametrize("transposes", [(False, False), (True, True)])
@pytest.mark.parametrize("shapes", [((6, 1, 700), (6, 700, 300)), ((6, 300, 700), (700, 1))])
def test_a_batch_of_products_of_one_row_or_column_gives_the_eager_batchs_bits(
    shapes, transposes, installed, monkeypatch
):
    """A batch of products of one row, or of one column, is gemv's on each, eagerly (the
    installed kernels' parts) and compiled, by the installed kernels' parts (the same bits)
    or, where a module cannot call them, by its own loop (templates/matmul.c.j2), gemv on
    all the rows at once: float32's rounding apart, as the order in which gemv sums a row
    may depend on the rows of the call (OpenBLAS's AVX-512 kernels; 0.3.34's under the name
    Haswell on a Zen 4 CPU), so that no core's name says where the bits are the same."""
    ta, tb = transposes
    a, b = (rng.standard_normal(shape).astype(np.float32) for shape in shapes)
    stored = (
        (np.ascontiguousarray(np.swapaxes(x, -1, -2)) if t else x) for x, t in ((a, ta), (b, tb))
    )
    a, b = stored  # (gemv's order of terms follows how op(b) is stored: docs/threads.md)
    eager = tt.matmul(tt.constant(a), tt.constant(b), transpose_a=ta, transpose_b=tb).numpy()
    if not installed:
        monkeypatch.setattr(conv_kernels, "available", lambda: False)
    compiled = tt.function(
        lambda a, b: tt.matmul(a, b, transpose_a=ta, transpose_b=tb), backend="c"
    )(a, b).numpy()
    want = np.matmul(*(np.swapaxes(x, -1, -2) if t else x for x, t in ((a, ta), (b, tb))))
    np.testing.assert_allclose(eager, want, rtol=1e-4, atol=1e-4)
    if installed:
        assert compiled.tobytes() == eager.tobytes()
    else:
        scale = np.abs(eager).max()  # (sums of 700 terms: float32's rounding of the terms')
        np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize(
    "shapes, transposes",
    [(((512, 1), (512, 1)), (False, True)), (((1, 40), (3, 1, 30)), (True, False))],
)
def test_an_eager_outer_product_is_numpys_and_the_compiled_codes_bits(dtype, shapes, transposes):
    """A product over an inner dimension of 1 is a product per element (the GEMM's, and the
    compiled code's mul)."""
    a, b = ((rng.standard_normal(shape) * 7).astype(dtype) for shape in shapes)
    ta, tb = transposes
    eager = tt.matmul(tt.constant(a), tt.constant(b), transpose_a=ta, transpose_b=tb).numpy()
    left, right = (np.swapaxes(x, -1, -2) if t else x for x, t in ((a, ta), (b, tb)))
    assert eager.tobytes() == np.matmul(left, right).tobytes()
    compiled = tt.function(
        lambda a, b: tt.matmul(a, b, transpose_a=ta, transpose_b=tb), backend="c"
    )(a, b)
    assert compiled.numpy().tobytes() == eager.tobytes()


def test_a_product_whose_sizes_overflow_the_blass_int_is_left_to_numpy():
    """scipy-openblas32's sizes are 32-bit: 2^31 rows (a broadcast view, no memory) go to
    numpy's product rather than wrap around."""
    rows = np.broadcast_to(np.float32(1), (array_blas.INT_MAX + 1, 1))
    assert array_blas.product(rows, np.ones((1, 4), np.float32), False, False) is None
    batch = np.broadcast_to(np.float32(1), (2, array_blas.INT_MAX + 1, 1))
    assert array_blas.product(batch, np.ones((1, 4), np.float32), False, False) is None


def _calls(source, names):
    """Whether a module's C calls one of the BLAS functions `names`, itself or through the
    installed kernels, which it passes their addresses (codegen/conv_kernels.py)."""
    return any(
        (name + "(" in line or "&" + name in line) and "void" not in line
        for line in source.splitlines()
        for name in names
    )


def test_compiled_products_and_solves_past_a_c_int_use_the_plain_loops():
    """A module's BLAS calls take C ints: sizes past 2^31 (traced from specs, nothing
    allocated) are rendered as the plain loops, whose indices are int64."""
    huge = array_blas.INT_MAX + 1
    product = tt.function(lambda a, b: tt.matmul(a, b))
    spec = tt.TensorSpec
    source = product.get_concrete_function(
        spec((huge, 2), tt.float32), spec((2, 4), tt.float32)
    ).c_source()
    assert not _calls(source, ["scipy_cblas_sgemm"])
    solve = tt.function(lambda a, b: tt.linalg.triangular_solve(a, b))
    source = solve.get_concrete_function(
        spec((2, 2), tt.float32), spec((2, huge), tt.float32)
    ).c_source()
    assert not _calls(source, ["scipy_cblas_strsm", "scipy_cblas_strsv"])
    if build.blas() is not None:  # and where they fit, the BLAS
        source = solve.get_concrete_function(
            spec((2, 2), tt.float32), spec((2, 3), tt.float32)
        ).c_source()
        assert _calls(source, ["scipy_cblas_strsm"])


ON_ONE_THREAD = """
import json
import numpy as np
import tracer as tt
from codegen import array_blas, blas_library, blocked_products

blocked_products.most_macs = lambda: blocked_products.MOST_MACS  # the BLAS past it

rng = np.random.default_rng(3)
found = {}
# float64 1000 x 333 x 777: two parts of rows give other bits than one call; both past the
# installed small products (codegen/blocked_products.py's MOST_MACS)
for (m, k, n), dtype, names in [
    ((1000, 333, 777), np.float64, ("dgemm", "double")),
    ((512, 784, 512), np.float32, ("sgemm", "float")),
]:
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    eager = tt.matmul(tt.constant(a), tt.constant(b)).numpy()
    compiled = tt.function(lambda a, b: tt.matmul(a, b), backend="c")(a, b).numpy()
    one_call = np.empty((m, n), dtype)
    at = [blas_library.pointer(x.ctypes.data) for x in (a, b, one_call)]
    array_blas._gemm(*names)(101, 111, 111, m, n, k, 1, at[0], k, at[1], n, 0, at[2], n)
    found[str((m, k, n))] = [
        eager.tobytes() == one_call.tobytes(),
        compiled.tobytes() == one_call.tobytes(),
        float(np.abs(eager - a.astype(np.float64) @ b).max() / np.abs(a @ b).max()),
    ]
print(json.dumps(found))
"""


def test_on_one_thread_a_large_product_is_one_call_of_the_blas(tmp_path):
    """With a pool of one thread, eager and compiled products too large for one call on a
    pool of two are one call of the BLAS (parts would each pack the operand they share
    again, with no thread to share the work), and give that call's bits."""
    if array_blas._gemm("sgemm", "float") is None:
        pytest.skip("no BLAS here")
    environment = dict(os.environ, OMP_NUM_THREADS="1", TRACER_CACHE_DIR=str(tmp_path))
    completed = subprocess.run(
        [sys.executable, "-c", ON_ONE_THREAD], env=environment, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    for shape, (eager_is_one_call, compiled_is_one_call, error) in json.loads(
        completed.stdout
    ).items():
        assert eager_is_one_call and compiled_is_one_call, shape
        assert error < 1e-5, shape


def test_a_product_in_a_loops_body_links_the_blas(blas_past_most_macs):
    """A module whose only product is in a loop's body links the BLAS as any other does (it
    wrote plain loops): the eager products' bits, step after step."""
    w = tt.constant(rng.standard_normal((600, 600)) / 25)
    x = tt.constant(rng.standard_normal((600, 600)))

    def steps(x):
        for _ in tt.range(2):
            x = tt.matmul(x, w)
        return x

    compiled = tt.function(steps, backend="c")
    assert "scipy_cblas_dgemm" in compiled.get_concrete_function(x).c_source()
    eager = tt.matmul(tt.matmul(x, w), w)
    np.testing.assert_array_equal(compiled(x).numpy(), eager.numpy())
