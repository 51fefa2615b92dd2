"""Products and batches of small ones through the installed kernel `blocked_products`
(runtime/blocked_products_typed.h; codegen/blocked_products.py's rule): eager products against
float64 numpy with every transpose, operands read through their strides (a head split off
by a transpose, every other column, reversed rows, columns and batches, a broadcast batch),
depths past one pass, rows and columns that fill no whole block; gradients through a tape;
the same bits on one thread and on two; compiled modules that call the same kernel and give
the eager bits; a single mid-sized product, eager and compiled; and what stays with the other
routes."""

import numpy as np
import pytest

import tracer as tt
from codegen import array_blas, blas_library, blocked_products, conv_kernels
from codegen.loops import PARALLEL_MIN
from runtime import installed_kernels
from tests.thread_counts import results_on_one_thread_and_two
from tracer.ops.linalg_ops import GEMM_PARALLEL_MIN

rng = np.random.default_rng(20261201)

needs_kernel = pytest.mark.skipif(
    installed_kernels.function("blocked_products_f32", "void *") is None,
    reason="the installed blocked products need AVX-512",
)

# (batch, m, n, k): an attention's (heads of 64 x 32), ragged blocks, two passes of depth
SIZES = [
    ((8, 4), 64, 64, 32),
    ((8, 4), 64, 32, 64),
    ((3,), 5, 7, 3),
    ((2, 3), 17, 49, 130),
    ((2,), 9, 100, 257),
    ((4,), 1, 1, 1),
    ((3,), 33, 15, 1),
]


def _operand(batch, rows, columns, dtype, layout):
    if layout == "C":
        return rng.standard_normal((*batch, rows, columns)).astype(dtype)
    if layout == "transposed":  # the last two axes swapped: column-major matrices
        return np.swapaxes(rng.standard_normal((*batch, columns, rows)).astype(dtype), -1, -2)
    if layout == "strided":  # every other column, the batch reversed
        wide = rng.standard_normal((*batch, rows, 2 * columns)).astype(dtype)[..., ::2]
        return wide[::-1]
    if layout == "reversed":  # the rows and the columns in reverse: negative steps
        return rng.standard_normal((*batch, rows, columns)).astype(dtype)[..., ::-1, ::-1]
    if layout == "heads":  # (batch..., rows, heads, columns) with the heads moved forward
        *outer, heads = batch
        x = rng.standard_normal((*outer, rows, heads, columns)).astype(dtype)
        return np.swapaxes(x, -3, -2)
    assert layout == "broadcast"  # one matrix for the whole batch
    return rng.standard_normal((*(1,) * len(batch), rows, columns)).astype(dtype)


@needs_kernel
@pytest.mark.parametrize("layout", ["C", "transposed", "strided", "reversed", "heads", "broadcast"])
@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", SIZES)
def test_a_batch_of_blocked_products_matches_numpy(size, dtype, transposes, layout):
    batch, m, n, k = size
    ta, tb = transposes
    a = _operand(batch, *((k, m) if ta else (m, k)), dtype, layout)
    b = _operand(
        batch, *((n, k) if tb else (k, n)), dtype, "C" if layout == "broadcast" else layout
    )
    assert array_blas._blocked_products(
        a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, ta, tb
    ), "the installed kernel takes it"
    got = array_blas.product(a, b, ta, tb)
    op_a = np.swapaxes(a, -1, -2) if ta else a
    op_b = np.swapaxes(b, -1, -2) if tb else b
    want = np.matmul(op_a.astype(np.float64), op_b.astype(np.float64))
    assert got.dtype == dtype and got.shape == (*batch, m, n) and got.flags.c_contiguous
    # each element a sum of k products: float32's rounding of each partial sum
    scale = np.matmul(np.abs(op_a).astype(np.float64), np.abs(op_b).astype(np.float64))
    epsilon = np.finfo(dtype).eps
    assert np.all(np.abs(got - want) <= 2 * k * epsilon * scale + np.finfo(dtype).tiny)


