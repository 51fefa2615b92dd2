"""Held-out: control flow and its gradients, at the edges a TF user meets them:
tf.while_loop with nested loop variables (tuples, dicts, namedtuples), shape_invariants
with a growing tensor, maximum_iterations that do and do not stop the loop, zero
iterations, int and float loop variables together, loops whose trip count depends on a
tensor's value (x**n by repeated products, Newton's square root) with first and second
order gradients w.r.t. the initial value and captured variables, nested loops, tf.cond
with nested results and branches that do not use the differentiated value, conds inside
loops and loops inside conds, tf.case and tf.switch_case (defaults, out-of-range
indices), tf.TensorArray (dynamic size, clear_after_read, element_shape, stack, unstack,
gather, scatter, concat, split and their gradients), map_fn, scan, foldl, foldr and
vectorized_map, autograph-converted Python (for over tf.range with break, continue and
return, while on a tensor, if on a tensor, for over a tensor's rows, Python lists in a
converted loop, variables assigned and created in control flow, loop variables that
change dtype or shape), stop_gradient, back_prop=False, ForwardAccumulator and jacobians
through loops, and the errors of malformed loops and branches.

Each case takes its tensors as arguments and runs eagerly and inside tf.function (tracer:
once per backend, C and the numpy interpreter); it prints one line per mode,
`case [mode] value` (float64 to 6 significant digits, gradients None where disconnected)
or `case [mode] ERR TypeName: message`, so the two engines' outputs diff line by line. An
optional second argument keeps only the cases whose names contain it."""

import collections
import re
import sys

import numpy as np
from engine import MODES, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
F64, F32, I32, I64 = tf.float64, tf.float32, tf.int32, tf.int64
State = collections.namedtuple("State", "i acc prod")
Pair = collections.namedtuple("Pair", "a b")
CASES = []


def c(values, dtype=F64):
    return tf.constant(values, dtype)


# Inputs shared by the cases (passed as arguments in every mode).
X = c(1.3)
XN = c(-0.8)
A2 = c(2.0)
V3 = c([0.3, -1.2, 0.7])
M32 = c([[1.0, 2.0], [-0.5, 0.25], [3.0, -1.0]])
N0, N1, N3, N4 = c(0, I32), c(1, I32), c(3, I32), c(4, I32)
IDX = c([0, 1, 2, 5, -1], I32)
W = tf.Variable(0.9, dtype=F64)
WV = tf.Variable([0.5, -0.25, 1.5], dtype=F64)
COUNTER = tf.Variable(0.0, dtype=F64)
WA = tf.Variable(0.9, dtype=F64)  # assigned by the cases that read it
WB = tf.Variable([0.5, -0.25, 1.5], dtype=F64)


def case(*inputs):
    """Registers the decorated `case_<name>(*inputs)`."""

    def register(fn):
        CASES.append((fn.__name__[len("case_") :], fn, inputs))
        return fn

    return register


def fmt(v):
    if v is None:
        return "None"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {fmt(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v).__name__ + "(" + ", ".join(fmt(e) for e in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(fmt(e) for e in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(fmt(e) for e in v) + ")"
    if isinstance(v, (bool, str)):
        return repr(v)
    if isinstance(v, (int, float)):
        return f"py:{float(v):.6g}"
    if hasattr(v, "indices") and hasattr(v, "values") and hasattr(v, "dense_shape"):
        v = tf.convert_to_tensor(v)  # IndexedSlices
    a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    name = v.dtype.name if hasattr(v, "dtype") and hasattr(v.dtype, "name") else a.dtype.name
    shape = "x".join(map(str, a.shape)) or "s"
    if a.dtype.kind in "fc":
        body = " ".join(f"{float(t) + 0.0:.6g}" for t in a.reshape(-1))
    else:
        body = " ".join(str(t) for t in a.reshape(-1).tolist())
    return f"{name}:{shape}({body})"


def failure(e):
    message = re.sub(r"\{\{[^}]*\}\}|Graph execution error:", "", str(e))
    message = " ".join(message.split())[:90]
    return f"ERR {type(e).__name__}: {message}"


def run_case(name, fn, inputs):
    for mode, wrap in MODES:
        try:
            f = fn if wrap is None else wrap(fn)
            text = fmt(f(*inputs))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


def grads(fn, *xs):
    """fn(*xs) and its gradient w.r.t. every x (watched)."""
    with tf.GradientTape() as tape:
        tape.watch(list(xs))
        y = fn(*xs)
    return y, tape.gradient(y, list(xs))


def grad2(fn, x):
    """fn(x), d fn/dx and d2 fn/dx2 for a scalar x."""
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g = inner.gradient(y, x)
    return y, g, outer.gradient(g, x)


def f64(t):
    return tf.cast(t, F64)


# ---- tf.while_loop: structures ------------------------------------------------------------


@case(X)
def case_wl_tuple(x):
    return tf.while_loop(
        lambda i, y: i < 5, lambda i, y: (i + 1, y * 1.5 + f64(i)), (tf.constant(0), x)
    )


@case(X)
def case_wl_list(x):
    return tf.while_loop(lambda i, y: i < 3, lambda i, y: [i + 1, y * y - 0.5], [tf.constant(0), x])


@case(X)
def case_wl_single_tensor(x):
    return tf.while_loop(lambda y: y < 10.0, lambda y: y * 2.0, x)


@case(X, V3)
def case_wl_dict(x, v):
    def body(s):
        return ({"i": s["i"] + 1, "x": s["x"] * 0.5 + tf.reduce_sum(s["v"]), "v": s["v"] * 2.0},)

    return tf.while_loop(lambda s: s["i"] < 4, body, ({"i": tf.constant(0), "x": x, "v": v},))


@case(X)
def case_wl_dict_body_unwrapped(x):
    # a single dict loop variable; the body returns the dict itself, not a 1-tuple
    return tf.while_loop(
        lambda s: s["k"] < 3,
        lambda s: {"k": s["k"] + 1, "y": s["y"] + f64(s["k"])},
        [{"k": tf.constant(0), "y": x}],
    )


@case(X)
def case_wl_namedtuple_in_tuple(x):
    def body(s):
        return (State(s.i + 1, s.acc + s.prod, s.prod * x),)

    return tf.while_loop(lambda s: s.i < 4, body, (State(tf.constant(0), x * 0.0, x),))


@case(X)
def case_wl_namedtuple_as_loop_vars(x):
    return tf.while_loop(
        lambda i, acc, prod: i < 3,
        lambda i, acc, prod: State(i + 1, acc + prod, prod * x),
        State(tf.constant(0), tf.zeros_like(x), x),
    )


@case(X, V3)
def case_wl_nested_mixed(x, v):
    def body(i, d):
        a, b = d["p"]
        return i + 1, {"s": d["s"] + a * b, "p": Pair(a * 0.5, b + v)}

    init = (tf.constant(0), {"s": tf.zeros_like(v), "p": Pair(x, v)})
    return tf.while_loop(lambda i, d: i < 3, body, init)


@case(X)
def case_wl_python_number_init(x):
    # Python numbers as loop variables become int32 and float32 tensors
    i, s = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + 0.25), (0, 1.0))
    return i, s, x + f64(s)


@case(X)
def case_wl_int_float_mixed(x):
    def body(i, k, y, b):
        return i + 1, k * 3, y + f64(k) * x, tf.logical_not(b)

    init = (tf.constant(0, I32), tf.constant(1, I64), x, tf.constant(True))
    return tf.while_loop(lambda i, k, y, b: i < 5, body, init)


@case(X)
def case_wl_zero_iters(x):
    return tf.while_loop(lambda i, y: i > 0, lambda i, y: (i - 1, y * 100.0), (tf.constant(0), x))


@case(X, N0)
def case_wl_zero_iters_tensor_count(x, n):
    return tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * 100.0), (tf.constant(0), x))


