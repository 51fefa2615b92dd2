"""gather_nd, scatter_nd, tensor_scatter_nd_*, the segment reductions and bincount: values
against numpy loops and TensorFlow's documented examples, in every backend; TensorFlow's
gradients (ties, zeros, overwritten positions); errors; batching against a Python loop.

The catalogue (tests/catalogue/segments.py) checks their derivatives against finite
differences, and eager = interpreter = C, to second order.
"""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(5)
BACKENDS = ["eager", "interpreter", "c"]


def _run(function, backend):
    return function if backend == "eager" else tt.function(function, backend=backend)


# --- numpy references ---------------------------------------------------------------------


def gather_nd_reference(params, indices, batch_dims=0):
    if batch_dims:
        return np.stack(
            [gather_nd_reference(p, i, batch_dims - 1) for p, i in zip(params, indices)]
        )
    coordinates = indices.reshape(int(np.prod(indices.shape[:-1])), indices.shape[-1])
    rows = np.array([params[tuple(c)] for c in coordinates])
    return rows.reshape(indices.shape[:-1] + params.shape[indices.shape[-1] :])


def segment_reference(data, ids, n, reduce, empty):
    data, ids = np.asarray(data), np.asarray(ids)
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size, *data.shape[ids.ndim :]))
    out = []
    for i in range(n):
        members = rows[flat_ids == i]
        out.append(reduce(members, axis=0) if len(members) else np.full(rows.shape[1:], empty))
    return np.array(out, dtype=data.dtype).reshape((n, *data.shape[ids.ndim :]))


# --- gather_nd --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gather_nd_matches_a_numpy_loop(backend, dtype):
    params = rng.standard_normal((3, 4, 2)).astype(dtype)
    cases = [
        (np.array([[2, 1], [0, 3], [2, 1]]), 0),  # K = 2, a repeated coordinate
        (np.array([[[1], [0]], [[2], [2]]], np.int64), 0),  # K = 1, int64
        (np.array([[2, 3, 1], [0, 0, 0]]), 0),  # K = rank: scalars
        (np.zeros((2, 0), np.int32), 0),  # K = 0: the whole of params per index
        (np.array([[[3, 1]], [[0, 0]], [[1, 1]]]), 1),  # batch_dims = 1
    ]

    def f(p, *indices):
        return [tt.gather_nd(p, i, batch_dims=b) for i, (_, b) in zip(indices, cases)]

    results = _run(f, backend)(params, *[tt.constant(i) for i, _ in cases])
    for got, (indices, batch_dims) in zip(results, cases):
        want = gather_nd_reference(params, indices, batch_dims)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


def gather_reference(params, indices, axis, batch_dims):
    """out[b, m, i, r] = params[b, m, indices[b, i], r], by a loop over the batch axes."""
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    return np.stack(
        [gather_reference(p, i, axis - 1, batch_dims - 1) for p, i in zip(params, indices)]
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "index_shape, axis, batch_dims",
    [((2, 5), 1, 1), ((2,), 1, 1), ((2, 3, 2), 2, 2), ((2, 3), 2, 1), ((2, 3, 4, 2), -1, -1)],
)
def test_gather_with_batch_dims_matches_a_numpy_loop(backend, index_shape, axis, batch_dims):
    """TF 2.21's shapes, e.g. params (2, 3, 4, 5), indices (2, 5), axis 1, batch_dims 1 ->
    (2, 5, 4, 5); tracer refused batch_dims."""
    params = rng.standard_normal((2, 3, 4, 5))
    size = params.shape[axis]
    indices = rng.integers(0, size, size=index_shape)
    got = _run(lambda p, i: tt.gather(p, i, axis=axis, batch_dims=batch_dims), backend)(
        tt.constant(params), tt.constant(indices)
    )
    batch = batch_dims % len(index_shape) if batch_dims < 0 else batch_dims
    np.testing.assert_array_equal(got.numpy(), gather_reference(params, indices, axis % 4, batch))


