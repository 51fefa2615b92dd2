"""Direct convolutions (tracer/passes/convolve.py, tracer/ops/patch_product_ops.py): the
compiled pipeline replaces a convolution's three GEMMs over its patches with products that
read the image in place. The values must not change: C = interpreter = eager, to second
order, over geometries that exercise every tail of the C blocks (output positions not a
multiple of 7, channels not a multiple of the vector lanes), strides, dilations and each
kind of padding; and the rewrite must happen where it applies, and only there.
"""

import re

import numpy as np
import pytest

import tracer as tt
from tests.test_backends import derivatives

rng = np.random.default_rng(20261124)


def _conv(strides, padding, dilations=1, data_format="NHWC"):
    return lambda x, f: tt.nn.conv2d(x, f, strides, padding, data_format, dilations)


CASES = {
    # the input gradient at stride 1 becomes a patch product too
    "same, 20 channels, 11 columns": ((2, 9, 11, 3), (3, 3, 3, 20), _conv(1, "SAME"), True),
    "valid 5x5": ((2, 7, 7, 2), (5, 5, 2, 3), _conv(1, "VALID"), True),
    "explicit, dilated": (
        (1, 10, 9, 4),
        (3, 2, 4, 5),
        _conv(1, [[0, 0], [2, 1], [1, 2], [0, 0]], dilations=2),
        True,
    ),
    "nchw": ((2, 3, 6, 8), (3, 3, 3, 17), _conv(1, "SAME", data_format="NCHW"), True),
    # at stride 2 the input gradient stays a GEMM and a col2im
    "stride 2, 40 channels": ((2, 8, 9, 16), (3, 3, 16, 40), _conv(2, "SAME"), False),
    # padding past the filter's reach: the input gradient's windows start inside the cotangent
    "padded past the reach": (
        (1, 6, 7, 2),
        (3, 2, 2, 3),
        _conv(1, [[0, 0], [2, 1], [0, 3], [0, 0]], dilations=2),
        True,
    ),
    "strided and dilated": ((1, 11, 12, 3), (2, 3, 3, 4), _conv([2, 3], "VALID", [2, 1]), False),
}


def _agree(got, want, tolerance):
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_convolutions_agree_with_eager_and_the_interpreter(name, dtype):
    x_shape, f_shape, conv, input_gradient_direct = CASES[name]
    inputs = [tt.constant(rng.standard_normal(s).astype(dtype)) for s in (x_shape, f_shape)]
    run = derivatives(conv, 2)
    compiled = tt.function(run, backend="c")
    c_results = compiled(*inputs)
    ir = compiled.get_concrete_function(*inputs).ir("optimized")
    assert "= patch_product" in ir and "= patch_weights" in ir
    assert ("= sum_patches" not in ir) == input_gradient_direct
    tolerance = 1e-10 if dtype == np.float64 else 2e-4
    _agree(c_results, tt.function(run, backend="interpreter")(*inputs), tolerance)
    _agree(c_results, run(*inputs), tolerance)


def test_conv1d_and_conv2d_transpose_compile_to_patch_products():
    def network(x, f, g):
        h = tt.nn.conv1d(x, f, 1, "SAME")  # (2, 12, 6)
        image = tt.reshape(h, (2, 4, 3, 6))
        return tt.nn.conv2d_transpose(image, g, (2, 8, 6, 5), 2, "SAME")

    shapes = ((2, 12, 3), (4, 3, 6), (3, 3, 5, 6))
    inputs = [tt.constant(rng.standard_normal(s)) for s in shapes]
    run = derivatives(network, 3)
    compiled = tt.function(run, backend="c")
    _agree(compiled(*inputs), run(*inputs), 1e-10)
    assert "= patch_product" in compiled.get_concrete_function(*inputs).ir("optimized")


EPILOGUES = {
    "bias and relu": (lambda h, b: tt.nn.relu(h + b), "activation='relu'", True),
    "bias first, then tanh": (lambda h, b: tt.tanh(b + h), "activation='tanh'", True),
    "bias alone": (lambda h, b: h + b, None, True),
    "relu alone": (lambda h, b: tt.nn.relu(h) * b, "activation='relu'", False),
    # the sum read twice: the product adds the bias, the activation stays a loop
    "the sum read again": (lambda h, b: tt.nn.relu(h + b) + (h + b), None, True),
}


@pytest.mark.parametrize("name", sorted(EPILOGUES))
def test_a_bias_and_activation_are_applied_as_the_product_stores(name):
    """relu(conv2d(x, f) + b): the product adds the bias and applies the activation to
    each output as it writes it (its op's own C form), where the sum has no other reader."""
    epilogue, activation, bias_fused = EPILOGUES[name]
    conv = _conv(1, "SAME")
    inputs = [
        tt.constant(rng.standard_normal(s).astype(np.float32))
        for s in ((2, 6, 9, 3), (3, 3, 3, 20), (20,))
    ]
    run = derivatives(lambda x, f, b: epilogue(conv(x, f), b), 3)
    compiled = tt.function(run)
    _agree(compiled(*inputs), run(*inputs), 2e-4)
    products = [
        line
        for line in compiled.get_concrete_function(*inputs).ir("optimized").splitlines()
        if "= patch_product" in line
    ]
    forward = products[0]  # the first in order: the others are the second order's
    assert (activation in forward) if activation else "activation" not in forward
    operands = re.findall(r"%\d+", forward.split("] ", 1)[1].split("#")[0])
    assert len(operands) == (3 if bias_fused else 2), forward


