"""Held-out: the semantics of tf.function itself, as a user meets them: when a function
retraces (Python scalars, strings, None, containers, namedtuples, dataclasses and plain
objects as arguments; tensors of new shapes or dtypes; input_signature; reduce_retracing;
keyword against positional; defaults), Python side effects that run only while tracing
against tf.print that runs every call, run_functions_eagerly, variables made on the first
call only, Keras and tf.Module inside functions, concrete functions, nesting, closures,
jit_compile, autograph=False, the errors of tensors used as Python bools, static and
dynamic shapes, TensorSpec, numpy arguments, methods and lambdas, nested outputs,
exceptions and failing assertions. Every case prints its name and what it observed, so
the outputs of the two engines can be compared line by line."""

import collections
import dataclasses
import os
import sys
import tempfile

import numpy as np
from engine import tf


def fmt(v):
    """A printable form of a result: tensors and arrays rounded to 6 significant digits,
    containers element by element, anything else by its type and value."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {fmt(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v).__name__ + "(" + ", ".join(fmt(e) for e in v) + ")"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(fmt(e) for e in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    if v is None or isinstance(v, (bool, str)):
        return repr(v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"py{type(v).__name__}:{float(v):.6g}"
    if hasattr(v, "numpy") or isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
        if a.dtype.kind in "SUO":
            return f"string{list(a.shape)}:{a.tolist()!r}"
        if a.dtype.kind in "fc":
            body = np.array2string(
                a.astype(np.float64), formatter={"float_kind": lambda t: f"{t:.6g}"}
            )
        else:
            body = np.array2string(a)
        return f"{a.dtype.name}{list(a.shape)}:{body}"
    return f"<{type(v).__name__}>"


def out(case, *parts):
    print(f"{case}: " + " | ".join(str(p) for p in parts), flush=True)


def err(case, e):
    kinds = [
        k.__name__
        for k in (TypeError, ValueError, RuntimeError, NotImplementedError)
        if isinstance(e, k)
    ]
    out(case, f"raised {type(e).__name__} (is {','.join(kinds) or '-'})")
    print(f"  msg: {str(e).strip().splitlines()[0][:80] if str(e).strip() else ''}", flush=True)


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# ---------------------------------------------------------------- retracing on arguments


@case
def py_int_args():
    n = [0]

    @tf.function
    def f(x, k):
        n[0] += 1
        return x * k

    x = tf.constant(2.0)
    r = [fmt(f(x, k)) for k in (1, 2, 1, 3, 2)]
    out("py_int_args", r, f"python_traces={n[0]}", f"count={f.experimental_get_tracing_count()}")


@case
def py_float_and_int_same_value():
    n = [0]

    @tf.function
    def f(k):
        n[0] += 1
        return tf.constant(1.0) * k

    r = [fmt(f(k)) for k in (1.0, 1.5, 1.0, 1, 1.5)]
    out(
        "py_float_and_int_same_value",
        r,
        f"python_traces={n[0]}",
        f"count={f.experimental_get_tracing_count()}",
    )


@case
def py_bool_args():
    n = [0]

    @tf.function
    def f(x, flip):
        n[0] += 1
        if flip:
            return -x
        return x

    x = tf.constant([1.0, -2.0])
    r = [fmt(f(x, b)) for b in (True, False, True)]
    out("py_bool_args", r, f"python_traces={n[0]}")


@case
def py_str_args():
    n = [0]

    @tf.function
    def f(x, mode):
        n[0] += 1
        return x + 1.0 if mode == "add" else x * 10.0

    x = tf.constant(3.0)
    r = [fmt(f(x, m)) for m in ("add", "mul", "add", "mul")]
    out("py_str_args", r, f"python_traces={n[0]}")


@case
def none_arg():
    n = [0]

    @tf.function
    def f(x, bias=None):
        n[0] += 1
        return x if bias is None else x + bias

    x = tf.constant(1.0)
    r = [
        fmt(f(x)),
        fmt(f(x, None)),
        fmt(f(x, tf.constant(2.0))),
        fmt(f(x, None)),
        fmt(f(x, tf.constant(5.0))),
    ]
    out("none_arg", r, f"python_traces={n[0]}")


@case
def tuple_vs_list_args():
    n = [0]

    @tf.function
    def f(pair):
        n[0] += 1
        return pair[0] + pair[1]

    a, b = tf.constant(1.0), tf.constant(2.0)
    r = [
        fmt(f((a, b))),
        fmt(f((b, a))),
        fmt(f([a, b])),
        fmt(f([b, b])),
        fmt(f((1, 2))),
        fmt(f((1, 3))),
    ]
    out("tuple_vs_list_args", r, f"python_traces={n[0]}")


@case
def dict_args():
    n = [0]

    @tf.function
    def f(d):
        n[0] += 1
        return d["a"] * d["b"]

    a, b = tf.constant(3.0), tf.constant(4.0)
    r = [
        fmt(f({"a": a, "b": b})),
        fmt(f({"b": a, "a": b})),
        fmt(f({"a": a, "b": b, "c": a})),
        fmt(f({"a": a, "b": 2.0})),
    ]
    out("dict_args", r, f"python_traces={n[0]}")


Point = collections.namedtuple("Point", "x y")


@case
def namedtuple_args():
    n = [0]

    @tf.function
    def f(p):
        n[0] += 1
        return p.x - p.y

    r = [
        fmt(f(Point(tf.constant(5.0), tf.constant(1.0)))),
        fmt(f(Point(tf.constant(7.0), tf.constant(2.0)))),
        fmt(f(Point(3, 1))),
    ]
    out("namedtuple_args", r, f"python_traces={n[0]}")
    try:
        f((tf.constant(5.0), tf.constant(1.0)))  # a plain tuple has no .x
        out("namedtuple_args", "plain tuple: no error")
    except Exception as e:
        err("namedtuple_args", e)


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float


@dataclasses.dataclass
class Mutable:
    scale: float


@case
def dataclass_args():
    n = [0]

    @tf.function
    def f(x, cfg):
        n[0] += 1
        return x * cfg.scale

    x = tf.constant(2.0)
    r = [fmt(f(x, Frozen(2.0))), fmt(f(x, Frozen(2.0))), fmt(f(x, Frozen(3.0)))]
    out("dataclass_args", r, f"python_traces={n[0]}")
    try:  # an unhashable (non-frozen) dataclass
        out("dataclass_args", fmt(f(x, Mutable(2.0))), f"python_traces={n[0]}")
    except Exception as e:
        err("dataclass_args", e)


class Plain:
    def __init__(self, k):
        self.k = k


@case
def object_args():
    n = [0]

    @tf.function
    def f(x, obj):
        n[0] += 1
        return x + obj.k

    x = tf.constant(1.0)
    o = Plain(1.0)
    r = [fmt(f(x, o)), fmt(f(x, o))]
    o.k = 100.0  # the same object, mutated: the trace keyed on it is reused
    r.append(fmt(f(x, o)))
    r.append(fmt(f(x, Plain(100.0))))
    out("object_args", r, f"python_traces={n[0]}")


@case
def tensor_new_shapes():
    n = [0]
    shapes = []

    @tf.function
    def f(x):
        n[0] += 1
        shapes.append(str(x.shape))
        return tf.reduce_sum(x)

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4, 2, 5)]
    out(
        "tensor_new_shapes",
        r,
        f"python_traces={n[0]}",
        f"count={f.experimental_get_tracing_count()}",
        f"shapes={shapes}",
    )


@case
def tensor_new_dtypes():
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        return x * 2

    r = [
        fmt(f(tf.constant([1.5]))),
        fmt(f(tf.constant([3]))),
        fmt(f(tf.constant([1.5], tf.float64))),
        fmt(f(tf.constant([2.5]))),
    ]
    out("tensor_new_dtypes", r, f"python_traces={n[0]}")


@case
def input_signature_none_dims():
    n = [0]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        n[0] += 1
        return tf.reduce_sum(x * x)

    r = [fmt(f(tf.ones([k]))) for k in (1, 3, 7)]
    r.append(fmt(f([1.0, 2.0])))
    out(
        "input_signature_none_dims",
        r,
        f"python_traces={n[0]}",
        f"count={f.experimental_get_tracing_count()}",
    )
    for bad in (tf.ones([2, 2]), tf.constant([1, 2])):
        try:
            f(bad)
            out("input_signature_none_dims", "no error")
        except Exception as e:
            err("input_signature_none_dims", e)


@case
def reduce_retracing_true():
    n = [0]
    shapes = []

    @tf.function(reduce_retracing=True)
    def f(x):
        n[0] += 1
        shapes.append(str(x.shape.as_list()))
        return tf.reduce_sum(x)

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4, 5)]
    out("reduce_retracing_true", r, f"python_traces={n[0]}", f"shapes={shapes}")
    experimental_relax_shapes()


def experimental_relax_shapes():
    n = [0]

    @tf.function(experimental_relax_shapes=True)
    def f(x):
        n[0] += 1
        return tf.reduce_mean(x)

    r = [fmt(f(tf.ones([k, 2]))) for k in (1, 2, 3)]
    out("experimental_relax_shapes", r, f"python_traces={n[0]}")


@case
def keyword_vs_positional():
    n = [0]

    @tf.function
    def f(x, y):
        n[0] += 1
        return x - y

    a, b = tf.constant(5.0), tf.constant(2.0)
    r = [fmt(f(a, b)), fmt(f(a, y=b)), fmt(f(x=a, y=b)), fmt(f(y=b, x=a))]
    out("keyword_vs_positional", r, f"python_traces={n[0]}")


@case
def default_arguments():
    n = [0]

    @tf.function
    def f(x, k=2, s=tf.constant(10.0)):  # noqa: B008 (a default tensor: the case)
        n[0] += 1
        return x * k + s

    x = tf.constant(1.0)
    r = [fmt(f(x)), fmt(f(x, 2)), fmt(f(x, k=2)), fmt(f(x, 3)), fmt(f(x, s=tf.constant(0.0)))]
    out("default_arguments", r, f"python_traces={n[0]}")


@case
def numpy_vs_tensor_args():
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        return x + 1

    r = [
        fmt(f(np.array([1.0, 2.0]))),
        fmt(f(np.array([5.0, 6.0]))),
        fmt(f(tf.constant([1.0, 2.0], tf.float64))),
        fmt(f(np.array([1.0, 2.0], np.float32))),
        fmt(f(tf.constant([3.0, 4.0]))),
    ]
    out("numpy_vs_tensor_args", r, f"python_traces={n[0]}")


@case
def many_python_floats():
    n = [0]

    @tf.function
    def f(x, lr):
        n[0] += 1
        return x - lr

    x = tf.constant(1.0)
    for i in range(6):
        f(x, 0.1 * i)
    out(
        "many_python_floats", f"python_traces={n[0]}", f"count={f.experimental_get_tracing_count()}"
    )


# ---------------------------------------------------------------- side effects


SIDE = []
GLOBAL_COUNT = 0


@case
def python_side_effects():
    global GLOBAL_COUNT
    GLOBAL_COUNT = 0
    del SIDE[:]

    @tf.function
    def f(x):
        global GLOBAL_COUNT
        print("python print while tracing")
        SIDE.append("appended")
        GLOBAL_COUNT += 1
        return x + GLOBAL_COUNT

    r = [fmt(f(tf.constant(1.0))) for _ in range(3)]
    out("python_side_effects", r, f"appends={len(SIDE)}", f"global={GLOBAL_COUNT}")


@case
def tf_print_every_call():
    path = os.path.join(tempfile.mkdtemp(), "printed.txt")
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        tf.print("value", x, output_stream="file://" + path)
        return x * 2

    try:
        for v in (1.0, 2.0, 3.0):
            f(tf.constant(v))
        with open(path) as fh:
            lines = fh.read().splitlines()
        out("tf_print_every_call", f"python_traces={n[0]}", f"lines={lines}")
    except Exception as e:
        err("tf_print_every_call", e)


@case
def tf_print_stdout():
    @tf.function
    def f(x):
        tf.print("tfprint", x, [1, 2], output_stream=sys.stdout)
        return x

    for v in (1, 2):
        sys.stdout.flush()
        f(tf.constant(v))
        sys.stdout.flush()
    out("tf_print_stdout", "done")


@case
def run_functions_eagerly():
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        return x.numpy() * 2  # only possible eagerly

    tf.config.run_functions_eagerly(True)
    try:
        r = [fmt(f(tf.constant(3.0))) for _ in range(3)]
        out(
            "run_functions_eagerly",
            r,
            f"python_runs={n[0]}",
            f"eager={tf.config.functions_run_eagerly()}",
            f"count={f.experimental_get_tracing_count()}",
        )
    finally:
        tf.config.run_functions_eagerly(False)
    try:
        f(tf.constant(3.0))
        out("run_functions_eagerly", "graph: no error")
    except Exception as e:
        err("run_functions_eagerly", e)
    out("run_functions_eagerly", f"eager={tf.config.functions_run_eagerly()}")


# ---------------------------------------------------------------- variables and state


@case
def variable_singleton():
    class Counter:
        def __init__(self):
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(tf.zeros_like(x))
            self.v.assign_add(x)
            return self.v.read_value()

    c = Counter()
    r = [fmt(c(tf.constant([1.0, 2.0]))) for _ in range(3)]
    out("variable_singleton", r, fmt(c.v))


@case
def variable_every_call():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v * x

    try:
        r = fmt(f(tf.constant(2.0)))
        r2 = fmt(f(tf.constant(3.0)))
        out("variable_every_call", "no error", r, r2)
    except Exception as e:
        err("variable_every_call", e)


@case
def closure_python_value():
    k = [1.0]
    scale = 2.0

    @tf.function
    def f(x):
        return x * scale + k[0]

    r = [fmt(f(tf.constant(1.0)))]
    scale = 5.0
    k[0] = 100.0
    r.append(fmt(f(tf.constant(1.0))))
    r.append(fmt(f(tf.constant([1.0]))))  # a new shape: a retrace sees the new values
    out("closure_python_value", r)


@case
def closure_variable():
    v = tf.Variable(2.0)

    @tf.function
    def f(x):
        return x * v

    r = [fmt(f(tf.constant(1.0)))]
    v.assign(7.0)
    r.append(fmt(f(tf.constant(1.0))))
    v.assign_add(1.0)
    r.append(fmt(f(tf.constant(1.0))))
    out("closure_variable", r, f"count={f.experimental_get_tracing_count()}")


@case
def variable_assign_inside():
    v = tf.Variable([1.0, 1.0])

    @tf.function
    def step(g):
        v.assign_sub(0.5 * g)
        return tf.reduce_sum(v)

    r = [fmt(step(tf.constant([1.0, 2.0]))) for _ in range(2)]
    out("variable_assign_inside", r, fmt(v))


@case
def keras_model_inside():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                2, kernel_initializer="ones", bias_initializer="zeros", activation="relu"
            ),
            tf.keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="ones"),
        ]
    )
    n = [0]

    @tf.function
    def f(x):
        n[0] += 1
        return model(x)

    r = [
        fmt(f(tf.constant([[1.0, -3.0]]))),
        fmt(f(tf.constant([[2.0, 1.0]]))),
        fmt(f(tf.constant([[2.0, 1.0], [0.0, 1.0]]))),
    ]
    out(
        "keras_model_inside",
        r,
        f"python_traces={n[0]}",
        f"weights={len(model.trainable_variables)}",
    )


@case
def module_method_per_instance():
    n = [0]

    class Scale(tf.Module):
        def __init__(self, k):
            super().__init__()
            self.k = tf.Variable(k)

        @tf.function
        def __call__(self, x):
            n[0] += 1
            return x * self.k

    a, b = Scale(2.0), Scale(3.0)
    x = tf.constant(1.0)
    r = [fmt(a(x)), fmt(b(x)), fmt(a(x)), fmt(b(x))]
    out(
        "module_method_per_instance",
        r,
        f"python_traces={n[0]}",
        f"counts={a.__call__.experimental_get_tracing_count()},{b.__call__.experimental_get_tracing_count()}",
        f"vars={len(a.trainable_variables)}",
    )


# ---------------------------------------------------------------- concrete functions


@case
def concrete_function():
    n = [0]

    @tf.function
    def f(x, y):
        n[0] += 1
        return {"sum": x + y, "prod": x * y}

    cf = f.get_concrete_function(
        tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.float32)
    )
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    out("concrete_function", fmt(cf(a, b)), fmt(cf(x=a, y=b)), f"python_traces={n[0]}")
    so = cf.structured_outputs
    out("concrete_function", f"outputs={sorted(so)}", f"out_shape={so['sum'].shape.as_list()}")
    f(a, b)  # a call the generic trace covers? (TF: a new trace for the exact shape)
    out("concrete_function", f"python_traces_after_call={n[0]}")
    try:
        cf(tf.constant([1, 2]), tf.constant([1, 2]))
        out("concrete_function", "int args: no error")
    except Exception as e:
        err("concrete_function", e)
    try:
        out("concrete_function", "rank-2 args:", fmt(cf(tf.ones([2, 2]), tf.ones([2, 2]))))
    except Exception as e:
        err("concrete_function", e)
    try:
        sig = f.pretty_printed_concrete_signatures()
        out("concrete_function", f"pretty has x,y: {'x' in sig and 'y' in sig}")
    except Exception as e:
        err("concrete_function", e)


@case
def concrete_function_python_arg():
    @tf.function
    def f(x, power):
        return x**power

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32), 3)
    out(
        "concrete_function_python_arg",
        fmt(cf(tf.constant(2.0))),
        f"count={f.experimental_get_tracing_count()}",
    )
    try:
        out("concrete_function_python_arg", fmt(cf(tf.constant(2.0), 3)))
    except Exception as e:
        err("concrete_function_python_arg", e)


@case
def nested_functions():
    outer_n, inner_n = [0], [0]

    @tf.function
    def inner(x):
        inner_n[0] += 1
        return x * x

    @tf.function
    def outer(x):
        outer_n[0] += 1
        return inner(x) + inner(x + 1.0)

    r = [fmt(outer(tf.constant(2.0))), fmt(outer(tf.constant(3.0))), fmt(inner(tf.constant(4.0)))]
    out("nested_functions", r, f"outer_traces={outer_n[0]}", f"inner_traces={inner_n[0]}")


@case
def recursion_python_int():
    @tf.function
    def fact(x, k):
        if k <= 1:
            return x
        return x * fact(x, k - 1)

    try:
        out("recursion_python_int", fmt(fact(tf.constant(2.0), 4)))
    except Exception as e:
        err("recursion_python_int", e)


@case
def recursion_same_signature():
    @tf.function
    def g(x):
        if x > 0:
            return g(x - 1) + 1
        return x

    try:
        out("recursion_same_signature", fmt(g(tf.constant(3))))
    except Exception as e:
        err("recursion_same_signature", e)


# ---------------------------------------------------------------- outputs


@case
def returns_python_values():
    @tf.function
    def f(x):
        return 3, 2.5, "tag", None, x

    @tf.function
    def g(x):
        x + 1

    r = f(tf.constant(1.0))
    out("returns_python_values", fmt(r), f"type={type(r).__name__}", fmt(g(tf.constant(1.0))))
    returns_variable()


@case
def returns_nested():
    @tf.function
    def f(x):
        return {"a": x, "b": (x * 2, [x * 3, Point(x, -x)])}

    r = f(tf.constant(1.5))
    out(
        "returns_nested",
        fmt(r),
        f"flat={len(tf.nest.flatten(r))}",
        f"types={type(r).__name__},{type(r['b']).__name__},{type(r['b'][1]).__name__}",
    )
    try:
        doubled = tf.nest.map_structure(lambda t: t * 2, r)
        out("returns_nested", "map_structure", fmt(doubled["b"][1][1]))
    except Exception as e:
        err("returns_nested", e)


def returns_variable():
    v = tf.Variable(4.0)

    @tf.function
    def f():
        return v

    r = f()
    v.assign(5.0)
    out("returns_variable", fmt(r), f"is_variable={isinstance(r, tf.Variable)}")


# ---------------------------------------------------------------- methods, lambdas, options


@case
def bound_method_and_lambda():
    class Affine:
        def __init__(self):
            self.a = 3.0

        def apply(self, x):
            return self.a * x + 1.0

    obj = Affine()
    fm = tf.function(obj.apply)
    fl = tf.function(lambda x: x * x - 1.0)
    out("bound_method_and_lambda", fmt(fm(tf.constant(2.0))), fmt(fl(tf.constant(3.0))))
    python_function_attribute()


@case
def jit_compile_true():
    @tf.function(jit_compile=True)
    def f(x):
        return tf.reduce_sum(tf.tanh(x) * 2.0)

    out("jit_compile_true", fmt(f(tf.constant([0.5, -1.0, 2.0]))))


@case
def autograph_false_tensor_if():
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    try:
        out("autograph_false_tensor_if", fmt(f(tf.constant(2.0))))
    except Exception as e:
        err("autograph_false_tensor_if", e)
    autograph_true_tensor_if()


def autograph_true_tensor_if():
    @tf.function
    def f(x):
        if x > 0:
            y = x * 2
        else:
            y = -x
        return y

    out("autograph_true_tensor_if", fmt(f(tf.constant(2.0))), fmt(f(tf.constant(-3.0))))


@case
def tensor_bool_errors():
    try:
        out("tensor_bool_errors", f"eager scalar={bool(tf.constant(2.0) > 1.0)}")
    except Exception as e:
        err("tensor_bool_errors", e)
    try:
        bool(tf.constant([1.0, 2.0]))
        out("tensor_bool_errors", "eager vector: no error")
    except Exception as e:
        err("tensor_bool_errors", e)

    @tf.function
    def f(x):
        return tf.constant(1.0) if bool(x) else tf.constant(0.0)

    try:
        out("tensor_bool_errors", fmt(f(tf.constant(True))))
    except Exception as e:
        err("tensor_bool_errors", e)

    @tf.function
    def g(x):
        return x > 0 and x < 10

    try:
        out("tensor_bool_errors", fmt(g(tf.constant(3.0))))
    except Exception as e:
        err("tensor_bool_errors", e)


@case
def static_vs_dynamic_shape():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        seen.append((x.shape.as_list(), x.shape[0], x.shape.rank))
        return tf.shape(x), tf.size(x)

    r = f(tf.ones([4, 3]))
    out("static_vs_dynamic_shape", f"static={seen}", fmt(r))


@case
def tensorspec_compare():
    a = tf.TensorSpec([None, 3], tf.float32)
    b = tf.TensorSpec([None, 3], tf.float32)
    c = tf.TensorSpec([2, 3], tf.float32)
    d = tf.TensorSpec([2, 3], tf.int32)
    out(
        "tensorspec_compare",
        f"a==b={a == b}",
        f"a==c={a == c}",
        f"shape={a.shape.as_list()}",
        f"dtype={a.dtype.name}",
        f"hash_eq={hash(a) == hash(b)}",
    )
    for label, x, y in (
        ("a~c", a, c),
        ("c~a", c, a),
        ("a~d", a, d),
        ("a~tensor", a, tf.ones([5, 3])),
        ("c~tensor", c, tf.ones([5, 3])),
    ):
        try:
            out("tensorspec_compare", f"{label}={x.is_compatible_with(y)}")
        except Exception as e:
            err("tensorspec_compare", e)


@case
def exception_inside():
    @tf.function
    def f(x, bad):
        if bad:
            raise ValueError("bad argument given")
        return x

    out("exception_inside", fmt(f(tf.constant(1.0), False)))
    try:
        f(tf.constant(1.0), True)
        out("exception_inside", "no error")
    except Exception as e:
        err("exception_inside", e)


@case
def assert_inside():
    @tf.function
    def f(x):
        tf.debugging.assert_positive(x, message="need positive")
        return tf.sqrt(x)

    try:
        out("assert_inside", fmt(f(tf.constant([4.0, 9.0]))))
        f(tf.constant([4.0, -1.0]))
        out("assert_inside", "no error")
    except Exception as e:
        err("assert_inside", e)

    @tf.function
    def g(x, y):
        tf.debugging.assert_equal(x, y)
        return x + y

    try:
        g(tf.constant([1, 2]), tf.constant([1, 3]))
        out("assert_inside", "assert_equal: no error")
    except Exception as e:
        err("assert_inside", e)
    out(
        "assert_inside",
        f"is_InvalidArgumentError_class={hasattr(tf.errors, 'InvalidArgumentError')}",
    )


@case
def python_loop_unrolled():
    n = [0]

    @tf.function
    def f(x, steps):
        n[0] += 1
        for _ in range(steps):
            x = x * 2.0
        return x

    r = [fmt(f(tf.constant(1.0), 3)), fmt(f(tf.constant(1.0), 3)), fmt(f(tf.constant(1.0), 4))]
    out("python_loop_unrolled", r, f"python_traces={n[0]}")
    tensor_loop_in_function()


def tensor_loop_in_function():
    n = [0]

    @tf.function
    def f(x, steps):
        n[0] += 1
        for _ in tf.range(steps):
            x = x * 2.0
        return x

    r = [fmt(f(tf.constant(1.0), tf.constant(3))), fmt(f(tf.constant(1.0), tf.constant(5)))]
    out("tensor_loop_in_function", r, f"python_traces={n[0]}")


def python_function_attribute():
    def plain(x):
        return x + 1

    f = tf.function(plain)
    out(
        "python_function_attribute",
        f"same={f.python_function is plain}",
        f"name={f.__name__}",
        fmt(f.python_function(tf.constant(1.0))),
    )


for c in CASES:
    try:
        c()
    except Exception as e:
        err(c.__name__ + " (uncaught)", e)
