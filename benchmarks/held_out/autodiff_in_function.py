"""Held-out: automatic differentiation inside tf.function, with the differentiated values
coming from every place a TF user takes them: function arguments, tensors captured from
outside (tf.constant, numpy-made), constants made inside the function, Python floats,
numpy arrays, tf.Variables (read several times, assigned in between), values computed at
trace time and values out of loops and conds. Each case is a small function of its inputs
that returns tensors (None where a gradient is disconnected); it runs three ways: eagerly
(`eager`), under tf.function with its inputs captured by a closure (`fn`), and under
tf.function(jit_compile=False) with its inputs passed as arguments (`fn_args`). Every
value is printed to 6 significant digits, one line a case and mode, so the outputs of
the two engines diff line by line (float64 throughout but one float32 case)."""

import sys

import numpy as np
from engine import tf, which

F64 = tf.float64
rng = np.random.default_rng(11)

# Inputs shared by the cases (the `fn` mode captures them, `fn_args` passes them).
X = tf.constant([0.3, -1.2, 0.7], F64)
V = tf.constant([1.0, -0.5, 2.0], F64)
S = tf.constant(1.3, F64)
XN = rng.standard_normal(3)  # a numpy array
XT = tf.constant(XN)  # a captured tensor made from numpy
XB = tf.constant(rng.standard_normal((3, 2)))
M = rng.standard_normal((2, 2))
W = tf.Variable(rng.standard_normal((3, 2)))
W2 = tf.Variable([0.4, -0.9], dtype=F64)
WS = tf.Variable([[0.6, -0.3], [0.2, 0.9]], dtype=F64)
VA = tf.Variable([1.0, 2.0, 3.0], dtype=F64)
VC = tf.Variable([0.5, -1.5, 1.0], dtype=F64)

CASES = []


def case(*inputs):
    """Register the decorated case with the inputs it is called with."""

    def register(fn):
        CASES.append((fn.__name__[len("case_") :], fn, inputs))
        return fn

    return register


