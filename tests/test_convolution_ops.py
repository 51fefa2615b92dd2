"""The convolution primitives (tracer/ops/convolution_ops.py): their eager kernels (the
installed direct kernels, or numpy's patches and products) against the products they are,
on strided, dilated and padded geometries; the same bits eagerly and compiled; their
batching rules against a loop; and the pipeline writing them as products, which
tracer/passes/convolve.py still turns into direct kernels.
"""

import numpy as np
import pytest

import tracer as tt
from codegen import conv_kernels
from tracer.ops import convolution_ops
from tracer.ops.convolution_ops import conv2d as conv2d_of_tensors
from tracer.ops.convolution_ops import conv2d_backprop_filter as filter_gradient_of_tensors
from tracer.ops.convolution_ops import conv2d_backprop_input as input_gradient_of_tensors
from tracer.ops.window_ops import patches_of, sum_patches_of, window_attrs

rng = np.random.default_rng(20261201)

# (image (N, H, W, C), kernel, strides, dilations, before, out, M)
GEOMETRIES = {
    "same 3x3": ((2, 6, 7, 3), (3, 3), (1, 1), (1, 1), (1, 1), (6, 7), 5),
    "valid, one channel": ((3, 5, 5, 1), (2, 2), (1, 1), (1, 1), (0, 0), (4, 4), 4),
    "strided": ((2, 7, 6, 2), (3, 2), (2, 1), (1, 1), (1, 0), (4, 5), 3),
    "dilated": ((1, 6, 6, 4), (2, 3), (1, 1), (2, 2), (1, 2), (6, 6), 2),
    "padding past the filter": ((2, 4, 4, 2), (2, 2), (1, 1), (1, 1), (2, 2), (6, 6), 3),
    "wide channels": ((1, 5, 4, 70), (3, 3), (1, 1), (1, 1), (1, 1), (5, 4), 67),
}


def _on_constants(op):
    """`op` taking arrays or tensors."""
    return lambda a, b, attrs: op(tt.convert_to_tensor(a), tt.convert_to_tensor(b), attrs)


conv2d = _on_constants(conv2d_of_tensors)
conv2d_backprop_input = _on_constants(input_gradient_of_tensors)
conv2d_backprop_filter = _on_constants(filter_gradient_of_tensors)


def _operands(name, dtype):
    shape, kernel, strides, dilations, before, out, m = GEOMETRIES[name]
    attrs = window_attrs(shape[1:3], out, kernel, strides, dilations, before)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((*kernel, shape[3], m)).astype(dtype)
    g = rng.standard_normal((shape[0], *out, m)).astype(dtype)
    return attrs, x, w, g


def _products(attrs, x, w, g):
    """The three as the products of patches they are, in float64."""
    x, w, g = (np.asarray(a, np.float64) for a in (x, w, g))
    columns = patches_of(x, **attrs).reshape(-1, w[..., 0].size)
    filters, rows = w.reshape(-1, w.shape[3]), g.reshape(-1, g.shape[3])
    y = (columns @ filters).reshape(g.shape)
    dx = sum_patches_of((rows @ filters.T).reshape(*g.shape[:3], -1), **attrs)
    dw = (columns.T @ rows).reshape(w.shape)
    return y, dx, dw


@pytest.mark.parametrize("installed", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(GEOMETRIES))
def test_each_kernel_is_the_product_of_patches_it_stands_for(name, dtype, installed, monkeypatch):
    if not installed:
        monkeypatch.setattr(conv_kernels, "available", lambda: False)
    attrs, x, w, g = _operands(name, dtype)
    got = [
        conv2d(x, w, attrs).numpy(),
        conv2d_backprop_input(g, w, attrs).numpy(),
        conv2d_backprop_filter(x, g, attrs).numpy(),
    ]
    tolerance = 1e-12 if dtype == np.float64 else 2e-5
    for value, want in zip(got, _products(attrs, x, w, g)):
        assert value.dtype == dtype and value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=tolerance, atol=tolerance * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_other_dtypes_take_numpy_patches_and_products(dtype):
    attrs, x, w, g = _operands("strided", np.float64)
    x, w, g = (np.round(a * 3).astype(dtype) for a in (x, w, g))
    columns = patches_of(x, **attrs).reshape(-1, w[..., 0].size)
    want = np.matmul(columns, w.reshape(-1, w.shape[3])).reshape(g.shape)
    got = conv2d(x, w, attrs).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_an_empty_batch_gives_empty_results():
    attrs, x, w, g = _operands("same 3x3", np.float32)
    x, g = x[:0], g[:0]
    assert conv2d(x, w, attrs).shape == g.shape
    assert conv2d_backprop_input(g, w, attrs).shape == x.shape
    np.testing.assert_array_equal(conv2d_backprop_filter(x, g, attrs).numpy(), np.zeros(w.shape))


