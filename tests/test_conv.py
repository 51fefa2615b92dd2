"""tt.nn.conv1d, conv2d, max_pool2d and avg_pool2d: values against a numpy reference that
loops over windows, gradients against finite differences (float64, two orders), eager =
interpreter = C, and TensorFlow's rules where they are not obvious (SAME padding, the
average's divisor, where a max-pool tie's gradient goes), all checked once against
TensorFlow 2.21.
"""

import re

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order, check_second_order
from tests.test_backends import derivatives

rng = np.random.default_rng(20261123)


# --- the numpy reference: one window at a time -----------------------------------------------


def window_geometry(size, k, stride, dilation, padding):
    """(pad before, output size) of one spatial axis, from TensorFlow's documented rules."""
    span = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        return max((out - 1) * stride + span - size, 0) // 2, out
    before, after = (0, 0) if padding == "VALID" else padding
    return before, (size + before + after - span) // stride + 1


def windows(x, kernel, strides, dilations, padding):
    """For channels-last `x`: per output position, the indices its window reads along each
    spatial axis (-1 where the window lies in the padding)."""
    per_axis = []
    for axis, (k, stride, dilation) in enumerate(zip(kernel, strides, dilations)):
        size = x.shape[1 + axis]
        pad = padding if isinstance(padding, str) else padding[axis]
        before, out = window_geometry(size, k, stride, dilation, pad)
        index = np.arange(out)[:, None] * stride + np.arange(k)[None, :] * dilation - before
        per_axis.append(np.where((index >= 0) & (index < size), index, -1))
    return per_axis


def reference_conv(x, f, strides, dilations, padding):
    """Channels-last N-D convolution (cross-correlation), grouped when x has a multiple of
    f's input channels."""
    rank = f.ndim - 2
    groups, cg = x.shape[-1] // f.shape[-2], f.shape[-2]
    og = f.shape[-1] // groups
    per_axis = windows(x, f.shape[:rank], strides, dilations, padding)
    out = np.zeros((x.shape[0], *(len(a) for a in per_axis), f.shape[-1]), x.dtype)
    for position in np.ndindex(*out.shape[1:-1]):
        index = [per_axis[axis][p] for axis, p in enumerate(position)]
        inside = np.ones(())
        for i in index:
            inside = np.multiply.outer(inside, i >= 0)  # 0 where the window is in the padding
        window = x[(slice(None), *np.ix_(*index))] * inside[..., None]
        for g in range(groups):
            out[(slice(None), *position, slice(og * g, og * (g + 1)))] = np.tensordot(
                window[..., g * cg : (g + 1) * cg],
                f[..., og * g : og * (g + 1)],
                axes=(list(range(1, rank + 2)), list(range(rank + 1))),
            )
    return out


def reference_pool(x, kind, ksize, strides, padding):
    """Channels-last 2-D max or average pooling over the window's input elements only."""
    rows_of, cols_of = windows(x, ksize, strides, (1, 1), padding)
    out = np.zeros((x.shape[0], len(rows_of), len(cols_of), x.shape[-1]), x.dtype)
    for i, j in np.ndindex(*out.shape[1:3]):
        rows, cols = rows_of[i][rows_of[i] >= 0], cols_of[j][cols_of[j] >= 0]
        window = x[:, rows[:, None], cols[None, :]].reshape(x.shape[0], -1, x.shape[-1])
        out[:, i, j] = window.max(axis=1) if kind == "max" else window.mean(axis=1)
    return out


def to_last(x):
    return np.moveaxis(x, 1, -1)


def to_first(x):
    return np.moveaxis(x, -1, 1)


# --- values ------------------------------------------------------------------------------------

# (input shape, filter shape, strides, padding, dilations) in NHWC terms
CONV2D = [
    ((2, 7, 6, 3), (3, 3, 3, 4), 1, "SAME", 1),
    ((2, 7, 6, 3), (3, 2, 3, 4), 2, "SAME", 1),
    ((1, 8, 9, 2), (2, 3, 2, 3), [2, 3], "VALID", 1),
    ((2, 8, 9, 3), (3, 3, 3, 2), 1, "SAME", 2),
    ((1, 9, 8, 2), (2, 3, 2, 2), [1, 2, 1, 1], "VALID", [1, 2]),
    ((1, 9, 9, 2), (3, 3, 2, 2), 2, "SAME", [1, 1, 2, 1]),
    ((1, 5, 6, 2), (3, 3, 2, 3), 1, [[0, 0], [1, 2], [0, 3], [0, 0]], 1),
    ((2, 4, 4, 3), (1, 1, 3, 5), 1, "VALID", 1),
    ((1, 3, 2, 2), (3, 3, 2, 2), 1, "SAME", 1),  # a kernel larger than the input
    ((2, 6, 6, 4), (3, 3, 2, 6), 1, "SAME", 1),  # grouped: two groups of 2 channels
]


