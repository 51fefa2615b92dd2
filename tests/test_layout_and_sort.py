"""pad, reverse, roll, sort, argsort, top_k and clip_by_global_norm with TensorFlow's semantics;
cumsum/cumprod's options; exact derivatives of cumprod and reduce_prod at zeros.

Values against numpy (eager, and compiled to C, which must agree exactly for data movement
and sorting); gradients against their adjoints built from numpy; errors name the argument.
The catalogue (tests/catalogue/layout_and_sort.py) checks every order of derivative against
finite differences and the backends against one another.
"""

import numpy as np
import pytest

import tracer as tt
from tracer.ir import Node
from tracer.ops.core import apply
from tracer.ops.sort_ops import ARGSORT

rng = np.random.default_rng(60217)


def run_both(function, *arrays):
    """function's results eagerly and compiled, as lists of numpy arrays."""
    tensors = [tt.constant(a, dtype=a.dtype) for a in arrays]
    results = []
    for run in (function, tt.function(function)):
        out = run(*tensors)
        out = out if isinstance(out, (list, tuple)) else [out]
        results.append([np.asarray(o) for o in out])
    return results


def assert_both(function, arrays, expected):
    """Eager and compiled results equal `expected` exactly (NaN where it has NaN)."""
    for results in run_both(function, *arrays):
        assert len(results) == len(expected)
        for got, want in zip(results, expected):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def gradient(function, x, weights):
    """d sum(function(x) * weights) / dx, eagerly and compiled."""

    def grad(t):
        with tt.GradientTape() as tape:
            tape.watch(t)
            y = tt.reduce_sum(function(t) * weights)
        return tape.gradient(y, t)

    t = tt.constant(x)
    return grad(t).numpy(), tt.function(grad)(t).numpy()


def adjoint(numpy_function, x, weights):
    """The exact gradient of a linear numpy map: J^T weights, column by column."""
    columns = []
    for k in range(x.size):
        basis = np.zeros(x.size)
        basis[k] = 1.0
        columns.append(np.sum(numpy_function(basis.reshape(x.shape)) * weights))
    return np.array(columns).reshape(x.shape)


# --- pad --------------------------------------------------------------------------------

PADDINGS = [[1, 2], [0, 3], [2, 1]]


def test_pad_matches_numpy_in_every_mode_and_dtype():
    x = rng.standard_normal((3, 4, 5))
    cases = []
    for dtype in (np.float64, np.float32, np.int32, np.int64):
        value = x.astype(dtype) if dtype in (np.float64, np.float32) else (x * 10).astype(dtype)
        cases.append(value)

    def function(*values):
        out = []
        for v in values:
            out.append(tt.pad(v, PADDINGS, constant_values=7))
            out.append(tt.pad(v, PADDINGS, "REFLECT"))
            out.append(tt.pad(v, PADDINGS, "symmetric"))  # case does not matter, as in TF
        return out

    expected = []
    for v in cases:
        expected.append(np.pad(v, PADDINGS, constant_values=7))
        expected.append(np.pad(v, PADDINGS, mode="reflect"))
        expected.append(np.pad(v, PADDINGS, mode="symmetric"))
    assert_both(function, cases, expected)


def test_pad_of_bool_float16_and_a_scalar():
    flags = np.array([True, False])
    halves = np.array([[1.5, -2.0]], dtype=np.float16)
    assert_both(
        lambda b, h: [tt.pad(b, [[1, 2]]), tt.pad(h, [[1, 0], [0, 1]], constant_values=0.5)],
        [flags, halves],
        [np.pad(flags, [[1, 2]]), np.pad(halves, [[1, 0], [0, 1]], constant_values=0.5)],
    )
    assert float(tt.pad(tt.constant(3.0), np.zeros((0, 2), np.int32))) == 3.0


