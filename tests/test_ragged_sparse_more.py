"""The embedding lookups of sparse ids, more of TensorFlow's ops on RaggedTensors (size,
rank, expand_dims, gather, bincount, merge_dims, boolean_mask, bounding_shape of a list of
axes, row slices with a step, reductions over an outer ragged dimension, map_fn's output
signatures), tt.sparse's softmax, split, bincount, cross and cross_hashed, and
tt.strings.split of a matrix of strings.

Every expected value is what TensorFlow 2.21 printed for the same call (eagerly); gradients
are checked against central finite differences in float64; each op also runs in a
tt.function, compiled in both backends where its row splits or indices are constants of
the trace, and as Python where they are arguments that set the result's sizes."""

import numpy as np
import pytest

import tracer as tt

RA = [[1.0, 2.0, 3.0], [], [4.0, 5.0]]
R3 = [[[1.0, 2.0], [3.0]], [], [[4.0, 5.0, 6.0], [], [7.0]]]
IDS_INDICES = [[0, 0], [0, 1], [2, 0], [2, 1]]
SAFE_INDICES = [[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]]


def _table(dtype=np.float32):
    return tt.constant(np.arange(18, dtype=dtype).reshape(6, 3))


def _ids(values=(1, 5, 0, 3), shape=(6, 3), indices=IDS_INDICES):
    return tt.SparseTensor(indices, tt.constant(list(values), tt.int64), list(shape))


def _weights(values=(2.0, 0.5, 1.0, -1.0), shape=(6, 3), indices=IDS_INDICES, dtype=tt.float32):
    return tt.SparseTensor(indices, tt.constant(list(values), dtype), list(shape))


def _splits(rt):
    return [s.numpy().tolist() for s in rt.nested_row_splits]


def _flat(rt):
    return rt.flat_values.numpy().tolist()


def _finite_differences(loss, x, step=1e-6):
    grads = np.zeros_like(x)
    for k in range(x.size):
        bump = np.zeros(x.size)
        bump[k] = step
        bump = bump.reshape(x.shape)
        high, low = loss(tt.constant(x + bump)).numpy(), loss(tt.constant(x - bump)).numpy()
        grads.reshape(-1)[k] = (high - low) / (2 * step)
    return grads


def _check_gradient(loss, x, kind=None):
    """loss's gradient at x (float64) against finite differences; its type where given."""
    x_tensor = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(x_tensor)
        y = loss(x_tensor)
    grad = tape.gradient(y, x_tensor)
    if kind is not None:
        assert isinstance(grad, kind), type(grad)
    np.testing.assert_allclose(
        tt.convert_to_tensor(grad).numpy(), _finite_differences(loss, x), rtol=1e-6, atol=1e-8
    )


# --- embedding_lookup_sparse ---------------------------------------------------------------


def test_embedding_lookup_sparse_combines_as_tensorflow():
    """TF 2.21: params arange(18) as [6, 3]; ids rows 0: [1, 5], 2: [0, 3], dense shape [6, 3]
    (the result stops at the last row with ids, 2); weights [2, 0.5, 1, -1] (row 2's sum
    to 0: a weighted mean of 0)."""
    p, ids, w = _table(), _ids(), _weights()
    expected = {
        ("sum", False): [[18, 20, 22], [0, 0, 0], [9, 11, 13]],
        ("sum", True): [[13.5, 16, 18.5], [0, 0, 0], [-9, -9, -9]],
        ("mean", False): [[9, 10, 11], [0, 0, 0], [4.5, 5.5, 6.5]],
        ("mean", True): [[5.4, 6.4, 7.4], [0, 0, 0], [0, 0, 0]],
        ("sqrtn", False): [
            [12.727922, 14.142136, 15.556349],
            [0, 0, 0],
            [6.363961, 7.778175, 9.192388],
        ],  # fmt: skip
        ("sqrtn", True): [
            [6.548462, 7.761140, 8.973819],
            [0, 0, 0],
            [-6.363961, -6.363961, -6.363961],
        ],  # fmt: skip
    }
    for (combiner, weighted), values in expected.items():
        got = tt.nn.embedding_lookup_sparse(p, ids, w if weighted else None, combiner=combiner)
        np.testing.assert_allclose(got.numpy(), values, rtol=1e-6, err_msg=combiner)
    default = tt.nn.embedding_lookup_sparse(p, ids, None)  # the mean
    np.testing.assert_allclose(default.numpy(), expected[("mean", False)])


def test_embedding_lookup_max_norm_clips_each_embedding_whatever_the_ids_rank():
    """max_norm clips each embedding alone (the axes after the ids'), as TensorFlow clips the
    gathered rows: ids of rank 2, a scalar id, a table of scalars (each clipped to its
    magnitude). The values and the gradient are TF 2.21's, printed by tf.nn.embedding_lookup
    on the same inputs (a tf.Variable under a GradientTape)."""
    table = np.arange(12.0).reshape(4, 3)
    got = tt.nn.embedding_lookup(tt.constant(table), [[1, 2], [0, 3]], max_norm=1.0)
    want = [
        [[0.42426407, 0.56568542, 0.70710678], [0.49153915, 0.57346234, 0.65538554]],
        [[0.0, 0.4472136, 0.89442719], [0.5178918, 0.57543534, 0.63297887]],
    ]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-7)
    one = tt.nn.embedding_lookup(tt.constant(table), 3, max_norm=1.0)
    np.testing.assert_allclose(one.numpy(), [0.5178918, 0.57543534, 0.63297887], rtol=1e-7)
    scalars = tt.nn.embedding_lookup(tt.constant([-3.0, 0.5, 2.0]), [0, 1, 2], max_norm=1.0)
    np.testing.assert_array_equal(scalars.numpy(), [-1.0, 0.5, 1.0])
    v = tt.Variable(table)
    with tt.GradientTape() as tape:
        looked = tt.nn.embedding_lookup(v, [[1, 2], [0, 3]], max_norm=1.0)
        y = tt.reduce_sum(looked * np.arange(12.0).reshape(2, 2, 3))
    gradient = tt.convert_to_tensor(tape.gradient(y, v)).numpy()
    tf_gradient = [
        [2.68328157e00, 1.07331263e00, -5.36656315e-01],
        [-1.18793939e-01, -1.69705627e-02, 8.48528137e-02],
        [-3.79375856e-02, -3.29892049e-03, 3.13397446e-02],
        [0.0, 0.0, 0.0],
    ]
    np.testing.assert_allclose(gradient, tf_gradient, rtol=1e-7, atol=1e-14)


