"""Held-out: the framework objects a TensorFlow program touches outside the math. tf.nest
(flatten, pack_sequence_as, map_structure, assert_same_structure and is_nested over dicts,
which flatten in sorted key order, namedtuples, nested lists and tuples, None, strings,
sparse and ragged composites; their errors); tf.TensorShape (as_list, rank, num_elements,
merge_with, concatenate, compatibility, most_specific_compatible_shape, unknown dims and
ranks, equality, indexing and slicing, errors); tf.TensorSpec (from_tensor, names, repr,
compatibility with arrays and specs); the DType surface (as_dtype from strings, numpy and
Python types, predicates, equality with strings and numpy types, repr); tf.Variable (its
attributes, repr and str, assign and the values assign returns, operators, indexing and
sliced assign, scatter updates, constraints, synchronization and aggregation, shapes left
open, validate_shape=False, variables of variables, callable initial values, wrong
dtypes and shapes); tf.Module (names, name scopes, the order of variables,
trainable_variables and submodules, with_name_scope); tf.name_scope; tf.identity and
tf.stop_gradient of variables; tf.constant and tf.convert_to_tensor of nested values;
the Python surface of a tensor (len, iteration, bool, __index__, float and int,
__array__ and numpy functions, repr, str and format, == and hashing, ref, is_tensor);
tf.rank/size/shape/shape_n; tf.config basics; and random numbers: tf.random.Generator
streams, the stateless ops, and the global and op seeds of the stateful ones.

A case that computes tensors runs eagerly and inside tf.function (tracer: once per
backend, C and the numpy interpreter) and prints one line per mode, `case [mode] result`;
a case about Python objects runs once, eagerly, and prints `case [static] result`; an
error shows as `ERR TypeName: message`. A tensor or array shows as `dtype (shape)
[values]`, floats to 6 significant digits; Python values show as their repr, Python
floats to 6 digits; containers keep their kind and their order (dicts in the order they
iterate); TensorShapes, DTypes and TensorSpecs by what they hold. A case with stateful
objects (variables, generators, seeds) makes them afresh for every mode. An optional
second argument keeps only the cases whose names contain it."""

import collections
import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

f32, f64, i32, i64 = tf.float32, tf.float64, tf.int32, tf.int64
ENTRIES = []
Point = collections.namedtuple("Point", "x y")
Pair = collections.namedtuple("Pair", "first second")


# ---- registration, printing -------------------------------------------------------------


def case(name, *inputs):
    """Registers `fn(*tensors)`, run in every mode; each input is a (values, dtype) pair or
    a value for tf.constant, made when the case runs."""

    def register(fn):
        ENTRIES.append((name, "case", fn, inputs))
        return fn

    return register


def stateful(name, calls=1):
    """Registers `build()`, called afresh for every mode: it makes its variables or sets
    its seeds and returns `step`, a function of no arguments, which is called `calls` times
    eagerly or as one tf.function; the results of all calls are shown."""

    def register(fn):
        ENTRIES.append((name, "stateful", fn, calls))
        return fn

    return register


def static(name):
    """Registers `fn()`, run once eagerly (Python objects' surface)."""

    def register(fn):
        ENTRIES.append((name, "static", fn, None))
        return fn

    return register


def fmt(x):
    text = f"{float(x):.6g}"
    return "0" if text == "-0" else text


def array_text(v):
    a = v.numpy() if hasattr(v, "numpy") else v
    a = np.asarray(a)
    name = v.dtype.name if hasattr(v, "dtype") and hasattr(v.dtype, "name") else a.dtype.name
    if a.dtype.kind == "c":
        items = [
            f"{fmt(z.real)}{'' if fmt(z.imag)[0] == '-' else '+'}{fmt(z.imag)}j" for z in a.ravel()
        ]
    elif a.dtype.kind == "f" or name in ("bfloat16", "float16"):
        items = [fmt(x) for x in a.astype(np.float64).ravel()]
    elif a.dtype == object or a.dtype.kind in "SU":
        items = [repr(x) for x in a.ravel().tolist()]
    else:
        items = [str(x) for x in a.ravel().tolist()]
    return f"{name} {tuple(a.shape)} [{' '.join(items)}]"


def show(v):
    """One line for a result: containers by their kind, shapes, dtypes and specs by what
    they hold, tensors and arrays as dtype, shape and values."""
    if isinstance(v, tf.dtypes.DType):
        return f"tf.{v.name}"
    if isinstance(v, tf.TensorShape):
        return f"TensorShape({None if v.rank is None else v.as_list()})"
    if isinstance(v, tf.TensorSpec):
        return f"TensorSpec({show(v.shape)}, {show(v.dtype)}, {v.name!r})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {show(x)}" for k, x in v.items()) + "}"
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        inner = ", ".join(f"{k}={show(x)}" for k, x in zip(v._fields, v))
        return f"{type(v).__name__}({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(show(x) for x in v) + ")"
    if v is None or isinstance(v, (bool, str, bytes, int, complex)):
        return repr(v)
    if isinstance(v, float):
        return fmt(v)
    if isinstance(v, tf.SparseTensor):
        return (
            f"sparse({array_text(v.indices)}; {array_text(v.values)}; {array_text(v.dense_shape)})"
        )
    if isinstance(v, tf.RaggedTensor):
        return f"ragged {v.dtype.name} {v.to_list()}"
    if hasattr(v, "numpy") or isinstance(v, (np.ndarray, np.generic)):
        return array_text(v)
    return f"<{type(v).__name__}>"


def attempt(fn):
    """`fn()` shown, or its error: for one item of a case whose items may fail apart."""
    try:
        return show(fn())
    except Exception as e:  # one item, not the case
        return failure(e)


def items(*fns):
    return " ; ".join(attempt(f) for f in fns)


def make(spec):
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], tf.dtypes.DType):
        return tf.constant(spec[0], dtype=spec[1])
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
            text = show(f(*args))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


def run_stateful(name, build, calls):
    for mode, wrap in MODES:
        try:
            step = build()
            f = step if wrap is None else wrap(step)
            text = " | ".join(show(f()) for _ in range(calls))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


def run_static(name, fn):
    try:
        text = show(fn())
    except Exception as e:  # report it and go on
        text = failure(e)
    print(f"{name} [static] {text}", flush=True)


# ---- tf.nest ----------------------------------------------------------------------------


@static("nest_flatten_dict_sorted")
def _():
    return tf.nest.flatten({"b": 1, "a": 2, "c": [3, 4], "B": 0})


@static("nest_flatten_mixed")
def _():
    return tf.nest.flatten([1, (2, [3, None]), {"y": 4, "x": (5,)}, "s", b"b", ()])


@static("nest_flatten_leaves")
def _():
    return items(
        lambda: tf.nest.flatten(5),
        lambda: tf.nest.flatten(None),
        lambda: tf.nest.flatten([]),
        lambda: tf.nest.flatten({}),
        lambda: tf.nest.flatten("abc"),
        lambda: tf.nest.flatten(np.array([1, 2])),
        lambda: tf.nest.flatten([[], [[]], {}]),
    )


@static("nest_flatten_namedtuple")
def _():
    return tf.nest.flatten([Point(1, (2, 3)), Pair(first={"k": 4, "a": 5}, second=None)])


