"""The convolution, depthwise convolution and pooling kernels installed with tracer
(runtime/conv_kernels.c) give the bits of the kernels a module compiles from the templates,
for the geometries they serve:
strides, dilations, padding, tails of output positions and of channels, bias and relu,
float32 and float64, each pooling scatter (tiles, disjoint, overlapping windows), NaN and
infinities; and where they serve nothing, the module compiles its own."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import tracer as tt
from codegen import array_windows, conv_kernels
from codegen.compile import compile_graph
from tracer.executables import Tiered
from tracer.ops import window_ops

pytestmark = pytest.mark.skipif(
    not conv_kernels.available(), reason="the installed kernels were not built here"
)
RNG = np.random.default_rng(7)


def _cnn(strides, padding, dilations, pool, pool_strides, pool_padding, bias):
    """value and gradients of a convolution, relu and max pooling, for the image and kernel"""

    def run(image, kernel, b):
        sources = [image, kernel, b] if bias else [image, kernel]
        with tt.GradientTape() as tape:
            tape.watch(sources)
            features = tt.nn.conv2d(image, kernel, strides, padding, dilations=dilations)
            features = tt.nn.relu(features + b if bias else features)
            pooled = tt.nn.max_pool2d(features, pool, pool_strides, pool_padding)
            y = tt.reduce_sum(pooled * pooled)
        return [y, *tape.gradient(y, sources)]

    return run


def _depthwise(strides, padding, dilations):
    """value and gradients of a depthwise convolution and relu, for the image and filters"""

    def run(image, filters):
        with tt.GradientTape() as tape:
            tape.watch([image, filters])
            features = tt.nn.depthwise_conv2d(image, filters, strides, padding, dilations=dilations)
            y = tt.reduce_sum(tt.nn.relu(features) ** 2)
        return [y, *tape.gradient(y, [image, filters])]

    return run


CASES = {
    # 5 output channels (no lane block of the table's sizes), 9 positions (a tail), disjoint
    "same, float32, odd sizes": (
        _cnn(1, "SAME", 1, 2, 2, "VALID", True),
        [(2, 7, 9, 3), (3, 3, 3, 5), (5,)],
        np.float32,
    ),
    # 40 channels: a full block and a quarter one in float64; overlapping pooling windows
    "valid, stride 2, float64": (
        _cnn(2, "VALID", 1, 3, 1, "SAME", False),
        [(1, 11, 12, 2), (3, 3, 2, 40), (40,)],
        np.float64,
    ),
    # dilated, 64 channels, pooling windows that tile the image
    "dilated, float32, tiles": (
        _cnn(1, "SAME", 2, 2, 2, "VALID", True),
        [(2, 8, 8, 6), (3, 3, 6, 64), (64,)],
        np.float32,
    ),
    # the depthwise kernels: 20 channels (a block of 16 and a tail), 7 positions (a tail)
    "depthwise same, float32": (
        _depthwise([1, 1, 1, 1], "SAME", [2, 1]),
        [(2, 6, 7, 20), (3, 3, 20, 1)],
        np.float32,
    ),
    # strided input gradient, 9 float64 channels (a block of 8 and one)
    "depthwise valid, stride 2, float64": (
        _depthwise([1, 2, 2, 1], "VALID", None),
        [(1, 9, 11, 9), (3, 2, 9, 1)],
        np.float64,
    ),
}


def _with_and_without(function, arrays):
    """The outputs of `function`'s optimized graph compiled with the installed kernels and
    with its own, on `arrays`."""
    traced = tt.function(function, backend="c").get_concrete_function(*map(tt.constant, arrays))
    graph = traced.stages.final
    installed = compile_graph(graph, "installed")
    own = compile_graph(graph, "own", own_kernels=True)
    assert calls_table_kernel(installed.c_source)
    assert not calls_table_kernel(own.c_source)
    return installed.run(list(arrays)), own.run(list(arrays))


def calls_table_kernel(source):
    """Whether a module's C calls one of the table's kernels by templates/installed_kernel.c.j2
    (a convolution's, pooling's, or the kernels around them): the products' and solves'
    parts it calls too are in every module (codegen/conv_kernels.py, `_gemm_parts`)."""
    return ", installed with tracer (runtime/conv_kernels.c" in source


def _assert_same_bits(got, want):
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_installed_kernels_give_the_templates_bits(name):
    function, shapes, dtype = CASES[name]
    arrays = [RNG.standard_normal(shape).astype(dtype) for shape in shapes]
    installed, own = _with_and_without(function, arrays)
    _assert_same_bits(installed, own)
    eager = [r.numpy() for r in function(*(tt.constant(a) for a in arrays))]
    for a, b in zip(installed, eager, strict=True):  # and the eager numpy kernels' values
        scale = np.max(np.abs(b))
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance * scale)


def test_pooling_with_nan_and_infinities_gives_the_templates_bits():
    image = RNG.standard_normal((2, 6, 6, 3))
    image[0, 1, 1, 0] = np.nan
    image[1, 2, 3, 1] = np.inf
    image[1, 4, 4, 2] = -np.inf

    def pool_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            pooled = tt.nn.max_pool2d(x, 3, 2, "SAME")
            weights = np.arange(math.prod(pooled.shape), dtype=np.float64)
            y = tt.reduce_sum(pooled * weights.reshape(pooled.shape))
        return pooled, tape.gradient(y, x)

    installed, own = _with_and_without(pool_and_gradient, [image])
    _assert_same_bits(installed, own)
    assert np.isnan(installed[0][0, 0, 0, 0])


# (image shape, window, stride, padding): windows inside the image (a module's own kernel
# writes their taps out) and windows at a SAME padding's edge (its loop over the taps), with
# channels that fill no whole vector
OVERLAPPING_POOLS = [
    ((2, 9, 9, 5), 3, 2, "VALID"),
    ((2, 10, 11, 33), 3, 2, "SAME"),
    ((1, 7, 8, 18), 3, 1, "SAME"),
    ((1, 12, 12, 4), 5, 2, "SAME"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, window, stride, padding", OVERLAPPING_POOLS)
def test_overlapping_pooling_windows_add_terms_in_the_numpy_kernels_order(
    dtype, shape, window, stride, padding, monkeypatch
):
    """An element that is the largest of several overlapping windows gets a term from each,
    which the installed kernels and a module's own add in the numpy kernel's order (the taps'
    row-major order: the windows that read it from the last), each window's term going to
    its first largest element (ties and a NaN), so both give the numpy kernel's bits."""
    image = RNG.integers(-3, 4, shape).astype(dtype)  # many ties
    image[0, 2, 2, :] = 10.0  # the largest of every window that reads it
    image[-1, 3, 4, 1] = np.nan
    pooled_shape = tt.nn.max_pool2d(tt.constant(image), window, stride, padding).shape
    weights = RNG.standard_normal(pooled_shape).astype(dtype)

    def pool_gradient(x, w):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.nn.max_pool2d(x, window, stride, padding) * w)
        return [tape.gradient(y, x)]

    installed, own = _with_and_without(pool_gradient, [image, weights])
    monkeypatch.setattr(array_windows, "scatter", lambda *arguments: None)
    sizes, out = shape[1:3], tuple(pooled_shape[1:3])
    before = tuple(
        max((o - 1) * stride + window - n, 0) // 2 if padding == "SAME" else 0
        for o, n in zip(out, sizes)
    )
    attrs = window_ops.window_attrs(sizes, out, (window,) * 2, (stride,) * 2, (1, 1), before)
    numpy_kernel = window_ops._scatter_kernel(image, weights, **attrs)
    _assert_same_bits(installed, [numpy_kernel])
    _assert_same_bits(own, [numpy_kernel])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("height, width", [(6, 8), (7, 9), (64, 67)])  # the last: threads
