"""Held-out: special functions and tf.signal, their values and their GradientTape
derivatives (first, and for some second order) in float32 and float64.

Special functions: lgamma, digamma, polygamma, igamma/igammac, betainc, lbeta, zeta, erf,
erfc, erfinv, ndtri, the modified Bessel functions i0/i0e/i1/i1e (tf.math.bessel_* and
tf.math.special.*) and the rest of tf.math.special (Bessel j/k/y, dawsn, expint, fresnel,
spence), with a few points at the edges of their domains (0, negative, poles, inf, NaN);
xlogy/xlog1py/xdivy broadcast and second order; log_sigmoid and softplus at large |x|;
reduce_logsumexp and cumulative_logsumexp with -inf; cumsum/cumprod exclusive and reversed
along other axes and with zeros; polyval with tensor coefficients; segment,
unsorted-segment and sparse-segment gradients; top_k, reduce_max/min gradients with ties
along several axes; tf.norm's orders at zero; real/imag/angle/conj/abs of complex numbers
with their gradients. tf.signal: fft/ifft in one, two and three dimensions, rfft/irfft with
fft_length cropping and padding, fftshift/ifftshift, frame with pad_end, overlap_and_add,
stft/inverse_stft with window functions, the windows, the mel weight matrix, MFCCs and
dct/idct of types 1-4 with norm="ortho", mdct; gradients through fft magnitudes, rfft, irfft,
stft, inverse_stft, dct and MFCCs.

A `grad_case` differentiates a weighted sum of its function's outputs (distinct weights;
a complex output contributes its real and imaginary parts with different weights) with
respect to its floating and complex inputs; `order=2` also differentiates the weighted sum
of those gradients again. Each case runs eagerly and inside tf.function (tracer: once per
backend, C and the numpy interpreter), taking its tensors as arguments, and prints one line
per mode: `case [mode] values`, each value as `dtype shape [v ...]` to 5 significant digits
(-0 printed as 0, a complex number as `re,im`, `None` for no gradient), or
`case [mode] ERR TypeName: message`, so the two engines' outputs can be compared line by
line. Inputs come from a seeded numpy generator. An optional second argument keeps only the
cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

nan, inf = float("nan"), float("inf")
CASES = []
rng = np.random.default_rng(71)


def f64(a):
    return np.asarray(a, np.float64)


def f32(a):
    return np.asarray(a, np.float32)


def c64(a):
    return np.asarray(a, np.complex64)


def c128(a):
    return np.asarray(a, np.complex128)


def i32(a):
    return np.asarray(a, np.int32)


def gauss(*shape):
    return rng.standard_normal(shape)


def cgauss(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def uniform(lo, hi, *shape):
    return rng.uniform(lo, hi, shape)


# ---- registration, printing -------------------------------------------------------------


def case(name, *inputs):
    """Registers `fn(*tensors)`, whose results are printed as they are."""

    def register(fn):
        CASES.append((name, fn, inputs))
        return fn

    return register


def op(path, **kwargs):
    """`tf.<path>`, looked up when the case runs (a missing op fails that case alone)."""

    def call(*args):
        target = tf
        for part in path.split("."):
            target = getattr(target, part)
        return target(*args, **kwargs)

    return call


def weights(shape, phase):
    n = int(np.prod(shape))
    return (1.0 + 0.5 * np.sin(1.7 * np.arange(n) + phase)).reshape(shape)


def weighted_sum(y):
    """A real scalar that depends on every entry of `y` (or of each of several) with a
    distinct weight; a complex entry's real and imaginary parts weigh differently."""
    if isinstance(y, (tuple, list)):
        return tf.add_n([weighted_sum(t) for t in y])
    if isinstance(y, tf.IndexedSlices):
        y = tf.convert_to_tensor(y)
    if not (y.dtype.is_floating or y.dtype.is_complex):
        return tf.cast(tf.reduce_sum(y), tf.float32)
    real_dtype = {tf.complex64: tf.float32, tf.complex128: tf.float64}.get(y.dtype, y.dtype)
    wr, wi = weight(y, 0.3, real_dtype), weight(y, 1.1, real_dtype)
    if y.dtype.is_complex:
        return tf.reduce_sum(tf.math.real(y) * wr) + tf.reduce_sum(tf.math.imag(y) * wi)
    return tf.reduce_sum(y * wr)


def weight(y, phase, dtype):
    """`weights` for `y`'s shape, computed when the function runs if the shape is only
    known then (segment counts)."""
    dims = list(y.shape)
    if any(d is None for d in dims):
        k = tf.cast(tf.range(tf.size(y)), tf.float64)
        w = tf.reshape(1.0 + 0.5 * tf.sin(1.7 * k + phase), tf.shape(y))
        return tf.cast(w, dtype)
    return tf.constant(weights(tuple(int(d) for d in dims), phase), dtype=dtype)


def dense(g):
    if isinstance(g, tf.IndexedSlices):
        return tf.convert_to_tensor(g)
    return g


