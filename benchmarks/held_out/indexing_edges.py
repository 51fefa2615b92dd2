"""Held-out: tensor indexing and shape manipulation, values and GradientTape gradients.
Python `[]` indexing with ints, negative ints, slices with negative and None steps, steps
larger than the axis, out-of-range bounds (clamped), `...` and `tf.newaxis` on rank 1-4
tensors; indices and slice bounds that are traced scalar tensors; boolean masks;
tf.strided_slice with each of its masks; tf.slice with size -1; reshape with -1 and empty
dimensions; expand_dims/squeeze with negative axes; broadcast_to, tile, gather (negative
axis, batch_dims), gather_nd (batch_dims), the tensor_scatter_nd family and scatter_nd with
duplicate indices; unstack/stack, split with a -1 size, concat of empty tensors, transpose
with conj, reverse, roll, where with broadcasting; and the errors for indices out of range.

Each case returns its value(s) and the gradient of a distinctly weighted sum of them with
respect to its floating inputs, runs eagerly and inside tf.function (tracer: C and the
numpy interpreter), and prints `case [mode] values` or `case [mode] ERR TypeName: message`.
An optional second argument keeps only the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
CASES = []


def f64(a):
    return np.asarray(a, np.float64)


def i32(a):
    return np.asarray(a, np.int32)


def ar(*shape):
    """float64 0, 1, 2, ... of `shape`."""
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


def weighted_sum(y):
    if isinstance(y, (tuple, list)):
        return tf.add_n([weighted_sum(t) for t in y])
    if not y.dtype.is_floating:
        return tf.zeros([], tf.float64)
    n = tf.size(y)
    k = tf.cast(tf.range(n), y.dtype)
    w = tf.reshape(1.0 + 0.5 * tf.sin(1.7 * k + 0.3), tf.shape(y))
    return tf.reduce_sum(y * w)


def vg(name, *inputs):
    """Registers the value of `fn(*tensors)` and the gradient of its weighted sum with
    respect to every floating input."""
    wrt = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind in "fc"]

    def register(fn):
        def run(*args):
            xs = [args[i] for i in wrt]
            with tf.GradientTape() as tape:
                tape.watch(xs)
                y = fn(*args)
                loss = weighted_sum(y)
            gs = tape.gradient(loss, xs) if xs else []
            gs = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in gs]
            return y, tuple(gs)

        CASES.append((name, run, inputs))
        return fn

    return register


def val(name, *inputs):
    def register(fn):
        CASES.append((name, fn, inputs))
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


# ---- python indexing with constants --------------------------------------------------------
V = ar(6)
M = ar(3, 4)
T3 = ar(2, 3, 4)
T4 = ar(2, 3, 2, 2)
vg("int_index", V)(lambda x: x[2])
vg("neg_int_index", V)(lambda x: x[-1])
vg("neg_int_index_rank2", M)(lambda x: x[-2])
vg("two_ints", M)(lambda x: x[1, -1])
vg("slice_basic", V)(lambda x: x[1:4])
vg("slice_neg_bounds", V)(lambda x: x[-4:-1])
vg("slice_neg_step", V)(lambda x: x[::-1])
vg("slice_neg_step_bounds", V)(lambda x: x[4:1:-2])
vg("slice_neg_step_none_stop", V)(lambda x: x[3::-1])
vg("slice_step_gt_size", V)(lambda x: x[::10])
vg("slice_neg_step_gt_size", V)(lambda x: x[::-10])
vg("slice_out_of_range", V)(lambda x: x[-100:100])
vg("slice_out_of_range_hi", V)(lambda x: x[4:100:3])
vg("slice_empty", V)(lambda x: x[4:2])
vg("slice_empty_neg_step", V)(lambda x: x[2:4:-1])
vg("slice_none_step", V)(lambda x: x[1:5:None])
vg("ellipsis_last", T3)(lambda x: x[..., 1])
vg("ellipsis_first", T3)(lambda x: x[1, ...])
vg("ellipsis_middle", T4)(lambda x: x[1, ..., 0])
vg("ellipsis_only", M)(lambda x: x[...])
vg("newaxis_front", M)(lambda x: x[tf.newaxis])
vg("none_middle", M)(lambda x: x[:, None, 1:3])
vg("newaxis_ellipsis", T3)(lambda x: x[..., tf.newaxis, ::2])
vg("mixed_rank3", T3)(lambda x: x[-1, ::-2, 1:])
vg("mixed_rank4", T4)(lambda x: x[:, 1::-1, tf.newaxis, -1, ::-1])
vg("rank2_neg_steps", M)(lambda x: x[::-2, -1:0:-2])
vg("two_newaxis", V)(lambda x: x[None, 2:, None])
vg("index_scalar_ellipsis", f64(3.0))(lambda x: x[...])
vg("index_scalar_newaxis", f64(3.0))(lambda x: x[tf.newaxis])

# ---- indices and bounds that are traced tensors ---------------------------------------------
vg("tensor_int_index", V, i32(2))(lambda x, i: x[i])
vg("tensor_neg_int_index", V, i32(-2))(lambda x, i: x[i])
vg("tensor_index_rank2", M, i32(1))(lambda x, i: x[i, i + 1])
vg("tensor_slice_bounds", V, i32(1))(lambda x, i: x[i : i + 2])
vg("tensor_slice_bounds_rank2", M, i32(2))(lambda x, i: x[:, i - 1 : i + 1])
vg("tensor_slice_neg_start", V, i32(-3))(lambda x, i: x[i:])
vg("tensor_slice_clamped", V, i32(4))(lambda x, i: x[i : i + 10])
vg("tensor_slice_step", V, i32(2))(lambda x, s: x[::s])
vg("tensor_slice_neg_step", V, i32(-2))(lambda x, s: x[::s])
vg("tensor_index_ellipsis", T3, i32(-1))(lambda x, i: x[..., i])

# ---- boolean masks ----------------------------------------------------------------------------
vg("bool_mask_rank1", V, np.array([True, False, True, True, False, False]))(lambda x, m: x[m])
vg("bool_mask_rows", M, np.array([False, True, True]))(lambda x, m: x[m])
vg("bool_mask_full", M, M % 3 == 1)(lambda x, m: x[m])
vg("boolean_mask_axis1", T3, np.array([True, False, True]))(
    lambda x, m: tf.boolean_mask(x, m, axis=1)
)
vg("bool_mask_none_true", V, np.zeros(6, bool))(lambda x, m: x[m])

# ---- strided_slice with masks --------------------------------------------------------------
vg("ss_begin_end_mask", M)(
    lambda x: tf.strided_slice(x, [1, 1], [2, 3], [1, 1], begin_mask=1, end_mask=2)
)
vg("ss_ellipsis_mask", T3)(lambda x: tf.strided_slice(x, [0, 1], [0, 3], [1, 1], ellipsis_mask=1))
vg("ss_new_axis_mask", M)(
    lambda x: tf.strided_slice(x, [0, 0, 1], [0, 2, 3], [1, 1, 1], new_axis_mask=1)
)
vg("ss_shrink_axis_mask", T3)(
    lambda x: tf.strided_slice(x, [1, 0, -1], [2, 3, 0], [1, 1, 1], shrink_axis_mask=5)
)
vg("ss_neg_strides", M)(lambda x: tf.strided_slice(x, [-1, -1], [0, 0], [-1, -2], end_mask=1))
vg("ss_all_masks", T4)(
    lambda x: tf.strided_slice(
        x,
        [1, 0, 0, 0],
        [2, 0, 0, 2],
        [1, 1, 1, -1],
        begin_mask=8,
        ellipsis_mask=2,
        new_axis_mask=4,
        shrink_axis_mask=1,
    )
)
vg("ss_tensor_begin", M, i32([1, 0]), i32([3, 4]))(
    lambda x, b, e: tf.strided_slice(x, b, e, [1, 2])
)

# ---- slice, reshape, expand_dims, squeeze, broadcast, tile ------------------------------------
vg("slice_size_neg1", M)(lambda x: tf.slice(x, [1, 1], [-1, 2]))
vg("slice_tensor_begin", M, i32([1, 2]))(lambda x, b: tf.slice(x, b, [-1, -1]))
vg("reshape_neg1", T3)(lambda x: tf.reshape(x, [-1, 6]))
vg("reshape_neg1_middle", T3)(lambda x: tf.reshape(x, [4, -1, 3]))
vg("reshape_zero_dim", np.zeros((0, 3)))(lambda x: tf.reshape(x, [3, 0, 5]))
vg("reshape_zero_neg1", np.zeros((0, 3)))(lambda x: tf.reshape(x, [0, -1, 3]))
vg("reshape_to_scalar", f64([5.0]))(lambda x: tf.reshape(x, []))
vg("reshape_tensor_shape", T3, i32([3, -1]))(lambda x, s: tf.reshape(x, s))
vg("expand_dims_neg", M)(lambda x: tf.expand_dims(x, -1))
vg("expand_dims_neg2", M)(lambda x: tf.expand_dims(x, -2))
vg("expand_dims_neg_max", M)(lambda x: tf.expand_dims(x, -3))
vg("squeeze_neg_axis", ar(1, 3, 1))(lambda x: tf.squeeze(x, axis=-1))
vg("squeeze_neg_axes", ar(1, 3, 1))(lambda x: tf.squeeze(x, axis=[-3, -1]))
vg("squeeze_all", ar(1, 3, 1, 1))(lambda x: tf.squeeze(x))
vg("squeeze_not_one", ar(2, 3))(lambda x: tf.squeeze(x, axis=0))
vg("broadcast_to", f64([[1.0], [2.0]]))(lambda x: tf.broadcast_to(x, [3, 2, 4]))
vg("broadcast_to_zero", f64([1.0, 2.0]))(lambda x: tf.broadcast_to(x, [0, 2]))
vg("tile_rank2", ar(2, 2))(lambda x: tf.tile(x, [2, 3]))
vg("tile_zero", ar(2, 2))(lambda x: tf.tile(x, [0, 2]))
vg("tile_tensor_multiples", ar(2, 1), i32([1, 3]))(lambda x, m: tf.tile(x, m))

# ---- gather, gather_nd -----------------------------------------------------------------------
vg("gather_dup", V, i32([4, 1, 4, 0]))(lambda x, i: tf.gather(x, i))
vg("gather_neg_axis", T3, i32([[3, 0], [1, 1]]))(lambda x, i: tf.gather(x, i, axis=-1))
vg("gather_batch_dims", T3, i32([[0, 2], [1, 1]]))(
    lambda x, i: tf.gather(x, i, axis=1, batch_dims=1)
)
vg("gather_batch_dims_neg", T3, i32([[0, 0], [2, 1]]))(
    lambda x, i: tf.gather(x, i, axis=-1, batch_dims=-1)
)
vg("gather_batch_dims2", T3, i32([[[3], [0], [1]], [[2], [2], [0]]]))(
    lambda x, i: tf.gather(x, i, batch_dims=2)
)
vg("gather_scalar_index", M, i32(2))(lambda x, i: tf.gather(x, i, axis=1))
vg("gather_oob", V, i32([1, 6]))(lambda x, i: tf.gather(x, i))
vg("gather_neg_index", V, i32([1, -1]))(lambda x, i: tf.gather(x, i))
vg("gather_nd_full", M, i32([[2, 3], [0, 1], [2, 3]]))(lambda x, i: tf.gather_nd(x, i))
vg("gather_nd_rows", T3, i32([[1], [0], [1]]))(lambda x, i: tf.gather_nd(x, i))
vg("gather_nd_batch_dims", T3, i32([[[2], [0]], [[1], [1]]]))(
    lambda x, i: tf.gather_nd(x, i, batch_dims=1)
)
vg("gather_nd_oob", M, i32([[3, 0]]))(lambda x, i: tf.gather_nd(x, i))

# ---- scatters ------------------------------------------------------------------------------
SCAT_I = i32([[1], [3], [1]])
SCAT_U = f64([10.0, 20.0, 30.0])
vg("tsnd_update", V, SCAT_I[:2], SCAT_U[:2])(lambda x, i, u: tf.tensor_scatter_nd_update(x, i, u))
vg("tsnd_add_dup", V, SCAT_I, SCAT_U)(lambda x, i, u: tf.tensor_scatter_nd_add(x, i, u))
vg("tsnd_sub_dup", V, SCAT_I, SCAT_U)(lambda x, i, u: tf.tensor_scatter_nd_sub(x, i, u))
vg("tsnd_max_dup", V, SCAT_I, f64([-1.0, 20.0, 0.5]))(
    lambda x, i, u: tf.tensor_scatter_nd_max(x, i, u)
)
vg("tsnd_min_dup", V, SCAT_I, f64([5.0, 20.0, 0.5]))(
    lambda x, i, u: tf.tensor_scatter_nd_min(x, i, u)
)
vg("tsnd_update_rows", M, i32([[2], [0]]), ar(2, 4) + 100)(
    lambda x, i, u: tf.tensor_scatter_nd_update(x, i, u)
)
vg("scatter_nd_dup", i32([[0, 1], [2, 2], [0, 1]]), f64([1.0, 2.0, 4.0]))(
    lambda i, u: tf.scatter_nd(i, u, [3, 3])
)
vg("scatter_nd_slices", i32([[1], [1]]), ar(2, 3))(lambda i, u: tf.scatter_nd(i, u, [2, 3]))
vg("tsnd_update_oob", V, i32([[6]]), f64([1.0]))(
    lambda x, i, u: tf.tensor_scatter_nd_update(x, i, u)
)

# ---- stack, unstack, split, concat -----------------------------------------------------------
vg("unstack_neg_axis", T3)(lambda x: tuple(tf.unstack(x, axis=-1)))
vg("unstack_axis0", M)(lambda x: tuple(tf.unstack(x)))
vg("stack_neg_axis", V, V + 10)(lambda a, b: tf.stack([a, b], axis=-1))
vg("stack_neg2_axis", M, M * 2)(lambda a, b: tf.stack([a, b], axis=-2))
vg("split_neg1_size", V)(lambda x: tuple(tf.split(x, [2, -1, 1])))
vg("split_neg1_axis_neg", M)(lambda x: tuple(tf.split(x, [-1, 1], axis=-1)))
vg("split_num", M)(lambda x: tuple(tf.split(x, 2, axis=1)))
vg("split_zero_size", V)(lambda x: tuple(tf.split(x, [0, 6])))
vg("concat_empty", np.zeros((0, 3)), M[:2, :3], np.zeros((0, 3)))(
    lambda a, b, c: tf.concat([a, b, c], axis=0)
)
vg("concat_neg_axis", M, ar(3, 0))(lambda a, b: tf.concat([a, b], axis=-1))
vg("concat_all_empty", np.zeros((0,)), np.zeros((0,)))(lambda a, b: tf.concat([a, b], 0))

# ---- transpose, reverse, roll, where ----------------------------------------------------------
CM = (ar(2, 3) + 1j * ar(2, 3)[::-1]).astype(np.complex128)
val("transpose_conj", CM)(lambda x: tf.transpose(x, conjugate=True))
val("transpose_conj_perm", CM)(lambda x: tf.transpose(x, perm=[1, 0], conjugate=True))
vg("transpose_conj_real", M)(lambda x: tf.transpose(x, conjugate=True))
vg("transpose_perm3", T3)(lambda x: tf.transpose(x, [2, 0, 1]))
vg("reverse_neg_axes", T3)(lambda x: tf.reverse(x, [-1, 0]))
vg("reverse_empty_axes", M)(lambda x: tf.reverse(x, []))
vg("roll_multi", M)(lambda x: tf.roll(x, shift=[1, -1], axis=[0, 1]))
vg("roll_same_axis_twice", V)(lambda x: tf.roll(x, shift=[2, 3], axis=[0, 0]))
vg("roll_neg_axis_big_shift", M)(lambda x: tf.roll(x, shift=9, axis=-1))
vg("roll_tensor_shift", V, i32(-2))(lambda x, s: tf.roll(x, s, axis=0))
vg("where_broadcast", np.array([[True], [False]]), f64([1.0, 2.0, 3.0]), f64(-1.0))(
    lambda c, a, b: tf.where(c, a, b)
)
vg("where_broadcast_cond_row", np.array([True, False, True]), ar(2, 3), ar(2, 1) + 50)(
    lambda c, a, b: tf.where(c, a, b)
)
val("where_indices", np.array([[True, False], [False, True], [True, True]]))(lambda c: tf.where(c))

# ---- out-of-range errors -----------------------------------------------------------------------
vg("int_index_past_end", V)(lambda x: x[6])
vg("neg_int_index_past_start", V)(lambda x: x[-7])
vg("tensor_index_past_end", V, i32(7))(lambda x, i: x[i])
vg("int_index_past_end_axis1", M)(lambda x: x[:, 4])
vg("too_many_indices", V)(lambda x: x[1, 2])


if __name__ == "__main__":
    print(f"{which} indexing_edges: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