def test_embedding_lookup_sparse_partitions_max_norm_and_shapes():
    """TF 2.21: a list of params is one table cut into consecutive blocks ("div": ids 0-2 in
    the first, 3-5 in the second; tt.nn.embedding_lookup too, where blocks of sizes the
    partitioning does not give are an error); max_norm clips each embedding; int32 ids; ids of rank 3
    (rows by their first index); params of rank 3."""
    blocks = [
        tt.constant(np.arange(9, dtype=np.float32).reshape(3, 3)),
        tt.constant(100 + np.arange(9, dtype=np.float32).reshape(3, 3)),
    ]
    ids = tt.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]], tt.constant([0, 1, 4, 5], tt.int64), [3, 2])  # fmt: skip
    got = tt.nn.embedding_lookup_sparse(blocks, ids, None, combiner="sum")
    np.testing.assert_array_equal(got.numpy(), [[0, 1, 2], [106, 108, 110], [106, 107, 108]])
    three = [
        tt.constant(np.arange(9, dtype=np.float32).reshape(3, 3)),
        tt.constant(100 + np.arange(6, dtype=np.float32).reshape(2, 3)),
        tt.constant(200 + np.arange(6, dtype=np.float32).reshape(2, 3)),
    ]
    assert tt.nn.embedding_lookup(three, [0, 3, 5, 6]).numpy().tolist() == [
        [0, 1, 2], [100, 101, 102], [200, 201, 202], [203, 204, 205]
    ]  # fmt: skip
    uneven = [tt.zeros([4, 3]), tt.zeros([1, 3]), tt.zeros([2, 3])]  # ("div" gives 3, 2, 2)
    with pytest.raises(tt.errors.InvalidArgumentError, match="id 4 is outside its block"):
        tt.nn.embedding_lookup(uneven, [4])
    clipped = tt.nn.embedding_lookup_sparse(_table(), _ids(), None, combiner="sum", max_norm=5.0)
    np.testing.assert_allclose(
        clipped.numpy(),
        [[4.824132, 5.711427, 6.598722], [0, 0, 0], [2.589459, 3.877177, 5.164894]],
        rtol=1e-6,
    )
    weighted = tt.nn.embedding_lookup_sparse(_table(), _ids(), _weights(), "mean", max_norm=5.0)
    np.testing.assert_allclose(weighted.numpy()[0], [2.237619, 2.839342, 3.441064], rtol=1e-6)
    small = tt.SparseTensor([[0, 0], [1, 0]], tt.constant([1, 2], tt.int32), [2, 3])
    np.testing.assert_array_equal(
        tt.nn.embedding_lookup_sparse(_table(), small, None).numpy(), [[3, 4, 5], [6, 7, 8]]
    )
    deep = tt.SparseTensor([[0, 0, 0], [1, 0, 1]], tt.constant([1, 2], tt.int64), [2, 2, 3])
    np.testing.assert_array_equal(
        tt.nn.embedding_lookup_sparse(_table(), deep, None).numpy(), [[3, 4, 5], [6, 7, 8]]
    )
    cubes = tt.constant(np.arange(24, dtype=np.float32).reshape(6, 2, 2))
    got = tt.nn.embedding_lookup_sparse(cubes, _ids(), _weights(), combiner="mean")
    np.testing.assert_allclose(got.numpy()[0], [[7.2, 8.2], [9.2, 10.2]], rtol=1e-6)
    assert got.shape == (3, 2, 2)


def test_embedding_lookup_sparse_errors():
    """TF 2.21: unsorted rows are "segment ids are not increasing"; another combiner a
    ValueError."""
    unsorted = tt.SparseTensor([[2, 0], [0, 0]], tt.constant([1, 2], tt.int64), [3, 3])
    with pytest.raises(tt.errors.InvalidArgumentError, match="segment ids are not increasing"):
        tt.nn.embedding_lookup_sparse(_table(), unsorted, None)
    with pytest.raises(ValueError, match="combiner must be one of 'mean', 'sqrtn' or 'sum'"):
        tt.nn.embedding_lookup_sparse(_table(), _ids(), None, combiner="max")


def test_embedding_lookup_sparse_gradients():
    """TF 2.21 gives the params' gradient as IndexedSlices at the ids [1, 5, 0, 3] (values
    below, for sum((sqrtn lookup)**2)) and the weights' [-36.864006, 147.456, 0, 0] (for
    sum((mean lookup)**2)); each against finite differences in float64."""
    table = tt.Variable(_table())
    with tt.GradientTape() as tape:
        y = tt.reduce_sum(
            tt.nn.embedding_lookup_sparse(table, _ids(), _weights(), combiner="sqrtn") ** 2
        )
    grad = tape.gradient(y, table)
    assert isinstance(grad, tt.IndexedSlices)
    assert grad.indices.numpy().tolist() == [1, 5, 0, 3]
    np.testing.assert_allclose(
        grad.values.numpy(),
        [
            [12.705883, 15.058825, 17.411766],
            [3.176471, 3.764706, 4.352942],
            [-9, -9, -9],
            [9, 9, 9],
        ],  # fmt: skip
        rtol=1e-5,
    )
    weights = tt.constant([2.0, 0.5, 1.0, -1.0])
    with tt.GradientTape() as tape:
        tape.watch(weights)
        lookup = tt.nn.embedding_lookup_sparse(
            _table(), _ids(), tt.SparseTensor(IDS_INDICES, weights, [6, 3]), combiner="mean"
        )
        y = tt.reduce_sum(lookup**2)
    np.testing.assert_allclose(tape.gradient(y, weights).numpy(), [-36.864006, 147.456, 0, 0])

    rng = np.random.default_rng(0)
    params, r = rng.normal(size=(6, 3)), rng.normal(size=(3, 3))
    w = np.array([2.0, 0.5, 1.0, -1.0])
    for combiner in ("sum", "mean", "sqrtn"):
        _check_gradient(
            lambda q: tt.reduce_sum(
                tt.nn.embedding_lookup_sparse(q, _ids(), _weights(w, dtype=tt.float64), combiner)
                * r
            ),
            params,
            tt.IndexedSlices,
        )
        _check_gradient(
            lambda v: tt.reduce_sum(
                tt.nn.embedding_lookup_sparse(
                    tt.constant(params), _ids(), tt.SparseTensor(IDS_INDICES, v, [6, 3]), combiner
                )
                * r
            ),
            w + 0.25,
        )
        _check_gradient(
            lambda q: tt.reduce_sum(
                tt.nn.embedding_lookup_sparse(q, _ids(), None, combiner, max_norm=1.0) * r
            ),
            params,
        )