def test_pad_takes_tensor_paddings_and_returns_the_input_when_nothing_is_added():
    x = tt.constant([[1.0, 2.0], [3.0, 4.0]])
    got = tt.pad(x, tt.constant([[0, 1], [1, 0]]), "SYMMETRIC")
    np.testing.assert_array_equal(got.numpy(), np.pad(x.numpy(), [[0, 1], [1, 0]], "symmetric"))
    assert tt.pad(x, [[0, 0], [0, 0]], "REFLECT") is x


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_gradient_is_the_adjoint_slice_or_the_folded_mirror(mode):
    x = rng.standard_normal((3, 4))
    paddings = [[2, 1], [3, 2]] if mode != "REFLECT" else [[2, 2], [1, 3]]
    weights = rng.standard_normal(np.pad(x, paddings).shape)
    kind = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode]
    want = adjoint(lambda v: np.pad(v, paddings, mode=kind), x, weights)
    for got in gradient(lambda t: tt.pad(t, paddings, mode, constant_values=3.0), x, weights):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def test_pad_with_a_constant_known_only_when_the_function_runs():
    x = tt.constant([1.0, 2.0])

    @tt.function
    def padded(t, c):
        return tt.pad(t, [[1, 1]], constant_values=c)

    np.testing.assert_array_equal(padded(x, tt.constant(-5.0)).numpy(), [-5.0, 1.0, 2.0, -5.0])
    c = tt.constant(4.0)
    with tt.GradientTape() as tape:  # TensorFlow's PadV2 gives the constant no gradient
        tape.watch([x, c])
        y = tt.reduce_sum(tt.pad(x, [[1, 1]], constant_values=c))
    gx, gc = tape.gradient(y, [x, c])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0])
    assert gc is None


def test_pad_of_an_axis_known_only_when_the_function_runs():
    spec = [tt.TensorSpec([None, 3], tt.float64)]
    x = np.arange(12.0).reshape(4, 3)
    inner = tt.function(lambda t: tt.pad(t, [[0, 0], [2, 1]], "REFLECT"), input_signature=spec)
    np.testing.assert_array_equal(inner(x).numpy(), np.pad(x, [[0, 0], [2, 1]], "reflect"))
    outer = tt.function(lambda t: tt.pad(t, [[1, 0], [0, 0]]), input_signature=spec)
    # padding the unknown axis needs its size: each call is traced with its own
    np.testing.assert_array_equal(outer(x).numpy(), np.pad(x, [[1, 0], [0, 0]]))


@pytest.mark.parametrize(
    "arguments, error, message",
    [
        (([[1, 1]],), ValueError, r"paddings must have shape \[2, 2\].*got shape \[1, 2\]"),
        (([1, 1],), ValueError, r"paddings must have shape \[2, 2\]"),
        (([[-1, 0], [0, 0]],), ValueError, r"non-negative, got \[-1, 0\] for axis 0"),
        (([[0.5, 0], [0, 0]],), TypeError, "paddings must be integers"),
        (([[1, 0], [0, 0]], "EDGE"), ValueError, "mode must be one of.*'EDGE'"),
        (([[2, 0], [0, 0]], "REFLECT"), ValueError, r"less than .* axis 0 has size 2"),
        (([[0, 0], [0, 4]], "SYMMETRIC"), ValueError, r"at most .* axis 1 has size 3"),
        (([[1, 0], [0, 0]], "CONSTANT", [1.0]), ValueError, "constant_values must be a scalar"),
    ],
)
def test_pad_errors_name_the_argument(arguments, error, message):
    x = tt.constant(np.ones((2, 3)))
    with pytest.raises(error, match=message):
        tt.pad(x, *arguments)


def test_pad_constant_values_take_the_tensors_dtype_as_in_tensorflow():
    np.testing.assert_array_equal(
        tt.pad(tt.constant([1.0]), [[1, 0]], constant_values=2).numpy(), [2.0, 1.0]
    )
    with pytest.raises(TypeError, match="1.5 cannot be converted to int32"):
        tt.pad(tt.constant([1, 2]), [[1, 1]], constant_values=1.5)
    with pytest.raises(TypeError, match="constant_values has dtype float64, the tensor float32"):
        tt.pad(tt.constant([1.0]), [[1, 1]], constant_values=tt.constant(2.0, tt.float64))


# --- reverse ----------------------------------------------------------------------------