@static("nest_flatten_ordered_dict")
def _():
    d = collections.OrderedDict([("z", 1), ("a", 2), ("m", 3)])
    return tf.nest.flatten(d), tf.nest.pack_sequence_as(d, [10, 20, 30])


@static("nest_flatten_int_keys")
def _():
    return tf.nest.flatten({3: "c", 1: "a", 2: "b", 10: "j"})


@static("nest_flatten_unsortable_keys_error")
def _():
    return tf.nest.flatten({1: "a", "b": 2})


@static("nest_flatten_tensors")
def _():
    x = tf.constant([1.0, 2.0])
    return tf.nest.flatten({"k": [x, tf.constant(3)], "a": x * 2.0})


@static("nest_pack_dict_order")
def _():
    return tf.nest.pack_sequence_as({"b": 0, "a": 0, "c": 0}, [1, 2, 3])


@static("nest_pack_namedtuple")
def _():
    return tf.nest.pack_sequence_as(Point(0, (0, [0])), ["x", "y0", "y1"])


@static("nest_pack_nested")
def _():
    structure = [{"w": None, "b": None}, (None, [None, None])]
    return tf.nest.pack_sequence_as(structure, list(range(5)))


@static("nest_pack_leaf")
def _():
    return items(
        lambda: tf.nest.pack_sequence_as(0, [7]),
        lambda: tf.nest.pack_sequence_as(None, [None]),
        lambda: tf.nest.pack_sequence_as([], []),
    )


@static("nest_pack_wrong_count_error")
def _():
    return tf.nest.pack_sequence_as([0, (0, 0)], [1, 2])


@static("nest_pack_not_a_list_error")
def _():
    return tf.nest.pack_sequence_as([0], 5)


@static("nest_map_two_structures")
def _():
    return tf.nest.map_structure(
        lambda a, b: a * b, {"a": 2, "b": (3, 4)}, {"b": (10, 100), "a": 5}
    )


@static("nest_map_namedtuple_result")
def _():
    return tf.nest.map_structure(lambda v: v + 1, Point(1, Pair(2, [3])))


@static("nest_map_none_leaf")
def _():
    return tf.nest.map_structure(lambda v: v is None, [None, 0, (None,), {"k": None}])


@static("nest_map_type_mismatch_error")
def _():
    return tf.nest.map_structure(lambda a, b: a + b, [1, 2], (3, 4))


@static("nest_map_check_types_false")
def _():
    return tf.nest.map_structure(lambda a, b: a + b, [1, 2], (3, 4), check_types=False)


@static("nest_map_length_mismatch_error")
def _():
    return tf.nest.map_structure(lambda a, b: a, [1, 2], [1, 2, 3])


@static("nest_map_dict_keys_mismatch_error")
def _():
    return tf.nest.map_structure(lambda a, b: a, {"a": 1}, {"b": 1})


@static("nest_map_no_structure_error")
def _():
    return tf.nest.map_structure(lambda: 1)


@static("nest_assert_same_structure")
def _():
    return items(
        lambda: tf.nest.assert_same_structure({"a": (1, [2])}, {"a": (3, [4])}),
        lambda: tf.nest.assert_same_structure(1, "leaf"),
        lambda: tf.nest.assert_same_structure([None], [np.zeros(3)]),
        lambda: tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False),
        lambda: tf.nest.assert_same_structure(Point(1, 2), Point("a", "b")),
    )


@static("nest_assert_list_tuple_error")
def _():
    return tf.nest.assert_same_structure([1, 2], (1, 2))


@static("nest_assert_namedtuple_tuple_error")
def _():
    return tf.nest.assert_same_structure(Point(1, 2), (1, 2))


@static("nest_assert_depth_error")
def _():
    return tf.nest.assert_same_structure([1, [2]], [1, 2])


@static("nest_is_nested")
def _():
    values = ([1], (), {}, 1, "ab", None, np.array([1, 2]), Point(1, 2), tf.constant([1]))
    return [tf.nest.is_nested(v) for v in values]


@static("nest_expand_composites_sparse")
def _():
    sp = tf.SparseTensor(indices=[[0, 1], [2, 0]], values=[5.0, 6.0], dense_shape=[3, 2])
    return len(tf.nest.flatten(sp)), tf.nest.flatten(sp, expand_composites=True)


@static("nest_expand_composites_ragged")
def _():
    rt = tf.ragged.constant([[1, 2], [], [3]])
    return len(tf.nest.flatten({"r": rt})), tf.nest.flatten(rt, expand_composites=True)


@case("nest_map_in_function", ([1.0, 2.0], f32), ([[3.0]], f32))
def _(x, y):
    s = {"b": [x, y], "a": (x + 1.0, {"z": y})}
    return tf.nest.flatten(tf.nest.map_structure(lambda t: t * 2.0, s))


@case("nest_pack_dict_output", ([1.0, 2.0], f32))
def _(x):
    return tf.nest.pack_sequence_as({"y": None, "x": [None, None]}, [x, x * 2.0, x * 3.0])


@case("nest_namedtuple_output", ([1.0, 2.0], f32))
def _(x):
    return Point(x=tf.reduce_sum(x), y=Pair(first=x * 2.0, second=tf.shape(x)))


# ---- tf.TensorShape ---------------------------------------------------------------------


@static("shape_partial")
def _():
    s = tf.TensorShape([2, None, 3])
    return (s.rank, len(s), s.as_list(), s[0], s[1], s[-1], s.num_elements())


@static("shape_partial_text")
def _():
    s = tf.TensorShape([2, None, 3])
    return str(s), repr(s), s.is_fully_defined(), str(tf.TensorShape([4]))


@static("shape_unknown_rank")
def _():
    s = tf.TensorShape(None)
    return (s.rank, s.num_elements(), s.is_fully_defined(), str(s), repr(s), s[1:], s[0])


@static("shape_unknown_rank_as_list_error")
def _():
    return tf.TensorShape(None).as_list()


@static("shape_unknown_rank_len_error")
def _():
    return len(tf.TensorShape(None))


@static("shape_scalar")
def _():
    s = tf.TensorShape([])
    return (s.rank, s.num_elements(), s.as_list(), str(s), repr(s), s.is_fully_defined())


@static("shape_equality")
def _():
    a = tf.TensorShape([1, 2])
    return [
        a == [1, 2],
        a == (1, 2),
        a == tf.TensorShape([1, 2]),
        a != [2, 1],
        a == [1, None],
        tf.TensorShape([None]) == tf.TensorShape([None]),
        tf.TensorShape(None) == tf.TensorShape(None),
        tf.TensorShape([1]) == [1, 2],
        a == None,  # noqa: E711 (what a user writes)
    ]


@static("shape_merge_with")
def _():
    a = tf.TensorShape([2, None, None])
    return (
        a.merge_with(tf.TensorShape([None, 3, None])),
        a.merge_with(tf.TensorShape(None)),
        tf.TensorShape(None).merge_with([4]),
        a.merge_with([2, 5, 6]),
    )


@static("shape_merge_incompatible_error")
def _():
    return tf.TensorShape([2, 3]).merge_with([2, 4])


@static("shape_merge_rank_error")
def _():
    return tf.TensorShape([2]).merge_with([2, 3])