def test_safe_embedding_lookup_sparse_as_tensorflow():
    """TF 2.21: ids [2, -1 | -1 | (none) | 4, 1 | (none)] of dense shape [5, 2], weights
    [0.5, 1, 2, 0, 2]: negative ids and weights not above 0 are left out, an empty row is
    zeros or the embedding of `default_id`; ids of rank 3 give [2, 2, 3]."""
    p = _table()
    ids = _ids([2, -1, -1, 4, 1], [5, 2], SAFE_INDICES)
    w = _weights([0.5, 1.0, 2.0, 0.0, 2.0], [5, 2], SAFE_INDICES)
    zero, five = [0, 0, 0], [15, 16, 17]
    expected = {
        ("sum", None, None): [[6, 7, 8], zero, zero, [15, 17, 19], zero],
        ("sum", w, None): [[3, 3.5, 4], zero, zero, [6, 8, 10], zero],
        ("sum", w, 5): [[3, 3.5, 4], five, five, [6, 8, 10], five],
        ("mean", None, None): [[6, 7, 8], zero, zero, [7.5, 8.5, 9.5], zero],
        ("mean", w, 5): [[6, 7, 8], five, five, [3, 4, 5], five],
        ("sqrtn", None, None): [[6, 7, 8], zero, zero, [10.606602, 12.020815, 13.435029], zero],
        ("sqrtn", w, None): [[6, 7, 8], zero, zero, [3, 4, 5], zero],
    }
    for (combiner, weights, default), values in expected.items():
        got = tt.nn.safe_embedding_lookup_sparse(p, ids, weights, combiner, default_id=default)
        np.testing.assert_allclose(got.numpy(), values, rtol=1e-6, err_msg=combiner)
    clipped = tt.nn.safe_embedding_lookup_sparse(p, ids, None, "sum", default_id=5, max_norm=3.0)
    np.testing.assert_allclose(
        clipped.numpy()[:2], [[1.474617, 1.720387, 1.966157], [1.621687, 1.729800, 1.837912]],
        rtol=1e-6,
    )  # fmt: skip
    deep = tt.SparseTensor([[0, 0, 0], [0, 1, 1], [1, 1, 0]], tt.constant([2, 3, 1], tt.int64), [2, 2, 3])  # fmt: skip
    got = tt.nn.safe_embedding_lookup_sparse(p, deep, combiner="sum")
    assert got.shape == (2, 2, 3)
    np.testing.assert_array_equal(got.numpy(), [[[6, 7, 8], [9, 10, 11]], [zero, [3, 4, 5]]])
    blocks = [tt.constant(np.arange(9, dtype=np.float32).reshape(3, 3)), tt.constant(100 + np.arange(6, dtype=np.float32).reshape(2, 3))]  # fmt: skip
    got = tt.nn.safe_embedding_lookup_sparse(blocks, ids, combiner="sum")
    np.testing.assert_array_equal(got.numpy()[[0, 3]], [[6, 7, 8], [106, 108, 110]])


def test_safe_embedding_lookup_sparse_gradients():
    """TF 2.21's params gradient of sum((sqrtn lookup with default_id 5)**2) is IndexedSlices
    whose dense value is below; every combiner against finite differences."""
    table = tt.Variable(_table())
    ids = _ids([2, -1, -1, 4, 1], [5, 2], SAFE_INDICES)
    w = _weights([0.5, 1.0, 2.0, 0.0, 2.0], [5, 2], SAFE_INDICES)
    with tt.GradientTape() as tape:
        y = tt.reduce_sum(tt.nn.safe_embedding_lookup_sparse(table, ids, w, "sqrtn", 5) ** 2)
    grad = tape.gradient(y, table)
    assert isinstance(grad, tt.IndexedSlices)
    np.testing.assert_allclose(
        tt.convert_to_tensor(grad).numpy(),
        [[0, 0, 0], [6, 8, 10], [12, 14, 16], [0, 0, 0], [0, 0, 0], [90, 96, 102]],
    )
    rng = np.random.default_rng(1)
    params, r = rng.normal(size=(6, 3)), rng.normal(size=(5, 3))
    weights = np.array([0.5, 1.0, 2.0, 0.25, 2.0])
    for combiner in ("sum", "mean", "sqrtn"):
        _check_gradient(
            lambda q: tt.reduce_sum(
                tt.nn.safe_embedding_lookup_sparse(
                    q, ids, _weights(weights, [5, 2], SAFE_INDICES, tt.float64), combiner, 3
                )
                * r
            ),
            params,
            tt.IndexedSlices,
        )
        _check_gradient(
            lambda v: tt.reduce_sum(
                tt.nn.safe_embedding_lookup_sparse(
                    tt.constant(params), ids, tt.SparseTensor(SAFE_INDICES, v, [5, 2]), combiner
                )
                * r
            ),
            weights,
        )


def test_embedding_lookups_in_functions():
    """Constant ids compile in both backends; ids that are arguments: the safe lookup
    compiles (its rows are the dense shape's), the plain one's count of rows comes from the
    ids, so it runs as Python; all give the eager values."""
    p = _table()
    eager = tt.nn.embedding_lookup_sparse(p, _ids(), _weights(), "sqrtn").numpy()
    safe_ids = _ids([2, -1, -1, 4, 1], [5, 2], SAFE_INDICES)
    safe = tt.nn.safe_embedding_lookup_sparse(p, safe_ids, combiner="sqrtn").numpy()
    for backend in ("c", "interpreter"):
        inside = tt.function(
            lambda: tt.nn.embedding_lookup_sparse(_table(), _ids(), _weights(), "sqrtn"),
            backend=backend,
        )
        np.testing.assert_allclose(inside().numpy(), eager, rtol=1e-6)
        plain = tt.function(
            lambda q, i, w: tt.nn.embedding_lookup_sparse(q, i, w, "sqrtn"), backend=backend
        )
        np.testing.assert_allclose(plain(p, _ids(), _weights()).numpy(), eager, rtol=1e-6)
        lookup = tt.function(
            lambda q, i: tt.nn.safe_embedding_lookup_sparse(q, i, combiner="sqrtn"),
            backend=backend,
        )
        np.testing.assert_allclose(lookup(p, safe_ids).numpy(), safe, rtol=1e-6)


# --- ragged dispatch ---------------------------------------------------------------------


def test_size_rank_and_expand_dims_of_ragged_tensors():
    """TF 2.21: size counts the flat values, rank the dimensions; expand_dims at 0 or 1
    adds a uniform dimension (ragged rank + 1), after the last ragged one a dimension of the
    flat values."""
    ra, r3 = tt.ragged.constant(RA), tt.ragged.constant(R3)
    assert (tt.size(ra).numpy(), tt.size(ra).dtype, tt.rank(ra).numpy()) == (5, tt.int32, 2)
    assert (tt.size(r3, out_type=tt.int64).numpy(), tt.rank(r3).numpy()) == (7, 3)
    cases = {
        (0, 0): ((1, 3, None), [[0, 3], [0, 3, 3, 5]]),
        (0, 1): ((3, 1, None), [[0, 1, 2, 3], [0, 3, 3, 5]]),
        (0, 2): ((3, None, 1), [[0, 3, 3, 5]]),
        (0, -2): ((3, 1, None), [[0, 1, 2, 3], [0, 3, 3, 5]]),
        (1, 2): ((3, None, 1, None), [[0, 2, 2, 5], [0, 1, 2, 3, 4, 5], [0, 2, 3, 6, 6, 7]]),
        (1, 3): ((3, None, None, 1), [[0, 2, 2, 5], [0, 2, 3, 6, 6, 7]]),
    }
    for (which, axis), (shape, splits) in cases.items():
        got = tt.expand_dims([ra, r3][which], axis)
        assert (tuple(got.shape), _splits(got)) == (shape, splits), (which, axis)
    assert tt.expand_dims(ra, 0).uniform_row_length.numpy() == 3
    with pytest.raises(ValueError, match="out of bounds"):
        tt.expand_dims(ra, 3)