def test_the_weight_gradient_is_the_same_at_every_call():
    """patch_weights sums each run of rows into its own partial, and the partials are added
    in order: no thread schedule changes a bit."""
    x = tt.constant(rng.standard_normal((8, 16, 16, 8)).astype(np.float32))
    f = tt.constant(rng.standard_normal((3, 3, 8, 32)).astype(np.float32))

    @tt.function
    def weight_gradient(x, f):
        with tt.GradientTape() as tape:
            tape.watch(f)
            loss = tt.reduce_sum(tt.square(tt.nn.conv2d(x, f, 1, "SAME")))
        return tape.gradient(loss, f)

    first = weight_gradient(x, f).numpy()
    for _ in range(3):
        np.testing.assert_array_equal(weight_gradient(x, f).numpy(), first)
    assert "= patch_weights" in weight_gradient.get_concrete_function(x, f).ir("optimized")


def test_a_shape_known_only_when_called_keeps_the_gemms():
    spec = [tt.TensorSpec([None, 6, 6, 3], tt.float64), tt.TensorSpec([3, 3, 3, 4], tt.float64)]
    conv = tt.function(lambda x, f: tt.nn.conv2d(x, f, 1, "SAME"), input_signature=spec)
    x, f = rng.standard_normal((2, 6, 6, 3)), rng.standard_normal((3, 3, 3, 4))
    np.testing.assert_allclose(conv(x, f).numpy(), tt.nn.conv2d(x, f, 1, "SAME").numpy())
    ir = conv.get_concrete_function(x, f).ir("optimized")
    assert "= patch_product" not in ir and "= matmul" in ir


def test_integer_convolutions_keep_the_gemms():
    x = tt.constant(rng.integers(-3, 3, (1, 5, 5, 2)).astype(np.int32))
    f = tt.constant(rng.integers(-3, 3, (3, 3, 2, 4)).astype(np.int32))
    conv = tt.function(lambda x, f: tt.nn.conv2d(x, f, 1, "SAME"))
    np.testing.assert_array_equal(conv(x, f).numpy(), tt.nn.conv2d(x, f, 1, "SAME").numpy())
    assert "= patch_product" not in conv.get_concrete_function(x, f).ir("optimized")


# --- found by a review: each failed before its fix --------------------------------------------


def _all_backends_agree(function, *args, tolerance=1e-10):
    want = function(*args)
    for backend in ("c", "interpreter"):
        _agree([tt.function(function, backend=backend)(*args)], [want], tolerance)


def test_a_constant_cotangent_of_the_input_gradient():
    """d sum(conv(x)) / dx: the cotangent is a constant, which the product reads through a
    reshape (a view of a constant is passed to the module like the constant)."""
    x, f = (tt.constant(rng.standard_normal(s)) for s in ((1, 5, 6, 2), (3, 3, 2, 3)))

    def input_gradient(x, f):
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = tt.reduce_sum(tt.nn.conv2d(x, f, 1, "SAME"))
        return tape.gradient(loss, x)

    _all_backends_agree(input_gradient, x, f)


def test_padding_past_the_filter_keeps_the_input_gradient_a_gemm():
    x, f, dy = (
        tt.constant(rng.standard_normal(s)) for s in ((1, 4, 4, 2), (1, 1, 2, 3), (1, 6, 6, 3))
    )

    def input_gradient(x, f, dy):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.nn.conv2d(x, f, 1, [[0, 0], [1, 1], [1, 1], [0, 0]])
        return tape.gradient(y, x, output_gradients=dy)

    _all_backends_agree(input_gradient, x, f, dy)
    ir = tt.function(input_gradient).get_concrete_function(x, f, dy).ir("optimized")
    assert "= sum_patches" in ir


def test_a_bias_along_another_axis_is_not_the_products():
    """reshape(conv, (8, 6)) + b: the bias runs along 6 columns, not the conv's 3 channels."""
    x = tt.constant(rng.standard_normal((1, 4, 4, 2)).astype(np.float32))
    f = tt.constant(rng.standard_normal((3, 3, 2, 3)).astype(np.float32))
    b = tt.constant(rng.standard_normal(6).astype(np.float32))
    _all_backends_agree(
        lambda x, f: tt.nn.relu(tt.reshape(tt.nn.conv2d(x, f, 1, "SAME"), (8, 6)) + b),
        x,
        f,
        tolerance=1e-5,
    )


def test_a_batch_of_filters_keeps_the_gemm():
    x = tt.constant(rng.standard_normal((1, 4, 5, 2)))
    w, g = (tt.constant(rng.standard_normal(s)) for s in ((2, 18, 3), (2, 20, 3)))

    def patches(x):
        windows = tt.image.extract_patches(x, [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        return tt.reshape(windows, (20, 18))

    _all_backends_agree(lambda x: tt.matmul(patches(x), w), x)
    _all_backends_agree(lambda x: tt.matmul(patches(x), g, transpose_a=True), x)
