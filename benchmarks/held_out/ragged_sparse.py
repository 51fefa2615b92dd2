"""Held-out: tf.RaggedTensor, tf.sparse.SparseTensor and tf.IndexedSlices as TensorFlow users
use them. Ragged: tf.ragged.constant, the from_* factories (row_splits, row_lengths,
value_rowids, row_starts/limits, nested splits/lengths, uniform_row_length, from_tensor with
padding and lengths), to_tensor (default_value, shape), the row-partition properties,
elementwise ops and broadcasting, reductions over ragged axes, concat/stack, indexing and
slicing, map_flat_values, tf.map_fn with fn_output_signature, gathers, boolean_mask, ranges,
ragged <-> sparse, tf.strings.split and what follows it (ngrams, reduce_join, to_number).
Sparse: construction, to_dense, reorder, add, sparse_dense_matmul, reduce_sum/max
(output_is_sparse), slice, concat, retain, fill_empty_rows, from_dense, reshape, transpose,
split, elementwise with dense, segment_sum/mean/sqrt_n, embedding_lookup_sparse (combiners,
weights), safe_embedding_lookup_sparse, cross, cross_hashed, bincount. IndexedSlices: made by
hand, from tf.gather's gradient, scatter into a variable, an optimizer step, clip_by_global_norm.
Gradients through ragged ops (to the flat values and to dense operands) and through
sparse_dense_matmul, to_dense, reduce_sum and the embedding lookups. Ragged and sparse values
are the tf.function's arguments in nearly every case, and some cases give an input_signature of
tf.RaggedTensorSpec / tf.SparseTensorSpec (then the same function is called on more inputs).

Each case runs eagerly and inside tf.function (tracer: once per backend, C and the numpy
interpreter) and prints one line per mode: `case [mode] result` or
`case [mode] ERR TypeName: message`. A tensor reads `dtype (shape) [values]`, a ragged tensor
`ragged dtype rank=ragged_rank shape=static_shape splits=... values=flat values`, a sparse
tensor `sparse dtype shape=dense_shape idx=indices vals=values`, IndexedSlices `slices`
followed by its dense value; floats "%.5g", several results in `( ; )`, several calls joined
by ` | `. An optional second argument keeps only the cases whose names contain it."""

import sys
import zlib

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
BACKENDS = {"c": "c", "interp": "interpreter"}

f32, f64, i32, i64 = tf.float32, tf.float64, tf.int32, tf.int64
CASES = []


def case(name, *inputs, signature=None, more=()):
    """Registers `fn(*args)`. Each input is a builder `rng -> value` (tensor, ragged, sparse,
    variable...). `signature` (a function returning the specs) becomes tf.function's
    input_signature; `more` holds further input tuples the same function is called on."""

    def register(fn):
        CASES.append((name, fn, inputs, signature, more))
        return fn

    return register


# ---- input builders ------------------------------------------------------------------------
def T(values, dtype):
    return lambda rng: tf.constant(values, dtype=dtype)


def N(*shape):
    return lambda rng: tf.constant(rng.normal(size=shape).astype(np.float32))


def R(rows, dtype=None, **kw):
    return lambda rng: tf.ragged.constant(rows, dtype=dtype, **kw)


def RL(lengths, *inner):
    """A float32 ragged tensor of random values with these row lengths (inner dims uniform)."""

    def build(rng):
        values = rng.normal(size=(sum(lengths), *inner)).astype(np.float32)
        return tf.RaggedTensor.from_row_lengths(values, np.asarray(lengths, np.int64))

    return build


def S(indices, values, shape, dtype=f32):
    return lambda rng: tf.sparse.SparseTensor(
        tf.constant(indices, i64), tf.constant(values, dtype), tf.constant(shape, i64)
    )


def V(values, dtype=f32):
    return lambda rng: tf.Variable(np.asarray(values), dtype=dtype)


# ---- rendering -----------------------------------------------------------------------------
def items(a):
    a = np.asarray(a)
    if a.dtype.kind in "fc":
        return " ".join("%.5g" % x for x in a.astype(np.float64).ravel())
    if a.dtype.kind == "b":
        return " ".join(str(int(x)) for x in a.ravel())
    if a.dtype.kind in "SUO":
        return " ".join(repr(x.decode() if isinstance(x, bytes) else x) for x in a.ravel())
    return " ".join(str(x) for x in a.ravel())


def body(t):
    a = np.asarray(t.numpy() if hasattr(t, "numpy") else t)
    return f"{tuple(a.shape)} [{items(a)}]"


def static(shape):
    try:
        return str([d if isinstance(d, int) or d is None else None for d in shape.as_list()])
    except ValueError:  # unknown rank
        return "?"