def test_gather_with_ragged_params_or_indices():
    """TF 2.21: rows of a ragged tensor by dense indices (2-D indices give uniform outer
    rows), rows of a dense or ragged tensor by ragged indices, and an index out of range."""
    ra, r3 = tt.ragged.constant(RA), tt.ragged.constant(R3)
    assert tt.gather(ra, [2, 0, 0, 1]).to_list() == [[4, 5], [1, 2, 3], [1, 2, 3], []]
    pairs = tt.gather(ra, [[2, 0], [0, 1]])
    assert _splits(pairs) == [[0, 2, 4], [0, 2, 5, 8, 8]]
    assert tt.gather(r3, [2, 0]).to_list() == [[[4, 5, 6], [], [7]], [[1, 2], [3]]]
    ids = tt.ragged.constant([[0, 4], [], [1, 1, 3], [5]])
    p = tt.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    got = tt.gather(p, ids)
    assert (tuple(got.shape), _splits(got)) == ((4, None, 2), [[0, 2, 2, 5, 6]])
    assert _flat(got) == [[0, 1], [8, 9], [2, 3], [2, 3], [6, 7], [10, 11]]
    assert tt.nn.embedding_lookup(p, ids).to_list() == got.to_list()
    vector = tt.constant([10, 20, 30, 40, 50, 60])
    assert tt.gather(vector, ids).to_list() == [[10, 50], [], [20, 20, 40], [60]]
    both = tt.gather(ra, tt.ragged.constant([[0, 2], [], [1]]))
    assert both.to_list() == [[[1, 2, 3], [4, 5]], [], [[]]]
    deep_ids = tt.ragged.constant([[[0], [4, 1]], [], [[1, 1, 3]]])
    assert _splits(tt.gather(p, deep_ids)) == [[0, 2, 2, 3], [0, 1, 3, 6]]
    with pytest.raises(
        tt.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not in \[0, 3\)"
    ):
        tt.gather(ra, [3])
    rng = np.random.default_rng(2)
    _check_gradient(
        lambda q: tt.reduce_sum(tt.reduce_sum(tt.gather(q, ids), axis=1) ** 2),
        rng.normal(size=(6, 2)),
        tt.IndexedSlices,
    )
    _check_gradient(
        lambda v: tt.reduce_sum(
            tt.gather(tt.RaggedTensor.from_row_splits(v, [0, 3, 3, 5]), [2, 0, 2]).flat_values ** 2
        ),
        rng.normal(size=5),
    )


def test_bag_of_words_mean():
    """TF 2.21: the mean of each row's embeddings, NaN for an empty row."""
    p = tt.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    ids = tt.ragged.constant([[0, 4], [], [1, 1, 3], [5]])
    got = tt.reduce_mean(tt.gather(p, ids), axis=1).numpy()
    np.testing.assert_allclose(got, [[4, 5], [np.nan, np.nan], [10 / 3, 13 / 3], [10, 11]])


def test_bincount_of_ragged_tensors():
    """TF 2.21: tt.math.bincount of [[1, 1, 3], [], [0, 2, 2, 2]]."""
    r = tt.ragged.constant([[1, 1, 3], [], [0, 2, 2, 2]])
    w = tt.ragged.constant([[1.0, 2, 3], [], [4.0, 5, 6, 7]])
    assert tt.math.bincount(r).numpy().tolist() == [1, 2, 3, 1]
    assert tt.math.bincount(r, minlength=5).numpy().tolist() == [1, 2, 3, 1, 0]
    assert tt.math.bincount(r, maxlength=2).numpy().tolist() == [1, 2]
    rows = tt.math.bincount(r, axis=-1)
    assert rows.dtype == tt.int32
    assert rows.numpy().tolist() == [[0, 2, 0, 1], [0, 0, 0, 0], [1, 0, 3, 0]]
    assert tt.math.bincount(r, axis=-1, minlength=6).numpy().tolist()[2] == [1, 0, 3, 0, 0, 0]
    binary = tt.math.bincount(r, axis=-1, binary_output=True).numpy().tolist()
    assert binary == [[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 0]]
    assert tt.math.bincount(r, weights=w).numpy().tolist() == [4, 3, 18, 3]
    weighted = tt.math.bincount(r, weights=w, axis=-1).numpy().tolist()
    assert weighted == [[0, 3, 0, 3], [0, 0, 0, 0], [4, 0, 18, 0]]
    assert tt.math.bincount(r, dtype=tt.int64).dtype == tt.int64
    _check_gradient(
        lambda v: tt.reduce_sum(
            tt.math.bincount(r, weights=tt.RaggedTensor.from_row_splits(v, r.row_splits), axis=-1)
            ** 2
        ),
        np.arange(1.0, 8.0),
    )


def test_merge_dims_bounding_shape_and_step_slices():
    """TF 2.21: merge_dims of [[[1, 2], [3]], [], [[4, 5, 6], [], [7]]] and of a ragged
    tensor of inner size 2; bounding_shape of a list of axes; rows and elements sliced with
    a step (numpy's slices, negative steps too)."""
    r3, ra = tt.ragged.constant(R3), tt.ragged.constant(RA)
    assert _splits(r3.merge_dims(0, 1)) == [[0, 2, 3, 6, 6, 7]]
    assert _splits(r3.merge_dims(1, 2)) == [[0, 3, 3, 7]]
    assert _splits(r3.merge_dims(-2, -1)) == [[0, 3, 3, 7]]
    assert r3.merge_dims(0, -1).numpy().tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert r3.merge_dims(1, 1) is r3
    wide = tt.RaggedTensor.from_row_lengths(np.arange(10, dtype=np.float32).reshape(5, 2), [2, 0, 3])  # fmt: skip
    assert wide.merge_dims(1, 2).to_list() == [[0, 1, 2, 3], [], [4, 5, 6, 7, 8, 9]]
    assert wide.merge_dims(0, 1).shape == (5, 2)
    with pytest.raises(ValueError, match=r"Expected outer_axis \(2\) to be less than"):
        r3.merge_dims(2, 1)
    assert r3.bounding_shape(axis=[0, 2]).numpy().tolist() == [3, 3]
    assert r3.bounding_shape(out_type=tt.int32).dtype == tt.int32
    assert wide.bounding_shape(axis=[2]).numpy().tolist() == [2]
    assert ra[::2].to_list() == [[1, 2, 3], [4, 5]]
    assert ra[::-1].to_list() == [[4, 5], [], [1, 2, 3]]
    assert ra[1::2].to_list() == [[]]
    assert _splits(r3[::2]) == [[0, 2, 5], [0, 2, 3, 6, 6, 7]]
    assert ra[:, ::2].to_list() == [[1, 3], [], [4]]
    assert ra[:, ::-1].to_list() == [[3, 2, 1], [], [5, 4]]
    assert r3[:, ::2].to_list() == [[[1, 2]], [], [[4, 5, 6], [7]]]


