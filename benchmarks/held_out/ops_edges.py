"""Held-out: the values of single ops (and a few two-op compositions) on inputs at the
edges of their domains: NaN, +-inf, -0.0, subnormals, huge and tiny magnitudes, integer
wrap-around, negative integer division and modulo, out-of-range casts, empty tensors,
broadcasting across ranks, reductions over empty axes, ties and NaNs in arg-reductions,
sorting, top_k and unique, segment ops with empty segments, out-of-range indices, strings.

Each case runs eagerly and inside tf.function (tracer: once per backend, C and the numpy
interpreter), taking its tensors as arguments, and prints one line per mode:
`case [mode] dtype shape values` or `case [mode] ERR TypeName: message`, so the two
engines' outputs can be compared line by line. An optional second argument keeps only
the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

nan, inf = float("nan"), float("inf")
f32, f64, f16 = tf.float32, tf.float64, tf.float16
i8, u8, i32, i64 = tf.int8, tf.uint8, tf.int32, tf.int64
CASES = []


def case(name, *inputs):
    """Registers `fn(*tensors)`; each input is a (values, dtype) pair or a ready value."""

    def register(fn):
        CASES.append((name, fn, inputs))
        return fn

    return register


def op(path):
    """`tf.<path>`, looked up when the case runs (a missing op fails that case alone)."""

    def call(*args):
        target = tf
        for part in path.split("."):
            target = getattr(target, part)
        return target(*args)

    return call


def render(v):
    if isinstance(v, (tuple, list)):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    ragged = getattr(tf, "RaggedTensor", None)
    if ragged is not None and isinstance(v, ragged):
        return f"ragged {v.dtype.name} {v.to_list()}"
    a = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
    name = v.dtype.name if hasattr(v, "dtype") and hasattr(v.dtype, "name") else a.dtype.name
    a = np.asarray(a)
    # one line per result: the shape, then every element in its shortest exact form
    items = a.tolist() if a.dtype == object else [str(x) for x in a.ravel()]
    return f"{name} {tuple(a.shape)} [{' '.join(map(str, items))}]"


def make(spec):
    if isinstance(spec, tuple) and len(spec) == 2 and not isinstance(spec[1], (int, float)):
        values, dtype = spec
        return tf.constant(values, dtype=dtype)
    return tf.constant(spec)


def run_case(name, fn, inputs):
    try:
        args = [make(s) for s in inputs]
    except Exception as e:  # report it and go on
        for mode, _ in MODES:
            print(f"{name} [{mode}] inputs {failure(e)}")
        return
    for mode, wrap in MODES:
        try:
            f = fn if wrap is None else wrap(fn)
            text = render(f(*args))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


# ---- integer division and modulo, wrap-around --------------------------------------------
IX = ([7, -7, 7, -7, 0, -1, 1], i32)
IY = ([2, 2, -2, -2, 3, 3, -3], i32)
case("int_floordiv_op", IX, IY)(lambda x, y: x // y)
case("int_mod_op", IX, IY)(lambda x, y: x % y)
case("int64_floordiv", ([7, -7, 7, -7, -9], i64), ([2, 2, -2, -2, 4], i64))(op("math.floordiv"))
case("int64_floormod", ([7, -7, 7, -7, -9], i64), ([2, 2, -2, -2, 4], i64))(op("math.floormod"))
case("int_truncatediv", IX, IY)(op("truncatediv"))
case("int_truncatemod", IX, IY)(op("truncatemod"))
case("int8_floormod", ([-128, 127, -1, -100], i8), ([3, -3, 5, 7], i8))(op("math.floormod"))
FX = ([-7.5, 7.5, -0.0, 5.0, inf, 1.0, -1.0], f32)
FY = ([2.0, -2.0, 3.0, inf, 3.0, -inf, inf], f32)
case("float_floormod", FX, FY)(op("math.floormod"))
case("float_floordiv", FX, FY)(op("math.floordiv"))
case("float_truncatemod", FX, FY)(op("truncatemod"))
case("int_floordiv_by_zero", ([5, -5], i32), ([0, 0], i32))(lambda x, y: x // y)
case("int_mod_by_zero", ([5, -5], i32), ([0, 0], i32))(lambda x, y: x % y)
case("float_div_zero", ([1.0, -1.0, 0.0, 1.0, nan], f32), ([0.0, 0.0, 0.0, -0.0, 0.0], f32))(
    lambda x, y: x / y
)
case("int_truediv", ([7, -7, 1], i32), ([2, 2, 3], i32))(lambda x, y: x / y)
case("int8_add_wrap", ([127, -128, 100], i8), ([1, -1, 100], i8))(lambda x, y: x + y)
case("uint8_sub_wrap", ([0, 5, 255], u8), ([1, 10, 255], u8))(lambda x, y: x - y)
case("int32_mul_wrap", ([2**30, -(2**31), 65536], i32), ([4, -1, 65536], i32))(lambda x, y: x * y)
case("int64_mul_wrap", ([2**62, 3**39], i64), ([4, 3], i64))(lambda x, y: x * y)
case("int_min_div_minus_one", ([-(2**31), 7], i32), ([-1, -1], i32))(
    lambda x, y: (x // y, x % y, tf.abs(x))
)
case("uint8_div_mod", ([250, 7, 0], u8), ([7, 250, 3], u8))(
    lambda x, y: (x // y, x % y, tf.math.floormod(x, y))
)
case("float16_arith", ([65504.0, 0.1, 6e-08, -0.0], f16))(
    lambda x: (x + x, x * x, tf.exp(x), tf.reduce_sum(x), tf.sqrt(x))
)
case("bool_logic", ([True, False, True], tf.bool), ([True, True, False], tf.bool))(
    lambda a, b: (
        tf.math.logical_xor(a, b),
        tf.logical_and(a, b),
        tf.reduce_sum(tf.cast(a, tf.int32)),
        tf.math.equal(a, b),
    )
)
case("complex64_arith", ([1 + 2j, complex(inf, 0)], tf.complex64), ([3 - 1j, 2j], tf.complex64))(
    lambda a, b: (a * b, tf.reduce_sum(a * b), tf.exp(a), tf.math.sqrt(b))
)
case("int8_abs_neg", ([-128, 127, 0], i8))(lambda x: (tf.abs(x), -x))

# ---- casts ------------------------------------------------------------------------------
case("cast_f32_to_i32", ([nan, inf, -inf, 3e9, -3e9, 2.7, -2.7, -0.0], f32))(
    lambda x: tf.cast(x, tf.int32)
)
case("cast_f32_to_u8", ([-1.0, 256.0, 300.5, 255.9, 0.9, -0.5], f32))(
    lambda x: tf.cast(x, tf.uint8)
)
case("cast_f64_to_i64", ([9.3e18, -9.3e18, 1e15 + 0.5, -2.5], f64))(lambda x: tf.cast(x, tf.int64))
case("cast_f32_to_f16", ([70000.0, 65504.0, 1e-8, 6e-8, -1e-9, 0.1], f32))(
    lambda x: tf.cast(x, tf.float16)
)
case("cast_f64_to_f32_tiny", ([1e-40, 1e-50, -1e-46, 3.5e38, 1e39], f64))(
    lambda x: tf.cast(x, tf.float32)
)
case("cast_to_bool", ([0.0, -0.0, nan, 0.1, -2.0], f32), ([0, 3, -1], i32))(
    lambda x, y: (tf.cast(x, tf.bool), tf.cast(y, tf.bool))
)
case("cast_int_narrow", ([300, -129, 65535, 2**31 - 1], i32))(
    lambda x: (tf.cast(x, tf.int8), tf.cast(x, tf.uint8))
)
case("cast_complex_to_float", ([1 + 2j, -3.5 - 1j], tf.complex64))(lambda z: tf.cast(z, tf.float32))

# ---- rounding and sign --------------------------------------------------------------------
RX = ([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, nan, inf, 1e20, 0.49999997, -0.7], f32)
case("round_half_even", RX)(op("round"))
case("rint", RX)(op("math.rint"))
case("floor_ceil", ([-0.0, -0.5, 0.5, nan, -inf, -1e-30], f32))(
    lambda x: (tf.floor(x), tf.math.ceil(x))
)
case("round_f64", ([0.5, 2.5, -3.5, 4503599627370497.0], f64))(op("round"))
case("round_int", ([-3, 0, 7], i32))(op("round"))
case("sign_float", ([-0.0, 0.0, nan, -inf, 3.0, -1e-40], f32))(op("math.sign"))
case("sign_int", ([-5, 0, 5, -(2**31)], i32))(op("math.sign"))
case("sign_complex", ([3 + 4j, 0j, -2j], tf.complex64))(op("math.sign"))

# ---- pow ----------------------------------------------------------------------------------
case(
    "pow_float",
    ([0.0, 0.0, -2.0, -2.0, 2.0, nan, 1.0, -0.0, -inf, 0.5], f32),
    ([0.0, -1.0, 0.5, 3.0, inf, 0.0, nan, -1.0, 3.0, -inf], f32),
)(op("math.pow"))
case("pow_int", ([2, -2, 0, 3, -1, 1], i32), ([10, 3, 0, 21, 7, 100], i32))(op("math.pow"))
case("pow_int_negative_exp", ([2, 1], i32), ([-1, -2], i32))(op("math.pow"))
case("pow_op_int64", ([3, -3], i64), ([40, 39], i64))(lambda x, y: x**y)

# ---- transcendental at extremes -----------------------------------------------------------
case("log1p", ([-1.0, -1.0000001, 1e-30, inf, -0.0, nan, -inf], f32))(op("math.log1p"))
case("expm1", ([1e-30, -inf, 89.0, -0.0, 88.7, -100.0], f32))(op("math.expm1"))
case("exp_log", ([0.0, -0.0, -1.0, inf, 89.0, -104.0], f32))(lambda x: (tf.exp(x), tf.math.log(x)))
case("softplus", ([-100.0, 100.0, 1e30, -inf, inf, 0.0, 20.0, -20.0], f32))(op("math.softplus"))
case("sigmoid", ([-100.0, 100.0, -inf, inf, nan, -89.0, 0.0, -17.0], f32))(op("math.sigmoid"))
case("tanh", ([20.0, -20.0, inf, -inf, nan, 1e-30, -0.0, 9.0], f32))(op("math.tanh"))
case("sqrt_rsqrt", ([-0.0, 0.0, -1.0, inf, 1e-45], f32))(lambda x: (tf.sqrt(x), tf.math.rsqrt(x)))
XA, XB = ([0.0, 0.0, 1.0, 0.0, 2.0], f32), ([0.0, -1.0, 0.0, nan, inf], f32)
case("xlogy", XA, XB)(op("math.xlogy"))
case("xlog1py", XA, XB)(lambda x, y: tf.math.xlog1py(x, y - 1.0))
case("xdivy", XA, XB)(op("math.xdivy"))
case(
    "divide_no_nan", ([1.0, 0.0, nan, inf, nan, 1.0], f32), ([0.0, 0.0, 0.0, 0.0, 1.0, -0.0], f32)
)(op("math.divide_no_nan"))
case("lgamma", ([0.0, -1.0, -0.5, 1.0, 2.0, inf, -inf, nan, 1e30, -0.0, -2.5], f32))(
    op("math.lgamma")
)
case("digamma", ([0.0, -1.0, -0.5, 1e-30, inf, nan, 1.0, -0.0], f32))(op("math.digamma"))
ERX = ([inf, -inf, 0.0, -0.0, 10.0, -10.0, nan, 1e-30], f32)
case("erf", ERX)(op("math.erf"))
case("erfc", ERX)(op("math.erfc"))
case("erfinv", ([-1.0, 1.0, 0.0, 1.5, nan, -0.0, 0.999999], f32))(op("math.erfinv"))
case("max_min_nan_zero", ([nan, 1.0, -0.0, 0.0], f32), ([1.0, nan, 0.0, -0.0], f32))(
    lambda x, y: (tf.maximum(x, y), tf.minimum(x, y))
)
CZ = ([complex(inf, nan), complex(-0.0, 0.0), complex(-1, -0.0), 3 + 4j], tf.complex64)
case("complex_abs_conj", CZ)(
    lambda z: (tf.abs(z), tf.math.conj(z), tf.math.real(z), tf.math.imag(z))
)
case("complex_angle", CZ)(op("math.angle"))
case("complex_div_zero", ([1 + 1j, 0j], tf.complex64), ([0j, 0j], tf.complex64))(lambda a, b: a / b)

# ---- broadcasting, where, clip ------------------------------------------------------------
case("broadcast_ranks", (2.0, f32), ([1.0, 2.0, 3.0], f32), (np.arange(6.0).reshape(2, 1, 3), f32))(
    lambda a, b, c: a * b + c
)
case("broadcast_empty", (np.zeros((2, 0)), f32), ([[1.0], [2.0]], f32))(lambda a, b: a + b)
case(
    "where_broadcast",
    ([[True], [False], [True]], tf.bool),
    ([[1.0, 2.0, 3.0, 4.0]], f32),
    (-1.0, f32),
)(op("where"))
case("where_nan_branch", ([0.0, 1.0, -1.0], f32))(
    lambda x: tf.where(x > 0, tf.math.log(x), tf.zeros_like(x))
)
case("where_indices", ([[True, False, True], [False, False, True]], tf.bool))(op("where"))
case("where_indices_empty", (np.zeros((0, 3), bool), tf.bool))(op("where"))
case("clip_nan_inf", ([nan, -inf, inf, 5.0, -5.0, 0.5, -0.0], f32))(
    lambda x: tf.clip_by_value(x, 0.0, 1.0)
)
case(
    "clip_int_tensor_bounds",
    ([[-5, 0, 9], [3, 100, -100]], i32),
    ([0, -1, 2], i32),
    ([[4], [50]], i32),
)(op("clip_by_value"))

# ---- empty tensors and reductions ---------------------------------------------------------
E = (np.zeros(0), f32)
case("reduce_empty_float", E)(
    lambda x: (
        tf.reduce_sum(x),
        tf.reduce_prod(x),
        tf.reduce_max(x),
        tf.reduce_min(x),
        tf.reduce_mean(x),
    )
)
case("reduce_empty_int", (np.zeros(0, np.int32), i32))(
    lambda x: (tf.reduce_sum(x), tf.reduce_prod(x), tf.reduce_max(x), tf.reduce_min(x))
)
case("reduce_empty_int8_max", (np.zeros(0, np.int8), i8))(
    lambda x: (tf.reduce_max(x), tf.reduce_min(x))
)
case("reduce_empty_bool", (np.zeros(0, bool), tf.bool))(
    lambda x: (tf.reduce_all(x), tf.reduce_any(x))
)
E2 = (np.zeros((2, 0)), f32)
case("reduce_2x0_keepdims", E2)(
    lambda x: (
        tf.reduce_sum(x, axis=1, keepdims=True),
        tf.reduce_max(x, axis=0),
        tf.reduce_mean(x, axis=1),
    )
)
case("argmax_empty", E)(lambda x: tf.argmax(x))
case("matmul_empty", (np.zeros((2, 0)), f32), (np.zeros((0, 3)), f32))(op("matmul"))
case("concat_reshape_empty", E2, ([[1.0, 2.0]], f32))(
    lambda a, b: (
        tf.concat([tf.reshape(a, [0, 2]), b], 0),
        tf.reshape(a, [-1]),
        tf.reduce_sum(a, axis=[]),
    )
)
case("reduce_max_nan", ([1.0, nan, 3.0], f32), ([[nan, 2.0], [1.0, -inf]], f32))(
    lambda x, y: (
        tf.reduce_max(x),
        tf.reduce_min(x),
        tf.reduce_max(y, axis=1),
        tf.reduce_sum(y, axis=0),
    )
)
case("argmax_ties_nan", ([3.0, 1.0, 3.0], f32), ([1.0, nan, 3.0, nan], f32))(
    lambda x, y: (tf.argmax(x), tf.argmin(-x), tf.argmax(y), tf.argmin(y))
)
case("argmax_axis_int32", ([[1, 5, 5], [7, 7, 0]], i32))(
    lambda x: (tf.argmax(x, axis=0, output_type=tf.int32), tf.argmin(x, axis=1))
)
case("reduce_mean_int", ([-1, -2], i32), ([1, 2, 2], i32))(
    lambda x, y: (tf.reduce_mean(x), tf.reduce_mean(y))
)
case("reduce_prod_int_wrap", ([65536, 65536, 3], i32))(op("reduce_prod"))
case("reduce_sum_int8_wrap", ([100, 100, 100], i8))(op("reduce_sum"))
case("reduce_std_var", ([5.0], f32), ([1.0, inf], f32), ([[1.0, 2.0], [3.0, 5.0]], f64))(
    lambda a, b, c: (
        tf.math.reduce_std(a),
        tf.math.reduce_variance(b),
        tf.math.reduce_variance(c, axis=0, keepdims=True),
        tf.math.reduce_std(c, axis=[0, 1]),
    )
)
case(
    "logsumexp_edges",
    ([-inf, -inf], f32),
    ([inf, 1.0], f32),
    (np.zeros(0), f32),
    ([1000.0, 1000.0], f32),
)(
    lambda a, b, c, d: (
        tf.math.reduce_logsumexp(a),
        tf.math.reduce_logsumexp(b),
        tf.math.reduce_logsumexp(c),
        tf.math.reduce_logsumexp(d),
    )
)
case("logsumexp_keepdims_rows", ([[-inf, -inf], [0.0, -inf]], f32))(
    lambda x: tf.math.reduce_logsumexp(x, axis=1, keepdims=True)
)
case("reduce_euclidean_norm", ([3e30, 4e30], f32), ([-3, 4], i32))(
    lambda x, y: (tf.math.reduce_euclidean_norm(x), tf.math.reduce_euclidean_norm(y))
)

# ---- cumulative ---------------------------------------------------------------------------
C4 = ([1.0, 2.0, 3.0, 4.0], f32)
case("cumsum_excl_rev", C4)(
    lambda x: (
        tf.math.cumsum(x, exclusive=True),
        tf.math.cumsum(x, reverse=True),
        tf.math.cumsum(x, exclusive=True, reverse=True),
    )
)
case("cumprod_excl_rev", ([2.0, 0.0, inf, nan], f32))(
    lambda x: (
        tf.math.cumprod(x),
        tf.math.cumprod(x, exclusive=True),
        tf.math.cumprod(x, exclusive=True, reverse=True),
    )
)
case("cumsum_2d_axis", ([[1, 2, 3], [4, 5, 6]], i32))(
    lambda x: (tf.math.cumsum(x, axis=-1, reverse=True), tf.math.cumsum(x, axis=0, exclusive=True))
)
case("cumsum_empty", E2)(lambda x: tf.math.cumsum(x, axis=1))
case("cumsum_int8_wrap", ([100, 100, -100, -128], i8))(op("math.cumsum"))
case("cumulative_logsumexp", ([-inf, 0.0, -inf, 1000.0], f32))(op("math.cumulative_logsumexp"))

# ---- sort, argsort, top_k, unique ---------------------------------------------------------
SN = ([3.0, nan, 1.0, -inf, inf, -0.0, 0.0], f32)
case("sort_nan", SN)(lambda x: (tf.sort(x), tf.sort(x, direction="DESCENDING")))
case("argsort_nan", SN)(
    lambda x: (tf.argsort(x, stable=True), tf.argsort(x, direction="DESCENDING", stable=True))
)
case("argsort_stable_ties", ([2, 1, 2, 1, 2], i32))(
    lambda x: (tf.argsort(x, stable=True), tf.argsort(x, direction="DESCENDING", stable=True))
)
case("sort_int_extremes", ([0, -(2**31), 2**31 - 1, -1, 5], i32))(
    lambda x: (tf.sort(x), tf.argsort(x, stable=True))
)
case("sort_uint8", ([0, 255, 3, 128], u8))(
    lambda x: (tf.sort(x), tf.sort(x, direction="DESCENDING"))
)
case("sort_2d_axis0", ([[3.0, 1.0], [1.0, 2.0], [2.0, 0.0]], f32))(lambda x: tf.sort(x, axis=0))
case("top_k_ties", ([1.0, 3.0, 3.0, 2.0, 3.0], f32))(lambda x: tf.math.top_k(x, k=3))
case("top_k_nan", ([1.0, nan, 3.0, -inf], f32))(lambda x: tf.math.top_k(x, k=4))
case("top_k_zero", ([[1.0, 2.0], [3.0, 4.0]], f32))(lambda x: tf.math.top_k(x, k=0))
case("unique_floats", ([3.0, 1.0, 3.0, nan, nan, -0.0, 0.0, 1.0], f32))(op("unique"))
case("unique_int_counts", ([5, 5, -1, 7, -1, 5], i64))(
    lambda x: tf.unique_with_counts(x, out_idx=tf.int64)
)
case("unique_empty", (np.zeros(0, np.int32), i32))(op("unique"))

# ---- segments, gather, one_hot, bincount, histogram ---------------------------------------
SD = ([[1.0, 2.0], [3.0, -1.0], [5.0, 6.0]], f32)
case("segment_sum_gap", SD, ([0, 0, 2], i32))(
    lambda d, s: (tf.math.segment_sum(d, s), tf.math.segment_max(d, s), tf.math.segment_mean(d, s))
)
case("unsorted_segment_empty", SD, ([3, 0, 3], i32))(
    lambda d, s: (
        tf.math.unsorted_segment_max(d, s, 4),
        tf.math.unsorted_segment_min(d, s, 4),
        tf.math.unsorted_segment_prod(d, s, 4),
        tf.math.unsorted_segment_sum(d, s, 4),
    )
)
case("unsorted_segment_negative_id", SD, ([1, -1, 0], i32))(
    lambda d, s: tf.math.unsorted_segment_sum(d, s, 2)
)
case("unsorted_segment_max_int", ([4, 9, -2], i32), ([0, 0, 2], i32))(
    lambda d, s: tf.math.unsorted_segment_max(d, s, 3)
)
case("segment_sum_unsorted_ids", SD, ([1, 0, 1], i32))(op("math.segment_sum"))
case("gather_negative", ([10, 20, 30], i32), ([0, -1], i32))(lambda p, i: tf.gather(p, i))
case("gather_out_of_range", ([10, 20, 30], i32), ([3], i32))(lambda p, i: tf.gather(p, i))
case("gather_batch_dims", ([[1, 2, 3], [4, 5, 6]], i32), ([[2, 0], [1, 1]], i32))(
    lambda p, i: tf.gather(p, i, axis=1, batch_dims=1)
)
case("gather_nd_basic", ([[1, 2], [3, 4]], i32), ([[1, 0], [0, 1]], i32))(op("gather_nd"))
case("one_hot_out_of_range", ([0, -1, 3, 5], i32))(
    lambda i: (tf.one_hot(i, 4), tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0))
)
case("bincount_basic", ([1, 1, 3, 0], i32), ([0.5, 1.0, 2.0, 0.25], f32))(
    lambda x, w: (
        tf.math.bincount(x),
        tf.math.bincount(x, minlength=6),
        tf.math.bincount(x, maxlength=2),
        tf.math.bincount(x, weights=w),
    )
)
case("bincount_empty", (np.zeros(0, np.int32), i32))(op("math.bincount"))
case("bincount_negative", ([1, -1], i32))(op("math.bincount"))
case("histogram_fixed_width", ([-1.0, 0.0, 0.25, 0.5, 1.0, 2.0, nan], f32), ([0.0, 1.0], f32))(
    lambda v, r: tf.histogram_fixed_width(v, r, nbins=4)
)

# ---- normalisation and activations --------------------------------------------------------
case("l2_normalize_zeros", ([[0.0, 0.0], [3.0, 4.0]], f32))(
    lambda x: tf.math.l2_normalize(x, axis=1)
)
case("l2_normalize_inf", ([inf, 1.0], f32))(lambda x: tf.math.l2_normalize(x))
AX = ([-inf, -100.0, -1e-30, -0.0, 0.0, 1.0, 7.0, inf, nan], f32)
case("relu_relu6", AX)(lambda x: (tf.nn.relu(x), tf.nn.relu6(x)))
case("elu_selu", AX)(lambda x: (tf.nn.elu(x), tf.nn.selu(x)))
case("gelu_exact", AX)(lambda x: tf.nn.gelu(x, approximate=False))
case("gelu_tanh", AX)(lambda x: tf.nn.gelu(x, approximate=True))
case("leaky_softsign_silu", AX)(
    lambda x: (tf.nn.leaky_relu(x, alpha=0.1), tf.nn.softsign(x), tf.nn.silu(x))
)
case("softmax_neg_inf", ([[-inf, 0.0, -inf], [-inf, -inf, -inf], [inf, 0.0, 1.0]], f32))(
    lambda x: (tf.nn.softmax(x), tf.nn.log_softmax(x))
)
case("softmax_rank3_axis1", (np.array([[[0.0, 1e30]], [[-1e30, 0.0]]]).reshape(2, 2, 1), f32))(
    lambda x: tf.nn.softmax(x, axis=1)
)
case("sigmoid_xent_large", ([1e4, -1e4, 0.0], f32), ([1.0, 1.0, 0.5], f32))(
    lambda z, t: tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=z)
)

# ---- linear algebra -----------------------------------------------------------------------
case("det_singular_empty", ([[1.0, 2.0], [2.0, 4.0]], f64), (np.zeros((0, 0)), f64))(
    lambda a, b: (tf.linalg.det(a), tf.linalg.det(b))
)
case("inv_singular", ([[1.0, 2.0], [2.0, 4.0]], f32))(op("linalg.inv"))
case("inv_tiny", ([[1e-300, 0.0], [0.0, 1e300]], f64))(op("linalg.inv"))
case(
    "matmul_int_batch_broadcast",
    (np.arange(12).reshape(2, 1, 2, 3), i32),
    (np.arange(18).reshape(3, 3, 2) - 9, i32),
)(op("matmul"))
case("matmul_transpose_flags", ([[1.0, 2.0], [3.0, 4.0]], f64), ([[0.5, -1.0], [2.0, 0.0]], f64))(
    lambda a, b: tf.matmul(a, b, transpose_a=True, adjoint_b=True)
)
M = (np.arange(9.0).reshape(3, 3), f32)
case("einsum_trace_diag", M)(
    lambda m: (
        tf.einsum("ii", m),
        tf.einsum("ii->i", m),
        tf.einsum("ij->ji", m),
        tf.einsum("ij->", m),
    )
)
case("einsum_outer_batch", ([1.0, 2.0], f32), (np.arange(12.0).reshape(2, 2, 3), f32))(
    lambda v, b: (
        tf.einsum("i,j->ij", v, v),
        tf.einsum("bij,i->bj", b, v),
        tf.einsum("...ij->...ji", b),
    )
)
case(
    "einsum_batch_matmul",
    (np.arange(8.0).reshape(2, 2, 2), f32),
    (np.arange(12.0).reshape(2, 2, 3), f32),
)(lambda a, b: tf.einsum("bij,bjk->bik", a, b))
case("linalg_norm_trace", ([[inf, 1.0], [0.0, 0.0]], f32), (np.zeros((2, 2)), f32))(
    lambda a, z: (tf.linalg.trace(a), tf.norm(z), tf.norm(a, ord=1), tf.linalg.diag_part(a))
)
case("solve_singular", ([[1.0, 2.0], [2.0, 4.0]], f64), ([[1.0], [2.0]], f64))(op("linalg.solve"))

# ---- strings ------------------------------------------------------------------------------
S = (["h\u00e9llo", "", "\u65e5\u672c", "a b"], tf.string)
case("strings_length", S)(lambda s: (tf.strings.length(s), tf.strings.length(s, unit="UTF8_CHAR")))
case("strings_substr", S)(
    lambda s: (tf.strings.substr(s, 0, 2), tf.strings.substr(s, 0, 2, unit="UTF8_CHAR"))
)
case("strings_substr_negative_pos", (["h\u00e9llo", "\u65e5\u672c"], tf.string))(
    lambda s: (
        tf.strings.substr(s, -1, 1, unit="UTF8_CHAR"),
        tf.strings.substr(s, -2, 5),
        tf.strings.substr(s, 1, 1, unit="UTF8_CHAR"),
    )
)
case("strings_substr_out_of_range", (["abc"], tf.string))(lambda s: tf.strings.substr(s, 5, 1))
case("strings_split", (["a  b", " c ", ""], tf.string))(
    lambda s: (tf.strings.split(s), tf.strings.split(s, sep=" "))
)
case("to_number_good", (["1e40", "-0", " 3", "nan", "-inf", "1.5"], tf.string))(
    op("strings.to_number")
)
case("to_number_bad", (["abc"], tf.string))(op("strings.to_number"))
case("to_number_int_overflow", (["2147483648"], tf.string))(
    lambda s: tf.strings.to_number(s, out_type=tf.int32)
)
case("to_number_int_float_text", (["3.0"], tf.string))(
    lambda s: tf.strings.to_number(s, out_type=tf.int64)
)


if __name__ == "__main__":
    print(f"{which} ops_edges: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
