"""Held-out: when and how tf.function traces, beyond function_semantics.py's cases. Each
case makes a call sequence and prints the values, `experimental_get_tracing_count()` and a
log of the Python side effects the function ran (a list appended to, print captured from
stdout: TensorFlow runs them while tracing only). Covered: Python scalars of unusual kinds
(bool against int, nan, big ints, enums, dtypes, callables, bytes) as arguments; shapes
with reduce_retracing True, False and left out (rank changes, dims that change one at a
time, empty and size-1 dims, code that reads static sizes); input_signature conversions
and refusals; nested structures, *args, **kwargs, keyword-only and positional-only
parameters, functools.partial; methods (two instances, static and class methods,
inheritance, a callable object); tf.Variable arguments; concrete functions (their
signatures, output shapes and refusals); stale closures over Python values, eager tensors
and variables rebound in Python; iterators consumed while tracing; tensors leaked out of
a trace; variables made on a later trace; run_functions_eagerly toggled around traces;
jit_compile=False, a function wrapped twice, recursion; results of Python values.

    PYTHONPATH=. python benchmarks/held_out/retracing.py tracer [c|interpreter]
    /path/to/tensorflow/python benchmarks/held_out/retracing.py tf
"""

import collections
import contextlib
import dataclasses
import enum
import functools
import io
import os
import sys
import tempfile

import numpy as np
from engine import tf, which

BACKEND = sys.argv[2] if which == "tracer" and len(sys.argv) > 2 else None


def function(func=None, **options):
    """tf.function, on tracer's backend named by the second argument where one is."""
    if BACKEND is not None:
        options["backend"] = BACKEND
    if func is None:
        return lambda f: tf.function(f, **options)
    return tf.function(func, **options)


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
    if v is None or isinstance(v, (bool, str, bytes)):
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


def dims(x):
    """A tensor's static shape while tracing: None for a dimension the trace does not know
    (tracer's symbolic sizes are not ints), '?' for an unknown rank."""
    if x.shape.rank is None:
        return "?"
    return [d if isinstance(d, int) else None for d in x.shape.as_list()]


def count(f):
    try:
        return f"count={f.experimental_get_tracing_count()}"
    except Exception as e:
        return f"count=<{type(e).__name__}>"


def out(case, *parts):
    print(f"{case}: " + " | ".join(str(p) for p in parts), flush=True)


def err(case, e):
    kinds = [
        k.__name__
        for k in (TypeError, ValueError, RuntimeError, NotImplementedError, AttributeError)
        if isinstance(e, k)
    ]
    out(case, f"raised {type(e).__name__} (is {','.join(kinds) or '-'})")
    print(f"  msg: {str(e).strip().splitlines()[0][:80] if str(e).strip() else ''}", flush=True)


def attempt(case, thunk):
    """Print thunk()'s value, or the error it raised."""
    try:
        out(case, fmt(thunk()))
    except Exception as e:
        err(case, e)


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


x1 = None  # a scalar float32 tensor, made at startup (below)


# ---------------------------------------------------------------- Python scalar arguments


@case
def bool_vs_int_same_value():
    log = []

    @function
    def f(x, k):
        log.append(type(k).__name__)
        return x * 2 if k else x

    r = [fmt(f(x1, a)) for a in (True, 1, True, 1, False, 0)]
    out("bool_vs_int_same_value", r, count(f), f"log={log}")


@case
def py_float_nan_arg():
    log = []

    @function
    def f(x, k):
        log.append("t")
        return x + k

    r = [fmt(f(x1, float("nan"))) for _ in range(3)]
    out("py_float_nan_arg", r, count(f), f"traces={len(log)}")


@case
def py_big_int_arg():
    log = []

    @function
    def f(x, k):
        log.append(k)
        return tf.cast(x, tf.int64) + k

    r = [fmt(f(x1, k)) for k in (2**40, 2**40, 2**40 + 1)]
    out("py_big_int_arg", r, count(f), f"log={log}")


@case
def py_negative_zero_arg():
    log = []

    @function
    def f(x, k):
        log.append(repr(k))
        return x * k

    r = [fmt(f(x1, k)) for k in (0.0, -0.0, 0.0)]
    out("py_negative_zero_arg", r, count(f), f"log={log}")


class Mode(enum.Enum):
    ADD = 1
    MUL = 2


@case
def enum_arg():
    log = []

    @function
    def f(x, mode):
        log.append(mode.name)
        return x + 3.0 if mode is Mode.ADD else x * 3.0

    r = [fmt(f(x1, m)) for m in (Mode.ADD, Mode.MUL, Mode.ADD)]
    out("enum_arg", r, count(f), f"log={log}")


@case
def dtype_arg():
    log = []

    @function
    def f(x, dtype):
        log.append(dtype.name)
        return tf.cast(x * 2.5, dtype)

    r = [fmt(f(x1, d)) for d in (tf.int32, tf.float64, tf.int32)]
    out("dtype_arg", r, count(f), f"log={log}")


@case
def callable_arg():
    log = []

    @function
    def f(x, fn):
        log.append("t")
        return fn(x)

    r = [fmt(f(x1, g)) for g in (tf.square, tf.exp, tf.square)]
    out("callable_arg", r, count(f), f"traces={len(log)}")


@case
def new_lambda_each_call():
    log = []

    @function
    def f(x, fn):
        log.append("t")
        return fn(x)

    keep = [lambda t, k=k: t + k for k in range(3)]
    r = [fmt(f(x1, g)) for g in keep]
    out("new_lambda_each_call", r, count(f), f"traces={len(log)}")


@case
def bytes_and_str_args():
    log = []

    @function
    def f(x, tag):
        log.append(type(tag).__name__)
        return x * len(tag)

    r = [fmt(f(x1, t)) for t in ("ab", b"ab", "ab", "", "héllo")]
    out("bytes_and_str_args", r, count(f), f"log={log}")