def render(v):
    if isinstance(v, (tuple, list)):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    if v is None:
        return "None"
    if isinstance(v, (bool, int, float, str)):
        return f"py {v!r}"
    if isinstance(v, tf.RaggedTensor):
        splits = "/".join(str(s.numpy().tolist()) for s in v.nested_row_splits)
        return (
            f"ragged {v.dtype.name} rank={v.ragged_rank} shape={static(v.shape)} "
            f"splits={splits} split_dtype={v.row_splits.dtype.name} values={body(v.flat_values)}"
        )
    if isinstance(v, tf.sparse.SparseTensor):
        return (
            f"sparse {v.dtype.name} shape={v.dense_shape.numpy().tolist()} "
            f"idx={v.indices.numpy().tolist()} vals={body(v.values)}"
        )
    if isinstance(v, tf.IndexedSlices):
        return "slices " + render(tf.convert_to_tensor(v))
    if isinstance(v, tf.Variable):
        return "variable " + render(tf.convert_to_tensor(v))
    return f"{v.dtype.name} {body(v)}"


def compiled(mode, wrap, fn, signature):
    if wrap is None:
        return fn
    if signature is None:
        return wrap(fn)
    options = {"input_signature": signature()}
    if which == "tracer":
        options["backend"] = BACKENDS[mode]
    return tf.function(fn, **options)


def run_case(name, fn, inputs, signature, more):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    try:
        calls = [[b(rng) for b in args] for args in [inputs, *more]]
    except Exception as e:  # report it and go on
        for mode, _ in MODES:
            print(f"{name} [{mode}] inputs {failure(e)}", flush=True)
        return
    for mode, wrap in MODES:
        try:
            f = compiled(mode, wrap, fn, signature)
            text = " | ".join(render(f(*args)) for args in calls)
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


# =============================================================================================
# Ragged construction
# =============================================================================================
case("ragged_constant")(
    lambda: (
        tf.ragged.constant([[1, 2, 3], [], [4, 5]]),
        tf.ragged.constant([[1, 2], [3]], dtype=tf.float64),
        tf.ragged.constant([["a", "bc"], ["d"], []]),
    )
)
case("ragged_constant_nested")(
    lambda: (
        tf.ragged.constant([[[1.5, 2.0], [3.0]], [], [[4.0, 5.0, 6.0]]]),
        tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]], []], ragged_rank=1),
    )
)

V7 = T([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], f32)
case("from_row_splits", V7, T([0, 3, 3, 5, 7], i64))(
    lambda v, s: tf.RaggedTensor.from_row_splits(v, s)
)
case("from_row_lengths", V7, T([2, 0, 4, 1], i64))(
    lambda v, n: tf.RaggedTensor.from_row_lengths(v, n)
)
case("from_value_rowids_nrows", V7, T([0, 0, 1, 1, 1, 3, 3], i64))(
    lambda v, r: tf.RaggedTensor.from_value_rowids(v, r, nrows=6)
)
case("from_value_rowids_inferred", V7, T([1, 1, 1, 2, 4, 4, 4], i64))(
    lambda v, r: tf.RaggedTensor.from_value_rowids(v, r)
)
case("from_row_starts_limits", V7, T([0, 2, 2, 5], i64), T([2, 2, 5, 7], i64))(
    lambda v, s, e: (tf.RaggedTensor.from_row_starts(v, s), tf.RaggedTensor.from_row_limits(v, e))
)
case("from_nested_row_splits_lengths", V7, T([0, 2, 3], i64), T([0, 3, 3, 7], i64))(
    lambda v, a, b: (
        tf.RaggedTensor.from_nested_row_splits(v, [a, b]),
        tf.RaggedTensor.from_nested_row_lengths(v, [a[1:] - a[:-1], b[1:] - b[:-1]]),
    )
)
case("from_uniform_row_length", T(np.arange(12), i32))(
    lambda v: tf.RaggedTensor.from_uniform_row_length(v, 3)
)
case("from_row_splits_int32", V7, T([0, 4, 7], i32))(
    lambda v, s: tf.RaggedTensor.from_row_splits(v, s)
)
case("from_row_splits_bad_start", V7, T([1, 3, 7], i64))(
    lambda v, s: tf.RaggedTensor.from_row_splits(v, s)
)

PADDED = T([[1, 2, 0, 0], [3, 0, 0, 0], [0, 0, 0, 0], [4, 0, 5, 0]], i32)
case("from_tensor_padding", PADDED)(lambda t: tf.RaggedTensor.from_tensor(t, padding=0))
case("from_tensor_lengths", PADDED, T([2, 1, 0, 4], i64))(
    lambda t, n: tf.RaggedTensor.from_tensor(t, lengths=n)
)
case("from_tensor_plain", N(2, 3))(lambda t: tf.RaggedTensor.from_tensor(t))
case(
    "from_tensor_ragged_rank2",
    T([[[1, 2, 0], [0, 0, 0]], [[3, 0, 0], [4, 5, 6]]], i32),
)(lambda t: tf.RaggedTensor.from_tensor(t, padding=0, ragged_rank=2))