# ---- tf.while_loop: maximum_iterations, shape_invariants ----------------------------------


@case(X)
def case_wl_max_iter_stops(x):
    return tf.while_loop(
        lambda i, y: i < 100,
        lambda i, y: (i + 1, y * 2.0),
        (tf.constant(0), x),
        maximum_iterations=3,
    )


@case(X)
def case_wl_max_iter_unreached(x):
    return tf.while_loop(
        lambda i, y: i < 2,
        lambda i, y: (i + 1, y * 2.0),
        (tf.constant(0), x),
        maximum_iterations=10,
    )


@case(X, N3)
def case_wl_max_iter_tensor(x, n):
    return tf.while_loop(
        lambda y: tf.constant(True), lambda y: (y + 1.0,), (x,), maximum_iterations=n
    )


@case(X)
def case_wl_max_iter_zero(x):
    return tf.while_loop(lambda y: y < 100.0, lambda y: [y * 3.0], [x], maximum_iterations=0)


@case(X)
def case_wl_max_iter_grad(x):
    def f(x):
        return tf.while_loop(
            lambda y: y > -1.0, lambda y: [tf.sin(y) + y], [x], maximum_iterations=4
        )[0]

    return grad2(f, x)


@case(X, N3)
def case_wl_max_iter_tensor_grad(x, n):
    def f(x):
        return tf.while_loop(lambda y: y < 1e9, lambda y: [y * x], [x], maximum_iterations=n)[0]

    return grad2(f, x)


@case(X)
def case_wl_shape_inv_concat(x):
    i0 = tf.constant(0)

    def f(x):
        acc0 = tf.reshape(x, [1])
        _, acc = tf.while_loop(
            lambda i, a: i < 3,
            lambda i, a: (i + 1, tf.concat([a, a[-1:] * x], 0)),
            (i0, acc0),
            shape_invariants=(i0.shape, tf.TensorShape([None])),
        )
        return tf.reduce_sum(acc), acc

    with tf.GradientTape() as tape:
        tape.watch(x)
        s, acc = f(x)
    return acc, s, tape.gradient(s, x)


@case(M32)
def case_wl_shape_inv_rows(m):
    _, out = tf.while_loop(
        lambda i, a: i < 3,
        lambda i, a: (i + 1, tf.concat([a, tf.gather(m, [i]) * f64(i + 1)], 0)),
        (tf.constant(0), tf.zeros([0, 2], F64)),
        shape_invariants=(tf.TensorShape([]), tf.TensorShape([None, 2])),
    )
    return out, tf.shape(out)


@case(X)
def case_wl_shape_change_no_invariant(x):
    # without shape_invariants a growing tensor is an error in a graph
    _, out = tf.while_loop(
        lambda i, a: i < 2, lambda i, a: (i + 1, tf.concat([a, a], 0)), (0, tf.reshape(x, [1]))
    )
    return out


@case(X)
def case_wl_body_changes_dtype(x):
    return tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, tf.cast(y, F32)), (0, x))


@case(X)
def case_wl_body_wrong_structure(x):
    return tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1,), (0, x))


@case(V3)
def case_wl_cond_not_scalar(v):
    return tf.while_loop(lambda y: y < 5.0, lambda y: [y + 1.0], [v])


@case(X)
def case_wl_cond_int_scalar(x):
    # a condition that is an int32 tensor rather than a bool
    return tf.while_loop(lambda i, y: 3 - i, lambda i, y: (i + 1, y + 1.0), (0, x))


# ---- tf.while_loop: gradients ---------------------------------------------------------------


@case(X, N4)
def case_wl_pow_n(x, n):
    def f(x):
        return tf.while_loop(
            lambda i, y: i < n, lambda i, y: (i + 1, y * x), (tf.constant(0), tf.ones_like(x))
        )[1]

    return grad2(f, x)