@case
def tuple_of_ints_arg():
    log = []

    @function
    def f(x, shape):
        log.append(shape)
        return tf.reshape(tf.range(6.0) + x, shape)

    r = [fmt(f(x1, s)) for s in ((2, 3), (2, 3), (3, 2), [2, 3])]
    out("tuple_of_ints_arg", r, count(f), f"log={log}")


@case
def numpy_scalar_args():
    log = []

    @function
    def f(k):
        log.append(tf.is_tensor(k))
        return k * 2

    r = [fmt(f(k)) for k in (np.float32(1.5), np.float32(2.5), np.float64(1.5), np.int32(3))]
    out("numpy_scalar_args", r, count(f), f"log={log}")


@case
def numpy_array_new_shapes():
    log = []

    @function
    def f(a):
        log.append(dims(a))
        return tf.reduce_sum(a)

    r = [fmt(f(np.ones(k, np.float32))) for k in (2, 3, 3, 4)]
    out("numpy_array_new_shapes", r, count(f), f"log={log}")


# ---------------------------------------------------------------- tensor shapes


@case
def shapes_default_options():
    log = []

    @function
    def f(x):
        log.append(x.shape.rank)
        return tf.reduce_sum(x) * 2.0

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4, 5, 3)]
    out("shapes_default_options", r, count(f), f"traces={len(log)}")


@case
def shapes_reduce_retracing_false():
    log = []

    @function(reduce_retracing=False)
    def f(x):
        log.append(dims(x))
        return tf.reduce_sum(x)

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4, 2)]
    out("shapes_reduce_retracing_false", r, count(f), f"log={log}")


@case
def reduce_retracing_dims_one_at_a_time():
    log = []

    @function(reduce_retracing=True)
    def f(x):
        log.append(dims(x))
        return tf.reduce_sum(x, axis=0)

    r = [fmt(f(tf.ones(s))) for s in ([2, 3], [4, 3], [4, 5], [6, 7], [2, 3])]
    out("reduce_retracing_dims_one_at_a_time", r, count(f), f"log={log}")


@case
def reduce_retracing_rank_change():
    log = []

    @function(reduce_retracing=True)
    def f(x):
        log.append(dims(x))
        return tf.reduce_sum(x)

    r = [fmt(f(tf.ones(s))) for s in ([2], [2, 2], [2, 2, 2], [3])]
    out("reduce_retracing_rank_change", r, count(f), f"log={log}")


@case
def reduce_retracing_scalar_then_vector():
    log = []

    @function(reduce_retracing=True)
    def f(x):
        log.append(dims(x))
        return x * 2.0

    r = [fmt(f(v)) for v in (tf.constant(1.0), tf.constant([1.0]), tf.constant([1.0, 2.0]))]
    out("reduce_retracing_scalar_then_vector", r, count(f), f"log={log}")


@case
def reduce_retracing_dtype_change():
    log = []

    @function(reduce_retracing=True)
    def f(x):
        log.append(x.dtype.name)
        return x + x

    r = [fmt(f(v)) for v in (tf.constant([1.0]), tf.constant([1]), tf.constant([1.0, 2.0]))]
    out("reduce_retracing_dtype_change", r, count(f), f"log={log}")


@case
def reduce_retracing_two_args():
    log = []

    @function(reduce_retracing=True)
    def f(a, b):
        log.append((dims(a), dims(b)))
        return tf.reduce_sum(a) + tf.reduce_sum(b)

    r = [fmt(f(tf.ones([p]), tf.ones([q]))) for p, q in ((2, 2), (3, 2), (3, 4), (5, 6))]
    out("reduce_retracing_two_args", r, count(f), f"log={log}")


@case
def reduce_retracing_returns_static_dim():
    @function(reduce_retracing=True)
    def f(x):
        return x.shape[0]

    for k in (2, 3):
        attempt("reduce_retracing_returns_static_dim", lambda k=k: f(tf.ones([k])))
    out("reduce_retracing_returns_static_dim", count(f))


@case
def default_returns_static_dim():
    @function
    def f(x):
        return {"n": x.shape[0], "s": tf.reduce_sum(x)}

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4)]
    out("default_returns_static_dim", r, count(f))


@case
def default_returns_static_shape():
    @function
    def f(x):
        return x.shape

    for k in (2, 3):
        try:
            r = f(tf.ones([k, 2]))
            shown = [d if isinstance(d, int) else None for d in r]
            out("default_returns_static_shape", fmt(r) if tf.is_tensor(r) else shown)
        except Exception as e:
            err("default_returns_static_shape", e)


@case
def reduce_retracing_dynamic_shape():
    @function(reduce_retracing=True)
    def f(x):
        return tf.shape(x)[0] * 2, tf.size(x)

    r = [fmt(f(tf.ones([k, 2]))) for k in (1, 3, 5)]
    out("reduce_retracing_dynamic_shape", r, count(f))


@case
def empty_then_sizes():
    log = []

    @function
    def f(x):
        log.append("t")
        return tf.reduce_sum(x) + tf.cast(tf.size(x), tf.float32)

    r = [fmt(f(tf.ones([k]))) for k in (0, 3, 1, 0, 4)]
    out("empty_then_sizes", r, count(f), f"traces={len(log)}")


@case
def size_one_broadcast():
    @function
    def f(x, y):
        return x + y

    a = tf.constant([1.0, 2.0, 3.0])
    r = [fmt(f(a, y)) for y in (tf.constant([10.0]), tf.constant([1.0, 2.0, 3.0]), tf.ones([1]))]
    out("size_one_broadcast", r, count(f))


@case
def static_size_branch():
    log = []

    @function
    def f(x):
        log.append("t")
        if x.shape[0] == 1:
            return x * 100.0
        return x + 1.0

    r = [fmt(f(tf.ones([k]))) for k in (3, 4, 1, 5, 1)]
    out("static_size_branch", r, count(f), f"traces={len(log)}")


@case
def python_range_over_size():
    log = []

    @function
    def f(x):
        log.append("t")
        total = tf.constant(0.0)
        for i in range(x.shape[0]):
            total += x[i] * (i + 1)
        return total

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4, 3)]
    out("python_range_over_size", r, count(f), f"traces={len(log)}")