def test_gather_batch_dims_past_axis_is_an_error():
    with pytest.raises(ValueError, match=r"batch_dims \(2\) must be at most axis \(1\)"):
        tt.gather(tt.zeros([2, 3, 4]), tt.zeros([2, 3], tt.int32), axis=1, batch_dims=2)


def test_gather_nd_as_tensorflows_examples():
    matrix = tt.constant([[1, 2], [3, 4]])
    np.testing.assert_array_equal(tt.gather_nd(matrix, [[0, 0], [1, 1]]).numpy(), [1, 4])
    np.testing.assert_array_equal(tt.gather_nd(matrix, [[1], [0]]).numpy(), [[3, 4], [1, 2]])
    cube = tt.constant([[[10, 11], [12, 13]], [[20, 21], [22, 23]]])
    np.testing.assert_array_equal(
        tt.gather_nd(cube, [[1], [0]], batch_dims=1).numpy(), [[12, 13], [20, 21]]
    )
    np.testing.assert_array_equal(
        tt.gather_nd(cube, [[0, 1], [1, 0]]).numpy(), [[12, 13], [20, 21]]
    )


def test_gather_nd_gradient_adds_up_at_repeated_coordinates():
    params = tt.constant(rng.standard_normal((2, 3)))
    with tt.GradientTape() as tape:
        tape.watch(params)
        y = tt.reduce_sum(tt.gather_nd(params, [[1, 2], [0, 0], [1, 2]]) * [1.0, 2.0, 4.0])
    np.testing.assert_array_equal(tape.gradient(y, params).numpy(), [[2, 0, 0], [0, 0, 5]])


# --- scatter_nd and tensor_scatter_nd_* ------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_scatter_nd_and_tensor_scatters_as_tensorflows_examples(backend):
    def f(updates, tensor, slices):
        return (
            tt.scatter_nd([[4], [3], [1], [7]], updates, [8]),
            tt.scatter_nd([[0], [2]], slices, [4, 4, 4]),
            tt.tensor_scatter_nd_update(tensor, [[1], [3], [4], [7]], updates),
            tt.tensor_scatter_nd_add(tensor, [[1], [3], [4], [7]], updates),
            tt.tensor_scatter_nd_sub(tensor, [[1], [3], [4], [7]], updates),
        )

    updates = np.array([9.0, 10.0, 11.0, 12.0])
    tensor = np.arange(8.0)
    slices = np.broadcast_to(np.arange(16.0).reshape(4, 4), (2, 4, 4)) * [[[1]], [[-1]]]
    got = [r.numpy() for r in _run(f, backend)(updates, tensor, slices)]
    np.testing.assert_array_equal(got[0], [0, 11, 0, 10, 9, 0, 0, 12])
    cube = np.zeros((4, 4, 4))
    cube[0], cube[2] = slices[0], slices[1]
    np.testing.assert_array_equal(got[1], cube)
    np.testing.assert_array_equal(got[2], [0, 9, 2, 10, 11, 5, 6, 12])
    np.testing.assert_array_equal(got[3], [0, 10, 2, 13, 15, 5, 6, 19])
    np.testing.assert_array_equal(got[4], [0, -8, 2, -7, -7, 5, 6, -5])


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_coordinates_add_in_scatters_and_the_last_update_wins(backend):
    def f(tensor, updates):
        indices = [[1, 0], [0, 2], [1, 0], [1, 0]]
        return (
            tt.scatter_nd(indices, updates, [2, 3]),
            tt.tensor_scatter_nd_update(tensor, indices, updates),
            tt.tensor_scatter_nd_add(tensor, indices, updates),
        )

    tensor = np.full((2, 3), 100, np.int32)
    updates = np.array([1, 2, 3, 4], np.int32)
    scattered, updated, added = [r.numpy() for r in _run(f, backend)(tensor, updates)]
    np.testing.assert_array_equal(scattered, [[0, 0, 2], [8, 0, 0]])
    np.testing.assert_array_equal(updated, [[100, 100, 2], [4, 100, 100]])
    np.testing.assert_array_equal(added, [[100, 100, 102], [108, 100, 100]])
    assert updated.dtype == np.int32


