"""A large product of a short depth computed by the kernel that reads it, a block of rows at a
time (tracer/passes/row_products.py, codegen/row_products.py): the product's values are those
of the product stored whole, through each of the routines a product takes (the installed
blocked products, the BLAS, plain loops), and a kernel that reads the product any other way
keeps it stored."""

import numpy as np
import pytest

import tracer as tt
from codegen import build
from tracer.passes import row_products


def _distances(points, centroids, transpose_a=False, transpose_b=True):
    """k-means' squared distances, the product's operands transposed as asked."""
    p2 = tt.reduce_sum(points * points, axis=1)[:, None]
    c2 = tt.reduce_sum(centroids * centroids, axis=1)[None, :]
    a = tt.transpose(points) if transpose_a else points
    b = centroids if transpose_b else tt.transpose(centroids)
    return p2 + c2 - 2.0 * tt.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)


def _nearest(points, centroids, transpose_a=False, transpose_b=True):
    return tt.reduce_min(_distances(points, centroids, transpose_a, transpose_b), axis=1)


def _kernel(points, centroids):
    return tt.exp(-0.5 * _distances(points, centroids))


def _compiled(function, arguments, monkeypatch, tmp_path, taken, threads=0):
    """(the values, the optimized IR's text) of `function` compiled with products moved into
    their readers where `taken`, else never (each in a cache of its own: no stored plan), on
    `threads` threads (0: the default). A product stored whole is one GEMM call on one
    thread: its parts on several threads may start at rows that a GEMM's kernel of float32
    computes otherwise (codegen/row_products.py)."""
    with monkeypatch.context() as patch:
        if not taken:
            patch.setattr(row_products, "FEWEST_BYTES", float("inf"))
        patch.setenv("TRACER_CACHE_DIR", str(tmp_path / str(taken)))
        tt.config.threading.set_intra_op_parallelism_threads(threads)
        try:
            compiled = tt.function(function, backend="c")
            values = compiled(*arguments).numpy()
            ir = compiled.get_concrete_function(*arguments).ir("optimized")
        finally:
            tt.config.threading.set_intra_op_parallelism_threads(0)
    return values, ir


def _squared_distances(points, centroids):
    """Each point's squared distance to each centroid, in float64, as |p|^2 + |c|^2 - 2 p.c
    (the broadcast difference of 9000 points and 1100 centroids would take 1.6 GB)."""
    norms = (points**2).sum(1)[:, None] + (centroids**2).sum(1)[None, :]
    return norms - 2 * points @ centroids.T


def _operands(m, n, k, dtype, transpose_a):
    rng = np.random.default_rng(m + n + k)
    points = rng.standard_normal((m, k)).astype(dtype)
    centroids = rng.standard_normal((n, k)).astype(dtype)
    a = np.ascontiguousarray(points.T) if transpose_a else points
    return a, centroids, points


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "m, n, k, transpose_a, transpose_b",
    [
        (3000, 700, 16, False, True),  # the installed blocked products' (AVX-512)
        (9000, 1100, 20, False, True),
        (2050, 1030, 64, True, False),  # rows past the last whole block
    ],
)
@pytest.mark.parametrize("blas", [False, True])
def test_rows_of_a_product_hold_the_stored_products_values(
    request, monkeypatch, tmp_path, dtype, m, n, k, transpose_a, transpose_b, blas
):
    if blas:  # the two larger products past the installed kernel's multiply-adds: the BLAS's
        request.getfixturevalue("blas_past_most_macs")
    a, centroids, points = _operands(m, n, k, dtype, transpose_a)
    b = centroids if transpose_b else np.ascontiguousarray(centroids.T)

    def nearest(a, b):
        points = tt.transpose(a) if transpose_a else a
        centroids = b if transpose_b else tt.transpose(b)
        return _nearest(points, centroids, transpose_a, transpose_b)

    arguments = (tt.constant(a), tt.constant(b))
    taken, taken_ir = _compiled(nearest, arguments, monkeypatch, tmp_path, True)
    alone, _ = _compiled(nearest, arguments, monkeypatch, tmp_path, True, threads=1)
    stored, stored_ir = _compiled(nearest, arguments, monkeypatch, tmp_path, False, threads=1)
    assert "k_matmul_reduce_min" in taken_ir and "= matmul" not in taken_ir.split("k_matmul")[0]
    assert "k_matmul" not in stored_ir
    np.testing.assert_array_equal(taken, stored)
    np.testing.assert_array_equal(alone, stored)
    wide = points.astype(np.float64), centroids.astype(np.float64)
    expected = _squared_distances(*wide).min(1)
    tolerance = 1e-3 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(taken, expected, rtol=tolerance, atol=tolerance * k)