@case
def static_size_as_python_int():
    @function
    def f(x):
        return tf.fill([2], float(x.shape[0]))

    r = [fmt(f(tf.ones([k]))) for k in (2, 3, 4)]
    out("static_size_as_python_int", r, count(f))


@case
def tensor_vs_python_same_value():
    log = []

    @function
    def f(k):
        log.append(type(k).__name__ if not tf.is_tensor(k) else "tensor")
        return k * 2.0

    r = [fmt(f(k)) for k in (2.0, tf.constant(2.0), 2.0, tf.constant(3.0))]
    out("tensor_vs_python_same_value", r, count(f), f"log={log}")


# ---------------------------------------------------------------- tf.Variable arguments


@case
def variable_args_same_shape():
    log = []

    @function
    def f(v):
        log.append("t")
        return v * 2.0

    a, b = tf.Variable([1.0, 2.0]), tf.Variable([5.0, 6.0])
    r = [fmt(f(a)), fmt(f(b)), fmt(f(a))]
    out("variable_args_same_shape", r, count(f), f"traces={len(log)}")


@case
def variable_vs_tensor_arg():
    log = []

    @function
    def f(v):
        log.append("t")
        return v + 1.0

    r = [fmt(f(tf.Variable([1.0]))), fmt(f(tf.constant([1.0]))), fmt(f(tf.Variable([3.0])))]
    out("variable_vs_tensor_arg", r, count(f), f"traces={len(log)}")


@case
def variable_args_new_shape_dtype():
    log = []

    @function
    def f(v):
        log.append((dims(v), v.dtype.name))
        return v * 2

    r = [fmt(f(tf.Variable(v))) for v in ([1.0], [1.0, 2.0], [1], [3.0, 4.0])]
    out("variable_args_new_shape_dtype", r, count(f), f"log={log}")


@case
def variable_arg_assigned_inside():
    @function
    def bump(v, k):
        v.assign_add(k)
        return v.read_value()

    a, b = tf.Variable(1.0), tf.Variable(10.0)
    r = [fmt(bump(a, tf.constant(1.0))), fmt(bump(b, tf.constant(2.0))), fmt(bump(a, 3.0))]
    out("variable_arg_assigned_inside", r, fmt(a), fmt(b), count(bump))


@case
def variable_in_dict_arg():
    log = []

    @function
    def f(d):
        log.append(sorted(d))
        return d["w"] * d["x"]

    w1, w2 = tf.Variable(2.0), tf.Variable(3.0)
    r = [fmt(f({"w": w, "x": tf.constant(5.0)})) for w in (w1, w2, w1)]
    out("variable_in_dict_arg", r, count(f), f"traces={len(log)}")


# ---------------------------------------------------------------- input_signature


@case
def signature_python_number():
    @function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(x):
        return x * 2.0

    for v in (3, 2.5, np.float64(1.5), True):
        attempt("signature_python_number", lambda v=v: f(v))
    out("signature_python_number", count(f))


@case
def signature_int_spec_float_value():
    @function(input_signature=[tf.TensorSpec([2], tf.int32)])
    def f(x):
        return x * 2

    for v in ([1, 2], [1.5, 2.0], np.array([1.7, 2.2]), tf.constant([1, 2], tf.int64)):
        attempt("signature_int_spec_float_value", lambda v=v: f(v))
    out("signature_int_spec_float_value", count(f))


@case
def signature_wrong_dtype_tensor():
    @function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x + 1.0

    attempt("signature_wrong_dtype_tensor", lambda: f(tf.constant([1.0], tf.float64)))
    attempt("signature_wrong_dtype_tensor", lambda: f(tf.Variable([1.0], dtype=tf.float64)))
    out("signature_wrong_dtype_tensor", count(f))


@case
def signature_fixed_shape_mismatch():
    @function(input_signature=[tf.TensorSpec([2], tf.float32)])
    def f(x):
        return x * 2.0

    attempt("signature_fixed_shape_mismatch", lambda: f(tf.constant([1.0, 2.0])))
    attempt("signature_fixed_shape_mismatch", lambda: f(tf.constant([1.0, 2.0, 3.0])))
    attempt("signature_fixed_shape_mismatch", lambda: f(tf.constant(1.0)))
    out("signature_fixed_shape_mismatch", count(f))


@case
def signature_too_many_args():
    @function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(x):
        return x

    attempt("signature_too_many_args", lambda: f(x1, x1))
    attempt("signature_too_many_args", lambda: f())
    attempt("signature_too_many_args", lambda: f(y=x1))


@case
def signature_unknown_rank():
    log = []

    @function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def f(x):
        log.append(dims(x))
        return tf.reduce_sum(x)

    r = [fmt(f(v)) for v in (tf.constant(2.0), tf.ones([3]), tf.ones([2, 2]))]
    out("signature_unknown_rank", r, count(f), f"log={log}")


@case
def signature_nested_dict():
    spec = {"a": tf.TensorSpec([None], tf.float32), "b": tf.TensorSpec([], tf.int32)}

    @function(input_signature=[spec])
    def f(d):
        return d["a"] * tf.cast(d["b"], tf.float32)

    attempt("signature_nested_dict", lambda: f({"a": tf.ones([2]), "b": tf.constant(3)}))
    attempt("signature_nested_dict", lambda: f({"a": [1.0, 2.0, 3.0], "b": 2}))
    attempt("signature_nested_dict", lambda: f({"a": tf.ones([2])}))
    out("signature_nested_dict", count(f))


@case
def signature_keyword_call():
    @function(input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)])
    def f(x, y):
        return x - y

    a, b = tf.constant(5.0), tf.constant(1.0)
    r = [fmt(f(a, b)), fmt(f(x=a, y=b)), fmt(f(y=b, x=a)), fmt(f(a, y=b))]
    out("signature_keyword_call", r, count(f))