def _scattered(tensor, indices, updates, combine):
    """numpy's reference of a tensor scatter: a copy of `tensor`, the updates applied in
    order at their coordinates."""
    out = np.array(tensor, copy=True)
    for index, update in zip(indices, updates):
        out[tuple(index)] = combine(out[tuple(index)], update)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_scatters_into_a_transposed_tensor(backend):
    """A transpose is a view eagerly (not C-ordered): the scatter still lands in the result."""
    indices, updates = [[0, 0], [1, 2], [0, 0]], np.array([5.0, 6.0, 7.0])
    x = rng.standard_normal((3, 2))

    def f(x):
        t = tt.transpose(x)
        return (
            tt.tensor_scatter_nd_update(t, indices, updates),
            tt.tensor_scatter_nd_add(t, indices, updates),
            tt.tensor_scatter_nd_sub(t, indices, updates),
        )

    combines = [lambda old, new: new, np.add, np.subtract]
    for got, combine in zip(_run(f, backend)(x), combines):
        np.testing.assert_array_equal(got.numpy(), _scattered(x.T, indices, updates, combine))


@pytest.mark.parametrize("scatter", ["scatter_nd", "tensor_scatter_nd_add"])
def test_a_scatter_read_by_a_small_loop_compiles_in_order(scatter):
    """gather_nd, a scatter at repeated rows, and a transpose of its result: GCC 12 at -O3
    once moved the transpose's (fully unrolled `omp simd`) loads before the scatter's
    stores, inlined into one entry point, and read 0 for a row the scatter had filled."""
    x = np.array([[0.5, -0.9, -1.8]])
    rows = np.array([[0], [2], [0]], np.int32)

    def f(x):
        updates = tt.gather_nd(x, [[0], [0], [0]])
        if scatter == "scatter_nd":
            scattered = tt.scatter_nd(rows, updates, [4, 3])
        else:
            scattered = tt.tensor_scatter_nd_add(tt.zeros([4, 3], tt.float64), rows, updates)
        return tt.transpose(scattered)

    want = np.zeros((4, 3))
    np.add.at(want, rows[:, 0], np.repeat(x, 3, axis=0))
    np.testing.assert_array_equal(tt.function(f, backend="c")(x).numpy(), want.T)


def test_updates_given_as_a_list_of_tensors_keep_their_gradient():
    """tf.tensor_scatter_nd_update(x, [[0]], [x[1] * 5.0]): the list of tensors is stacked,
    not made a numpy array (its gradient was lost: 6 where the analytic one is 156)."""
    x = tt.constant([2.0, 3.0])
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        replaced = tt.reduce_sum(tt.tensor_scatter_nd_update(x, [[0]], [x[1] * 5.0]) ** 2)
        added = tt.reduce_sum(tt.tensor_scatter_nd_add(tt.zeros([2]), [[0]], [x[1]]) ** 2)
    np.testing.assert_allclose(tape.gradient(replaced, x).numpy(), [0.0, 2 * 3 + 50 * 3])
    np.testing.assert_allclose(tape.gradient(added, x).numpy(), [0.0, 2 * 3])


