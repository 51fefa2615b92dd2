"""Held-out: GradientTape gradients, first and second order, at the points where the
derivative is a convention rather than a limit: activations at their kinks (abs, relu,
relu6, leaky_relu, elu, selu at exactly 0), sqrt/rsqrt/log/pow at 0 and with negative
bases, maximum/minimum and reduce_max/min/logsumexp with ties and -inf, clipping at its
bounds, norms and normalisation at the zero vector, softmax and cross-entropies at -inf
and extreme logits, the NaN that tf.where lets through from its unselected branch,
divide_no_nan, xlogy and friends at 0, atan2 at the origin, products and cumulative
products with zeros, sort/top_k/gather/scatter/segment ops with ties and duplicate
indices, strided slices, padding, tiling, resizing, pooling with ties, convolutions with
strides and dilations; and the tape's own surface: stop_gradient, custom_gradient,
unconnected gradients, integer tensors, persistent tapes, watched variables,
output_gradients, jacobian, batch_jacobian and ForwardAccumulator.

A `grad_case` differentiates a weighted sum of its function's outputs (distinct weights,
so a gradient shows which tied element received what) with respect to its float inputs;
`order=2` also differentiates the weighted sum of those gradients again. Other cases run
the tape themselves. Each case runs eagerly and inside tf.function (tracer: once per
backend, C and the numpy interpreter), taking its tensors as arguments, and prints one
line per mode: `case [mode] values` (each gradient as `dtype shape [v ...]` to 6
significant digits, -0 printed as 0, `None` for no gradient) or
`case [mode] ERR TypeName: message`, so the two engines' outputs can be compared line by
line. An optional second argument keeps only the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

nan, inf = float("nan"), float("inf")
CASES = []
rng = np.random.default_rng(20240917)


def f64(a):
    return np.asarray(a, np.float64)


def f32(a):
    return np.asarray(a, np.float32)


def i32(a):
    return np.asarray(a, np.int32)


def gauss(*shape):
    return rng.standard_normal(shape)


# ---- registration, printing -------------------------------------------------------------


def case(name, *inputs):
    """Registers `fn(*tensors)`, which runs its own tape and returns what it found."""

    def register(fn):
        CASES.append((name, fn, inputs))
        return fn

    return register


def weighted_sum(y):
    """A scalar that depends on every entry of `y` (or of each of several) with a distinct
    weight; integer results are summed as they are."""
    if isinstance(y, (tuple, list)):
        return tf.add_n([weighted_sum(t) for t in y])
    if not y.dtype.is_floating:
        return tf.reduce_sum(y)
    dims = list(y.shape)
    if any(d is None for d in dims):  # a shape only known when the function runs
        k = tf.cast(tf.range(tf.size(y)), tf.float64)
        w = tf.reshape(1.0 + 0.5 * tf.sin(1.7 * k + 0.3), tf.shape(y))
        return tf.reduce_sum(y * tf.cast(w, y.dtype))
    shape = tuple(int(d) for d in dims)
    w = (1.0 + 0.5 * np.sin(1.7 * np.arange(int(np.prod(shape))) + 0.3)).reshape(shape)
    return tf.reduce_sum(y * tf.constant(w, dtype=y.dtype))


def dense(g):
    if isinstance(g, tf.IndexedSlices):
        return tf.convert_to_tensor(g)
    return g


def grad_case(name, *inputs, order=1, wrt=None):
    """Registers the gradient of `weighted_sum(fn(*tensors))` with respect to the inputs
    numbered in `wrt` (all floating inputs by default); with `order=2` the result is
    (first gradients, gradients of their weighted sum)."""
    if wrt is None:
        wrt = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind in "fc"]

    def register(fn):
        def first(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as tape:
                tape.watch(xs)
                loss = weighted_sum(fn(*args))
            return tuple(dense(g) for g in tape.gradient(loss, xs))

        def second(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as outer:
                outer.watch(xs)
                with tf.GradientTape() as inner:
                    inner.watch(xs)
                    loss = weighted_sum(fn(*args))
                g = [dense(d) for d in inner.gradient(loss, xs)]
                parts = [weighted_sum(d) for d in g if d is not None]
                total = tf.add_n(parts) if parts else None
            h = [None] * len(xs) if total is None else outer.gradient(total, xs)
            return tuple(g), tuple(dense(d) for d in h)

        CASES.append((name, first if order == 1 else second, inputs))
        return fn

    return register


def fmt(x):
    if isinstance(x, (float, np.floating)):
        text = f"{x:.6g}"
        return "0" if text == "-0" else text
    return str(x)


def to_numpy(v):
    if isinstance(v, (tuple, list)):
        return tuple(to_numpy(x) for x in v)
    if v is None:
        return None
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def render(v):
    if isinstance(v, tuple):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    if v is None:
        return "None"
    a = np.asarray(v)
    return f"{a.dtype.name} {tuple(a.shape)} [{' '.join(fmt(x) for x in a.ravel())}]"


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


# ---- activations at their kinks ----------------------------------------------------------
KINK = f64([-2.0, -0.0, 0.0, 1e-300, 3.0])
grad_case("abs_kink", KINK, order=2)(lambda x: tf.abs(x))
grad_case("sign_times_x", KINK, order=2)(lambda x: tf.sign(x) * x)
grad_case("relu_kink", KINK, order=2)(lambda x: tf.nn.relu(x))
grad_case("relu6_kinks", f64([-1.0, 0.0, 3.0, 6.0, 7.0]), order=2)(lambda x: tf.nn.relu6(x))
grad_case("leaky_relu_kink", f64([-1.0, -0.0, 0.0, 2.0]), order=2)(
    lambda x: tf.nn.leaky_relu(x, alpha=0.2)
)
grad_case("elu_kink", f64([-50.0, -1.0, -0.0, 0.0, 2.0]), order=2)(lambda x: tf.nn.elu(x))
grad_case("selu_kink", f64([-50.0, -1.0, 0.0, 2.0]), order=2)(lambda x: tf.nn.selu(x))
grad_case("gelu_exact_zero", f64([-10.0, 0.0, 10.0]), order=2)(
    lambda x: tf.nn.gelu(x, approximate=False)
)
grad_case("softplus_extremes", f64([-1000.0, -30.0, 0.0, 30.0, 1000.0]), order=2)(
    lambda x: tf.math.softplus(x)
)
grad_case("softsign_zero", f64([-1e300, 0.0, 2.0]))(lambda x: tf.nn.softsign(x))
grad_case("sigmoid_tanh_extremes", f64([-1000.0, -40.0, 0.0, 40.0, 1000.0]), order=2)(
    lambda x: (tf.sigmoid(x), tf.tanh(x))
)
grad_case("sigmoid_f32_extremes", f32([-100.0, -20.0, 0.0, 20.0, 100.0]), order=2)(
    lambda x: tf.sigmoid(x)
)

# ---- maximum / minimum ties ----------------------------------------------------------------
grad_case("maximum_ties", f64([1.0, 2.0, 3.0, -0.0]), f64([1.0, 0.0, 3.0, 0.0]))(
    lambda x, y: tf.maximum(x, y)
)
grad_case("minimum_ties", f64([1.0, 2.0, 3.0, 0.0]), f64([1.0, 0.0, 3.0, -0.0]))(
    lambda x, y: tf.minimum(x, y)
)
grad_case("maximum_scalar_zero", f64([-1.0, 0.0, 2.0]))(lambda x: tf.maximum(x, 0.0))
grad_case("minimum_scalar_first", f64([-1.0, 0.0, 2.0]))(
    lambda x: tf.minimum(tf.zeros([], x.dtype), x)
)
grad_case("maximum_nan", f64([nan, 1.0, nan]), f64([1.0, nan, nan]))(lambda x, y: tf.maximum(x, y))
grad_case("maximum_broadcast_ties", f64([[1.0, 2.0, 3.0], [0.0, 2.0, 5.0]]), f64([1.0, 2.0, 4.0]))(
    lambda x, y: tf.maximum(x, y)
)

# ---- reductions with ties, -inf and zeros ---------------------------------------------------
grad_case("reduce_max_ties", f64([1.0, 3.0, 3.0, 2.0, 3.0]), order=2)(lambda x: tf.reduce_max(x))
grad_case("reduce_min_ties", f64([1.0, 3.0, 1.0, 2.0]))(lambda x: tf.reduce_min(x))
grad_case("reduce_max_axis_ties", f64([[1.0, 1.0, 0.0], [2.0, 5.0, 5.0]]))(
    lambda x: tf.reduce_max(x, axis=1, keepdims=True)
)
grad_case("reduce_max_all_neg_inf", f64([-inf, -inf, -inf]))(lambda x: tf.reduce_max(x))
grad_case("reduce_max_nan", f64([1.0, nan, 3.0]))(lambda x: tf.reduce_max(x))
grad_case("logsumexp_ties", f64([2.0, 2.0, -1.0]), order=2)(lambda x: tf.reduce_logsumexp(x))
grad_case("logsumexp_all_neg_inf", f64([-inf, -inf]))(lambda x: tf.reduce_logsumexp(x))
grad_case("logsumexp_some_neg_inf", f64([-inf, 0.0, 1.0]), order=2)(
    lambda x: tf.reduce_logsumexp(x)
)
grad_case("logsumexp_pos_inf", f64([inf, 1.0]))(lambda x: tf.reduce_logsumexp(x))
grad_case("logsumexp_rows_neg_inf", f64([[-inf, -inf], [0.0, -inf], [1000.0, 1000.0]]))(
    lambda x: tf.reduce_logsumexp(x, axis=1)
)
grad_case("reduce_prod_one_zero", f64([2.0, 0.0, 3.0]), order=2)(lambda x: tf.reduce_prod(x))
grad_case("reduce_prod_two_zeros", f64([0.0, 2.0, 0.0]), order=2)(lambda x: tf.reduce_prod(x))
grad_case("reduce_prod_axis_zero", f64([[0.0, 2.0], [3.0, 4.0], [5.0, 0.0]]), order=2)(
    lambda x: tf.reduce_prod(x, axis=0)
)
grad_case("reduce_std_constant", f64([2.0, 2.0, 2.0]))(lambda x: tf.math.reduce_std(x))
grad_case("reduce_variance_constant", f64([[2.0, 2.0], [1.0, 3.0]]), order=2)(
    lambda x: tf.math.reduce_variance(x, axis=1)
)
grad_case("euclidean_norm_zero", f64([0.0, 0.0, 0.0]))(lambda x: tf.math.reduce_euclidean_norm(x))

# ---- integer-valued and non-differentiable ops -----------------------------------------------
grad_case("round_floor_ceil", f64([0.5, 1.5, -0.7]))(
    lambda x: (tf.round(x), tf.floor(x), tf.math.ceil(x))
)
grad_case("cast_int_roundtrip", f64([1.7, -2.2]))(lambda x: tf.cast(tf.cast(x, tf.int32), x.dtype))
grad_case("floormod", f64([7.0, -7.0, 7.5]), f64([2.0, 2.0, -2.0]))(
    lambda x, y: tf.math.floormod(x, y)
)
grad_case("argmax_times_sum", f64([1.0, 5.0, 5.0, 2.0]))(
    lambda x: tf.cast(tf.argmax(x), tf.float64) * tf.reduce_sum(x)
)


@case("argmax_int_target", f64([1.0, 5.0, 2.0]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.argmax(x)
    return tape.gradient(y, x)


@case("watch_int_tensor", i32([1, 2, 3]))
def _(n):
    with tf.GradientTape() as tape:
        tape.watch(n)
        y = tf.reduce_sum(tf.cast(n, tf.float64) * 2.0)
    return tape.gradient(y, n)


@case("watch_int_tensor_zero", i32([1, 2, 3]), f64([1.0, 2.0, 3.0]))
def _(n, x):
    with tf.GradientTape() as tape:
        tape.watch([n, x])
        y = tf.reduce_sum(tf.cast(n, tf.float64) * x)
    return tuple(tape.gradient(y, [n, x], unconnected_gradients=tf.UnconnectedGradients.ZERO))


# ---- singular points of elementwise functions ---------------------------------------------
grad_case("sqrt_zero", f64([0.0, 4.0]), order=2)(lambda x: tf.sqrt(x))
grad_case("sqrt_zero_f32", f32([0.0, 1e-30, 4.0]))(lambda x: tf.sqrt(x))
grad_case("rsqrt_zero", f64([0.0, 4.0]), order=2)(lambda x: tf.math.rsqrt(x))
grad_case("log_zero_negative", f64([0.0, -0.0, -1.0, 2.0]), order=2)(lambda x: tf.math.log(x))
grad_case("div_by_zero", f64([1.0, 0.0, -1.0]), f64([0.0, 0.0, -0.0]))(lambda x, y: x / y)
grad_case("pow_half_zero", f64([0.0, 4.0]), order=2)(lambda x: x**0.5)
grad_case("pow_square_zero", f64([0.0, -0.0, 3.0]), order=2)(lambda x: tf.pow(x, 2.0))
grad_case("pow_zero_base", f64([0.0, 0.0, 0.0, 0.0]), f64([2.0, 0.5, 0.0, -1.0]))(
    lambda x, y: tf.pow(x, y)
)
grad_case("pow_negative_base_int_exp", f64([-2.0, -2.0, -3.0]), f64([3.0, 2.0, 0.0]), order=2)(
    lambda x, y: tf.pow(x, y)
)
grad_case("atan2_origin", f64([0.0, 0.0, -0.0, 1.0]), f64([0.0, -0.0, -1.0, 0.0]))(
    lambda y, x: tf.math.atan2(y, x)
)
grad_case("xlogy_zero", f64([0.0, 0.0, 1.0, 0.0]), f64([0.0, 1.0, 0.0, -1.0]))(
    lambda x, y: tf.math.xlogy(x, y)
)
grad_case("xdivy_zero", f64([0.0, 0.0, 1.0]), f64([0.0, 2.0, 0.0]))(
    lambda x, y: tf.math.xdivy(x, y)
)
grad_case("xlog1py_zero", f64([0.0, 0.0, 1.0]), f64([-1.0, 0.0, -1.0]))(
    lambda x, y: tf.math.xlog1py(x, y)
)
grad_case("divide_no_nan", f64([1.0, 0.0, 2.0, nan]), f64([0.0, 0.0, 4.0, 0.0]))(
    lambda x, y: tf.math.divide_no_nan(x, y)
)
grad_case("multiply_no_nan", f64([nan, inf, 2.0]), f64([0.0, 0.0, 3.0]))(
    lambda x, y: tf.math.multiply_no_nan(x, y)
)
grad_case("asin_acos_edges", f64([1.0, -1.0, 0.0]))(lambda x: (tf.asin(x), tf.acos(x)))

# ---- tf.where and the NaN of the unselected branch ----------------------------------------
grad_case("where_sqrt_nan", f64([0.0, 4.0, -1.0]))(
    lambda x: tf.where(x > 0, tf.sqrt(x), tf.zeros_like(x))
)
grad_case("where_sqrt_safe", f64([0.0, 4.0, -1.0]))(
    lambda x: tf.where(x > 0, tf.sqrt(tf.where(x > 0, x, tf.ones_like(x))), tf.zeros_like(x))
)
grad_case(
    "where_broadcast_grads",
    np.array([[True], [False], [True]]),
    f64([[1.0, 2.0, 3.0, 4.0]]),
    f64(-1.0),
)(lambda c, x, y: tf.where(c, x, y))


@case("cond_untaken_branch", f64(0.0))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cond(x > 0, lambda: tf.sqrt(x), lambda: x * 3.0)
    return tape.gradient(y, x)


# ---- clipping ------------------------------------------------------------------------------
grad_case("clip_value_bounds", f64([-1.0, 0.0, 0.5, 1.0, 2.0, nan]))(
    lambda x: tf.clip_by_value(x, 0.0, 1.0)
)
grad_case("clip_value_tensor_bounds", f64([-1.0, 0.0, 0.5, 1.0, 2.0]), f64(0.0), f64(1.0))(
    lambda x, lo, hi: tf.clip_by_value(x, lo, hi)
)
grad_case("clip_norm_at_threshold", f64([3.0, 4.0]))(lambda x: tf.clip_by_norm(x, 5.0))
grad_case("clip_norm_zero", f64([0.0, 0.0]))(lambda x: tf.clip_by_norm(x, 1.0))
grad_case("clip_norm_tensor_limit", f64([[3.0, 4.0], [0.0, 1.0]]), f64(2.0))(
    lambda x, c: tf.clip_by_norm(x, c, axes=[1])
)
grad_case("clip_global_norm_above", f64([3.0, 0.0]), f64([[4.0]]))(
    lambda a, b: tf.clip_by_global_norm([a, b], 2.5)
)
grad_case("clip_global_norm_zero", f64([0.0, 0.0]), f64([[0.0]]))(
    lambda a, b: tf.clip_by_global_norm([a, b], 1.0)[0]
)

# ---- norms and normalisation -----------------------------------------------------------------
grad_case("norm_zero_vector", f64([0.0, 0.0, 0.0]))(lambda x: tf.norm(x))
grad_case("norm_ord1_zero", f64([0.0, -2.0, 3.0]))(lambda x: tf.norm(x, ord=1))
grad_case("norm_inf_ties", f64([3.0, -3.0, 1.0]))(lambda x: tf.norm(x, ord=np.inf))
grad_case("norm_ord3", f64([1.0, -2.0, 0.0]), order=2)(lambda x: tf.norm(x, ord=3))
grad_case("norm_matrix_ord1_ties", f64([[1.0, -2.0], [3.0, 2.0]]))(
    lambda x: tf.norm(x, ord=1, axis=[-2, -1])
)
grad_case("norm_matrix_inf_ties", f64([[1.0, -2.0], [3.0, 0.0]]))(
    lambda x: tf.norm(x, ord=np.inf, axis=[-2, -1])
)
grad_case("l2_normalize_zero_row", f64([[0.0, 0.0], [3.0, 4.0]]), order=2)(
    lambda x: tf.math.l2_normalize(x, axis=1)
)

# ---- softmax and cross-entropies -------------------------------------------------------------
grad_case("softmax_neg_inf", f64([[-inf, 0.0, 1.0], [0.0, 0.0, 0.0]]), order=2)(
    lambda x: tf.nn.softmax(x)
)
grad_case("softmax_all_neg_inf", f64([[-inf, -inf], [1.0, 2.0]]))(lambda x: tf.nn.softmax(x))
grad_case("log_softmax_neg_inf", f64([[-inf, 0.0, 1.0]]), order=2)(lambda x: tf.nn.log_softmax(x))
grad_case("log_softmax_extreme", f64([1000.0, 0.0, -1000.0]), order=2)(
    lambda x: tf.nn.log_softmax(x)
)
grad_case("softmax_f32_extreme", f32([[100.0, 0.0, -100.0], [1.0, 1.0, 1.0]]))(
    lambda x: tf.nn.softmax(x, axis=0)
)
grad_case(
    "sigmoid_xent_extreme",
    f64([1e4, -1e4, 0.0, 40.0, -40.0]),
    f64([1.0, 1.0, 0.5, 0.0, 1.0]),
    order=2,
)(lambda z, t: tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=z))
grad_case(
    "softmax_xent_extreme",
    f64([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]]),
    f64([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]]),
    order=2,
)(lambda z, t: tf.nn.softmax_cross_entropy_with_logits(labels=t, logits=z))
grad_case("softmax_xent_neg_inf_logit", f64([[-inf, 0.0, 1.0]]), f64([[0.0, 0.5, 0.5]]))(
    lambda z, t: tf.nn.softmax_cross_entropy_with_logits(labels=t, logits=z)
)
grad_case("sparse_xent_extreme", f64([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]]), i32([2, 1]))(
    lambda z, t: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=t, logits=z)
)
grad_case("sparse_xent_order2", f64([[1.0, 0.0, -1.0]]), i32([0]), order=2)(
    lambda z, t: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=t, logits=z)
)

# ---- cumulative ops --------------------------------------------------------------------------
grad_case("cumsum_exclusive_reverse", f64([1.0, 2.0, 3.0, 4.0]))(
    lambda x: (
        tf.math.cumsum(x, exclusive=True),
        tf.math.cumsum(x, reverse=True),
        tf.math.cumsum(x, exclusive=True, reverse=True),
    )
)
grad_case("cumprod_plain", f64([2.0, 3.0, 4.0]), order=2)(lambda x: tf.math.cumprod(x))
grad_case("cumprod_one_zero", f64([2.0, 0.0, 3.0, 4.0]))(lambda x: tf.math.cumprod(x))
grad_case("cumprod_two_zeros", f64([0.0, 2.0, 0.0]))(lambda x: tf.math.cumprod(x))
grad_case("cumprod_exclusive_reverse", f64([2.0, 3.0, 4.0]))(
    lambda x: (
        tf.math.cumprod(x, exclusive=True),
        tf.math.cumprod(x, reverse=True),
        tf.math.cumprod(x, exclusive=True, reverse=True),
    )
)
grad_case("cumulative_logsumexp_neg_inf", f64([-inf, 0.0, 1.0]))(
    lambda x: tf.math.cumulative_logsumexp(x)
)

# ---- sort, top_k, gather, scatter, segments --------------------------------------------------
grad_case("sort_ties", f64([3.0, 1.0, 3.0, 2.0]))(lambda x: tf.sort(x))
grad_case("top_k_ties", f64([1.0, 3.0, 3.0, 2.0, 3.0]))(lambda x: tf.math.top_k(x, k=2).values)
grad_case("gather_duplicates", f64([1.0, 2.0, 3.0]), i32([0, 0, 2, 0]))(
    lambda p, i: tf.gather(p, i)
)
grad_case("gather_nd_duplicates", f64([[1.0, 2.0], [3.0, 4.0]]), i32([[1, 0], [1, 0], [0, 1]]))(
    lambda p, i: tf.gather_nd(p, i)
)
grad_case("scatter_nd_duplicates", f64([1.0, 2.0, 3.0]), i32([[0], [0], [2]]))(
    lambda u, i: tf.scatter_nd(i, u, [4])
)
grad_case(
    "tensor_scatter_update_duplicates",
    f64([1.0, 2.0, 3.0, 4.0]),
    i32([[1], [1], [3]]),
    f64([10.0, 20.0, 30.0]),
)(
    lambda t, i, u: (
        tf.tensor_scatter_nd_update(t, i, u) * tf.constant([1.0, 1.0, 1.0, 2.0], tf.float64)
    )
)
grad_case(
    "tensor_scatter_add_duplicates",
    f64([1.0, 2.0, 3.0, 4.0]),
    i32([[1], [1], [3]]),
    f64([10.0, 20.0, 30.0]),
)(lambda t, i, u: tf.tensor_scatter_nd_add(t, i, u))
grad_case("segment_sum_gap", f64([[1.0, 2.0], [3.0, -1.0], [5.0, 6.0]]), i32([0, 0, 2]))(
    lambda d, s: tf.math.segment_sum(d, s)
)
grad_case("segment_max_ties", f64([[1.0, 2.0], [1.0, 0.0], [3.0, 3.0]]), i32([0, 0, 1]))(
    lambda d, s: tf.math.segment_max(d, s)
)
grad_case("segment_mean_gap", f64([1.0, 3.0, 5.0]), i32([0, 0, 2]))(
    lambda d, s: tf.math.segment_mean(d, s)
)
grad_case("unsorted_segment_max_ties", f64([4.0, 4.0, 1.0, 4.0]), i32([2, 2, 0, 0]))(
    lambda d, s: tf.math.unsorted_segment_max(d, s, 4)
)
grad_case("unsorted_segment_sum_negative_id", f64([1.0, 2.0, 3.0]), i32([1, -1, 0]))(
    lambda d, s: tf.math.unsorted_segment_sum(d, s, 2)
)
grad_case("unsorted_segment_prod_zero", f64([2.0, 0.0, 3.0, 0.0, 0.0]), i32([0, 0, 1, 2, 2]))(
    lambda d, s: tf.math.unsorted_segment_prod(d, s, 4)
)

# ---- polyval, einsum, slicing, padding, tiling -----------------------------------------------
grad_case("polyval", f64(3.0), f64(-1.0), f64(2.0), f64([0.0, 1.5]), order=2)(
    lambda a, b, c, x: tf.math.polyval([a, b, c], x)
)
grad_case("einsum_trace_diag", f64(np.arange(9.0).reshape(3, 3)))(
    lambda m: (tf.einsum("ii", m), tf.einsum("ii->i", m))
)
grad_case("einsum_outer_contract", f64([1.0, 2.0]), f64(gauss(2, 3)), order=2)(
    lambda v, m: (tf.einsum("i,j->ij", v, v), tf.einsum("i,ij->j", v, m))
)
grad_case("strided_slice_negative", f64(np.arange(6.0)))(
    lambda x: (x[::-2], x[4:0:-3], x[-1], x[::-1][1:3])
)
grad_case("strided_slice_2d", f64(np.arange(12.0).reshape(3, 4)))(
    lambda m: (m[::-1, 1::2], m[-2:, ::-3], m[1, ::-1])
)
grad_case("pad_reflect", f64([1.0, 2.0, 3.0]))(lambda x: tf.pad(x, [[2, 1]], mode="REFLECT"))
grad_case("pad_symmetric", f64([1.0, 2.0, 3.0]))(lambda x: tf.pad(x, [[3, 2]], mode="SYMMETRIC"))
grad_case("tile", f64([[1.0, 2.0]]))(lambda x: tf.tile(x, [3, 2]))
grad_case("roll", f64(np.arange(6.0).reshape(2, 3)))(
    lambda x: tf.roll(x, shift=[1, -2], axis=[0, 1])
)
grad_case("reverse", f64(np.arange(6.0).reshape(2, 3)))(lambda x: tf.reverse(x, axis=[0, 1]))

# ---- resize, pooling, convolution --------------------------------------------------------------
IMG23 = f64(gauss(1, 2, 3, 1))
IMG55 = f64(gauss(1, 5, 5, 1))
grad_case("resize_bilinear_up", IMG23)(lambda x: tf.image.resize(x, [4, 5]))
grad_case("resize_bilinear_down", IMG55)(lambda x: tf.image.resize(x, [2, 3]))
POOL_TIES = f64(
    [[[[1.0], [1.0], [0.0], [2.0]], [[1.0], [1.0], [2.0], [2.0]], [[0.0], [3.0], [3.0], [0.0]]]]
)
grad_case("max_pool_ties_same", POOL_TIES)(
    lambda x: tf.nn.max_pool2d(x, ksize=2, strides=1, padding="SAME")
)
grad_case("max_pool_ties_valid_stride2", POOL_TIES)(
    lambda x: tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")
)
grad_case("max_pool_order2", f64(gauss(1, 4, 4, 1)), order=2)(
    lambda x: tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID") ** 2
)
grad_case("avg_pool_same_stride2", f64(gauss(1, 5, 5, 1)))(
    lambda x: tf.nn.avg_pool2d(x, ksize=3, strides=2, padding="SAME")
)
grad_case("pool_conv_window_exceeds_input", f64(np.arange(6.0).reshape(1, 3, 2, 1)))(
    lambda x: (
        tf.nn.avg_pool2d(x, ksize=3, strides=1, padding="VALID"),
        tf.nn.conv2d(x, tf.ones([3, 3, 1, 1], x.dtype), strides=1, padding="VALID"),
    )
)
CONV_X = f64(gauss(1, 5, 5, 2))
grad_case("conv2d_stride2_same", CONV_X, f64(gauss(3, 3, 2, 3)))(
    lambda x, w: tf.nn.conv2d(x, w, strides=2, padding="SAME")
)
grad_case("conv2d_dilation2_valid", CONV_X, f64(gauss(2, 2, 2, 2)))(
    lambda x, w: tf.nn.convolution(x, w, padding="VALID", dilations=2)
)
grad_case("conv2d_order2", f64(gauss(1, 3, 3, 1)), f64(gauss(2, 2, 1, 2)), order=2)(
    lambda x, w: tf.nn.conv2d(x, w, strides=1, padding="SAME") ** 2
)
grad_case("conv2d_transpose", f64(gauss(1, 3, 3, 2)), f64(gauss(3, 3, 1, 2)))(
    lambda x, w: tf.nn.conv2d_transpose(x, w, output_shape=[1, 6, 6, 1], strides=2, padding="SAME")
)
grad_case("conv2d_f32_stride2", f32(CONV_X), f32(gauss(3, 3, 2, 1)))(
    lambda x, w: tf.nn.conv2d(x, w, strides=2, padding="SAME")
)

# ---- stop_gradient, custom_gradient ------------------------------------------------------------
grad_case("stop_gradient_mix", f64([1.0, -2.0]), order=2)(
    lambda x: x * tf.stop_gradient(x) + tf.stop_gradient(x**2) + x**3
)


@tf.custom_gradient
def clip_gradient(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)

    return tf.identity(x), grad


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1.0 - 1.0 / (1.0 + e))

    return tf.math.log(1.0 + e), grad


@tf.custom_gradient
def cube(x):
    def grad(dy):
        return dy * 3.0 * x * x

    return x * x * x, grad


@tf.custom_gradient
def scaled_product(a, b):
    def grad(dy):
        return dy * b * 10.0, dy * a * 100.0

    return a * b, grad


grad_case("custom_gradient_clip", f64([1.0, 2.0, -3.0]))(lambda x: clip_gradient(x * 2.0))
grad_case("custom_gradient_log1pexp", f64([1000.0, 0.0, -1000.0]))(lambda x: log1pexp(x))
grad_case("custom_gradient_order2", f64([2.0, -1.0]), order=2)(lambda x: cube(x))

# ---- the tape's own surface --------------------------------------------------------------------
V_A = tf.Variable(f64([1.0, 2.0]))
V_B = tf.Variable(f64([3.0, -1.0]))


@case("unconnected_none", f64([1.0, 2.0]), f64([3.0]))
def _(x, z):
    with tf.GradientTape() as tape:
        tape.watch([x, z])
        y = tf.reduce_sum(x * x)
    return tuple(tape.gradient(y, [x, z]))


@case("unconnected_zero", f64([1.0, 2.0]), f64([3.0, 4.0, 5.0]))
def _(x, z):
    with tf.GradientTape() as tape:
        tape.watch([x, z])
        y = tf.reduce_sum(x * x)
    return tuple(tape.gradient(y, [x, z], unconnected_gradients=tf.UnconnectedGradients.ZERO))


@case("output_gradients", f64([1.0, 2.0, 3.0]), f64([0.5, -1.0, 2.0]))
def _(x, w):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.gradient(y, x, output_gradients=w)


@case("source_twice_and_dict", f64([1.0, 2.0]), f64(3.0))
def _(x, s):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y = tf.reduce_sum(x * s)
    twice = tape.gradient(y, [x, x])
    named = tape.gradient(y, {"a": x, "b": s})
    del tape
    return twice[0], twice[1], named["a"], named["b"]


@case("persistent_tape", f64([1.0, -2.0]))
def _(x):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = tf.reduce_sum(y * y)
    dz_dx = tape.gradient(z, x)
    dy_dx = tape.gradient(y, x)
    dz_dy = tape.gradient(z, y)
    del tape
    return dz_dx, dy_dx, dz_dy


@case("stop_recording", f64([1.0, 2.0]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        a = x * 2.0
        with tape.stop_recording():
            b = x * x
        y = tf.reduce_sum(a + b)
    return tape.gradient(y, x)


@case("variables_watched", f64(2.0))
def _(s):
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(V_A * V_B) * s
    return tuple(tape.gradient(y, [V_A, V_B]))


@case("watch_accessed_variables_false", f64(2.0))
def _(s):
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(V_A)
        y = tf.reduce_sum(V_A * V_B) * s
    return tuple(tape.gradient(y, [V_A, V_B, s]))


# ---- jacobian, batch_jacobian, forward mode -------------------------------------------------


@case("jacobian_relu_kink", f64([-1.0, 0.0, 2.0]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.relu(x)
    return tape.jacobian(y, x)


@case("jacobian_reduce_max_ties", f64([[1.0, 1.0, 0.0], [2.0, 5.0, 5.0]]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_max(x, axis=1)
    return tape.jacobian(y, x)


@case("jacobian_softmax_neg_inf", f64([-inf, 0.0, 1.0]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.softmax(x)
    return tape.jacobian(y, x)


@case("jacobian_unconnected_zero", f64([1.0, 2.0]), f64([3.0]))
def _(x, z):
    with tf.GradientTape() as tape:
        tape.watch([x, z])
        y = x * 2.0
    return tuple(tape.jacobian(y, [x, z], unconnected_gradients=tf.UnconnectedGradients.ZERO))


@case("hessian_logsumexp_ties", f64([1.0, 1.0, -inf]))
def _(x):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_logsumexp(x)
        g = inner.gradient(y, x)
    return outer.jacobian(g, x)


@case("batch_jacobian_softmax", f64([[0.0, 1.0, -inf], [2.0, 2.0, 2.0]]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.softmax(x)
    return tape.batch_jacobian(y, x)


@case("batch_jacobian_maximum_tie", f64([[0.0, 1.0], [-1.0, 0.0]]))
def _(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.maximum(x, 0.0) * tf.constant([1.0, 2.0], tf.float64)
    return tape.batch_jacobian(y, x)


def jvp(f, primals, tangents):
    with tf.autodiff.ForwardAccumulator(primals=primals, tangents=tangents) as acc:
        y = f(*primals)
    return acc.jvp(y)


case("fwd_abs_kink", f64([-1.0, -0.0, 0.0, 2.0]), f64([1.0, 2.0, 3.0, 4.0]))(
    lambda x, v: jvp(tf.abs, [x], [v])
)
case("fwd_relu_kink", f64([-1.0, 0.0, 2.0]), f64([1.0, 2.0, 3.0]))(
    lambda x, v: jvp(tf.nn.relu, [x], [v])
)
case("fwd_maximum_tie", f64([1.0, 2.0]), f64([1.0, 3.0]), f64([1.0, 1.0]), f64([10.0, 10.0]))(
    lambda x, y, vx, vy: jvp(tf.maximum, [x, y], [vx, vy])
)
case("fwd_sqrt_zero", f64([0.0, 4.0]), f64([1.0, 1.0]))(lambda x, v: jvp(tf.sqrt, [x], [v]))
case("fwd_reduce_max_ties", f64([3.0, 1.0, 3.0]), f64([1.0, 10.0, 100.0]))(
    lambda x, v: jvp(tf.reduce_max, [x], [v])
)
case("fwd_reduce_prod_zero", f64([2.0, 0.0, 3.0]), f64([1.0, 1.0, 1.0]))(
    lambda x, v: jvp(tf.reduce_prod, [x], [v])
)


@case("fwd_over_back_hvp", f64([1.0, 1.0, 0.0]), f64([1.0, 0.0, 0.0]))
def _(x, v):
    with tf.autodiff.ForwardAccumulator(primals=x, tangents=v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_logsumexp(x)
        g = tape.gradient(y, x)
    return g, acc.jvp(g)


if __name__ == "__main__":
    print(f"{which} grad_edges: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