@static("shape_concatenate")
def _():
    return (
        tf.TensorShape([2, None]).concatenate([4]),
        tf.TensorShape([1]).concatenate(tf.TensorShape(None)),
        tf.TensorShape([]).concatenate([None]),
        tf.TensorShape([1]) + tf.TensorShape([2, 3]),
        tf.TensorShape([1]) + [5],
        [5] + tf.TensorShape([1]),
    )


@static("shape_is_compatible_with")
def _():
    s = tf.TensorShape([None, 3])
    return [
        s.is_compatible_with([5, 3]),
        s.is_compatible_with([5, 4]),
        s.is_compatible_with([5, 3, 1]),
        s.is_compatible_with(tf.TensorShape(None)),
        tf.TensorShape(None).is_compatible_with([1, 2, 3]),
        s.is_compatible_with(tf.TensorShape([None, None])),
        tf.TensorShape([]).is_compatible_with([1]),
        tf.TensorShape([]).is_compatible_with([]),
    ]


@static("shape_most_specific_compatible")
def _():
    a = tf.TensorShape([2, 3, None])
    return (
        a.most_specific_compatible_shape([2, 4, 5]),
        a.most_specific_compatible_shape([2, 3]),
        a.most_specific_compatible_shape(tf.TensorShape(None)),
        a.most_specific_compatible_shape([2, 3, 7]),
    )


@static("shape_slicing")
def _():
    s = tf.TensorShape([4, None, 6, 7])
    return (s[1:], s[:-1], s[::2], s[-2:], s[5:], isinstance(s[1:], tf.TensorShape))


@static("shape_index_error")
def _():
    return tf.TensorShape([1, 2])[5]


@static("shape_with_rank")
def _():
    s = tf.TensorShape([None, 3])
    return (
        s.with_rank(2),
        tf.TensorShape(None).with_rank(3),
        s.with_rank_at_least(1),
        s.with_rank_at_most(4),
    )


@static("shape_with_rank_error")
def _():
    return tf.TensorShape([None, 3]).with_rank(3)


@static("shape_assert_compatible_error")
def _():
    return tf.TensorShape([None, 3]).assert_is_compatible_with([2, 4])


@static("shape_assert_fully_defined_error")
def _():
    return tf.TensorShape([None, 3]).assert_is_fully_defined()


@static("shape_of_tensor")
def _():
    t = tf.zeros([2, 3, 1])
    return (
        t.shape,
        t.shape == (2, 3, 1),
        isinstance(t.shape, tf.TensorShape),
        t.shape[0],
        type(t.shape[0]).__name__,
        tuple(t.shape),
        list(t.shape[1:]),
        t.get_shape() == t.shape,
        t.shape.num_elements(),
    )


@static("shape_constructors")
def _():
    return items(
        lambda: tf.TensorShape(5),
        lambda: tf.TensorShape((2, None)),
        lambda: tf.TensorShape(tf.TensorShape([3])),
        lambda: tf.TensorShape([np.int64(2), 3]),
        lambda: [type(d).__name__ for d in tf.TensorShape([np.int64(2), 3])],
        lambda: tf.TensorShape([-1]),
        lambda: tf.TensorShape([2.5]),
    )


@static("shape_bool_and_iteration")
def _():
    return (
        bool(tf.TensorShape([])),
        bool(tf.TensorShape(None)),
        bool(tf.TensorShape([0])),
        [d for d in tf.TensorShape([3, None])],
        3 in tf.TensorShape([3, 4]),
    )


@static("shape_hash_and_zero")
def _():
    return items(
        lambda: {tf.TensorShape([1, 2]): "a"}[tf.TensorShape([1, 2])],
        lambda: tf.TensorShape([3, 0]).num_elements(),
        lambda: tf.TensorShape([None, 0]).num_elements(),
    )


# ---- tf.TensorSpec ------------------------------------------------------------------------


@static("spec_attributes")
def _():
    s = tf.TensorSpec([None, 3], tf.float32, name="x")
    return s.shape, s.dtype, s.name, repr(s)


@static("spec_defaults")
def _():
    return (
        tf.TensorSpec([2]).dtype,
        tf.TensorSpec([2]).name,
        repr(tf.TensorSpec([2])),
        tf.TensorSpec(None).shape,
        repr(tf.TensorSpec(shape=(), dtype=tf.int64)),
        tf.TensorSpec([1], "int64").dtype,
        tf.TensorSpec([1], np.float64).dtype,
    )


@static("spec_from_tensor")
def _():
    t = tf.constant([[1, 2, 3]])
    return (
        repr(tf.TensorSpec.from_tensor(t)),
        repr(tf.TensorSpec.from_tensor(t, name="t")),
        tf.TensorSpec.from_tensor(tf.constant("s")),
    )


@static("spec_is_compatible_more")
def _():
    s = tf.TensorSpec([None, 3], tf.float32)
    return items(
        lambda: s.is_compatible_with(tf.TensorSpec(None, tf.float32)),
        lambda: tf.TensorSpec(None, tf.float32).is_compatible_with(s),
        lambda: s.is_compatible_with(np.zeros([1, 3], np.float32)),
        lambda: s.is_compatible_with(np.zeros([1, 3])),
        lambda: s.is_compatible_with(tf.TensorSpec([2, 3], tf.float32, name="other")),
        lambda: tf.TensorSpec([], tf.int32).is_compatible_with(tf.constant(1)),
    )


@static("spec_equality_names")
def _():
    a = tf.TensorSpec([2], tf.float32)
    return (
        a == tf.TensorSpec([2], tf.float32, name="n"),
        a != tf.TensorSpec([2], tf.int32),
        a == tf.TensorSpec((2,), "float32"),
        tf.TensorSpec(None) == tf.TensorSpec(None),
    )


@static("spec_bad_dtype_error")
def _():
    return tf.TensorSpec([1], "floaty")


# ---- DType --------------------------------------------------------------------------------


@static("dtype_as_dtype_strings")
def _():
    names = ("float32", "float", "double", "half", "int32", "int64", "bool", "string")
    names += ("complex64", "uint8", "bfloat16", "int16")
    return [attempt(lambda n=n: tf.as_dtype(n)) for n in names]


@static("dtype_as_dtype_numpy")
def _():
    kinds = (np.float32, np.dtype("float64"), np.int16, np.bool_, np.uint32, np.complex128)
    kinds += (np.dtype("<i8"), np.object_, np.str_, np.bytes_)
    return [attempt(lambda k=k: tf.as_dtype(k)) for k in kinds]


@static("dtype_as_dtype_python")
def _():
    return [attempt(lambda k=k: tf.as_dtype(k)) for k in (float, bool, int, complex, str, bytes)]


@static("dtype_as_dtype_errors")
def _():
    return items(
        lambda: tf.as_dtype("floaty"),
        lambda: tf.as_dtype(None),
        lambda: tf.as_dtype(2.5),
        lambda: tf.as_dtype(tf.float16),
    )


@static("dtype_repr_str")
def _():
    return (
        repr(tf.float32),
        str(tf.float32),
        tf.float32.name,
        repr(tf.string),
        str(tf.bool),
        f"{tf.int64}",
        repr(tf.as_dtype("double")),
    )