def test_tensor_scatter_nd_update_gradients_are_tensorflows():
    """The replaced positions pass no gradient to `tensor`; each update gets the cotangent
    at its coordinates, even an update a later duplicate overwrote (TensorFlow's rule)."""
    tensor, updates = tt.constant(np.arange(4.0)), tt.constant(np.array([10.0, 20.0, 30.0]))
    weights = tt.constant(np.array([1.0, 2.0, 3.0, 4.0]))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([tensor, updates])
        y = tt.reduce_sum(tt.tensor_scatter_nd_update(tensor, [[2], [0], [2]], updates) * weights)
    np.testing.assert_array_equal(tape.gradient(y, tensor).numpy(), [0, 2, 0, 4])
    np.testing.assert_array_equal(tape.gradient(y, updates).numpy(), [3, 1, 3])
    with tt.GradientTape() as tape:
        tape.watch([tensor, updates])
        y = tt.reduce_sum(tt.tensor_scatter_nd_sub(tensor, [[2], [2]], updates[:2]) * weights)
    dt, du = tape.gradient(y, [tensor, updates])
    np.testing.assert_array_equal(dt.numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(du.numpy(), [-3, -3, 0])


def test_python_updates_take_the_tensors_dtype_and_shapes_are_checked():
    result = tt.tensor_scatter_nd_update(tt.zeros([3], tt.float64), [[2], [0]], [5, 7])
    assert result.dtype == tt.float64
    np.testing.assert_array_equal(result.numpy(), [7, 0, 5])
    with pytest.raises(
        ValueError, match=r"updates of shape \(3,\) do not fit indices of shape \(2, 1\)"
    ):
        tt.tensor_scatter_nd_add(tt.zeros([3]), [[2], [0]], tt.constant([1.0, 2.0, 3.0]))
    with pytest.raises(
        TypeError, match=r"updates \(float64\) must have the dtype of tensor \(float32\)"
    ):
        tt.tensor_scatter_nd_update(tt.zeros([3]), [[2]], tt.constant([1.0], tt.float64))
    with pytest.raises(TypeError, match="indices must be int32 or int64, got float32"):
        tt.gather_nd(tt.zeros([3]), tt.constant([[1.0]]))
    with pytest.raises(
        ValueError, match=r"indices.shape\[-1\] = 3 coordinates .* params of shape \(2, 2\)"
    ):
        tt.gather_nd(tt.zeros([2, 2]), [[0, 0, 0]])
    with pytest.raises(
        ValueError, match=r"batch dimensions of indices \(3,\) and of params \(2,\)"
    ):
        tt.gather_nd(tt.zeros([2, 2]), [[0], [0], [1]], batch_dims=1)
    with pytest.raises(
        ValueError, match=r"indices of shape \(\) need at least batch_dims \+ 1 = 1 axes"
    ):
        tt.gather_nd(tt.zeros([2]), 1)


# --- index errors: one message in every backend ---------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_out_of_range_is_the_same_error_in_every_backend(backend):
    cases = [
        (
            lambda x, i: tt.gather_nd(x, i),
            [[0, 1], [2, 0]],
            "gather_nd: an index in indices is out of range for params of shape (2, 3); the "
            "valid ranges are indices[..., 0] in [0, 2), indices[..., 1] in [0, 3)",
        ),
        (
            lambda x, i: tt.scatter_nd(i, x[:, 0], [2, 3]),
            [[0, -1], [1, 0]],
            "scatter_nd: an index in indices is out of range for the result of shape (2, 3)",
        ),
        (
            lambda x, i: tt.tensor_scatter_nd_update(x, i, [1.0, 2.0]),
            [[0, 3], [1, 0]],
            "tensor_scatter_nd_update: an index in indices is out of range for tensor of shape (2, 3)",
        ),
        (
            lambda x, i: tt.tensor_scatter_nd_sub(x, i, [1.0, 2.0]),
            [[0, 0], [-1, 0]],
            "tensor_scatter_nd_add: an index in indices is out of range for tensor",
        ),
        (
            lambda x, i: tt.math.unsorted_segment_max(x, i[:, 0], 2),
            [[1, 0], [2, 0]],
            "unsorted_segment_max: segment_ids holds an id out of range [0, 2) "
            "(num_segments = 2; negative ids are dropped)",
        ),
        (
            lambda x, i: tt.math.bincount(i, minlength=3, maxlength=3),
            [[1, 0], [-2, 0]],
            "bincount: arr holds a negative value",
        ),
    ]
    x = tt.constant(rng.standard_normal((2, 3)))
    for function, bad, message in cases:
        with pytest.raises(IndexError) as info:
            _run(function, backend)(x, tt.constant(bad))
        assert str(info.value).startswith(message)
        if backend == "c":  # compiled code adds the user's line
            assert "test_segments.py" in str(info.value)


# --- segment reductions -------------------------------------------------------------------------

SORTED = {
    "segment_sum": (np.sum, 0),
    "segment_prod": (np.prod, 1),
    "segment_max": (np.max, 0),
    "segment_min": (np.min, 0),
    "segment_mean": (np.mean, 0),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_sorted_segment_ops_match_numpy_with_tensorflows_zeros_for_gaps(backend, dtype):
    data = (rng.standard_normal((6, 2)) * 4).astype(dtype)
    ids = [0, 0, 2, 2, 2, 4]  # segments 1 and 3 are empty

    def f(x):
        return [getattr(tt.math, name)(x, ids) for name in SORTED]

    for name, got in zip(SORTED, _run(f, backend)(data)):
        reduce, empty = SORTED[name]
        want = segment_reference(data, np.array(ids), 5, reduce, empty)
        if name == "segment_mean" and dtype == np.int32:  # TensorFlow's kernel truncates
            sums = segment_reference(data, np.array(ids), 5, np.sum, 0)
            want = np.trunc(sums / np.maximum(np.bincount(ids, minlength=5), 1)[:, None])
        assert got.dtype == dtype, name
        np.testing.assert_allclose(got.numpy(), want.astype(dtype), rtol=1e-6, err_msg=name)


UNSORTED = {
    "unsorted_segment_sum": (np.sum, lambda dtype: 0),
    "unsorted_segment_prod": (np.prod, lambda dtype: 1),
    "unsorted_segment_max": (np.max, lambda dtype: _limits(dtype).min),
    "unsorted_segment_min": (np.min, lambda dtype: _limits(dtype).max),
}


def _limits(dtype):
    return np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_unsorted_segment_ops_match_numpy_drop_negative_ids_and_fill_empty_segments(backend, dtype):
    data = (rng.standard_normal((2, 3, 2)) * 4).astype(dtype)
    ids = np.array([[3, -1, 0], [3, 0, -2]])  # a prefix of data's shape; 1 and 4 are empty

    def f(x, i):
        return [getattr(tt.math, name)(x, i, 5) for name in UNSORTED] + [
            tt.math.unsorted_segment_mean(x, i, 5)
        ]

    results = _run(f, backend)(data, ids)
    kept = ids.reshape(-1) >= 0
    rows, row_ids = data.reshape(6, 2)[kept], ids.reshape(-1)[kept]
    for (name, (reduce, empty)), got in zip(UNSORTED.items(), results):
        want = segment_reference(rows, row_ids, 5, reduce, empty(dtype))
        assert got.dtype == dtype and got.shape == (5, 2), name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=name)
    # TensorFlow's mean is sum / max(count, 1): float64 for integer data, as `/`
    mean = results[-1].numpy()
    sums = segment_reference(rows, row_ids, 5, np.sum, 0)
    counts = np.maximum(np.bincount(row_ids, minlength=5), 1)[:, None]
    assert mean.dtype == (np.float64 if dtype in (np.int32, np.int64) else dtype)
    np.testing.assert_allclose(mean, sums / counts, rtol=1e-6)


def test_nan_wins_in_segment_max_and_min_as_in_numpy():
    data = tt.constant([1.0, np.nan, 3.0, 2.0])
    for backend in ("eager", "c"):
        run = _run(
            lambda x: (
                tt.math.segment_max(x, [0, 0, 1, 1]),
                tt.math.unsorted_segment_min(x, [1, 1, 0, 0], 2),
            ),
            backend,
        )
        high, low = run(data)
        np.testing.assert_array_equal(high.numpy(), [np.nan, 3.0])
        np.testing.assert_array_equal(low.numpy(), [2.0, np.nan])


def test_sorted_segment_ids_are_checked_as_tensorflows_cpu_kernel_does():
    with pytest.raises(
        ValueError,
        match=r"segment_max: segment_ids must be sorted: segment_ids\[2\] = 0 follows segment_ids\[1\] = 1",
    ):
        tt.math.segment_max([1.0, 2.0, 3.0], [0, 1, 0])
    with pytest.raises(
        IndexError, match=r"segment_sum: segment ids must be >= 0, got segment_ids\[0\] = -1"
    ):
        tt.math.segment_sum([1.0, 2.0, 3.0], [-1, 0, 0])
    with pytest.raises(
        ValueError,
        match=r"one id per row of data: got segment_ids of shape \(2,\) for data of shape \(3,\)",
    ):
        tt.math.segment_sum([1.0, 2.0, 3.0], [0, 0])
    # ids computed when the function runs (TF 2.21 takes them): it runs as Python
    mean = tt.function(lambda x, i: tt.math.segment_mean(x, i))
    np.testing.assert_array_equal(
        mean(tt.constant([1.0, 2.0, 6.0]), tt.constant([0, 2, 2])).numpy(), [1.0, 0.0, 4.0]
    )
    # ids known when traced: a compiled function keeps them
    f = tt.function(lambda x: tt.math.segment_sum(x, [0, 0, 1]))
    np.testing.assert_array_equal(f(tt.constant([1.0, 2.0, 4.0])).numpy(), [3.0, 4.0])
    assert tt.math.segment_sum(tt.zeros([0, 2]), tt.zeros([0], tt.int32)).shape == (0, 2)


def test_unsorted_segment_arguments_are_checked():
    with pytest.raises(TypeError, match="segment_ids must be int32 or int64, got float32"):
        tt.math.unsorted_segment_sum([1.0], [0.0], 1)
    with pytest.raises(TypeError, match="data must hold real numbers, got complex64"):
        tt.math.unsorted_segment_max(tt.complex(tt.ones([2]), tt.ones([2])), [0, 0], 1)
    with pytest.raises(
        ValueError, match=r"segment_ids \(3,\) must start the shape of data \(2, 3\)"
    ):
        tt.math.unsorted_segment_sum(tt.ones([2, 3]), [0, 0, 1], 2)
    with pytest.raises(ValueError, match="num_segments must be >= 0, got -1"):
        tt.math.unsorted_segment_sum([1.0], [0], -1)
    summed = tt.function(lambda x, n: tt.math.unsorted_segment_sum(x, [0, 2], n))
    np.testing.assert_array_equal(
        summed(tt.constant([1.0, 5.0]), tt.constant(3)).numpy(), [1.0, 0.0, 5.0]
    )


def test_segment_max_and_min_gradients_divide_among_ties_as_tensorflow():
    data = tt.constant([1.0, 3.0, 3.0, 2.0, 5.0, -1.0])
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(data)
        high = tt.math.segment_max(data, [0, 0, 0, 1, 3, 3])
        low = tt.math.unsorted_segment_min(data, [0, 0, -1, 1, 1, 1], 3)
    np.testing.assert_array_equal(
        tape.gradient(high, data, output_gradients=tt.constant([2.0, 1.0, 7.0, 4.0])).numpy(),
        [0, 1, 1, 1, 4, 0],
    )
    np.testing.assert_array_equal(tape.gradient(low, data).numpy(), [1, 0, 0, 0, 0, 1])
    jvp = tt.jvp(
        lambda x: tt.math.segment_max(x, [0, 0, 0, 1, 3, 3]),
        [data],
        [tt.constant([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])],
    )[1]
    np.testing.assert_array_equal(jvp.numpy(), [3.0, 8.0, 0.0, 16.0])  # the mean over ties


def test_segment_prod_gradient_is_exact_with_zeros():
    data = tt.constant([2.0, 0.0, 3.0, 0.0, 0.0, 5.0, 4.0, -1.0])
    ids = [0, 0, 0, 1, 1, 1, 2, 2]  # one zero, two zeros, none
    with tt.GradientTape() as tape:
        tape.watch(data)
        y = tt.reduce_sum(tt.math.segment_prod(data, ids))
    np.testing.assert_array_equal(tape.gradient(y, data).numpy(), [0, 6, 0, 0, 0, 0, -1, 4])


def test_sums_and_means_differentiate_through_dropped_ids():
    data = tt.constant(rng.standard_normal((4, 2)))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(data)
        mean = tt.math.unsorted_segment_mean(data, [1, -1, 1, 0], 3)
        total = tt.math.unsorted_segment_sum(data, tt.constant([1, -1, 1, 0]), 3)
    np.testing.assert_array_equal(
        tape.gradient(mean, data).numpy(), [[0.5] * 2, [0] * 2, [0.5] * 2, [1] * 2]
    )
    np.testing.assert_array_equal(
        tape.gradient(total, data).numpy(), [[1] * 2, [0] * 2, [1] * 2, [1] * 2]
    )


@pytest.mark.parametrize("dtype", [np.float16, np.complex64, np.complex128, np.int64])
def test_other_dtypes_agree_between_numpy_and_c(dtype):
    """Bit for bit, but complex products (C may contract them into fused multiply-adds)."""
    x = rng.standard_normal((5, 3)) * 2
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal((5, 3))
    x = tt.constant(x.astype(dtype))
    ids = np.array([1, 0, -1, 1, 3], np.int32)

    def f(x):
        results = [
            tt.math.unsorted_segment_sum(x, ids, 4),
            tt.math.unsorted_segment_prod(x, ids, 4),
            tt.gather_nd(x, [[1, 2], [0, 0]]),
            tt.scatter_nd([[1], [1]], x[:2], [3, 3]),
            tt.tensor_scatter_nd_update(x, [[0]], x[1:2]),
        ]
        if not x.dtype.is_complex:
            results += [
                tt.math.unsorted_segment_max(x, ids, 4),
                tt.math.unsorted_segment_min(x, ids, 4),
            ]
        return results

    for eager, compiled in zip(f(x), tt.function(f, backend="c")(x)):
        assert eager.dtype == compiled.dtype == dtype
        tolerance = 1e-6 if eager.dtype.is_complex else 0
        np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=tolerance, atol=0)