def grad_case(name, *inputs, order=1, wrt=None):
    """Registers (values, gradients) of `weighted_sum(fn(*tensors))` with respect to the
    inputs numbered in `wrt` (all floating and complex inputs by default); with `order=2`
    also the gradients of the weighted sum of those gradients."""
    if wrt is None:
        wrt = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind in "fc"]

    def register(fn):
        def first(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as tape:
                tape.watch(xs)
                y = fn(*args)
                loss = weighted_sum(y)
            return y, tuple(dense(g) for g in tape.gradient(loss, xs))

        def second(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as outer:
                outer.watch(xs)
                with tf.GradientTape() as inner:
                    inner.watch(xs)
                    y = fn(*args)
                    loss = weighted_sum(y)
                g = [dense(d) for d in inner.gradient(loss, xs)]
                parts = [weighted_sum(d) for d in g if d is not None]
                total = tf.add_n(parts) if parts else None
            h = [None] * len(xs) if total is None else outer.gradient(total, xs)
            return y, tuple(g), tuple(dense(d) for d in h)

        CASES.append((name, first if order == 1 else second, inputs))
        return fn

    return register


def fmt(x):
    text = f"{x:.5g}"
    return "0" if text == "-0" else text


def to_numpy(v):
    if isinstance(v, (tuple, list)):
        return tuple(to_numpy(x) for x in v)
    if v is None:
        return None
    if isinstance(v, tf.IndexedSlices):
        v = tf.convert_to_tensor(v)
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def render(v):
    if isinstance(v, tuple):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    if v is None:
        return "None"
    a = np.asarray(v)
    if a.dtype.kind == "c":
        items = [f"{fmt(z.real)},{fmt(z.imag)}" for z in a.ravel()]
    elif a.dtype.kind == "f":
        items = [fmt(x) for x in a.ravel()]
    else:
        items = [str(x) for x in a.ravel()]
    return f"{a.dtype.name} {tuple(a.shape)} [{' '.join(items)}]"


def run_case(name, fn, inputs):
    try:
        args = [tf.constant(a) for a in inputs]
    except Exception as e:  # report it and go on
        for mode, _ in MODES:
            print(f"{name} [{mode}] inputs {failure(e)}")
        return
    for mode, wrap in MODES:
        try:
            f = fn if wrap is None else wrap(fn)
            text = render(to_numpy(f(*args)))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


# ---- gamma family -------------------------------------------------------------------------
POS = [0.1, 0.5, 1.0, 2.5, 10.0, 150.0]
grad_case("lgamma_f64", f64(POS + [-0.5, -2.5]), order=2)(op("math.lgamma"))
grad_case("lgamma_f32", f32(POS + [-1.5]))(op("math.lgamma"))
grad_case("lgamma_poles_grad", f64([0.0, -1.0, -2.0, -1e-10]))(op("math.lgamma"))
grad_case("digamma_f64", f64([0.1, 1.0, 3.7, -0.5, 100.0, 1e-8]), order=2)(op("math.digamma"))
grad_case("digamma_f32", f32([0.25, 1.0, 6.0, -1.5]))(op("math.digamma"))
case("digamma_edges_f64", f64([0.0, -0.0, -1.0, -2.0, -inf, inf, nan, 1e300]))(op("math.digamma"))
grad_case("polygamma_f64", f64([0.0, 1.0, 2.0, 3.0, 1.0]), f64([0.5, 1.0, 2.0, 5.0, 30.0]))(
    op("math.polygamma")
)
grad_case("polygamma_f32", f32([1.0, 2.0, 4.0]), f32([0.75, 3.0, 1.5]))(op("math.polygamma"))
case(
    "polygamma_edges",
    f64([1.0, 1.0, -1.0, 1.5, 0.0, 2.0, 1.0]),
    f64([0.0, -1.0, 2.0, 2.0, -0.5, inf, nan]),
)(op("math.polygamma"))
grad_case("lbeta_f64", f64([[1.0, 2.0], [0.5, 0.5], [3.0, 4.0], [10.0, 0.1]]))(op("math.lbeta"))
grad_case("lbeta_f32_rank3", f32(uniform(0.2, 4.0, 2, 2, 3)))(op("math.lbeta"))
case("lbeta_edges", f64([[0.0, 1.0], [inf, 1.0], [-1.0, 2.0]]), f64(np.zeros((2, 0))))(
    lambda a, e: (tf.math.lbeta(a), tf.math.lbeta(e))
)

# ---- incomplete gamma and beta ------------------------------------------------------------
IG_A = f64([0.5, 1.0, 2.0, 5.0, 10.0, 0.1])
IG_X = f64([0.3, 1.0, 2.0, 5.0, 20.0, 0.01])
grad_case("igamma_f64", IG_A, IG_X)(op("math.igamma"))
grad_case("igammac_f64", IG_A, IG_X)(op("math.igammac"))
grad_case("igamma_f32", f32(IG_A), f32(IG_X))(op("math.igamma"))
case(
    "igamma_edges",
    f64([1.0, 1.0, 0.0, -1.0, 2.0, nan, 1.0, inf]),
    f64([0.0, inf, 1.0, 1.0, -1.0, 1.0, nan, 1.0]),
)(lambda a, x: (tf.math.igamma(a, x), tf.math.igammac(a, x)))
case("igamma_broadcast_large", f64([[1e3], [50.0]]), f64([900.0, 1000.0, 1100.0]))(
    op("math.igamma")
)
BI_A = f64([0.5, 1.0, 2.0, 5.0, 0.1])
BI_B = f64([0.5, 3.0, 2.0, 1.0, 10.0])
BI_X = f64([0.2, 0.5, 0.9, 0.99, 0.01])
grad_case("betainc_f64", BI_A, BI_B, BI_X)(op("math.betainc"))
grad_case("betainc_f32_x", f32(BI_A), f32(BI_B), f32(BI_X))(op("math.betainc"))
case(
    "betainc_edges",
    f64([1.0, 1.0, 2.0, 2.0, 0.0, -1.0, 2.0]),
    f64([1.0, 1.0, 3.0, 3.0, 1.0, 1.0, 3.0]),
    f64([0.0, 1.0, -0.5, 1.5, 0.5, 0.5, nan]),
)(op("math.betainc"))

# ---- zeta, erf family, ndtri --------------------------------------------------------------
grad_case("zeta_f64", f64([2.0, 3.0, 1.5, 4.0, 2.0]), f64([1.0, 1.0, 2.0, 0.5, 10.0]))(
    op("math.zeta")
)
case(
    "zeta_edges",
    f64([1.0, 0.5, 2.0, 2.0, 2.0, 3.0, inf]),
    f64([1.0, 1.0, 0.0, -1.0, -1.5, inf, 2.0]),
)(op("math.zeta"))
ERF_X = [-6.0, -3.0, -0.5, 0.0, 1e-8, 0.5, 3.0, 30.0]
grad_case("erf_erfc_f64", f64(ERF_X), order=2)(lambda x: (tf.math.erf(x), tf.math.erfc(x)))
grad_case("erf_erfc_f32", f32(ERF_X))(lambda x: (tf.math.erf(x), tf.math.erfc(x)))
case("erfc_tail_f64", f64([5.0, 10.0, 26.0, 27.5, 30.0, -30.0]))(op("math.erfc"))
case("erfc_tail_f32", f32([5.0, 9.0, 9.5, 10.0, 10.5, -10.0]))(op("math.erfc"))
grad_case("erfinv_f64", f64([-0.99, -0.5, 0.0, 0.3, 0.9999, 1e-12]), order=2)(op("math.erfinv"))
grad_case("erfinv_f32", f32([-0.9, 0.0, 0.5, 0.99]))(op("math.erfinv"))
grad_case("erfinv_grad_edges", f64([-1.0, 1.0, 1.5, nan]))(op("math.erfinv"))
grad_case("ndtri_f64", f64([1e-300, 1e-10, 0.025, 0.5, 0.975, 1 - 1e-10]), order=2)(
    op("math.ndtri")
)
grad_case("ndtri_f32", f32([0.001, 0.2, 0.5, 0.8, 0.999]))(op("math.ndtri"))
case("ndtri_edges", f64([0.0, 1.0, -0.1, 1.1, nan]), f32([0.0, 1.0, 1e-30]))(
    lambda p, q: (tf.math.ndtri(p), tf.math.ndtri(q))
)

# ---- Bessel ---------------------------------------------------------------------------------
BES = [-30.0, -2.0, -0.0, 0.0, 0.5, 3.0, 50.0]
grad_case("bessel_i0_i1_f64", f64(BES), order=2)(
    lambda x: (tf.math.bessel_i0(x), tf.math.bessel_i1(x))
)
grad_case("bessel_i0e_i1e_f64", f64(BES), order=2)(
    lambda x: (tf.math.bessel_i0e(x), tf.math.bessel_i1e(x))
)
grad_case("bessel_f32", f32([-4.0, 0.0, 0.25, 8.0]))(
    lambda x: (
        tf.math.bessel_i0(x),
        tf.math.bessel_i0e(x),
        tf.math.bessel_i1(x),
        tf.math.bessel_i1e(x),
    )
)
case("bessel_overflow_nan", f64([710.0, 800.0, -800.0, inf, -inf, nan]))(
    lambda x: (tf.math.bessel_i0(x), tf.math.bessel_i0e(x), tf.math.bessel_i1e(x))
)
grad_case("special_bessel_i_f64", f64([-1.5, 0.0, 2.0, 12.0]))(
    lambda x: (
        tf.math.special.bessel_i0(x),
        tf.math.special.bessel_i0e(x),
        tf.math.special.bessel_i1(x),
        tf.math.special.bessel_i1e(x),
    )
)
grad_case("special_bessel_jy_f64", f64([0.5, 1.0, 2.4048255576957727, 7.0, 40.0]))(
    lambda x: (
        tf.math.special.bessel_j0(x),
        tf.math.special.bessel_j1(x),
        tf.math.special.bessel_y0(x),
        tf.math.special.bessel_y1(x),
    )
)
grad_case("special_bessel_k_f64", f64([0.1, 1.0, 5.0, 50.0]))(
    lambda x: (
        tf.math.special.bessel_k0(x),
        tf.math.special.bessel_k0e(x),
        tf.math.special.bessel_k1(x),
        tf.math.special.bessel_k1e(x),
    )
)
case("special_bessel_k_y_edges", f64([0.0, -1.0, inf]))(
    lambda x: (
        tf.math.special.bessel_k0(x),
        tf.math.special.bessel_k1e(x),
        tf.math.special.bessel_y0(x),
        tf.math.special.bessel_j0(x),
    )
)

# ---- the rest of tf.math.special ----------------------------------------------------------
grad_case("dawsn_f64", f64([-3.0, -0.5, 0.0, 0.9241388730, 5.0, 100.0]), order=2)(
    op("math.special.dawsn")
)
grad_case("expint_f64", f64([0.01, 0.5, 1.0, 5.0, 30.0, 0.3725074107813666]))(
    op("math.special.expint")
)
case("expint_edges", f64([0.0, -1.0, 710.0, inf, -inf, nan]))(op("math.special.expint"))
grad_case("fresnel_f64", f64([-2.0, 0.0, 0.3, 1.0, 10.0]))(
    lambda x: (tf.math.special.fresnel_cos(x), tf.math.special.fresnel_sin(x))
)
grad_case("spence_f64", f64([0.0, 0.5, 1.0, 2.0, 10.0]))(op("math.special.spence"))
case("spence_edges", f64([-1.0, inf, nan, 1e-300]))(op("math.special.spence"))

# ---- xlogy and friends, log_sigmoid, softplus -----------------------------------------------
grad_case("xlogy_broadcast_f32", f32([[0.0], [2.0]]), f32([0.5, 1.0, 3.0]))(op("math.xlogy"))
grad_case("xlogy_order2_f64", f64([0.5, 1.0, 2.0]), f64([1.0, 2.0, 0.5]), order=2)(op("math.xlogy"))
grad_case("xlog1py_broadcast_f64", f64([0.0, 1.5]), f64([[0.5], [-0.5], [3.0]]), order=2)(
    op("math.xlog1py")
)
grad_case("xdivy_broadcast_order2", f64([[1.0, 0.0]]), f64([[2.0], [-4.0]]), order=2)(
    op("math.xdivy")
)
LARGE = [-1000.0, -100.0, -20.0, -1.0, 0.0, 1.0, 15.0, 20.0, 100.0, 1000.0]
grad_case("log_sigmoid_f64", f64(LARGE), order=2)(op("math.log_sigmoid"))
grad_case("log_sigmoid_f32", f32(LARGE), order=2)(op("math.log_sigmoid"))
case("log_sigmoid_inf_nan", f32([-inf, inf, nan]))(op("math.log_sigmoid"))
grad_case("softplus_f32_thresholds", f32([-100.0, -16.0, -15.0, 0.0, 14.0, 16.0, 17.0, 100.0]))(
    op("math.softplus")
)
grad_case("softplus_f32_order2", f32([-90.0, -20.0, 3.0, 20.0, 90.0]), order=2)(
    lambda x: tf.nn.softplus(x)
)
case("softplus_f64_large", f64([-800.0, -40.0, 36.0, 37.0, 40.0, 800.0, 1e308]))(
    op("math.softplus")
)

# ---- logsumexp and cumulative ops --------------------------------------------------------------
grad_case("logsumexp_f32_axis0_neg_inf", f32([[-inf, 0.0, 88.0], [-inf, -inf, 89.0]]))(
    lambda x: tf.reduce_logsumexp(x, axis=0, keepdims=True)
)
grad_case("logsumexp_rank3_axes", f64(np.where(gauss(2, 3, 2) > 0.8, -inf, gauss(2, 3, 2))))(
    lambda x: tf.reduce_logsumexp(x, axis=[0, 2])
)
grad_case("logsumexp_f32_large_order2", f32([100.0, 101.0, -inf]), order=2)(
    lambda x: tf.reduce_logsumexp(x)
)
grad_case("cumulative_logsumexp_excl_rev", f64([-inf, 0.0, 2.0, -inf]))(
    lambda x: (
        tf.math.cumulative_logsumexp(x, exclusive=True),
        tf.math.cumulative_logsumexp(x, reverse=True),
        tf.math.cumulative_logsumexp(x, exclusive=True, reverse=True),
    )
)
grad_case("cumulative_logsumexp_f32_axis0", f32(gauss(3, 2) * 10))(
    lambda x: tf.math.cumulative_logsumexp(x, axis=0)
)
grad_case("cumulative_logsumexp_order2", f64([0.5, -1.0, 3.0]), order=2)(
    lambda x: tf.math.cumulative_logsumexp(x)
)
grad_case("cumsum_f32_axis0_excl_rev", f32(gauss(3, 2)))(
    lambda x: (
        tf.math.cumsum(x, axis=0, exclusive=True),
        tf.math.cumsum(x, axis=-2, reverse=True),
        tf.math.cumsum(x, axis=0, exclusive=True, reverse=True),
    )
)
grad_case("cumsum_axis_tensor", f64(gauss(2, 3)), i32(1))(lambda x, a: tf.math.cumsum(x, axis=a))
grad_case("cumprod_zero_excl_rev", f64([2.0, 0.0, 3.0, 0.5]))(
    lambda x: (
        tf.math.cumprod(x, exclusive=True),
        tf.math.cumprod(x, reverse=True),
        tf.math.cumprod(x, exclusive=True, reverse=True),
    )
)
grad_case("cumprod_zero_order2", f64([1.5, 0.0, -2.0]), order=2)(lambda x: tf.math.cumprod(x))
grad_case("cumprod_f32_axis1_zeros", f32([[1.0, 2.0, 0.0, 3.0], [0.0, 0.0, 2.0, -1.0]]))(
    lambda x: tf.math.cumprod(x, axis=1)
)
grad_case("cumprod_f32_axis0_excl", f32([[2.0, 0.0], [0.5, 4.0], [3.0, 1.0]]))(
    lambda x: tf.math.cumprod(x, axis=0, exclusive=True, reverse=True)
)

# ---- polyval --------------------------------------------------------------------------------
grad_case("polyval_tensor_coeffs_f32", f32([1.0, -2.0]), f32([[0.5], [2.0]]), f32([3.0]))(
    lambda a, b, x: tf.math.polyval([a, b, tf.constant(0.25, a.dtype)], x)
)
grad_case("polyval_matrix_x_f64", f64(2.0), f64(-1.0), f64([[0.0, 1.0], [-3.0, 0.5]]), order=2)(
    lambda a, b, x: tf.math.polyval([a, b, a * b], x)
)
case("polyval_empty_and_single", f64([1.0, 2.0]))(
    lambda x: (tf.math.polyval([], x), tf.math.polyval([tf.constant(3.0, tf.float64)], x))
)

# ---- segment reductions -------------------------------------------------------------------
SEG_D = f64([[1.0, 2.0], [1.0, -1.0], [0.0, 5.0], [2.0, 2.0], [3.0, 0.0]])
SEG_I = i32([0, 0, 1, 3, 3])
grad_case(
    "segment_min_ties", f64([[1.0, 2.0], [1.0, 0.0], [3.0, 3.0], [4.0, 3.0]]), i32([0, 0, 1, 1])
)(lambda d, s: tf.math.segment_min(d, s))
grad_case("segment_prod_zeros", SEG_D, SEG_I)(lambda d, s: tf.math.segment_prod(d, s))
grad_case("segment_mean_f32_order2", f32(SEG_D), SEG_I, order=2)(
    lambda d, s: tf.math.segment_mean(d, s) ** 2
)
grad_case("segment_sum_rank3", f32(gauss(4, 2, 3)), i32([0, 1, 1, 1]))(
    lambda d, s: tf.math.segment_sum(d, s)
)
grad_case("unsorted_segment_mean_empty", SEG_D, i32([2, 0, 2, 2, -1]))(
    lambda d, s: tf.math.unsorted_segment_mean(d, s, 4)
)
grad_case("unsorted_segment_min_ties", f64([3.0, 1.0, 1.0, 5.0, 5.0]), i32([1, 0, 0, 1, 1]))(
    lambda d, s: tf.math.unsorted_segment_min(d, s, 3)
)
grad_case("unsorted_segment_sqrt_n", f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), i32([1, 1, 0]))(
    lambda d, s: tf.math.unsorted_segment_sqrt_n(d, s, 3)
)
grad_case("unsorted_segment_sum_2d_ids", f64(gauss(2, 3, 2)), i32([[0, 2, 0], [1, 2, -1]]))(
    lambda d, s: tf.math.unsorted_segment_sum(d, s, 3)
)
grad_case("unsorted_segment_prod_f32", f32([2.0, -1.0, 0.5, 4.0]), i32([1, 1, 0, 1]))(
    lambda d, s: tf.math.unsorted_segment_prod(d, s, 2)
)
grad_case("sparse_segment_sum_mean", f64(gauss(4, 2)), i32([0, 2, 2, 3]), i32([0, 0, 1, 1]))(
    lambda d, idx, s: (
        tf.sparse.segment_sum(d, idx, s),
        tf.sparse.segment_mean(d, idx, s),
    )
)
grad_case("sparse_segment_sqrt_n", f32(gauss(3, 2)), i32([1, 1, 0]), i32([0, 0, 2]))(
    lambda d, idx, s: tf.sparse.segment_sqrt_n(d, idx, s)
)

# ---- top_k, reduce_max/min ties -------------------------------------------------------------
grad_case("top_k_2d_ties", f32([[1.0, 4.0, 4.0, 2.0], [0.0, 0.0, 0.0, -1.0]]))(
    lambda x: tf.math.top_k(x, k=3).values
)
grad_case("top_k_rank3_order2", f64(gauss(2, 2, 4)), order=2)(
    lambda x: tf.math.top_k(x, k=2).values ** 2
)
grad_case("top_k_values_times_indices", f64([5.0, 1.0, 5.0, 3.0]))(
    lambda x: (lambda r: r.values * tf.cast(r.indices, x.dtype))(tf.math.top_k(x, k=3))
)
grad_case("reduce_min_axis0_ties_f32", f32([[1.0, -inf, 2.0], [1.0, -inf, 0.0], [3.0, 0.0, 0.0]]))(
    lambda x: tf.reduce_min(x, axis=0, keepdims=True)
)
grad_case("reduce_max_axes02_ties", f64([[[1.0, 2.0], [2.0, 0.0]], [[2.0, 2.0], [0.0, 0.0]]]))(
    lambda x: tf.reduce_max(x, axis=[0, 2])
)
grad_case("reduce_max_order2_ties", f64([[1.0, 3.0, 3.0], [2.0, 1.0, 0.0]]), order=2)(
    lambda x: tf.reduce_max(x * x, axis=1)
)

# ---- norms at zero ----------------------------------------------------------------------------
grad_case("norm_fro_zero_f32", f32(np.zeros((2, 2))))(lambda x: tf.norm(x, ord="fro", axis=[0, 1]))
grad_case("norm_euclidean_rows_zero", f32([[0.0, 0.0], [3.0, 4.0]]), order=2)(
    lambda x: tf.norm(x, axis=1, keepdims=True)
)
grad_case("norm_ord1_axis0_zero", f64([[0.0, 1.0], [0.0, -2.0]]))(
    lambda x: tf.norm(x, ord=1, axis=0)
)
grad_case("norm_ord_half_point", f64([0.0, 4.0, 1.0]))(lambda x: tf.norm(x, ord=0.5))
grad_case("norm_spectral", f64([[3.0, 0.0], [4.0, 5.0]]))(lambda x: tf.norm(x, ord=2, axis=[0, 1]))
grad_case("norm_complex", c128([3 + 4j, 0j, -1j]))(lambda z: tf.norm(z))
grad_case("euclidean_norm_f32_axis", f32([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]]))(
    lambda x: tf.math.reduce_euclidean_norm(x, axis=1)
)