def fmt(value):
    if value is None:
        return "None"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {fmt(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if hasattr(value, "indices") and hasattr(value, "values"):  # IndexedSlices
        value = tf.convert_to_tensor(value)
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.dtype.kind in "biu":
        return str(array.tolist())
    flat = [f"{float(v) + 0.0:.6g}" for v in array.reshape(-1)]
    shape = "x".join(map(str, array.shape)) or "s"
    return f"{shape}({' '.join(flat)})"


def net(x, w):
    """A little nonlinear scalar of a 3-vector and a 3x2 matrix."""
    h = tf.tanh(tf.linalg.matvec(w, x, transpose_a=True))
    return tf.reduce_sum(h * h) + tf.reduce_sum(tf.sin(x) * x)


# ---- first order, value origins ---------------------------------------------------------


@case(X, W)
def case_first_order(x, w):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = net(x, w)
    return tape.gradient(y, [x, w])


@case(X, S)
def case_captured_chain(x, s):
    with tf.GradientTape() as tape:
        tape.watch([x, s])
        a = x * x
        b = tf.exp(-a) * s
        c = tf.reduce_sum(b) / tf.reduce_sum(a)
        y = c + tf.sqrt(s * s + 1.0)
    return tape.gradient(y, [x, s])


@case(X)
def case_const_inside(x):
    c = tf.constant([1.0, 2.0, 3.0], F64)
    d = tf.ones([3], F64) * 0.5
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(c)
        tape.watch(d)
        u = c * c + d
        y = tf.reduce_sum(u * x)
        z = tf.reduce_prod(c + d)
    t = tf.constant(0.8, F64)  # a second derivative w.r.t. a constant made here
    with tf.GradientTape() as outer:
        outer.watch(t)
        with tf.GradientTape() as inner:
            inner.watch(t)
            e = t**4 + tf.sin(t) * t
        g = inner.gradient(e, t)
    return tape.gradient(y, [c, d]), tape.gradient(z, c), g, outer.gradient(g, t)


@case(XT, XN)
def case_numpy_captured(t, xn):
    other = np.array([0.25, -2.0, 1.5])
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = tf.reduce_sum(t * other) + tf.reduce_sum(np.float64(0.5) * t**2)
        y = y + tf.reduce_sum(tf.square(t - tf.reduce_mean(xn))) * tf.reduce_sum(t * xn)
    return tape.gradient(y, t)


@case(X)
def case_numpy_inside(x):
    t = tf.convert_to_tensor(np.array([0.2, 0.4, -0.6]))
    with tf.GradientTape() as tape:
        tape.watch([t, x])
        y = tf.reduce_sum(t * x) + tf.reduce_sum(t**3) * tf.reduce_max(x)
    return tape.gradient(y, [t, x])


@case(X)
def case_python_scalars(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = 3.0 * x**2.0 - 1.5 / (x + 4.0) + 2.0**x + tf.maximum(x, 0.0)
        y = tf.reduce_sum(y) * 0.5
    return tape.gradient(y, x)


@case(X)
def case_trace_time_values(x):  # values the trace knows: sizes, shapes, tf.range
    n = tf.cast(tf.size(x), F64)
    r = tf.range(3, dtype=F64) + 1.0
    with tf.GradientTape() as tape:
        tape.watch([x, r])
        y = tf.reduce_sum(x * r) / n + tf.reduce_sum(r * r * x**2) + float(x.shape[0])
    return tape.gradient(y, [x, r])


@case(S)
def case_watch_loop_output(s):
    # watched tensors that come out of a while_loop and a cond over captured values
    _, t = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 1.5 + 0.25), [0, s])
    u = tf.cond(s > 1.0, lambda: s * 2.0, lambda: s - 1.0)
    with tf.GradientTape() as tape:
        tape.watch([t, u])
        y = t * t * u + tf.sin(u)
    return t, u, tape.gradient(y, [t, u])


# ---- persistent tapes, higher order -------------------------------------------------------


@case(X, W)
def case_persistent(x, w):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = tf.linalg.matvec(w, x, transpose_a=True)
        y1 = tf.reduce_sum(h**2)
        y2 = tf.reduce_sum(tf.exp(x) * x)
        z = y1 * y2
    g1 = tape.gradient(y1, x)
    g2 = tape.gradient(y2, x)
    g3 = tape.gradient(z, [x, w])
    g4 = tape.gradient(y1, w)
    del tape
    return g1, g2, g3, g4


@case(S)
def case_third_derivative(s):
    with tf.GradientTape() as t3:
        t3.watch(s)
        with tf.GradientTape() as t2:
            t2.watch(s)
            with tf.GradientTape() as t1:
                t1.watch(s)
                y = s**3 * tf.exp(-s)
            d1 = t1.gradient(y, s)
        d2 = t2.gradient(d1, s)
    return d1, d2, t3.gradient(d2, s)


@case(X, V)
def case_hvp_nested(x, v):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.sin(x) * tf.exp(x)) * tf.reduce_sum(x * x)
        g = inner.gradient(y, x)
    return g, outer.gradient(g, x, output_gradients=v)


@case(X, W)
def case_hessian_matrix(x, w):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_prod(x) + tf.reduce_sum(x**3) * x[0]
        g = inner.gradient(y, x)
    with tf.GradientTape() as outer_w:  # a block of the Hessian w.r.t. a variable
        with tf.GradientTape() as inner_w:
            e = net(x, w)
        gw = inner_w.gradient(e, w)
    return outer.jacobian(g, x), outer_w.jacobian(gw, w)[:, 1, 0]


# ---- jacobians, forward mode --------------------------------------------------------------


