"""codegen/array_windows.py: the window ops in C for the eager kernels (patches, their sum, and
max pooling's two, those through the installed table where it is there) give the numpy
kernels' bits, over geometries with padding, strides, dilations and overlapping windows, and
with ties, zeros of both signs, infinities and NaN; and max pooling's eager gradient through
them against its definition."""

import numpy as np
import pytest

import tracer as tt
from codegen import array_windows, build, conv_kernels
from codegen.errors import CompileError
from tracer.ops import window_ops

rng = np.random.default_rng(20261130)


def _geometry(sizes, kernel, strides, dilations=(1, 1), before=(0, 0), after=(0, 0)):
    out = tuple(
        (n + b + a - (k - 1) * d - 1) // s + 1
        for n, k, s, d, b, a in zip(sizes, kernel, strides, dilations, before, after)
    )
    return window_ops.window_attrs(sizes, out, kernel, strides, dilations, before)


GEOMETRIES = {
    "2x2 pooling": _geometry((28, 28), (2, 2), (2, 2)),
    "2x2 pooling, an odd row and column left out": _geometry((7, 9), (2, 2), (2, 2)),
    "overlapping 3x3": _geometry((9, 7), (3, 3), (1, 1)),
    "padded, strided": _geometry((9, 7), (3, 2), (2, 1), before=(1, 1), after=(1, 1)),
    "dilated": _geometry((10, 10), (3, 3), (2, 2), dilations=(2, 1), before=(2, 0)),
    "windows past the edge": _geometry((5, 5), (2, 2), (2, 2), before=(1, 1), after=(1, 1)),
    "one window, the image": _geometry((6, 6), (6, 6), (1, 1)),
}


def _image(attrs, channels, dtype):
    x = rng.standard_normal((3, *attrs["sizes"], channels)).astype(dtype)
    x[0, 0, 0, 0] = x[0, 0, 1, 0]  # a tie
    x[1, :2, :2, 1] = np.nan
    x[2, :3, :3, 2] = -np.inf
    x[0, :3, :3, 3] = 0.0
    x[0, 0, 1, 3] = -0.0
    x[1, 1:3, 1:3, 4] = 1.5  # a tie in overlapping windows
    return x


def _numpy(function, *arguments, monkeypatch):
    with monkeypatch.context() as patch:
        for name in ("gather", "scatter", "patches", "summed_patches"):
            patch.setattr(array_windows, name, lambda *a: None)
        return function(*arguments)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channels", [5, 70])  # one block of channels, and two
@pytest.mark.parametrize("name", sorted(GEOMETRIES))
def test_the_window_ops_in_c_give_the_numpy_kernels_bits(name, channels, dtype, monkeypatch):
    attrs = GEOMETRIES[name]
    x = _image(attrs, channels, dtype)
    v = rng.standard_normal(x.shape).astype(dtype)
    g = rng.standard_normal((3, *attrs["out"], channels)).astype(dtype)
    g[0, 0, 0, 4], g[1, 0, 0, 0] = -0.0, np.inf
    array_windows.patches(x, attrs)  # starts the module's build (max pooling's two
    array_windows.wait()  # kernels are the installed table's, where it is there)
    taps = attrs["kernel"][0] * attrs["kernel"][1]
    cols = rng.standard_normal((3, *attrs["out"], taps * channels)).astype(dtype)
    cols[0, 0, 0, :3] = [-0.0, np.nan, -np.inf]
    for function, looped_function, arguments in [
        (window_ops._gather_kernel, array_windows.gather, (x, v)),
        (window_ops._gather_kernel, array_windows.gather, (x, x)),
        (window_ops._scatter_kernel, array_windows.scatter, (x, g)),
        (window_ops.patches_of, array_windows.patches, (x,)),
        (window_ops.sum_patches_of, array_windows.summed_patches, (cols,)),
    ]:
        looped = looped_function(*arguments, attrs)
        assert looped is not None
        plain = _numpy(lambda *a: function(*a, **attrs), *arguments, monkeypatch=monkeypatch)
        assert looped.shape == plain.shape and looped.dtype == plain.dtype
        np.testing.assert_array_equal(looped.view(np.uint8), plain.view(np.uint8))


def test_other_dtypes_keep_the_numpy_kernels():
    attrs = GEOMETRIES["2x2 pooling"]
    x = rng.integers(-5, 5, (2, 28, 28, 3)).astype(np.int32)
    assert array_windows.gather(x, x, attrs) is None
    assert array_windows.scatter(x.astype(np.float32), x, attrs) is None


def test_max_pooling_gradient_sends_each_windows_cotangent_to_its_maximum():
    array_windows.gather(
        np.zeros((1, 2, 2, 1), np.float64), np.zeros((1, 2, 2, 1)), GEOMETRIES["2x2 pooling"]
    )
    array_windows.wait()
    x = tt.constant(rng.permutation(4 * 6 * 6 * 3).reshape(4, 6, 6, 3).astype(np.float64))
    with tt.GradientTape() as tape:
        tape.watch(x)
        pooled = tt.nn.max_pool2d(x, 3, 3, "VALID")
        loss = tt.reduce_sum(pooled * pooled)
    grad = tape.gradient(loss, x).numpy()
    values = x.numpy()
    expected = np.zeros_like(values)
    for n in range(4):
        for i in range(2):
            for j in range(2):
                for c in range(3):
                    window = values[n, 3 * i : 3 * i + 3, 3 * j : 3 * j + 3, c]
                    r, s = np.unravel_index(np.argmax(window), window.shape)
                    expected[n, 3 * i + r, 3 * j + s, c] = 2 * window[r, s]
    np.testing.assert_array_equal(pooled.numpy().max(), values.max())
    np.testing.assert_array_equal(grad, expected)


def test_where_no_module_builds_the_numpy_kernels_answer(monkeypatch):
    def failing(*arguments, **keywords):
        raise CompileError("no compiler here")

    monkeypatch.setattr(build, "load", failing)
    monkeypatch.setattr(array_windows, "_built", {})
    monkeypatch.setattr(array_windows, "_builders", [])
    attrs = GEOMETRIES["padded, strided"]
    x = _image(attrs, 5, np.float64)
    array_windows.patches(x, attrs)
    array_windows.wait()
    assert array_windows.patches(x, attrs) is None
    assert array_windows.gather(x, x * 2, attrs) is None
    if conv_kernels.available():  # max pooling needs no module: the installed table's
        pooled = array_windows.gather(x, x, attrs)
        assert pooled[0, 0, 0, 0] == np.max(x[0, 0:2, 0, 0])
    monkeypatch.setattr(conv_kernels, "available", lambda: False)
    assert array_windows.gather(x, x, attrs) is None
    pooled = window_ops._gather_kernel(x, x, **attrs)  # numpy's way
    assert pooled.shape == (3, *attrs["out"], 5)
    # window (0, 0) reads rows -1..1 and columns -1..0: inside, rows 0..1 of column 0
    assert pooled[0, 0, 0, 0] == np.max(x[0, 0:2, 0, 0])