# ---- complex parts ------------------------------------------------------------------------------
CPX = [1 + 2j, -3 + 0j, 0j, -1 - 1j, 0.5 - 4j]
grad_case("complex_parts_c128", c128(CPX))(
    lambda z: (tf.math.real(z), tf.math.imag(z), tf.math.angle(z), tf.abs(z))
)
grad_case("complex_parts_c64", c64(CPX))(
    lambda z: (tf.math.real(z), tf.math.imag(z), tf.math.angle(z), tf.abs(z))
)
grad_case("complex_conj_products", c128(CPX))(
    lambda z: (tf.math.conj(z), z * tf.math.conj(z), z * z)
)
grad_case("complex_from_parts", f64([1.0, 0.0, -2.0]), f64([0.5, 0.0, 2.0]))(
    lambda x, y: (lambda z: (tf.abs(z), tf.math.angle(z), z * z))(tf.complex(x, y))
)
grad_case("angle_real_input", f64([-2.0, -0.0, 0.0, 3.0, nan, -inf]))(lambda x: tf.math.angle(x))
grad_case("complex_exp_log", c64([1 + 1j, -2 + 0.5j, 0.1j]))(
    lambda z: (tf.exp(z), tf.math.log(z), tf.sqrt(z))
)
case("real_imag_of_real", f32([1.5, -2.0]))(
    lambda x: (tf.math.real(x), tf.math.imag(x), tf.math.conj(x))
)