@case(XN, N3)
def case_wl_pow_n_negative_base(x, n):
    def f(x):
        return tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), (0, tf.ones_like(x)))[
            1
        ]

    return grad2(f, x)


@case(X, N0)
def case_wl_pow_zero_count(x, n):
    # x**0 by zero products: d/dx is 0 (or None), not an error
    def f(x):
        return tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), (0, tf.ones_like(x)))[
            1
        ]

    return grads(f, x)


@case(X, N0)
def case_wl_zero_iters_grad_init(x, n):
    # the loop runs 0 times: d out / d init is 1; a captured variable the body reads: 0/None
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * W + x), (0, x * 2.0))[1]
    return y, tape.gradient(y, x), tape.gradient(y, W)


@case(A2)
def case_wl_newton_sqrt(a):
    def f(a):
        y, k = tf.while_loop(
            lambda y, k: tf.abs(y * y - a) > 1e-12,
            lambda y, k: (0.5 * (y + a / y), k + 1),
            (a, tf.constant(0)),
        )
        return y, k

    with tf.GradientTape() as outer:
        outer.watch(a)
        with tf.GradientTape() as tape:
            tape.watch(a)
            y, k = f(a)
        g = tape.gradient(y, a)
    return y, k, g, outer.gradient(g, a)


@case(A2, X)
def case_wl_newton_sqrt_init_grad(a, y0):
    # gradient w.r.t. the starting guess (converged: ~0) and the target
    y, dd = grads(
        lambda a, y0: tf.while_loop(
            lambda y: tf.abs(y * y - a) > 1e-12, lambda y: [0.5 * (y + a / y)], [y0]
        )[0],
        a,
        y0,
    )
    return y, dd


@case(X)
def case_wl_count_from_value(x):
    # doubles until >= 10: the count depends on x; d/dx = 2**count
    def f(x):
        return tf.while_loop(lambda y, k: y < 10.0, lambda y, k: (y * 2.0, k + 1), (x, 0))

    with tf.GradientTape() as tape:
        tape.watch(x)
        y, k = f(x)
    return y, k, tape.gradient(y, x)


@case(X)
def case_wl_captured_variable(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * W + x), (0, x))[1]
    return y, tape.gradient(y, [x, W])


@case(X)
def case_wl_captured_variable_second_order(x):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * W + x), (0, x))[1]
        g = inner.gradient(y, W)
    return y, g, outer.gradient(g, W)


@case(X, N3)
def case_wl_nested_grad(x, n):
    def f(x):
        def outer_body(i, y):
            _, y = tf.while_loop(
                lambda j, z: j < i + 1, lambda j, z: (j + 1, z * x + 0.1), (tf.constant(0), y)
            )
            return i + 1, y

        return tf.while_loop(lambda i, y: i < n, outer_body, (tf.constant(0), tf.ones_like(x)))[1]

    return grad2(f, x)


@case(V3)
def case_wl_vector_grad(v):
    def f(v):
        return tf.reduce_sum(
            tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(y) * v + 0.5), (0, v))[1]
        )

    return grads(f, v)


@case(X)
def case_wl_stop_gradient_in_body(x):
    def f(x):
        return tf.while_loop(
            lambda i, y: i < 3, lambda i, y: (i + 1, y * tf.stop_gradient(y) + x), (0, x)
        )[1]

    return grads(f, x)


@case(X)
def case_wl_parallel_iterations(x):
    def f(x):
        return tf.while_loop(
            lambda i, y: i < 4, lambda i, y: (i + 1, y * x), (0, x), parallel_iterations=1
        )[1]

    return grads(f, x)


@case(X)
def case_wl_back_prop_false(x):
    def f(x):
        return tf.while_loop(
            lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, x), back_prop=False
        )[1]

    return grads(f, x)


@case(X)
def case_wl_unused_var_grad(x):
    # a loop variable that the output does not depend on
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = tf.while_loop(
            lambda a, b: a < 5.0, lambda a, b: (a + 1.0, b * x), (tf.zeros_like(x), x)
        )
    return tape.gradient(a, x), tape.gradient(a, x, unconnected_gradients="zero")


@case(X)
def case_wl_forward_accumulator(x):
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, F64)) as acc:
        y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * y * 0.5 + x), (0, x))[1]
    return y, acc.jvp(y)


@case(V3)
def case_wl_jacobian(v):
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * tf.roll(y, 1, 0)), (0, v))[1]
    return y, tape.jacobian(y, v)


@case(V3)
def case_wl_hessian(v):
    with tf.GradientTape() as outer:
        outer.watch(v)
        with tf.GradientTape() as inner:
            inner.watch(v)
            y = tf.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, y * v), (0, tf.ones_like(v))
            )[1]
            s = tf.reduce_sum(y * tf.roll(v, 1, 0))
        g = inner.gradient(s, v)
    return g, outer.jacobian(g, v)


@case(M32)
def case_wl_batch_jacobian(m):
    with tf.GradientTape() as tape:
        tape.watch(m)
        y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, tf.sin(y) * m), (0, m))[1]
    return tape.batch_jacobian(y, m)


@case(X)
def case_wl_assign_add_body(x):
    COUNTER.assign(0.0)
    i = tf.while_loop(lambda i: i < 4, lambda i: [(COUNTER.assign_add(x), i + 1)[1]], [0])
    return i, COUNTER.read_value()


@case(X)
def case_wl_persistent_two_outputs(x):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = tf.while_loop(
            lambda a, b: a < 20.0, lambda a, b: (a * x + 1.0, b + tf.sin(a)), (x, x * 0.0)
        )
    return a, b, tape.gradient(a, x), tape.gradient(b, x), tape.gradient([a, b], x)


@case(M32)
def case_wl_slice_by_loop_index(m):
    # a row sliced with the loop counter as its bounds
    return tf.while_loop(
        lambda i, a: i < 3,
        lambda i, a: (i + 1, a + m[i : i + 1, :] * f64(i + 1)),
        (tf.constant(0), tf.zeros([1, 2], F64)),
    )