@static("dtype_equality")
def _():
    return [
        tf.float32 == tf.float32,
        tf.float32 == tf.dtypes.float32,
        tf.float32 == "float32",
        tf.float32 == np.float32,
        tf.float32 == np.dtype("float32"),
        tf.float32 == tf.float64,
        tf.float32 != "float64",
        tf.float32 == None,  # noqa: E711 (what a user writes)
        tf.float32 == "not a type",
        tf.constant(1.0).dtype == tf.float32,
        tf.constant(1).dtype in (tf.int32, tf.int64),
    ]


@static("dtype_hash_dict")
def _():
    table = {tf.float32: "f", tf.int32: "i"}
    return (
        table[tf.as_dtype("float32")],
        table[tf.constant(1).dtype],
        len({tf.float32, tf.as_dtype(np.float32), tf.dtypes.float32}),
        isinstance(tf.float32, tf.dtypes.DType),
    )


@static("dtype_base_and_numpy")
def _():
    out = []
    for d in (tf.float32, tf.int8, tf.bool, tf.string, tf.complex128, tf.bfloat16):
        out.append((d.base_dtype, np.dtype(d.as_numpy_dtype).name, d.as_numpy_dtype is np.float32))
    return out


@static("dtype_predicates")
def _():
    keys = ("is_floating", "is_integer", "is_complex", "is_bool", "is_unsigned", "is_quantized")
    out = []
    for d in (tf.bool, tf.string, tf.int64, tf.uint16, tf.bfloat16, tf.complex128, tf.float32):
        out.append(d.name + ":" + "".join(attempt(lambda d=d, k=k: getattr(d, k))[0] for k in keys))
    return out


@static("dtype_limits_and_sizes")
def _():
    return items(
        lambda: tf.int32.limits,
        lambda: tf.uint8.limits,
        lambda: (tf.int16.min, tf.int16.max),
        lambda: (tf.float32.min, tf.float32.max),
        lambda: tf.bool.size,
        lambda: tf.int64.size,
        lambda: tf.complex128.size,
    )


@static("dtype_is_compatible_with")
def _():
    return items(
        lambda: tf.float32.is_compatible_with(tf.float32),
        lambda: tf.float32.is_compatible_with(tf.float64),
        lambda: tf.float32.is_compatible_with("float32"),
        lambda: tf.int32.is_compatible_with(np.int32),
    )


@case("dtype_by_name_in_ops", ([1.7, -2.2], f32))
def _(x):
    return (
        tf.cast(x, "int32"),
        tf.zeros([2], "int64"),
        tf.ones(2, dtype=np.float16),
        tf.cast(x, np.float64),
    )


# ---- tf.Variable: the Python surface -----------------------------------------------------


@static("var_repr_scalar")
def _():
    return repr(tf.Variable(1.0, name="v"))


@static("var_repr_vector_default_name")
def _():
    return repr(tf.Variable([1, 2, 3]))


@static("var_repr_matrix")
def _():
    return repr(tf.Variable([[1.5, 2.0], [3.0, -4.25]], name="m"))


@static("var_str_bool")
def _():
    return str(tf.Variable([True, False], name="b"))


@static("var_repr_of_assign_result")
def _():
    v = tf.Variable(1.0, name="v")
    a = repr(v.assign(2.5))
    b = repr(v.assign_add(1.0))
    return a, b, v.numpy()


@static("var_assign_read_value_false")
def _():
    v = tf.Variable(1.0, name="v")
    r = v.assign(3.0, read_value=False)
    return r is None, v.numpy()


@static("var_eager_assign_result_is_live")
def _():
    v = tf.Variable(1.0)
    a = v.assign(2.0)
    v.assign(5.0)
    return a.numpy(), v.numpy()


@static("var_attributes")
def _():
    v = tf.Variable([[1.0, 2.0]], name="weights")
    return (
        v.name,
        v.shape,
        v.dtype,
        v.trainable,
        isinstance(v, tf.Variable),
        isinstance(v, tf.Tensor),
        tf.is_tensor(v),
        v.numpy(),
        v.shape.as_list(),
        v.get_shape(),
    )


@static("var_len_ndim")
def _():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    return items(
        lambda: len(v), lambda: v.ndim, lambda: v.shape.rank, lambda: len(tf.Variable(1.0))
    )


@static("var_numpy_and_python")
def _():
    v = tf.Variable(2.5)
    return (
        type(v.numpy()).__name__,
        v.numpy(),
        float(v),
        int(tf.Variable(3)),
        np.asarray(tf.Variable([1, 2])) + 1,
        isinstance(v.read_value(), tf.Tensor),
        isinstance(v.value(), tf.Tensor),
        isinstance(v.read_value(), tf.Variable),
    )


@static("var_trainable_flags")
def _():
    return (
        tf.Variable(1.0, trainable=False).trainable,
        tf.Variable(1).trainable,
        tf.Variable(1.0).trainable,
    )


@static("var_dtype_arg")
def _():
    return items(
        lambda: tf.Variable(1, dtype=tf.float32).dtype,
        lambda: tf.Variable(np.float64(1)).dtype,
        lambda: tf.Variable([1.0], dtype=tf.float16).dtype,
        lambda: tf.Variable(True).dtype,
        lambda: tf.Variable("s").numpy(),
        lambda: tf.Variable(1.5, dtype=tf.int32),
    )


@static("var_of_variable")
def _():
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(a)
    b.assign_add([10.0, 10.0])
    return a.numpy(), b.numpy(), b.name, b.dtype


@static("var_initial_value_callable")
def _():
    v = tf.Variable(lambda: tf.ones([2, 2]) * 3.0, name="c")
    w = tf.Variable(lambda: tf.zeros([3]), dtype=tf.float32)
    return v.numpy(), v.shape, w.numpy(), v.name


@static("var_shape_unknown")
def _():
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape(None))
    before = v.shape
    v.assign([1.0, 2.0, 3.0, 4.0])
    return before, v.shape, v.numpy(), repr(v)


@static("var_shape_partial")
def _():
    v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])
    before = v.shape
    v.assign(tf.ones([4, 3]))
    return before, v.shape, tf.shape(v), v.numpy().sum()


@static("var_shape_partial_mismatch_error")
def _():
    v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])
    return v.assign(tf.ones([4, 2]))


@static("var_validate_shape_false")
def _():
    v = tf.Variable([1, 2], validate_shape=False)
    return items(lambda: v.shape, lambda: v.assign([1, 2, 3]), lambda: v.numpy())


@static("var_assign_wrong_shape_error")
def _():
    return tf.Variable([1.0, 2.0]).assign([1.0, 2.0, 3.0])


@static("var_assign_wrong_dtype_error")
def _():
    return tf.Variable(1.0).assign(tf.constant(1))


@static("var_assign_python_int_to_float")
def _():
    v = tf.Variable(1.0)
    v.assign(2)
    v.assign_add(1)
    return v.numpy(), v.dtype


@static("var_assign_float_to_int_error")
def _():
    return tf.Variable(1).assign(1.5)


@static("var_assign_add_wrong_shape_error")
def _():
    return tf.Variable([1.0, 2.0]).assign_add([1.0, 2.0, 3.0])


@static("var_constraint")
def _():
    v = tf.Variable([5.0, -5.0], constraint=lambda x: tf.clip_by_value(x, -1.0, 1.0))
    v.assign([3.0, -3.0])
    after_assign = v.numpy()
    applied = v.constraint(v)
    return v.constraint is not None, after_assign, applied, v.numpy()