def test_reverse_matches_numpy_and_fuses_into_the_loop_that_reads_it():
    x = rng.standard_normal((2, 3, 4))
    ints = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    assert_both(
        lambda t, i: [tt.reverse(t, [0, -1]) * 2.0, tt.reverse(i, [1]), tt.reverse(t, [])],
        [x, ints],
        [np.flip(x, (0, 2)) * 2.0, np.flip(ints, 1), x],
    )
    concrete = tt.function(lambda t: tt.reverse(t, [1]) + 1.0).get_concrete_function(tt.constant(x))
    assert "reverse[axis=(1,)]" in concrete.ir() and "fused" in concrete.ir()
    assert "k1_reverse" not in concrete.c_source()  # read through its index map, not a kernel


def test_reverse_gradient_is_reverse_and_unknown_sizes_work():
    x = rng.standard_normal((3, 4))
    weights = rng.standard_normal((3, 4))
    for got in gradient(lambda t: tt.reverse(t, [0, 1]), x, weights):
        np.testing.assert_array_equal(got, np.flip(weights, (0, 1)))
    spec = [tt.TensorSpec([None, 4], tt.float64)]
    flipped = tt.function(lambda t: tt.reverse(t, [0]) - t, input_signature=spec)
    np.testing.assert_array_equal(flipped(x).numpy(), np.flip(x, 0) - x)


def test_reverse_errors():
    x = tt.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="reverse: axis 1 is given more than once"):
        tt.reverse(x, [1, -1])
    with pytest.raises(ValueError, match="reverse: axis 2 is out of range for a tensor of rank 2"):
        tt.reverse(x, [2])


# --- roll -------------------------------------------------------------------------------


def test_roll_matches_numpy_with_lists_repeated_axes_and_large_shifts():
    x = rng.standard_normal((3, 4, 5))
    ints = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert_both(
        lambda t, i: [
            tt.roll(t, 2, 1),
            tt.roll(t, [1, -7, 2], [0, 2, 0]),
            tt.roll(i, 13, -1),
            tt.roll(t, 4, 1),
        ],
        [x, ints],
        [
            np.roll(x, 2, 1),
            np.roll(x, [3, -7], [0, 2]),  # shifts of one axis add up, as in TensorFlow
            np.roll(ints, 13, -1),
            x,
        ],
    )
    np.testing.assert_array_equal(tt.roll(tt.zeros((0, 3)), 1, 0).numpy(), np.zeros((0, 3)))


def test_roll_by_a_shift_known_only_when_the_function_runs_and_its_gradient():
    x = rng.standard_normal((3, 5))
    rolled = tt.function(lambda t, s: tt.roll(t, s, [1, 0]))
    for shift in ([2, 1], [-6, 4]):
        got = rolled(tt.constant(x), tt.constant(shift))
        np.testing.assert_array_equal(got.numpy(), np.roll(x, shift, [1, 0]))
    weights = rng.standard_normal((3, 5))
    for got in gradient(lambda t: tt.roll(t, [2, -1], [1, 0]), x, weights):
        np.testing.assert_array_equal(got, np.roll(weights, [-2, 1], [1, 0]))


# printed by TensorFlow 2.21: tf.reverse_sequence of np.arange(24).reshape(2, 3, 4) with
# seq_lengths [3, 1, 2, 0], seq_axis 1, batch_axis 2; and tf.nn.depth_to_space of
# np.arange(16).reshape(1, 2, 2, 4) with block_size 2, its [0, :, :, 0]
TF_REVERSE_SEQUENCE = [
    [[8, 1, 6, 3], [4, 5, 2, 7], [0, 9, 10, 11]],
    [[20, 13, 18, 15], [16, 17, 14, 19], [12, 21, 22, 23]],
]
TF_DEPTH_TO_SPACE = [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]


def test_reverse_sequence_and_depth_to_space_as_tensorflow_eagerly_and_compiled():
    x = np.arange(24).reshape(2, 3, 4)
    for got in run_both(lambda t: tt.reverse_sequence(t, [3, 1, 2, 0], 1, batch_axis=2), x):
        np.testing.assert_array_equal(got[0], TF_REVERSE_SEQUENCE)
    images = np.arange(16).reshape(1, 2, 2, 4)
    for got in run_both(lambda t: tt.nn.depth_to_space(t, 2), images):
        np.testing.assert_array_equal(got[0][0, :, :, 0], TF_DEPTH_TO_SPACE)
    for got in run_both(lambda t: tt.nn.space_to_depth(tt.nn.depth_to_space(t, 2), 2), images):
        np.testing.assert_array_equal(got[0], images)


