"""Eager convolutions by modules of their own geometry (tracer/eager_convolutions.py): the
first two calls of a large op answer with the installed kernels, the second asks for the
build; the calls after it run the module, with the same bits; the values are the convolution's, against
numpy in float64; small ops, and ops the installed kernels would not compute, build nothing;
and where no module can be built the installed kernels keep answering."""

import numpy as np
import pytest

import tracer as tt
from codegen import conv_kernels
from runtime import installed_kernels
from tracer import eager_convolutions

pytestmark = pytest.mark.skipif(
    not conv_kernels.available(), reason="the kernels installed with tracer are missing"
)
rng = np.random.default_rng(20261206)


@pytest.fixture
def own_modules(monkeypatch):
    """Every convolution op gets its module (no bound on its multiply-adds), and this test's
    modules are its own: the builds of earlier tests are forgotten."""
    monkeypatch.setattr(eager_convolutions, "FROM_MACS", 0)
    monkeypatch.setattr(eager_convolutions, "_modules", {})
    monkeypatch.setattr(eager_convolutions, "_asked", [])
    monkeypatch.setattr(eager_convolutions, "_builder", [None])
    return eager_convolutions._modules


def _convolution_and_gradients(x, w, g, strides, padding, dilations):
    """The convolution, and the gradients of <conv(x, w), g> in x and w, eagerly."""
    x, w = tt.constant(x), tt.constant(w)
    with tt.GradientTape() as tape:
        tape.watch([x, w])
        y = tt.nn.conv2d(x, w, strides, padding, dilations=dilations)
    return [t.numpy() for t in (y, *tape.gradient(y, [x, w], output_gradients=tt.constant(g)))]


def _numpy_convolution(x, w, strides, padding, dilations):
    """conv2d in float64 by loops over the taps: `padding` SAME or VALID."""
    (n, h, wd, _), (kh, kw, _, m) = x.shape, w.shape
    reach = [(kh - 1) * dilations + 1, (kw - 1) * dilations + 1]
    if padding == "SAME":
        out = [-(-h // strides), -(-wd // strides)]
        total = [max((o - 1) * strides + r - s, 0) for o, r, s in zip(out, reach, (h, wd))]
        before = [t // 2 for t in total]
    else:
        out = [(h - reach[0]) // strides + 1, (wd - reach[1]) // strides + 1]
        total, before = [0, 0], [0, 0]
    padded = np.zeros((n, h + total[0], wd + total[1], x.shape[3]))
    padded[:, before[0] : before[0] + h, before[1] : before[1] + wd] = x
    y = np.zeros((n, *out, m))
    for i in range(kh):
        for j in range(kw):
            rows = padded[:, i * dilations :: strides][:, : out[0]]
            taps = rows[:, :, j * dilations :: strides][:, :, : out[1]]
            y += taps @ w[i, j].astype(np.float64)
    return y


def _refused(name, *arguments):
    raise AssertionError(f"the installed {name} ran where the op's own module was built")


CASES = {
    # (image, filters, strides, padding, dilations, the ops the installed kernels compute)
    "same 3x3": ((2, 9, 11, 3), (3, 3, 3, 20), 1, "SAME", 1, 3),
    "valid 5x5, one channel": ((3, 12, 10, 1), (5, 5, 1, 8), 1, "VALID", 1, 3),
    "dilated": ((1, 10, 9, 4), (3, 2, 4, 5), 1, "SAME", 2, 3),
    # at stride 2 the input gradient is a product and a sum of patches: no module of its own
    "stride 2": ((2, 8, 9, 6), (3, 3, 6, 7), 2, "SAME", 1, 2),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_the_module_of_each_op_gives_the_installed_kernels_bits(
    own_modules, monkeypatch, case, dtype
):
    image, filters, strides, padding, dilations, served = CASES[case]
    x = rng.standard_normal(image).astype(dtype)
    w = (rng.standard_normal(filters) * 0.3).astype(dtype)
    y = _numpy_convolution(x, w, strides, padding, dilations)
    g = rng.standard_normal(y.shape).astype(dtype)
    installed = _convolution_and_gradients(x, w, g, strides, padding, dilations)
    eager_convolutions.wait()
    assert list(own_modules.values()) == [eager_convolutions._SEEN] * served  # nothing built
    again = _convolution_and_gradients(x, w, g, strides, padding, dilations)
    eager_convolutions.wait()
    assert len(own_modules) == served and all(map(callable, own_modules.values()))
    assert all(np.array_equal(a, b) for a, b in zip(again, installed))
    monkeypatch.setattr(installed_kernels, "call", _refused)  # the modules answer now
    own = _convolution_and_gradients(x, w, g, strides, padding, dilations)
    for got, want in zip(own, installed):
        assert got.dtype == dtype and np.array_equal(got, want)
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(own[0], y, rtol=tolerance, atol=tolerance)
    # <conv(x, w), g> is bilinear: its gradient in w is <conv(x, e_w), g> for each filter tap
    for k in rng.choice(w.size, 3, replace=False):
        tap = np.zeros(w.size)
        tap[k] = 1
        basis = _numpy_convolution(x, tap.reshape(w.shape), strides, padding, dilations)
        want = np.sum(basis * g)
        assert abs(own[2].reshape(-1)[k] - want) <= tolerance * (1 + abs(want)) * 10


def test_a_small_convolution_keeps_the_installed_kernels(monkeypatch):
    monkeypatch.setattr(eager_convolutions, "_modules", {})
    x = rng.standard_normal((1, 6, 6, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    tt.nn.conv2d(x, w, 1, "SAME")
    assert eager_convolutions._modules == {}  # 1 * 36 * 9 * 8 multiply-adds


def test_where_no_module_can_be_built_the_installed_kernels_answer(own_modules, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    x = rng.standard_normal((2, 7, 7, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    first = tt.nn.conv2d(x, w, 1, "SAME").numpy()
    tt.nn.conv2d(x, w, 1, "SAME")
    eager_convolutions.wait()
    assert list(own_modules.values()) == [None]
    again = tt.nn.conv2d(x, w, 1, "SAME").numpy()
    assert np.array_equal(first, again)
    np.testing.assert_allclose(again, _numpy_convolution(x, w, 1, "SAME", 1), rtol=1e-4, atol=1e-4)