def test_two_by_two_pooling_takes_each_windows_first_largest(dtype, height, width):
    """2 x 2 windows two apart (their own branch-free kernels), tiling the image or leaving
    its odd row and column out: ties, NaN, signed zeros and infinities, in the installed
    kernels, a module's own and eagerly, against numpy's argmax over each window (the first
    largest, the first NaN)."""
    image = RNG.standard_normal((2, height, width, 19)).astype(dtype)  # 19: a vector's tail
    image[0, 0, 0, 0] = image[0, 0, 1, 0] = image[0, 1, 1, 0] = 3.0  # a tie: the first
    image[0, 2, 3, 1], image[0, 3, 2, 1] = np.nan, np.nan  # two NaNs: the first
    image[1, 0:2, 0:2, 2] = [[-0.0, 0.0], [0.0, -0.0]]  # zeros: the first, -0
    image[1, 2, 2, 3], image[1, 3, 3, 3] = np.inf, np.inf
    image[1, 4:6, 4:6, 4] = -np.inf
    image[:, -1, -1, 5] = 1e30  # in no window where the image is odd
    rows, columns = height // 2, width // 2
    pooled_shape = (2, rows, columns, 19)
    weights = np.arange(1, 1 + math.prod(pooled_shape), dtype=dtype).reshape(pooled_shape)
    weights[1, 1, 1, 7] = -0.0  # its term is 0 + -0: +0, as the sums give

    def pool_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            pooled = tt.nn.max_pool2d(x, 2, 2, "VALID")
            y = tt.reduce_sum(pooled * weights)
        return pooled, tape.gradient(y, x)

    inside = image[:, : rows * 2, : columns * 2]
    windows = inside.reshape(2, rows, 2, columns, 2, 19).transpose(0, 1, 3, 5, 2, 4)
    windows = windows.reshape(-1, 4)
    first = np.argmax(windows, axis=1)  # numpy's argmax: the first NaN, else the first largest
    want_pooled = windows[np.arange(len(first)), first].reshape(pooled_shape)
    spread = np.zeros_like(windows)
    spread[np.arange(len(first)), first] = 0 + weights.reshape(-1)
    want_gradient = np.zeros_like(image)
    want_gradient[:, : rows * 2, : columns * 2] = (
        spread.reshape(2, rows, columns, 19, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(inside.shape)
    )
    want = [want_pooled, want_gradient]
    installed, own = _with_and_without(pool_and_gradient, [image])
    eager = [r.numpy() for r in pool_and_gradient(tt.constant(image))]
    for got in (installed, own, eager):
        _assert_same_bits(got, want)
    assert np.signbit(installed[0][1, 0, 0, 2]) and installed[1][0, 0, 0, 0] == weights[0, 0, 0, 0]


def _source(function, *arrays):
    inputs = [tt.constant(a) for a in arrays]
    compiled = tt.function(function, backend="c")
    compiled(*inputs)
    return compiled.get_concrete_function(*inputs)._executable.c_source


def test_a_node_the_table_does_not_serve_keeps_its_template():
    x = RNG.standard_normal((1, 5, 5, 2)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 2, 4)).astype(np.float32)
    # tanh is applied by the product as it stores each output: the table applies relu alone
    source = _source(lambda x, w: tt.tanh(tt.nn.conv2d(x, w, 1, "SAME")), x, w)
    assert "patch_product" in source and "installed with tracer" not in source
    half = RNG.standard_normal((1, 4, 4, 2)).astype(np.float16)
    source = _source(lambda x: tt.nn.max_pool2d(x, 2, 2, "VALID"), half)
    assert "window_max_gather" in source and "installed with tracer" not in source