# ---- FFTs ----------------------------------------------------------------------------------------
Z8 = cgauss(8)
Z235 = cgauss(2, 3, 5)
case("fft_c64", c64(Z8))(lambda z: (tf.signal.fft(z), tf.signal.ifft(z)))
case("fft_c128_batch", c128(Z235))(lambda z: (tf.signal.fft(z), tf.signal.ifft(z)))
case("fft_ifft_roundtrip", c64(Z235))(lambda z: tf.signal.ifft(tf.signal.fft(z)))
case("fft_length1_and_empty", c64([[1 + 2j]]), c64(np.zeros((2, 0))))(
    lambda a, e: (tf.signal.fft(a), tf.signal.ifft(a), tf.signal.fft(e))
)
case("fft2d_ifft2d_c64", c64(cgauss(2, 3, 4)))(lambda z: (tf.signal.fft2d(z), tf.signal.ifft2d(z)))
case("fft3d_ifft3d", c64(cgauss(2, 2, 3)))(lambda z: (tf.signal.fft3d(z), tf.signal.ifft3d(z)))
case("fft_real_input_error", f32([1.0, 2.0]))(lambda x: tf.signal.fft(x))
case("fft_inf_nan", c64([1.0, inf, 0.0, 2.0]), c64([1.0, nan, 0.0, 0.0]))(
    lambda a, b: (tf.signal.fft(a), tf.signal.fft(b))
)
X12 = gauss(12)
case("rfft_even_odd_f32", f32(X12), f32(X12[:7]))(
    lambda a, b: (tf.signal.rfft(a), tf.signal.rfft(b))
)
case("rfft_f64", f64(gauss(2, 6)))(lambda x: tf.signal.rfft(x))
case("rfft_fft_length_crop_pad", f32(X12))(
    lambda x: (
        tf.signal.rfft(x, fft_length=[8]),
        tf.signal.rfft(x, fft_length=[5]),
        tf.signal.rfft(x, fft_length=[16]),
    )
)
case("rfft_fft_length_tensor", f32(X12), i32([6]))(lambda x, n: tf.signal.rfft(x, fft_length=n))
W5 = cgauss(2, 5)
case("irfft_default_length", c64(W5))(lambda z: tf.signal.irfft(z))
case("irfft_fft_length", c64(W5))(
    lambda z: (
        tf.signal.irfft(z, fft_length=[9]),
        tf.signal.irfft(z, fft_length=[4]),
        tf.signal.irfft(z, fft_length=[12]),
    )
)
case("irfft_c128", c128(W5))(lambda z: tf.signal.irfft(z, fft_length=[7]))
case("rfft_irfft_roundtrip_odd", f32(gauss(3, 7)))(
    lambda x: tf.signal.irfft(tf.signal.rfft(x), fft_length=[7])
)
case("rfft2d_irfft2d", f32(gauss(2, 4, 6)))(
    lambda x: (
        tf.signal.rfft2d(x),
        tf.signal.irfft2d(tf.signal.rfft2d(x), fft_length=[4, 6]),
        tf.signal.rfft2d(x, fft_length=[3, 8]),
    )
)
case("irfft2d_fft_length", c64(cgauss(3, 4)))(
    lambda z: (tf.signal.irfft2d(z), tf.signal.irfft2d(z, fft_length=[3, 7]))
)
case("rfft3d_irfft3d", f32(gauss(2, 3, 4)))(
    lambda x: (tf.signal.rfft3d(x), tf.signal.irfft3d(tf.signal.rfft3d(x), fft_length=[2, 3, 4]))
)
case("fftshift_ifftshift_1d", f64(np.arange(7.0)), f64(np.arange(6.0)))(
    lambda a, b: (
        tf.signal.fftshift(a),
        tf.signal.ifftshift(a),
        tf.signal.fftshift(b),
        tf.signal.ifftshift(b),
    )
)
case("fftshift_2d_axes", f32(np.arange(15.0).reshape(3, 5)))(
    lambda x: (
        tf.signal.fftshift(x),
        tf.signal.fftshift(x, axes=1),
        tf.signal.ifftshift(x, axes=[0]),
        tf.signal.ifftshift(x, axes=-1),
    )
)