# ---- a variable assigned, then differentiated through control flow --------------------------


@case(X)
def case_assign_then_while_grad(x):
    WA.assign(0.9)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * WA + x), (0, x))[1]
    return y, tape.gradient(y, [x, WA])


@case(X)
def case_assign_then_cond_grad(x):
    WA.assign(0.9)
    with tf.GradientTape() as tape:
        y = tf.cond(x > 0, lambda: x * WA, lambda: x)
    return y, tape.gradient(y, WA)


@case(X)
def case_assign_inside_tape_cond_grad(x):
    with tf.GradientTape() as tape:
        WA.assign(0.9)
        y = tf.cond(x > 0, lambda: tf.sin(x * WA), lambda: x)
    return y, tape.gradient(y, WA)


@case(M32)
def case_assign_then_map_fn_grad(m):
    WB.assign([0.5, -0.25, 1.5])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.map_fn(lambda r: tf.reduce_sum(WB[:2] * r), m))
    return y, tape.gradient(y, WB)


@case(V3)
def case_assign_add_then_scan_grad(v):
    WB.assign([0.5, -0.25, 1.5])
    WB.assign_add([0.0, 0.0, 0.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.scan(lambda a, t: a * t + WB[0], v * WB))
    return y, tape.gradient(y, WB)


# ---- tf.cond ------------------------------------------------------------------------------


def _both(f, x):
    """f(x) and f(-x): both branches of a cond on the sign."""
    return f(x), f(-x)


@case(X)
def case_cond_tuple(x):
    return _both(lambda x: tf.cond(x > 0, lambda: (x * 2.0, x + 1.0), lambda: (x - 1.0, -x)), x)


@case(X)
def case_cond_dict(x):
    return _both(
        lambda x: tf.cond(x > 0, lambda: {"a": x, "b": (x, 1)}, lambda: {"a": -x, "b": (x * x, 2)}),
        x,
    )


@case(X)
def case_cond_namedtuple(x):
    return _both(lambda x: tf.cond(x > 0, lambda: Pair(x, x * 3.0), lambda: Pair(-x, x)), x)


@case(X)
def case_cond_single_element_list(x):
    # a 1-element list result
    return _both(lambda x: tf.cond(x > 0, lambda: [x * 2.0], lambda: [x]), x)


@case(X)
def case_cond_grad(x):
    return _both(
        lambda x: grad2(lambda t: tf.cond(t > 0, lambda: t**3, lambda: tf.sin(t) * t), x), x
    )


@case(X)
def case_cond_constant_branch_grad(x):
    # the taken branch does not read x: TF's eager gives None
    return _both(lambda x: grads(lambda t: tf.cond(t > 0, lambda: t * 2.0, lambda: c(5.0)), x), x)


@case(X)
def case_cond_other_var_grad(x):

    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.cond(x > 0, lambda: x * x, lambda: x * W)
        return y, tape.gradient(y, [x, W])

    return _both(f, x)


@case(XN)
def case_cond_nan_in_untaken_branch(x):
    # sqrt of a negative number in the branch not taken: no NaN in the gradient
    return grads(lambda t: tf.cond(t > 0, lambda: tf.sqrt(t), lambda: t * t), x)


@case(X)
def case_cond_python_bool(x):
    return tf.cond(True, lambda: x, lambda: -x), tf.cond(False, lambda: x, lambda: -x)


@case(X)
def case_cond_int_pred(x):
    return tf.cond(tf.constant(1), lambda: x, lambda: -x)


@case(X)
def case_cond_structure_mismatch(x):
    return tf.cond(x > 0, lambda: (x, x), lambda: x)


@case(X)
def case_cond_dtype_mismatch(x):
    return tf.cond(x > 0, lambda: x, lambda: tf.cast(x, F32))


@case(X, V3)
def case_cond_shape_differs(x, v):
    return _both(lambda x: tf.cond(x > 0, lambda: v, lambda: v[:2] * x), x)


@case(X)
def case_cond_missing_false_fn(x):
    return tf.cond(x > 0, lambda: x)


@case(X)
def case_cond_side_effects(x):
    COUNTER.assign(1.0)
    tf.cond(x > 0, lambda: COUNTER.assign_add(x), lambda: COUNTER.assign_sub(x))
    tf.cond(x < 0, lambda: COUNTER.assign_add(10.0), lambda: COUNTER.assign(COUNTER * 3.0))
    return COUNTER.read_value()


@case(X)
def case_cond_returns_none(x):
    COUNTER.assign(0.0)

    def add():
        COUNTER.assign_add(x)

    r = tf.cond(x > 0, add, lambda: None)
    return r, COUNTER.read_value()


@case(X)
def case_cond_nested_grad(x):
    def f(t):
        return tf.cond(
            t > 0,
            lambda: tf.cond(t > 1.0, lambda: t**2, lambda: t * 3.0),
            lambda: tf.cond(t > -1.0, lambda: tf.exp(t), lambda: -t),
        )

    return [grad2(f, x * s) for s in (1.0, 0.5, -0.5, -2.0)]


@case(X)
def case_cond_in_while_grad(x):
    def f(x):
        return tf.while_loop(
            lambda i, y: i < 5,
            lambda i, y: (i + 1, tf.cond(y > 2.0, lambda: y * 0.5, lambda: y * x + 1.0)),
            (0, x),
        )[1]

    return grad2(f, x)


@case(X, N3)
def case_while_in_cond_grad(x, n):
    def f(x):
        return tf.cond(
            x > 0,
            lambda: tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), (0, x))[1],
            lambda: x,
        )

    return _both(lambda x: grad2(f, x), x)