def test_a_function_runs_the_installed_kernels_until_its_own_are_built(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))  # nothing built, no plan stored
    function, shapes, dtype = CASES["same, float32, odd sizes"]
    inputs = [tt.constant(RNG.standard_normal(shape).astype(dtype)) for shape in shapes]
    compiled = tt.function(function, backend="c")
    tiered = compiled.get_concrete_function(*inputs)._executable
    assert isinstance(tiered, Tiered) and tiered.building
    # the second module's compiler waits for the first call, whose cores it would take
    assert not tiered._thread.is_alive()
    first = [r.numpy() for r in compiled(*inputs)]
    tiered.wait()
    assert not calls_table_kernel(tiered.current.c_source)  # its own kernels, now
    _assert_same_bits([r.numpy() for r in compiled(*inputs)], first)
    # the plan stored for a later process is the module with its own kernels
    later = tt.function(function, backend="c")
    _assert_same_bits([r.numpy() for r in later(*inputs)], first)
    assert not isinstance(later.get_concrete_function(*inputs)._executable, Tiered)


def _beside_a_convolution(function):
    """`function` of arrays, in a module that also convolves (only such a module takes the
    table's array kernels): its values, then a pooled convolution's sum."""

    def run(image, *arrays):
        kernel = tt.ones((3, 3, image.shape[3], 2), image.dtype)
        features = tt.nn.max_pool2d(
            tt.nn.relu(tt.nn.conv2d(image, kernel, 1, "SAME")), 2, 2, "VALID"
        )
        return [*function(*arrays), tt.reduce_sum(features)]

    return run