# ---- to_tensor -------------------------------------------------------------------------------
RA = R([[1.0, 2.0, 3.0], [], [4.0, 5.0]])
RB = R([[0.5, -1.0, 2.0], [], [3.0, -2.0]])
RI = R([[3, -1, 7], [], [2], [5, 5]], i32)
R3 = R([[[1.0, 2.0], [3.0]], [], [[4.0, 5.0, 6.0], [], [7.0]]])
RU = RL([2, 0, 3], 2)
case("to_tensor_default", RA)(lambda r: (r.to_tensor(), r.to_tensor(default_value=-1.0)))
case("to_tensor_shape", RA)(
    lambda r: (r.to_tensor(shape=[2, 2]), r.to_tensor(default_value=9.0, shape=[4, 5]))
)
case("to_tensor_shape_none_rows", RI)(lambda r: r.to_tensor(shape=[None, 2]))
case("to_tensor_rank2", R3)(lambda r: r.to_tensor(default_value=0.0))
case("to_tensor_inner_dims", RU)(lambda r: (r.to_tensor(), r.bounding_shape()))
case("to_tensor_strings", R([["a", "bc"], [], ["d"]]))(lambda r: r.to_tensor(default_value="?"))

# ---- properties ------------------------------------------------------------------------------
case("props_rank1", RA)(
    lambda r: (
        r.row_splits,
        r.row_lengths(),
        r.nrows(),
        r.flat_values,
        r.values,
        r.value_rowids(),
        r.row_starts(),
        r.row_limits(),
        tf.constant(r.ragged_rank),
    )
)
case("props_rank2", R3)(
    lambda r: (
        *r.nested_row_splits,
        *r.nested_row_lengths(),
        r.row_lengths(axis=2),
        r.values,
        tf.constant(r.ragged_rank),
    )
)
case("bounding_shape", R3)(
    lambda r: (r.bounding_shape(), r.bounding_shape(axis=1), r.bounding_shape(axis=[0, 2]))
)
case("static_shape_in_trace", RU)(lambda r: tf.constant(f"{static(r.shape)} {r.shape.rank}"))
case("size_rank", RA)(lambda r: (tf.size(r), tf.rank(r)))