@case
def signature_extra_default_param():
    @function(input_signature=[tf.TensorSpec([], tf.float32)])
    def f(x, k=2.0):
        return x * k

    attempt("signature_extra_default_param", lambda: f(x1))
    attempt("signature_extra_default_param", lambda: f(x1, 2.0))
    attempt("signature_extra_default_param", lambda: f(x1, 5.0))
    out("signature_extra_default_param", count(f))


@case
def signature_get_concrete_no_args():
    log = []

    @function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        log.append(dims(x))
        return tf.reduce_sum(x, axis=1)

    cf = f.get_concrete_function()
    r = [fmt(cf(tf.ones([3, 2]))), fmt(f(tf.ones([1, 2])))]
    out("signature_get_concrete_no_args", r, count(f), f"log={log}")


@case
def signature_on_method():
    class Scaler:
        def __init__(self, k):
            self.k = k

        @function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    v = tf.constant([1.0, 2.0])
    r = [fmt(a(v)), fmt(b(v)), fmt(a(tf.ones([3])))]
    out("signature_on_method", r)


@case
def signature_list_of_specs_arg():
    @function(input_signature=[[tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)]])
    def f(pair):
        return pair[0] * pair[1]

    attempt("signature_list_of_specs_arg", lambda: f([tf.constant(2.0), tf.constant(4.0)]))
    attempt("signature_list_of_specs_arg", lambda: f([2.0, 5.0]))
    attempt("signature_list_of_specs_arg", lambda: f([tf.constant(2.0)]))
    out("signature_list_of_specs_arg", count(f))


# ---------------------------------------------------------------- nested structures


@case
def list_length_changes():
    log = []

    @function
    def f(xs):
        log.append(len(xs))
        return tf.add_n(xs)

    r = [fmt(f([x1] * k)) for k in (1, 2, 3, 2)]
    out("list_length_changes", r, count(f), f"log={log}")


@case
def kwargs_order():
    log = []

    @function
    def f(x, **kw):
        log.append(sorted(kw))
        return x + kw["a"] * kw["b"]

    a, b = tf.constant(2.0), tf.constant(3.0)
    r = [fmt(f(x1, a=a, b=b)), fmt(f(x1, b=b, a=a)), fmt(f(x1, **{"b": a, "a": b}))]
    out("kwargs_order", r, count(f), f"traces={len(log)}")


Pair = collections.namedtuple("Pair", "x y")
Pair2 = collections.namedtuple("Pair2", "x y")


@case
def namedtuple_vs_tuple_vs_other():
    log = []

    @function
    def f(p):
        log.append(type(p).__name__)
        return p[0] - p[1]

    a, b = tf.constant(5.0), tf.constant(2.0)
    r = [fmt(f(v)) for v in (Pair(a, b), (a, b), Pair2(a, b), Pair(b, a))]
    out("namedtuple_vs_tuple_vs_other", r, count(f), f"log={log}")


@dataclasses.dataclass(frozen=True)
class WithTensor:
    t: object


@case
def frozen_dataclass_holding_tensor():
    @function
    def f(d):
        return d.t * 2.0

    attempt("frozen_dataclass_holding_tensor", lambda: f(WithTensor(tf.constant(2.0))))
    attempt("frozen_dataclass_holding_tensor", lambda: f(WithTensor(tf.constant(3.0))))
    out("frozen_dataclass_holding_tensor", count(f))


@case
def python_list_of_ints_arg():
    log = []

    @function
    def f(x, ks):
        log.append(list(ks))
        return x * sum(ks)

    r = [fmt(f(x1, ks)) for ks in ([1, 2], [1, 2], [2, 1], [1, 2, 0])]
    out("python_list_of_ints_arg", r, count(f), f"log={log}")


@case
def empty_containers():
    log = []

    @function
    def f(x, extra):
        log.append(type(extra).__name__)
        return x + float(len(extra))

    r = [fmt(f(x1, e)) for e in ([], (), {}, [], ())]
    out("empty_containers", r, count(f), f"log={log}")


@case
def list_arg_mutated_inside():
    @function
    def f(x, acc):
        acc.append(len(acc))
        return x * len(acc)

    acc = []
    attempt("list_arg_mutated_inside", lambda: f(x1, acc))
    attempt("list_arg_mutated_inside", lambda: f(x1, acc))
    out("list_arg_mutated_inside", f"caller_sees={acc}", count(f))


@case
def set_arg():
    @function
    def f(x, s):
        return x * len(s)

    attempt("set_arg", lambda: f(x1, frozenset({1, 2})))
    attempt("set_arg", lambda: f(x1, {1, 2, 3}))
    out("set_arg", count(f))


@case
def nested_shapes_reduce_retracing():
    log = []

    @function(reduce_retracing=True)
    def f(d):
        log.append([dims(t) for t in d["xs"]])
        return tf.reduce_sum(d["xs"][0]) + tf.reduce_sum(d["xs"][1])

    r = [fmt(f({"xs": [tf.ones([p]), tf.ones([2])]})) for p in (1, 2, 3)]
    out("nested_shapes_reduce_retracing", r, count(f), f"log={log}")


# ---------------------------------------------------------------- calling conventions


@case
def varargs_count():
    log = []

    @function
    def f(*xs):
        log.append(len(xs))
        return tf.add_n(list(xs))

    r = [fmt(f(*[x1] * k)) for k in (1, 2, 3, 1)]
    out("varargs_count", r, count(f), f"log={log}")


@case
def kwargs_names_change():
    log = []

    @function
    def f(x, **kw):
        log.append(sorted(kw))
        return x + tf.add_n(list(kw.values()))

    r = [fmt(f(x1, a=x1)), fmt(f(x1, b=x1)), fmt(f(x1, a=x1 * 2.0)), fmt(f(x1, a=x1, b=x1))]
    out("kwargs_names_change", r, count(f), f"log={log}")