@case(X)
def case_cond_second_order_mixed(x):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            y = tf.cond(x > 0, lambda: tf.sin(x * W) * W, lambda: W)
        g = inner.gradient(y, W)
    return y, g, outer.gradient(g, x)


# ---- tf.case and tf.switch_case -------------------------------------------------------------


def _pairs(x):
    return [(x < 0.0, lambda: x * 10.0), (x < 2.0, lambda: x + 100.0), (x < 5.0, lambda: -x)]


@case(X)
def case_case_first_true(x):
    return [tf.case(_pairs(t), default=lambda: x * 0.0) for t in (x, -x, x * 3.0, x * 10.0)]


@case(X)
def case_case_no_default(x):
    return [tf.case(_pairs(t)) for t in (x, x * 3.0)]


@case(X)
def case_case_no_default_none_true(x):
    return tf.case(_pairs(x * 10.0))


@case(X)
def case_case_exclusive_ok(x):
    return tf.case([(x < 0.0, lambda: -x), (x > 0.0, lambda: x * 2.0)], exclusive=True)


@case(X)
def case_case_exclusive_violated(x):
    return tf.case(_pairs(-x), default=lambda: x, exclusive=True)


@case(X)
def case_case_nested_result(x):
    return tf.case(
        [(x > 5.0, lambda: {"a": x, "b": (x, x)}), (x > 1.0, lambda: {"a": -x, "b": (x * 2.0, x)})],
        default=lambda: {"a": x * 0.0, "b": (x, x * 0.0)},
    )


@case(X)
def case_case_single_tuple_unpacked(x):
    # one-element tuple results are unpacked unless strict=True
    pairs = [(x > 0.0, lambda: (x * 2.0,))]
    return tf.case(pairs, default=lambda: (x,)), tf.case(pairs, default=lambda: (x,), strict=True)


@case(X)
def case_case_grad(x):
    return [grad2(lambda t: tf.case(_pairs(t), default=lambda: t**3), t) for t in (x, -x, x * 10.0)]


@case(X, IDX)
def case_switch_indices(x, idx):
    fns = [lambda: x, lambda: x * 2.0, lambda: x * 3.0]
    return [tf.switch_case(idx[k], fns) for k in range(5)]


@case(X, IDX)
def case_switch_default(x, idx):
    fns = [lambda: x, lambda: x * 2.0, lambda: x * 3.0]
    return [tf.switch_case(idx[k], fns, default=lambda: -x) for k in range(5)]


@case(X, IDX)
def case_switch_dict_branches(x, idx):
    fns = {0: lambda: x + 1.0, 1: lambda: x + 2.0}
    return [tf.switch_case(idx[k], fns) for k in range(5)]


@case(X, IDX)
def case_switch_pair_list(x, idx):
    fns = [(0, lambda: x + 1.0), (1, lambda: x + 2.0), (2, lambda: x + 3.0)]
    return [tf.switch_case(idx[k], fns) for k in range(5)]


@case(X)
def case_switch_python_int_index(x):
    fns = [lambda: x, lambda: x * 2.0]
    return tf.switch_case(1, fns), tf.switch_case(7, fns)


@case(X)
def case_switch_int64_index(x):
    return tf.switch_case(tf.constant(1, I64), [lambda: x, lambda: x * 2.0])


@case(X)
def case_switch_float_index(x):
    return tf.switch_case(tf.constant(1.0, F64), [lambda: x, lambda: x * 2.0])


@case(X, IDX)
def case_switch_grad(x, idx):
    fns = [lambda t: t**2, lambda t: tf.exp(t), lambda t: tf.sin(t) * t]

    def f(t, k):
        return tf.switch_case(idx[k], [lambda: fns[0](t), lambda: fns[1](t), lambda: fns[2](t)])

    return [grad2(lambda t, k=k: f(t, k), x) for k in range(5)]


@case(X, IDX)
def case_switch_constant_branch_grad(x, idx):
    return [
        grads(lambda t, k=k: tf.switch_case(idx[k], [lambda: t * 2.0, lambda: c(3.0)]), x)
        for k in (0, 1)
    ]


@case(X, IDX)
def case_switch_nested_result(x, idx):
    fns = [lambda: Pair(x, {"k": x * 2.0}), lambda: Pair(-x, {"k": x * 0.0})]
    return [tf.switch_case(idx[k], fns) for k in (0, 1, 3)]


@case(X, N1)
def case_switch_structure_mismatch(x, i):
    return tf.switch_case(i, [lambda: x, lambda: (x, x)])


# ---- tf.TensorArray -----------------------------------------------------------------------


@case(X)
def case_ta_write_stack(x):
    ta = tf.TensorArray(F64, size=3)
    ta = ta.write(0, x).write(1, x * 2.0).write(2, x * x)
    return ta.stack(), ta.size()


@case(X, N4)
def case_ta_dynamic_size_while(x, n):
    ta = tf.TensorArray(F64, size=0, dynamic_size=True)
    _, ta = tf.while_loop(
        lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, x * f64(i))), (0, ta)
    )
    return ta.stack(), ta.size()


@case(X)
def case_ta_clear_after_read_false(x):
    ta = tf.TensorArray(F64, size=2, clear_after_read=False)
    ta = ta.write(0, x).write(1, -x)
    return ta.read(0), ta.read(0) + ta.read(1), ta.stack()


@case(X)
def case_ta_read_twice_default(x):
    ta = tf.TensorArray(F64, size=2)
    ta = ta.write(0, x).write(1, -x)
    return ta.read(0), ta.read(0)


@case(X)
def case_ta_element_shape_empty_stack(x):
    ta = tf.TensorArray(F64, size=0, element_shape=[2])
    return ta.stack(), ta.size(), x


@case(X)
def case_ta_empty_stack_no_shape(x):
    ta = tf.TensorArray(F64, size=0)
    return ta.stack(), x