@case(X, W)
def case_jacobian(x, w):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.tanh(tf.linalg.matvec(w, x, transpose_a=True)) * tf.reduce_sum(x)
    a = tape.jacobian(y, x)
    b = tape.jacobian(y, x, experimental_use_pfor=False)
    c = tape.jacobian(y, w)
    return a, b, c[1]


@case(XB)
def case_batch_jacobian(xb):
    mat = tf.constant(M)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xb)
        y = tf.sin(tf.matmul(xb, mat)) * xb[:, :1]
    return tape.batch_jacobian(y, xb), tape.batch_jacobian(y, xb, experimental_use_pfor=False)


@case(X)
def case_jacobian_while(x):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.sin(h) * x), [0, x])
    return tape.jacobian(h, x, experimental_use_pfor=False)


@case(X, V, W)
def case_forward_accumulator(x, v, w):
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        y = net(x, w)
        z = tf.exp(x) * x
    wt = tf.ones_like(w) * 0.1
    with tf.autodiff.ForwardAccumulator([x, w], [v, wt]) as acc2:
        y2 = net(x, w)
    return acc.jvp(y), acc.jvp(z), acc2.jvp(y2)


@case(X, V)
def case_forward_over_reverse(x, v):
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.tanh(x) * x**2)
        g = tape.gradient(y, x)
    return g, acc.jvp(g)


@case(X, V)
def case_forward_while(x, v):
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        _, h = tf.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, h * tf.sin(x)), [0, x])
    return h, acc.jvp(h)


# ---- gradient-call options ---------------------------------------------------------------


@case(X, V)
def case_output_gradients(x, v):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(x) * tf.reduce_sum(x)
    dy_inside = tf.constant([2.0, -1.0, 0.5], F64)
    return tape.gradient(y, x, output_gradients=v), tape.gradient(y, x, output_gradients=dy_inside)


