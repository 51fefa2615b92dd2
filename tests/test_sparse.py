"""tt.SparseTensor and tt.sparse: values against TensorFlow 2.21's, SparseTensors through
compiled functions (a trace per dense shape; the count of entries generalized as any
size), gradients reaching the values, and the errors of what tracer refuses. Their
derivatives in every backend are the catalogue's (tests/catalogue/sparse.py)."""

import numpy as np
import pytest

import tracer as tt

# Printed by TensorFlow 2.21 for the computations of `_computed` (indices, values and
# dense_shape of a SparseTensor; a dense result as its list)
TENSORFLOW = {
    "from_dense": {"indices": [[0, 0], [0, 3], [2, 2]], "values": [1, 8, 3], "dense_shape": [3, 4]},
    "to_dense": [
        [0, 0, 0, 10, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 20, 0, 0, 0, 0, 0],
    ],
    "to_dense_default": [[1, -1, -1, 8], [-1, -1, -1, -1], [-1, -1, 3, -1]],
    "add_sparse": {
        "indices": [[0, 2], [3, 0], [3, 4]],
        "values": [87, 38, 2],
        "dense_shape": [4, 10],
    },
    "add_threshold": {"indices": [[1, 1], [3, 4]], "values": [5, 2], "dense_shape": [4, 10]},
    "add_dense": [
        [1, 1, 32, 1, 1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 3, 1, 1, 1, 1, 1],
    ],
    "matmul": [[78.0, -26.0], [162.0, -19.0]],
    "matmul_adjoint_a": [[90.0, -30.0], [154.0, -21.0]],
    "matmul_adjoint_b": [[13.0, -26.0], [77.0, 56.0]],
    "dense_matmul_sparse": [[15.0, 69.0], [-30.0, 44.0]],
    "dense_matmul_sparse_adjoint": [[78.0, 162.0], [-26.0, -19.0]],
    "concat": {
        "indices": [[0, 2], [0, 12], [3, 4], [3, 10]],
        "values": [31, 56, 2, 38],
        "dense_shape": [4, 20],
    },
    "concat_expand": {
        "indices": [[0, 3], [2, 4], [3, 0], [3, 3], [5, 2]],
        "values": [10, 20, 1, 8, 3],
        "dense_shape": [6, 10],
    },
    "slice": {
        "indices": [[0, 1], [0, 11], [3, 3], [3, 9]],
        "values": [31, 56, 2, 38],
        "dense_shape": [4, 13],
    },
    "slice_past_end": {"indices": [[1, 2]], "values": [20], "dense_shape": [2, 8]},
    "map_values": {
        "indices": [[0, 0], [0, 3], [2, 2]],
        "values": [6, 13, 8],
        "dense_shape": [3, 4],
    },
    "map_values_two": {
        "indices": [[0, 0], [0, 3], [2, 2]],
        "values": [1, 64, 9],
        "dense_shape": [3, 4],
    },
    "times_scalar": {"indices": [[0, 3], [2, 4]], "values": [20, 40], "dense_shape": [3, 10]},
    "times_dense": {"indices": [[0, 3], [2, 4]], "values": [30, 80], "dense_shape": [3, 10]},
    "divide_dense": {
        "indices": [[0, 1], [1, 0], [1, 1]],
        "values": [6.5, 3.75, 4.25],
        "dense_shape": [2, 2],
    },
    "reorder": {
        "indices": [[0, 1], [1, 0], [2, 2]],
        "values": [-2.0, 1.5, 4.0],
        "dense_shape": [3, 3],
    },
    "transpose": {"indices": [[3, 0], [4, 2]], "values": [10, 20], "dense_shape": [10, 3]},
    "transpose_3d": {
        "indices": [[1, 1, 0], [2, 0, 1]],
        "values": [2.0, 1.0],
        "dense_shape": [3, 2, 2],
    },
    "reshape": {"indices": [[0, 3], [4, 0]], "values": [10, 20], "dense_shape": [5, 6]},
    "expand_dims": {
        "indices": [[0, 0, 3], [2, 0, 4]],
        "values": [10, 20],
        "dense_shape": [3, 1, 10],
    },
    "eye": {"indices": [[0, 0], [1, 1]], "values": [1.0, 1.0], "dense_shape": [2, 3]},
    "retain": {"indices": [[0, 0], [2, 2]], "values": [1, 3], "dense_shape": [3, 4]},
    "fill_empty_rows": [
        {"indices": [[0, 3], [1, 0], [2, 4]], "values": [10, 7, 20], "dense_shape": [3, 10]},
        [False, True, False],
    ],
    "to_indicator": [[False, True, False, True], [False, False, True, False]],
    "reduce_sum": 12,
    "reduce_sum_axis": [[9], [0], [3]],
    "reduce_sum_sparse": {"indices": [[0], [2], [3]], "values": [1, 3, 8], "dense_shape": [4]},
    "reduce_max": [-3, 0],
    "reduce_max_float": 2.0,
    "maximum": {"indices": [[0, 0], [0, 3], [2, 2]], "values": [1, 8, 3], "dense_shape": [3, 4]},
    "minimum": {"indices": [[0, 0], [0, 3], [2, 2]], "values": [-1, -8, -3], "dense_shape": [3, 4]},
    "maximum_union": {
        "indices": [[0, 0], [0, 1], [1, 1], [1, 2]],
        "values": [3.0, 0.0, 0.0, 0.5],
        "dense_shape": [2, 3],
    },
    "minimum_union": {
        "indices": [[0, 0], [0, 1], [1, 1], [1, 2]],
        "values": [1.0, -1.0, -2.0, 0.0],
        "dense_shape": [2, 3],
    },
    "segment_sum": [[10.0, -1.0], [0.0, 0.0], [6.0, -2.0]],
    "segment_mean": [[5.0, -0.5], [0.0, 0.0], [6.0, -2.0]],
    "segment_sqrt_n": [[7.071067810058594, -0.7071067690849304], [0.0, 0.0], [6.0, -2.0]],
}