@static("var_constraint_not_callable_error")
def _():
    return tf.Variable(1.0, constraint=3.0)


@static("var_sync_aggregation")
def _():
    v = tf.Variable(
        0.0,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )
    w = tf.Variable(0.0, aggregation=tf.VariableAggregation.MEAN)
    return (
        v.synchronization.name,
        v.aggregation.name,
        v.trainable,
        w.synchronization.name,
        w.aggregation.name,
        w.trainable,
        v.synchronization == tf.VariableSynchronization.ON_READ,
    )


@static("var_on_read_trainable_true")
def _():
    v = tf.Variable(0.0, trainable=True, synchronization=tf.VariableSynchronization.ON_READ)
    return v.trainable, v.synchronization.name, v.aggregation.name


@static("var_names_in_name_scope")
def _():
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            a = tf.Variable(1.0, name="w")
        b = tf.Variable(1.0)
    c = tf.Variable(1.0, name="x")
    d = tf.Variable(2.0, name="x")
    return a.name, b.name, c.name, d.name


@static("var_hash_error")
def _():
    return hash(tf.Variable(1.0))


@static("var_ref_as_key")
def _():
    a, b = tf.Variable(1.0), tf.Variable(1.0)
    d = {a.ref(): "a", b.ref(): "b"}
    return (
        d[a.ref()],
        d[b.ref()],
        a.ref() == a.ref(),
        a.ref() == b.ref(),
        a.ref().deref() is a,
        len(d),
    )


@static("var_bool")
def _():
    return items(
        lambda: bool(tf.Variable(0.0)),
        lambda: bool(tf.Variable(2)),
        lambda: "yes" if tf.Variable(True) else "no",
        lambda: bool(tf.Variable([1.0, 2.0])),
    )