def test_ragged_boolean_mask():
    """TF 2.21: tt.ragged.boolean_mask of a matrix by a matrix mask (ragged rows), of rows
    by a vector mask, of a ragged tensor by a ragged mask, and of rank 3 (uniform rows
    between); tt.boolean_mask of a ragged tensor dispatches to it."""
    m = tt.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
    mask = tt.constant([[True, False, True, True], [False] * 4, [False, True, False, False]])
    got = tt.ragged.boolean_mask(m, mask)
    assert (_splits(got), _flat(got)) == ([[0, 3, 3, 4]], [0, 2, 3, 9])
    assert tt.ragged.boolean_mask(m, tt.constant([True, False, True])).shape == (2, 4)
    ra = tt.ragged.constant(RA)
    ragged_mask = tt.ragged.constant([[True, False, True], [], [False, True]])
    assert tt.ragged.boolean_mask(ra, ragged_mask).to_list() == [[1, 3], [], [5]]
    assert tt.boolean_mask(ra, tt.constant([True, False, True])).to_list() == [[1, 2, 3], [4, 5]]
    cube = tt.reshape(tt.range(8), [2, 2, 2])
    full = tt.constant([[[True, False], [True, True]], [[False, False], [False, True]]])
    got = tt.ragged.boolean_mask(cube, full)
    assert (_splits(got), _flat(got)) == ([[0, 2, 4], [0, 1, 3, 3, 4]], [0, 2, 3, 7])
    got = tt.ragged.boolean_mask(cube, tt.constant([[True, False], [True, True]]))
    assert (tuple(got.shape), _splits(got)) == ((2, None, 2), [[0, 1, 3]])
    r3 = tt.ragged.constant(R3)
    got = tt.ragged.boolean_mask(r3, r3 > 2.5)
    assert (_splits(got), _flat(got)) == ([[0, 2, 2, 5], [0, 0, 1, 4, 4, 5]], [3, 4, 5, 6, 7])
    _check_gradient(
        lambda q: tt.reduce_sum(tt.ragged.boolean_mask(q, mask).flat_values ** 2),
        np.random.default_rng(3).normal(size=(3, 4)),
    )


def test_reductions_over_an_outer_ragged_dimension():
    """TF 2.21: reductions of [[[1, 2], [3]], [], [[4, 5, 6], [], [7]]] over axis 1 (each
    row's rows, elementwise where present) and 0 (the rows' j-th rows), with keepdims, of
    several axes, and of ragged rank 3 and of an inner dimension."""
    r3 = tt.ragged.constant(R3)
    cases = {
        (tt.reduce_sum, 1): ([[0, 2, 2, 5]], [4, 2, 11, 5, 6]),
        (tt.reduce_max, 1): ([[0, 2, 2, 5]], [3, 2, 7, 5, 6]),
        (tt.reduce_min, 1): ([[0, 2, 2, 5]], [1, 2, 4, 5, 6]),
        (tt.reduce_mean, 1): ([[0, 2, 2, 5]], [2, 2, 5.5, 5, 6]),
        (tt.reduce_sum, 0): ([[0, 3, 4, 5]], [5, 7, 6, 3, 7]),
        (tt.reduce_max, 0): ([[0, 3, 4, 5]], [4, 5, 6, 3, 7]),
        (tt.reduce_mean, 0): ([[0, 3, 4, 5]], [2.5, 3.5, 6, 3, 7]),
        (tt.reduce_prod, 0): ([[0, 3, 4, 5]], [4, 10, 6, 3, 7]),
    }
    for (reduce, axis), (splits, flat) in cases.items():
        got = reduce(r3, axis=axis)
        assert (_splits(got), _flat(got)) == (splits, flat), (reduce.__name__, axis)
    assert _flat(tt.reduce_any(r3 > 3.0, axis=1)) == [False, False, True, True, True]
    kept = tt.reduce_sum(r3, axis=1, keepdims=True)
    assert (tuple(kept.shape), _splits(kept)) == ((3, 1, None), [[0, 1, 2, 3], [0, 2, 2, 5]])
    kept = tt.reduce_sum(r3, axis=0, keepdims=True)
    assert (tuple(kept.shape), _splits(kept)) == ((1, 3, None), [[0, 3], [0, 3, 4, 5]])
    assert tt.reduce_sum(r3, axis=[0, 1]).numpy().tolist() == [15, 7, 6]
    assert tt.reduce_sum(r3, axis=[0, 2]).numpy().tolist() == [18, 3, 7]
    r4 = tt.ragged.constant([[[[1.0], [2.0, 3.0]], [[4.0]]], [[[5.0, 6.0]]]])
    got = tt.reduce_sum(r4, axis=1)
    assert (_splits(got), _flat(got)) == ([[0, 2, 3], [0, 1, 3, 5]], [5, 2, 3, 5, 6])
    got = tt.reduce_sum(r4, axis=0)
    assert (_splits(got), _flat(got)) == ([[0, 2, 3], [0, 2, 4, 5]], [6, 6, 2, 3, 4])
    inner = tt.RaggedTensor.from_nested_row_lengths(
        np.arange(14, dtype=np.float32).reshape(7, 2), [[2, 0, 1], [1, 2, 4]]
    )
    got = tt.reduce_sum(inner, axis=0)
    assert (tuple(got.shape), _splits(got)) == ((2, None, 2), [[0, 4, 6]])
    assert _flat(got)[:2] == [[6, 8], [8, 9]]
    values = np.random.default_rng(4).normal(size=7)
    weights = tt.constant(np.arange(1.0, 6.0))
    for reduce in (tt.reduce_sum, tt.reduce_max, tt.reduce_mean, tt.reduce_prod):
        for axis in (0, 1):
            _check_gradient(
                lambda v: tt.reduce_sum(
                    reduce(
                        tt.RaggedTensor.from_nested_row_splits(
                            v, [[0, 2, 2, 5], [0, 2, 3, 6, 6, 7]]
                        ),
                        axis=axis,
                    ).flat_values
                    * weights
                ),
                values,
            )