def _shown(value):
    if isinstance(value, tt.SparseTensor):
        return {
            "indices": value.indices.numpy().tolist(),
            "values": value.values.numpy().tolist(),
            "dense_shape": value.dense_shape.numpy().tolist(),
        }
    if isinstance(value, tuple):
        return [_shown(v) for v in value]
    return value.numpy().tolist()


def _computed():
    sparse, st = tt.sparse, tt.SparseTensor
    st1 = st(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    st2 = sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])
    a = st(indices=[[0, 2], [3, 4]], values=[31, 2], dense_shape=[4, 10])
    b = st(indices=[[0, 2], [3, 0]], values=[56, 38], dense_shape=[4, 10])
    c = st(indices=([0, 1], [1, 0], [1, 1]), values=[13.0, 15.0, 17.0], dense_shape=(2, 2))
    m = tt.constant([[4.0, 1.0], [6.0, -2.0]])
    unordered = st(indices=[[1, 0], [0, 1], [2, 2]], values=[1.5, -2.0, 4.0], dense_shape=[3, 3])
    three = st([[0, 1, 2], [1, 0, 1]], [1.0, 2.0], [2, 2, 3])
    apart = st([[0, 0], [1, 1]], [1.0, -2.0], [2, 3]), st([[0, 0], [0, 1], [1, 2]], [3.0, -1.0, 0.5], [2, 3])  # fmt: skip
    return {
        "from_dense": st2,
        "to_dense": sparse.to_dense(st1),
        "to_dense_default": sparse.to_dense(st2, default_value=-1),
        "add_sparse": sparse.add(a, b),
        "add_threshold": sparse.add(a, st([[0, 2], [1, 1]], [-30, 5], [4, 10]), threshold=2),
        "add_dense": sparse.add(a, tt.ones([4, 10], tt.int32)),
        "matmul": sparse.sparse_dense_matmul(c, m),
        "matmul_adjoint_a": sparse.sparse_dense_matmul(c, m, adjoint_a=True),
        "matmul_adjoint_b": sparse.sparse_dense_matmul(c, m, adjoint_b=True),
        "dense_matmul_sparse": sparse.sparse_dense_matmul(m, c),
        "dense_matmul_sparse_adjoint": sparse.sparse_dense_matmul(
            m, c, adjoint_a=True, adjoint_b=True
        ),
        "concat": sparse.concat(axis=1, sp_inputs=[a, b]),
        "concat_expand": sparse.concat(axis=0, sp_inputs=[st1, st2], expand_nonconcat_dims=True),
        "slice": sparse.slice(sparse.concat(1, [a, b]), start=[0, 1], size=[4, 13]),
        "slice_past_end": sparse.slice(st1, start=[1, 2], size=[8, 20]),
        "map_values": sparse.map_values(tt.add, st2, 5),
        "map_values_two": sparse.map_values(tt.multiply, st2, st2),
        "times_scalar": st1 * 2,
        "times_dense": st1 * tt.range(10),
        "divide_dense": c / tt.constant([[2.0], [4.0]]),
        "reorder": sparse.reorder(unordered),
        "transpose": sparse.transpose(st1),
        "transpose_3d": sparse.transpose(three, [2, 0, 1]),
        "reshape": sparse.reshape(st1, [5, -1]),
        "expand_dims": sparse.expand_dims(st1, 1),
        "eye": sparse.eye(2, 3),
        "retain": sparse.retain(st2, [True, False, True]),
        "fill_empty_rows": sparse.fill_empty_rows(st1, 7),
        "to_indicator": sparse.to_indicator(st([[0, 0], [0, 1], [1, 0]], [1, 3, 2], [2, 2]), 4),
        "reduce_sum": sparse.reduce_sum(st2),
        "reduce_sum_axis": sparse.reduce_sum(st2, axis=1, keepdims=True),
        "reduce_sum_sparse": sparse.reduce_sum(st2, axis=0, output_is_sparse=True),
        "reduce_max": sparse.reduce_max(sparse.from_dense([[-5, 0, -3], [0, 0, 0]]), axis=1),
        "reduce_max_float": sparse.reduce_max(sparse.from_dense([[-5.0, 0, -3], [0, 0, 2]])),
        "maximum": sparse.maximum(st2, st2 * -1),
        "minimum": sparse.minimum(st2, st2 * -1),
        "maximum_union": sparse.maximum(apart[0], apart[1]),
        "minimum_union": sparse.minimum(apart[0], apart[1]),
        "segment_sum": sparse.segment_sum(m, [0, 1, 1], [0, 0, 2]),
        "segment_mean": sparse.segment_mean(m, [0, 1, 1], [0, 0, 2]),
        "segment_sqrt_n": sparse.segment_sqrt_n(m, [0, 1, 1], [0, 0, 2]),
    }