# ---- gradients through FFTs -------------------------------------------------------------------
grad_case("fft_abs_grad_c64", c64(Z8))(lambda z: tf.abs(tf.signal.fft(z)))
grad_case("fft_power_grad_c128", c128(Z8), order=2)(
    lambda z: tf.math.real(tf.signal.fft(z) * tf.math.conj(tf.signal.fft(z)))
)
grad_case("ifft_complex_grad", c128(cgauss(2, 4)))(lambda z: tf.signal.ifft(z))
grad_case("fft2d_grad", c64(cgauss(3, 4)))(lambda z: tf.abs(tf.signal.fft2d(z)))
grad_case("rfft_magnitude_grad_f32", f32(X12))(lambda x: tf.abs(tf.signal.rfft(x)))
grad_case("rfft_magnitude_grad_f64_odd", f64(gauss(2, 7)), order=2)(
    lambda x: tf.abs(tf.signal.rfft(x)) ** 2
)
grad_case("rfft_parts_grad_fft_length_pad", f32(gauss(6)))(
    lambda x: tf.signal.rfft(x, fft_length=[10])
)
grad_case("irfft_grad_even", c64(cgauss(5)))(lambda z: tf.signal.irfft(z))
grad_case("irfft_grad_odd_length", c128(cgauss(2, 4)))(lambda z: tf.signal.irfft(z, fft_length=[7]))
grad_case("rfft2d_magnitude_grad", f32(gauss(4, 5)))(lambda x: tf.abs(tf.signal.rfft2d(x)))
grad_case("irfft2d_grad", c64(cgauss(3, 3)))(lambda z: tf.signal.irfft2d(z, fft_length=[3, 4]))
grad_case("fftshift_grad", f64(gauss(2, 5)))(lambda x: tf.signal.fftshift(x, axes=1) * x)
grad_case("fft_of_real_cast_grad", f32(gauss(6)))(
    lambda x: tf.abs(tf.signal.fft(tf.cast(x, tf.complex64))) ** 2
)