@static("var_identity_stop_gradient_eager")
def _():
    v = tf.Variable([1.0, 2.0])
    i = tf.identity(v)
    s = tf.stop_gradient(v)
    v.assign([5.0, 6.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.stop_gradient(v) * v) + tf.reduce_sum(tf.identity(v) * 3.0)
    g = tape.gradient(y, v)
    return isinstance(i, tf.Variable), isinstance(i, tf.Tensor), i, s, g


# ---- tf.Variable: in every mode ----------------------------------------------------------


@stateful("var_assign_values_returned")
def _():
    v = tf.Variable([1.0, 2.0])

    def step():
        a = v.assign([3.0, 4.0])
        a = tf.identity(a)
        b = tf.identity(v.assign_add([1.0, 1.0]))
        c = tf.identity(v.assign_sub([0.5, 0.5]))
        return a, b, c, v.read_value()

    return step


@stateful("var_assign_add_int_counter", calls=3)
def _():
    v = tf.Variable(0)

    def step():
        v.assign_add(2)
        return v.read_value()

    return step


@stateful("var_read_write_order")
def _():
    v = tf.Variable(1.0)

    def step():
        x = v * 2.0
        v.assign(10.0)
        y = v * 2.0
        v.assign_add(1.0)
        return x, y, v.read_value()

    return step


@stateful("var_arith_operators")
def _():
    v = tf.Variable([1.0, -2.0, 3.5])

    def step():
        return (v + 1.0, 2.0 * v, v - v, -v, v * v, v / 2.0, v // 2.0, v % 2.0, v**2, abs(v))

    return step


@stateful("var_reflected_operators")
def _():
    v = tf.Variable([1.0, 2.0, 4.0])

    def step():
        return (1.0 - v, 2.0 / v, 2.0**v, 3.0 // v, [1.0, 1.0, 1.0] + v)

    return step


@stateful("var_compare_operators")
def _():
    v = tf.Variable([1.0, 2.0, 3.0])
    w = tf.Variable([3.0, 2.0, 1.0])

    def step():
        return (v > 1.5, v <= 2.0, v == w, v != w, v >= w, v < [2.0, 2.0, 2.0])

    return step


@stateful("var_int_operators")
def _():
    v = tf.Variable([7, -7, 5])

    def step():
        return (v // 2, v % 3, v * 2, v & 3, v | 8, ~v, v / 2)

    return step


@stateful("var_matmul_operator")
def _():
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    x = tf.Variable([[1.0], [-1.0]])

    def step():
        return (w @ x, tf.matmul(w, w, transpose_b=True), tf.constant([[2.0, 0.0]]) @ w)

    return step


@stateful("var_getitem")
def _():
    v = tf.Variable([[1, 2, 3], [4, 5, 6]])

    def step():
        return (v[1], v[:, 0], v[::-1, 1:], v[0, -1], v[tf.newaxis, 1], v[..., 2])

    return step


@stateful("var_sliced_assign")
def _():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    m = tf.Variable([[1, 2], [3, 4]])

    def step():
        v[1:3].assign([20.0, 30.0])
        v[0].assign(-1.0)
        m[:, 1].assign([0, 0])
        return v.read_value(), m.read_value()

    return step


@stateful("var_scatter_nd")
def _():
    v = tf.Variable([1, 2, 3, 4, 5])

    def step():
        v.scatter_nd_update([[1], [3]], [20, 40])
        a = v.read_value()
        v.scatter_nd_add([[0], [0], [4]], [100, 100, 1])
        b = v.read_value()
        v.scatter_nd_sub([[2]], [3])
        return a, b, v.read_value()

    return step


@stateful("var_scatter_indexed_slices")
def _():
    v = tf.Variable([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])

    def step():
        v.scatter_update(tf.IndexedSlices(tf.constant([[9.0, 9.0]]), tf.constant([2])))
        v.scatter_add(tf.IndexedSlices(tf.constant([[1.0, 1.0], [1.0, 1.0]]), tf.constant([0, 0])))
        v.scatter_sub(tf.IndexedSlices(tf.constant([[0.5, 0.5]]), tf.constant([1])))
        return v.read_value()

    return step


@stateful("var_identity_snapshot")
def _():
    v = tf.Variable([1.0, 2.0])

    def step():
        i = tf.identity(v)
        s = tf.stop_gradient(v)
        v.assign_add([1.0, 1.0])
        return i, s, v.read_value(), tf.convert_to_tensor(v)

    return step


@stateful("var_stop_gradient_tape")
def _():
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable(3.0)

    def step():
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.stop_gradient(v) * v) + tf.stop_gradient(w) * w
            z = tf.reduce_sum(tf.identity(v) * w)
        return tape.gradient([y, z], [v, w])

    return step


@stateful("var_assign_wrong_shape_in_mode")
def _():
    v = tf.Variable([1.0, 2.0])

    def step():
        v.assign([1.0, 2.0, 3.0])
        return v.read_value()

    return step


@stateful("var_unknown_shape_grows", calls=2)
def _():
    v = tf.Variable([1.0, 2.0], shape=tf.TensorShape(None))

    def step():
        v.assign(tf.concat([v, v + 10.0], 0))
        return v.read_value(), tf.shape(v)

    return step


# ---- tf.Module and tf.name_scope -----------------------------------------------------------


class Dense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.fill([n_in, n_out], 0.5), name="w")
        self.b = tf.Variable(tf.zeros([n_out]), name="b")

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


class MLP(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.layers = [Dense(2, 3, name="first"), Dense(3, 1, name="second")]
            self.scale = tf.Variable(2.0, name="scale", trainable=False)
            self.extras = {"z": tf.Variable(0.0, name="z"), "a": tf.Variable(1.0, name="a")}
            self._hidden = tf.Variable(5.0, name="hidden")
            self.alias = self.scale

    @tf.Module.with_name_scope
    def __call__(self, x):
        for layer in self.layers:
            x = tf.nn.relu(layer(x))
        return x * self.scale


class LazyDense(tf.Module):
    def __init__(self, units, name=None):
        super().__init__(name=name)
        self.units = units
        self.w = None

    @tf.Module.with_name_scope
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones([x.shape[-1], self.units]), name="w")
        return tf.matmul(x, self.w)


class HTTPRequestModel(tf.Module):
    pass


class MyModel2(tf.Module):
    pass


def names(variables):
    return [v.name for v in variables]


@static("module_names")
def _():
    return (
        tf.Module().name,
        MLP().name,
        HTTPRequestModel().name,
        MyModel2().name,
        Dense(1, 1, name="custom").name,
        tf.Module(name="m1").name_scope.name,
    )


@static("module_bad_name_error")
def _():
    return tf.Module(name="bad name")


@static("module_variables_order")
def _():
    return names(MLP(name="mlp").variables)


@static("module_trainable_variables_order")
def _():
    return names(MLP(name="mlp").trainable_variables)


@static("module_submodules")
def _():
    m = MLP(name="mlp")
    return [s.name for s in m.submodules], [s.name_scope.name for s in m.submodules]


@static("module_nested_containers")
def _():
    class Holder(tf.Module):
        def __init__(self):
            super().__init__(name="holder")
            self.blocks = [{"k": tf.Variable(1.0, name="k0"), "b": tf.Variable(1.0, name="b0")}]
            self.pair = (tf.Variable(1.0, name="p0"), [tf.Variable(1.0, name="p1")])
            self.Big = tf.Variable(1.0, name="upper")
            self.child = Dense(1, 1, name="child")
            self.count = 3

    return names(Holder().variables)


@static("module_with_name_scope_lazy")
def _():
    m = LazyDense(2, name="lazy")
    y = m(tf.ones([1, 3]))
    return m.w.name, y, names(m.trainable_variables)


@static("module_call_values")
def _():
    m = MLP(name="mlp")
    return m(tf.constant([[1.0, 2.0], [-1.0, -2.0]]))


@case("module_call_in_modes", ([[1.0, 2.0], [0.5, -3.0]], f32))
def _(x):
    return MODULE(x)


MODULE = MLP(name="shared")


@static("scope_strings")
def _():
    with tf.name_scope("a") as s1:
        with tf.name_scope("b") as s2:
            inner = s2
    return s1, inner, tf.name_scope("x").name


@static("scope_odd_name")
def _():
    with tf.name_scope("bad name!") as s:
        return s


@static("scope_tensor_names_in_function")
def _():
    seen = []

    @tf.function
    def f(x):
        with tf.name_scope("block"):
            y = tf.identity(x, name="out")
            z = tf.identity(y, name="out")
        seen.extend([y.name, z.name])
        return z

    f(tf.constant(1.0))
    return seen


@static("scope_eager_tensor_name_error")
def _():
    return tf.constant(1.0).name


# ---- tf.constant and tf.convert_to_tensor of nested values ------------------------------


@static("const_list_of_tensors")
def _():
    t = tf.constant(1.0)
    return items(
        lambda: tf.constant([t, tf.constant(2.0)]),
        lambda: tf.convert_to_tensor([t, 2.0]),
        lambda: tf.convert_to_tensor([[t], [t * 3.0]]),
        lambda: tf.convert_to_tensor((tf.constant([1, 2]), tf.constant([3, 4]))),
    )


@static("const_numpy_scalars_in_lists")
def _():
    return items(
        lambda: tf.constant([np.float32(1.5), np.float32(2)]),
        lambda: tf.constant([np.int64(1), 2]),
        lambda: tf.convert_to_tensor(np.float64(2.0)),
        lambda: tf.constant(np.bool_(True)),
        lambda: tf.constant([np.zeros(2, np.float32), np.ones(2, np.float32)]),
        lambda: tf.constant([np.zeros(2), np.ones(2)]),
    )


@static("const_nested_bools_strings")
def _():
    return items(
        lambda: tf.constant([[True, False], [False, True]]),
        lambda: tf.constant([["a", "bc"], ["", "d"]]),
        lambda: tf.constant([b"x", "y"]),
        lambda: tf.constant([(1, 2), [3, 4]]),
        lambda: tf.constant((1.0, 2)),
    )


@static("const_ragged_error")
def _():
    return tf.constant([[1, 2], [3]])


@static("const_shape_arg")
def _():
    return items(
        lambda: tf.constant(7, shape=[2, 3]),
        lambda: tf.constant([1, 2, 3, 4], shape=[2, 2]),
        lambda: tf.constant(1.5, shape=()),
        lambda: tf.constant([5.0], shape=[3]),
    )


@static("const_shape_mismatch_error")
def _():
    return tf.constant([1, 2, 3], shape=[2, 2])


@static("const_none_error")
def _():
    return items(lambda: tf.constant(None), lambda: tf.convert_to_tensor([1.0, None]))


@static("const_empty")
def _():
    return items(
        lambda: tf.constant([]),
        lambda: tf.constant([[]]),
        lambda: tf.constant([], dtype=tf.int32),
        lambda: tf.constant(np.zeros((0, 3))),
        lambda: tf.constant(range(3)),
    )


@static("convert_passthrough")
def _():
    t = tf.constant(1.0)
    v = tf.Variable([1, 2])
    c = tf.convert_to_tensor(v)
    return (
        tf.convert_to_tensor(t) is t,
        tf.convert_to_tensor(t, dtype=tf.float32) is t,
        c,
        isinstance(c, tf.Variable),
        isinstance(c, tf.Tensor),
    )


# ---- the Python surface of a tensor -------------------------------------------------------


@static("tensor_properties")
def _():
    t = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    return (t.shape, t.dtype, t.ndim, len(t), t.shape.rank, t.get_shape(), t.shape[-1])


@static("tensor_len_scalar_error")
def _():
    return len(tf.constant(3.0))


@static("tensor_iteration")
def _():
    t = tf.constant([[1, 2], [3, 4], [5, 6]])
    rows = [row for row in t]
    a, b = tf.constant([7.0, 8.0])
    return rows, a, b, [int(x) for x in tf.range(3)]


@static("tensor_iterate_scalar_error")
def _():
    return list(tf.constant(1))


@static("tensor_bool")
def _():
    return items(
        lambda: bool(tf.constant(True)),
        lambda: bool(tf.constant(0.0)),
        lambda: bool(tf.constant([7])),
        lambda: bool(tf.constant([[0]])),
        lambda: "yes" if tf.constant(3) > 2 else "no",
        lambda: not tf.constant(False),
    )


@static("tensor_bool_ambiguous_error")
def _():
    return bool(tf.constant([1, 2]))


@static("tensor_index")
def _():
    return items(
        lambda: [10, 20, 30][tf.constant(1)],
        lambda: list(range(tf.constant(3))),
        lambda: "abcd"[tf.constant(2, tf.int64)],
        lambda: np.arange(5)[tf.constant(3)],
        lambda: [1, 2][tf.constant(1.0)],
        lambda: [1, 2, 3][tf.constant(0) : tf.constant(2)],
    )


@static("tensor_float_int")
def _():
    return items(
        lambda: float(tf.constant(2.5)),
        lambda: int(tf.constant(2.7)),
        lambda: int(tf.constant(-2.7)),
        lambda: float(tf.constant(3)),
        lambda: int(tf.constant(True)),
        lambda: complex(tf.constant(1 + 2j)),
        lambda: float(tf.constant([1.0, 2.0])),
    )


@static("tensor_array_protocol")
def _():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return items(
        lambda: np.asarray(t),
        lambda: np.array(t, dtype=np.float64),
        lambda: isinstance(np.add(t, 1.0), np.ndarray),
        lambda: np.sum(t),
        lambda: np.mean(t, axis=0),
        lambda: np.concatenate([t, t]).shape,
        lambda: isinstance(np.square(t), np.ndarray),
    )


@static("tensor_numpy_method")
def _():
    s = tf.constant(1.5).numpy()
    b = tf.constant(True).numpy()
    text = tf.constant("ab").numpy()
    vec = tf.constant(["a", "b"]).numpy()
    m = tf.constant([1, 2]).numpy()
    return (
        isinstance(s, np.generic),
        np.asarray(s).dtype.name,
        isinstance(b, np.generic),
        np.asarray(b).dtype.name,
        text,
        vec.dtype.name,
        vec.tolist(),
        isinstance(m, np.ndarray),
        m.dtype.name,
    )


@static("tensor_repr_int_vector")
def _():
    t = tf.constant([1, 2, 3])
    return repr(t), str(t)


@static("tensor_repr_float_scalar")
def _():
    t = tf.constant(1.5)
    return repr(t), str(t), repr(tf.constant(0.1, tf.float64)), str(tf.constant(-2.0))


@static("tensor_repr_float_matrix")
def _():
    t = tf.constant([[1.0, 2.5], [-3.0, 4.0]])
    return repr(t), str(t)


@static("tensor_repr_bool_and_strings")
def _():
    return (
        repr(tf.constant([True, False])),
        str(tf.constant("h\u00e9llo")),
        repr(tf.constant(["a", "bc"])),
        str(tf.constant([b"\x00\xff"])),
    )


@static("tensor_repr_other_dtypes")
def _():
    return (
        repr(tf.constant([1, 2], tf.int64)),
        str(tf.constant([0.5, 1.0], tf.float16)),
        repr(tf.constant([1 + 2j], tf.complex64)),
        repr(tf.constant([0, 255], tf.uint8)),
        str(tf.constant(7, tf.int8)),
    )


@static("tensor_repr_empty_and_3d")
def _():
    return (
        repr(tf.constant([], tf.float32)),
        str(tf.zeros([2, 0])),
        str(tf.reshape(tf.range(8), [2, 2, 2])),
    )


@static("tensor_repr_precision")
def _():
    return (
        str(tf.constant([0.1, 1e-8, 123456.7])),
        str(tf.constant([float("nan"), float("inf"), -float("inf"), 1.0])),
        repr(tf.constant(1 / 3)),
        str(tf.constant([1e10, 1.0])),
    )


@static("tensor_repr_long_summarized")
def _():
    return str(tf.range(1500)), repr(tf.range(1001.0))[:160]


@static("tensor_format")
def _():
    s = tf.constant(1.23456)
    return items(
        lambda: f"{s:.2f}",
        lambda: f"{tf.constant([1.0, 2.0])}",
        lambda: "%.3f" % tf.constant(2.5),
        lambda: "{:>6}".format(tf.constant(3)),
        lambda: f"{s}",
        lambda: "%d" % tf.constant(7),
    )


@static("tensor_eq_elementwise")
def _():
    t = tf.constant([1, 2, 3])
    return (t == tf.constant([1, 0, 3]), t != [1, 0, 3], t == 2, 2 == t)


@static("tensor_eq_none_and_others")
def _():
    t = tf.constant([1, 2])
    return items(
        lambda: t == None,  # noqa: E711 (what a user writes)
        lambda: t != None,  # noqa: E711
        lambda: t == tf.constant([1, 2, 3]),
        lambda: t != tf.constant([1, 2, 3]),
        lambda: t == "a",
        lambda: t == tf.constant([1.0, 2.0]),
    )


@static("tensor_in_list")
def _():
    return items(
        lambda: tf.constant(1) in [tf.constant(2), tf.constant(1)],
        lambda: tf.constant(3) in [tf.constant(2), tf.constant(1)],
        lambda: tf.constant([1, 2]) in [tf.constant([3, 4])],
    )


@static("tensor_hash_error")
def _():
    return hash(tf.constant(1))


@static("tensor_dict_key_error")
def _():
    return {tf.constant([1.0]): "v"}


@static("tensor_setitem_error")
def _():
    t = tf.constant([1, 2, 3])
    t[0] = 5
    return t


@static("tensor_ref")
def _():
    t, u = tf.constant([1.0]), tf.constant([1.0])
    d = {t.ref(): "t", u.ref(): "u"}
    return (
        d[t.ref()],
        t.ref() == t.ref(),
        t.ref() == u.ref(),
        t.ref().deref() is t,
        hash(t.ref()) == hash(t.ref()),
        len({t.ref(), t.ref(), u.ref()}),
    )


@static("tensor_is_tensor")
def _():
    values = (
        tf.constant(1),
        np.ones(1),
        1.0,
        [tf.constant(1)],
        tf.Variable(1.0),
        tf.SparseTensor([[0]], [1.0], [2]),
        tf.ragged.constant([[1], []]),
    )
    return [tf.is_tensor(v) for v in values]


@static("tensor_isinstance")
def _():
    return (
        isinstance(tf.constant(1), tf.Tensor),
        isinstance(np.ones(1), tf.Tensor),
        isinstance(tf.Variable(1.0), tf.Tensor),
        isinstance(tf.SparseTensor([[0]], [1.0], [2]), tf.Tensor),
        isinstance(tf.ragged.constant([[1], []]), tf.Tensor),
        isinstance(tf.constant(1), (np.ndarray, np.generic)),
    )


@case("rank_size_shape", ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], f32))
def _(x):
    return (
        tf.rank(x),
        tf.size(x),
        tf.shape(x),
        tf.size(x, out_type=tf.int64),
        tf.shape(x, out_type=tf.int64),
    )