@needs_kernel
def test_a_batch_of_blocked_products_through_a_tape_has_numpys_gradients():
    q = rng.standard_normal((2, 3, 16, 8))
    k = rng.standard_normal((2, 3, 16, 8))
    x, y = tt.constant(q), tt.constant(k)
    with tt.GradientTape() as tape:
        tape.watch([x, y])
        scores = tt.matmul(x, y, transpose_b=True)
        loss = tt.reduce_sum(scores * scores)
    dx, dy = tape.gradient(loss, [x, y])
    s = q @ np.swapaxes(k, -1, -2)
    np.testing.assert_allclose(scores.numpy(), s, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(dx.numpy(), 2 * s @ k, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dy.numpy(), 2 * np.swapaxes(s, -1, -2) @ q, rtol=1e-12, atol=1e-12)


@needs_kernel
def test_blocked_products_have_the_same_bits_on_one_thread_and_on_two(tmp_path):
    script = (
        "import json, sys, numpy as np\n"
        "from codegen import array_blas\n"
        "rng = np.random.default_rng(7)\n"
        "a = np.swapaxes(rng.standard_normal((8, 64, 4, 32)).astype(np.float32), 1, 2)\n"
        "b = rng.standard_normal((8, 4, 64, 32)).astype(np.float32)\n"
        "out = array_blas.product(a, b, False, True)\n"
        "left, right = (rng.standard_normal(s).astype(np.float32) for s in ((64, 300), (300, 600)))\n"
        "cut = array_blas.product(left, right, False, False)  # in parts by columns\n"
        "print(json.dumps([x.view(np.uint32).ravel().tolist() for x in (out, cut)]))\n"
    )
    one, two = results_on_one_thread_and_two(script)
    assert one == two


@pytest.mark.parametrize(
    "a_shape, b_shape, dtype",
    [
        ((64, 64), (64, 64), np.float32),  # one product of 2^18 multiply-adds: numpy's
        ((8, 4, 64, 64), (8, 4, 64, 32), np.int64),
        ((2, 8, 8), (3, 8, 8), np.float32),  # batches that do not broadcast
        ((2, 0, 8), (2, 8, 8), np.float32),  # an empty result
    ],
)
def test_other_batches_take_the_other_routes(a_shape, b_shape, dtype):
    a, b = np.ones(a_shape, dtype), np.ones(b_shape, dtype)
    blocked = array_blas._blocked_products(
        a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, False, False
    )
    assert blocked is None


@needs_kernel
def test_past_most_macs_products_are_the_blass_where_its_kernels_are_avx512(monkeypatch):
    """Past 2^27 multiply-adds a batch is the BLAS's parts where the BLAS runs AVX-512
    kernels of its own, and stays the kernel's where it runs narrower ones or is missing."""
    a, b = np.ones((2, 512, 512), np.float32), np.ones((2, 512, 513), np.float32)
    for core, taken in (("SkylakeX", False), ("Haswell", True), (None, True)):
        monkeypatch.setattr(blas_library, "core", lambda: core)
        blocked_products.most_macs.cache_clear()
        array_blas._blocked_products.cache_clear()
        blocked = array_blas._blocked_products(
            a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, False, False
        )
        assert (blocked is not None) == taken, core
    blocked_products.most_macs.cache_clear()
    array_blas._blocked_products.cache_clear()


def test_a_column_step_past_an_int32_gathers_reach_is_left_to_the_other_routes():
    a = np.ones((2, 4, 4), np.float32)
    b = np.lib.stride_tricks.as_strided(  # columns 2^24 elements apart: a view, no memory
        np.ones(1, np.float32), shape=(2, 4, 4), strides=(0, 4, 4 << 24)
    )
    blocked = array_blas._blocked_products(
        a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, False, False
    )
    assert blocked is None


@needs_kernel
@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True)])
def test_a_compiled_batch_calls_the_same_kernel_and_gives_the_eager_bits(transposes):
    ta, tb = transposes
    a = rng.standard_normal((1, 3, 48, 24) if ta else (1, 3, 24, 48)).astype(np.float32)
    b = rng.standard_normal((5, 1, 40, 48) if tb else (5, 1, 48, 40)).astype(np.float32)

    def product(a, b):
        return tt.matmul(a, b, transpose_a=ta, transpose_b=tb)

    eager = product(tt.constant(a), tt.constant(b)).numpy()
    function = tt.function(product, backend="c")
    compiled = function(a, b).numpy()
    assert "blocked_products_f32" in function.get_concrete_function(a, b).c_source()
    assert eager.shape == (5, 3, 24, 40) and eager.tobytes() == compiled.tobytes()