@case
def keyword_only_params():
    log = []

    @function
    def f(x, *, scale, shift=0.0):
        log.append((scale, shift))
        return x * scale + shift

    r = [fmt(f(x1, scale=2.0)), fmt(f(x1, scale=2.0, shift=0.0)), fmt(f(x1, shift=1.0, scale=2.0))]
    out("keyword_only_params", r, count(f), f"log={log}")
    attempt("keyword_only_params", lambda: f(x1, 2.0))


@case
def positional_only_params():
    log = []

    @function
    def f(x, k, /, m=1.0):
        log.append((k, m))
        return x * k + m

    r = [fmt(f(x1, 2.0)), fmt(f(x1, 2.0, 1.0)), fmt(f(x1, 2.0, m=1.0))]
    out("positional_only_params", r, count(f), f"log={log}")
    attempt("positional_only_params", lambda: f(x1, k=2.0))


@case
def wrong_arg_count():
    log = []

    @function
    def f(x, y):
        log.append("t")
        return x + y

    attempt("wrong_arg_count", lambda: f(x1))
    attempt("wrong_arg_count", lambda: f(x1, x1, x1))
    attempt("wrong_arg_count", lambda: f(x1, z=x1))
    out("wrong_arg_count", count(f), f"traces={len(log)}")


@case
def partial_python_bound():
    log = []

    def g(x, k):
        log.append(k)
        return x * k

    f2, f3 = function(functools.partial(g, k=2.0)), function(functools.partial(g, k=3.0))
    r = [fmt(f2(x1)), fmt(f3(x1)), fmt(f2(x1)), fmt(f2(x1, k=5.0))]
    out("partial_python_bound", r, count(f2), count(f3), f"log={log}")


@case
def partial_tensor_bound():
    log = []

    def g(x, y):
        log.append("t")
        return x - y

    f = function(functools.partial(g, y=tf.constant(10.0)))
    r = [fmt(f(x1)), fmt(f(tf.constant(4.0))), fmt(f(x1, y=tf.constant(1.0)))]
    out("partial_tensor_bound", r, count(f), f"traces={len(log)}")


@case
def partial_of_tf_function():
    @function
    def g(x, k):
        return x + k

    p = functools.partial(g, k=tf.constant(5.0))
    r = [fmt(p(x1)), fmt(p(tf.constant(3.0)))]
    out("partial_of_tf_function", r, count(g))


@case
def mutable_default_list():
    @function
    def f(x, acc=[]):  # noqa: B006 (the Python pitfall is the case)
        acc.append(1)
        return x * len(acc)

    r = [fmt(f(x1)) for _ in range(3)]
    r.append(fmt(f(tf.ones([2]))))
    out("mutable_default_list", r, count(f))


# ---------------------------------------------------------------- methods and objects


@case
def method_python_attribute_stale():
    class Scaler:
        def __init__(self):
            self.k = 2.0

        @function
        def __call__(self, x):
            return x * self.k

    s = Scaler()
    r = [fmt(s(x1))]
    s.k = 10.0
    r.append(fmt(s(x1)))
    r.append(fmt(s(tf.ones([2]))))
    out("method_python_attribute_stale", r)


@case
def method_two_instances_counts():
    log = []

    class M:
        def __init__(self, k):
            self.k = k

        @function
        def go(self, x):
            log.append(self.k)
            return x + self.k

    a, b = M(1.0), M(2.0)
    r = [fmt(a.go(x1)), fmt(b.go(x1)), fmt(a.go(x1)), fmt(b.go(tf.ones([2])))]
    out("method_two_instances_counts", r, count(a.go), count(b.go), f"log={log}")


@case
def staticmethod_decorated():
    log = []

    class K:
        @staticmethod
        @function
        def f(x):
            log.append("t")
            return x * 4.0

    r = [fmt(K.f(x1)), fmt(K().f(x1)), fmt(K.f(tf.constant(2.0)))]
    out("staticmethod_decorated", r, count(K.f), f"traces={len(log)}")


@case
def inherited_method():
    log = []

    class Base:
        k = 1.0

        @function
        def f(self, x):
            log.append(type(self).__name__)
            return x + self.k

    class Child(Base):
        k = 10.0

    b, c = Base(), Child()  # kept alive: TF holds a method's instance weakly
    r = [fmt(b.f(x1)), fmt(c.f(x1)), fmt(b.f(x1))]
    out("inherited_method", r, count(b.f), count(c.f), f"log={log}")


@case
def callable_object_wrapped():
    log = []

    class Poly:
        def __init__(self, a):
            self.a = a

        def __call__(self, x):
            log.append("t")
            return self.a * x * x

    p = Poly(2.0)
    f = function(p)
    r = [fmt(f(tf.constant(3.0))), fmt(f(tf.constant(4.0)))]
    out("callable_object_wrapped", r, count(f), f"traces={len(log)}")


@case
def unbound_function_of_method():
    class A:
        def __init__(self, k):
            self.k = k

        def f(self, x):
            return x * self.k

    g = function(A.f)
    a, b = A(2.0), A(3.0)
    r = [fmt(g(a, x1)), fmt(g(b, x1)), fmt(g(a, x1))]
    out("unbound_function_of_method", r, count(g))