@case(X)
def case_ta_element_shape_mismatch(x):
    ta = tf.TensorArray(F64, size=2, element_shape=[2])
    return ta.write(0, tf.stack([x, x, x])).stack()


@case(X)
def case_ta_unwritten_read(x):
    ta = tf.TensorArray(F64, size=3, element_shape=[2])
    ta = ta.write(0, tf.stack([x, -x]))
    return ta.read(2), ta.stack()


@case(M32)
def case_ta_unstack_read(m):
    ta = tf.TensorArray(F64, size=3).unstack(m)
    return ta.read(1), ta.read(2), ta.size()


@case(M32)
def case_ta_gather(m):
    ta = tf.TensorArray(F64, size=3, clear_after_read=False).unstack(m)
    return ta.gather([2, 0]), ta.gather(tf.constant([1, 1]))


@case(M32)
def case_ta_scatter(m):
    ta = tf.TensorArray(F64, size=3).scatter([2, 0, 1], m)
    return ta.stack()


@case(V3)
def case_ta_concat(v):
    ta = tf.TensorArray(F64, size=3, infer_shape=False)
    ta = ta.write(0, v).write(1, v[:1] * 2.0).write(2, v[1:] + 1.0)
    return ta.concat()


@case(V3)
def case_ta_split(v):
    ta = tf.TensorArray(F64, size=2, infer_shape=False).split(v, [1, 2])
    return ta.read(0), ta.read(1)


@case(V3)
def case_ta_split_bad_lengths(v):
    ta = tf.TensorArray(F64, size=2, infer_shape=False).split(v, [1, 1])
    return ta.read(1)


@case(V3)
def case_ta_write_out_of_range(v):
    ta = tf.TensorArray(F64, size=2)
    return ta.write(3, v).stack()


@case(X)
def case_ta_write_wrong_dtype(x):
    ta = tf.TensorArray(F64, size=1)
    return ta.write(0, tf.cast(x, F32)).stack()


@case(X, N3)
def case_ta_int_dtype(x, n):
    ta = tf.TensorArray(I32, size=n)
    _, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * i)), (0, ta))
    return ta.stack(), x


@case(X)
def case_ta_grad_write_stack(x):
    def f(x):
        ta = tf.TensorArray(F64, size=3)
        ta = ta.write(0, x).write(1, x * x).write(2, tf.sin(x))
        return tf.reduce_sum(ta.stack() * c([1.0, 2.0, 3.0]))

    return grad2(f, x)


@case(X)
def case_ta_grad_read(x):
    def f(x):
        ta = tf.TensorArray(F64, size=2).write(0, x * 3.0).write(1, x * x * x)
        return ta.read(1) + ta.read(0)

    return grad2(f, x)


@case(M32)
def case_ta_grad_unstack_read(m):
    def f(m):
        ta = tf.TensorArray(F64, size=3).unstack(m)
        return tf.reduce_sum(ta.read(0) * ta.read(2))

    return grads(f, m)


@case(M32)
def case_ta_grad_scatter_gather(m):
    def f(m):
        ta = tf.TensorArray(F64, size=4, element_shape=[2], clear_after_read=False)
        ta = ta.scatter([3, 0, 1], m)
        g = ta.gather([0, 3, 3])
        return tf.reduce_sum(g * g)

    return grads(f, m)


@case(V3)
def case_ta_grad_split_concat(v):
    def f(v):
        ta = tf.TensorArray(F64, size=2, infer_shape=False).split(v * v, [2, 1])
        return tf.reduce_sum(ta.concat() * c([1.0, 10.0, 100.0])) + tf.reduce_sum(ta.read(1))

    return grads(f, v)


@case(V3, N4)
def case_ta_rnn_while_grad(v, n):

    def f(v):
        ta = tf.TensorArray(F64, size=n)

        def body(i, h, ta):
            h = tf.tanh(h * WV + v)
            return i + 1, h, ta.write(i, h)

        _, h, ta = tf.while_loop(lambda i, h, ta: i < n, body, (0, tf.zeros_like(v), ta))
        return tf.reduce_sum(ta.stack() * tf.reshape(f64(tf.range(1, n + 1)), [-1, 1]))

    with tf.GradientTape() as tape:
        tape.watch(v)
        y = f(v)
    return y, tape.gradient(y, [v, WV])


@case(X, N3)
def case_ta_dynamic_grow_in_loop_grad(x, n):
    def f(x):
        ta = tf.TensorArray(F64, size=1, dynamic_size=True).write(0, x)
        _, ta = tf.while_loop(
            lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i + 1, ta.read(i) * x)), (0, ta)
        )
        return tf.reduce_sum(ta.stack())

    return grad2(f, x)


# ---- map_fn, scan, foldl, foldr, vectorized_map ---------------------------------------------


@case(M32)
def case_map_fn_basic(m):
    return tf.map_fn(lambda r: r * r + 1.0, m)


@case(M32)
def case_map_fn_multi_out_signature(m):
    return tf.map_fn(lambda r: (tf.reduce_sum(r), r * 2.0), m, fn_output_signature=(F64, F64))


@case(M32)
def case_map_fn_multi_out_no_signature(m):
    return tf.map_fn(lambda r: (tf.reduce_sum(r), r * 2.0), m)


@case(M32, V3)
def case_map_fn_tuple_input(m, v):
    return tf.map_fn(lambda e: e[0] * e[1], (m, v), fn_output_signature=F64)


@case(M32, V3)
def case_map_fn_tuple_input_same_structure(m, v):
    return tf.map_fn(lambda e: (e[0] * 2.0, e[1] + 1.0), (m, v))


@case(M32, V3)
def case_map_fn_dict_input(m, v):
    return tf.map_fn(
        lambda e: {"s": tf.reduce_sum(e["m"]) + e["v"]},
        {"m": m, "v": v},
        fn_output_signature={"s": F64},
    )