def spatial(value):
    """The two spatial entries of an int or a list of 1, 2 or 4 (NHWC) ints."""
    if isinstance(value, int):
        return (value, value)
    return tuple(value[1:3] if len(value) == 4 else value * (3 - len(value)))


def in_layout(value, data_format):
    """NHWC-ordered strides, dilations or explicit padding in `data_format`'s order."""
    if isinstance(value, list) and len(value) == 4 and data_format == "NCHW":
        return [value[0], value[3], value[1], value[2]]
    return value


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", range(len(CONV2D)))
def test_conv2d_matches_the_reference(case, data_format):
    x_shape, f_shape, strides, padding, dilations = CONV2D[case]
    x, f = rng.standard_normal(x_shape), rng.standard_normal(f_shape)
    pairs = padding if isinstance(padding, str) else [tuple(p) for p in padding[1:3]]
    want = reference_conv(x, f, spatial(strides), spatial(dilations), pairs)
    given = x if data_format == "NHWC" else to_first(x)
    got = tt.nn.conv2d(
        given,
        f,
        in_layout(strides, data_format),
        in_layout(padding, data_format),
        data_format=data_format,
        dilations=in_layout(dilations, data_format),
    ).numpy()
    got = got if data_format == "NHWC" else to_last(got)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv2d_in_float32_and_with_integers():
    x, f = rng.standard_normal((2, 6, 5, 3)), rng.standard_normal((3, 3, 3, 4))
    got = tt.nn.conv2d(x.astype(np.float32), f.astype(np.float32), 2, "SAME")
    assert got.dtype == tt.float32
    want = reference_conv(x, f, (2, 2), (1, 1), "SAME")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    xi, fi = rng.integers(-3, 4, (1, 4, 4, 2)), rng.integers(-3, 4, (2, 2, 2, 3))
    got = tt.nn.conv2d(xi.astype(np.int32), fi.astype(np.int32), 1, "VALID")
    assert got.dtype == tt.int32
    np.testing.assert_array_equal(got.numpy(), reference_conv(xi, fi, (1, 1), (1, 1), "VALID"))
    listed = tt.nn.conv2d(x, f.tolist(), 1, "SAME")  # a list takes the input's dtype
    np.testing.assert_allclose(listed.numpy(), reference_conv(x, f, (1, 1), (1, 1), "SAME"))


@pytest.mark.parametrize(
    "x_shape, f_shape, stride, padding, dilations, data_format",
    [
        ((2, 11, 3), (3, 3, 4), 2, "SAME", None, "NWC"),
        ((2, 11, 3), (3, 3, 4), [1, 1, 1], "VALID", 2, "NWC"),
        ((2, 3, 10), (4, 3, 2), [1], "SAME", [1, 1, 2], "NCW"),
    ],
)
def test_conv1d_matches_the_reference(x_shape, f_shape, stride, padding, dilations, data_format):
    x, f = rng.standard_normal(x_shape), rng.standard_normal(f_shape)
    last = (lambda v: v) if data_format == "NWC" else to_last
    step = stride if isinstance(stride, int) else stride[-1]
    dilation = (
        1 if dilations is None else dilations if isinstance(dilations, int) else dilations[-1]
    )
    want = reference_conv(last(x), f, (step,), (dilation,), padding)
    got = tt.nn.conv1d(x, f, stride, padding, data_format=data_format, dilations=dilations)
    np.testing.assert_allclose(last(got.numpy()), want, rtol=1e-12, atol=1e-12)