@case("rank_size_shape_scalar", 3.0)
def _(x):
    return tf.rank(x), tf.size(x), tf.shape(x)


@case("rank_size_shape_empty", (np.zeros([0, 3]), f32))
def _(x):
    return tf.rank(x), tf.size(x), tf.shape(x), tf.reduce_prod(tf.shape(x))


@case("shape_n", ([[1.0, 2.0]], f32), ([1.0, 2.0, 3.0], f32))
def _(x, y):
    return tf.shape_n([x, y]), tf.shape_n([x, y], out_type=tf.int64)


@case("shape_of_strings", (["a", "bb", "ccc"], tf.string))
def _(s):
    return tf.shape(s), tf.size(s), tf.rank(s)


@case("static_shape_values", ([[1.0, 2.0, 3.0]], f32))
def _(x):
    return tf.constant(x.shape.as_list()), tf.constant(
        [x.shape.rank, x.shape[-1], len(x.shape), x.ndim]
    )


@case("eq_in_modes", ([1.0, 2.0, 3.0], f32), ([1.0, 0.0, 3.0], f32))
def _(x, y):
    return x == y, x != y, x == 2.0, 2.0 != x


@case("identity_keeps_dtype_shape", ([[1, 2]], tf.int64))
def _(x):
    y = tf.identity(x)
    return y, tf.stop_gradient(x), tf.constant(y.shape.as_list()), tf.constant(y.dtype.name)