def test_values_are_tensorflows():
    computed = _computed()
    assert sorted(computed) == sorted(TENSORFLOW)
    for name, value in computed.items():
        assert _shown(value) == TENSORFLOW[name], name


def test_a_sparse_tensor_prints_as_tensorflows():
    """TensorFlow 2.21 printed `print(st)` so (tf.Tensor in its place)."""
    st = tt.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    assert str(st) == (
        "SparseTensor(indices=tracer.Tensor(\n[[0 3]\n [2 4]], shape=(2, 2), dtype=int64), "
        "values=tracer.Tensor([10 20], shape=(2,), dtype=int32), "
        "dense_shape=tracer.Tensor([ 3 10], shape=(2,), dtype=int64))"
    )
    assert repr(st) == str(st)
    assert st.shape == tt.TensorShape([3, 10]) and st.dtype == tt.int32
    assert repr(tt.SparseTensorSpec([3, 10], tt.int32)) == (
        "SparseTensorSpec(TensorShape([3, 10]), tt.int32)"
    )


def test_compiled_functions_take_and_give_sparse_tensors():
    traces = []

    @tt.function
    def product(sp, dense):
        traces.append(tuple(d if isinstance(d, int) else None for d in sp.indices.shape))
        scaled = tt.sparse.map_values(tt.math.square, sp)
        return tt.sparse.sparse_dense_matmul(scaled, dense), scaled

    rng = np.random.default_rng(3)
    dense = rng.standard_normal((5, 2))
    for count in (2, 3, 1, 4):
        flat = np.sort(rng.choice(20, count, replace=False))
        indices = np.stack([flat // 5, flat % 5], 1)
        values = rng.standard_normal(count)
        sp = tt.SparseTensor(indices, values, [4, 5])
        result, scaled = product(sp, dense)
        want = np.zeros((4, 5))
        want[indices[:, 0], indices[:, 1]] = values**2
        np.testing.assert_allclose(result.numpy(), want @ dense, rtol=1e-12)
        assert isinstance(scaled, tt.SparseTensor) and scaled.shape == tt.TensorShape([4, 5])
        np.testing.assert_array_equal(scaled.indices.numpy(), indices)
        np.testing.assert_allclose(scaled.values.numpy(), values**2, rtol=1e-12)
    # the second count of entries retraced it with the count unknown, reused since
    assert traces == [(2, 2), (None, 2)]
    # another dense shape is another trace
    product(tt.SparseTensor([[0, 0]], np.array([1.0]), [2, 5]), dense)
    assert len(traces) == 3

    spec = tt.SparseTensorSpec([4, 5], tt.float64)
    concrete = product.get_concrete_function(spec, tt.TensorSpec([5, 2], tt.float64))
    result, _ = concrete(tt.SparseTensor([[3, 4]], np.array([2.0]), [4, 5]), dense)
    np.testing.assert_allclose(result.numpy()[3], 4.0 * dense[4], rtol=1e-12)


def test_an_input_signature_takes_a_sparse_tensor_of_any_count():
    @tt.function(input_signature=[tt.SparseTensorSpec([3, 4], tt.float32)])
    def row_sums(sp):
        return tt.sparse.reduce_sum(sp, 1)

    two = row_sums(tt.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4]))
    one = row_sums(tt.SparseTensor([[1, 1]], [5.0], [3, 4]))
    assert two.numpy().tolist() == [1.0, 0.0, 2.0] and one.numpy().tolist() == [0.0, 5.0, 0.0]
    assert row_sums.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="the input_signature says SparseTensorSpec"):
        row_sums(tt.SparseTensor([[0, 1]], [5.0], [3, 5]))
    with pytest.raises(TypeError, match="the input_signature says SparseTensorSpec"):
        row_sums(tt.ones([3, 4]))