def _special(shape, dtype):
    """Normal values with NaN, infinities and signed zeros among them."""
    values = RNG.standard_normal(shape).astype(dtype).reshape(-1)
    for k, special in enumerate((np.nan, np.inf, -np.inf, 0.0, -0.0)):
        values[(7 * k + 3) % values.size] = special
    return values.reshape(shape)


def _array_kernels_case(function, arrays, kernels):
    """`function`'s values on `arrays` in a module that convolves too, which calls the
    table's `kernels`: the same bits as the module with kernels of its own."""
    dtype = arrays[0].dtype
    image = RNG.standard_normal((1, 6, 6, 2)).astype(dtype)
    wrapped = _beside_a_convolution(function)
    inputs = [tt.constant(a) for a in (image, *arrays)]
    source = compile_graph(
        tt.function(wrapped, backend="c").get_concrete_function(*inputs).stages.final, "installed"
    ).c_source
    suffix = "f32" if dtype == np.float32 else "f64"
    for kernel in kernels:
        assert f"{kernel}_{suffix}, installed with tracer" in source
    installed, own = _with_and_without(wrapped, [image, *arrays])
    _assert_same_bits(installed, own)
    return installed[:-1]


PADDINGS = [
    ((2, 3), [[1, 2], [0, 3]]),
    ((2, 5, 4, 3), [[0, 0], [1, 1], [2, 0], [0, 0]]),
    ((3, 1, 2, 2, 3), [[0, 1], [2, 0], [0, 0], [1, 1], [0, 2]]),
    ((7,), [[3, 0]]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, paddings", PADDINGS)
def test_the_tables_padding_gives_the_templates_bits(shape, paddings, dtype):
    x = _special(shape, dtype)
    (padded,) = _array_kernels_case(lambda x: [tt.pad(x, paddings)], [x], ["pad_zeros"])
    assert padded.tobytes() == np.pad(x, paddings).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5, 3), (4, 1100), (3, 7, 2049), (300, 512), (2, 1)])