def test_map_fn_output_signatures():
    """TF 2.21: map_fn over the rows of [[1, 2, 3], [], [4, 5]] with a dtype (a dense
    result), a TensorSpec, a RaggedTensorSpec (ragged rows), a tuple; over a dense vector
    with a RaggedTensorSpec; a dtype that is not fn's an InvalidArgumentError."""
    ra = tt.ragged.constant(RA)
    sums = tt.map_fn(tt.reduce_sum, ra, fn_output_signature=tt.float32)
    assert sums.numpy().tolist() == [6, 0, 9]
    spec = tt.TensorSpec([], tt.float32)
    assert tt.map_fn(tt.reduce_sum, ra, fn_output_signature=spec).numpy().tolist() == [6, 0, 9]
    assert tt.map_fn(tt.reduce_sum, ra, dtype=tt.float32).numpy().tolist() == [6, 0, 9]
    doubled = tt.map_fn(
        lambda row: row * 2.0, ra, fn_output_signature=tt.RaggedTensorSpec([None], tt.float32)
    )
    assert doubled.to_list() == [[2, 4, 6], [], [8, 10]]
    assert tt.map_fn(lambda row: row * 2.0, ra).to_list() == [[2, 4, 6], [], [8, 10]]
    ranges = tt.map_fn(
        tt.range, tt.constant([3, 0, 2]), fn_output_signature=tt.RaggedTensorSpec([None], tt.int32)
    )
    assert (ranges.to_list(), ranges.dtype) == ([[0, 1, 2], [], [0, 1]], tt.int32)
    r3 = tt.ragged.constant(R3)
    rows = tt.map_fn(
        lambda r: tt.reduce_sum(r, axis=1),
        r3,
        fn_output_signature=tt.RaggedTensorSpec([None], tt.float32),
    )
    assert rows.to_list() == [[3, 3], [], [15, 0, 7]]
    pair = tt.map_fn(
        lambda r: (tt.reduce_sum(r), tt.size(r)), ra, fn_output_signature=(tt.float32, tt.int32)
    )
    assert [p.numpy().tolist() for p in pair] == [[6, 0, 9], [3, 0, 2]]
    both = tt.map_fn(
        lambda r: tt.stack([tt.reduce_sum(r), tt.reduce_max(r)]),
        ra,
        fn_output_signature=tt.TensorSpec([2], tt.float32),
    )
    assert both.numpy().tolist() == [[6, 3], [0, -np.inf], [9, 5]]
    with pytest.raises(tt.errors.InvalidArgumentError, match="int32"):
        tt.map_fn(tt.reduce_sum, ra, fn_output_signature=tt.int32)
    _check_gradient(
        lambda v: tt.reduce_sum(
            tt.map_fn(
                tt.reduce_sum,
                tt.RaggedTensor.from_row_splits(v, [0, 3, 3, 5]),
                fn_output_signature=tt.float64,
            )
            ** 2
        ),
        np.array([1.0, -2.0, 0.5, 3.0, 4.0]),
    )


def test_ragged_ops_in_functions():
    """Each with constant row splits compiles in both backends to the eager value; with
    splits that are arguments, those whose sizes depend on them run as Python."""
    cases = {
        "size_rank": lambda r: (tt.size(r), tt.rank(r)),
        "expand_dims": lambda r: tt.expand_dims(r, 2).flat_values,
        "merge_dims": lambda r: r.merge_dims(1, 2).row_splits,
        "bounding_shape": lambda r: r.bounding_shape(axis=[0, 2]),
        "gather": lambda r: tt.gather(r, [2, 0]).flat_values,
        "reduce_outer": lambda r: tt.reduce_sum(r, axis=1).flat_values,
        "reduce_rows": lambda r: tt.reduce_max(r, axis=0).flat_values,
        "map_fn": lambda r: tt.map_fn(tt.reduce_sum, r, fn_output_signature=tt.float32),
        "step": lambda r: r[::2].flat_values,
    }
    for name, fn in cases.items():
        eager = tt.nest.map_structure(lambda t: t.numpy().tolist(), fn(tt.ragged.constant(R3)))
        for backend in ("c", "interpreter"):
            inside = tt.function(lambda fn=fn: fn(tt.ragged.constant(R3)), backend=backend)
            got = tt.nest.map_structure(lambda t: t.numpy().tolist(), inside())
            assert got == eager, (name, backend)
    argument = tt.function(lambda r: tt.map_fn(tt.reduce_sum, r, fn_output_signature=tt.float32))
    assert argument(tt.ragged.constant(RA)).numpy().tolist() == [6, 0, 9]
    assert argument(tt.ragged.constant([[1.0], [2.0, 3.0]])).numpy().tolist() == [1, 5]


# --- tt.sparse -------------------------------------------------------------------------


SP_INDICES = [[0, 1], [1, 0], [1, 3], [3, 2]]


def _sp(values=(1.5, -2.0, 3.0, 4.0), dtype=tt.float32):
    return tt.SparseTensor(SP_INDICES, tt.constant(list(values), dtype), [4, 4])


def test_sparse_softmax():
    """TF 2.21: the softmax of each row's entries (the implicit zeros take no part), of a
    tensor of rank 3 by its last dimension; its gradient [0, -0.00664806, 0.00664786, 0] of
    sum(softmax * [1, 2, 3, 4]); rank 1 refused."""
    got = tt.sparse.softmax(_sp())
    assert got.indices.numpy().tolist() == SP_INDICES
    np.testing.assert_allclose(got.values.numpy(), [1, 0.006692851, 0.99330717, 1], rtol=1e-6)
    cube = tt.SparseTensor(
        [[0, 0, 1], [0, 0, 2], [0, 1, 0], [1, 1, 1], [1, 1, 3]], [1.0, 2.0, 3.0, 4.0, 0.5], [2, 2, 4]
    )  # fmt: skip
    np.testing.assert_allclose(
        tt.sparse.softmax(cube).values.numpy(),
        [0.26894143, 0.7310586, 1.0, 0.9706877, 0.02931223],
        rtol=1e-6,
    )
    big = tt.SparseTensor([[0, 0], [0, 2]], [1000.0, 1001.0], [1, 3])
    np.testing.assert_allclose(tt.sparse.softmax(big).values.numpy(), [0.26894143, 0.7310586], 1e-6)
    values = tt.constant([1.5, -2.0, 3.0, 4.0])
    with tt.GradientTape() as tape:
        tape.watch(values)
        y = tt.reduce_sum(
            tt.sparse.softmax(tt.SparseTensor(SP_INDICES, values, [4, 4])).values
            * tt.constant([1.0, 2.0, 3.0, 4.0])
        )
    np.testing.assert_allclose(
        tape.gradient(y, values).numpy(), [0, -0.00664806, 0.00664786, 0], atol=1e-7
    )
    _check_gradient(
        lambda v: tt.reduce_sum(
            tt.sparse.softmax(tt.SparseTensor(SP_INDICES, v, [4, 4])).values ** 3
        ),
        np.array([0.5, -1.0, 2.0, 0.25]),
    )
    with pytest.raises(tt.errors.InvalidArgumentError, match="rank >= 2"):
        tt.sparse.softmax(tt.SparseTensor([[0], [2]], [1.0, 2.0], [3]))