@case
def module_method_new_shape():
    class Lin(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(2.0)

        @function
        def __call__(self, x):
            return x * self.w

    m = Lin()
    r = [fmt(m(x1)), fmt(m(tf.ones([2]))), fmt(m(tf.ones([3])))]
    m.w.assign(3.0)
    r.append(fmt(m(x1)))
    out("module_method_new_shape", r, count(m.__call__))


# ---------------------------------------------------------------- concrete functions


@case
def concrete_then_compatible_call():
    log = []

    @function
    def f(x):
        log.append("t")
        return x + 1.0

    f.get_concrete_function(tf.constant([1.0, 2.0]))
    r = [fmt(f(tf.constant([5.0, 6.0])))]
    out("concrete_then_compatible_call", r, count(f), f"traces={len(log)}")


@case
def concrete_twice_same_spec():
    @function
    def f(x):
        return x * 2.0

    a = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    b = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    out("concrete_twice_same_spec", f"same={a is b}", count(f))


@case
def concrete_structured_input_signature():
    @function
    def f(x, y, k=2):
        return x * k + y

    cf = f.get_concrete_function(
        tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([], tf.float32)
    )
    try:
        args, kwargs = cf.structured_input_signature
        shown = [(s.shape.as_list(), s.dtype.name) if hasattr(s, "dtype") else s for s in args]
        out("concrete_structured_input_signature", shown, sorted(kwargs))
    except Exception as e:
        err("concrete_structured_input_signature", e)


@case
def concrete_output_shapes_dtypes():
    @function
    def f(x):
        return {"s": tf.reduce_sum(x, axis=1), "i": tf.cast(x, tf.int32)}

    cf = f.get_concrete_function(tf.TensorSpec([None, 4], tf.float32))
    try:
        shapes = cf.output_shapes
        out("concrete_output_shapes_dtypes", {k: shapes[k].as_list() for k in sorted(shapes)})
    except Exception as e:
        err("concrete_output_shapes_dtypes", e)
    try:
        dtypes = cf.output_dtypes
        out("concrete_output_shapes_dtypes", {k: dtypes[k].name for k in sorted(dtypes)})
    except Exception as e:
        err("concrete_output_shapes_dtypes", e)
    so = cf.structured_outputs
    out(
        "concrete_output_shapes_dtypes",
        {k: [d if isinstance(d, int) else None for d in so[k].shape.as_list()] for k in sorted(so)},
        {k: so[k].dtype.name for k in sorted(so)},
    )


@case
def concrete_inputs_outputs_lists():
    v = tf.Variable(1.0)

    @function
    def f(x, y):
        return x + y + v, x * y

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32))
    out("concrete_inputs_outputs_lists", f"outputs={len(cf.outputs)}")
    try:
        out("concrete_inputs_outputs_lists", f"variables={len(cf.variables)}")
    except Exception as e:
        err("concrete_inputs_outputs_lists", e)


@case
def concrete_call_python_float():
    @function
    def f(x):
        return x * 2.0

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    attempt("concrete_call_python_float", lambda: cf(3.0))
    attempt("concrete_call_python_float", lambda: cf(np.float32(4.0)))
    attempt("concrete_call_python_float", lambda: cf(tf.constant([1.0])))


@case
def concrete_wrong_python_value():
    @function
    def f(x, k):
        return x * k

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32), 3.0)
    attempt("concrete_wrong_python_value", lambda: cf(x1))
    attempt("concrete_wrong_python_value", lambda: cf(x1, 4.0))


@case
def concrete_kwargs_spec():
    @function
    def f(x, y):
        return x - y

    cf = f.get_concrete_function(x=tf.TensorSpec([], tf.float32), y=tf.TensorSpec([], tf.float32))
    attempt("concrete_kwargs_spec", lambda: cf(tf.constant(5.0), tf.constant(2.0)))
    attempt("concrete_kwargs_spec", lambda: cf(y=tf.constant(5.0), x=tf.constant(2.0)))
    out("concrete_kwargs_spec", count(f))


@case
def concrete_of_nested_input():
    @function
    def f(d):
        return d["a"] + d["b"]

    cf = f.get_concrete_function({"a": tf.TensorSpec([2]), "b": tf.TensorSpec([2])})
    attempt("concrete_of_nested_input", lambda: cf({"a": tf.ones([2]), "b": tf.ones([2]) * 2}))
    out("concrete_of_nested_input", count(f))


# ---------------------------------------------------------------- side effects


@case
def side_effect_log_across_retraces():
    log = []

    @function
    def f(x, k):
        log.append((dims(x), k))
        return x * k

    calls = [(tf.ones([2]), 1), (tf.ones([2]), 1), (tf.ones([2]), 2), (tf.ones([3]), 2)]
    calls += [(tf.ones([3]), 1), (tf.ones([2]), 1)]
    r = [fmt(f(a, k)) for a, k in calls]
    out("side_effect_log_across_retraces", r, count(f), f"log={log}")


@case
def python_print_captured():
    @function
    def f(x, k):
        print("tracing", k)
        return x + k

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for k in (1, 1, 1, 2, 2, 1):
            f(x1, k)
    out("python_print_captured", f"lines={buf.getvalue().splitlines()}", count(f))


@case
def tf_print_in_branch():
    path = os.path.join(tempfile.mkdtemp(), "branch.txt")
    stream = "file://" + path

    @function
    def f(x):
        if x > 0:
            tf.print("pos", x, output_stream=stream)
        else:
            tf.print("neg", x, output_stream=stream)
        return x

    for v in (1.0, -2.0, 3.0):
        f(tf.constant(v))
    with open(path) as fh:
        out("tf_print_in_branch", f"lines={fh.read().splitlines()}", count(f))


@case
def tf_print_and_python_print():
    path = os.path.join(tempfile.mkdtemp(), "both.txt")
    stream = "file://" + path

    @function
    def f(x):
        print("py", x.dtype.name)
        tf.print("tf", x, output_stream=stream)
        return x

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for v in (tf.constant(1), tf.constant(2), tf.constant(1.5), tf.constant(3)):
            f(v)
    with open(path) as fh:
        out("tf_print_and_python_print", f"py={buf.getvalue().splitlines()}", fh.read().split())


GLOBAL_SCALE = 2.0
LEAKED = []


@case
def global_read_stale():
    global GLOBAL_SCALE
    GLOBAL_SCALE = 2.0

    @function
    def f(x):
        return x * GLOBAL_SCALE

    r = [fmt(f(x1))]
    GLOBAL_SCALE = 7.0
    r.append(fmt(f(x1)))
    r.append(fmt(f(tf.constant([1.0]))))
    out("global_read_stale", r, count(f))