@needs_kernel
@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "m, k, n",
    # 9 M multiply-adds: parts on the threads, by rows; 11.5 M by columns, in parts whose
    # vectors do not make whole slivers of three
    [(200, 300, 150), (64, 300, 600)],
)
def test_a_single_product_past_numpys_threading_is_the_kernels_eager_and_compiled(
    m, k, n, dtype, transposes
):
    ta, tb = transposes
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)

    def product(a, b):
        return tt.matmul(a, b, transpose_a=ta, transpose_b=tb)

    assert array_blas._blocked_products(
        a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, ta, tb
    ), "the installed kernel takes it"
    eager = product(tt.constant(a), tt.constant(b)).numpy()
    function = tt.function(product, backend="c")
    compiled = function(a, b).numpy()
    assert f"blocked_products_{'f32' if dtype == np.float32 else 'f64'}" in (
        function.get_concrete_function(a, b).c_source()
    )
    assert eager.tobytes() == compiled.tobytes()
    _assert_within_rounding(eager, a.T if ta else a, b.T if tb else b)


@needs_kernel
@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "m, k, n",
    [
        (2, 300, 500),  # 1,000 outputs: the BLAS's
        (3, 300, 500),  # 1,500 outputs, 450 K multiply-adds: the kernel's
        (40, 6, 64),  # 15 K multiply-adds: the BLAS's
        (128, 784, 512),  # B9u's first product: the kernel's, on the threads
        (600, 500, 500),  # 150 M multiply-adds, past the kernel's: the BLAS's parts
    ],
)
def test_a_product_of_sizes_known_when_the_module_runs_gives_the_bits_of_one_built_for_them(
    m, k, n, dtype, transposes
):
    """A product whose sizes are `TensorSpec(None)` dimensions decides by the same rule as a
    module built for its sizes (codegen/blocked_products.py's run_time_rule against
    `geometry`) which kernel computes it, so both give the same bits on either side of each
    of the rule's bounds."""
    ta, tb = transposes
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)

    def product(a, b):
        return tt.matmul(a, b, transpose_a=ta, transpose_b=tb)

    specs = [  # the rows and columns of the result unknown, the depth known
        tt.TensorSpec([k, None] if ta else [None, k], dtype),
        tt.TensorSpec([None, k] if tb else [k, None], dtype),
    ]
    dynamic = tt.function(product, input_signature=specs, backend="c")
    source = dynamic.get_concrete_function(*specs).c_source()
    assert f"blocked_products_{'f32' if dtype == np.float32 else 'f64'}" in source
    fixed = tt.function(product, backend="c")
    got, want = dynamic(a, b).numpy(), fixed(a, b).numpy()
    assert got.tobytes() == want.tobytes()
    _assert_within_rounding(got, a.T if ta else a, b.T if tb else b)


@needs_kernel
@pytest.mark.parametrize("rows", [1, 3, 300])
def test_a_gram_matrix_of_an_unknown_depth_gives_the_bits_of_one_built_for_it(rows):
    """x^T x of 128 columns over rows known when the module runs: one row is an outer product
    of 16,384 outputs (the kernel's from that many), three rows 49 K multiply-adds (the
    BLAS's), 300 rows 4.9 M (the kernel's, on the threads)."""
    x = rng.standard_normal((rows, 128)).astype(np.float32)

    def gram(x):
        return tt.matmul(x, x, transpose_a=True)

    spec = tt.TensorSpec([None, 128])
    dynamic = tt.function(gram, input_signature=[spec], backend="c")
    assert "blocked_products_f32" in dynamic.get_concrete_function(spec).c_source()
    got = dynamic(x).numpy()
    assert got.tobytes() == tt.function(gram, backend="c")(x).numpy().tobytes()
    _assert_within_rounding(got, x.T, x)