def test_sparse_split():
    """TF 2.21: split along axis 1 or 0 into 2 or 3 parts (the first parts one longer),
    each part's entries in the input's order; more parts than the dimension refused."""
    parts = tt.sparse.split(sp_input=_sp(), num_split=2, axis=1)
    assert [p.indices.numpy().tolist() for p in parts] == [[[0, 1], [1, 0]], [[1, 1], [3, 0]]]
    assert [p.values.numpy().tolist() for p in parts] == [[1.5, -2.0], [3.0, 4.0]]
    assert [p.shape.as_list() for p in parts] == [[4, 2], [4, 2]]
    parts = tt.sparse.split(sp_input=_sp(), num_split=3, axis=1)
    assert [p.shape.as_list() for p in parts] == [[4, 2], [4, 1], [4, 1]]
    assert [p.indices.numpy().tolist() for p in parts] == [[[0, 1], [1, 0]], [[3, 0]], [[1, 0]]]
    parts = tt.sparse.split(sp_input=_sp(), num_split=3, axis=0)
    assert [p.values.numpy().tolist() for p in parts] == [[1.5, -2.0, 3.0], [], [4.0]]
    assert parts[2].indices.numpy().tolist() == [[0, 2]]
    unordered = tt.SparseTensor([[1, 0], [0, 2], [0, 1]], [1.0, 2.0, 3.0], [2, 3])
    first = tt.sparse.split(sp_input=unordered, num_split=2, axis=-1)[0]
    assert first.indices.numpy().tolist() == [[1, 0], [0, 1]]
    with pytest.raises(tt.errors.InvalidArgumentError, match="between 1 and the splitting"):
        tt.sparse.split(sp_input=_sp(), num_split=5, axis=1)
    _check_gradient(
        lambda v: tt.reduce_sum(
            tt.sparse.split(sp_input=tt.SparseTensor(SP_INDICES, v, [4, 4]), num_split=2, axis=1)[
                1
            ].values
            ** 2
        ),
        np.array([0.5, -1.0, 2.0, 0.25]),
    )


COUNTS = [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1]]


def _counts(dtype=tt.int64):
    return tt.SparseTensor(COUNTS, tt.constant([1, 3, 1, 0, 4], dtype), [3, 3])


def _entries(sp):
    return sp.shape.as_list(), sp.indices.numpy().tolist(), sp.values.numpy().tolist()


def test_sparse_bincount():
    """TF 2.21: tt.sparse.bincount of sparse, dense and ragged values, over all of them or
    each row, with minlength, maxlength, binary_output and sparse weights; the result's
    dtype is the values' (or the weights')."""
    assert _entries(tt.sparse.bincount(_counts())) == ([5], [[0], [1], [3], [4]], [1, 2, 1, 1])
    rows = tt.sparse.bincount(_counts(), axis=-1)
    assert rows.dtype == tt.int64
    assert _entries(rows) == ([3, 5], [[0, 1], [0, 3], [2, 0], [2, 4]], [2, 1, 1, 1])
    binary = tt.sparse.bincount(_counts(), axis=-1, minlength=6, binary_output=True)
    assert _entries(binary) == ([3, 6], [[0, 1], [0, 3], [2, 0], [2, 4]], [1, 1, 1, 1])
    assert _entries(tt.sparse.bincount(_counts(), maxlength=3)) == ([3], [[0], [1]], [1, 2])
    capped = tt.sparse.bincount(_counts(), maxlength=3, axis=-1)
    assert _entries(capped) == ([3, 3], [[0, 1], [2, 0]], [2, 1])
    weights = tt.SparseTensor(COUNTS, [1.0, 2.0, 3.0, 4.0, 5.0], [3, 3])
    weighted = tt.sparse.bincount(_counts(), weights=weights, axis=-1)
    assert weighted.dtype == tt.float32
    assert _entries(weighted)[2] == [4.0, 2.0, 4.0, 5.0]
    dense = tt.sparse.bincount(tt.constant([[1, 2, 2], [0, 0, 5]]), axis=-1)
    assert dense.dtype == tt.int32
    assert _entries(dense) == ([2, 6], [[0, 1], [0, 2], [1, 0], [1, 5]], [1, 2, 2, 1])
    ragged = tt.sparse.bincount(tt.ragged.constant([[1, 2, 2], [], [0, 0, 5]]), axis=-1)
    assert _entries(ragged) == ([3, 6], [[0, 1], [0, 2], [2, 0], [2, 5]], [1, 2, 2, 1])
    deep = tt.SparseTensor([[0, 0, 0], [1, 1, 1]], tt.constant([4, 2], tt.int64), [2, 2, 2])
    assert _entries(tt.sparse.bincount(deep, axis=-1)) == ([2, 5], [[0, 4], [1, 2]], [1, 1])
    with pytest.raises(ValueError, match="must be a SparseTensor if `values` is a SparseTensor"):
        tt.sparse.bincount(_counts(), weights=tt.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
    with pytest.raises(ValueError, match="Only 0 and -1"):
        tt.sparse.bincount(_counts(), axis=1)
    negative = tt.SparseTensor([[0, 0], [1, 1]], tt.constant([-1, 2], tt.int64), [2, 2])
    with pytest.raises(tt.errors.InvalidArgumentError, match="non-negative"):
        tt.sparse.bincount(negative)
    _check_gradient(
        lambda w: tt.reduce_sum(
            tt.sparse.bincount(
                _counts(), weights=tt.SparseTensor(COUNTS, w, [3, 3]), axis=-1
            ).values
            ** 2
        ),
        np.array([1.0, 2.0, -3.0, 0.5, 2.5]),
    )


def _color():
    return tt.SparseTensor([[0, 0], [1, 0], [1, 1]], ["red", "blue", "green"], [3, 2])


def _shape():
    return tt.SparseTensor([[0, 0], [1, 0], [2, 0]], ["round", "flat", "tall"], [3, 1])


def test_sparse_cross():
    """TF 2.21: crosses of sparse and dense string and integer features, the first input's
    feature varying slowest, a row with no feature in an input left empty."""
    got = tt.sparse.cross([_color(), _shape()])
    assert got.indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1]]
    assert got.values.numpy().tolist() == [b"red_X_round", b"blue_X_flat", b"green_X_flat"]
    letters = tt.constant([["x"], ["y"], ["z"]])
    got = tt.sparse.cross([_color(), letters], separator="#")
    assert got.values.numpy().tolist() == [b"red#x", b"blue#y", b"green#y"]
    got = tt.sparse.cross([_color(), _shape(), letters])
    assert got.values.numpy().tolist()[0] == b"red_X_round_X_x"
    pairs = tt.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0]], list("abcde"), [3, 2])
    got = tt.sparse.cross([pairs, _color()])
    assert got.shape.as_list() == [3, 4]
    assert got.values.numpy().tolist() == [
        b"a_X_red", b"b_X_red", b"c_X_blue", b"c_X_green", b"d_X_blue", b"d_X_green"
    ]  # fmt: skip
    numbers = tt.SparseTensor([[0, 0], [1, 0], [2, 0]], tt.constant([1, 22, 333], tt.int64), [3, 1])
    got = tt.sparse.cross([_color(), numbers])
    assert got.values.numpy().tolist() == [b"red_X_1", b"blue_X_22", b"green_X_22"]
    dense = tt.sparse.cross([letters, tt.constant([["a", "b"], ["c", "d"], ["e", "f"]])])
    assert dense.values.numpy().tolist() == [b"x_X_a", b"x_X_b", b"y_X_c", b"y_X_d", b"z_X_e", b"z_X_f"]  # fmt: skip
    with pytest.raises(TypeError, match="All inputs must be Tensor or SparseTensor"):
        tt.sparse.cross([tt.ragged.constant([["a"]]), letters])


