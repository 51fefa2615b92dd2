"""Convolutions' epilogues (tracer/passes/conv_epilogues.py, tracer/ops/conv_epilogues.py):
relu's gradient applied by the patch product and the depthwise input gradient that compute
its cotangent, and a depthwise convolution's bias and activation applied as it stores. The
values are those of the ops apart: C (with the templates and with the installed kernels) =
interpreter = eager, NaN where they have it, to second order; the ops join only where the
convolution's result has no other reader."""

import numpy as np
import pytest

import tracer as tt
from codegen import conv_kernels
from tests.test_backends import derivatives
from tests.test_installed_kernels import _assert_same_bits, _with_and_without
from tracer.ops.core import apply
from tracer.ops.registry import OPS

RNG = np.random.default_rng(20261207)


def _block(stride, padding):
    """conv 3x3 + bias, relu; depthwise 3x3 at `stride` + bias, relu; pointwise 1x1 + bias,
    relu: a MobileNet block, each relu's gradient after a convolution's input gradient."""

    def block(x, w1, b1, dw, b2, pw, b3):
        h = tt.nn.relu(tt.nn.conv2d(x, w1, 1, "SAME") + b1)
        h = tt.nn.relu(tt.nn.depthwise_conv2d(h, dw, [1, stride, stride, 1], padding) + b2)
        return tt.nn.relu(tt.nn.conv2d(h, pw, 1, "SAME") + b3)

    return block


def _inputs(dtype, image, channels, taps=3):
    shapes = [
        image,
        (3, 3, image[3], channels),
        (channels,),
        (taps, taps, channels, 1),
        (channels,),
        (1, 1, channels, channels + 3),
        (channels + 3,),
    ]
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


# (block, image, channels): tails of positions and of channels, a strided depthwise input
# gradient (its windows read some rows and columns twice, others once)
CASES = {
    "same, 20 channels": (_block(1, "SAME"), (2, 7, 9, 3), 20),
    "valid, stride 2, 9 channels": (_block(2, "VALID"), (1, 9, 11, 2), 9),
}


def _gradients(block):
    def run(*params):
        with tt.GradientTape() as tape:
            tape.watch(list(params))
            y = block(*params)
            loss = tt.reduce_sum(y * y)
        return [loss, *tape.gradient(loss, list(params))]

    return run


def _ops(concrete):
    return concrete.ir("optimized").splitlines()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_epilogues_give_the_values_of_the_ops_apart(name, dtype):
    block, image, channels = CASES[name]
    inputs = [tt.constant(a) for a in _inputs(dtype, image, channels)]
    run = derivatives(block, 2)
    compiled = tt.function(run, backend="c")
    lines = _ops(compiled.get_concrete_function(*inputs))
    assert any("= patch_product" in line and "gated=True" in line for line in lines)
    assert any(
        "= depthwise_conv2d_backprop_input" in line and "gated=True" in line for line in lines
    )
    assert any("= depthwise_conv2d[" in line and "activation='relu'" in line for line in lines)
    tolerance = 1e-10 if dtype == np.float64 else 3e-4
    interpreted = tt.function(run, backend="interpreter")(*inputs)
    for got, want in [(compiled(*inputs), interpreted), (compiled(*inputs), run(*inputs))]:
        for g, w in zip(got, want, strict=True):
            g, w = np.asarray(g), np.asarray(w)
            scale = max(1.0, float(np.max(np.abs(w))))
            np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance * scale)


def test_the_gradients_agree_with_finite_differences():
    """The first image's gradient of the block, float64, against central differences."""
    block, image, channels = CASES["valid, stride 2, 9 channels"]
    arrays = _inputs(np.float64, image, channels)
    run = tt.function(_gradients(block))
    got = run(*map(tt.constant, arrays))[1].numpy()

    def loss(x):
        y = block(tt.constant(x), *map(tt.constant, arrays[1:])).numpy()
        return float(np.sum(y * y))

    step, flat = 1e-6, arrays[0].ravel()
    for k in RNG.choice(flat.size, 12, replace=False):
        up, down = flat.copy(), flat.copy()
        up[k] += step
        down[k] -= step
        shape = arrays[0].shape
        want = (loss(up.reshape(shape)) - loss(down.reshape(shape))) / (2 * step)
        assert got.ravel()[k] == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_nan_in_the_image_is_where_the_ops_apart_have_it():
    """relu(NaN) is NaN, so the gate is NaN there: relu_grad gives 0, as TensorFlow's."""
    block, image, channels = CASES["same, 20 channels"]
    arrays = _inputs(np.float32, image, channels)
    arrays[0][0, 3, 4, 1] = np.nan
    arrays[1][0, 0, 0, 2] = np.inf
    inputs = [tt.constant(a) for a in arrays]
    run = _gradients(block)
    compiled, eager = tt.function(run)(*inputs), run(*inputs)
    for got, want in zip(compiled, eager, strict=True):
        got, want = got.numpy(), want.numpy()
        assert np.array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=3e-4, atol=3e-4)


@pytest.mark.skipif(not conv_kernels.available(), reason="the installed kernels were not built")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_installed_kernels_give_the_templates_bits(name, dtype):
    block, image, channels = CASES[name]
    installed, own = _with_and_without(_gradients(block), _inputs(dtype, image, channels))
    _assert_same_bits(installed, own)


def test_a_convolution_read_elsewhere_keeps_its_result():
    """The depthwise result also returned: it keeps its own, the bias and relu a loop of
    their own. A graph of depthwise convolutions alone (no patches) gates too."""

    def run(x, dw, b):
        with tt.GradientTape() as tape:
            tape.watch([x, dw, b])
            c = tt.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME")
            y = tt.nn.relu(c + b)
            loss = tt.reduce_sum(y * y)
        with tt.GradientTape() as again:
            again.watch(y)
            z = tt.nn.relu(tt.nn.depthwise_conv2d(tt.nn.relu(y), dw, [1, 1, 1, 1], "SAME"))
            total = tt.reduce_sum(z)
        return [c, *tape.gradient(loss, [x, dw, b]), again.gradient(total, y)]

    arrays = _inputs(np.float64, (1, 5, 6, 4), 4)
    inputs = [tt.constant(arrays[i]) for i in (0, 3, 4)]
    compiled = tt.function(run)
    lines = _ops(compiled.get_concrete_function(*inputs))
    first = next(line for line in lines if "= depthwise_conv2d[" in line)
    assert "activation" not in first and first.count("%") == 3  # its result and 2 operands
    assert any("= depthwise_conv2d_backprop_input" in line and "gated" in line for line in lines)
    for got, want in zip(compiled(*inputs), run(*inputs), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


def test_a_gate_of_another_shape_is_refused():
    attrs = dict(
        sizes=(4, 4), out=(4, 4), kernel=(3, 3), strides=(1, 1), dilations=(1, 1), before=(1, 1)
    )
    g, w = tt.constant(np.ones((1, 4, 4, 2))), tt.constant(np.ones((3, 3, 2)))
    op = OPS["depthwise_conv2d_backprop_input"]
    with pytest.raises(ValueError, match=r"the gate must be \(1, 4, 4, 2\)"):
        apply(op, (g, w, tt.constant(np.ones((1, 4, 4, 3)))), dict(attrs, gated=True))
    gate = tt.constant(np.array([[[[1.0, -1.0]] * 4] * 4]))
    got = apply(op, (g, w, gate), dict(attrs, gated=True)).numpy()
    want = apply(op, (g, w), attrs).numpy() * (gate.numpy() > 0)
    np.testing.assert_array_equal(got, want)