def test_the_tables_sums_over_leading_axes_give_the_templates_bits(shape, dtype):
    def sums(x):
        return [tt.reduce_sum(x, 0), tt.reduce_sum(x, list(range(len(x.shape) - 1)))]

    x = RNG.standard_normal(shape).astype(dtype)
    x.reshape(-1)[5 % x.size] = np.nan
    rows, leading = _array_kernels_case(sums, [x], ["column_sums"])
    # each column's terms added in the order of the rows, in double
    want = x.astype(np.float64).reshape(shape[0], -1)
    total = np.zeros(want.shape[1])
    for row in want:
        total += row
    np.testing.assert_array_equal(rows, total.astype(dtype).reshape(shape[1:]))
    wide = x.astype(np.float64).reshape(-1, shape[-1])
    total = np.zeros(shape[-1])
    for row in wide:
        total += row
    np.testing.assert_array_equal(leading, total.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tables_relu_gradient_gives_the_templates_bits(dtype):
    def relu_gradient(x, y):  # as relu's rule writes it, of a relu output x stored before
        zero = tt.zeros((), dtype)
        return [tt.where(x > 0, y, zero), tt.where(x[0] > 0, y[1], zero)]

    shape = (3, 70, 700)  # 147,000 elements: on the threads
    x, y = _special(shape, dtype), _special(shape, dtype)
    gradient, row = _array_kernels_case(relu_gradient, [x, y], ["select_positive"])
    assert gradient.tobytes() == np.where(x > 0, y, dtype(0)).tobytes()
    assert row.tobytes() == np.where(x[0] > 0, y[1], dtype(0)).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tables_products_and_solves_in_parts_give_the_templates_bits(dtype, monkeypatch):
    """A module's products and triangular solves call the table's gemm_parts and
    triangular_solves where the installed blocked ones do not serve them: the template's
    calls of the BLAS, rows or columns in parts on the threads, batches of products whose
    operands are broadcast, a solve by halves, one right-hand side by trsv; a batch of
    systems."""
    monkeypatch.setattr(conv_kernels.blocked_products, "geometry", lambda *args, **kw: None)
    monkeypatch.setattr(conv_kernels.blocked_products, "run_time_rule", lambda *a, **kw: None)
    monkeypatch.setattr(conv_kernels.blocked_products, "solve_geometry", lambda *args: None)
    rng = np.random.default_rng(11)
    lower = np.tril(rng.standard_normal((2, 160, 160))) + 20 * np.eye(160)
    arrays = [lower, *(rng.standard_normal(s) for s in ((2, 160, 213), (2, 160, 1)))]
    arrays += [rng.standard_normal(s) for s in ((300, 200), (200, 70), (9, 5))]
    arrays += [rng.standard_normal(s) for s in ((2, 1, 90, 60), (1, 3, 60, 80))]
    arrays = [a.astype(dtype) for a in arrays]

    def products_and_solves(a, rhs, one, x, w, small, left, right):
        return [
            tt.linalg.triangular_solve(a, rhs, lower=True, adjoint=True),
            tt.linalg.triangular_solve(tt.linalg.matrix_transpose(a), rhs, lower=False),
            tt.linalg.triangular_solve(a, one, lower=True),
            x @ w,  # parts of rows
            tt.matmul(w, x, transpose_a=True, transpose_b=True),  # parts of columns
            tt.matmul(small, small, transpose_b=True),  # one part, on the calling thread
            left @ right,  # a batch of 6, each operand broadcast
            tt.matmul(right, left[0, 0], transpose_a=True, transpose_b=True),  # 3, one shared
        ]

    traced = tt.function(products_and_solves, backend="c")
    graph = traced.get_concrete_function(*map(tt.constant, arrays)).stages.final
    with_table = compile_graph(graph, "parts")
    with monkeypatch.context() as without:
        without.setattr(conv_kernels, "available", lambda: False)
        own = compile_graph(graph, "parts")
    suffix = "f32" if dtype == np.float32 else "f64"
    assert "triangular_solves" not in own.c_source and "last - first" in own.c_source
    assert f"gemm_parts_{suffix}" in with_table.c_source
    assert (
        "last - first" not in with_table.c_source and "tr_solve_halves" not in with_table.c_source
    )
    got, want = with_table.run(list(arrays)), own.run(list(arrays))
    _assert_same_bits(got, want)
    solution = np.linalg.solve(np.swapaxes(lower, -1, -2), arrays[1].astype(np.float64))
    tolerance = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got[0], solution, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(got[3], arrays[3] @ arrays[4], rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(got[6], arrays[6] @ arrays[7], rtol=tolerance, atol=tolerance)


ENDS_WHILE_BUILDING = """
import atexit, time
import numpy as np
import tracer as tt
import codegen.build as build

compilers = build.run_compilers
def late(commands):  # the second module's compiler starts once the program has ended
    time.sleep(0.5)
    return compilers(commands)
build.run_compilers = late
atexit.register(time.sleep, 1.0)  # an exit that takes a while (other atexit work)
x = tt.constant(np.ones((2, 8, 8, 3), np.float32))
w = tt.constant(np.ones((3, 3, 3, 4), np.float32))
conv = lambda x, w: tt.reduce_sum(tt.nn.max_pool2d(tt.nn.conv2d(x, w, 1, "SAME"), 2, 2, "VALID"))
print(float(tt.function(conv)(x, w)))
"""


def test_a_program_that_ends_while_its_module_builds_exits_quietly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", ENDS_WHILE_BUILDING],
        capture_output=True,
        text=True,
        env={**os.environ, "TRACER_CACHE_DIR": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == 2 * 4 * 4 * 4 * 27  # every window's largest sum of 27 ones
    assert "Traceback" not in done.stderr, done.stderr