@case(M32)
def case_map_fn_dtype_change(m):
    return tf.map_fn(lambda r: tf.cast(tf.argmax(r), I32), m, fn_output_signature=I32)


@case(M32)
def case_map_fn_tensorspec_signature(m):
    return tf.map_fn(
        lambda r: tf.concat([r, r[:1]], 0), m, fn_output_signature=tf.TensorSpec([3], F64)
    )


@case(M32)
def case_map_fn_empty(m):
    return tf.map_fn(lambda r: tf.reduce_sum(r), m[:0], fn_output_signature=F64)


@case(M32)
def case_map_fn_wrong_dtype_no_signature(m):
    return tf.map_fn(lambda r: tf.cast(tf.argmax(r), I32), m)


@case(M32)
def case_map_fn_grad(m):

    def f(m):
        out = tf.map_fn(lambda r: tf.sin(r) * tf.reduce_sum(WV[:2] * r), m)
        return tf.reduce_sum(out * out)

    with tf.GradientTape() as tape:
        tape.watch(m)
        y = f(m)
    return y, tape.gradient(y, [m, WV])


@case(V3)
def case_map_fn_second_order(v):
    def f(v):
        return tf.reduce_sum(tf.map_fn(lambda t: t**3 + tf.exp(t), v))

    with tf.GradientTape() as outer:
        outer.watch(v)
        with tf.GradientTape() as inner:
            inner.watch(v)
            y = f(v)
        g = inner.gradient(y, v)
    return y, g, outer.gradient(g, v)


@case(V3)
def case_map_fn_cond_inside_grad(v):
    return grads(
        lambda v: tf.reduce_sum(
            tf.map_fn(lambda t: tf.cond(t > 0, lambda: t * t, lambda: -t * 3.0), v)
        ),
        v,
    )


@case(V3)
def case_scan_cumsum(v):
    return tf.scan(lambda a, t: a + t, v)


@case(V3)
def case_scan_reverse(v):
    return tf.scan(lambda a, t: a * 0.5 + t, v, reverse=True)


@case(V3)
def case_scan_initializer(v):
    return tf.scan(lambda a, t: a * t + 1.0, v, initializer=c(2.0))


@case(M32, V3)
def case_scan_nested(m, v):
    def step(acc, elems):
        s, p = acc
        row, t = elems
        return (s + tf.reduce_sum(row) * t, p * t)

    return tf.scan(step, (m, v), initializer=(c(0.0), c(1.0)))


@case(V3)
def case_scan_dict_acc(v):
    return tf.scan(
        lambda a, t: {"sum": a["sum"] + t, "max": tf.maximum(a["max"], t)},
        v,
        initializer={"sum": c(0.0), "max": c(-10.0)},
    )


@case(V3)
def case_scan_acc_shape_differs_from_elem(v):
    return tf.scan(lambda a, t: tf.concat([a[1:], [t]], 0), v, initializer=tf.zeros([2], F64))


@case(V3)
def case_scan_grad(v):
    def f(v):
        return tf.reduce_sum(tf.scan(lambda a, t: a * t + tf.sin(a), v, initializer=c(0.5)))

    return grads(f, v)


@case(V3)
def case_scan_reverse_grad(v):
    def f(v):
        out = tf.scan(lambda a, t: a * t + 1.0, v, reverse=True)
        return tf.reduce_sum(out * c([1.0, 2.0, 3.0]))

    return grads(f, v)


@case(V3)
def case_foldl(v):
    return tf.foldl(lambda a, t: a * 0.5 + t, v), tf.foldl(lambda a, t: a * 0.5 + t, v, c(10.0))


@case(V3)
def case_foldr(v):
    return tf.foldr(lambda a, t: a * 0.5 + t, v), tf.foldr(lambda a, t: a * 0.5 + t, v, c(10.0))


@case(M32, V3)
def case_fold_nested(m, v):
    def step(acc, e):
        return (acc[0] + e[0] * e[1], acc[1] * e[1])

    return (
        tf.foldl(step, (m, v), initializer=(tf.zeros([2], F64), c(1.0))),
        tf.foldr(step, (m, v), initializer=(tf.zeros([2], F64), c(1.0))),
    )


@case(V3)
def case_fold_empty_no_init(v):
    return tf.foldl(lambda a, t: a + t, v[:0])


@case(V3)
def case_foldl_foldr_grad(v):
    return (
        grads(lambda v: tf.foldl(lambda a, t: a * t + tf.sin(a), v, initializer=c(0.7)), v),
        grads(lambda v: tf.foldr(lambda a, t: a * t + tf.sin(a), v, initializer=c(0.7)), v),
    )


@case(M32)
def case_vmap_basic(m):
    return tf.vectorized_map(lambda r: tf.tensordot(r, r, 1) * r, m)


@case(M32, V3)
def case_vmap_tuple(m, v):
    return tf.vectorized_map(lambda e: (e[0] * e[1], tf.reduce_max(e[0])), (m, v))


@case(M32)
def case_vmap_grad(m):
    def f(m):
        return tf.reduce_sum(tf.vectorized_map(lambda r: tf.exp(r[0]) * r[1], m))

    return grads(f, m)


@case(V3)
def case_vmap_cond_inside(v):
    return tf.vectorized_map(lambda t: tf.cond(t > 0, lambda: t * 2.0, lambda: -t), v)