# (input shape, ksize, strides, padding) in NHWC terms
POOLS = [
    ((2, 7, 6, 3), 3, 2, "SAME"),
    ((2, 7, 6, 3), [2, 3], [1, 2], "VALID"),
    ((1, 5, 5, 2), 3, 1, "SAME"),
    ((1, 8, 8, 2), [1, 3, 3, 1], [1, 3, 3, 1], "SAME"),
    ((1, 2, 3, 1), 4, 2, "SAME"),  # a window larger than the input
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_pools_match_the_reference(case, kind, data_format, dtype):
    x_shape, ksize, strides, padding = POOLS[case]
    x = rng.standard_normal(x_shape).astype(dtype)
    want = reference_pool(x, kind, spatial(ksize), spatial(strides), padding)
    pool = tt.nn.max_pool2d if kind == "max" else tt.nn.avg_pool2d
    given = x if data_format == "NHWC" else to_first(x)
    got = pool(
        given,
        in_layout(ksize, data_format),
        in_layout(strides, data_format),
        padding,
        data_format=data_format,
    )
    got = got.numpy() if data_format == "NHWC" else to_last(got.numpy())
    assert got.dtype == dtype
    # float32 sums cancel: the error bound is eps times the summands' size (order 1), not the sum's
    tolerance = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-14)
    np.testing.assert_allclose(got, want, **tolerance)


def test_max_pool2d_takes_explicit_padding_and_integers():
    x = rng.standard_normal((2, 5, 6, 3))
    padding = [[0, 0], [2, 1], [0, 2], [0, 0]]
    want = reference_pool(x, "max", (3, 3), (2, 2), [(2, 1), (0, 2)])
    np.testing.assert_array_equal(tt.nn.max_pool2d(x, 3, 2, padding).numpy(), want)
    xi = rng.integers(-9, 9, (1, 5, 5, 2)).astype(np.int32)
    got = tt.nn.max_pool2d(xi, 2, 2, "SAME")
    assert got.dtype == tt.int32
    np.testing.assert_array_equal(got.numpy(), reference_pool(xi, "max", (2, 2), (2, 2), "SAME"))


def test_max_pool_and_avg_pool_take_rank_3_and_4():
    x = rng.standard_normal((2, 9, 3))
    wide = x[:, None]  # (N, 1, W, C): 1-D pooling is 2-D pooling of height 1
    np.testing.assert_array_equal(
        tt.nn.max_pool(x, 3, 2, "SAME").numpy(),
        reference_pool(wide, "max", (1, 3), (1, 2), "SAME")[:, 0],
    )
    np.testing.assert_allclose(
        tt.nn.avg_pool(to_first(x), [3], 2, "VALID", data_format="NCW").numpy(),
        to_first(reference_pool(wide, "avg", (1, 3), (1, 2), "VALID")[:, 0]),
    )
    x4 = rng.standard_normal((1, 4, 4, 2))
    np.testing.assert_array_equal(
        tt.nn.max_pool(x4, 2, 2, "VALID").numpy(), tt.nn.max_pool2d(x4, 2, 2, "VALID").numpy()
    )


# --- TensorFlow's rules, with TensorFlow 2.21's values ----------------------------------------


def test_avg_pool2d_same_divides_by_the_elements_inside_the_input():
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    got = tt.nn.avg_pool2d(x, 2, 1, "SAME").numpy().ravel()
    np.testing.assert_allclose(got, [2.0, 3.0, 3.5, 5.0, 6.0, 6.5, 6.5, 7.5, 8.0])
    x = np.arange(16.0).reshape(1, 4, 4, 1)
    got = tt.nn.avg_pool2d(x, 3, 2, "SAME").numpy().ravel()
    np.testing.assert_allclose(got, [5.0, 6.5, 11.0, 12.5])


TIES = np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 2.0], [3.0, 1.0, 3.0]]).reshape(1, 3, 3, 1)


def _pool_gradient(x, pool, backend=None):
    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(pool(x))
        return tape.gradient(y, x)

    run = gradient if backend is None else tt.function(gradient, backend=backend)
    return run(tt.constant(x)).numpy()


@pytest.mark.parametrize("backend", [None, "c"])
def test_max_pool_tie_gradient_goes_to_the_first_maximum_of_the_window(backend):
    """Row-major window order, as TensorFlow's MaxPoolGrad; padding never takes it."""
    valid = _pool_gradient(TIES, lambda x: tt.nn.max_pool2d(x, 2, 1, "VALID"), backend)
    np.testing.assert_array_equal(valid[0, :, :, 0], [[0, 2, 0], [1, 0, 0], [0, 0, 1]])
    same = _pool_gradient(TIES, lambda x: tt.nn.max_pool2d(x, 3, 1, "SAME"), backend)
    np.testing.assert_array_equal(same[0, :, :, 0], [[0, 6, 0], [2, 0, 0], [0, 0, 1]])