def test_products_of_sizes_known_when_the_module_runs_that_the_kernel_never_takes_keep_theirs(
    tmp_path,
):
    """A batch and integers have no call of the table; nor has exported C (plain C99)."""
    table = f"{installed_kernels.VARIABLE}["
    spec = tt.TensorSpec([None, 4, 4])
    batch = tt.function(tt.matmul, input_signature=[spec, spec], backend="c")
    assert table not in batch.get_concrete_function(spec, spec).c_source()
    ints = tt.TensorSpec([None, 4], tt.int32)
    integers = tt.function(tt.matmul, input_signature=[ints, tt.TensorSpec([4, 3], tt.int32)])
    concrete = integers.get_concrete_function(ints, tt.TensorSpec([4, 3], tt.int32))
    assert table not in concrete.c_source()
    np.testing.assert_array_equal(
        integers(np.ones((5, 4), np.int32), np.ones((4, 3), np.int32)).numpy(), np.full((5, 3), 4)
    )
    rows = tt.TensorSpec([None, 784])
    weights = tt.TensorSpec([784, 512])
    floats = tt.function(tt.matmul, input_signature=[rows, weights])
    assert table in floats.get_concrete_function(rows, weights).c_source()
    floats.get_concrete_function(rows, weights).export_c(str(tmp_path), prefix="product")
    exported = "".join(p.read_text() for p in tmp_path.iterdir() if p.is_file())
    assert "gemm" in exported and table not in exported


def _assert_within_rounding(got, op_a, op_b):
    """`got` is op_a @ op_b to within the rounding of a sum of k products: 2 k eps times the
    product of the magnitudes, element by element."""
    exact = op_a.astype(np.float64) @ op_b.astype(np.float64)
    scale = np.abs(op_a).astype(np.float64) @ np.abs(op_b).astype(np.float64)
    k = op_a.shape[-1]
    assert np.all(np.abs(got - exact) <= 2 * k * np.finfo(got.dtype).eps * scale)


def test_compiled_products_share_the_threads_from_where_the_modules_blas_parts_do():
    assert conv_kernels.GEMM_PARALLEL_MIN == GEMM_PARALLEL_MIN


def test_outer_products_share_the_threads_from_where_elementwise_loops_do():
    assert blocked_products.OUTER_THREADS_FROM == PARALLEL_MIN


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "a_shape, b_shape, ta, tb, taken",
    [
        ((512, 1), (1, 384), False, False, True),
        ((300, 1), (200, 1), False, True, True),
        ((1, 100), (1, 100), True, False, False),  # 10^4 outputs: numpy's
    ],
)
def test_an_outer_product_is_the_kernels_from_enough_outputs(
    a_shape, b_shape, ta, tb, taken, dtype
):
    """A depth of one: each output one rounded product, numpy's bits, on the threads from
    OUTER_THREADS_FROM outputs; compiled modules fuse it into a broadcast product, with the
    same bits."""
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in (a_shape, b_shape))

    def product(a, b):
        return tt.matmul(a, b, transpose_a=ta, transpose_b=tb)

    blocked = array_blas._blocked_products(
        a.dtype, b.dtype, a.shape, b.shape, a.strides, b.strides, ta, tb
    )
    assert (blocked is not None) == taken
    eager = product(tt.constant(a), tt.constant(b)).numpy()
    want = (a.T if ta else a) @ (b.T if tb else b)
    assert eager.tobytes() == want.tobytes()
    assert tt.function(product, backend="c")(a, b).numpy().tobytes() == eager.tobytes()


@needs_kernel
def test_a_module_that_calls_only_the_tables_products_is_not_built_again(tmp_path, monkeypatch):
    """A module of its own kernels calls the table's products too: building it would make
    the same module again, in a thread that holds a core while the first calls run."""
    from tracer.executables import Tiered

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))  # nothing built, no plan stored
    generator = np.random.default_rng(11)  # (the module's draws depend on the tests before)
    a = generator.standard_normal((4, 64, 32)).astype(np.float32)
    b = generator.standard_normal((4, 32, 48)).astype(np.float32)
    function = tt.function(lambda a, b: tt.tanh(tt.matmul(a, b)), backend="c")
    executable = function.get_concrete_function(a, b)._executable
    assert "blocked_products_f32" in executable.c_source
    assert not isinstance(executable, Tiered)
    exact = np.tanh(a.astype(np.float64) @ b.astype(np.float64))  # float32 sums of 32 terms
    np.testing.assert_allclose(function(a, b).numpy(), exact, rtol=1e-5, atol=1e-5)