def test_an_elementwise_reader_of_a_product_computes_its_rows(monkeypatch, tmp_path):
    a, b, _ = _operands(2100, 600, 8, np.float64, False)
    arguments = (tt.constant(a), tt.constant(b))
    taken, taken_ir = _compiled(_kernel, arguments, monkeypatch, tmp_path, True)
    stored, _ = _compiled(_kernel, arguments, monkeypatch, tmp_path, False, threads=1)
    assert "k_matmul_exp" in taken_ir
    np.testing.assert_array_equal(taken, stored)
    expected = np.exp(-0.5 * ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(taken, expected, rtol=1e-12, atol=1e-12)


def test_without_a_blas_the_rows_are_plain_loops(monkeypatch, tmp_path, blas_past_most_macs):
    a, b, _ = _operands(9000, 1100, 20, np.float64, False)
    arguments = (tt.constant(a), tt.constant(b))
    monkeypatch.setattr(build, "blas", lambda: None)
    taken, taken_ir = _compiled(_nearest, arguments, monkeypatch, tmp_path, True)
    stored, _ = _compiled(_nearest, arguments, monkeypatch, tmp_path, False, threads=1)
    assert "k_matmul_reduce_min" in taken_ir
    np.testing.assert_array_equal(taken, stored)


def _column_minimum(points, centroids):
    return tt.reduce_min(_distances(points, centroids), axis=0)


def _read_twice(points, centroids):
    distances = _distances(points, centroids)
    return tt.reduce_min(distances, axis=1), tt.reduce_max(distances, axis=1)


def _read_across(points, centroids):
    product = tt.matmul(points, centroids, transpose_b=True)
    return tt.reduce_sum(product * tt.transpose(product), axis=1)


@pytest.mark.parametrize("function", [_column_minimum, _read_twice, _read_across])
def test_a_product_read_otherwise_than_by_its_rows_stays_stored(function):
    square = function is _read_across
    a, b, _ = _operands(1600, 1600 if square else 700, 16, np.float64, False)
    arguments = (tt.constant(a), tt.constant(b))
    compiled = tt.function(function, backend="c")
    ir = compiled.get_concrete_function(*arguments).ir("optimized")
    assert "k_matmul" not in ir
    got = compiled(*arguments)
    expected = function(*arguments)
    for g, e in zip(
        got if isinstance(got, tuple) else [got],
        expected if isinstance(expected, tuple) else [expected],
    ):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-9)


def test_the_interpreter_runs_a_kernel_that_holds_a_product():
    a, b, _ = _operands(3000, 700, 16, np.float64, False)
    arguments = (tt.constant(a), tt.constant(b))
    interpreted = tt.function(_nearest, backend="interpreter")
    assert "k_matmul_reduce_min" in interpreted.get_concrete_function(*arguments).ir("optimized")
    compiled = tt.function(_nearest, backend="c")
    np.testing.assert_allclose(
        interpreted(*arguments).numpy(), compiled(*arguments).numpy(), rtol=1e-12, atol=1e-12
    )


def test_exported_c_keeps_the_product_stored():
    from codegen.targets import EXPORTED_C

    assert not EXPORTED_C.cost_hints.products_in_rows()


@pytest.mark.parametrize("blas", [False, True])
def test_sizes_known_when_the_module_runs_take_blocks_of_rows(request, monkeypatch, blas):
    """Rows and columns unknown until the call (automatic dynamic shapes, then a signature of
    unknown dimensions): one module computes each size's rows in blocks, a block or a part
    of one for a small size, none for no rows; the values the product stored whole gives."""
    if blas:  # past the installed kernel's multiply-adds at its run-time rule: the BLAS's
        request.getfixturevalue("blas_past_most_macs")
    compiled = tt.function(_nearest, backend="c")
    sizes = [(300, 50), (5000, 1300), (9000, 1100), (7, 9)]
    for m, n in sizes:
        a, b, _ = _operands(m, n, 16, np.float64, False)
        got = compiled(tt.constant(a), tt.constant(b)).numpy()
        d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
        np.testing.assert_allclose(got, d.min(1), rtol=1e-12, atol=1e-10)
    ir = compiled.get_concrete_function(tt.constant(a), tt.constant(b)).ir("optimized")
    assert "k_matmul_reduce_min" in ir and "d0" in ir
    spec = tt.TensorSpec((None, 16), tt.float64)
    signed = tt.function(_nearest, input_signature=[spec, spec], backend="c")
    for m, n in [*sizes, (0, 5), (1, 40), (30, 1)]:  # (one row, one column: gemv's)
        a, b, _ = _operands(m, n, 16, np.float64, False)
        got = signed(tt.constant(a), tt.constant(b)).numpy()
        assert got.shape == (m,)
        if m:
            d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
            np.testing.assert_allclose(got, d.min(1), rtol=1e-12, atol=1e-10)


def test_exported_c_stores_a_product_its_reader_computed_in_the_c_module(tmp_path):
    """Exported C is written from the C module's graph: a kernel that computes its product
    there reads it stored again, and the program's values are the function's."""
    import os

    from tests import exported_c

    spec = tt.TensorSpec((None, 16), tt.float64)
    calls, wanted = [], []
    for m in (50, 130):  # (one unknown size: axis 0 of both arguments)
        a, b, _ = _operands(m, m, 16, np.float64, False)
        want = _nearest(tt.constant(a), tt.constant(b)).numpy()
        calls.append(exported_c.Call("nearest", [a, b], [want], dims=[m]))
        wanted.append(want)
    tt.export_c(tt.function(_nearest), [spec, spec], str(tmp_path), prefix="nearest")
    with open(tmp_path / "nearest.c") as handle:
        source = handle.read()
    assert "matmul" in source and "row_first" not in source
    main = os.path.join(str(tmp_path), "main.c")
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("nearest", calls, (130,)))
    program = exported_c.build(str(tmp_path), "nearest", [*exported_c.STRICT, "-O2"], [main])
    for want, got in zip(wanted, exported_c.run(program, calls)):
        np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=1e-10)