def test_reverse_sequence_takes_lengths_known_only_when_the_function_runs():
    x = rng.standard_normal((3, 5, 2))
    lengths = np.array([5, 0, 3])
    want = x.copy()
    for b, n in enumerate(lengths):
        want[b, :n] = x[b, :n][::-1]
    reversed_ = tt.function(lambda t, n: tt.reverse_sequence(t, n, seq_axis=1))
    np.testing.assert_array_equal(reversed_(x, lengths).numpy(), want)


# printed by TensorFlow 2.21: tf.space_to_batch_nd of np.arange(12).reshape(1, 3, 4, 1) with
# block_shape [2, 2] and paddings [[1, 0], [0, 0]], its [..., 0]
TF_SPACE_TO_BATCH = [[[0, 0], [4, 6]], [[0, 0], [5, 7]], [[0, 2], [8, 10]], [[1, 3], [9, 11]]]


def test_space_to_batch_nd_and_batch_to_space_as_tensorflow_eagerly_and_compiled():
    x = np.arange(12).reshape(1, 3, 4, 1)
    pads = [[1, 0], [0, 0]]
    for got in run_both(lambda t: tt.space_to_batch_nd(t, [2, 2], pads), x):
        np.testing.assert_array_equal(got[0][..., 0], TF_SPACE_TO_BATCH)
    back = lambda t: tt.batch_to_space(tt.space_to_batch(t, [2, 2], pads), [2, 2], pads)  # noqa: E731
    for got in run_both(back, x):
        np.testing.assert_array_equal(got[0], x)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: tt.reverse_sequence(tt.zeros([2, 3]), [1, 4], seq_axis=1), ValueError, "\\[0, 3\\]"),
        (lambda: tt.reverse_sequence(tt.zeros([2, 3]), [1], seq_axis=1), ValueError, "1 lengths for a batch of 2"),
        (lambda: tt.reverse_sequence(tt.zeros([2, 3]), [1, 2], seq_axis=0), ValueError, "both 0"),
        (lambda: tt.nn.depth_to_space(tt.zeros([1, 2, 2, 6]), 2), ValueError, "multiple of block_size"),
        (lambda: tt.nn.space_to_depth(tt.zeros([1, 3, 2, 1]), 2), ValueError, "multiples of block_size"),
        (lambda: tt.nn.depth_to_space(tt.zeros([1, 2, 2, 4]), 2, "NCHW"), ValueError, "NHWC"),
        (lambda: tt.nn.space_to_depth(tt.zeros([2, 2, 4]), 2), ValueError, "rank 4"),
        (lambda: tt.space_to_batch_nd(tt.zeros([1, 3, 2]), [2], [[0, 0]]), ValueError, "divisible by block_shape"),
        (lambda: tt.space_to_batch_nd(tt.zeros([1, 4, 2]), [2], [[0, -1]]), ValueError, "non-negative"),
        (lambda: tt.batch_to_space(tt.zeros([3, 2, 2]), [2], [[0, 0]]), ValueError, "divisible by the product"),
        (lambda: tt.batch_to_space(tt.zeros([2, 2, 2]), [2], [[3, 2]]), ValueError, "exceed"),
        (lambda: tt.space_to_batch_nd(tt.zeros([2, 2]), [2, 2], [[0, 0]] * 2), ValueError, "block_shape must be 1 to 1"),
    ],
)  # fmt: skip
def test_reverse_sequence_and_space_and_depth_errors_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_roll_errors():
    x = tt.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="shift and axis must have the same length"):
        tt.roll(x, [1, 1], [1])
    with pytest.raises(ValueError, match="roll: axis 2 is out of range"):
        tt.roll(x, 1, 2)


# --- sort, argsort ----------------------------------------------------------------------


