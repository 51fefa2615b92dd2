"""tt.math.erfc, GELU's far negative side, tt.math.multiply_no_nan, tt.atan2, tt.nn.convolution,
conv3d, conv1d_transpose, conv3d_transpose and the 1-D and 3-D pools against TensorFlow 2.21:
values and gradients eagerly and in tt.function with both backends, and shapes.

The expected numbers are TensorFlow 2.21's printed values. TensorFlow's CPU kernels flush
subnormal results to zero, where libm's (tracer's) keep them: those compare with an absolute
tolerance of the dtype's smallest normal number. The convolutions' and pools' inputs are
fixed ramps (`_ramp`), and each case is compared by its shape and digests: the output's
weighted sum and each input's gradient of that sum, weighted again (`_digests`), taken in
float64 from each library's arrays."""

import numpy as np
import pytest

import tracer as tt
from codegen import array_math

BACKENDS = [None, "c", "interpreter"]  # None: eager


def _in(backend, function):
    return function if backend is None else tt.function(function, backend=backend)


def _derivatives(function):
    """x -> (f(x), f'(x), f''(x)) of an elementwise f, by nested tapes."""

    def run(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = function(x)
            slope = inner.gradient(y, x)
        return y, slope, outer.gradient(slope, x)

    return run


def _close(got, want, dtype, rtol):
    np.testing.assert_allclose(
        np.asarray(got, np.float64), want, rtol=rtol, atol=np.finfo(dtype).tiny
    )


# --- erfc and GELU -----------------------------------------------------------------------

ERFC_POINTS = [-30.0, -10.0, -5.0, -1.0, -0.0, 0.5, 2.0, 10.0, 27.0]
# TF 2.21's printed values: tf.math.erfc, its first and second derivatives, at ERFC_POINTS
ERFC_TF = {
    np.float32: (
        [2.0, 2.0, 2.0, 1.842700719833374, 1.0, 0.4795001149177551, 0.004677735269069672, 0.0, 0.0],
        [-0.0, -0.0, -1.5670867381523124e-11, -0.41510751843452454, -1.128379225730896,
         -0.8787826299667358, -0.02066698670387268, -0.0, -0.0],
        [-0.0, -0.0, -1.5670867381523124e-10, -0.8302150368690491, -0.0, 0.8787826299667358,
         0.08266794681549072, 0.0, 0.0],
    ),
    np.float64: (
        [2.0, 2.0, 1.9999999999984626, 1.8427007929497148, 1.0, 0.47950012218695337,
         0.004677734981047266, 2.0884875837625443e-45, 0.0],
        [-0.0, -4.1976562313544165e-44, -1.5670866531017336e-11, -0.41510749742059466,
         -1.1283791670955126, -0.8787825789354448, -0.020666985354092057,
         -4.1976562313544165e-44, -0.0],
        [-0.0, -8.395312462708832e-43, -1.5670866531017336e-10, -0.8302149948411893, -0.0,
         0.8787825789354448, 0.08266794141636823, 8.395312462708832e-43, 0.0],
    ),
}  # fmt: skip

GELU_POINTS = [-40.0, -10.0, -5.0, -1.0, 0.0, 1.0, 3.0, 10.0]
# TF 2.21's printed values: tf.nn.gelu (approximate=False) and its derivative at GELU_POINTS
GELU_TF = {
    np.float32: (
        [-0.0, -7.619853608132182e-23, -1.433257807548216e-06, -0.15865525603294373, 0.0,
         0.8413447141647339, 2.995950222015381, 10.0],
        [0.0, -7.618400084582658e-22, -7.146946700231638e-06, -0.08331549167633057, 0.5,
         1.0833154916763306, 1.0119456052780151, 1.0],
    ),
    np.float64: (
        [-0.0, -7.619866192916435e-23, -1.4332584954991237e-06, -0.15865525807260966, 0.0,
         0.8413447419273903, 2.995950305222479, 10.0],
        [0.0, -7.618413001845379e-22, -7.14694892786675e-06, -0.08331546644653365, 0.5,
         1.0833154664465336, 1.011945648796989, 1.0],
    ),
}  # fmt: skip
# float32's erfc and GELU are within a few ulps of TensorFlow's (Eigen's own float erfc),
# float64's erfc within an ulp (libm's, TensorFlow's too). TensorFlow's float64 GELU takes
# 1 / sqrt(2) rounded to float32 (0.7071067690849304): its erfc's argument is 1.7e-8 off,
# relative, and the result x^2 times that (1.7e-6 at x = -10); tracer's takes the float64 one
RTOL = {np.float32: 1e-6, np.float64: 1e-15}
GELU_RTOL = {np.float32: 1e-6, np.float64: 2e-6}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erfc_and_its_derivatives_are_tensorflows(dtype, backend):
    x = tt.constant(np.array(ERFC_POINTS, dtype))
    results = _in(backend, _derivatives(tt.math.erfc))(x)
    for got, want in zip(results, ERFC_TF[dtype]):
        assert got.dtype == dtype and got.shape == (9,)
        _close(got.numpy(), want, dtype, RTOL[dtype])
    assert np.signbit(results[1].numpy()[[0, -1]]).all()  # -0.0, as TensorFlow's


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_far_on_the_negative_side_is_tensorflows(dtype, backend):
    x = tt.constant(np.array(GELU_POINTS, dtype))
    value, slope, _ = _in(backend, _derivatives(tt.nn.gelu))(x)
    want_value, want_slope = GELU_TF[dtype]
    _close(value.numpy(), want_value, dtype, GELU_RTOL[dtype])
    _close(slope.numpy(), want_slope, dtype, GELU_RTOL[dtype])
    assert value.numpy()[1] < 0  # -7.6e-23, not the -0.0 of 1 + erf(x / sqrt(2))


def test_gelu_is_erfcs_also_where_no_module_can_be_built(monkeypatch):
    monkeypatch.setattr(array_math, "_entries", {"float32": None, "float64": None})
    x = tt.constant(np.array(GELU_POINTS))
    value, slope, _ = _derivatives(tt.nn.gelu)(x)
    _close(value.numpy(), GELU_TF[np.float64][0], np.float64, GELU_RTOL[np.float64])
    _close(slope.numpy(), GELU_TF[np.float64][1], np.float64, GELU_RTOL[np.float64])


def test_erfc_over_large_arrays_is_the_per_element_one():
    """From ERF_OVER_ARRAYS_FROM elements the eager kernel is C's loop, below math.erfc's."""
    x = np.linspace(-6.0, 30.0, 1000)
    np.testing.assert_allclose(
        tt.math.erfc(x).numpy(), [tt.math.erfc(v).numpy() for v in x], rtol=1e-15, atol=1e-300
    )
    half = tt.math.erfc(tt.constant(x[:100].astype(np.float16)))
    assert half.dtype == tt.float16
    with pytest.raises(TypeError):
        tt.math.erfc(tt.constant([1, 2]))


# --- multiply_no_nan, atan2 ----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiply_no_nan_and_its_gradients_are_tensorflows(backend):
    def run(x, y):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            z = tt.math.multiply_no_nan(x, y)
        return z, tape.gradient(z, x), tape.gradient(z, y)

    x = tt.constant([1.0, np.inf, np.nan, 2.0, -3.0])
    y = tt.constant([0.0, 0.0, 0.0, 3.0, 0.5])
    z, dx, dy = _in(backend, run)(x, y)
    # TF 2.21's printed values
    np.testing.assert_array_equal(z.numpy(), [0.0, 0.0, 0.0, 6.0, -1.5])
    np.testing.assert_array_equal(dx.numpy(), [0.0, 0.0, 0.0, 3.0, 0.5])
    np.testing.assert_array_equal(dy.numpy(), [1.0, np.inf, np.nan, 2.0, -3.0])
    z, dx, dy = _in(backend, run)(tt.constant([[1.0], [-2.0]]), tt.constant([0.5, -1.0, 3.0]))
    # TF 2.21's printed values: the gradients summed back over the broadcast axes
    np.testing.assert_array_equal(z.numpy(), [[0.5, -1.0, 3.0], [-1.0, 2.0, -6.0]])
    np.testing.assert_array_equal(dx.numpy(), [[2.5], [2.5]])
    np.testing.assert_array_equal(dy.numpy(), [-1.0, -1.0, -1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_atan2_at_the_top_level_is_tensorflows(backend):
    def run(y, x):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch([y, x])
            z = tt.atan2(y, x)
        return z, tape.gradient(z, y), tape.gradient(z, x)

    assert tt.atan2 is tt.math.atan2 and "atan2" in dir(tt)
    y = tt.constant([1.0, -1.0, 0.0, 2.0], tt.float64)
    x = tt.constant([-1.0, -1.0, -1.0, 0.5], tt.float64)
    z, dy, dx = _in(backend, run)(y, x)
    # TF 2.21's printed values
    np.testing.assert_allclose(
        z.numpy(), [2.356194490192345, -2.356194490192345, 3.141592653589793, 1.3258176636680323]
    )
    np.testing.assert_allclose(dy.numpy(), [-0.5, -0.5, -1.0, 0.11764705882352941])
    np.testing.assert_allclose(dx.numpy(), [-0.5, 0.5, -0.0, -0.47058823529411764])


# --- convolutions and pools ------------------------------------------------------------------


def _ramp(shape, a=0.7, b=0.3):
    return np.sin(np.arange(int(np.prod(shape))) * a + b).reshape(shape)


X5 = _ramp((2, 5, 6, 4, 3))
F5 = _ramp((3, 2, 3, 3, 4), 1.3, 0.2)
F3 = _ramp((3, 3, 2), 1.1)
X3 = _ramp((2, 9, 3))
F32 = np.float32

CASES = {
    "conv3d_valid": (lambda x, f: tt.nn.conv3d(x, f, [1, 1, 1, 1, 1], "VALID"), [X5, F5]),
    "conv3d_same_strided": (lambda x, f: tt.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME"), [X5, F5]),
    "conv3d_float32": (
        lambda x, f: tt.nn.conv3d(x, f, [1, 2, 2, 1, 1], "SAME"),
        [X5.astype(F32), F5.astype(F32)],
    ),
    "convolution_3d_dilated": (
        lambda x, f: tt.nn.convolution(x, f, padding="SAME", dilations=[2, 1, 2]),
        [X5, F5],
    ),
    "convolution_1d": (
        lambda x, f: tt.nn.convolution(x, f, strides=2, padding="SAME"),
        [_ramp((2, 7, 3)), F3],
    ),
    "convolution_2d": (
        lambda x, f: tt.nn.convolution(x, f, strides=[1, 2], padding="VALID"),
        [_ramp((2, 5, 6, 3)), _ramp((2, 3, 3, 2), 1.1)],
    ),
    "conv3d_transpose_same": (
        lambda y, f: tt.nn.conv3d_transpose(y, f, [2, 7, 6, 4, 3], [1, 2, 2, 2, 1], "SAME"),
        [_ramp((2, 4, 3, 2, 4)), F5],
    ),
    "conv3d_transpose_valid": (
        lambda y, f: tt.nn.conv3d_transpose(y, f, [2, 5, 6, 4, 3], 1, "VALID"),
        [_ramp((2, 3, 5, 2, 4)), F5],
    ),
    "conv1d_transpose_same": (
        lambda y, f: tt.nn.conv1d_transpose(y, f, [2, 7, 3], 2, "SAME"),
        [_ramp((2, 4, 2)), F3],
    ),
    "max_pool1d": (lambda x: tt.nn.max_pool1d(x, 3, 2, "SAME"), [X3]),
    "avg_pool1d": (lambda x: tt.nn.avg_pool1d(x, 3, 2, "SAME"), [X3]),
    "max_pool1d_float32": (lambda x: tt.nn.max_pool1d(x, [2], [1], "VALID"), [X3.astype(F32)]),
    "avg_pool1d_float32": (lambda x: tt.nn.avg_pool1d(x, [2], [1], "VALID"), [X3.astype(F32)]),
    "max_pool3d": (lambda x: tt.nn.max_pool3d(x, [2, 3, 2], [1, 2, 2], "SAME"), [X5.astype(F32)]),
    "avg_pool3d_same": (
        lambda x: tt.nn.avg_pool3d(x, [2, 3, 2], [1, 2, 2], "SAME"),
        [X5.astype(F32)],
    ),
    "avg_pool3d_valid": (
        lambda x: tt.nn.avg_pool3d(x, [3, 2, 2], [2, 1, 2], "VALID"),
        [X5.astype(F32)],
    ),
}

# TF 2.21's printed values: (shape, the output's digest, each input's gradient's digest) of
# the same functions of tf.nn on the same arrays (TensorFlow's CPU kernels have no dilated
# conv3d or transposed convolution, nor 3-D pools of float64: tf.nn.convolution's dilated
# 3-D case is its own, through space_to_batch)
DIGESTS_TF = {
    "conv3d_valid": ((2, 3, 5, 2, 4), -86.9615091988114, [0.020629305215725147, 31.244359660739665]),
    "conv3d_same_strided": ((2, 3, 6, 2, 4), 51.807400978832106, [4.501888915037606, -36.508548294800235]),
    "conv3d_float32": ((2, 3, 3, 4, 4), 65.37081949250347, [-2.679070240131711, -37.02365516207404]),
    "convolution_3d_dilated": ((2, 5, 6, 4, 4), 0.10281711583090392, [847.9533825551293, 5.365408228214556]),
    "convolution_1d": ((2, 4, 2), 0.24617205914572104, [-0.13559929453143268, 1.6479787526875715]),
    "convolution_2d": ((2, 4, 2, 2), 0.8184561574429975, [4.989835890314643, 13.069833590393294]),
    "conv3d_transpose_same": ((2, 7, 6, 4, 3), -4.232934364446284, [1.6745995600573766, 14.098730142304449]),
    "conv3d_transpose_valid": ((2, 5, 6, 4, 3), -0.3634471461450759, [-1.0594549187553444, -21.73692684297862]),
    "conv1d_transpose_same": ((2, 7, 3), 4.82079056501168, [-0.15121099904164564, 6.933649138275593]),
    "max_pool1d": ((2, 5, 3), 4.424560946682662, [0.9682143811678152]),
    "avg_pool1d": ((2, 5, 3), 2.4144271667027746, [0.4329886788302344]),
    "max_pool1d_float32": ((2, 8, 3), 2.7399834167971187, [6.908364285300733]),
    "avg_pool1d_float32": ((2, 8, 3), 1.2282307336485334, [3.3721582902562734]),
    "max_pool3d": ((2, 5, 3, 2, 3), -0.8714587292638885, [3.7604441193080085]),
    "avg_pool3d_same": ((2, 5, 3, 2, 3), 0.6536361748931891, [0.3317123799220751]),
    "avg_pool3d_valid": ((2, 2, 5, 2, 3), 0.26048446060737496, [0.17663124265599098]),
}  # fmt: skip


def _digests(function, args):
    """(shape, <y, w>, [<dL/dx_i, r_i>]) of y = function(*args) and L = sum(y * w), in
    float64, with w and r_i fixed ramps of the shapes."""

    def run(*xs):
        with tt.GradientTape() as tape:
            tape.watch(list(xs))
            y = function(*xs)
            w = np.cos(np.arange(int(np.prod(y.shape))) * 0.3).reshape(y.shape)
            loss = tt.reduce_sum(y * tt.constant(w, y.dtype))
        return y, tape.gradient(loss, list(xs))

    return run


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_convolutions_and_pools_are_tensorflows(name, backend):
    function, args = CASES[name]
    y, grads = _in(backend, _digests(function, args))(*[tt.constant(a) for a in args])
    shape, value, moved = DIGESTS_TF[name]
    assert y.shape == shape and y.dtype == args[0].dtype
    w = np.cos(np.arange(y.numpy().size) * 0.3).reshape(shape)
    got = [np.sum(y.numpy().astype(np.float64) * w)]
    got += [np.sum(g.numpy().astype(np.float64) * _ramp(g.shape, 0.4, 0.1)) for g in grads]
    rtol = 1e-6 if args[0].dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, [value, *moved], rtol=rtol, atol=rtol * 10)


def test_channels_first_layouts_and_the_rank_dispatch_agree_with_channels_last():
    x, f = tt.constant(X5), tt.constant(F5)
    last = tt.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME")
    first = tt.nn.conv3d(tt.transpose(x, (0, 4, 1, 2, 3)), f, [1, 1, 2, 1, 2], "SAME", "NCDHW")
    np.testing.assert_array_equal(tt.transpose(first, (0, 2, 3, 4, 1)).numpy(), last.numpy())
    via = tt.nn.convolution(tt.transpose(x, (0, 4, 1, 2, 3)), f, [2, 1, 2], "SAME", "NCDHW")
    np.testing.assert_array_equal(via.numpy(), first.numpy())
    pooled = tt.nn.max_pool3d(x, 2, [1, 2, 2], "SAME")
    np.testing.assert_array_equal(tt.nn.max_pool(x, 2, [1, 2, 2], "SAME").numpy(), pooled.numpy())
    channels_first = tt.nn.avg_pool3d(tt.transpose(x, (0, 4, 1, 2, 3)), 2, 1, "VALID", "NCDHW")
    np.testing.assert_allclose(
        tt.transpose(channels_first, (0, 2, 3, 4, 1)).numpy(),
        tt.nn.avg_pool(x, 2, 1, "VALID", "NDHWC").numpy(),
    )
    y = tt.constant(_ramp((2, 4, 2)))
    transposed = tt.nn.conv1d_transpose(tt.transpose(y, (0, 2, 1)), F3, [2, 3, 7], 2, "SAME", "NCW")
    np.testing.assert_allclose(
        tt.transpose(transposed, (0, 2, 1)).numpy(),
        tt.nn.conv1d_transpose(y, F3, [2, 7, 3], 2, "SAME").numpy(),
    )


@pytest.mark.parametrize(
    "convolve, transpose, x_shape, f_shape",
    [
        (
            lambda x, f: tt.nn.conv3d(x, f, [2, 1, 2], "SAME", dilations=[1, 2, 2]),
            lambda y, f, shape: tt.nn.conv3d_transpose(
                y, f, shape, [2, 1, 2], "SAME", dilations=[1, 2, 2]
            ),
            (2, 5, 6, 7, 3),
            (2, 3, 2, 3, 4),
        ),
        (
            lambda x, f: tt.nn.conv1d(x, f, 1, "VALID", dilations=2),
            lambda y, f, shape: tt.nn.conv1d_transpose(y, f, shape, 1, "VALID", dilations=2),
            (2, 9, 3),
            (3, 3, 2),
        ),
    ],
)
def test_dilated_transposes_are_the_adjoints_of_the_convolutions(
    convolve, transpose, x_shape, f_shape
):
    """<conv(x), y> = <x, conv_transpose(y)>, for the dilations TensorFlow's CPU kernels lack."""
    x, f = _ramp(x_shape), _ramp(f_shape, 1.3)
    forward = convolve(x, f).numpy()
    y = _ramp(forward.shape, 0.9, 0.4)
    backward = transpose(y, f, x_shape).numpy()  # the same filters
    assert backward.shape == x_shape
    np.testing.assert_allclose(np.sum(forward * y), np.sum(x * backward), rtol=1e-12)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: tt.nn.conv3d(X5, F5[..., 0], 1, "SAME"), ValueError, "KD, KH, KW, C_in, C_out"),
        (
            lambda: tt.nn.conv3d(X5, F5, 1, [[0, 0]] * 5),
            TypeError,
            "padding must be 'SAME' or 'VALID'",
        ),
        (lambda: tt.nn.conv3d(X5[0], F5, 1, "SAME"), ValueError, "rank 5"),
        (lambda: tt.nn.convolution(X3, X3[0], padding="SAME"), ValueError, "rank 3, 4 or 5"),
        (lambda: tt.nn.convolution(X3, F3, data_format="NHWC"), ValueError, "'NWC' or 'NCW'"),
        (
            lambda: tt.nn.conv3d_transpose(X5, F5, [2, 5, 6, 4, 3], 1, "SAME"),
            ValueError,
            "filters must be (KD, KH, KW, C_out, C_in)",
        ),
        (lambda: tt.nn.max_pool1d(X5[0], 2, 1, "VALID"), ValueError, "rank 3"),
        (lambda: tt.nn.avg_pool3d(X3, 2, 1, "VALID"), ValueError, "rank 5"),
        (lambda: tt.nn.max_pool3d(X5, 7, 1, "VALID"), ValueError, "the window spans 7"),
    ],
)
def test_bad_arguments_raise_errors_naming_the_function(call, error, words):
    with pytest.raises(error, match="tt.nn.") as raised:
        call()
    assert words in str(raised.value)