# --- bincount ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_matches_numpy_and_tensorflows_options(backend):
    arr = np.array([1, 4, 4, 0, 2, 4, 1])
    weights = rng.standard_normal(7)
    matrix = np.array([[1, 1, 3], [0, 2, 2]])

    def f(weights):
        return (
            tt.math.bincount(arr),
            tt.math.bincount(arr, minlength=8),
            tt.math.bincount(arr, maxlength=3),
            tt.math.bincount(arr, weights=weights),
            tt.math.bincount(arr, dtype=tt.float32),
            tt.bincount(matrix, axis=-1),
            tt.math.bincount(arr, binary_output=True),
        )

    counted, longer, shorter, weighted, floats, rows, binary = _run(f, backend)(weights)
    np.testing.assert_array_equal(counted.numpy(), np.bincount(arr))
    assert counted.dtype == tt.int32 and floats.dtype == tt.float32
    np.testing.assert_array_equal(longer.numpy(), np.bincount(arr, minlength=8))
    np.testing.assert_array_equal(shorter.numpy(), np.bincount(arr)[:3])
    np.testing.assert_allclose(weighted.numpy(), np.bincount(arr, weights), rtol=1e-12)
    np.testing.assert_array_equal(rows.numpy(), [[0, 2, 0, 1], [1, 0, 2, 0]])
    np.testing.assert_array_equal(binary.numpy(), np.bincount(arr) > 0)