# ---- tf.config ------------------------------------------------------------------------


@static("config_cpu_devices")
def _():
    cpus = tf.config.list_physical_devices("CPU")
    logical = tf.config.list_logical_devices("CPU")
    return len(cpus), cpus[0].device_type, cpus[0].name, len(logical), logical[0].name


@static("config_run_functions_eagerly_executing")
def _():
    @tf.function
    def f():
        return tf.constant(tf.executing_eagerly())

    before = (tf.config.functions_run_eagerly(), f())
    tf.config.run_functions_eagerly(True)
    try:
        during = (tf.config.functions_run_eagerly(), f())
    finally:
        tf.config.run_functions_eagerly(False)
    return before, during, (tf.config.functions_run_eagerly(), f(), tf.executing_eagerly())


# ---- random: Generator streams ----------------------------------------------------------


@stateful("gen_from_seed_normal", calls=2)
def _():
    g = tf.random.Generator.from_seed(1234)
    return lambda: g.normal([4])


@stateful("gen_uniform_kinds")
def _():
    g = tf.random.Generator.from_seed(7)

    def step():
        return (
            g.uniform([3]),
            g.uniform([3], minval=-1.0, maxval=1.0, dtype=tf.float64),
            g.uniform([5], minval=0, maxval=10, dtype=tf.int32),
            g.uniform([2], maxval=100, dtype=tf.int64),
        )

    return step


@stateful("gen_truncated_normal_f64", calls=2)
def _():
    g = tf.random.Generator.from_seed(99)
    return lambda: (g.truncated_normal([5], stddev=2.0), g.normal([2], dtype=tf.float64))


@stateful("gen_state_advance", calls=2)
def _():
    g = tf.random.Generator.from_seed(5)

    def step():
        x = g.normal([3])
        return x, tf.identity(g.state)

    return step


@static("gen_algorithm_and_state")
def _():
    g = tf.random.Generator.from_seed(11)
    return g.algorithm, g.state


@static("gen_split")
def _():
    g = tf.random.Generator.from_seed(3)
    a, b = g.split(2)
    return a.normal([2]), b.normal([2]), g.normal([2])


@static("gen_from_state")
def _():
    g = tf.random.Generator.from_state([0, 0, 42], alg="philox")
    return g.uniform([3]), g.state


@static("gen_from_seed_int_dtype_no_maxval_error")
def _():
    return tf.random.Generator.from_seed(1).uniform([2], dtype=tf.int32)


# ---- random: stateless ops --------------------------------------------------------------


@case("stateless_uniform", ([1, 2], i32))
def _(s):
    return tf.random.stateless_uniform([4], seed=s), tf.random.stateless_uniform([2], seed=s)


@case("stateless_uniform_int", ([3, 4], i64))
def _(s):
    return (
        tf.random.stateless_uniform([6], seed=s, minval=-5, maxval=5, dtype=tf.int32),
        tf.random.stateless_uniform([3], seed=s, minval=0, maxval=2**40, dtype=tf.int64),
    )


@case("stateless_uniform_int_no_maxval_error", ([3, 4], i64))
def _(s):
    return tf.random.stateless_uniform([6], seed=s, dtype=tf.int32)


@case("stateless_uniform_f64_range", ([7, 0], i32))
def _(s):
    return tf.random.stateless_uniform([3], seed=s, minval=2.0, maxval=3.0, dtype=tf.float64)


@case("stateless_normal", ([5, 6], i32))
def _(s):
    return tf.random.stateless_normal([2, 3], seed=s, mean=1.0, stddev=0.5)


@case("stateless_truncated_normal", ([8, 9], i64))
def _(s):
    return tf.random.stateless_truncated_normal([6], seed=s)


@case("stateless_categorical", ([1, 1], i32))
def _(s):
    logits = tf.math.log([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    return tf.random.stateless_categorical(logits, 8, seed=s)


@case("stateless_python_seed")
def _():
    return tf.random.stateless_normal([3], seed=(7, 8)), tf.random.stateless_uniform([2], (7, 8))


@case("stateless_split_fold_in", ([10, 20], i64))
def _(s):
    return (
        tf.random.experimental.stateless_split(s, num=3),
        tf.random.experimental.stateless_fold_in(s, 7),
    )


@case("stateless_poisson", ([2, 3], i32))
def _(s):
    return tf.random.stateless_poisson([6], seed=s, lam=3.0)


@case("stateless_bad_seed_shape_error", ([1, 2, 3], i32))
def _(s):
    return tf.random.stateless_uniform([2], seed=s)


# ---- random: global and op seeds ----------------------------------------------------------


@stateful("seed_op_seed_uniform", calls=2)
def _():
    tf.random.set_seed(1)
    return lambda: tf.random.uniform([3], seed=7)


@stateful("seed_global_only_normal", calls=2)
def _():
    tf.random.set_seed(42)
    return lambda: tf.random.normal([3])


@stateful("seed_uniform_int_range")
def _():
    tf.random.set_seed(3)

    def step():
        return (
            tf.random.uniform([8], minval=-3, maxval=3, dtype=tf.int32, seed=11),
            tf.random.uniform([4], minval=0, maxval=2**40, dtype=tf.int64, seed=12),
        )

    return step


@stateful("seed_shuffle", calls=2)
def _():
    tf.random.set_seed(3)
    x = tf.range(10)
    return lambda: tf.random.shuffle(x, seed=4)


@stateful("seed_normal_truncated_categorical")
def _():
    tf.random.set_seed(9)

    def step():
        return (
            tf.random.normal([3], dtype=tf.float64, seed=2),
            tf.random.truncated_normal([3], seed=3),
            tf.random.categorical(tf.math.log([[0.5, 0.3, 0.2]]), 6, seed=4),
        )

    return step


@static("seed_reset_repeats")
def _():
    tf.random.set_seed(5)
    a = tf.random.uniform([2], seed=1)
    b = tf.random.uniform([2], seed=1)
    tf.random.set_seed(5)
    c = tf.random.uniform([2], seed=1)
    return a, b, c, bool(tf.reduce_all(a == c)), bool(tf.reduce_all(a == b))


@static("seed_uniform_int_no_maxval_error")
def _():
    return tf.random.uniform([2], dtype=tf.int32)


if __name__ == "__main__":
    print(f"{which} api_surface: {len(ENTRIES)} cases")
    for name, kind, fn, extra in ENTRIES:
        if ONLY not in name:
            continue
        if kind == "case":
            run_case(name, fn, extra)
        elif kind == "stateful":
            run_stateful(name, fn, extra)
        else:
            run_static(name, fn)