@case(V3)
def case_vmap_per_example_grad(v):
    # per-example gradients: a tape inside the vectorized function
    def g(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = tf.sin(t) * t
        return tape.gradient(y, t)

    return tf.vectorized_map(g, v)


# ---- autograph: Python control flow on tensors ----------------------------------------------


@case(X, N4)
def case_ag_for_range_sum(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        s += x * f64(i)
    return s


@case(X, N0)
def case_ag_for_range_empty(x, n):
    s = x
    for i in tf.range(n):
        s = s * 100.0 + f64(i)
    return s


@case(X, c(10, I32))
def case_ag_for_break(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        if s > 5.0:
            break
        s += x
    return s


@case(X, c(6, I32))
def case_ag_for_continue(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        if i % 2 == 0:
            continue
        s += x * f64(i)
    return s


@case(X, c(10, I32))
def case_ag_for_early_return(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        s += x
        if s > 4.0:
            return s, i
    return s, n


@case(X)
def case_ag_while_tensor(x):
    k = tf.constant(0)
    while x < 100.0:
        x = x * x + 1.0
        k += 1
    return x, k


@case(X, N3)
def case_ag_while_python_and_tensor(x, n):
    i = 0
    while i < n and x < 50.0:
        x = x * 3.0
        i += 1
    return x, i


@case(X)
def case_ag_while_grad(x):
    def f(x):
        y = x
        while y < 10.0:
            y = y * x
        return y

    return grad2(f, x)


@case(X)
def case_ag_if_in_py_list_for(x):
    s = tf.zeros_like(x)
    for k in [0.5, -1.0, 2.0, -3.0]:
        if x * k > 0.0:
            s += x * k
        else:
            s -= 1.0
    return s


@case(M32)
def case_ag_for_tensor_rows(m):
    s = tf.zeros([], F64)
    for row in m:
        s += tf.reduce_sum(row * row)
    return s


@case(M32)
def case_ag_for_tensor_rows_grad(m):
    def f(m):
        s = tf.ones([2], F64)
        for row in m:
            s = s * row + tf.sin(s)
        return tf.reduce_sum(s)

    return grads(f, m)


@case(X, N4)
def case_ag_python_list_append(x, n):
    out = []
    for i in tf.range(n):
        out.append(x * f64(i))
    return tf.stack(out)


@case(X, N4)
def case_ag_tensorarray_accumulate(x, n):
    ta = tf.TensorArray(F64, size=0, dynamic_size=True)
    for i in tf.range(n):
        ta = ta.write(i, x * f64(i))
    return ta.stack()


@case(X, N4)
def case_ag_assign_add_while(x, n):
    COUNTER.assign(0.0)
    i = tf.constant(0)
    while i < n:
        COUNTER.assign_add(x)
        i += 1
    return COUNTER.read_value(), i


@case(X, N4)
def case_ag_assign_in_for_grad(x, n):
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.zeros_like(x)
        for _ in tf.range(n):
            s = s * W + x
    return s, tape.gradient(s, [x, W])


@case(X)
def case_ag_variable_in_cond(x):
    if x > 0:
        v = tf.Variable(2.0, dtype=F64)
        y = v * x
    else:
        y = x
    return y


@case(X, N3)
def case_ag_loop_changes_dtype(x, n):
    s = tf.constant(0, I32)
    for i in tf.range(n):
        s = f64(s) + x
    return s


@case(X, N3)
def case_ag_loop_changes_shape(x, n):
    s = tf.reshape(x, [1])
    for i in tf.range(n):
        s = tf.concat([s, s[-1:] + 1.0], 0)
    return s


@case(X, N3)
def case_ag_loop_python_int_to_tensor(x, n):
    s = 0
    for i in tf.range(n):
        s = s + i
    return s, x


@case(X, N3)
def case_ag_set_loop_options_shape(x, n):
    s = tf.reshape(x, [1])
    for i in tf.range(n):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(s, tf.TensorShape([None]))])
        s = tf.concat([s, s[-1:] + 1.0], 0)
    return s


@case(X)
def case_ag_undefined_in_branch(x):
    if x > 0:
        y = x * 2.0
    return y  # undefined when the branch is not taken


@case(X)
def case_ag_if_elif_else(x):
    def f(t):
        if t > 1.0:
            r = t * 2.0
        elif t > 0.0:
            r = t + 10.0
        else:
            r = -t
        return r

    return [f(t) for t in (x, x * 0.5, -x)]


@case(X)
def case_ag_ternary_and_bool_ops(x):
    a = x if x > 0 else -x
    b = x * 2.0 if (x > 0 and x < 1.0) else x * 3.0
    d = x + 1.0 if (x < 0 or x > 1.0) else x - 1.0
    e = x * 5.0 if not (x > 0) else x / 5.0
    return a, b, d, e


@case(X, N4)
def case_ag_nested_for_break(x, n):
    s = tf.zeros_like(x)
    for i in tf.range(n):
        for j in tf.range(n):
            if j > i:
                break
            s += x * f64(i * 10 + j)
    return s


@case(X, N4)
def case_ag_for_grad_with_break(x, n):
    def f(x):
        s = x
        for _ in tf.range(n * 10):
            if s > 20.0:
                break
            s = s * x + 1.0
        return s

    return grad2(f, x)


@case(X, N3)
def case_ag_for_python_range_tensor_if(x, n):
    s = tf.zeros_like(x)
    for i in range(4):
        if tf.constant(i) < n:
            s += x**i
    return s


@case(M32)
def case_ag_enumerate_tensor(m):
    s = tf.zeros([], F64)
    for i, row in enumerate(m):
        s += f64(i) * tf.reduce_sum(row)
    return s


@case(X, N4)
def case_ag_while_else_branch_return(x, n):
    # return inside the if of a while
    i = tf.constant(0)
    while i < n:
        if f64(i) * x > 2.0:
            return x * f64(i)
        i += 1
    return -x


@case(X, N3)
def case_ag_for_loop_var_after_loop(x, n):
    # the loop index read after the loop
    j = tf.constant(-1)
    for i in tf.range(n):
        j = i * 2
    return j, x


@case(X, N3)
def case_ag_cond_in_for_grad(x, n):
    def f(x):
        s = x
        for i in tf.range(n):
            if i % 2 == 0:
                s = s * s
            else:
                s = tf.sin(s)
        return s

    return grad2(f, x)


if __name__ == "__main__":
    print(f"{which} control_flow_edges: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
