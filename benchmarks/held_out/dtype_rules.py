"""Held-out: the rules of dtypes. Complex64/complex128 ops and their GradientTape
gradients, first and second order; float16 and bfloat16 arithmetic, long reductions (the
precision they accumulate in), matmul, softmax, exp/log, casts and gradients, with the
rounding of every result shown;
what a tensor combined with a Python int/float/bool/complex becomes, and which mixes of
dtypes raise; the dtype tf.constant and tf.convert_to_tensor pick for Python lists and
numpy values; tf.cast between every pair of a few dtypes at their edge values, bitcast
and saturate_cast; integer ops on int8 and the unsigned types (wrap-around, shifts by the
width or more, reductions that keep int8, integer means, argmax/count_nonzero dtypes);
and Keras mixed precision (a mixed_float16 Dense layer, a LossScaleOptimizer step).

Each case runs eagerly and inside tf.function (tracer: once per backend, C and the numpy
interpreter), taking its tensors as arguments, and prints one line per mode:
`case [mode] dtype shape [values]` or `case [mode] ERR TypeName: message`, so the two
engines' outputs can be compared line by line. Values print to 6 significant digits,
complex ones as re+imj, -0 as 0, and an entry of a float32/complex64 (float64/complex128)
result below 1e-6 (1e-13) times its largest finite magnitude as 0, so rounding noise in a
zero does not count; several results are separated by ` ; `. A gradient case
differentiates a weighted sum of its outputs (of the real and the imaginary parts of a
complex one), so the gradient with respect to a complex input is TensorFlow's
d/dre + i d/dim. Cases about Python objects (policies, DType properties) print once, as
`[static]`. An optional second argument keeps only the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

nan, inf = float("nan"), float("inf")
CASES = []
STATIC = []
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


class T:
    """An input made as `tf.constant(values, dtype=tf.<name>)` when the case runs, so a
    dtype one engine lacks fails that case alone."""

    def __init__(self, values, name):
        self.values, self.name = values, name


def dt(name):
    return getattr(tf, name)


def make(spec):
    if isinstance(spec, T):
        return tf.constant(spec.values, dtype=dt(spec.name))
    return tf.constant(spec)


def spec_dtype(spec):
    return spec.name if isinstance(spec, T) else np.asarray(spec).dtype.name


# ---- registration, printing -------------------------------------------------------------


def case(name, *inputs):
    """Registers `fn(*tensors)`, whose results are printed as they are."""

    def register(fn):
        CASES.append((name, fn, inputs))
        return fn

    return register


def static(name):
    """Registers `fn()`, run once outside any tf.function (Python objects' properties)."""

    def register(fn):
        STATIC.append((name, fn))
        return fn

    return register


def weights(n, phase):
    return 1.0 + 0.5 * np.sin(1.7 * np.arange(n) + phase)


def weighted_sum(y):
    """A real scalar that depends on every entry of `y` (or of each of several) with a
    distinct weight, on the real and the imaginary part of a complex one; integer results
    are summed as they are."""
    if isinstance(y, (tuple, list)):
        return total([weighted_sum(t) for t in y])
    shape = tuple(int(d) for d in y.shape)
    n = int(np.prod(shape))
    if y.dtype.is_complex:
        real = tf.float32 if y.dtype.name == "complex64" else tf.float64
        wr = tf.constant(weights(n, 0.3).reshape(shape), dtype=real)
        wi = tf.constant(weights(n, 1.1).reshape(shape), dtype=real)
        return tf.reduce_sum(tf.math.real(y) * wr) + tf.reduce_sum(tf.math.imag(y) * wi)
    if not y.dtype.is_floating:
        return tf.reduce_sum(y)
    return tf.reduce_sum(y * tf.constant(weights(n, 0.3).reshape(shape), dtype=y.dtype))


def total(parts):
    """The sum of scalars of possibly different dtypes, in float64."""
    return tf.add_n([tf.cast(p, tf.float64) for p in parts])


def grad_case(name, *inputs, order=1, wrt=None):
    """Registers the gradient of `weighted_sum(fn(*tensors))` with respect to the inputs
    numbered in `wrt` (all float and complex inputs by default); with `order=2` the result
    is (first gradients, gradients of their weighted sum)."""
    if wrt is None:
        wrt = [i for i, a in enumerate(inputs) if spec_dtype(a) in FLOAT_NAMES]

    def register(fn):
        def first(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as tape:
                tape.watch(xs)
                loss = weighted_sum(fn(*args))
            return tuple(tape.gradient(loss, xs))

        def second(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as outer:
                outer.watch(xs)
                with tf.GradientTape() as inner:
                    inner.watch(xs)
                    loss = weighted_sum(fn(*args))
                g = inner.gradient(loss, xs)
                loss2 = total([weighted_sum(d) for d in g if d is not None])
            return tuple(g), tuple(outer.gradient(loss2, xs))

        CASES.append((name, first if order == 1 else second, inputs))
        return fn

    return register


def fmt(x):
    text = f"{float(x):.6g}"
    return "0" if text == "-0" else text


def fmt_complex(z):
    re_text, im_text = fmt(z.real), fmt(z.imag)
    return f"{re_text}{'' if im_text[0] == '-' else '+'}{im_text}j"


def flush(a, name):
    """`a`'s entries (and real and imaginary parts) with those below a relative tolerance
    of its largest finite magnitude set to 0: rounding noise where the answer is 0."""
    tol = {"float32": 1e-6, "complex64": 1e-6, "float64": 1e-13, "complex128": 1e-13}
    flat = a.ravel().copy()
    if name not in tol or flat.size == 0:
        return flat
    parts = [flat.real, flat.imag] if a.dtype.kind == "c" else [flat]
    finite = np.concatenate([np.abs(p[np.isfinite(p)]) for p in parts])
    if finite.size == 0:
        return flat
    limit = tol[name] * finite.max()
    for p in parts:
        p[np.abs(p) < limit] = 0.0
    return flat


def render(v):
    if isinstance(v, (tuple, list)):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    if v is None:
        return "None"
    if isinstance(v, str):
        return repr(v)
    if hasattr(v, "is_floating") and not hasattr(v, "numpy"):  # a DType
        return f"dtype {v.name}"
    a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    name = v.dtype.name if hasattr(v, "dtype") and hasattr(v.dtype, "name") else a.dtype.name
    if a.dtype.kind == "c":
        items = [fmt_complex(z) for z in flush(a, name)]
    elif a.dtype.kind == "f" or name == "bfloat16":
        items = [fmt(x) for x in flush(a.astype(np.float64), name)]
    elif a.dtype == object or a.dtype.kind in "SU":
        items = [repr(x) for x in a.ravel().tolist()]
    else:
        items = [str(x) for x in a.ravel().tolist()]
    return f"{name} {tuple(a.shape)} [{' '.join(items)}]"


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


def run_static(name, fn):
    try:
        text = render(fn())
    except Exception as e:  # report it and go on
        text = failure(e)
    print(f"{name} [static] {text}", flush=True)


def c64(a):
    return np.asarray(a, np.complex64)


def c128(a):
    return np.asarray(a, np.complex128)


def f16(a):
    return np.asarray(a, np.float16)


def f32(a):
    return np.asarray(a, np.float32)


def f64(a):
    return np.asarray(a, np.float64)


def ints(a, name):
    return np.asarray(a, getattr(np, name))


# ---- complex values ---------------------------------------------------------------------
Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j]
W = [0.5 - 1j, 2 + 0.5j, -1 + 1.5j]
ZA = [[1 + 1j, 2 - 0.5j], [-1 + 0j, 0.5 + 2j]]
ZB = [[0.5 + 0j, -1j], [2 + 1j, 1 - 1j]]
ZF = [1 + 0j, 2 - 1j, -0.5 + 0.5j, 3j]


def arith(a, b):
    return a + b, a - b, a * b, a / b, -a


def parts(z):
    return tf.abs(z), tf.math.real(z), tf.math.imag(z), tf.math.conj(z), tf.math.angle(z)


case("c64_arith", c64(Z), c64(W))(arith)
case("c64_parts", c64(Z))(parts)
case("c64_exp_log_sqrt_square", c64(Z))(
    lambda z: (tf.exp(z), tf.math.log(z), tf.sqrt(z), tf.square(z), tf.math.reciprocal(z))
)
case("c128_trig", c128(Z))(lambda z: (tf.sin(z), tf.cos(z), tf.tanh(z)))
case("c64_pow", c64(Z), c64(W))(lambda a, b: (tf.pow(a, b), a**2, a**0.5))
case("c128_pow_zero_base", c128([0, 0, 0]), c128([0, 1, 2 + 1j]))(tf.pow)
case("c64_matmul", c64(ZA), c64(ZB))(
    lambda a, b: (tf.matmul(a, b), tf.matmul(a, b, adjoint_a=True), tf.linalg.adjoint(a))
)
case("c128_reductions", c128(Z))(
    lambda z: (tf.reduce_sum(z), tf.reduce_mean(z), tf.reduce_prod(z), tf.norm(z))
)
case("complex_ctor", f32([1.0, -2.0]), f32([0.5, 3.0]), f64([0.25, -1.0]))(
    lambda r, i, d: (tf.complex(r, i), tf.complex(d, d))
)
case("complex_ctor_mixed_error", f32([1.0]), f64([2.0]))(tf.complex)
case("c64_casts", c64(Z), f32([1.5, -2.0]))(
    lambda z, x: (
        tf.cast(z, tf.complex128),
        tf.cast(z, tf.float32),
        tf.cast(x, tf.complex64),
        tf.cast(z, tf.int32),
    )
)
case("fft_ifft", c64(ZF), c128(ZF), c64(ZA))(
    lambda z, w, m: (
        tf.signal.fft(z),
        tf.signal.ifft(z),
        tf.signal.fft(w),
        tf.signal.ifft(w),
        tf.signal.fft2d(m),
        tf.signal.ifft2d(m),
    )
)
case("rfft_irfft", f32([1.0, -2.0, 0.5, 3.0, 0.0, 1.5]), f64([1.0, -2.0, 0.5, 3.0, 0.25]))(
    lambda x, d: (tf.signal.rfft(x), tf.signal.irfft(tf.signal.rfft(x)), tf.signal.rfft(d))
)
case("c64_ordering_error", c64(Z), c64(W))(lambda a, b: (tf.maximum(a, b), a < b, tf.reduce_max(a)))
case("real_input_parts", f32([-2.0, 0.0, 3.0]))(parts)
case("c64_abs_extremes", c64([3e38 + 3e38j, 1e-30 + 1e-30j, complex(inf, nan), 1e-45j]))(tf.abs)
case("c64_branch_cuts", c64([complex(-4, 0.0), complex(-4, -0.0), complex(-1, -0.0)]))(
    lambda z: (tf.sqrt(z), tf.math.log(z), tf.math.angle(z))
)
case("c64_div_extremes", c64([1e30 + 1e30j, 1e-30j]), c64([1e30 + 1e30j, 1e-30 + 1e-30j]))(
    lambda a, b: a / b
)

# ---- complex gradients ------------------------------------------------------------------
grad_case("g_c64_abs", c64(Z), order=2)(tf.abs)
grad_case("g_c128_abs", c128(Z), order=2)(tf.abs)
grad_case("g_abs_zero_norm", c64([0, 1, -1j]), c128(Z))(lambda z, w: (tf.abs(z), tf.norm(w)))
grad_case("g_c64_real_imag_conj", c64(Z))(
    lambda z: (tf.math.real(z), 2.0 * tf.math.imag(z), tf.math.conj(z))
)
grad_case("g_c128_angle", c128(Z), order=2)(tf.math.angle)
grad_case("g_c128_exp_log", c128(Z), order=2)(lambda z: (tf.exp(z), tf.math.log(z)))
grad_case("g_c128_sqrt", c128(Z), order=2)(tf.sqrt)
grad_case("g_c128_square", c128(Z), order=2)(tf.square)
grad_case("g_c128_reciprocal_trig", c128(Z))(
    lambda z: (tf.math.reciprocal(z), tf.sin(z), tf.tanh(z))
)
grad_case("g_c64_multiply", c64(Z), c64(W), order=2)(lambda a, b: a * b)
grad_case("g_c128_divide", c128(Z), c128(W), order=2)(lambda a, b: a / b)
grad_case("g_c64_matmul", c64(ZA), c64(ZB))(tf.matmul)
grad_case("g_c64_matmul_adjoint", c64(ZA), c64(ZB))(lambda a, b: tf.matmul(a, b, adjoint_b=True))
grad_case("g_c_reductions", c64(Z), c128(W))(
    lambda z, w: (tf.reduce_sum(z), tf.abs(tf.reduce_sum(z)), tf.reduce_mean(w * w))
)
grad_case("g_complex_ctor", f32([1.0, -2.0, 0.5]), f32([0.5, 3.0, -1.0]), order=2)(
    lambda r, i: (tf.complex(r, i), tf.abs(tf.complex(r, i)))
)
grad_case("g_cast_real_to_complex", f32([1.0, -2.0, 0.5]), order=2)(
    lambda x: tf.square(tf.cast(x, tf.complex64) + tf.constant(1j, tf.complex64))
)
grad_case("g_cast_complex_to_real", c64(Z))(lambda z: tf.cast(z, tf.float32) * 3.0)
grad_case("g_c64_fft_ifft", c64(ZF))(lambda z: (tf.signal.fft(z), tf.signal.ifft(z)))
grad_case("g_rfft_even", f32([1.0, -2.0, 0.5, 3.0, 0.0, 1.5]))(tf.signal.rfft)
grad_case("g_rfft_odd", f32([1.0, -2.0, 0.5, 3.0, 0.25]))(tf.signal.rfft)
grad_case("g_irfft", c64([1 + 0j, 2 - 1j, -0.5 + 0.5j, 3 + 0j]))(tf.signal.irfft)
grad_case("g_fft_magnitude", f32([1.0, -2.0, 0.5, 3.0]))(
    lambda x: tf.abs(tf.signal.fft(tf.cast(x, tf.complex64)))
)
grad_case("g_c128_pow", c128(Z), c128(W))(tf.pow)
grad_case("g_c128_pow_const", c128(Z), order=2)(lambda z: z**3)
grad_case("g_real_times_complex", f64([1.0, -2.0, 0.5]), c128(Z))(
    lambda x, z: tf.math.real(z * tf.cast(x, z.dtype)) + tf.abs(z - tf.cast(x, z.dtype))
)


@case("g_complex_target", c128(Z))
def _(z):
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = tf.reduce_sum(z * z)
    return tape.gradient(y, z)


# ---- float16 ------------------------------------------------------------------------------
HA = f16([0.1, 2048.0, 65504.0, 1.0, 1e-4, 3.0])
HB = f16([0.2, 1.0, 65504.0, 3.0, 1e-4, 7.0])
case("f16_arith", HA, HB)(lambda a, b: (a + b, a - b, a * b, a / b))
case("f16_python_scalars", HA)(lambda a: (a + 0.1, a * 3, a / 3.0, 2 - a, a + 1e5))
case("f16_sum_many", f16(np.full(10000, 0.1)))(lambda x: (tf.reduce_sum(x), tf.reduce_mean(x)))
case("f16_sum_4097_ones_overflow", f16(np.ones(4097)), f16(np.full(5000, 20.0)))(
    lambda x, y: (tf.reduce_sum(x), tf.reduce_mean(x), tf.reduce_sum(y), tf.reduce_mean(y))
)
case("f16_reduce_axes", f16(np.linspace(0.0, 3.0, 3000).reshape(3, 1000)))(
    lambda x: (tf.reduce_mean(x, axis=1), tf.reduce_sum(x, axis=1), tf.reduce_sum(x[:, :4], 0))
)
case("f16_cumsum_tail", f16(np.full(3000, 0.1)))(lambda x: tf.math.cumsum(x)[-3:])
case("f16_matmul_long", f16(np.full((2, 4096), 0.1)), f16(np.ones((4096, 2))))(tf.matmul)
case("f16_matmul_small", f16([[0.1, 0.2], [0.3, 0.4]]), f16([[1.5, -2.0], [0.25, 3.0]]))(tf.matmul)
case("f16_softmax", f16([[10.0, 0.0, -10.0, 5.0], [11.0, 11.0, -65504.0, 0.0]]))(
    lambda x: (tf.nn.softmax(x), tf.nn.log_softmax(x))
)
case("f16_exp_log", f16([11.09, 11.1, -17.0, 0.0, 6e-8, 65504.0]))(
    lambda x: (tf.exp(x), tf.math.log(x), tf.math.expm1(x), tf.math.log1p(x))
)
case("f16_unary", f16([0.1, 2.0, 1e-4, 100.0, -3.0]))(
    lambda x: (tf.sqrt(x), tf.math.rsqrt(x), tf.tanh(x), tf.sigmoid(x), tf.math.softplus(x))
)
case(
    "f16_round_divmod",
    f16([0.5, 1.5, 2.5, -0.5, -1.5, 1023.5, 0.49976]),
    f16([7.5, -7.5, 1000.0]),
    f16([2.0, 2.0, 0.3]),
)(
    lambda x, a, b: (
        tf.round(x),
        tf.floor(x),
        tf.math.ceil(x),
        tf.math.floordiv(a, b),
        tf.math.floormod(a, b),
    )
)
case("f16_moments", f16([100.0, 101.0, 102.0, 103.0, 250.0]))(
    lambda x: (tf.math.reduce_variance(x), tf.math.reduce_std(x), tf.math.l2_normalize(x))
)
case("f16_argmax_topk", f16([1.0, 1.0009, 1.001, -65504.0]))(
    lambda x: (tf.argmax(x), tf.reduce_max(x), tf.math.top_k(x, 2).values)
)
case("f16_nn", f16([-20.0, 0.0, 3.0, 40.0]), f16([1.0, 0.5, 0.0, 1.0]))(
    lambda z, t: (
        tf.nn.relu(z),
        tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=z),
        tf.nn.l2_loss(z),
    )
)
case("f32_to_f16_rounding", f32([65519.0, 65520.0, 1e-8, 3e-8, 2049.0, 2051.0, 0.1, 1e5]))(
    lambda x: tf.cast(x, tf.float16)
)
case("f64_to_f16_double_rounding", f64([1 + 2**-11 + 2**-40, 1 + 2**-11, 1 + 3 * 2**-11]))(
    lambda x: tf.cast(x, tf.float16)
)
case("f16_mixed_f32_error", f16([1.0]), f32([1.0]))(lambda a, b: a + b)
grad_case("g_f16_cube_exp_log", f16([0.5, 1.5, 3.0]), order=2)(
    lambda x: (x * x * x, tf.exp(x), tf.math.log(x))
)
grad_case("g_f16_softmax", f16([[1.0, 2.0, 3.0], [10.0, -10.0, 0.0]]))(tf.nn.softmax)
grad_case("g_f16_matmul", f16([[0.1, 0.2], [0.3, 0.4]]), f16([[1.5, -2.0], [0.25, 3.0]]))(tf.matmul)
grad_case("g_f16_mean_many", f16(np.linspace(-1.0, 1.0, 2000)))(lambda x: tf.reduce_mean(x * x))
grad_case("g_f16_f32_casts", f16([0.1, -2.0, 300.0]), f32([0.1, -2.0, 300.0]))(
    lambda h, x: (tf.cast(h, tf.float32) ** 2, tf.cast(x, tf.float16) * 1000.0)
)
grad_case("g_f16_underflow", f16([1e-4, 1e-3, 1.0]))(lambda x: x * x * 1e-4)

# ---- bfloat16 -----------------------------------------------------------------------------
case(
    "bf16_arith",
    T([1.0, 0.00390625, 3.0, 1e38, 0.1], "bfloat16"),
    T([0.00390625, 1.0, 7.0, 10.0, 0.2], "bfloat16"),
)(lambda a, b: (a + b, a * b, a / b))
case("f32_to_bf16_rounding", f32([1.00390625, 1.01171875, 3.4e38, 1e-40, nan, 65536 * 4.1]))(
    lambda x: tf.cast(x, dt("bfloat16"))
)
case("bf16_sum_many", T(np.full(1000, 0.1), "bfloat16"))(
    lambda x: (tf.reduce_sum(x), tf.reduce_mean(x))
)
case(
    "bf16_matmul_softmax",
    T(np.full((2, 512), 0.1), "bfloat16"),
    T(np.ones((512, 2)), "bfloat16"),
    T([[1.0, 2.0, 3.0], [88.0, 89.0, 0.5]], "bfloat16"),
)(lambda a, b, x: (tf.matmul(a, b), tf.nn.softmax(x), tf.exp(x), tf.math.log(x)))
grad_case("g_bf16_cube_exp", T([0.5, -1.5, 3.0], "bfloat16"))(lambda x: (x * x * x, tf.exp(x)))

# ---- tensors with Python numbers --------------------------------------------------------
I32 = ints([1, -2, 3], "int32")
F32 = f32([1.5, -2.0, 0.1])
case("f32_py_int", F32)(lambda x: (x + 2, 2 * x, x // 2, x**2))
case("float_py_float", F32, f64([1.0]))(lambda x, d: (x + 0.1, 1e-46 + x, x * 1e39, d + 0.1))
case("py_bool", F32, I32)(lambda x, i: (x + True, i + True))
case("f32_py_complex_error", F32)(lambda x: x + 1j)
case("i32_py_int", I32)(lambda x: (x + 2, x * -3, 7 // x, x % 2, x**2, x / 2, 3 / x))
case("i32_py_float_error", I32)(lambda x: x + 2.5)
case("i32_py_integral_float", I32)(lambda x: x + 2.0)
case("py_float_times_i32_error", I32)(lambda x: 2.5 * x)
case("i32_py_big_int", I32)(lambda x: x + 2**40)
case("i64_py_big_int", ints([1, -2], "int64"))(lambda x: x + 2**40)
case("i8_py_out_of_range", ints([1, -2], "int8"))(lambda x: x + 200)
case("u8_py_negative", ints([1, 2], "uint8"))(lambda x: x + (-1))
case("c64_py_scalars", c64(Z))(lambda z: (z + 2, z * 0.5, z + 1j))
case("bool_py", np.array([True, False]))(
    lambda b: (tf.logical_and(b, True), tf.logical_or(b, False), tf.equal(b, True))
)
case("bool_add_error", np.array([True, False]))(lambda b: b + b)

# ---- mixing dtypes ---------------------------------------------------------------------
case("mix_i32_f32_error", I32, F32)(lambda a, b: a + b)
case("mix_f32_f64_error", F32, f64([1.0, 2.0, 3.0]))(lambda a, b: (a * b, tf.add_n([a, b])))
case("mix_i32_i64_error", I32, ints([1, 2, 3], "int64"))(lambda a, b: a - b)
case("mix_c64_f32_error", c64([1j]), f32([1.0]))(lambda a, b: a * b)
case("mix_matmul_f32_f64_error", f32([[1.0]]), f64([[1.0]]))(tf.matmul)
case("mix_concat_where_error", np.array([True, False, True]), I32, F32)(
    lambda c, a, b: (tf.concat([a, b], 0), tf.where(c, a, b))
)
case("mix_maximum_i32_py_float_error", I32)(lambda x: tf.maximum(x, 0.5))

# ---- tf.constant and convert_to_tensor -------------------------------------------------
case("const_py_lists")(
    lambda: (
        tf.constant([1, 2, 3]),
        tf.constant([1, 2.5]),
        tf.constant([[1, 2], [3.5, 4]]),
        tf.constant([True, False]),
        tf.constant(0.1),
    )
)
case("const_py_big_ints")(lambda: (tf.constant([1, 2**40]), tf.constant(2**31)))
case("const_py_too_big_error")(lambda: tf.constant(2**64))
case("const_int_complex_mix")(lambda: tf.constant([1, 2j]))
case("const_bool_int_mix")(lambda: tf.constant([True, 1]))
case("const_numpy")(
    lambda: (
        tf.constant(np.array([0.1, 2.0])),
        tf.constant(np.array([1, 2], np.int64)),
        tf.constant(np.float32(1.5)),
        tf.constant(np.float64(0.1)),
        tf.constant(np.int16(-3)),
        tf.constant(np.array([1, 65535], np.uint16)),
        tf.constant(np.array([0.5], np.float16)),
    )
)
case("const_numpy_to_int_dtype")(lambda: tf.constant(np.array([1.5, -2.7]), dtype=tf.int32))
case("const_integral_float_to_int")(lambda: tf.constant(2.0, dtype=tf.int32))
case("const_float_to_int_error")(lambda: tf.constant(2.5, dtype=tf.int32))
case("const_int_to_float_dtypes")(
    lambda: (
        tf.constant([1, 2], dtype=tf.float16),
        tf.constant(3, dtype=tf.complex64),
        tf.constant(1e5, dtype=tf.float16),
    )
)
case("const_negative_unsigned")(lambda: tf.constant(-1, dtype=tf.uint8))
case("convert_dtype_hint")(
    lambda: (
        tf.convert_to_tensor(1, dtype_hint=tf.float32),
        tf.convert_to_tensor(1.5, dtype_hint=tf.int32),
        tf.convert_to_tensor([1, 2], dtype_hint=tf.int64),
        tf.convert_to_tensor(3, dtype=tf.float64),
    )
)
case("convert_hint_tensor", I32)(lambda x: tf.convert_to_tensor(x, dtype_hint=tf.float32))
case("convert_hint_numpy")(lambda: tf.convert_to_tensor(np.array([0.1]), dtype_hint=tf.float32))
case("convert_dtype_mismatch_error", I32)(lambda x: tf.convert_to_tensor(x, dtype=tf.float32))

# ---- casts between pairs of dtypes ---------------------------------------------------------
TARGETS = ("bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64")


def cast_all(x):
    return tuple(tf.cast(x, dt(name)) for name in TARGETS)


case("cast_from_bool", np.array([True, False]))(cast_all)
case("cast_from_uint8", ints([0, 255, 128, 7], "uint8"))(cast_all)
case("cast_from_int8", ints([-128, 127, -1, 0], "int8"))(cast_all)
case("cast_from_int32", ints([-(2**31), 2**31 - 1, -1, 65537, 300], "int32"))(cast_all)
case("cast_from_int64", ints([-(2**63), 2**63 - 1, 2**53 + 1, -1, 256], "int64"))(cast_all)
case("cast_from_float16", f16([0.5, -2.5, 255.0, 127.0, -0.0, 1.0]))(cast_all)
case("cast_from_float32", f32([-1.5, 2.5, 0.7, 127.9, 16777217.0, 0.0]))(cast_all)
case("cast_from_float64", f64([0.1, -0.7, 2**53 + 1, 1e-30, 100.5, 2**24 + 1]))(cast_all)
case("cast_from_complex64", c64([1.5 - 2j, -0.5 + 1j, 0, 1j]))(cast_all)
case(
    "cast_huge_to_float",
    f64([1e300, -1e300, 70000.0, 3.5e38]),
    ints([65504, 65519, 65520, 100000, -70000], "int32"),
)(
    lambda x, i: (
        tf.cast(x, tf.float32),
        tf.cast(x, tf.float16),
        tf.cast(x, tf.complex64),
        tf.cast(i, tf.float16),
    )
)
case("cast_float_out_of_range_to_int", f32([nan, inf, -inf, 3e9, -1.0, 1e20]))(
    lambda x: (tf.cast(x, tf.int32), tf.cast(x, tf.int64), tf.cast(x, tf.uint8))
)
case("cast_to_bfloat16", ints([1, 257], "int32"), f64([0.1, 1e39]), c64([1.5 - 2j]))(
    lambda i, d, z: tuple(tf.cast(x, dt("bfloat16")) for x in (i, d, z))
)
case("cast_from_bfloat16", T([1.5, -2.5, 257.0, 3e38, -300.25], "bfloat16"))(cast_all)

# ---- bitcast, saturate_cast ------------------------------------------------------------------
case("bitcast_f32", f32([1.0, -0.0, nan]))(
    lambda x: (tf.bitcast(x, tf.int32), tf.bitcast(x, tf.uint8))
)
case("bitcast_other_widths", ints([0, 0, 128, 63, 1, 2, 3, 4], "uint8"), f16([1.0, -2.0]))(
    lambda b, h: (
        tf.bitcast(tf.reshape(b, [2, 4]), tf.float32),
        tf.bitcast(b, tf.float64),
        tf.bitcast(h, tf.int16),
        tf.bitcast(tf.constant([1.0], tf.float64), tf.int32),
    )
)
case("saturate_cast_float", f32([300.0, -5.0, 1e10, 127.5, nan, -1e10]), f64([1e300, -1.5]))(
    lambda x, d: (
        tf.saturate_cast(x, tf.uint8),
        tf.saturate_cast(x, tf.int8),
        tf.saturate_cast(x, tf.float16),
        tf.saturate_cast(d, tf.float32),
    )
)
case("saturate_cast_int", ints([300, -300, 2**31 - 1, -1], "int32"))(
    lambda x: (tf.saturate_cast(x, tf.int8), tf.saturate_cast(x, tf.uint8))
)

# ---- integer ops ------------------------------------------------------------------------


def int_arith(a, b):
    return a + b, a - b, a * b, a // b, a % b


case("u8_arith", ints([200, 3, 20, 255], "uint8"), ints([100, 5, 20, 2], "uint8"))(int_arith)
case("u32_arith", ints([2**32 - 1, 3, 2**31, 7], "uint32"), ints([1, 5, 2, 2], "uint32"))(int_arith)
case("u64_arith", ints([2**64 - 1, 3, 2**63, 7], "uint64"), ints([1, 5, 2, 2], "uint64"))(int_arith)
case("i8_arith", ints([100, -128, 16, -7], "int8"), ints([100, 1, 16, 2], "int8"))(int_arith)
case("u8_abs_negative", ints([0, 200, 255], "uint8"))(lambda x: (tf.abs(x), tf.negative(x)))
case("u32_negative", ints([0, 1, 2**32 - 1], "uint32"))(lambda x: -x)
case("int_truediv_dtypes")(
    lambda: tuple(
        tf.constant([7], dt(name)) / tf.constant([2], dt(name))
        for name in ("int8", "uint8", "int16", "int32", "int64", "uint16")
    )
)
case("i8_pow", ints([2, -2, 3], "int8"), ints([7, 7, 5], "int8"))(tf.pow)


def bitwise(a, b):
    bw = tf.bitwise
    return bw.bitwise_and(a, b), bw.bitwise_or(a, b), bw.bitwise_xor(a, b), bw.invert(a)


case("bitwise_i8", ints([-128, 127, -1, 85], "int8"), ints([1, -1, 15, -86], "int8"))(bitwise)
case("bitwise_u8", ints([0, 255, 15, 170], "uint8"), ints([255, 1, 240, 85], "uint8"))(bitwise)
case("bitwise_i64", ints([-(2**63), 2**40, -1], "int64"), ints([-1, 2**40 - 1, 2**62], "int64"))(
    bitwise
)


def shifts(x, s):
    return tf.bitwise.left_shift(x, s), tf.bitwise.right_shift(x, s)


case("shift_i32", ints([1, 1, 1, -8, 5, 1], "int32"), ints([0, 31, 32, 1, 33, 40], "int32"))(shifts)
case("shift_i8", ints([1, 1, -128, -128, 64], "int8"), ints([7, 8, 7, 8, 9], "int8"))(shifts)
case("shift_i64", ints([1, -1, 3], "int64"), ints([63, 64, 65], "int64"))(shifts)
case("shift_negative_amount", ints([16, -16], "int32"), ints([-1, -1], "int32"))(shifts)
case(
    "reduce_sum_i8_u8_wraps",
    ints([100, 100, 100, -1], "int8"),
    ints([[200, 100], [255, 1]], "uint8"),
)(
    lambda x, u: (
        tf.reduce_sum(x),
        tf.math.cumsum(x),
        tf.reduce_sum(u),
        tf.reduce_sum(u, axis=1),
        tf.add_n([u, u]),
    )
)
case("reduce_mean_ints", ints([1, 2], "int32"), ints([-1, -2, -2], "int32"))(
    lambda a, b: (tf.reduce_mean(a), tf.reduce_mean(b), tf.reduce_mean(a, keepdims=True))
)
case(
    "reduce_mean_int_overflow",
    ints([100, 100, 100], "int8"),
    ints([255, 255, 0], "uint8"),
    ints([2**30, 2**30, 2**30], "int32"),
)(lambda a, b, c: (tf.reduce_mean(a), tf.reduce_mean(b), tf.reduce_mean(c)))
case("reduce_prod_ints", ints([65536, 65536, 3], "int32"), ints([16, 16, 2], "uint8"))(
    lambda a, b: (tf.reduce_prod(a), tf.reduce_prod(b))
)
case(
    "reduce_max_min_wide",
    ints([2**64 - 1, 0, 2**63], "uint64"),
    ints([-(2**63), 2**63 - 1, 0], "int64"),
)(lambda u, i: (tf.reduce_max(u), tf.reduce_min(u), tf.reduce_max(i), tf.reduce_min(i)))
case(
    "argmax_output_types",
    ints([[3, 7, 7], [-1, -5, 0]], "int8"),
    ints([0, 255, 255], "uint8"),
    f16([1.0, nan, 2.0]),
)(
    lambda x, u, h: (
        tf.argmax(x),
        tf.argmax(x, axis=1, output_type=tf.int32),
        tf.argmin(x, axis=1),
        tf.math.argmin(x, output_type=tf.int32),
        tf.argmax(u),
        tf.argmax(h),
        tf.argmin(h),
    )
)
case(
    "count_nonzero_dtypes",
    f32([0.0, -0.0, nan, 1.0]),
    ints([[0, 3], [-1, 0]], "int8"),
    np.array([True, False, True]),
    c64([0, 1j, 0]),
)(
    lambda x, i, b, z: (
        tf.math.count_nonzero(x),
        tf.math.count_nonzero(x, dtype=tf.int32),
        tf.math.count_nonzero(i, axis=1, keepdims=True),
        tf.math.count_nonzero(i, dtype=tf.float32),
        tf.math.count_nonzero(b),
        tf.math.count_nonzero(z),
    )
)
case("matmul_int32", ints([[1, 2], [3, 4]], "int32"), ints([[2**30, 0], [1, -1]], "int32"))(
    tf.matmul
)
case("matmul_int8", ints([[1, 2]], "int8"), ints([[100], [100]], "int8"))(tf.matmul)
case("range_dtypes")(
    lambda: (
        tf.range(3),
        tf.range(3.0),
        tf.range(0, 1, 0.25),
        tf.range(tf.constant(3, tf.int64)),
    )
)

# ---- Keras mixed precision ----------------------------------------------------------------
KERNEL = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], np.float32)
BIAS = np.array([0.01, -0.02, 0.03], np.float32)
mp = tf.keras.mixed_precision


def mixed_dense(**kwargs):
    """A Dense(3) made under the mixed_float16 policy, built on 2 features with fixed
    weights; the global policy is float32 again afterwards."""
    mp.set_global_policy("mixed_float16")
    try:
        layer = tf.keras.layers.Dense(3, **kwargs)
        layer.build((None, 2))
        layer.set_weights([KERNEL, BIAS])
    finally:
        mp.set_global_policy("float32")
    return layer


def name_of(d):
    return d if isinstance(d, str) or d is None else d.name


@static("dtype_properties")
def _():
    names = ("uint8", "int8", "uint64", "float16", "float64", "complex64")
    keys = ("is_floating", "is_integer", "is_complex", "is_unsigned", "is_bool", "size")
    keys += ("min", "max", "real_dtype", "as_numpy_dtype")
    props = []
    for name in names:
        for key in keys:
            try:
                value = getattr(dt(name), key)
                text = getattr(value, "name", None) or getattr(value, "__name__", None)
                text = text or fmt(value)
            except Exception as e:  # one missing property, not the case
                text = type(e).__name__
            props.append(f"{name}.{key}={text}")
    return " ".join(props)


@static("mp_global_policy")
def _():
    mp.set_global_policy("mixed_float16")
    try:
        p = mp.global_policy()
        got = (p.name, name_of(p.compute_dtype), name_of(p.variable_dtype))
    finally:
        mp.set_global_policy("float32")
    q = mp.Policy("mixed_float16")
    return got + (mp.global_policy().name, q.name, name_of(q.compute_dtype))


@static("mp_dense_dtypes")
def _():
    layer = mixed_dense()
    return (
        name_of(layer.compute_dtype),
        name_of(layer.variable_dtype),
        name_of(layer.kernel.dtype),
        name_of(tf.keras.layers.Dense(2).dtype),
    )


MP_X = f32([[1.0, 2.0], [-0.5, 0.25]])
_layers = {}


def mixed_layer_call(x):
    """Calls one mixed-precision Dense (made on first use): its output and its kernel."""
    if "dense" not in _layers:
        _layers["dense"] = mixed_dense()
    layer = _layers["dense"]
    return layer(x), tf.convert_to_tensor(layer.kernel)


case("mp_dense_call", MP_X)(mixed_layer_call)


def float16_policy_call(x):
    """A Dense(3) made under the plain float16 policy: its output and its kernel."""
    if "f16" not in _layers:
        mp.set_global_policy("float16")
        try:
            layer = tf.keras.layers.Dense(3)
            layer.build((None, 2))
            layer.set_weights([KERNEL.astype(np.float16), BIAS.astype(np.float16)])
        finally:
            mp.set_global_policy("float32")
        _layers["f16"] = layer
    layer = _layers["f16"]
    return layer(x), tf.convert_to_tensor(layer.kernel)


case("float16_policy_dense_call", f16(MP_X))(float16_policy_call)


def mixed_float32_head(x):
    if "head" not in _layers:
        mp.set_global_policy("mixed_float16")
        try:
            _layers["head"] = tf.keras.layers.Activation("softmax", dtype="float32")
        finally:
            mp.set_global_policy("float32")
    return _layers["head"](tf.cast(x, tf.float16))


case("mp_float32_softmax_head", MP_X)(mixed_float32_head)


def loss_scale_step(scale):
    """One LossScaleOptimizer step on a fresh mixed Dense layer (Keras 3's scale_loss or
    tf.keras's get_scaled_loss/get_unscaled_gradients): the scaled loss, the updated
    kernel and bias, and the loss scale after the step."""
    layer = mixed_dense()
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    variables = layer.trainable_variables
    if hasattr(opt, "build"):
        opt.build(variables)

    def step(x):
        with tf.GradientTape() as tape:
            y = layer(x)
            loss = tf.reduce_sum(tf.cast(y, tf.float32) ** 2) * scale
            if hasattr(opt, "scale_loss"):
                scaled = opt.scale_loss(loss)
            else:
                scaled = opt.get_scaled_loss(loss)
        grads = tape.gradient(scaled, variables)
        if not hasattr(opt, "scale_loss"):
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, variables))
        return scaled

    return step, layer, opt


def loss_scale_case(name, scale):
    def run(mode, wrap):
        step, layer, opt = loss_scale_step(scale)
        f = step if wrap is None else wrap(step)
        scaled = f(tf.constant(MP_X))
        factor = getattr(opt, "dynamic_scale", None)
        if factor is None:
            factor = opt.loss_scale
        kernel, bias = (tf.convert_to_tensor(v) for v in layer.trainable_variables)
        return scaled, kernel, bias, tf.convert_to_tensor(factor)

    LOSS_SCALE_CASES.append((name, run))


LOSS_SCALE_CASES = []
loss_scale_case("mp_loss_scale_step", 1e-3)
loss_scale_case("mp_loss_scale_overflow_skips", 1.0)


if __name__ == "__main__":
    total = len(CASES) + len(STATIC) + len(LOSS_SCALE_CASES)
    print(f"{which} dtype_rules: {total} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
    for name, fn in STATIC:
        if ONLY in name:
            run_static(name, fn)
    for name, run in LOSS_SCALE_CASES:
        if ONLY not in name:
            continue
        for mode, wrap in MODES:
            try:
                text = render(run(mode, wrap))
            except Exception as e:  # report it and go on
                text = failure(e)
            print(f"{name} [{mode}] {text}", flush=True)