# =============================================================================================
# Ragged elementwise and broadcasting
# =============================================================================================
case("ragged_add_mul", RA, RB)(lambda a, b: (a + b, a * b, a - 2.0, 1.0 / a))
COLUMN, HALF = T([[2.0], [3.0], [-1.0]], f32), T(0.5, f32)
case("ragged_dense_right_operand", RA, COLUMN, HALF)(lambda a, c, s: (a * c, a + s, a / c))
case("ragged_dense_left_operand", RA, COLUMN, HALF)(lambda a, c, s: (c - a, s * a, c / a))
case("ragged_inner_plus_vector", RU, T([10.0, 20.0], f32))(lambda a, v: a + v)
case("ragged_unary", RA)(
    lambda a: (
        tf.math.exp(a),
        tf.nn.relu(a - 2.5),
        tf.math.sqrt(a),
        tf.abs(-a),
        tf.cast(a, tf.int32),
        tf.math.log(a),
    )
)
case("ragged_binary_ops", RA, RB)(
    lambda a, b: (
        tf.maximum(a, b),
        tf.logical_and(a > 1.0, b > 0.0),
        tf.math.equal(a, b),
        tf.math.pow(a, 2.0),
        tf.where(a > 2.0, a, tf.zeros_like(a)),
    )
)
case("ragged_int_ops_like", RI)(
    lambda a: (a // 2, a % 3, -a, tf.ones_like(a), tf.zeros_like(a, dtype=f32))
)
case("ragged_add_mismatched_rows", RA, R([[1.0], [2.0], [3.0]]))(lambda a, b: a + b)

# =============================================================================================
# Reductions over ragged axes
# =============================================================================================
case("reduce_sum_axes", RA)(
    lambda a: (
        tf.reduce_sum(a, axis=1),
        tf.reduce_sum(a, axis=0),
        tf.reduce_sum(a),
        tf.reduce_sum(a, axis=-1),
        tf.reduce_sum(a, axis=1, keepdims=True),
    )
)
case("reduce_mean_empty_row", RA)(
    lambda a: (tf.reduce_mean(a, axis=1), tf.reduce_mean(a, axis=0), tf.reduce_mean(a))
)
case("reduce_max_min_empty_row", RA)(
    lambda a: (tf.reduce_max(a, axis=1), tf.reduce_min(a, axis=1), tf.reduce_max(a, axis=0))
)
case("reduce_max_int_empty_row", RI)(
    lambda a: (tf.reduce_max(a, axis=1), tf.reduce_min(a, axis=1), tf.reduce_sum(a, axis=0))
)
case("reduce_prod_any_all", RA)(
    lambda a: (
        tf.reduce_prod(a, axis=1),
        tf.reduce_any(a > 3.0, axis=1),
        tf.reduce_all(a > 1.0, axis=1),
    )
)
case("reduce_rank2_inner_axes", R3)(
    lambda r: (tf.reduce_sum(r, axis=2), tf.reduce_mean(r, axis=[1, 2]), tf.reduce_sum(r, axis=-1))
)
case("reduce_rank2_outer_axes", R3)(
    lambda r: (tf.reduce_sum(r, axis=1), tf.reduce_max(r, axis=0), tf.reduce_sum(r, axis=[1, 2]))
)
case("reduce_inner_uniform", RU)(
    lambda r: (tf.reduce_sum(r, axis=1), tf.reduce_max(r, axis=2), tf.reduce_mean(r, axis=1))
)

# =============================================================================================
# concat / stack, indexing and slicing, reshaping
# =============================================================================================
case("concat_axis0", RA, RB)(lambda a, b: tf.concat([a, b], axis=0))
case("concat_axis1", RA, RB)(lambda a, b: tf.concat([a, b], axis=1))
case("stack_axes", RA, RB)(lambda a, b: (tf.stack([a, b], axis=0), tf.stack([a, b], axis=1)))
case("concat_ragged_dense", RA, N(2, 2))(lambda a, d: tf.concat([a, d], axis=0))
case("index_rows_elements", RA)(lambda a: (a[0], a[-1], a[1], a[2, 1], a[0, -1]))
case("slice_rows", RA)(lambda a: (a[1:], a[::2], a[:-1]))
case("slice_columns", RA)(lambda a: (a[:, :2], a[:, 1:], a[:, -1:]))
case("index_column_with_empty_row", RA)(lambda a: a[:, 0])
case("index_rank2", R3)(lambda r: (r[0], r[2, 0], r[:, 1:], r[2][2]))
case("merge_dims", R3)(lambda r: (r.merge_dims(0, 1), r.merge_dims(1, 2), r.merge_dims(0, -1)))
case("expand_dims", RA)(lambda a: (tf.expand_dims(a, 0), tf.expand_dims(a, 1)))
case("with_flat_values", RA)(lambda a: a.with_flat_values(a.flat_values * 10.0))

# =============================================================================================
# map_flat_values, map_fn
# =============================================================================================
case("map_flat_values_unary", RA)(
    lambda a: (
        tf.ragged.map_flat_values(tf.math.square, a),
        tf.ragged.map_flat_values(lambda x: tf.cast(x > 2.0, tf.int64), a),
    )
)
case("map_flat_values_matmul", RL([2, 0, 1, 3], 3), N(3, 2))(
    lambda r, w: tf.ragged.map_flat_values(tf.matmul, r, w)
)
case("map_flat_values_two_ragged", RA, RB)(lambda a, b: tf.ragged.map_flat_values(tf.add, a, b))
case("map_fn_row_sum", RA)(lambda a: tf.map_fn(tf.reduce_sum, a, fn_output_signature=tf.float32))
case("map_fn_ragged_out", RA)(
    lambda a: tf.map_fn(
        lambda row: row * 2.0 + 1.0,
        a,
        fn_output_signature=tf.RaggedTensorSpec(shape=[None], dtype=tf.float32),
    )
)
case("map_fn_dense_to_ragged", T([3, 0, 2], i32))(
    lambda n: tf.map_fn(
        lambda k: tf.range(k),
        n,
        fn_output_signature=tf.RaggedTensorSpec(shape=[None], dtype=tf.int32),
    )
)
case("map_fn_ragged_no_signature", RA)(lambda a: tf.map_fn(tf.reduce_sum, a))

# =============================================================================================
# gathers, masks, ranges, partitions
# =============================================================================================
IDS = R([[0, 4], [], [1, 1, 3], [5]], i32)
case("gather_rows", RA, T([2, 0, 0, 1], i32))(lambda a, i: tf.gather(a, i))
case("gather_ragged_indices", N(6, 2), IDS)(
    lambda p, i: (tf.gather(p, i), tf.nn.embedding_lookup(p, i))
)
case("bag_of_words_mean", N(6, 3), IDS)(lambda p, i: tf.reduce_mean(tf.gather(p, i), axis=1))
case(
    "boolean_mask_ragged",
    N(3, 4),
    T([[True, False, True, True], [False] * 4, [False, True, False, False]], tf.bool),
)(lambda d, m: tf.ragged.boolean_mask(d, m))
case("ragged_range", T([0, 5, 2], i64), T([3, 5, 7], i64))(
    lambda s, e: (tf.ragged.range(s, e), tf.ragged.range(e), tf.ragged.range(s, e, 2))
)

# ---- ragged <-> sparse -----------------------------------------------------------------------
case("ragged_to_sparse", RA)(lambda a: a.to_sparse())
case("ragged_from_sparse", S([[0, 0], [0, 1], [2, 0]], [1.0, 2.0, 3.0], [4, 3]))(
    lambda s: tf.RaggedTensor.from_sparse(s)
)

# =============================================================================================
# tf.strings producing and consuming ragged
# =============================================================================================
SENT = T(["the quick  fox", "", "jumps over"], tf.string)
case("strings_split_whitespace", SENT)(
    lambda s: (tf.strings.split(s), tf.strings.split(s).to_tensor(default_value="<pad>"))
)
case("strings_split_sep", T(["a,b,,c", "d", ""], tf.string))(
    lambda s: (tf.strings.split(s, sep=","), tf.strings.split(s, sep=",", maxsplit=1))
)
case("strings_split_2d", T([["a b", "c"], ["", "d e f"]], tf.string))(lambda s: tf.strings.split(s))
case("strings_split_to_number_sum", T(["1 2 3", "4", "5.5 -1"], tf.string))(
    lambda s: tf.reduce_sum(tf.strings.to_number(tf.strings.split(s)), axis=1)
)
case("strings_ngrams", SENT)(lambda s: tf.strings.ngrams(tf.strings.split(s), 2, separator="_"))
case("strings_reduce_join_rows", SENT)(
    lambda s: tf.strings.reduce_join(tf.strings.split(s), axis=1, separator="|")
)
case("strings_unicode_split", T(["h\u00e9", "\u65e5\u672cx"], tf.string))(
    lambda s: tf.strings.unicode_split(s, "UTF-8")
)

# =============================================================================================
# SparseTensor
# =============================================================================================
SP = S([[0, 1], [1, 0], [1, 3], [3, 2]], [1.5, -2.0, 3.0, 4.0], [4, 4])
SP2 = S([[0, 1], [2, 2], [3, 2]], [0.5, 0.25, -4.0], [4, 4])
UNORDERED = S([[1, 0], [0, 2], [0, 1]], [1.0, 2.0, 3.0], [2, 3])
case("sparse_props", SP)(
    lambda s: (s.indices, s.values, s.dense_shape, tf.constant(static(s.shape)))
)
case("sparse_construct_inside")(
    lambda: tf.sparse.to_dense(
        tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[2, 3])
    )
)
case("sparse_to_dense", SP)(
    lambda s: (tf.sparse.to_dense(s), tf.sparse.to_dense(s, default_value=-1.0))
)
case("sparse_to_dense_unordered", UNORDERED)(lambda s: tf.sparse.to_dense(s))
case("sparse_reorder", UNORDERED)(
    lambda s: (tf.sparse.reorder(s), tf.sparse.to_dense(tf.sparse.reorder(s)))
)
case("sparse_to_dense_strings", S([[0, 1], [2, 0]], ["x", "yz"], [3, 2], tf.string))(
    lambda s: (tf.sparse.to_dense(s), tf.sparse.to_dense(s, default_value="-"))
)
case("sparse_add_sparse", SP, SP2)(lambda a, b: tf.sparse.add(a, b))
case("sparse_add_dense", SP, N(4, 4))(lambda a, d: tf.sparse.add(a, d))
case("sparse_add_threshold", SP, SP2)(lambda a, b: tf.sparse.add(a, b, threshold=1.0))
case("sparse_dense_matmul", SP, N(4, 3))(lambda s, d: tf.sparse.sparse_dense_matmul(s, d))
case("sparse_dense_matmul_adjoint", SP, N(3, 4), N(4, 2))(
    lambda s, d, e: (
        tf.sparse.sparse_dense_matmul(s, d, adjoint_b=True),
        tf.sparse.sparse_dense_matmul(s, e, adjoint_a=True),
    )
)
case("dense_sparse_matmul", N(2, 4), SP)(lambda d, s: tf.sparse.sparse_dense_matmul(d, s))
case("sparse_reduce_sum", SP)(
    lambda s: (
        tf.sparse.reduce_sum(s),
        tf.sparse.reduce_sum(s, axis=1),
        tf.sparse.reduce_sum(s, axis=0, keepdims=True),
        tf.sparse.reduce_sum(s, axis=-1),
    )
)
case("sparse_reduce_sum_sparse_out", SP)(
    lambda s: (
        tf.sparse.reduce_sum(s, axis=1, output_is_sparse=True),
        tf.sparse.reduce_sum(s, axis=0, keepdims=True, output_is_sparse=True),
    )
)
case("sparse_reduce_max", SP)(
    lambda s: (
        tf.sparse.reduce_max(s, axis=1),
        tf.sparse.reduce_max(s),
        tf.sparse.reduce_max(tf.sparse.map_values(tf.negative, s), axis=0),
    )
)
case("sparse_slice", SP)(
    lambda s: (tf.sparse.slice(s, [1, 0], [2, 3]), tf.sparse.slice(s, [2, 0], [5, 5]))
)
case("sparse_concat", SP, SP2)(
    lambda a, b: (tf.sparse.concat(0, [a, b]), tf.sparse.concat(1, [a, b]))
)
case("sparse_concat_expand", SP, S([[0, 0], [1, 1]], [7.0, 8.0], [2, 2]))(
    lambda a, b: tf.sparse.concat(1, [a, b], expand_nonconcat_dims=True)
)
case("sparse_retain", SP, T([True, False, True, True], tf.bool))(
    lambda s, m: tf.sparse.retain(s, m)
)
case("sparse_fill_empty_rows", SP)(lambda s: tf.sparse.fill_empty_rows(s, -7.0))
case(
    "sparse_from_dense",
    T([[0.0, 1.5, 0.0], [-0.0, 0.0, 2.0]], f32),
    T([[0, 3], [4, 0]], i64),
    T([["", "a"], ["b", ""]], tf.string),
)(lambda d, i, s: (tf.sparse.from_dense(d), tf.sparse.from_dense(i), tf.sparse.from_dense(s)))
case("sparse_reshape_transpose", SP)(
    lambda s: (tf.sparse.reshape(s, [2, -1]), tf.sparse.reshape(s, [16]), tf.sparse.transpose(s))
)
case("sparse_split", SP)(lambda s: tf.sparse.split(sp_input=s, num_split=2, axis=1))
case("sparse_times_dense", SP, N(4, 4), N(4, 1))(lambda s, d, c: (s * d, s * 2.0, s / d, s * c))
case("sparse_map_values", SP)(
    lambda s: (tf.sparse.map_values(tf.math.abs, s), tf.sparse.map_values(tf.add, s, 1.0))
)
case("sparse_softmax", SP)(lambda s: tf.sparse.softmax(s))