def test_gradients_reach_the_values():
    """The gradient of a Dense layer on a sparse input, as TensorFlow 2.21 printed it (its
    kernel's gradient an IndexedSlices, as TensorFlow's), and a product's against finite
    differences."""
    layer = tt.keras.layers.Dense(3)
    layer.build((None, 4))
    layer.set_weights([np.arange(12.0).reshape(4, 3) / 10, np.array([1.0, 2.0, 3.0])])
    x = tt.Variable([1.0, 2.0, 3.0])
    with tt.GradientTape() as tape:
        s = tt.SparseTensor([[0, 1], [1, 0], [2, 3]], x, [3, 4])
        y = tt.reduce_sum(layer(s) ** 2) + tt.reduce_sum(tt.sparse.reduce_sum(s, 1) ** 3)
    grad_x, grad_kernel = tape.gradient(y, [x, layer.kernel])
    np.testing.assert_allclose(grad_x.numpy(), [9.2, 13.8, 57.52], rtol=1e-6)
    assert isinstance(grad_kernel, tt.IndexedSlices)

    indices = np.array([[0, 2], [1, 1], [2, 0], [2, 2]])
    dense = np.random.default_rng(4).standard_normal((3, 2))

    def loss(values):
        sp = tt.SparseTensor(indices, values, [3, 3])
        product = tt.sparse.sparse_dense_matmul(sp, dense)
        return tt.reduce_sum(tt.sin(product)) + tt.reduce_sum(tt.sparse.to_dense(sp) ** 3)

    values = tt.constant([0.3, -1.2, 0.8, 2.0], dtype=tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(values)
        y = loss(values)
    grad = tape.gradient(y, values).numpy()
    step = 1e-6
    for k in range(4):
        bump = np.eye(4)[k] * step
        numeric = (loss(values + bump).numpy() - loss(values - bump).numpy()) / (2 * step)
        np.testing.assert_allclose(grad[k], numeric, rtol=1e-7)


def _entries(sp):
    return [(i, v) for i, v in zip(sp.indices.numpy().tolist(), sp.values.numpy().tolist())]


def test_datasets_slice_batch_unbatch_and_map_sparse_elements():
    """As the sparse_tensor guide's cells print them on TensorFlow 2.21."""
    data = tt.SparseTensor(
        indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], values=[1] * 6, dense_shape=(6, 4)
    )
    rows = [[([0], 1), ([1], 1), ([2], 1)], [], [], [], [([3], 1)], [([0], 1), ([1], 1)]]
    dataset = tt.data.Dataset.from_tensor_slices(data)
    assert dataset.element_spec == tt.SparseTensorSpec([4], tt.int32)
    assert [_entries(e) for e in dataset] == rows
    batched = dataset.batch(2)
    assert repr(batched.element_spec) == "SparseTensorSpec(TensorShape([None, 4]), tt.int32)"
    batches = list(batched)
    assert [b.shape for b in batches] == [tt.TensorShape([2, 4])] * 3
    assert [_entries(b) for b in batches] == [
        [([0, 0], 1), ([0, 1], 1), ([0, 2], 1)],
        [],
        [([0, 3], 1), ([1, 0], 1), ([1, 1], 1)],
    ]
    assert [_entries(e) for e in batched.unbatch()] == rows
    doubled = dataset.map(lambda x: x * 2)
    assert doubled.element_spec == tt.SparseTensorSpec([4], tt.int32)
    assert [_entries(e) for e in doubled] == [[(i, 2 * v) for i, v in row] for row in rows]
    pairs = tt.data.Dataset.from_tensor_slices((data, tt.range(6))).batch(4)
    dense = [(tt.sparse.to_dense(s).numpy().tolist(), n.numpy().tolist()) for s, n in pairs]
    assert dense == [
        ([[1, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], [0, 1, 2, 3]),
        ([[0, 0, 0, 1], [1, 1, 0, 0]], [4, 5]),
    ]
    # as_numpy_iterator gives a sparse element's dense array, as TensorFlow's
    listed = list(dataset.take(2).as_numpy_iterator())
    assert [a.tolist() for a in listed] == [[1, 1, 1, 0], [0, 0, 0, 0]]


def test_fit_evaluate_and_predict_on_sparse_inputs():
    """A Dense model trained on sparse rows, from a dataset and from a SparseTensor with a
    validation split: TensorFlow 2.21 printed these losses."""
    rng = np.random.default_rng(0)
    dense = (rng.random((32, 6)) < 0.3) * rng.normal(size=(32, 6))
    y = dense.sum(1, keepdims=True).astype(np.float32)
    sp = tt.sparse.from_dense(dense.astype(np.float32))
    weights = [rng.normal(size=s).astype(np.float32) * 0.5 for s in [(6, 4), (4,), (4, 1), (1,)]]

    def trained(**fit):
        model = tt.keras.Sequential(
            [tt.keras.layers.Dense(4, activation="tanh"), tt.keras.layers.Dense(1)]
        )
        model.build((None, 6))
        model.set_weights(weights)
        model.compile(optimizer=tt.keras.optimizers.SGD(0.05), loss="mse")
        history = model.fit(epochs=3, verbose=0, shuffle=False, **fit)
        return model, [round(v, 5) for v in history.history["loss"]]

    batches = tt.data.Dataset.from_tensor_slices((sp, y)).batch(8)
    model, losses = trained(x=batches)
    assert losses == [2.25944, 1.54503, 1.33422]
    np.testing.assert_allclose(model.evaluate(batches, verbose=0), 1.2225315570831299, rtol=1e-6)
    np.testing.assert_allclose(
        model.predict(batches, verbose=0)[:3, 0], [-0.38786, -0.76469, -0.45783], atol=2e-5
    )
    model, losses = trained(x=sp, y=y, batch_size=8, validation_split=0.25)
    assert losses == [2.53365, 1.86564, 1.59728]


def test_a_functional_model_takes_a_sparse_input(tmp_path):
    """The sparse_tensor guide's model, with weights from numpy: TensorFlow 2.21 printed
    these KerasTensors, outputs and losses; saved and loaded, it predicts the same."""
    x = tt.keras.Input(shape=(4,), sparse=True)
    assert repr(x).startswith("<KerasTensor shape=(None, 4), dtype=float32, sparse=True,")
    dense = tt.keras.layers.Dense(4)
    y = dense(x)
    assert repr(y).startswith("<KerasTensor shape=(None, 4), dtype=float32, sparse=False,")
    model = tt.keras.Model(x, y)
    dense.set_weights([np.arange(16, dtype=np.float32).reshape(4, 4) / 10, np.ones(4, np.float32)])
    data = tt.SparseTensor(
        indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], values=[1] * 6, dense_shape=(6, 4)
    )
    want = [[2.2, 2.5, 2.8, 3.1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]
    want += [[2.2, 2.3, 2.4, 2.5], [1.4, 1.6, 1.8, 2.0]]
    np.testing.assert_allclose(model(data).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(model.predict(data, verbose=0), want, rtol=1e-6)
    model.compile(loss="mse", optimizer="sgd")
    history = model.fit(data, np.ones((6, 4), np.float32), batch_size=4, epochs=2, verbose=0,
                        shuffle=False)  # fmt: skip
    np.testing.assert_allclose(
        history.history["loss"], [0.8658595085144043, 0.8479352593421936], rtol=1e-6
    )
    model.save(tmp_path / "sparse.keras")
    again = tt.keras.models.load_model(tmp_path / "sparse.keras")
    assert again.inputs[0].sparse
    np.testing.assert_allclose(
        again.predict(data, verbose=0)[:2],
        [
            [2.1762545, 2.4698184, 2.7633824, 3.0569463],
            [0.9891126, 0.98688895, 0.98466516, 0.9824415],
        ],
        rtol=1e-6,
    )
    with pytest.raises(TypeError, match="is sparse .*give a tt.SparseTensor"):
        model(tt.ones([2, 4]))


def test_what_is_refused_says_why():
    with pytest.raises(ValueError, match="out of order.*tt.sparse.reorder"):
        tt.sparse.to_dense(tt.SparseTensor([[1, 0], [0, 1]], [1.0, 2.0], [2, 2]))
    with pytest.raises(ValueError, match="repeated"):
        tt.sparse.to_dense(tt.SparseTensor([[1, 0], [1, 0]], [1.0, 2.0], [2, 2]))
    with pytest.raises(ValueError, match="out of bounds"):
        tt.sparse.to_dense(tt.SparseTensor([[2, 0]], [1.0], [2, 2]))
    with pytest.raises(ValueError, match="3 indices and 2 values"):
        tt.SparseTensor([[0, 0], [0, 1], [1, 1]], [1.0, 2.0], [2, 2])
    with pytest.raises(ValueError, match="dense_shape \\[2\\] has rank 1"):
        tt.SparseTensor([[0, 0]], [1.0], [2])
    with pytest.raises(TypeError, match="shape \\[None, 3\\] cannot be traced"):
        tt.function(tt.sparse.to_dense).get_concrete_function(
            tt.SparseTensorSpec([None, 3], tt.float32)
        )
    with pytest.raises(ValueError, match="dense shapes differ"):
        tt.sparse.add(tt.sparse.eye(2), tt.sparse.eye(3))
    with pytest.raises(NotImplementedError, match="padded_batch of SparseTensor elements"):
        list(tt.data.Dataset.from_tensor_slices(tt.sparse.eye(2)).padded_batch(2))

    @tt.function
    def nonzeros(x):
        return tt.sparse.from_dense(x).values

    with pytest.raises(TypeError, match="from_dense: tensor must be known when the function"):
        nonzeros(tt.constant([1.0, 0.0]))


def test_maximum_of_other_indices_reads_the_missing_entries_as_zeros():
    """Where one operand lacks an index, its zero meets the other's value (the values above
    are TensorFlow's); the gradient reaches the values that won, and a compiled function
    whose indices are traced says they must be known."""
    a_values = tt.Variable([1.0, 5.0])
    b = tt.SparseTensor([[0, 0], [0, 1], [1, 2]], [3.0, -1.0, 0.5], [2, 3])
    with tt.GradientTape() as tape:
        a = tt.SparseTensor([[0, 0], [1, 1]], a_values, [2, 3])
        result = tt.sparse.maximum(a, b)
        y = tt.reduce_sum(result.values * tt.constant([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(result.values.numpy(), [3.0, 0.0, 5.0, 0.5])
    np.testing.assert_array_equal(tape.gradient(y, a_values).numpy(), [0.0, 3.0])

    @tt.function
    def traced(indices):
        return tt.sparse.maximum(tt.SparseTensor(indices, [1.0], [2, 3]), b).values

    with pytest.raises(TypeError, match="maximum: the indices must be known"):
        traced(tt.constant([[1, 0]], tt.int64))
    with pytest.raises(ValueError, match="dense shapes differ"):
        tt.sparse.minimum(tt.sparse.eye(2), tt.sparse.eye(3))


def test_add_thresholds_only_sums_and_from_dense_drops_empty_strings():
    """TF 2.21: sparse.add with threshold 1.0 of {[0,0]: 0.5, [0,1]: 3.0} and {[0,1]: -2.8,
    [1,1]: 0.25} keeps [0,0] and [1,1] (entries of one operand are not tested; tracer
    dropped all three); from_dense of [["", "a"], ["b", ""]] keeps b'a' and b'b' only."""
    a = tt.sparse.SparseTensor([[0, 0], [0, 1]], [0.5, 3.0], [2, 2])
    b = tt.sparse.SparseTensor([[0, 1], [1, 1]], [-2.8, 0.25], [2, 2])
    total = tt.sparse.add(a, b, threshold=1.0)
    assert total.indices.numpy().tolist() == [[0, 0], [1, 1]]
    np.testing.assert_allclose(total.values.numpy(), [0.5, 0.25])
    strings = tt.sparse.from_dense(tt.constant([["", "a"], ["b", ""]]))
    assert strings.indices.numpy().tolist() == [[0, 1], [1, 0]]
    assert strings.values.numpy().tolist() == [b"a", b"b"]