# ---- frames, overlap-add -----------------------------------------------------------------------
S10 = f32(np.arange(1.0, 11.0))
case("frame_no_pad", S10)(lambda s: tf.signal.frame(s, 4, 3))
case("frame_pad_end", S10)(
    lambda s: (
        tf.signal.frame(s, 4, 3, pad_end=True),
        tf.signal.frame(s, 4, 3, pad_end=True, pad_value=-1.0),
    )
)
case("frame_step_gt_length", S10)(
    lambda s: (tf.signal.frame(s, 2, 4), tf.signal.frame(s, 2, 4, pad_end=True))
)
case("frame_short_signal", f32([1.0, 2.0]))(
    lambda s: (tf.signal.frame(s, 4, 2), tf.signal.frame(s, 4, 2, pad_end=True))
)
case("frame_axis_minus2", f32(np.arange(14.0).reshape(7, 2)))(
    lambda s: tf.signal.frame(s, 3, 2, axis=-2, pad_end=True)
)
case("frame_batch_int", i32(np.arange(12).reshape(2, 6)))(lambda s: tf.signal.frame(s, 3, 3))
grad_case("frame_grad_overlap", f64(gauss(9)))(lambda s: tf.signal.frame(s, 4, 2, pad_end=True))
case("overlap_and_add_values", f32(np.arange(12.0).reshape(4, 3)))(
    lambda f: (tf.signal.overlap_and_add(f, 2), tf.signal.overlap_and_add(f, 3))
)
case("overlap_and_add_batch", f64(np.arange(24.0).reshape(2, 3, 4)))(
    lambda f: tf.signal.overlap_and_add(f, 1)
)
grad_case("overlap_and_add_grad", f64(gauss(3, 4)))(lambda f: tf.signal.overlap_and_add(f, 3))
grad_case("frame_overlap_roundtrip_grad", f32(gauss(10)))(
    lambda s: tf.signal.overlap_and_add(tf.signal.frame(s, 4, 2), 2)
)