# ---- segments and embeddings ------------------------------------------------------------------
SEG_DATA, SEG_IDX, SEG_IDS = N(5, 2), T([0, 1, 1, 4, 2], i32), T([0, 0, 1, 3, 3], i32)
case("sparse_segment_sum_mean_sqrtn", SEG_DATA, SEG_IDX, SEG_IDS)(
    lambda d, i, s: (
        tf.sparse.segment_sum(d, i, s),
        tf.sparse.segment_mean(d, i, s),
        tf.sparse.segment_sqrt_n(d, i, s),
        tf.sparse.segment_sum(d, i, s, num_segments=5),
        tf.sparse.segment_mean(d, i, s, num_segments=5),
    )
)
EMB = N(6, 3)
SP_IDS = S([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2], [3, 0]], [1, 5, 0, 0, 3, 2], [4, 3], i64)
SP_W = S([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2], [3, 0]], [2.0, 0.5, 1.0, 1.0, -1.0, 3.0], [4, 3])
case("embedding_lookup_sparse_combiners", EMB, SP_IDS)(
    lambda p, ids: tuple(
        tf.nn.embedding_lookup_sparse(p, ids, None, combiner=c) for c in ["sum", "mean", "sqrtn"]
    )
)
case("embedding_lookup_sparse_weighted", EMB, SP_IDS, SP_W)(
    lambda p, ids, w: tuple(
        tf.nn.embedding_lookup_sparse(p, ids, w, combiner=c) for c in ["sum", "mean", "sqrtn"]
    )
)
SAFE_IDS = S([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], [2, -1, -1, 4, 1], [4, 2], i64)
case(
    "safe_embedding_lookup_sparse",
    EMB,
    SAFE_IDS,
    S([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], [0.5, 1.0, 2.0, 0.0, 2.0], [4, 2]),
)(
    lambda p, ids, w: (
        tf.nn.safe_embedding_lookup_sparse(p, ids),
        tf.nn.safe_embedding_lookup_sparse(p, ids, w, combiner="sqrtn"),
    )
)
case("safe_embedding_lookup_sparse_default_id", EMB, SAFE_IDS)(
    lambda p, ids: tf.nn.safe_embedding_lookup_sparse(p, ids, combiner="sum", default_id=0)
)

