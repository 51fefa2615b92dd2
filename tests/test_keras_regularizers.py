"""Keras's weight regularizers, activity regularizers, `add_loss` and weight constraints
(tracer/keras/regularizers.py, constraints.py): the penalties against numpy, what `fit`
minimizes, and the projections after each optimizer update."""

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers
regularizers = tt.keras.regularizers
constraints = tt.keras.constraints
rng = np.random.default_rng(12)


def test_penalties_are_kerass():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(float(regularizers.L1(0.3)(x)), 0.3 * np.abs(x).sum(), rtol=1e-6)
    np.testing.assert_allclose(float(regularizers.L2(0.2)(x)), 0.2 * (x**2).sum(), rtol=1e-6)
    both = regularizers.L1L2(l1=0.1, l2=0.4)
    np.testing.assert_allclose(
        float(both(x)), 0.1 * np.abs(x).sum() + 0.4 * (x**2).sum(), rtol=1e-6
    )
    assert float(regularizers.L1L2()(x)) == 0.0
    assert regularizers.get("l2").get_config() == {"l2": 0.01}
    assert regularizers.get("l1_l2").get_config() == {"l1": 0.01, "l2": 0.01}
    assert regularizers.l2(1e-4).l2 == 1e-4
    assert regularizers.get({"class_name": "L1", "config": {"l1": 0.5}}).l1 == 0.5
    with pytest.raises(ValueError, match="non-negative"):
        regularizers.L2(-1.0)
    with pytest.raises(ValueError, match="unknown regularizer"):
        regularizers.get("l3")


def regularized_model():
    model = tt.keras.Sequential(
        [
            layers.Dense(
                3,
                activation="tanh",
                kernel_regularizer=regularizers.L2(0.1),
                bias_regularizer=regularizers.L1(0.2),
                input_shape=(4,),
            ),
            layers.Dense(1, kernel_regularizer="l1"),
        ]
    )
    for w in model.weights:
        w.assign(rng.normal(size=w.shape).astype(np.float32))
    return model


def test_model_losses_hold_each_weights_penalty():
    model = regularized_model()
    k1, b1, k2, _ = (w.numpy().astype(np.float64) for w in model.weights)
    expected = [0.1 * (k1**2).sum(), 0.2 * np.abs(b1).sum(), 0.01 * np.abs(k2).sum()]
    np.testing.assert_allclose([float(v) for v in model.losses], expected, rtol=1e-6)


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_minimizes_the_loss_plus_the_penalties(run_eagerly):
    model = regularized_model()
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.normal(size=(8, 1)).astype(np.float32)
    model.compile(tt.keras.optimizers.SGD(0.1), loss="mse", run_eagerly=run_eagerly)
    before = [w.numpy().astype(np.float64) for w in model.weights]
    k1, b1, k2, b2 = before

    def total(k1, b1, k2, b2):
        hidden = np.tanh(x @ k1 + b1)
        mse = np.mean((hidden @ k2 + b2 - y) ** 2)
        return mse + 0.1 * (k1**2).sum() + 0.2 * np.abs(b1).sum() + 0.01 * np.abs(k2).sum()

    reported = model.train_on_batch(x, y)
    np.testing.assert_allclose(reported, total(*before), rtol=1e-5)
    for k, (old, new) in enumerate(zip(before, model.weights)):
        numeric = np.zeros_like(old)
        for index in np.ndindex(old.shape):
            moved = [w.copy() for w in before]
            moved[k][index] += 1e-6
            up = total(*moved)
            moved[k][index] -= 2e-6
            numeric[index] = (up - total(*moved)) / 2e-6
        np.testing.assert_allclose(new.numpy(), old - 0.1 * numeric, rtol=1e-4, atol=1e-5)


def test_activity_regularizer_penalizes_outputs_per_example_and_resets_each_call():
    layer = layers.Dense(2, activity_regularizer=regularizers.L2(0.5))
    x = rng.normal(size=(5, 3)).astype(np.float32)
    y = layer(x).numpy()
    layer(x)  # a second call replaces the first's penalty
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(layer.losses[0]), 0.5 * (y**2).sum() / 5, rtol=1e-6)


def test_add_loss_in_a_users_layer_reaches_fit():
    class Penalized(layers.Layer):
        def call(self, inputs):
            self.add_loss(tt.reduce_mean(inputs) * 0.0 + 3.0)
            return inputs

    model = tt.keras.Sequential([layers.Dense(1, input_shape=(2,)), Penalized()])
    x, y = np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32)
    model.compile("sgd", loss="mse")
    prediction = model(x).numpy()
    assert [float(v) for v in model.losses] == [3.0]
    loss = model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(loss, np.mean(prediction**2) + 3.0, rtol=1e-6)
    model(x)
    assert len(model.losses) == 1  # each outermost call starts afresh