# ---- windows --------------------------------------------------------------------------------
case("hann_window_lengths", f32(0.0))(
    lambda dummy: tuple(
        tf.signal.hann_window(n, periodic=p) for n in (0, 1, 2, 5, 8) for p in (True, False)
    )
)
case("hamming_window_lengths", f32(0.0))(
    lambda dummy: tuple(
        tf.signal.hamming_window(n, periodic=p) for n in (1, 2, 7) for p in (True, False)
    )
)
case("windows_f64", f32(0.0))(
    lambda dummy: (
        tf.signal.hann_window(6, dtype=tf.float64),
        tf.signal.hamming_window(6, periodic=False, dtype=tf.float64),
        tf.signal.kaiser_window(6, beta=4.0, dtype=tf.float64),
        tf.signal.vorbis_window(6, dtype=tf.float64),
    )
)
case("window_length_tensor", i32(6))(
    lambda n: (tf.signal.hann_window(n), tf.signal.kaiser_window(n), tf.signal.vorbis_window(n))
)

# ---- stft and its inverse ------------------------------------------------------------------
SIG = gauss(2, 40)
case("stft_hann_default", f32(SIG))(lambda s: tf.signal.stft(s, frame_length=8, frame_step=4))
case("stft_pad_end_fft_default", f32(SIG[0]))(
    lambda s: tf.signal.stft(s, frame_length=10, frame_step=6, pad_end=True)
)
case("stft_hamming_fft16", f32(SIG[1]))(
    lambda s: tf.abs(tf.signal.stft(s, 8, 5, fft_length=16, window_fn=tf.signal.hamming_window))
)
case("stft_no_window_f64", f64(SIG[0][:20]))(
    lambda s: tf.signal.stft(s, 6, 4, fft_length=8, window_fn=None)
)
case("stft_short_signal", f32(SIG[0][:5]))(
    lambda s: (tf.signal.stft(s, 8, 4), tf.signal.stft(s, 8, 4, pad_end=True))
)
case("stft_custom_window", f32(SIG[1][:24]))(
    lambda s: tf.signal.stft(
        s, 8, 4, window_fn=lambda n, dtype: tf.signal.hann_window(n, periodic=False, dtype=dtype)
    )
)
case("inverse_stft_roundtrip", f32(SIG[0]))(
    lambda s: tf.signal.inverse_stft(
        tf.signal.stft(s, 8, 2),
        8,
        2,
        window_fn=tf.signal.inverse_stft_window_fn(2),
    )
)
case("inverse_stft_hamming_fft", c64(cgauss(4, 9)))(
    lambda z: tf.signal.inverse_stft(
        z,
        12,
        4,
        fft_length=16,
        window_fn=tf.signal.inverse_stft_window_fn(4, forward_window_fn=tf.signal.hamming_window),
    )
)
case("inverse_stft_window_values", f32(0.0))(
    lambda dummy: (
        tf.signal.inverse_stft_window_fn(2)(8, tf.float32),
        tf.signal.inverse_stft_window_fn(3, tf.signal.hamming_window)(6, tf.float64),
    )
)
grad_case("stft_magnitude_grad", f32(SIG[0][:24]))(lambda s: tf.abs(tf.signal.stft(s, 8, 4)))
grad_case("stft_complex_grad_f64", f64(SIG[1][:18]))(
    lambda s: tf.signal.stft(s, 6, 3, fft_length=8, pad_end=True)
)
grad_case("log_power_spectrogram_grad", f32(SIG[1][:24]))(
    lambda s: tf.math.log(tf.abs(tf.signal.stft(s, 8, 4)) ** 2 + 1e-6)
)
grad_case("inverse_stft_grad", c64(cgauss(3, 5)))(
    lambda z: tf.signal.inverse_stft(z, 8, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
)

# ---- mel, MFCC ---------------------------------------------------------------------------------
case("mel_matrix_f32", f32(0.0))(
    lambda dummy: tf.signal.linear_to_mel_weight_matrix(
        num_mel_bins=6,
        num_spectrogram_bins=17,
        sample_rate=8000,
        lower_edge_hertz=125.0,
        upper_edge_hertz=3800.0,
    )
)
case("mel_matrix_f64_defaults", f32(0.0))(
    lambda dummy: tf.reduce_sum(tf.signal.linear_to_mel_weight_matrix(dtype=tf.float64), axis=0)
)
case("mel_matrix_bad_edges", f32(0.0))(
    lambda dummy: tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 3000.0, 2000.0)
)
case("mel_matrix_upper_above_nyquist", f32(0.0))(
    lambda dummy: tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 5000.0)
)
LOGMEL = gauss(2, 3, 6)
case("mfccs_f32", f32(LOGMEL))(op("signal.mfccs_from_log_mel_spectrograms"))
grad_case("mfccs_grad", f32(LOGMEL[1]))(op("signal.mfccs_from_log_mel_spectrograms"))
grad_case("mel_spectrogram_pipeline_grad", f32(SIG[0][:32]))(
    lambda s: tf.signal.mfccs_from_log_mel_spectrograms(
        tf.math.log(
            tf.tensordot(
                tf.abs(tf.signal.stft(s, 16, 8)),
                tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 3000.0),
                1,
            )
            + 1e-6
        )
    )[..., :3]
)