def test_bincount_of_symbolic_values_compiles_with_a_known_length():
    f = tt.function(lambda a: tt.math.bincount(a, minlength=4, maxlength=4))
    np.testing.assert_array_equal(f(tt.constant([3, 3, 7, 0])).numpy(), [1, 0, 0, 2])
    # its length max(arr) + 1 known only when it runs: the function runs as Python
    counts = tt.function(lambda a: tt.math.bincount(a * 2))
    np.testing.assert_array_equal(counts(tt.constant([1, 0])).numpy(), [1, 0, 1])
    with pytest.raises(TypeError, match="arr must hold integers"):
        tt.math.bincount([1.0])
    with pytest.raises(ValueError, match="mutually exclusive"):
        tt.math.bincount([1], weights=[1.0], binary_output=True)
    assert tt.math.bincount(tt.zeros([0], tt.int32)).shape == (0,)


# --- batching (vectorized_map, vectorized jacobians) against Python loops -------------------


def test_batching_rules_with_batched_indices_match_a_python_loop():
    params = rng.standard_normal((4, 3, 2))
    tensors = rng.standard_normal((4, 3))
    indices = rng.integers(0, 3, (4, 2, 1))
    ids = rng.integers(-1, 3, (4, 3)).astype(np.int32)

    def one(p, t, i, s):
        return (
            tt.gather_nd(p, i),
            tt.scatter_nd(i, t[:2], [3]),
            tt.tensor_scatter_nd_update(t, i, t[1:]),
            tt.tensor_scatter_nd_add(t, i, [1.0, 2.0]),
            tt.math.unsorted_segment_sum(p, s, 3),
            tt.math.unsorted_segment_max(p, s, 3),
            tt.math.unsorted_segment_prod(t, s, 3),
            tt.math.bincount(tt.maximum(s, 0), minlength=3, maxlength=3),
        )

    batched = tt.vectorized_map(
        lambda e: one(*e), (params, tensors, indices, ids), fallback_to_while_loop=False
    )
    for k, result in enumerate(batched):
        looped = np.stack(
            [one(params[b], tensors[b], indices[b], ids[b])[k].numpy() for b in range(4)]
        )
        np.testing.assert_allclose(result.numpy(), looped, rtol=1e-13, err_msg=str(k))
    # the same elements, with the indices shared (unbatched)
    shared = tt.vectorized_map(
        lambda e: one(e[0], e[1], tt.constant(indices[0]), tt.constant(ids[0])),
        (params, tensors),
        fallback_to_while_loop=False,
    )
    for k, result in enumerate(shared):
        looped = np.stack(
            [one(params[b], tensors[b], indices[0], ids[0])[k].numpy() for b in range(4)]
        )
        np.testing.assert_allclose(result.numpy(), looped, rtol=1e-13, err_msg=str(k))