def test_constraints_project_after_each_update():
    w = rng.normal(size=(4, 3)).astype(np.float32) * 5
    norms = np.sqrt((w**2).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(
        constraints.MaxNorm(2.0)(w).numpy(), w * np.minimum(norms, 2.0) / (norms + 1e-7), rtol=1e-6
    )
    np.testing.assert_allclose(constraints.UnitNorm()(w).numpy(), w / (norms + 1e-7), rtol=1e-6)
    np.testing.assert_array_equal(constraints.NonNeg()(w).numpy(), np.maximum(w, 0))
    mid = constraints.MinMaxNorm(1.0, 2.0, rate=0.5)(w).numpy()
    desired = 0.5 * np.clip(norms, 1.0, 2.0) + 0.5 * norms
    np.testing.assert_allclose(mid, w * desired / (norms + 1e-7), rtol=1e-6)
    assert constraints.get("max_norm").get_config() == {"max_value": 2, "axis": 0}

    dense = layers.Dense(3, kernel_constraint=constraints.MaxNorm(1.0), bias_constraint="non_neg")
    x = rng.normal(size=(6, 4)).astype(np.float32) * 10
    dense(x)
    optimizer = tt.keras.optimizers.Adam(1.0)

    @tt.function
    def step():
        with tt.GradientTape() as tape:
            loss = -tt.reduce_sum(dense(x))
        optimizer.apply_gradients(
            zip(tape.gradient(loss, dense.trainable_variables), dense.trainable_variables)
        )

    for _ in range(3):
        step()
        assert np.all(np.sqrt((dense.kernel.numpy() ** 2).sum(axis=0)) <= 1.0 + 1e-5)
        assert np.all(dense.bias.numpy() >= 0)


def test_a_variable_with_a_constraint_as_tensorflows():
    v = tt.Variable([3.0, -4.0], constraint=lambda t: tt.clip_by_value(t, -1.0, 1.0))
    tt.keras.optimizers.SGD(1.0).apply_gradients([(tt.constant([1.0, 1.0]), v)])
    np.testing.assert_array_equal(v.numpy(), [1.0, -1.0])
    assert v.constraint is not None


def test_recurrent_and_attention_layers_take_regularizers():
    lstm = layers.LSTM(2, kernel_regularizer="l2", recurrent_regularizer=regularizers.L1(0.5))
    lstm(np.ones((1, 3, 2), np.float32))
    kernel, recurrent = lstm.cell.kernel.numpy(), lstm.cell.recurrent_kernel.numpy()
    np.testing.assert_allclose(
        sorted(float(v) for v in lstm.losses),
        sorted([0.01 * (kernel**2).sum(), 0.5 * np.abs(recurrent).sum()]),
        rtol=1e-6,
    )
    both = layers.Bidirectional(layers.GRU(2, kernel_regularizer="l2"))
    both(np.ones((1, 3, 2), np.float32))
    assert len(both.losses) == 2
    attention = layers.MultiHeadAttention(2, 2, kernel_regularizer="l2")
    q = np.ones((1, 3, 4), np.float32)
    attention(q, q)
    assert len(attention.losses) == 4


def test_unknown_options_are_refused():
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        layers.Dense(2, kernel_regulariser="l2")


def test_regularizers_and_constraints_go_through_a_keras_file(tmp_path):
    pytest.importorskip("h5py")
    model = tt.keras.Sequential(
        [
            tt.keras.Input((3,)),
            layers.Dense(
                2,
                kernel_regularizer=regularizers.L2(0.3),
                kernel_constraint=constraints.MaxNorm(2.0),
            ),
        ]
    )
    model.save(tmp_path / "m.keras")
    again = tt.keras.models.load_model(tmp_path / "m.keras")
    dense = again.layers[0]
    assert dense.kernel_regularizer.get_config() == {"l2": 0.3}
    assert dense.kernel_constraint.get_config() == {"max_value": 2.0, "axis": 0}
    np.testing.assert_allclose(
        float(again.losses[0]), 0.3 * (dense.kernel.numpy() ** 2).sum(), rtol=1e-6
    )


def test_model_losses_list_activity_losses_before_weight_penalties_and_none_from_building():
    """TF 2.21 (Keras 3): a Sequential of a Dense with an L2(0.1) kernel regularizer and one
    with an L2(0.01) activity regularizer, all weights ones, lists [0.4] before any call
    (building it added no activity loss) and [0.16, 0.4] after a call on ones: the losses
    added in the call first, then the weights' penalties."""
    regularizers = tt.keras.regularizers
    model = tt.keras.Sequential(
        [
            tt.keras.Input((2,)),
            tt.keras.layers.Dense(
                2, kernel_initializer="ones", kernel_regularizer=regularizers.l2(0.1)
            ),
            tt.keras.layers.Dense(
                1, kernel_initializer="ones", activity_regularizer=regularizers.l2(0.01)
            ),
        ]
    )
    np.testing.assert_allclose([float(v) for v in model.losses], [0.4], rtol=1e-6)
    model(np.ones((1, 2), np.float32))
    np.testing.assert_allclose([float(v) for v in model.losses], [0.16, 0.4], rtol=1e-6)