# ---- DCT ------------------------------------------------------------------------------------------
D6 = gauss(2, 6)
for _t in (1, 2, 3, 4):
    case(f"dct_type{_t}_f32", f32(D6))(
        lambda x, t=_t: (tf.signal.dct(x, type=t), tf.signal.idct(x, type=t))
    )
for _t in (1, 2, 3, 4):
    case(f"dct_type{_t}_ortho_f64", f64(D6))(
        lambda x, t=_t: (
            tf.signal.dct(x, type=t, norm="ortho"),
            tf.signal.idct(x, type=t, norm="ortho"),
        )
    )
case("dct_ortho_roundtrip", f64(D6))(
    lambda x: tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho")
)
case("dct_n_truncate_pad", f32(D6))(
    lambda x: (tf.signal.dct(x, n=4), tf.signal.dct(x, n=9, norm="ortho"))
)
case("dct_axis0_error", f32(D6))(lambda x: tf.signal.dct(x, axis=0))
case("dct_bad_norm_error", f32(D6))(lambda x: tf.signal.dct(x, norm="forward"))
case("dct_type1_length1", f32([[2.0]]))(lambda x: tf.signal.dct(x, type=1))
grad_case("dct2_ortho_grad", f32(D6[0]))(lambda x: tf.signal.dct(x, norm="ortho"))
grad_case("dct3_grad_f64", f64(D6[1]), order=2)(lambda x: tf.signal.dct(x, type=3) ** 2)
grad_case("idct_type1_grad", f64(D6[0][:5]))(lambda x: tf.signal.idct(x, type=1))
grad_case("dct4_n_grad", f32(D6[1]))(lambda x: tf.signal.dct(x, type=4, n=8))
case("mdct_inverse_mdct", f32(gauss(16)))(
    lambda s: (lambda m: (m, tf.signal.inverse_mdct(m)))(tf.signal.mdct(s, 8))
)


if __name__ == "__main__":
    print(f"{which} special_signal: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