def test_max_pool_of_minus_infinity_keeps_it_and_its_gradient():
    """Padding is never a window's maximum, even against -inf (TensorFlow gives the lowest
    finite value there instead of -inf)."""
    x = np.full((1, 2, 2, 1), -np.inf)
    y = tt.nn.max_pool2d(x, 2, 1, "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [-np.inf] * 4)
    g = _pool_gradient(x, lambda x: tt.nn.max_pool2d(x, 2, 1, "SAME"))
    np.testing.assert_array_equal(g.ravel(), [1.0, 1.0, 1.0, 1.0])  # each window's first


@pytest.mark.parametrize("ksize, strides", [(2, 2), (3, 1)])
def test_a_relu_mask_after_max_pooling_masks_the_pooled_cotangent(ksize, strides):
    """select(relu'(h), window_max_scatter(h, g), 0) is simplified to a scatter of g masked
    at the windows' maxima (tracer/ops/window_ops.mask_the_maxima): the same bits, with ties,
    NaN, windows of negatives alone and overlapping windows (strides 1)."""
    x = rng.standard_normal((2, 6, 6, 3))
    x[0, :2, :2, 0] = -1.0  # a window of negatives: relu gives 0 everywhere in it
    x[1, 2:4, 2:4, 1] = 0.5  # a tie
    x[1, 0, 5, 2] = np.nan

    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            h = tt.nn.max_pool2d(tt.nn.relu(x), ksize, strides, "VALID")
            loss = tt.reduce_sum(
                h * tt.constant(np.arange(h.shape[1] * h.shape[2] * 3.0).reshape(1, *h.shape[1:]))
            )
        return tape.gradient(loss, x)

    compiled = tt.function(gradient)
    np.testing.assert_array_equal(
        compiled(tt.constant(x)).numpy(), gradient(tt.constant(x)).numpy()
    )
    simplified = compiled.get_concrete_function(tt.constant(x)).ir("simplified")
    pooled = re.search(r"%(\d+): f64\[2,\d,\d,3\] = (select|relu_grad)", simplified)
    assert pooled and re.search(rf"= window_max_scatter\[[^\]]*\] %\d+, %{pooled[1]}\b", simplified)


@pytest.mark.parametrize("zero", ["-0.0", "zeros_like"])
def test_a_mask_with_another_zero_keeps_its_bits(zero):
    """select(x > 0, scatter, -0.0) or a zero of the image's shape is not rewritten: the
    pooled form would give +0 where the select gives -0, and mix shapes."""
    x = tt.constant(rng.standard_normal((1, 4, 4, 2)))
    dy = tt.constant(rng.standard_normal((1, 2, 2, 2)))

    def masked(x, dy):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.nn.max_pool2d(x, 2, 2, "VALID")
        other = tt.constant(-0.0, tt.float64) if zero == "-0.0" else tt.zeros_like(x)
        return tt.where(x > 0, tape.gradient(y, x, output_gradients=dy), other)

    want = masked(x, dy).numpy()
    for backend in ("c", "interpreter"):
        got = tt.function(masked, backend=backend)(x, dy).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)


# --- gradients: finite differences, two orders ---------------------------------------------


def distinct(*shape):
    """Values without ties, so that each window's maximum is unique."""
    return rng.permutation(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape) * 0.1