def _numpy_argsort(x, axis, direction):
    """numpy's stable order; descending keeps equal values in the order of their positions."""
    if direction == "ASCENDING":
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def _awkward(shape, dtype):
    """Many ties, and for floats NaN, infinities and both zeros."""
    x = rng.integers(-3, 4, shape).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        flat = x.reshape(-1)
        spots = rng.choice(flat.size, 8, replace=False)
        flat[spots] = [np.nan, np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan, -0.0]
    else:
        info = np.iinfo(dtype)
        x.reshape(-1)[:2] = [info.min, info.max]
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int64])
def test_sort_and_argsort_match_numpys_stable_sort_exactly_in_c_and_eagerly(dtype):
    x = _awkward((3, 37, 4), dtype)  # lines longer than the C sort's insertion runs

    def function(t):
        out = []
        for direction in ("ASCENDING", "DESCENDING"):
            for axis in (0, 1, -1):
                out += [tt.argsort(t, axis, direction), tt.sort(t, axis, direction)]
        return out

    expected = []
    for direction in ("ASCENDING", "DESCENDING"):
        for axis in (0, 1, -1):
            order = _numpy_argsort(x, axis, direction)
            expected += [order.astype(np.int32), np.take_along_axis(x, order, axis)]
    assert_both(function, [x], expected)