@case
def global_assigned_from_tensor():
    global GLOBAL_SCALE
    GLOBAL_SCALE = 2.0

    @function
    def f(x):
        global GLOBAL_SCALE
        GLOBAL_SCALE = x * 3.0
        return x

    f(x1)
    g = GLOBAL_SCALE
    out("global_assigned_from_tensor", f"is_tensor={tf.is_tensor(g)}")
    try:
        g.numpy()
        out("global_assigned_from_tensor", "numpy: no error")
    except Exception as e:
        out("global_assigned_from_tensor", f"numpy raised {type(e).__name__}")
    GLOBAL_SCALE = 2.0


@case
def leaked_tensor_used_in_other_function():
    @function
    def f(x):
        LEAKED.append(x * 2.0)
        return x

    @function
    def g(y):
        return y + LEAKED[0]

    f(x1)
    attempt("leaked_tensor_used_in_other_function", lambda: g(x1))
    attempt("leaked_tensor_used_in_other_function", lambda: LEAKED[0] + 1.0)


@case
def iterator_consumed_at_trace():
    it = iter([1.0, 2.0, 3.0, 4.0])

    @function
    def f(x):
        return x + next(it)

    r = [fmt(f(x1)), fmt(f(x1)), fmt(f(tf.ones([2]))), fmt(f(x1))]
    out("iterator_consumed_at_trace", r, f"left={list(it)}")


@case
def closure_eager_tensor_rebound():
    t = tf.constant(1.0)

    @function
    def f(x):
        return x + t

    r = [fmt(f(x1))]
    t = tf.constant(5.0)
    r.append(fmt(f(x1)))
    r.append(fmt(f(tf.ones([2]))))
    out("closure_eager_tensor_rebound", r, count(f))


@case
def closure_variable_rebound():
    v = tf.Variable(1.0)

    @function
    def f(x):
        return x * v

    r = [fmt(f(tf.constant(2.0)))]
    v = tf.Variable(100.0)
    r.append(fmt(f(tf.constant(2.0))))
    v.assign(50.0)
    r.append(fmt(f(tf.constant(2.0))))
    r.append(fmt(f(tf.constant([2.0]))))
    out("closure_variable_rebound", r, count(f))


@case
def closure_variable_attr_rebound():
    class Holder:
        pass

    h = Holder()
    h.v = tf.Variable(1.0)

    @function
    def f(x):
        return x + h.v

    r = [fmt(f(x1))]
    h.v = tf.Variable(20.0)
    r.append(fmt(f(x1)))
    r.append(fmt(f(tf.ones([2]))))
    out("closure_variable_attr_rebound", r, count(f))


@case
def closure_numpy_array_mutated():
    arr = np.array([1.0, 2.0], np.float32)

    @function
    def f(x):
        return x * arr

    r = [fmt(f(x1))]
    arr[0] = 100.0
    r.append(fmt(f(x1)))
    out("closure_numpy_array_mutated", r, count(f))


@case
def closure_python_counter_nonlocal():
    calls = 0

    @function
    def f(x):
        nonlocal calls
        calls += 1
        return x + calls

    r = [fmt(f(x1)) for _ in range(3)]
    r.append(fmt(f(tf.ones([2]))))
    out("closure_python_counter_nonlocal", r, f"calls={calls}")


@case
def variable_assigned_and_python_read():
    v = tf.Variable(0.0)
    seen = []

    @function
    def f():
        v.assign_add(1.0)
        seen.append(v.shape.rank)
        return v.read_value()

    r = [fmt(f()) for _ in range(3)]
    out("variable_assigned_and_python_read", r, fmt(v), f"traces={len(seen)}", count(f))


# ---------------------------------------------------------------- variable creation


@case
def variable_created_on_later_python_arg():
    class Lazy:
        def __init__(self):
            self.v = None

        @function
        def __call__(self, x, make):
            if make and self.v is None:
                self.v = tf.Variable(10.0)
            return x if self.v is None else x + self.v

    m = Lazy()
    attempt("variable_created_on_later_python_arg", lambda: m(x1, False))
    attempt("variable_created_on_later_python_arg", lambda: m(x1, True))


@case
def variable_per_shape_cache():
    cache = {}

    @function
    def f(x):
        key = tuple(dims(x))
        if key not in cache:
            cache[key] = tf.Variable(tf.zeros_like(x))
        cache[key].assign_add(x)
        return cache[key].read_value()

    attempt("variable_per_shape_cache", lambda: f(tf.ones([2])))
    attempt("variable_per_shape_cache", lambda: f(tf.ones([2])))
    attempt("variable_per_shape_cache", lambda: f(tf.ones([3])))
    out("variable_per_shape_cache", f"vars={len(cache)}")


@case
def variable_first_call_then_python_retrace():
    state = {}

    @function
    def f(x, k):
        if "v" not in state:
            state["v"] = tf.Variable(1.0)
        state["v"].assign_add(k)
        return x * state["v"]

    for k in (1.0, 1.0, 2.0):
        attempt("variable_first_call_then_python_retrace", lambda k=k: f(x1, k))
    out("variable_first_call_then_python_retrace", fmt(state["v"]), count(f))


@case
def variable_from_argument_value():
    box = []

    @function
    def f(x):
        if not box:
            box.append(tf.Variable(x * 2.0))
        return box[0].read_value() + x

    attempt("variable_from_argument_value", lambda: f(tf.constant(1.0)))
    attempt("variable_from_argument_value", lambda: f(tf.constant(5.0)))
    out("variable_from_argument_value", fmt(box[0]) if box else "no variable")


@case
def variable_created_in_nested_function():
    holder = []

    @function
    def inner(x):
        if not holder:
            holder.append(tf.Variable(3.0))
        return x * holder[0]

    @function
    def outer(x):
        return inner(x) + 1.0

    attempt("variable_created_in_nested_function", lambda: outer(x1))
    attempt("variable_created_in_nested_function", lambda: outer(tf.constant(2.0)))
    attempt("variable_created_in_nested_function", lambda: inner(tf.constant(2.0)))


# ---------------------------------------------------------------- run_functions_eagerly