GRADIENT_CASES = {
    "conv2d_same_strided_dilated": (
        lambda x, f: tt.nn.conv2d(x, f, [1, 2], "SAME", dilations=[2, 1]),
        [rng.standard_normal((2, 5, 6, 2)), rng.standard_normal((2, 3, 2, 3))],
    ),
    "conv2d_nchw_explicit": (
        lambda x, f: tt.nn.conv2d(x, f, 1, [[0, 0], [0, 0], [1, 0], [2, 1]], data_format="NCHW"),
        [rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((3, 2, 2, 2))],
    ),
    "conv2d_grouped": (
        lambda x, f: tt.nn.conv2d(x * x, f, 1, "VALID"),
        [rng.standard_normal((1, 4, 4, 4)), rng.standard_normal((2, 2, 2, 4))],
    ),
    "conv1d": (
        lambda x, f: tt.nn.conv1d(x, f, 2, "SAME"),
        [rng.standard_normal((2, 7, 2)), rng.standard_normal((3, 2, 2))],
    ),
    "max_pool2d": (lambda x: tt.nn.max_pool2d(x * x, 3, 2, "SAME"), [distinct(1, 5, 6, 2) + 1]),
    "conv2d_transpose_nchw_dilated": (
        lambda y, f: tt.nn.conv2d_transpose(
            tt.sin(y), f * f, (1, 2, 7, 6), [1, 1, 2, 2], "VALID", "NCHW", dilations=[1, 2]
        ),
        [rng.standard_normal((1, 3, 3, 2)), rng.standard_normal((2, 2, 2, 3))],
    ),
    "avg_pool2d_nchw": (
        lambda x: tt.nn.avg_pool2d(x * x, [2, 3], 2, "SAME", data_format="NCHW"),
        [rng.standard_normal((1, 2, 5, 5))],
    ),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences_to_second_order(name):
    function, args = GRADIENT_CASES[name]
    check_first_order(function, args)
    check_second_order(function, args)


# --- eager = interpreter = C --------------------------------------------------------------------


def _agree(results, reference, tolerance):
    for got, want in zip(results, reference):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_eager_interpreter_and_c_agree_to_second_order(dtype):
    """One compiled function holds every kind, so that the suite compiles little."""

    def network(x, f, g):
        h = tt.nn.conv2d(x, f, [1, 2], "SAME", data_format="NCHW", dilations=[1, 1, 2, 1])
        h = tt.nn.max_pool2d(tt.tanh(h), 2, 1, [[0, 0], [0, 0], [1, 0], [0, 1]], "NCHW")
        h = tt.nn.avg_pool2d(h, 3, 2, "SAME", data_format="NCHW")
        flat = tt.reshape(h, (h.shape[0], h.shape[1], -1))
        return tt.nn.conv1d(flat, g, 1, "VALID", data_format="NCW")

    args = [
        rng.standard_normal((2, 3, 6, 7)).astype(dtype),
        rng.standard_normal((3, 2, 3, 4)).astype(dtype),
        rng.standard_normal((2, 4, 2)).astype(dtype),
    ]
    inputs = [tt.constant(a) for a in args]
    run = derivatives(network, len(inputs))
    eager = run(*inputs)
    compiled = tt.function(run, backend="c")
    c_results = compiled(*inputs)
    assert compiled.get_concrete_function(*inputs).backend == "c"
    interpreted = tt.function(run, backend="interpreter")(*inputs)
    tolerance = 1e-10 if dtype == np.float64 else 1e-4
    _agree(c_results, interpreted, tolerance)
    _agree(c_results, eager, tolerance)


def test_a_batch_size_known_only_when_called():
    spec = [tt.TensorSpec([None, 6, 6, 3], tt.float64), tt.TensorSpec([3, 3, 3, 4], tt.float64)]
    conv = tt.function(lambda x, f: tt.nn.conv2d(x, f, 2, "SAME"), input_signature=spec)
    f = rng.standard_normal((3, 3, 3, 4))
    for batch in (1, 5):
        x = rng.standard_normal((batch, 6, 6, 3))
        want = reference_conv(x, f, (2, 2), (1, 1), "SAME")
        np.testing.assert_allclose(conv(x, f).numpy(), want, rtol=1e-12, atol=1e-12)


# --- errors --------------------------------------------------------------------------------------

X = np.zeros((1, 5, 5, 2), np.float32)
F = np.zeros((3, 3, 2, 4), np.float32)

ERRORS = [
    (lambda: tt.nn.conv2d(X[0], F, 1, "SAME"), ValueError, ["input", "rank 4"]),
    (lambda: tt.nn.conv2d(X, F[0], 1, "SAME"), ValueError, ["filters", "rank 4"]),
    (lambda: tt.nn.conv2d(X, F[:, :, :1].repeat(3, 2), 1, "SAME"), ValueError, ["channels", "3"]),
    (lambda: tt.nn.conv2d(X[..., [0, 1, 0, 1]], F[..., :3], 1, "SAME"), ValueError, ["groups"]),
    (lambda: tt.nn.conv2d(X, tt.constant(F, tt.float64), 1, "SAME"), TypeError, ["float64"]),
    (lambda: tt.nn.conv2d(X, F, 1, "same"), ValueError, ["padding", "'SAME'"]),
    (lambda: tt.nn.conv2d(X, F, 1, "FULL"), ValueError, ["padding"]),
    (lambda: tt.nn.conv2d(X, F, 0, "SAME"), ValueError, ["strides", "positive"]),
    (lambda: tt.nn.conv2d(X, F, [1, -2], "SAME"), ValueError, ["strides", "positive"]),
    (lambda: tt.nn.conv2d(X, F, [1, 2, 1], "SAME"), ValueError, ["strides", "1, 2 or 4"]),
    (lambda: tt.nn.conv2d(X, F, [2, 1, 1, 1], "SAME"), ValueError, ["strides", "batch"]),
    (lambda: tt.nn.conv2d(X, F, 1, "SAME", dilations=0), ValueError, ["dilations"]),
    (lambda: tt.nn.conv2d(X, F, "1", "SAME"), TypeError, ["strides"]),
    (lambda: tt.nn.conv2d(X, F, 1, "SAME", data_format="NWHC"), ValueError, ["data_format"]),
    (lambda: tt.nn.conv2d(X, F, 1, [[0, 0], [1, 1]]), ValueError, ["padding"]),
    (lambda: tt.nn.conv2d(X, F, 1, [[1, 0], [1, 1], [1, 1], [0, 0]]), ValueError, ["batch"]),
    (lambda: tt.nn.conv2d(X, F, 1, [[0, 0], [-1, 1], [1, 1], [0, 0]]), ValueError, ["negative"]),
    (lambda: tt.nn.conv2d(X, F, 1, "VALID", dilations=3), ValueError, ["window", "more than"]),
    (lambda: tt.nn.conv2d(X.astype(bool), F.astype(bool), 1, "SAME"), TypeError, ["bool"]),
    (lambda: tt.nn.conv1d(X[0], F[0], 1, [[0, 0], [1, 1], [0, 0]]), TypeError, ["padding"]),
    (lambda: tt.nn.max_pool2d(X, 6, 1, "VALID"), ValueError, ["window", "more than"]),
    (lambda: tt.nn.max_pool2d(X, 0, 1, "SAME"), ValueError, ["ksize", "positive"]),
    (lambda: tt.nn.max_pool2d(X, 2, 1, [[0, 0], [2, 0], [0, 0], [0, 0]]), ValueError, ["window"]),
    (lambda: tt.nn.avg_pool2d(X, 2, 1, [[0, 0], [1, 0], [0, 0], [0, 0]]), TypeError, ["padding"]),
    (lambda: tt.nn.avg_pool2d(X.astype(np.int32), 2, 1, "SAME"), TypeError, ["int32"]),
    (lambda: tt.nn.max_pool(X[0, 0], 2, 1, "SAME"), ValueError, ["rank 3 or 4"]),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_bad_arguments_raise_naming_the_argument_and_the_line(case):
    call, error, parts = ERRORS[case]
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for part in ["tt.nn.", "test_conv.py:", *parts]:
        assert part in message, f"{part!r} not in {message!r}"


TRANSPOSE_CASES = [  # x's shape, f's shape, strides, padding, dilations, data_format
    ((2, 7, 6, 3), (3, 2, 3, 4), [2, 1], "SAME", 1, "NHWC"),
    ((1, 9, 8, 2), (3, 3, 2, 5), [2, 3], "VALID", 1, "NHWC"),
    ((2, 8, 8, 3), (3, 3, 3, 2), 1, "SAME", 2, "NHWC"),
    ((1, 6, 7, 2), (2, 3, 2, 3), [1, 2], [[0, 0], [1, 2], [0, 1], [0, 0]], 1, "NHWC"),
    ((2, 3, 8, 7), (3, 3, 3, 4), [1, 1, 2, 2], "SAME", 1, "NCHW"),
]


@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv2d_transpose_is_the_gradient_of_conv2d_and_its_adjoint(case):
    x_shape, f_shape, strides, padding, dilations, data_format = TRANSPOSE_CASES[case]
    x, f = tt.constant(rng.standard_normal(x_shape)), tt.constant(rng.standard_normal(f_shape))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.nn.conv2d(x, f, strides, padding, data_format, dilations)
    g = tt.constant(rng.standard_normal(y.shape))
    transposed = tt.nn.conv2d_transpose(g, f, x_shape, strides, padding, data_format, dilations)
    assert transposed.shape == x_shape
    want = tape.gradient(y, x, output_gradients=g).numpy()
    np.testing.assert_allclose(transposed.numpy(), want, rtol=1e-12, atol=1e-12)
    inner = np.sum(y.numpy() * g.numpy())  # <conv(x), g> = <x, conv_transpose(g)>
    np.testing.assert_allclose(np.sum(x.numpy() * transposed.numpy()), inner, rtol=1e-12)


def test_conv2d_transpose_matches_a_scatter_of_the_filters():
    """Each input element adds its filter taps, strides apart: the definition, in loops."""
    y, f = rng.standard_normal((2, 4, 3, 4)), rng.standard_normal((3, 3, 2, 4))
    want = np.zeros((2, 7, 5, 2))  # SAME, stride 2 on 7 and 5: pads 1 before and after
    for n, i, j in np.ndindex(2, 4, 3):
        for di, dj in np.ndindex(3, 3):
            row, col = 2 * i + di - 1, 2 * j + dj - 1
            if 0 <= row < 7 and 0 <= col < 5:
                want[n, row, col] += f[di, dj] @ y[n, i, j]
    got = tt.nn.conv2d_transpose(tt.constant(y), tt.constant(f), [2, 7, 5, 2], 2, "SAME")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    compiled = tt.function(lambda a, b: tt.nn.conv2d_transpose(a, b, [2, 7, 5, 2], 2, "SAME"))
    np.testing.assert_allclose(compiled(tt.constant(y), tt.constant(f)).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize(
    "output_shape, filters, parts",
    [
        ((2, 7), (3, 3, 2, 4), ["output_shape must be 4 sizes"]),
        ((2, 9, 5, 2), (3, 3, 2, 4), ["makes spatial sizes (5, 3)", "(4, 3)"]),
        ((2, 7, 5, 3), (3, 3, 2, 4), ["C_out (2)"]),
        ((2, 7, 5, 2), (3, 3, 2, 5), ["C_in its 4 channels"]),
    ],
)
def test_conv2d_transpose_bad_arguments_name_what_is_wrong(output_shape, filters, parts):
    y = tt.constant(rng.standard_normal((2, 4, 3, 4)))
    with pytest.raises(ValueError) as info:
        tt.nn.conv2d_transpose(y, tt.constant(rng.standard_normal(filters)), output_shape, 2)
    for part in ["tt.nn.conv2d_transpose", "test_conv.py:", *parts]:
        assert part in str(info.value), (part, str(info.value))


def test_depthwise_conv2d_convolves_each_channel_with_its_own_filters():
    rng = np.random.default_rng(4)
    x, f = rng.standard_normal((2, 5, 6, 3)), rng.standard_normal((3, 3, 3, 2))
    got = tt.nn.depthwise_conv2d(tt.constant(x), tt.constant(f), 1, "VALID").numpy()
    want = np.zeros((2, 3, 4, 6))
    for c in range(3):
        for m in range(2):
            for i in range(3):
                for j in range(4):
                    patch = x[:, i : i + 3, j : j + 3, c]
                    want[:, i, j, c * 2 + m] = np.sum(patch * f[:, :, c, m], axis=(1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="filter must have rank 4"):
        tt.nn.depthwise_conv2d(tt.constant(x), tt.constant(f[0]), 1, "VALID")


@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize(
    "strides, padding, dilations", [(1, "SAME", 1), (2, "VALID", 1), (1, "SAME", 2)]
)
def test_depthwise_conv2d_and_its_gradients_are_a_block_diagonal_conv2ds(
    multiplier, strides, padding, dilations
):
    """A depthwise convolution is the full one whose filters join input channel c to output
    channels c * M + m alone: values, and gradients of the input and the filters, eager and
    compiled."""
    rng = np.random.default_rng(12)
    x, f = rng.standard_normal((2, 9, 8, 3)), rng.standard_normal((3, 3, 3, multiplier))
    g = None

    def depthwise(x, f):
        with tt.GradientTape() as tape:
            tape.watch([x, f])
            y = tt.nn.depthwise_conv2d(x, f, [1, strides, strides, 1], padding, dilations=dilations)
            loss = tt.reduce_sum(y * g)
        return [y, *tape.gradient(loss, [x, f])]

    full = np.zeros((3, 3, 3, 3 * multiplier))
    for c in range(3):
        full[:, :, c, c * multiplier : (c + 1) * multiplier] = f[:, :, c]
    x_, full_ = tt.constant(x), tt.constant(full)
    with tt.GradientTape() as tape:
        tape.watch([x_, full_])
        y = tt.nn.conv2d(x_, full_, strides, padding, dilations=dilations)
        g = tt.constant(rng.standard_normal(y.shape))
        loss = tt.reduce_sum(y * g)
    want_x, want_full = (t.numpy() for t in tape.gradient(loss, [x_, full_]))
    want_f = np.stack(
        [want_full[:, :, c, c * multiplier : (c + 1) * multiplier] for c in range(3)], 2
    )
    for run in (depthwise, tt.function(depthwise)):
        got = [t.numpy() for t in run(tt.constant(x), tt.constant(f))]
        for a, b in zip(got, [y.numpy(), want_x, want_f], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def reference_patches(x, sizes, strides, rates, padding):
    """Each window's elements, rows then columns then channels (0 in the padding)."""
    rows_of, cols_of = windows(x, sizes, strides, rates, padding)
    out = np.zeros(
        (x.shape[0], len(rows_of), len(cols_of), len(rows_of[0]) * len(cols_of[0]) * x.shape[3]),
        x.dtype,
    )
    for i, j in np.ndindex(*out.shape[1:3]):
        parts = []
        for r in rows_of[i]:
            for c in cols_of[j]:
                parts.append(x[:, r, c] if r >= 0 and c >= 0 else np.zeros_like(x[:, 0, 0]))
        out[:, i, j] = np.concatenate(parts, axis=-1)
    return out


def test_extract_patches_gives_tensorflows_documented_patches():
    """The examples of tf.image.extract_patches' documentation: 3x3 patches 5 apart of a
    10x10 image holding 1..100, without and with rates of 2."""
    n = 10
    images = [[[[x * n + y + 1] for y in range(n)] for x in range(n)]]
    got = tt.image.extract_patches(images, [1, 3, 3, 1], [1, 5, 5, 1], [1, 1, 1, 1], "VALID")
    np.testing.assert_array_equal(
        got.numpy()[0],
        [
            [[1, 2, 3, 11, 12, 13, 21, 22, 23], [6, 7, 8, 16, 17, 18, 26, 27, 28]],
            [[51, 52, 53, 61, 62, 63, 71, 72, 73], [56, 57, 58, 66, 67, 68, 76, 77, 78]],
        ],
    )
    got = tt.image.extract_patches(images, [1, 3, 3, 1], [1, 5, 5, 1], [1, 2, 2, 1], "VALID")
    np.testing.assert_array_equal(
        got.numpy()[0, :, :, :3], [[[1, 3, 5], [6, 8, 10]], [[51, 53, 55], [56, 58, 60]]]
    )


@pytest.mark.parametrize("backend", ["eager", "interpreter", "c"])
@pytest.mark.parametrize(
    "sizes, strides, rates, padding",
    [([2, 3], [1, 2], [1, 1], "SAME"), ([3, 2], [2, 1], [2, 1], "SAME"), ([2, 2], 3, 2, "VALID")],
)
def test_extract_patches_matches_the_reference(sizes, strides, rates, padding, backend):
    for dtype in (np.float64, np.int32):
        x = (rng.standard_normal((2, 7, 6, 3)) * 10).astype(dtype)
        want = reference_patches(
            x,
            sizes,
            [strides] * 2 if isinstance(strides, int) else strides,
            [rates] * 2 if isinstance(rates, int) else rates,
            padding,
        )
        patches = lambda x: tt.image.extract_patches(x, sizes, strides, rates, padding)  # noqa: E731
        run = patches if backend == "eager" else tt.function(patches, backend=backend)
        got = run(tt.constant(x))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_extract_patches_bad_arguments_name_the_function_and_the_line():
    for call, parts in [
        (lambda: tt.image.extract_patches(X, [1, 2, 2, 2], 1, 1, "SAME"), ["sizes", "batch"]),
        (lambda: tt.image.extract_patches(X, 2, 1, 1, [[0, 0]] * 4), ["padding"]),
        (lambda: tt.image.extract_patches(X[0], 2, 1, 1, "SAME"), ["rank 4"]),
        (lambda: tt.image.extract_patches(X, 2, 0, 1, "SAME"), ["strides", "positive"]),
    ]:
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        for part in ["tt.image.extract_patches", "test_conv.py:", *parts]:
            assert part in str(info.value), (part, str(info.value))