def test_jacobians_with_batch_dims_vectorize_as_loops_do():
    params = tt.constant(rng.standard_normal((2, 3, 2)))
    for function in (
        lambda p: tt.gather_nd(p, [[[1], [0]], [[2], [2]]], batch_dims=1),
        lambda p: tt.math.segment_max(tt.reshape(p, (6, 2)), [0, 0, 1, 1, 1, 3]),
    ):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(params)
            y = function(params)
        vectorized = tape.jacobian(y, params)
        np.testing.assert_allclose(
            vectorized.numpy(), tape.jacobian(y, params, experimental_use_pfor=False).numpy()
        )


def test_sizes_unknown_until_the_call_compile():
    f = tt.function(
        lambda p, i: (tt.gather_nd(p, i), tt.math.unsorted_segment_sum(p, i[:, 0], 3)),
        input_signature=[tt.TensorSpec([None, 2], tt.float64), tt.TensorSpec([None, 2], tt.int32)],
    )
    for n in (2, 5):
        p, indices = rng.standard_normal((n, 2)), rng.integers(0, 2, (n, 2)).astype(np.int32)
        gathered, summed = f(p, indices)
        np.testing.assert_array_equal(gathered.numpy(), p[indices[:, 0], indices[:, 1]])
        np.testing.assert_allclose(
            summed.numpy(), segment_reference(p, indices[:, 0], 3, np.sum, 0)
        )
    assert f.experimental_get_tracing_count() == 1