@case
def eagerly_toggle_around_traces():
    log = []

    @function
    def f(x):
        log.append("ran")
        return x * 2.0

    f(x1)
    tf.config.run_functions_eagerly(True)
    try:
        f(x1)
        f(x1)
        during = count(f)
    finally:
        tf.config.run_functions_eagerly(False)
    f(x1)
    out("eagerly_toggle_around_traces", f"python_runs={len(log)}", f"during:{during}", count(f))


@case
def eagerly_first_then_graph():
    log = []

    @function
    def f(x):
        log.append(tf.executing_eagerly())
        return x + 1.0

    tf.config.run_functions_eagerly(True)
    try:
        f(x1)
    finally:
        tf.config.run_functions_eagerly(False)
    f(x1)
    f(x1)
    out("eagerly_first_then_graph", f"log={log}", count(f))


@case
def eagerly_side_effect_values():
    calls = [0]

    @function
    def f(x):
        calls[0] += 1
        return x + calls[0]

    tf.config.run_functions_eagerly(True)
    try:
        r = [fmt(f(x1)) for _ in range(2)]
    finally:
        tf.config.run_functions_eagerly(False)
    r += [fmt(f(x1)) for _ in range(2)]
    out("eagerly_side_effect_values", r, f"calls={calls[0]}")


# ---------------------------------------------------------------- options and wrappers


@case
def jit_compile_false():
    log = []

    @function(jit_compile=False)
    def f(x):
        log.append("t")
        return tf.reduce_sum(x * x)

    r = [fmt(f(tf.constant([1.0, 2.0]))), fmt(f(tf.constant([3.0, 4.0])))]
    out("jit_compile_false", r, count(f), f"traces={len(log)}")


@case
def relax_shapes_false_explicit():
    log = []

    @function(experimental_relax_shapes=False)
    def f(x):
        log.append(dims(x))
        return tf.reduce_sum(x)

    r = [fmt(f(tf.ones([k]))) for k in (1, 2, 3)]
    out("relax_shapes_false_explicit", r, count(f), f"log={log}")


@case
def function_wrapped_twice():
    log = []

    def g(x):
        log.append("t")
        return x * 3.0

    f = function(function(g))
    r = [fmt(f(x1)), fmt(f(tf.constant(2.0)))]
    out("function_wrapped_twice", r, count(f), f"traces={len(log)}")


@case
def lambda_with_python_arg():
    f = function(lambda x, k: x * k)
    r = [fmt(f(x1, k)) for k in (2, 3, 2)]
    out("lambda_with_python_arg", r, count(f), f"name={f.__name__}")


@case
def two_functions_same_python():
    log = []

    def g(x):
        log.append("t")
        return x + 1.0

    f1, f2 = function(g), function(g)
    r = [fmt(f1(x1)), fmt(f2(x1)), fmt(f1(x1))]
    out("two_functions_same_python", r, count(f1), count(f2), f"traces={len(log)}")


@case
def recursion_depth_python_int():
    log = []

    @function
    def f(x, n):
        log.append(n)
        if n == 0:
            return x
        return f(x, n - 1) + 1.0

    attempt("recursion_depth_python_int", lambda: f(x1, 12))
    out("recursion_depth_python_int", count(f), f"traces={len(log)}")
    attempt("recursion_depth_python_int", lambda: f(x1, 12))
    out("recursion_depth_python_int", count(f), f"traces={len(log)}")


@case
def mutual_recursion_python_int():
    @function
    def even(x, n):
        return x if n == 0 else odd(x + 1.0, n - 1)

    @function
    def odd(x, n):
        return -x if n == 0 else even(x * 2.0, n - 1)

    attempt("mutual_recursion_python_int", lambda: even(x1, 5))
    out("mutual_recursion_python_int", count(even), count(odd))


@case
def nested_function_retraces():
    log = []

    @function
    def inner(x, k):
        log.append(("inner", k))
        return x * k

    @function
    def outer(x):
        log.append(("outer", dims(x)))
        return inner(x, 2) + inner(x, 3)

    r = [fmt(outer(x1)), fmt(outer(x1)), fmt(inner(x1, 2))]
    out("nested_function_retraces", r, count(outer), count(inner), f"log={log}")


# ---------------------------------------------------------------- results


@case
def returns_none_only():
    log = []

    @function
    def f(x):
        log.append("t")

    r = [f(x1), f(x1)]
    out("returns_none_only", fmt(r), count(f), f"traces={len(log)}")


@case
def returns_python_number_of_python_arg():
    @function
    def f(k):
        return k * 2

    r = [f(3), f(1.5), f(True)]
    out("returns_python_number_of_python_arg", fmt(r), [tf.is_tensor(v) for v in r], count(f))


@case
def returns_dict_mixed():
    @function
    def f(x):
        return {"t": x * 2.0, "n": 3, "f": 0.5, "b": True, "none": None}

    r = f(x1)
    out("returns_dict_mixed", fmt(r), f"tensors={sorted(k for k in r if tf.is_tensor(r[k]))}")


@case
def returns_empty_structures():
    @function
    def f(x):
        return [], (), {}

    attempt("returns_empty_structures", lambda: f(x1))


@case
def returns_argument_unchanged():
    @function
    def f(x, y):
        return y, x

    a = tf.constant([1.0, 2.0])
    r = f(a, tf.constant(3))
    out("returns_argument_unchanged", fmt(r), f"same_object={r[1] is a}")


@case
def returns_string_from_python_arg():
    @function
    def f(x, name):
        return {"name": name, "v": x}

    r = [f(x1, "a"), f(x1, "b")]
    out("returns_string_from_python_arg", fmt(r), count(f))


@case
def returns_different_structure_per_trace():
    @function
    def f(x, as_dict):
        return {"v": x} if as_dict else (x, x)

    r = [f(x1, True), f(x1, False), f(x1, True)]
    out("returns_different_structure_per_trace", fmt(r), count(f))


def main():
    global x1
    x1 = tf.constant(1.0)
    for c in CASES:
        try:
            c()
        except Exception as e:
            err(c.__name__ + " (uncaught)", e)


main()
