"""The depthwise primitives (tracer/ops/depthwise_ops.py): the installed kernels and the
compiled template against the numpy kernels over geometries with channel and position
tails, strides, dilations and padding; the template's bits equal to the installed ones'; and
which terms padding makes (the product and the filter gradient multiply its zeros, the
input gradient has no term where no window reads an element)."""

import numpy as np
import pytest

import tracer as tt
from codegen import conv_kernels
from codegen.compile import compile_graph
from tests.test_installed_kernels import calls_table_kernel
from tracer.ops import depthwise_ops
from tracer.ops.window_ops import window_attrs

rng = np.random.default_rng(20261204)


def _geometry(sizes, kernel, strides, dilations, padding):
    """TensorFlow's SAME or VALID geometry of a window op."""
    out, before = [], []
    for size, k, stride, dilation in zip(sizes, kernel, strides, dilations):
        reach = (k - 1) * dilation + 1
        if padding == "VALID":
            out.append((size - reach) // stride + 1)
            before.append(0)
        else:
            out.append(-(-size // stride))
            before.append(max(0, (out[-1] - 1) * stride + reach - size) // 2)
    return window_attrs(sizes, out, kernel, strides, dilations, before)


# (sizes, kernel, strides, dilations, padding, channels): tails of 16 and 8 lanes and of 4
# positions, strides of the input gradient's gathers, a filter as wide as the image
GEOMETRIES = [
    ((7, 9), (3, 3), (1, 1), (1, 1), "SAME", 5),
    ((8, 8), (3, 3), (2, 2), (1, 1), "SAME", 33),
    ((6, 7), (2, 3), (1, 2), (2, 1), "SAME", 17),
    ((9, 5), (3, 2), (1, 1), (1, 1), "VALID", 16),
    ((5, 5), (5, 5), (1, 1), (1, 1), "SAME", 40),
    ((10, 11), (3, 3), (3, 2), (1, 1), "SAME", 3),
    ((4, 5), (5, 5), (1, 1), (1, 1), "SAME", 170),  # float64 filter totals past 32 KB: groups
]
KERNELS = {
    "product": (depthwise_ops._conv_kernel, depthwise_ops.depthwise_conv2d),
    "input": (depthwise_ops._input_gradient_kernel, depthwise_ops.depthwise_conv2d_backprop_input),
    "filter": (
        depthwise_ops._filter_gradient_kernel,
        depthwise_ops.depthwise_conv2d_backprop_filter,
    ),
}


def _operands(part, attrs, channels, dtype):
    x = rng.standard_normal((2, *attrs["sizes"], channels)).astype(dtype)
    w = rng.standard_normal((*attrs["kernel"], channels)).astype(dtype)
    g = rng.standard_normal((2, *attrs["out"], channels)).astype(dtype)
    return {"product": (x, w), "input": (g, w), "filter": (x, g)}[part]


def _own_kernels(op, args, attrs):
    """`op` on `args` in a module built with its own kernels (the template's C), not the
    installed ones that a function's first build calls."""
    traced = tt.function(lambda a, b: op(a, b, attrs), backend="c")
    graph = traced.get_concrete_function(*map(tt.constant, args)).stages.final
    module = compile_graph(graph, "own", own_kernels=True)
    assert not calls_table_kernel(module.c_source)
    return module.run(list(args))[0]


def _numpy_kernel(kernel, args, attrs, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(conv_kernels, "available", lambda: False)
        return kernel(*args, **attrs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("part", sorted(KERNELS))
@pytest.mark.parametrize("case", GEOMETRIES, ids=str)
def test_the_installed_and_compiled_kernels_agree_with_numpys(case, part, dtype, monkeypatch):
    *window, channels = case
    attrs = _geometry(*window)
    kernel, op = KERNELS[part]
    args = _operands(part, attrs, channels, dtype)
    eager = kernel(*args, **attrs)
    expected = _numpy_kernel(kernel, args, attrs, monkeypatch)
    tolerance = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(eager, expected, rtol=tolerance, atol=tolerance)
    compiled = tt.function(lambda a, b: op(a, b, attrs))(*map(tt.constant, args)).numpy()
    own = _own_kernels(op, args, attrs)
    np.testing.assert_allclose(own, expected, rtol=tolerance, atol=tolerance)
    if conv_kernels.available():  # the installed loops are the template's
        np.testing.assert_array_equal(compiled, eager)
        np.testing.assert_array_equal(own, eager)
    else:
        np.testing.assert_allclose(compiled, expected, rtol=tolerance, atol=tolerance)


def _all_backends(op, args, attrs, monkeypatch):
    kernel = {v[1]: v[0] for v in KERNELS.values()}[op]
    compiled = tt.function(lambda a, b: op(a, b, attrs))(*map(tt.constant, args)).numpy()
    numpy_kernel = _numpy_kernel(kernel, args, attrs, monkeypatch)
    return kernel(*args, **attrs), numpy_kernel, compiled, _own_kernels(op, args, attrs)


def test_padding_is_zeros_the_product_multiplies(monkeypatch):
    """A tap of infinities times padding is NaN, where a window reads padding there, as a
    convolution of patches gives (0 * inf); elsewhere the tap's terms are infinite."""
    attrs = _geometry((4, 4), (3, 3), (1, 1), (1, 1), "SAME")
    x = np.ones((1, 4, 4, 2))
    w = np.ones((3, 3, 2))
    w[0, 0, 0] = np.inf
    for result in _all_backends(depthwise_ops.depthwise_conv2d, (x, w), attrs, monkeypatch):
        channel = result[0, :, :, 0]
        assert np.isnan(channel[0]).all() and np.isnan(channel[:, 0]).all()
        assert np.isposinf(channel[1:, 1:]).all()
        edges, middle = [4, 6, 6, 4], [6, 9, 9, 6]  # the taps inside the image
        np.testing.assert_array_equal(result[0, :, :, 1], [edges, middle, middle, edges])


def test_the_input_gradient_has_terms_only_where_windows_read(monkeypatch):
    """The transpose of the product: element (h, w) sums the taps whose windows read it, so
    an infinite tap makes infinities where its windows read, never NaN from absent terms."""
    attrs = _geometry((4, 4), (3, 3), (1, 1), (1, 1), "SAME")
    g = np.ones((1, 4, 4, 1))
    w = np.ones((3, 3, 1))
    w[0, 0, 0] = np.inf
    op = depthwise_ops.depthwise_conv2d_backprop_input
    for result in _all_backends(op, (g, w), attrs, monkeypatch):
        channel = result[0, :, :, 0]
        # tap (0, 0) of window (oh, ow) reads (oh - 1, ow - 1): elements (0..2, 0..2)
        assert np.isposinf(channel[:3, :3]).all()
        # the windows that read each element of the last row and column
        np.testing.assert_array_equal(channel[3], [4, 6, 6, 4])
        np.testing.assert_array_equal(channel[:3, 3], [4, 6, 6])


def test_the_filter_gradient_multiplies_the_padding_by_the_cotangent(monkeypatch):
    """Tap (0, 0) of the window at (0, 0) reads padding: an infinite cotangent there makes
    that tap's gradient 0 * inf, NaN, as the patches' product gives; tap (1, 1) reads x."""
    attrs = _geometry((3, 3), (3, 3), (1, 1), (1, 1), "SAME")
    x = np.ones((1, 3, 3, 1))
    g = np.zeros((1, 3, 3, 1))
    g[0, 0, 0, 0] = np.inf
    op = depthwise_ops.depthwise_conv2d_backprop_filter
    for result in _all_backends(op, (x, g), attrs, monkeypatch):
        assert np.isnan(result[0, 0, 0]) and np.isposinf(result[1, 1, 0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_filter_gradient_has_the_same_bits_on_any_number_of_threads(dtype):
    """The filter gradient's blocks of channels are cut into a group for each thread, and a
    group's blocks take each row in turn: each channel still sums its rows in order, so one
    thread, two and three give the same bits, in the compiled template and the installed
    loops (channels past one float64 group's totals)."""
    attrs = _geometry((6, 7), (5, 5), (1, 1), (1, 1), "SAME")
    x, g = _operands("filter", attrs, 170, dtype)
    op = depthwise_ops.depthwise_conv2d_backprop_filter
    results = []
    try:
        for threads in (1, 2, 3):
            tt.config.threading.set_intra_op_parallelism_threads(threads)
            results.append(_own_kernels(op, (x, g), attrs))
            if conv_kernels.available():  # the installed loops, eagerly
                results.append(depthwise_ops._filter_gradient_kernel(x, g, **attrs))
    finally:
        tt.config.threading.set_intra_op_parallelism_threads(0)
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])
    expected = depthwise_ops._filter_gradient_kernel(x, g, **attrs)
    tolerance = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(results[0], expected, rtol=tolerance, atol=tolerance)