def test_sparse_cross_hashed():
    """TF 2.21's hashes: Fingerprint64 of each string (an integer as it is) folded from the
    hash key 0xDECAFCAFFE by FingerprintCat64, modulo num_buckets or 2**63 - 1."""
    got = tt.sparse.cross_hashed([_color(), _shape()], num_buckets=10)
    assert got.dtype == tt.int64
    assert got.indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1]]
    assert got.values.numpy().tolist() == [8, 4, 6]
    unbounded = tt.sparse.cross_hashed([_color(), _shape()]).values.numpy().tolist()
    assert unbounded == [8328738797681390851, 1421183574172048674, 5790049366020248066]
    single = tt.sparse.cross_hashed([_color()]).values.numpy().tolist()
    assert single == [9024320473261822449, 9080384593095976672, 4174634085120104593]
    numbers = tt.SparseTensor([[0, 0], [1, 0], [2, 0]], tt.constant([1, 22, 333], tt.int64), [3, 1])
    mixed = tt.sparse.cross_hashed([_color(), numbers]).values.numpy().tolist()
    assert mixed == [2692034390758589804, 6778863745907701236, 2920023674655049916]
    keyed = tt.sparse.cross_hashed([_color(), _shape()], num_buckets=10, hash_key=123)
    assert keyed.values.numpy().tolist() == [6, 1, 6]
    letters = tt.constant([["x"], ["y"], ["z"]])
    dense = tt.sparse.cross_hashed([_color(), letters], num_buckets=1000)
    assert dense.values.numpy().tolist() == [360, 365, 148]
    three = tt.sparse.cross_hashed([_color(), _shape(), letters]).values.numpy().tolist()
    assert three == [1474906336892142042, 6290845322732917709, 1648659733020349710]


def test_sparse_ops_in_functions():
    """Constant indices compile in both backends to the eager values; indices that are
    arguments make the functions whose entries depend on them run as Python."""
    cases = {
        "softmax": lambda: tt.sparse.softmax(_sp()).values,
        "split": lambda: tt.sparse.split(sp_input=_sp(), num_split=2, axis=1)[1].values,
        "bincount": lambda: tt.sparse.bincount(_counts(), axis=-1).values,
        "cross": lambda: tt.sparse.cross([_color(), _shape()]).values,
        "cross_hashed": lambda: tt.sparse.cross_hashed([_color(), _shape()], 10).values,
    }
    for name, fn in cases.items():
        eager = fn().numpy()
        for backend in ("c", "interpreter"):
            got = tt.function(fn, backend=backend)().numpy()
            if name == "softmax":
                np.testing.assert_allclose(got, eager, rtol=1e-6)
            else:
                assert got.tolist() == eager.tolist(), (name, backend)
    softmax = tt.function(lambda s: tt.sparse.softmax(s).values, backend="c")
    np.testing.assert_allclose(softmax(_sp()).numpy(), [1, 0.006692851, 0.99330717, 1], rtol=1e-6)
    split = tt.function(lambda s: tt.sparse.split(sp_input=s, num_split=2, axis=1)[0].values)
    assert split(_sp()).numpy().tolist() == [1.5, -2.0]
    crossed = tt.function(lambda a, b: tt.sparse.cross_hashed([a, b], num_buckets=10).values)
    assert crossed(_color(), _shape()).numpy().tolist() == [8, 4, 6]


# --- tt.strings.split of a matrix ----------------------------------------------------------


def test_strings_split_of_a_matrix():
    """TF 2.21: the parts of a matrix of strings are a RaggedTensor of ragged rank 2 whose
    second dimension is uniform (shape [2, 2, None]); of rank 3, ragged rank 3; of a ragged
    tensor of strings, a ragged dimension more; in a function, as eagerly."""
    strings = tt.constant([["a b", "c"], ["", "d e f"]])
    got = tt.strings.split(strings)
    assert (tuple(got.shape), _splits(got)) == ((2, 2, None), [[0, 2, 4], [0, 2, 3, 3, 6]])
    assert _flat(got) == [b"a", b"b", b"c", b"d", b"e", b"f"]
    got = tt.strings.split(strings, sep=" ", maxsplit=1)
    assert _flat(got) == [b"a", b"b", b"c", b"", b"d", b"e f"]
    deep = tt.strings.split(tt.constant([[["a b"], ["c"]]]))
    assert (tuple(deep.shape), _splits(deep)) == ((1, 2, 1, None), [[0, 2], [0, 1, 2], [0, 2, 3]])
    empty = tt.strings.split(tt.zeros([2, 0], tt.string))
    assert (tuple(empty.shape), _splits(empty)) == ((2, 0, None), [[0, 0, 0], [0]])
    assert _splits(tt.strings.bytes_split(strings)) == [[0, 2, 4], [0, 3, 4, 4, 9]]
    codes = tt.strings.unicode_decode(strings, "UTF-8")
    assert _flat(codes) == [97, 32, 98, 99, 100, 32, 101, 32, 102]
    ragged = tt.strings.split(tt.ragged.constant([["a b", "c"], ["d e"]]))
    assert (tuple(ragged.shape), _splits(ragged)) == ((2, None, None), [[0, 2, 3], [0, 2, 3, 5]])
    for backend in ("c", "interpreter"):
        inside = tt.function(
            lambda: tt.strings.split(tt.constant([["a b", "c"], ["", "d e f"]])), backend=backend
        )
        assert _splits(inside()) == [[0, 2, 4], [0, 2, 3, 3, 6]]
        argument = tt.function(lambda s: tt.strings.split(s), backend=backend)
        assert _splits(argument(strings)) == [[0, 2, 4], [0, 2, 3, 3, 6]]