@pytest.mark.parametrize("strides", [1, 2])
def test_eager_and_compiled_give_the_same_bits(strides):
    """Both run the direct kernels (compiled: tracer/passes/convolve.py's rewrite of the
    products), with their sums in one order."""
    x = tt.constant(rng.standard_normal((4, 12, 12, 3)).astype(np.float32))
    f = tt.constant(rng.standard_normal((3, 3, 3, 8)).astype(np.float32))
    g = tt.constant(rng.standard_normal((3, 3, 8, 5)).astype(np.float32))

    def step(x, f, g):
        with tt.GradientTape() as tape:
            tape.watch([x, f, g])
            h = tt.nn.relu(tt.nn.conv2d(x, f, strides, "SAME"))
            y = tt.nn.conv2d(h, g, 1, "SAME")
            loss = tt.reduce_sum(y * y)
        return [y, *tape.gradient(loss, [x, f, g])]

    eager = step(x, f, g)
    compiled = tt.function(step, backend="c")
    assert "patch_product" in compiled.get_concrete_function(x, f, g).ir("optimized")
    for got, want in zip(compiled(x, f, g), eager):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_pipeline_writes_them_as_products_first():
    x = tt.constant(rng.standard_normal((2, 6, 6, 3)))
    f = tt.constant(rng.standard_normal((3, 3, 3, 4)))

    def loss_and_grads(x, f):
        with tt.GradientTape() as tape:
            tape.watch([x, f])
            loss = tt.reduce_sum(tt.nn.conv2d(x, f, 1, "SAME") ** 2)
        return tape.gradient(loss, [x, f])

    concrete = tt.function(loss_and_grads).get_concrete_function(x, f)
    traced, grad, decomposed = (concrete.ir(s) for s in ("traced", "grad", "decomposed"))
    assert "= conv2d[" in traced
    assert "= conv2d_backprop_input[" in grad and "= conv2d_backprop_filter[" in grad
    assert "= conv2d" not in decomposed and "= extract_patches[" in decomposed
    assert "patch_product" in concrete.ir("convolved")


BATCHED = [(True, False), (False, True), (True, True)]


@pytest.mark.parametrize("flags", BATCHED)
@pytest.mark.parametrize("op", [conv2d, conv2d_backprop_input, conv2d_backprop_filter])
def test_batching_matches_a_loop(op, flags):
    attrs, x, w, g = _operands("strided", np.float64)
    first, second = {
        conv2d: (x, w),
        conv2d_backprop_input: (g, w),
        conv2d_backprop_filter: (x, g),
    }[op]
    size = 3
    stacks = [np.stack([a * (1 + k) for k in range(size)]) for a in (first, second)]
    args = [s if batched else a for s, a, batched in zip(stacks, (first, second), flags)]

    def one(*pair):
        return op(*pair, attrs)

    mapped = [k for k, batched in enumerate(flags) if batched]

    def call(*batched):
        pair = list(args)
        for k, value in zip(mapped, batched):
            pair[k] = value
        return one(*pair)

    got = tt.vectorized_map(lambda items: call(*items), [tt.constant(args[k]) for k in mapped])
    want = np.stack(
        [
            one(*[stacks[k][b] if flags[k] else args[k] for k in range(2)]).numpy()
            for b in range(size)
        ]
    )
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda a, x, w, g: conv2d(x[:, :3], w, a), ["conv2d", "the image must be (N, 7, 6, C)"]),
        (lambda a, x, w, g: conv2d(x, w[..., :1, :], a), ["conv2d", "2 channels", "take 1"]),
        (lambda a, x, w, g: conv2d_backprop_input(g, w[..., :1], a), ["backprop_input", "make 1"]),
        (
            lambda a, x, w, g: conv2d_backprop_filter(x[:1], g, a),
            ["backprop_filter", "1 images", "the cotangent 2"],
        ),
        (lambda a, x, w, g: conv2d(x, w.astype(np.float32), a), ["conv2d", "float32"]),
    ],
)
def test_bad_operands_name_the_op_and_what_is_wrong(call, words):
    attrs, x, w, g = _operands("strided", np.float64)
    with pytest.raises((ValueError, TypeError)) as raised:
        call(attrs, x, w, g)
    for word in words:
        assert word in str(raised.value)


def test_the_filter_gradient_sums_the_patch_weights_partial_sums_in_order():
    """Many rows: the installed patch weights make several partial sums, added in order."""
    attrs, x, w, g = _operands("same 3x3", np.float32)
    x = rng.standard_normal((64, 6, 7, 3)).astype(np.float32)
    g = rng.standard_normal((64, 6, 7, 5)).astype(np.float32)
    dw = conv2d_backprop_filter(x, g, attrs).numpy()
    want = _products(attrs, x, w, g)[2]
    np.testing.assert_allclose(dw, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())
    assert convolution_ops.weight_chunks(64 * 6, 27, 5, tt.float32) > 1