@case(X, W, S)
def case_unconnected(x, w, s):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y = tf.reduce_sum(x**2)
    zero = tape.gradient(y, [x, w, s], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    none = tape.gradient(y, [x, w, s])
    return zero, none


@case(X, W, W2)
def case_watch_accessed_false(x, w, w2):
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = net(x, w) * tf.reduce_sum(w2 * w2)
    return tape.gradient(y, [w, w2, x]), tf.constant(len(tape.watched_variables()))


@case(X)
def case_stop_recording(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        a = x**2
        with tape.stop_recording():
            b = tf.sin(x) * a
        y = tf.reduce_sum(a * b)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        y0 = tf.reduce_sum(x**3)
        tape2.reset()  # forgets y0's history: x must be watched again
        tape2.watch(x)
        y2 = tf.reduce_sum(x**2) * 2.0 + y0 + tf.reduce_sum(a * x)  # a: made before the tape
    return tape.gradient(y, x), tape2.gradient(y2, x)


@case(X, W)
def case_stop_gradient(x, w):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * tf.stop_gradient(x**2)) + tf.reduce_sum(tf.stop_gradient(w) * w)
    return tape.gradient(y, [x, w])


# ---- custom gradients, recompute_grad ----------------------------------------------------


@tf.custom_gradient
def soft_clip(a, b):
    y = tf.tanh(a) * b

    def grad(dy):  # deliberately not the true gradient
        return dy * 0.5 * (1.0 - tf.tanh(a) ** 2), tf.reduce_sum(dy * a)

    return y, grad


@case(X, S)
def case_custom_gradient(x, s):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as tape:
            tape.watch([x, s])
            y = tf.reduce_sum(soft_clip(x * x, s) * x)
        g = tape.gradient(y, [x, s])
    with tf.GradientTape() as direct:  # the custom op straight on the watched inputs
        direct.watch([x, s])
        z = tf.reduce_sum(soft_clip(x, s))
    return g, outer.gradient(g[0], x), direct.gradient(z, [x, s])


@tf.custom_gradient
def scale_by_vc(a):
    y = a * VC

    def grad(dy, variables=None):  # doubled for a, tripled for the variable
        return dy * VC * 2.0, [dy * a * 3.0 for _ in variables]

    return y, grad


@case(X)
def case_custom_gradient_vars(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(scale_by_vc(x) ** 2)
    return tape.gradient(y, [x, VC])


@case(X)
def case_recompute_grad(x):
    block = tf.recompute_grad(lambda t: tf.tanh(t) * tf.exp(-t * t))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(block(x * 2.0) ** 2)
    return tape.gradient(y, x)


@tf.function
def inner_net(x, w):
    return net(x, w)


@case(X, W)
def case_nested_function(x, w):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = inner_net(x, w) * tf.reduce_sum(x)
        g = tape.gradient(y, [x, w])
    return g, outer.gradient(g[0], x)


# ---- variables ---------------------------------------------------------------------------


@case(X, VA)
def case_variable_assign(x, va):
    va.assign([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        a = tf.reduce_sum(va * x)
        va.assign_add(x)
        b = tf.reduce_sum(va * va)
        y = a * b
    after = tf.identity(va)
    va.assign([0.5, -1.0, 2.0])
    with tf.GradientTape() as tape2:  # three reads, one a gather (IndexedSlices in TF)
        r1 = va.read_value()
        y2 = tf.reduce_sum(tf.sin(r1) * x) + tf.reduce_sum(va**2) * tf.reduce_sum(
            tf.gather(va, [0, 0, 2])
        )
    return tape.gradient(y, va), after, tape2.gradient(y2, va)


# ---- control flow ------------------------------------------------------------------------


@case(X, WS)
def case_while_loop(x, ws):
    with tf.GradientTape() as tape:
        tape.watch(x)
        h0 = x[:2] * x[2]
        _, h = tf.while_loop(
            lambda i, h: i < 4,
            lambda i, h: (i + 1, tf.tanh(tf.linalg.matvec(ws, h)) + 0.1 * h),
            [tf.constant(0), h0],
        )
        y = tf.reduce_sum(h**2)
    return tape.gradient(y, [x, ws])


@case(X, WS)
def case_for_range(x, ws):
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = x[:2] * x[2]
        acc = tf.constant(0.0, F64)
        for i in tf.range(4):
            h = tf.tanh(tf.linalg.matvec(ws, h)) + 0.1 * h * tf.cast(i, F64)
            acc = acc + tf.reduce_sum(h) * x[0]
        y = tf.reduce_sum(h**2) + acc
    return tape.gradient(y, [x, ws])


@case(X, W)
def case_python_unrolled(x, w):
    with tf.GradientTape() as tape:
        tape.watch(x)
        parts = []
        h = x
        for k in range(3):
            h = tf.sin(h) * (k + 1.0) + x
            parts.append(tf.reduce_sum(h * w[:, k % 2]))
        y = tf.add_n(parts) * tf.reduce_sum(tf.stack(parts))
    return tape.gradient(y, [x, w])


@case(X, S)
def case_cond(x, s):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y1 = tf.cond(
            tf.reduce_sum(x) > 0,
            lambda: tf.reduce_sum(x**2) * s,
            lambda: tf.reduce_sum(tf.sin(x)) * s,
        )
        y2 = tf.cond(s > 0, lambda: tf.reduce_sum(x**3), lambda: s)
        y3 = tf.cond(s < 0, lambda: tf.reduce_sum(x**3), lambda: s * s)
    return tape.gradient(y1, [x, s]), tape.gradient(y2, [x, s]), tape.gradient(y3, [x, s])


@case(X)
def case_autograph_if(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        m = tf.reduce_max(x)
        if m > 0.5:
            y = tf.reduce_sum(x * m)
        else:
            y = tf.reduce_sum(x)
    return tape.gradient(y, x)


@case(X)
def case_scan(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = tf.scan(lambda a, t: a * t + tf.sin(t), x, initializer=tf.constant(1.0, F64))
        y = tf.reduce_sum(out * out)
    return out, tape.gradient(y, x)


@case(XB, W2)
def case_map_fn(xb, w2):
    with tf.GradientTape() as tape:
        tape.watch(xb)
        rows = tf.map_fn(lambda r: tf.reduce_sum(tf.tanh(r * w2)) * r[0], xb)
        y = tf.reduce_sum(rows**2)
    return rows, tape.gradient(y, [xb, w2])


# ---- indexing ----------------------------------------------------------------------------


@case(X, W)
def case_gather_where_concat(x, w):
    with tf.GradientTape() as tape:
        tape.watch(x)
        g = tf.gather(x, [2, 0, 2])
        m = tf.where(g > 0, g * 3.0, -g)
        c = tf.concat([m, x[1:], tf.reshape(w, [-1])[:1]], axis=0)
        r = tf.reshape(c, [3, 2])
        y = tf.reduce_sum(r[:, 0] * r[:, 1]) + tf.reduce_sum(r[::2] ** 2)
    return tape.gradient(y, [x, w])


@case(X, W)
def case_integer_indexed(x, w):
    idx = tf.argmax(x)
    seg = tf.constant([1, 0, 1])
    xi = tf.constant([3, 1, 2])
    with tf.GradientTape() as tape:
        tape.watch([x, xi])
        a = tf.gather(x, idx) * tf.gather_nd(w, [[0, 1], [2, 0]])
        b = tf.math.unsorted_segment_sum(x * x, seg, 2)
        c = tf.tensor_scatter_nd_update(x, [[1]], tf.reshape(x[0] * 4.0, [1]))
        d = tf.reduce_sum(tf.one_hot(seg, 3, dtype=F64) * x) + tf.reduce_sum(tf.gather(w, [1, 1]))
        e = tf.cast(xi, F64) * x
        y = tf.reduce_sum(a) + tf.reduce_sum(b * b) + tf.reduce_sum(c**2) + d + tf.reduce_sum(e)
    return tape.gradient(y, [x, w, xi])


# ---- structures and None -----------------------------------------------------------------


@case(X, W, S)
def case_nested_sources(x, w, s):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y1 = net(x, w) * s
        y2 = tf.reduce_sum(x) * s * s
    return tape.gradient(y1, {"a": x, "b": [w, s]}), tape.gradient([y1, y2], (x, s))


@case(X, S)
def case_none_target(x, s):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = s * 3.0
        k = tf.constant(2.0, F64) * 4.0
        z = tf.reduce_sum(x * 0.0) + tf.reduce_sum(tf.stop_gradient(x))
    return tape.gradient(y, x), tape.gradient(k, x), tape.gradient(z, x), tape.gradient(x, x)


@case(tf.constant([0.2, -0.4, 0.9], tf.float32))
def case_float32_second(x):
    labels = np.array([0.0, 1.0, 0.0], np.float32)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.softmax_cross_entropy_with_logits(labels, x * 2.0) + tf.reduce_sum(
                tf.sigmoid(x)
            )
        g = tape.gradient(y, x)
    return g, outer.gradient(tf.reduce_sum(g * g), x)


MODES = ["eager", "fn", "fn_args"]


def run(name, fn, inputs, mode):
    if mode == "eager":
        return fn(*inputs)
    if mode == "fn":
        return tf.function(lambda: fn(*inputs))()
    return tf.function(fn, jit_compile=False)(*inputs)


only = sys.argv[2:]  # optional case names, to rerun a few
for name, fn, inputs in CASES:
    if only and name not in only:
        continue
    for mode in MODES:
        try:
            text = fmt(run(name, fn, inputs, mode))
        except Exception as exc:  # one failing case must not hide the others
            first = (str(exc).strip().splitlines() or [""])[0][:160]
            text = f"ERROR {type(exc).__name__}: {first}"
        print(which, f"{mode:7s}", name, text, flush=True)