# ---- crosses and counts ---------------------------------------------------------------------
COLOR = S([[0, 0], [1, 0], [1, 1]], ["red", "blue", "green"], [3, 2], tf.string)
SHAPE = S([[0, 0], [1, 0], [2, 0]], ["round", "flat", "tall"], [3, 1], tf.string)
case("sparse_cross", COLOR, SHAPE, T([["x"], ["y"], ["z"]], tf.string))(
    lambda a, b, d: (tf.sparse.cross([a, b]), tf.sparse.cross([a, d], separator="#"))
)
case("sparse_cross_hashed", COLOR, SHAPE)(
    lambda a, b: tf.sparse.cross_hashed([a, b], num_buckets=10)
)
COUNTS = S([[0, 0], [0, 1], [0, 2], [2, 0], [2, 1]], [1, 3, 1, 0, 4], [3, 3], i64)
case("sparse_bincount", COUNTS)(
    lambda s: (
        tf.sparse.bincount(s),
        tf.sparse.bincount(s, axis=-1),
        tf.sparse.bincount(s, axis=-1, minlength=6, binary_output=True),
    )
)
case("bincount_ragged_axis", R([[1, 1, 3], [], [0, 2, 2, 2]], i32))(
    lambda r: (tf.math.bincount(r, axis=-1), tf.math.bincount(r, minlength=5))
)


# =============================================================================================
# IndexedSlices
# =============================================================================================
def indexed_slices(v, i):
    s = tf.IndexedSlices(v, i, dense_shape=tf.constant([5, 2], i64))
    return s.values, s.indices, s.dense_shape, tf.constant(s.dtype.name), tf.convert_to_tensor(s)


case("indexed_slices_by_hand", N(3, 2), T([4, 0, 4], i64))(indexed_slices)


def gather_grad(p, i, r):
    with tf.GradientTape() as tape:
        tape.watch(p)
        loss = tf.reduce_sum(tf.gather(p, i) * r)
    return tape.gradient(loss, p)