def test_nan_is_above_every_number_and_ties_keep_their_order():
    x = tt.constant([3.0, np.nan, 1.0, np.nan, 2.0, -np.inf, np.inf, 1.0])
    np.testing.assert_array_equal(
        tt.sort(x).numpy(), [-np.inf, 1.0, 1.0, 2.0, 3.0, np.inf, np.nan, np.nan]
    )
    np.testing.assert_array_equal(tt.argsort(x).numpy(), [5, 2, 7, 4, 0, 6, 1, 3])
    np.testing.assert_array_equal(
        tt.argsort(x, direction="DESCENDING").numpy(), [1, 3, 6, 0, 4, 2, 7, 5]
    )
    # TensorFlow 2.21 gives these for ties (it is stable too, `stable` or not)
    ties = tt.constant([1.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(tt.argsort(ties, direction="DESCENDING").numpy(), [0, 1, 3, 2])
    np.testing.assert_array_equal(tt.argsort(ties, stable=True).numpy(), [2, 0, 1, 3])
    assert tt.argsort(ties).dtype == tt.int32


def test_sort_gradient_goes_back_to_the_source_positions():
    x = rng.permutation(12).reshape(3, 4) * 0.5
    weights = rng.standard_normal((3, 4))
    for axis, direction in ((0, "ASCENDING"), (1, "DESCENDING")):
        order = _numpy_argsort(x, axis, direction)
        want = np.zeros_like(x)
        np.put_along_axis(want, order, weights, axis)
        for got in gradient(lambda t: tt.sort(t, axis, direction), x, weights):
            np.testing.assert_array_equal(got, want)
    with tt.GradientTape() as tape:
        t = tt.constant(x)
        tape.watch(t)
        y = tt.cast(tt.argsort(t), tt.float64)
    assert tape.gradient(y, t) is None


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
def test_sort_and_top_k_of_a_vector_give_a_dense_gradient(backend):
    """TF 2.21: the gradient of tf.sort and tf.math.top_k of a vector is a dense Tensor, not
    IndexedSlices (theirs is a scatter into the input's shape)."""
    x = np.array([3.0, 1.0, 2.0, 5.0])

    def gradients(t):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(t)
            by_sort = tt.reduce_sum(tt.sort(t) * tt.constant([1.0, 2.0, 3.0, 4.0], tt.float64))
            by_top_k = tt.reduce_sum(tt.math.top_k(t, 2).values ** 2)
        return tape.gradient(by_sort, t), tape.gradient(by_top_k, t)

    run = gradients if backend == "eager" else tt.function(gradients, backend=backend)
    sort_gradient, top_k_gradient = run(tt.constant(x))
    assert isinstance(sort_gradient, tt.Tensor) and isinstance(top_k_gradient, tt.Tensor)
    np.testing.assert_array_equal(sort_gradient.numpy(), [3.0, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(top_k_gradient.numpy(), [6.0, 0.0, 0.0, 10.0])


def test_sort_of_rows_known_only_when_the_function_runs_and_vectorized():
    x = _awkward((5, 6), np.float64)
    spec = [tt.TensorSpec([None, 6], tt.float64)]
    sorter = tt.function(lambda t: [tt.sort(t), tt.argsort(t, 0)], input_signature=spec)
    values, order = sorter(x)
    np.testing.assert_array_equal(values.numpy(), np.sort(x, axis=1, kind="stable"))
    np.testing.assert_array_equal(order.numpy(), np.argsort(x, axis=0, kind="stable"))
    mapped = tt.vectorized_map(lambda row: tt.sort(row, direction="DESCENDING"), tt.constant(x))
    np.testing.assert_array_equal(mapped.numpy(), [_take_desc(row) for row in x])
    orders = tt.vectorized_map(lambda row: tt.argsort(row), tt.constant(x))
    np.testing.assert_array_equal(orders.numpy(), np.argsort(x, axis=1, kind="stable"))


@pytest.mark.parametrize("flat", [False, True])
def test_argsort_batching_rule_equals_a_loop(flat):
    """Flat offsets of a batch are each batch element's own (the rule subtracts its start)."""
    x = _awkward((3, 2, 5), np.float64)
    attrs = {"axis": 1, "direction": "DESCENDING", "flat": flat, "output_type": tt.int64}
    element = Node("input", (), {"name": "x"}, x.shape[1:], tt.float64)
    node = Node("argsort", (element,), attrs, x.shape[1:], tt.int64)
    batched = ARGSORT.batch(node, [tt.constant(x)], [True], 3).numpy()
    for row, want in zip(x, batched):
        np.testing.assert_array_equal(apply(ARGSORT, (tt.constant(row),), attrs).numpy(), want)


def _take_desc(row):
    return row[_numpy_argsort(row, 0, "DESCENDING")]


@pytest.mark.parametrize(
    "function, error, message",
    [
        (lambda: tt.sort(tt.constant([True, False])), TypeError, "sort: values must be real"),
        (lambda: tt.sort(tt.constant(1.0)), ValueError, "sort: values must have rank 1"),
        (lambda: tt.sort(tt.ones((2, 3)), axis=2), ValueError, "sort: axis 2 is out of range"),
        (lambda: tt.argsort(tt.ones(3), direction="UP"), ValueError, "direction must be"),
        (lambda: tt.math.top_k(tt.ones((2, 3)), 4), ValueError, "at least k=4 .* it has 3"),
        (lambda: tt.math.top_k(tt.ones(3), -1), ValueError, "k must be >= 0, got -1"),
        (lambda: tt.math.top_k(tt.ones(3), 2.0), TypeError, "k must be an integer"),
        (lambda: tt.math.top_k(tt.constant(1.0)), ValueError, "rank 1 or more"),
        (lambda: tt.math.top_k(tt.constant([True])), TypeError, "top_k: input must be real"),
    ],
)
def test_sort_errors_name_the_argument(function, error, message):
    with pytest.raises(error, match=message):
        function()


# --- top_k ------------------------------------------------------------------------------


def test_top_k_as_tensorflow_ties_to_the_lower_index():
    result = tt.math.top_k(tt.constant([1.0, 3.0, 3.0, 1.0, 3.0]), 4)
    np.testing.assert_array_equal(result.values.numpy(), [3.0, 3.0, 3.0, 1.0])
    np.testing.assert_array_equal(result.indices.numpy(), [1, 2, 4, 0])
    assert result.indices.dtype == tt.int32 and type(result).__name__ == "TopKV2"
    values, indices = tt.nn.top_k(tt.constant([[1, 5, 3]]), k=2, index_type=tt.int64)
    np.testing.assert_array_equal(values.numpy(), [[5, 3]])
    assert indices.dtype == tt.int64 and indices.numpy().tolist() == [[1, 2]]
    empty = tt.math.top_k(tt.ones((2, 3)), 0)
    assert empty.values.shape == (2, 0) and empty.indices.shape == (2, 0)


def test_top_k_in_c_and_its_gradient():
    x = _awkward((4, 3, 20), np.float64)
    order = _numpy_argsort(x, -1, "DESCENDING")[..., :5]
    assert_both(
        lambda t: list(tt.math.top_k(t, 5, sorted=False)),
        [x],
        [np.take_along_axis(x, order, -1), order.astype(np.int32)],
    )
    finite = rng.permutation(40).reshape(2, 20) * 0.25
    weights = rng.standard_normal((2, 3))
    want = np.zeros_like(finite)
    np.put_along_axis(want, _numpy_argsort(finite, -1, "DESCENDING")[:, :3], weights, -1)
    for got in gradient(lambda t: tt.math.top_k(t, 3).values, finite, weights):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
@pytest.mark.parametrize("k", [1, 3, 7, 60, 64])
def test_top_k_selects_without_sorting_whole_lines_and_keeps_the_stable_order(k, dtype):
    """k well below the line's 64 entries selects (a heap in C, a partition eagerly); every
    backend gives numpy's stable descending order's first k, ties, NaN and infinities
    included."""
    x = _awkward((3, 64, 2), dtype)
    x = np.swapaxes(x, 1, 2).copy()  # lines along the last axis, ties across them
    order = _numpy_argsort(x, -1, "DESCENDING")[..., :k]
    assert_both(
        lambda t: list(tt.math.top_k(t, k)),
        [x],
        [np.take_along_axis(x, order, -1), order.astype(np.int32)],
    )


# --- cumsum, cumprod, reduce_prod ---------------------------------------------------------


def _numpy_scan(accumulate, identity, x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    out = accumulate(x, axis=axis)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], identity), out[:-1]], 0)
        out = np.moveaxis(out, 0, axis)
    return np.flip(out, axis) if reverse else out


FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def test_cumsum_and_cumprod_take_exclusive_and_reverse():
    x = rng.uniform(0.5, 1.5, (3, 5))

    def function(t):
        out = []
        for exclusive, reverse in FLAGS:
            out.append(tt.math.cumsum(t, 1, exclusive=exclusive, reverse=reverse))
            out.append(tt.math.cumprod(t, 0, exclusive=exclusive, reverse=reverse))
        return out

    expected = []
    for exclusive, reverse in FLAGS:
        expected.append(_numpy_scan(np.cumsum, 0, x, 1, exclusive, reverse))
        expected.append(_numpy_scan(np.cumprod, 1, x, 0, exclusive, reverse))
    for results in run_both(function, x):
        for got, want in zip(results, expected):
            np.testing.assert_allclose(got, want, rtol=1e-14)


def _products(x, exclusive, reverse):
    """For each output j of a cumprod of the vector x, the set of inputs it multiplies."""
    n = len(x)
    sets = []
    for j in range(n):
        members = range(j, n) if reverse else range(j + 1)
        sets.append([k for k in members if not (exclusive and k == j)])
    return sets


def _analytic(x, weights, exclusive, reverse):
    """Gradient and Hessian of sum_j w_j prod_{k in S_j} x_k: polynomials, exact at zeros."""
    n = len(x)
    grad, hessian = np.zeros(n), np.zeros((n, n))
    for w, members in zip(weights, _products(x, exclusive, reverse)):
        for a in members:
            grad[a] += w * np.prod([x[k] for k in members if k != a])
            for b in members:
                if a != b:
                    hessian[a, b] += w * np.prod([x[k] for k in members if k not in (a, b)])
    return grad, hessian


def _gradient_and_hessian(function, x):
    def both(t):
        with tt.GradientTape() as outer:
            outer.watch(t)
            with tt.GradientTape() as inner:
                inner.watch(t)
                y = function(t)
            g = inner.gradient(y, t)
        return g, outer.jacobian(g, t)

    t = tt.constant(x)
    return [[r.numpy() for r in run(t)] for run in (both, tt.function(both))]


@pytest.mark.parametrize("x", [[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [2.0, 0.0, 3.0, 0.0]])
def test_reduce_prod_first_and_second_derivatives_are_exact_at_zeros(x):
    x = np.array(x)
    weights = np.zeros(len(x))
    weights[-1] = 1.0  # the last output of a cumprod is the product of all
    want_grad, want_hessian = _analytic(x, weights, False, False)
    for grad, hessian in _gradient_and_hessian(tt.reduce_prod, x):
        np.testing.assert_array_equal(grad, want_grad)
        np.testing.assert_array_equal(hessian, want_hessian)


@pytest.mark.parametrize("exclusive, reverse", FLAGS)
def test_cumprod_first_and_second_derivatives_are_exact_at_zeros(exclusive, reverse):
    x = np.array([0.0, 2.0, 0.0, 3.0, -1.5, 0.0, 0.5])
    weights = rng.standard_normal(len(x))
    want_grad, want_hessian = _analytic(x, weights, exclusive, reverse)

    def loss(t):
        return tt.reduce_sum(tt.math.cumprod(t, exclusive=exclusive, reverse=reverse) * weights)

    for grad, hessian in _gradient_and_hessian(loss, x):
        np.testing.assert_allclose(grad, want_grad, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(hessian, want_hessian, rtol=1e-14, atol=1e-15)


def test_cumprod_gradient_along_an_axis_known_only_when_the_function_runs():
    x = rng.uniform(0.5, 1.5, (5, 2))

    def grad(t):
        with tt.GradientTape() as tape:
            tape.watch(t)
            y = tt.reduce_sum(tt.math.cumprod(t, axis=0) ** 2)
        return tape.gradient(y, t)

    spec = [tt.TensorSpec([None, 2], tt.float64)]
    np.testing.assert_allclose(
        tt.function(grad, input_signature=spec)(x).numpy(), grad(tt.constant(x)).numpy(), rtol=1e-13
    )


# --- clip_by_global_norm ------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf - inf, on purpose
def test_clip_by_global_norm_as_tensorflow():
    a, b = tt.constant([3.0, 4.0]), tt.constant([[12.0]])
    (ca, none, cb), norm = tt.clip_by_global_norm([a, None, b], 2.0)
    assert none is None and norm.dtype == tt.float32 and float(norm) == 13.0
    np.testing.assert_allclose(ca.numpy(), [0.4615385, 0.61538464], rtol=1e-6)  # TF 2.21
    np.testing.assert_allclose(cb.numpy(), [[1.846154]], rtol=1e-6)
    (small,), norm = tt.clip_by_global_norm((a,), 10.0)
    np.testing.assert_array_equal(small.numpy(), a.numpy())
    (given,), norm = tt.clip_by_global_norm([a], 2.0, use_norm=tt.constant(10.0))
    np.testing.assert_allclose(given.numpy(), [0.6, 0.8], rtol=1e-6)
    assert float(norm) == 10.0
    (bad,), norm = tt.clip_by_global_norm([tt.constant([np.inf, 1.0])], 2.0)
    assert np.isinf(float(norm)) and np.all(np.isnan(bad.numpy()))
    clipped, norm = tt.clip_by_global_norm([], 1.0)
    assert clipped == [] and float(norm) == 0.0


def test_clip_by_global_norm_scales_indexed_slices_and_compiles():
    rows = tt.IndexedSlices(tt.constant([[3.0, 4.0]]), tt.constant([1]), (3, 2))
    (clipped, dense), norm = tt.clip_by_global_norm([rows, tt.constant([0.0])], 1.0)
    assert isinstance(clipped, tt.IndexedSlices) and clipped.shape == (3, 2)
    np.testing.assert_allclose(clipped.values.numpy(), [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_array_equal(clipped.indices.numpy(), [1])
    x, y = rng.standard_normal(4), rng.standard_normal((2, 2))

    def clip(s, t):
        clipped, norm = tt.clip_by_global_norm([s, t], 0.5)
        return [*clipped, norm]

    for cx, cy, n in run_both(clip, x, y):
        total = np.sqrt(np.sum(x**2) + np.sum(y**2))
        np.testing.assert_allclose(n, total, rtol=1e-14)
        np.testing.assert_allclose(cx, x * 0.5 / total, rtol=1e-14)
        np.testing.assert_allclose(cy, y * 0.5 / total, rtol=1e-14)


def test_clip_by_global_norm_errors():
    with pytest.raises(TypeError, match="t_list must be a list or tuple of tensors"):
        tt.clip_by_global_norm(tt.constant([1.0]), 1.0)
    with pytest.raises(TypeError, match="share one floating dtype, got float32, float64"):
        tt.clip_by_global_norm([tt.constant([1.0]), tt.constant([1.0], tt.float64)], 1.0)