case("gather_grad_is_slices", N(5, 2), T([3, 1, 3], i32), N(3, 2))(gather_grad)


def scatter_sub_slices(v, init, i, r):
    v.assign(init)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.gather(v, i) * r)
    g = tape.gradient(loss, v)
    v.scatter_sub(tf.IndexedSlices(0.5 * g.values, g.indices))
    return tf.identity(v)


case("variable_scatter_sub_slices", V(np.zeros((4, 2))), N(4, 2), T([2, 0, 2], i32), N(3, 2))(
    scatter_sub_slices
)


def sgd_embedding_step(v, init, ids, r, opt):
    v.assign(init)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(v, ids) * r)
    g = tape.gradient(loss, v)
    opt.apply_gradients([(g, v)])
    return tf.identity(v)


case(
    "sgd_step_on_slices",
    V(np.zeros((4, 2))),
    N(4, 2),
    T([[1, 3], [1, 1]], i32),
    N(2, 2, 2),
    lambda rng: tf.keras.optimizers.SGD(learning_rate=0.5),
)(sgd_embedding_step)


def clip_mixed(p, w, i, r):
    with tf.GradientTape() as tape:
        tape.watch([p, w])
        loss = tf.reduce_sum(tf.matmul(tf.gather(p, i), w) * r)
    grads = tape.gradient(loss, [p, w])
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    return (*clipped, norm)


case("clip_by_global_norm_slices", N(5, 3), N(3, 2), T([0, 4, 4], i32), N(3, 2))(clip_mixed)

# =============================================================================================
# Gradients through ragged ops
# =============================================================================================
SPLITS = T([0, 3, 3, 5, 7], i64)


def grads(fn, *watched):
    """A case function returning fn's loss and its gradients with respect to the arguments
    at the positions `watched`, in one GradientTape."""

    def run(*args):
        with tf.GradientTape() as tape:
            for k in watched:
                tape.watch(args[k])
            loss = fn(*args)
        return (loss, *tape.gradient(loss, [args[k] for k in watched]))

    return run


case("grad_ragged_mul_column", N(7), SPLITS, N(4, 1))(
    grads(
        lambda v, s, w: tf.reduce_sum(tf.RaggedTensor.from_row_splits(v, s) * w),
        0,
        2,
    )
)
case("grad_ragged_reduce_mean_rows", N(7), T([0, 3, 4, 7], i64), N(3))(
    grads(
        lambda v, s, r: tf.reduce_sum(
            tf.reduce_mean(tf.RaggedTensor.from_row_splits(v, s), axis=1) * r
        ),
        0,
    )
)
case("grad_ragged_reduce_max_rows", T([1.0, 3.0, 3.0, 2.0, -1.0, 0.5, 4.0], f32), SPLITS, N(4))(
    grads(
        lambda v, s, r: tf.reduce_sum(
            tf.reduce_max(tf.RaggedTensor.from_row_splits(v, s), axis=1) * r
        ),
        0,
    )
)
case("grad_ragged_to_tensor", N(7), SPLITS, N(4, 3))(
    grads(
        lambda v, s, r: tf.reduce_sum(tf.RaggedTensor.from_row_splits(v, s).to_tensor() * r),
        0,
    )
)
case("grad_map_flat_values_matmul", N(5, 3), T([0, 2, 2, 5], i64), N(3, 2), N(3, 2))(
    grads(
        lambda v, s, w, r: tf.reduce_sum(
            tf.reduce_sum(
                tf.ragged.map_flat_values(tf.matmul, tf.RaggedTensor.from_row_splits(v, s), w),
                axis=1,
            )
            * r
        ),
        0,
        2,
    )
)
case("grad_ragged_gather_bag", N(6, 3), IDS, N(4, 3))(
    grads(lambda p, ids, r: tf.reduce_sum(tf.reduce_sum(tf.gather(p, ids), axis=1) * r), 0)
)
case("grad_from_tensor_lengths", N(3, 4), T([2, 4, 0], i64))(
    grads(lambda t, n: tf.reduce_sum(tf.RaggedTensor.from_tensor(t, lengths=n) ** 2), 0)
)


def concat_rows_loss(a, b, r):
    rows = tf.concat(
        [
            tf.RaggedTensor.from_row_lengths(a, tf.constant([1, 3], i64)),
            tf.RaggedTensor.from_row_lengths(b, tf.constant([3, 0], i64)),
        ],
        axis=1,
    )
    return tf.reduce_sum(rows.to_tensor() * r)


case("grad_ragged_concat_rows", N(4), N(3), N(2, 4))(grads(concat_rows_loss, 0, 1))

# =============================================================================================
# Gradients through sparse ops
# =============================================================================================
SP_IDX = T([[0, 1], [1, 0], [1, 3], [3, 2]], i64)
SP_VALS = T([1.5, -2.0, 3.0, 4.0], f32)


def sp(idx, vals, shape=(4, 4)):
    return tf.sparse.SparseTensor(idx, vals, tf.constant(shape, i64))


case("grad_sparse_dense_matmul", SP_IDX, SP_VALS, N(4, 3), N(4, 3))(
    grads(lambda i, v, d, r: tf.reduce_sum(tf.sparse.sparse_dense_matmul(sp(i, v), d) * r), 1, 2)
)
case("grad_sparse_to_dense", SP_IDX, SP_VALS, N(4, 4))(
    grads(lambda i, v, r: tf.reduce_sum(tf.sparse.to_dense(sp(i, v)) * r), 1)
)
case("grad_sparse_add_dense", SP_IDX, SP_VALS, N(4, 4), N(4, 4))(
    grads(lambda i, v, d, r: tf.reduce_sum(tf.sparse.add(sp(i, v), d) ** 2 * r), 1, 2)
)
case("grad_sparse_segment_mean", SEG_DATA, SEG_IDX, SEG_IDS, N(4, 2))(
    grads(lambda d, i, s, r: tf.reduce_sum(tf.sparse.segment_mean(d, i, s) * r), 0)
)
case("grad_embedding_lookup_sparse_mean", EMB, SP_IDS, N(4, 3))(
    grads(lambda p, ids, r: tf.reduce_sum(tf.nn.embedding_lookup_sparse(p, ids, None) * r), 0)
)
case("grad_embedding_lookup_sparse_weighted_sqrtn", EMB, SP_IDS, SP_W, N(4, 3))(
    grads(
        lambda p, ids, w, r: tf.reduce_sum(
            tf.nn.embedding_lookup_sparse(p, ids, w, combiner="sqrtn") * r
        ),
        0,
    )
)
case("grad_safe_embedding_lookup_sparse", EMB, SAFE_IDS, N(4, 3))(
    grads(
        lambda p, ids, r: tf.reduce_sum(tf.nn.safe_embedding_lookup_sparse(p, ids) * r),
        0,
    )
)

# =============================================================================================
# Ragged and sparse values as tf.function arguments with an input_signature
# =============================================================================================
RAGGED_SPEC = lambda: [tf.RaggedTensorSpec(shape=[None, None], dtype=f32, ragged_rank=1)]  # noqa: E731
case("fn_ragged_signature", RA, signature=RAGGED_SPEC, more=[(RB,), (RL([1, 4]),)])(
    lambda a: (tf.reduce_mean(a, axis=1), a.row_lengths(), a + 1.0)
)
case("fn_ragged_signature_static_shape", RA, signature=RAGGED_SPEC)(
    lambda a: tf.constant(f"{static(a.shape)} {a.ragged_rank}")
)
case("fn_ragged_signature_to_tensor", RA, signature=RAGGED_SPEC, more=[(RL([0, 2, 1, 0]),)])(
    lambda a: (a.to_tensor(default_value=-1.0), a.bounding_shape())
)
case(
    "fn_ragged_signature_rank2",
    R3,
    signature=lambda: [tf.RaggedTensorSpec(shape=[None, None, None], dtype=f32, ragged_rank=2)],
)(lambda r: (tf.reduce_sum(r, axis=2), r.merge_dims(1, 2)))
case("fn_ragged_signature_rank_mismatch", R3, signature=RAGGED_SPEC)(lambda a: a * 2.0)
case("fn_ragged_signature_given_dense", N(2, 3), signature=RAGGED_SPEC)(lambda a: a * 2.0)
case("fn_ragged_retrace_nrows", RA, more=[(RL([1, 2, 0, 4, 1]),), (RU,)])(
    lambda a: (tf.reduce_sum(a, axis=1), a.nrows())
)
SPARSE_SPEC = lambda: [tf.SparseTensorSpec([None, 4], f32)]  # noqa: E731
case("fn_sparse_signature", SP, signature=SPARSE_SPEC, more=[(S([[1, 1]], [5.0], [2, 4]),)])(
    lambda s: (tf.sparse.reduce_sum(s, axis=1), s * 2.0, tf.sparse.to_dense(s))
)
case("fn_sparse_signature_unknown_shape", SP, signature=lambda: [tf.SparseTensorSpec(None, f32)])(
    lambda s: (tf.sparse.to_dense(s), tf.constant(static(s.shape)))
)
case(
    "fn_sparse_signature_matmul",
    SP,
    N(4, 2),
    signature=lambda: [*SPARSE_SPEC(), tf.TensorSpec([4, None], f32)],
)(lambda s, d: tf.sparse.sparse_dense_matmul(s, d))
case("fn_sparse_returns_sparse", SP, more=[(SP2,), (UNORDERED,)])(
    lambda s: tf.sparse.reorder(tf.sparse.transpose(s))
)
case("fn_ragged_and_sparse_args", RA, SP)(
    lambda a, s: tf.reduce_sum(a, axis=1)[:3] + tf.sparse.reduce_sum(s, axis=0)[:3]
)


if __name__ == "__main__":
    print(f"{which} ragged_sparse: {len(CASES)} cases")
    for name, fn, inputs, signature, more in CASES:
        if ONLY in name:
            run_case(name, fn, inputs, signature, more)
