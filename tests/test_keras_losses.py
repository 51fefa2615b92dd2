"""tt.keras.losses, tt.keras.activations and tt.keras.initializers: each against its formula
written in numpy, gradients against finite differences, compiled code against eager, and
the initializers' statistics against their distributions."""

import doctest
import math

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order, check_second_order
from tracer.keras import activations, initializers, losses

EPS = 1e-7
RTOL = {np.float32: 1e-5, np.float64: 1e-12}


# --- numpy references: Keras's formulas, computed in the inputs' dtype -------------------


def _clip(p):
    return np.clip(p, p.dtype.type(EPS), p.dtype.type(1 - EPS))


def _log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def np_mse(t, p):
    return np.mean((t - p) ** 2, axis=-1)


def np_mae(t, p):
    return np.mean(np.abs(t - p), axis=-1)


def np_cce(t, p, from_logits=False, label_smoothing=0.0):
    t = t * (1 - label_smoothing) + label_smoothing / p.shape[-1] if label_smoothing else t
    log_p = _log_softmax(p) if from_logits else np.log(_clip(p / p.sum(-1, keepdims=True)))
    return -np.sum(t * log_p, axis=-1)


def np_scce(labels, p, from_logits=False):
    log_p = _log_softmax(p if from_logits else np.log(_clip(p)))
    return -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]


def np_bce(t, p, from_logits=False, label_smoothing=0.0):
    t = t * (1 - label_smoothing) + 0.5 * label_smoothing if label_smoothing else t
    if from_logits:
        per_entry = np.maximum(p, 0) - p * t + np.log1p(np.exp(-np.abs(p)))
    else:
        q = _clip(p)
        per_entry = -(t * np.log(q) + (1 - t) * np.log(1 - q))
    return np.mean(per_entry, axis=-1)


def np_reduce(values, weight, reduction):
    if weight is not None:
        values = values * weight
    if reduction in ("none", None) or np.ndim(values) == 0:
        return values
    return values.sum() if reduction == "sum" else values.sum() / values.size


# --- cases: (loss object, numpy per-sample function, labels, predictions) ---------------------


def _probabilities(rng, shape, dtype):
    """Probabilities summing to 1 over the last axis, away from the clip bounds."""
    p = rng.uniform(0.05, 1.0, shape)
    return (p / p.sum(-1, keepdims=True)).astype(dtype)


def _one_hot(rng, shape, dtype):
    return np.eye(shape[-1], dtype=dtype)[rng.integers(0, shape[-1], shape[:-1])]


def _case(kind, shape, dtype, from_logits=False, label_smoothing=0.0, seed=0):
    rng = np.random.default_rng(seed)
    logits = (2 * rng.standard_normal(shape)).astype(dtype)
    if kind == "mse":
        return losses.MeanSquaredError, {}, np_mse, rng.standard_normal(shape).astype(dtype), logits
    if kind == "mae":
        return (
            losses.MeanAbsoluteError,
            {},
            np_mae,
            rng.standard_normal(shape).astype(dtype),
            logits,
        )
    # probabilities that do not sum to 1: both categorical losses renormalise them
    pred = logits if from_logits else rng.uniform(0.05, 1.0, shape).astype(dtype)
    options = {"from_logits": from_logits}
    if kind == "scce":
        labels = rng.integers(0, shape[-1], shape[:-1])
        return losses.SparseCategoricalCrossentropy, options, np_scce, labels, pred
    options["label_smoothing"] = label_smoothing
    if kind == "cce":
        return losses.CategoricalCrossentropy, options, np_cce, _one_hot(rng, shape, dtype), pred
    if not from_logits:
        pred = rng.uniform(0.05, 0.95, shape).astype(dtype)
    labels = rng.integers(0, 2, shape).astype(dtype)
    return losses.BinaryCrossentropy, options, np_bce, labels, pred


KINDS = [
    ("mse", False, 0.0),
    ("mae", False, 0.0),
    ("scce", False, 0.0),
    ("scce", True, 0.0),
    ("cce", False, 0.0),
    ("cce", True, 0.0),
    ("cce", False, 0.2),
    ("cce", True, 0.1),
    ("bce", False, 0.0),
    ("bce", True, 0.0),
    ("bce", False, 0.3),
]
KIND_IDS = [f"{k}-{'logits' if f else 'probs'}-ls{s}" for k, f, s in KINDS]


def _weights(per_sample_shape, form, dtype):
    """Sample weights of a `form` Keras accepts for per-sample losses of that shape."""
    rng = np.random.default_rng(7)
    if form == "none":
        return None
    if form == "scalar":
        return 2.5
    if form == "full":
        return rng.uniform(0, 2, per_sample_shape).astype(dtype)
    return rng.uniform(0, 2, (per_sample_shape[0], 1)).astype(dtype)  # "column": (N, 1)


def _weighted_reference(values, weight, reduction):
    if isinstance(weight, np.ndarray) and weight.ndim == values.ndim + 1:  # (N,) with (N, 1)
        values = values[:, None]
    return np_reduce(values, weight, reduction)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind, from_logits, label_smoothing", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("shape", [(5, 4), (3, 2, 6)])
def test_loss_objects_match_numpy(kind, from_logits, label_smoothing, shape, dtype):
    cls, options, reference, labels, pred = _case(kind, shape, dtype, from_logits, label_smoothing)
    per_sample = reference(labels, pred, **options)
    for reduction in ("sum_over_batch_size", "sum", "none", None, "auto"):
        for form in ("none", "scalar", "full", "column"):
            weight = _weights(per_sample.shape, form, dtype)
            got = cls(reduction=reduction, dtype=dtype, **options)(
                labels, tt.constant(pred), sample_weight=weight
            )
            expected = _weighted_reference(per_sample, weight, reduction)
            assert got.dtype == tt.as_dtype(dtype)
            np.testing.assert_allclose(got.numpy(), expected, rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("kind, from_logits, label_smoothing", KINDS, ids=KIND_IDS)
def test_loss_functions_match_numpy(kind, from_logits, label_smoothing):
    _, options, reference, labels, pred = _case(
        kind, (4, 3), np.float64, from_logits, label_smoothing
    )
    function = {
        "mse": losses.mean_squared_error,
        "mae": losses.mean_absolute_error,
        "scce": losses.sparse_categorical_crossentropy,
        "cce": losses.categorical_crossentropy,
        "bce": losses.binary_crossentropy,
    }[kind]
    got = function(labels, tt.constant(pred), **options)
    np.testing.assert_allclose(got.numpy(), reference(labels, pred, **options), rtol=1e-12)


def test_a_single_sample_gives_a_scalar_that_no_reduction_changes():
    t, p = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    for reduction in ("sum", "none", "sum_over_batch_size"):
        got = losses.MeanSquaredError(reduction=reduction)(t, tt.constant(p))
        assert got.shape == () and float(got) == pytest.approx(5.0 / 3.0)
    weighted = losses.MeanSquaredError(reduction="sum")(t, tt.constant(p), sample_weight=[1.0, 2.0])
    assert float(weighted) == pytest.approx(5.0)  # the scalar broadcast to the weights, summed


def test_probabilities_are_clipped_and_renormalised():
    p = np.array([[0.0, 2.0, 2.0], [1.0, 0.0, 0.0]])  # not normalised, with exact 0 and 1
    labels = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    got = losses.categorical_crossentropy(labels, tt.constant(p))
    np.testing.assert_allclose(got.numpy(), [-np.log(EPS)] * 2, rtol=1e-12)
    sparse = losses.sparse_categorical_crossentropy(
        [0, 0], tt.constant(np.array([[1.0, 0.0]])[[0, 0]])
    )
    np.testing.assert_allclose(sparse.numpy(), [-np.log(1 - EPS)] * 2)  # log(1 - eps + eps) = 0
    binary = losses.binary_crossentropy([[1.0, 0.0]], tt.constant(np.array([[0.0, 1.0]])))
    np.testing.assert_allclose(binary.numpy(), [-np.log(EPS)], rtol=1e-9)  # 1 - (1 - eps) ~ eps
    # float32 clips at float32(1 - 1e-7), as TensorFlow's clip_by_value does
    binary32 = losses.binary_crossentropy([[0.0]], tt.constant(np.array([[1.0]], np.float32)))
    assert binary32.numpy()[0] == pytest.approx(-np.log(1 - np.float32(1 - EPS)), rel=1e-6)
    # from logits nothing is clipped: a confident right answer costs almost nothing
    logits = losses.binary_crossentropy([[1.0]], tt.constant([[40.0]]), from_logits=True)
    assert 0 <= float(logits[0]) < 1e-15


def test_outputs_of_keras_sigmoid_and_softmax_are_taken_from_their_logits():
    # The values were printed by TF 2.21 (Keras 3.15): Keras's activations keep their logits
    # on their output and the crossentropies use those; tf.sigmoid's output is clipped.
    z = tt.constant([[-30.0], [-10.0], [-3.0], [0.5], [8.0], [20.0]])
    y = np.array([[1], [1], [0], [1], [0], [0]], np.float32)
    bce = losses.BinaryCrossentropy()
    assert float(bce(y, activations.sigmoid(z))) == pytest.approx(11.420506477355957, rel=1e-6)
    assert float(bce(y, tt.sigmoid(z))) == pytest.approx(8.430595397949219, rel=1e-6)
    per_sample = losses.binary_crossentropy(y, activations.sigmoid(z)).numpy()
    tf_per_sample = [30.0, 10.000046, 0.04858735, 0.474077, 8.000336, 20.0]
    np.testing.assert_allclose(per_sample, tf_per_sample, rtol=1e-6)
    metric = tt.keras.metrics.BinaryCrossentropy()
    metric.update_state(y, activations.sigmoid(z))
    assert float(metric.result()) == pytest.approx(11.420506477355957, rel=1e-6)
    assert float(bce(y[:2], activations.sigmoid(z)[:2])) == pytest.approx(13.059070587158203)
    rank_1 = bce(y[:, 0], activations.sigmoid(z))  # y_true expanded: y_pred is the same tensor
    assert float(rank_1) == pytest.approx(11.420506477355957, rel=1e-6)
    with pytest.warns(UserWarning, match="produced by a Sigmoid activation"):
        bce_logits = losses.BinaryCrossentropy(from_logits=True)(y, activations.sigmoid(z))
    assert float(bce_logits) == pytest.approx(11.420506477355957, rel=1e-6)
    with tt.GradientTape() as tape:
        tape.watch(z)
        loss = losses.binary_crossentropy(
            y[[0, 1, 5]], activations.sigmoid(tt.gather(z, [0, 1, 5]))
        )
    np.testing.assert_allclose(tape.gradient(loss, z).numpy()[[0, 1, 5], 0], [-1, -0.9999546, 1])
    softmax_logits = tt.constant([[30.0, -30.0], [20.0, -20.0]])
    cce = losses.CategoricalCrossentropy()(np.eye(2)[[0, 1]], activations.softmax(softmax_logits))
    assert float(cce) == pytest.approx(20.0)
    softmax_layer = tt.keras.layers.Softmax()
    scce = losses.SparseCategoricalCrossentropy()([1, 1], softmax_layer(softmax_logits))
    assert float(scce) == pytest.approx(50.0)
    # as in Keras, any of the two activations' logits serve any crossentropy
    twos = np.array([[0.0, 1.0], [0.0, 1.0]], np.float32)
    assert float(bce(twos, activations.softmax(softmax_logits))) == pytest.approx(25.0)
    compiled = tt.function(lambda z: losses.binary_crossentropy(y, activations.sigmoid(z)))
    np.testing.assert_allclose(compiled(z).numpy(), tf_per_sample, rtol=1e-6)


def test_a_keras_model_with_a_sigmoid_output_evaluates_from_its_logits():
    # printed by TF 2.21: a saturated sigmoid output is not clipped in compile/evaluate
    z = np.array([[-30.0], [-10.0], [-3.0], [0.5], [8.0], [20.0]], np.float32)
    y = np.array([[1], [1], [0], [1], [0], [0]], np.float32)
    inputs = tt.keras.Input((1,))
    model = tt.keras.Model(inputs, tt.keras.layers.Dense(1, activation="sigmoid")(inputs))
    model.set_weights([np.ones((1, 1), np.float32), np.zeros(1, np.float32)])
    model.compile(loss="binary_crossentropy", metrics=[tt.keras.metrics.BinaryCrossentropy()])
    loss, metric = model.evaluate(z, y, verbose=0)
    assert loss == pytest.approx(11.420506477355957, rel=1e-6)
    assert metric == pytest.approx(11.420506477355957, rel=1e-6)


def test_in_a_traced_function_a_sigmoid_or_softmax_op_gives_its_input_as_logits():
    # The values were printed by TF 2.21 (Keras 3.15): in a graph, Keras's TensorFlow backend
    # takes a Sigmoid (Softmax) op's input as the logits, however the op was called
    z = tt.constant([[-30.0], [-10.0], [-3.0], [0.5], [8.0], [20.0]])
    y = np.array([[1], [1], [0], [1], [0], [0]], np.float32)
    traced = tt.function(lambda z: losses.binary_crossentropy(y, tt.sigmoid(z)))
    tf_per_sample = [30.0, 10.000046, 0.04858735, 0.474077, 8.000336, 20.0]
    np.testing.assert_allclose(traced(z).numpy(), tf_per_sample, rtol=1e-6)
    eager = losses.binary_crossentropy(y, tt.sigmoid(z)).numpy()
    np.testing.assert_allclose(eager[[0, 5]], [16.118095, 15.942385], rtol=1e-6)  # clipped
    # a softmax op is taken back only by the categorical ones, a sigmoid only by binary
    softmax_of = tt.function(
        lambda z: losses.sparse_categorical_crossentropy([1, 1], tt.nn.softmax(z))
    )
    assert float(tt.reduce_mean(softmax_of(tt.constant([[30.0, -30.0], [20.0, -20.0]])))) == 50.0
    sigmoid_into_cce = tt.function(
        lambda z: losses.categorical_crossentropy([[0.0, 1.0]], tt.sigmoid(z))
    )
    assert float(sigmoid_into_cce(tt.constant([[30.0, -30.0]]))[0]) == pytest.approx(16.118095)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    inputs = tt.keras.Input((3,))
    model = tt.keras.Model(inputs, tt.keras.layers.Dense(1, activation=tt.nn.sigmoid)(inputs))
    model.set_weights([np.array([[-20.0], [5.0], [3.0]], np.float32), np.zeros(1, np.float32)])
    model.compile(optimizer=tt.keras.optimizers.SGD(0.01), loss="binary_crossentropy")
    history = model.fit(
        x, (x[:, :1] > 0).astype(np.float32), batch_size=16, epochs=3, shuffle=False, verbose=0
    )
    tf_losses = [17.235767364501953, 17.205774307250977, 17.1757869720459]
    np.testing.assert_allclose(history.history["loss"], tf_losses, rtol=1e-6)
    tf_kernel = [-19.89686, 5.003357, 2.9948194]
    np.testing.assert_allclose(model.get_weights()[0].ravel(), tf_kernel, rtol=1e-6)
    softmax_model = tt.keras.Sequential(
        [tt.keras.Input((3,)), tt.keras.layers.Dense(3), tt.keras.layers.Activation(tt.nn.softmax)]
    )
    kernel = np.array([[-20.0, 5, 1], [5.0, -9, 2], [3.0, 1, -8]], np.float32)
    softmax_model.set_weights([kernel, np.zeros(3, np.float32)])
    softmax_model.compile(
        optimizer=tt.keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy"
    )
    history = softmax_model.fit(
        x, np.argmax(x, axis=1), batch_size=16, epochs=3, shuffle=False, verbose=0
    )
    tf_losses = [25.80532455444336, 25.74789047241211, 25.690460205078125]
    np.testing.assert_allclose(history.history["loss"], tf_losses, rtol=1e-6)


def test_ranks_are_squeezed_or_expanded_as_keras_does():
    rng = np.random.default_rng(3)
    t, p = rng.standard_normal(4), rng.standard_normal((4, 1))
    got = losses.MeanSquaredError(reduction="none")(t, tt.constant(p))
    np.testing.assert_allclose(got.numpy(), (t - p[:, 0]) ** 2)  # y_true expanded to (4, 1)
    t3, p2 = rng.standard_normal((4, 3, 1)), rng.standard_normal((4, 3))
    got = losses.MeanAbsoluteError(reduction="none")(t3, tt.constant(p2))
    np.testing.assert_allclose(got.numpy(), np.abs(t3[..., 0] - p2).mean(-1))  # y_true squeezed
    labels = np.array([[2], [0]])  # sparse labels with a trailing axis of 1, as floats
    p = _probabilities(rng, (2, 3), np.float64)
    got = losses.SparseCategoricalCrossentropy(reduction="none")(
        labels.astype(float), tt.constant(p)
    )
    np.testing.assert_allclose(got.numpy(), np_scce(labels[:, 0], p))
    per_step = rng.standard_normal((4, 3, 2))  # losses of shape (N, T) with weights (N,)
    with pytest.raises(ValueError, match="broadcast"):
        losses.MeanSquaredError()(per_step, tt.constant(per_step), sample_weight=np.ones(4))


def test_a_loss_object_computes_in_floatx_unless_given_a_dtype():
    """Keras 3 on TF 2.21: MeanSquaredError()(float64, float64) is float32 (floatx); the
    plain functions keep their inputs' dtype."""
    assert losses.mse(tt.constant([1.0], tt.float64), tt.constant([0.5], tt.float64)).dtype == (
        tt.float64
    )
    loss = losses.MeanSquaredError()
    assert loss([1, 2], tt.constant([1.0, 0.0], dtype=tt.float64)).dtype == tt.float32
    assert loss([1, 2], [1, 0]).dtype == tt.float32  # integer predictions: float32
    forced = losses.MeanSquaredError(dtype="float64")([1.0], tt.constant([0.5]))
    assert forced.dtype == tt.float64 and float(forced) == 0.25


def test_reduction_names_and_errors():
    with pytest.raises(ValueError, match="'mean_of_squares'"):
        losses.MeanSquaredError(reduction="mean_of_squares")
    assert losses.BinaryCrossentropy(reduction="auto").reduction == "auto"
    with pytest.raises(ValueError, match="must be equal"):
        losses.categorical_crossentropy(np.eye(3), tt.constant(np.ones((3, 4))))
    with pytest.raises(ValueError, match="axis=-1"):
        losses.sparse_categorical_crossentropy([0], tt.constant(np.ones((1, 2))), axis=0)
    # TF raises InvalidArgumentError: "Received a label value of 3 which is outside the valid
    # range of [0, 3)"
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"valid range of \[0, 3\)"):
        losses.SparseCategoricalCrossentropy()([3], tt.constant(np.ones((1, 3)) / 3))
    empty = losses.MeanSquaredError()(np.zeros((0, 2)), tt.constant(np.zeros((0, 2))))
    assert float(empty) == 0.0  # an empty batch: 0, not NaN


def test_loss_get_and_names():
    assert losses.get("mse") is losses.MSE is losses.mean_squared_error
    assert losses.get("MAE") is losses.mean_absolute_error
    assert losses.get("bce") is losses.binary_crossentropy
    assert isinstance(losses.get("CategoricalCrossentropy"), losses.CategoricalCrossentropy)
    assert losses.get(None) is None
    custom = losses.BinaryCrossentropy(from_logits=True)
    assert losses.get(custom) is custom
    assert losses.SparseCategoricalCrossentropy().name == "sparse_categorical_crossentropy"
    assert losses.CategoricalCrossentropy(label_smoothing=0.1).get_config() == {
        "name": "categorical_crossentropy",
        "reduction": "sum_over_batch_size",
        "from_logits": False,
        "label_smoothing": 0.1,
        "axis": -1,
    }
    with pytest.raises(ValueError, match="'hinge_loss'"):
        losses.get("hinge_loss")
    with pytest.raises(ValueError, match="42"):
        losses.get(42)


def test_a_subclass_defines_call():
    class Scaled(losses.Loss):
        def call(self, y_true, y_pred):
            return tt.reduce_sum(tt.square(y_pred - y_true), axis=-1)

    loss = Scaled(reduction="sum")
    assert loss.name == "scaled"
    assert float(loss(np.zeros((2, 2)), tt.constant(np.ones((2, 2))))) == 4.0


# --- gradients, and compiled against eager -----------------------------------------------


@pytest.mark.parametrize("kind, from_logits, label_smoothing", KINDS, ids=KIND_IDS)
def test_loss_gradients_match_finite_differences(kind, from_logits, label_smoothing):
    cls, options, _, labels, pred = _case(kind, (3, 4), np.float64, from_logits, label_smoothing)
    weight = _weights((3,), "full", np.float64)
    if kind == "scce":
        loss = cls(**options, dtype="float64")
        check_first_order(lambda p, w: loss(labels, p, sample_weight=w), [pred, weight])
        check_second_order(lambda p: loss(labels, p), [pred])
        return
    loss = cls(**options, reduction="none", dtype="float64")
    check_first_order(lambda t, p, w: loss(t, p, sample_weight=w), [labels, pred, weight])
    if kind == "cce" and from_logits:
        # the logits' gradient is TensorFlow's softmax - labels, the loss's derivative only
        # where the labels sum to 1: finite differences in the labels leave that (semantics.md)
        check_second_order(lambda p: loss(labels, p), [pred])
    elif kind != "mae":  # mae's second derivative is 0 almost everywhere; nothing to check
        check_second_order(lambda t, p: loss(t, p), [labels, pred])


def _all_losses(labels, sparse, targets, probabilities, logits, binary, weight):
    """Every loss, each reduction, and the gradient of their total with respect to the
    predictions: one traced function to compare with eager."""
    with tt.GradientTape() as tape:
        tape.watch([probabilities, logits])
        results = [
            losses.MeanSquaredError()(targets, logits, sample_weight=weight),
            losses.MeanAbsoluteError(reduction="sum")(targets, logits),
            losses.SparseCategoricalCrossentropy()(sparse, probabilities, sample_weight=weight),
            losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")(sparse, logits),
            losses.CategoricalCrossentropy(label_smoothing=0.1)(labels, probabilities),
            losses.CategoricalCrossentropy(from_logits=True, reduction="none")(labels, logits),
            losses.BinaryCrossentropy(label_smoothing=0.2)(binary, probabilities, weight),
            losses.BinaryCrossentropy(from_logits=True, reduction="none")(binary, logits),
        ]
        total = tt.add_n([tt.reduce_sum(r) for r in results])
    return (*results, *tape.gradient(total, [probabilities, logits]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_losses_compiled_equal_eager(dtype):
    rng = np.random.default_rng(5)
    sparse = rng.integers(0, 3, 6)
    arguments = [
        tt.constant(np.eye(3, dtype=dtype)[sparse]),
        tt.constant(sparse),
        tt.constant(rng.standard_normal((6, 3)).astype(dtype)),
        tt.constant(_probabilities(rng, (6, 3), dtype)),
        tt.constant(rng.standard_normal((6, 3)).astype(dtype)),
        tt.constant(rng.integers(0, 2, (6, 3)).astype(dtype)),
        tt.constant(rng.uniform(0, 2, 6).astype(dtype)),
    ]
    eager = _all_losses(*arguments)
    compiled = tt.function(_all_losses, backend="c")(*arguments)
    for e, c in zip(eager, compiled, strict=True):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=RTOL[dtype] * 10, atol=1e-6)


def test_losses_compile_for_an_unknown_batch_size():
    f = tt.function(
        lambda labels, p, w: (
            losses.CategoricalCrossentropy(label_smoothing=0.3)(labels, p, sample_weight=w),
            losses.MeanSquaredError()(labels, p),
        ),
        input_signature=[
            tt.TensorSpec([None, 3], tt.float64),
            tt.TensorSpec([None, 3], tt.float64),
            tt.TensorSpec([None], tt.float64),
        ],
        backend="c",
    )
    rng = np.random.default_rng(2)
    for n in (2, 7):
        labels, p = _one_hot(rng, (n, 3), np.float64), _probabilities(rng, (n, 3), np.float64)
        w = rng.uniform(0, 2, n)
        cce, mse = f(tt.constant(labels), tt.constant(p), tt.constant(w))
        np.testing.assert_allclose(float(cce), np.sum(np_cce(labels, p, False, 0.3) * w) / n)
        np.testing.assert_allclose(float(mse), np.mean(np_mse(labels, p)))


# --- activations ---------------------------------------------------------------------------


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_softplus(x):
    return np.logaddexp(0, x)


def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _np_erf(x):
    return np.vectorize(math.erf)(x)


def _np_softmax(x):
    return np.exp(_log_softmax(x))


ACTIVATION_FORMULAS = {
    "relu": lambda x: np.maximum(x, 0),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.2 * x),
    "relu6": lambda x: np.clip(x, 0, 6),
    "elu": _np_elu,
    "selu": lambda x: 1.0507009873554805 * _np_elu(x, 1.6732632423543772),
    "sigmoid": _np_sigmoid,
    "tanh": np.tanh,
    "softplus": _np_softplus,
    "softsign": lambda x: x / (1 + np.abs(x)),
    "silu": lambda x: x * _np_sigmoid(x),
    "swish": lambda x: x * _np_sigmoid(x),
    "gelu": lambda x: 0.5 * x * (1 + _np_erf(x / np.sqrt(2))),
    "mish": lambda x: x * np.tanh(_np_softplus(x)),
    "exponential": np.exp,
    "linear": lambda x: x,
    "softmax": _np_softmax,
    "log_softmax": _log_softmax,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ACTIVATION_FORMULAS))
def test_activations_match_numpy(name, dtype):
    x = np.linspace(-7.5, 7.5, 24).reshape(4, 6).astype(dtype)
    got = activations.get(name)(tt.constant(x))
    assert got.dtype == tt.as_dtype(dtype) and got.shape == x.shape
    expected = ACTIVATION_FORMULAS[name](x.astype(np.float64))
    np.testing.assert_allclose(got.numpy(), expected, rtol=RTOL[dtype] * 10, atol=1e-6)


def test_activation_options_match_numpy():
    x = np.linspace(-4, 4, 17)
    relu = activations.relu
    np.testing.assert_allclose(relu(x, threshold=1.0).numpy(), np.where(x > 1, x, 0))
    np.testing.assert_allclose(relu(x, max_value=2.5).numpy(), np.clip(x, 0, 2.5))
    np.testing.assert_allclose(relu(x, max_value=6).numpy(), np.clip(x, 0, 6))
    np.testing.assert_allclose(relu(x, negative_slope=0.1).numpy(), np.where(x > 0, x, 0.1 * x))
    full = np.where(x > 1, np.minimum(x, 3), 0.1 * (x - 1))  # Keras's value for all three
    np.testing.assert_allclose(
        relu(x, negative_slope=0.1, max_value=3.0, threshold=1.0).numpy(), full, atol=1e-15
    )
    np.testing.assert_allclose(activations.elu(x, alpha=2.0).numpy(), _np_elu(x, 2.0))
    np.testing.assert_allclose(activations.leaky_relu(x, 0.3).numpy(), np.where(x > 0, x, 0.3 * x))
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(activations.gelu(x, approximate=True).numpy(), tanh_gelu)
    y = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(
        activations.softmax(y, axis=0).numpy(), _np_softmax(y.T).T, rtol=1e-12
    )


@pytest.mark.parametrize(
    "name", ["elu", "selu", "silu", "gelu", "mish", "softplus", "softsign", "softmax", "sigmoid"]
)
def test_activation_gradients_match_finite_differences(name):
    x = np.linspace(-3.1, 2.9, 12).reshape(3, 4)  # no point at a kink
    check_first_order(activations.get(name), [x])
    check_second_order(activations.get(name), [x])


def test_activations_compiled_equal_eager():
    x = tt.constant(np.linspace(-7.0, 7.0, 30).reshape(5, 6))
    names = sorted(ACTIVATION_FORMULAS)

    def apply_all(x):
        return [activations.get(name)(x) for name in names] + [
            activations.relu(x, negative_slope=0.1, max_value=3.0, threshold=1.0)
        ]

    for e, c in zip(apply_all(x), tt.function(apply_all, backend="c")(x), strict=True):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-12, atol=1e-15)


def test_activations_get_and_serialize():
    assert activations.get("relu") is activations.relu
    assert activations.get("swish") is activations.silu is activations.swish
    assert activations.get(None) is activations.linear
    assert activations.get(np.tanh) is np.tanh
    assert activations.serialize(activations.gelu) == "gelu"
    assert activations.serialize(activations.swish) == "silu"
    with pytest.raises(ValueError, match="'relu7'"):
        activations.get("relu7")
    with pytest.raises(ValueError, match="3.5"):
        activations.get(3.5)
    with pytest.raises(ValueError, match="cannot serialize"):
        activations.serialize(np.tanh)
    for name in activations.__all__:
        assert callable(getattr(activations, name))


# --- initializers ------------------------------------------------------------------------

BIG = (400, 500)  # 200,000 draws: the sample mean's standard error is 0.22% of a stddev


def _truncated_spread():
    """The standard deviation of a unit normal truncated to [-2, 2]."""
    density, mass = math.exp(-2.0) / math.sqrt(2 * math.pi), math.erf(2 / math.sqrt(2))
    return math.sqrt(1 - 2 * 2 * density / mass)


def _check_statistics(values, mean, stddev, low, high):
    n = values.size
    assert values.min() >= low and values.max() <= high
    assert abs(values.mean() - mean) < 5 * stddev / math.sqrt(n)
    assert abs(values.std() / stddev - 1) < 5 * math.sqrt(2 / n) + 1e-3


def test_random_initializers_have_their_distributions():
    uniform = initializers.RandomUniform(-0.3, 0.5, seed=1)(BIG).numpy()
    _check_statistics(uniform, 0.1, 0.8 / math.sqrt(12), -0.3, 0.5)
    normal = initializers.RandomNormal(1.0, 0.5, seed=2)(BIG).numpy()
    _check_statistics(normal, 1.0, 0.5, -np.inf, np.inf)
    truncated = initializers.TruncatedNormal(1.0, 0.5, seed=3)(BIG).numpy()
    _check_statistics(truncated, 1.0, 0.5 * _truncated_spread(), 0.0, 2.0)
    defaults = initializers.TruncatedNormal(seed=4)(BIG).numpy()
    _check_statistics(defaults, 0.0, 0.05 * _truncated_spread(), -0.1, 0.1)


FANS = {(400, 500): (400, 500), (20, 10, 1000): (200, 20000), (3, 3, 40, 50): (360, 450)}
PRESETS = {  # class: (variance from (fan_in, fan_out), uniform?)
    initializers.GlorotUniform: (lambda i, o: 2 / (i + o), True),
    initializers.GlorotNormal: (lambda i, o: 2 / (i + o), False),
    initializers.HeUniform: (lambda i, o: 2 / i, True),
    initializers.HeNormal: (lambda i, o: 2 / i, False),
    initializers.LecunUniform: (lambda i, o: 1 / i, True),
    initializers.LecunNormal: (lambda i, o: 1 / i, False),
}


@pytest.mark.parametrize("shape", list(FANS), ids=str)
@pytest.mark.parametrize("cls", list(PRESETS), ids=lambda c: c.__name__)
def test_variance_scaling_presets(cls, shape):
    variance, uniform = PRESETS[cls]
    stddev = math.sqrt(variance(*FANS[shape]))
    values = cls(seed=11)(shape).numpy()
    assert values.shape == shape and values.dtype == np.float32
    # uniform on +-sqrt(3) stddev; the normals truncated at 2 of their own stddevs
    bound = math.sqrt(3) * stddev if uniform else 2 * stddev / _truncated_spread()
    _check_statistics(values, 0.0, stddev, -bound, bound)
    assert np.abs(values).max() > 0.99 * bound  # the bounds are the formulas', not narrower


def test_fans_follow_keras():
    assert initializers.compute_fans(()) == (1, 1)
    assert initializers.compute_fans((7,)) == (7, 7)
    assert initializers.compute_fans((3, 5)) == (3, 5)
    assert initializers.compute_fans((3, 3, 16, 32)) == (144, 288)  # receptive field 9
    assert initializers.compute_fans((5, 8, 4)) == (40, 20)
    limit = math.sqrt(6 / (144 + 288))
    kernel = initializers.GlorotUniform(seed=0)((3, 3, 16, 32)).numpy()
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.99 * limit
    scaled = initializers.VarianceScaling(3.0, "fan_out", "untruncated_normal", seed=0)
    _check_statistics(scaled((40, 5000)).numpy(), 0.0, math.sqrt(3 / 5000), -1, 1)


def test_constant_initializers_shapes_and_dtypes():
    assert initializers.Zeros()((2, 3)).numpy().tolist() == [[0.0] * 3] * 2
    ones = initializers.ones()([4], dtype="float64")
    assert ones.dtype == tt.float64 and ones.numpy().tolist() == [1.0] * 4
    assert initializers.Constant(7)(3, dtype=tt.int32).numpy().tolist() == [7, 7, 7]
    assert initializers.Constant(0.5)(()).shape == ()
    for cls in (initializers.GlorotNormal, initializers.RandomUniform, initializers.Zeros):
        assert isinstance(cls()((2, 2)), tt.Tensor)
        assert cls()((2, 2)).dtype == tt.float32
        assert cls()((2, 2), tt.float64).dtype == tt.float64
    assert initializers.HeNormal(seed=1)((2, 3), "float16").dtype == tt.float16
    with pytest.raises(TypeError, match="floating"):
        initializers.RandomNormal()((2,), tt.int32)


def test_seeds():
    seeded = initializers.GlorotUniform(seed=42)
    first = seeded((5, 5)).numpy()
    np.testing.assert_array_equal(seeded((5, 5)).numpy(), first)  # every call the same
    np.testing.assert_array_equal(initializers.GlorotUniform(seed=42)((5, 5)).numpy(), first)
    assert not np.array_equal(initializers.GlorotUniform(seed=43)((5, 5)).numpy(), first)
    tt.random.set_seed(1)
    np.testing.assert_array_equal(seeded((5, 5)).numpy(), first)  # whatever the global seed
    unseeded = initializers.RandomNormal()
    a, b = unseeded((5, 5)).numpy(), unseeded((5, 5)).numpy()
    assert not np.array_equal(a, b)  # unseeded: new values every call
    tt.random.set_seed(1)
    np.testing.assert_array_equal(unseeded((5, 5)).numpy(), a)  # set_seed repeats the draws
    np.testing.assert_array_equal(unseeded((5, 5)).numpy(), b)
    with pytest.raises(ValueError, match="seed"):
        initializers.RandomUniform(seed=1.5)


def test_initializers_get():
    for name, cls in [
        ("glorot_uniform", initializers.GlorotUniform),
        ("GlorotUniform", initializers.GlorotUniform),
        ("he_normal", initializers.HeNormal),
        ("truncated_normal", initializers.TruncatedNormal),
        ("zeros", initializers.Zeros),
        ("zero", initializers.Zeros),
        ("one", initializers.Ones),
        ("uniform", initializers.RandomUniform),
        ("normal", initializers.RandomNormal),
    ]:
        assert type(initializers.get(name)) is cls
        assert getattr(initializers, name, cls) is cls  # the lower-case names are the classes
    assert initializers.glorot_uniform is initializers.GlorotUniform
    assert type(initializers.get(initializers.HeUniform)) is initializers.HeUniform
    assert initializers.get(None) is None

    def fn(shape, dtype=None):
        return tt.ones(shape)

    assert initializers.get(fn) is fn
    config = initializers.get({"class_name": "RandomNormal", "config": {"stddev": 2.0, "seed": 3}})
    assert config.get_config() == {"mean": 0.0, "stddev": 2.0, "seed": 3}
    values = initializers.get(np.arange(4.0))
    assert values((4,), "float64").numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="shape"):
        values((5,))
    with pytest.raises(ValueError, match="'glorot'"):
        initializers.get("glorot")
    with pytest.raises(ValueError, match="17"):
        initializers.get(17)


def test_keras_namespace_and_docstring_examples():
    assert tt.keras.losses is losses and tt.keras.activations is activations
    assert tt.keras.initializers is initializers
    for module in (losses, activations, initializers):
        result = doctest.testmod(module, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0


def test_reduction_names_are_the_strings_a_loss_takes():
    reduction = tt.keras.losses.Reduction
    assert reduction.all() == ("auto", "none", "sum", "sum_over_batch_size")
    loss = tt.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=reduction.NONE)
    labels = np.array([0, 0])
    logits = np.array([[-3.0, 0.0], [-3.0, 0.0]], np.float32)
    # Keras 3.15 on TensorFlow 2.21 printed [3.0485873, 30.485874] (the segmentation tutorial's
    # sample weights): log(1 + e^3) per sample, times its weight.
    np.testing.assert_allclose(loss(labels, logits, [1, 10]), [3.0485873, 30.485874], rtol=1e-6)
    reduction.validate("sum")
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        reduction.validate("mean")


def test_crossentropies_take_keras_probabilities_back_to_their_logits():
    # A confident model: the true class's probability is 3e-20, clipped to 1e-7 unless the
    # loss starts from the logits, as Keras's TensorFlow backend does for a Keras softmax's or
    # sigmoid's output, and, in a traced function, for any softmax or sigmoid op's. The
    # numbers were printed by Keras 3.15 on TensorFlow 2.21 for the same program.
    kernel = np.array([[10.0, -10.0, 0.0], [5.0, 0.0, -5.0]], np.float32)
    x = tt.constant([[2.0, 1.0]])
    label = tt.one_hot([1], 3)
    cce = tt.keras.losses.CategoricalCrossentropy()
    inputs = tt.keras.Input((2,))
    model = tt.keras.Model(inputs, tt.keras.layers.Dense(3, activation="softmax")(inputs))
    model.set_weights([kernel, np.zeros(3, np.float32)])
    layered = tt.keras.Sequential(
        [tt.keras.Input((2,)), tt.keras.layers.Dense(3), tt.keras.layers.Softmax()]
    )
    layered.set_weights(model.get_weights())
    for each in (model, layered):
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = cce(label, each(x))
        assert float(loss) == pytest.approx(45.0)
        np.testing.assert_allclose(tape.gradient(loss, x), [[20.0, 5.0]], rtol=1e-6)
    logistic = tt.keras.Sequential([tt.keras.Input((2,)), tt.keras.layers.Dense(1, "sigmoid")])
    logistic.set_weights([kernel[:, :1], np.zeros(1, np.float32)])
    bce = tt.keras.losses.BinaryCrossentropy()
    assert float(bce(tt.constant([[0.0]]), logistic(x))) == pytest.approx(25.0)
    # eagerly, a plain tt.nn.softmax's probabilities are clipped, as TensorFlow's are
    plain = tt.nn.softmax(tt.matmul(x, kernel))
    assert float(cce(label, plain)) == pytest.approx(16.118095, rel=1e-6)

    @tt.function
    def traced(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            logits = tt.matmul(x, kernel)
            p = tt.nn.softmax(logits)
            a = cce(label, p)
            b = tt.keras.losses.SparseCategoricalCrossentropy()(tt.constant([1]), p)
            c = bce(tt.constant([[0.0]]), tt.sigmoid(logits[:, :1]))
            d = cce(label, tt.nn.softmax(logits, axis=0))  # TensorFlow transposes: no Softmax op
            loss = a + b + c
        return a, b, c, d, tape.gradient(loss, x)

    a, b, c, d, grad = traced(x)
    np.testing.assert_allclose([a, b, c, d], [45.0, 45.0, 25.0, 1.0986123], rtol=1e-6)
    np.testing.assert_allclose(grad, [[50.0, 15.0]], rtol=1e-6)
    with pytest.warns(UserWarning, match="produced by a Softmax activation"):
        claimed = losses.categorical_crossentropy(label, model(x), from_logits=True)
    assert float(claimed[0]) == pytest.approx(45.0)
    model.compile(optimizer=tt.keras.optimizers.SGD(0.01), loss="categorical_crossentropy")
    history = model.fit(x.numpy(), label.numpy(), epochs=2, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [45.0, 44.88], rtol=1e-5)


@pytest.mark.parametrize("label_dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("loss_dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("from_logits", [True, False])
def test_integer_labels_give_the_values_and_gradients_of_labels_in_the_losss_dtype(
    label_dtype, loss_dtype, from_logits
):
    """Eager integer labels the loss's dtype holds exactly skip Keras's cast to it and back
    (SparseCategoricalCrossentropy._true_values): the same loss and gradient, bit for bit, as
    the labels converted first."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 7, size=16).astype(label_dtype)
    predictions = rng.uniform(0.05, 1.0, size=(16, 7)).astype(loss_dtype)
    loss = losses.SparseCategoricalCrossentropy(from_logits=from_logits, dtype=loss_dtype)
    results = []
    for given in (tt.constant(labels), tt.constant(labels.astype(loss_dtype))):
        y_pred = tt.constant(predictions)
        with tt.GradientTape() as tape:
            tape.watch(y_pred)
            value = loss(given, y_pred)
        results.append((value.numpy(), tape.gradient(value, y_pred).numpy()))
    (value, gradient), (expected_value, expected_gradient) = results
    assert value.dtype == expected_value.dtype == np.dtype(loss_dtype)
    np.testing.assert_array_equal(value, expected_value)
    np.testing.assert_array_equal(gradient, expected_gradient)
    probabilities = predictions.astype(np.float64)
    if from_logits:
        probabilities = np.exp(probabilities) / np.exp(probabilities).sum(axis=1, keepdims=True)
    else:
        probabilities = probabilities / probabilities.sum(axis=1, keepdims=True)
    reference = -np.log(probabilities[np.arange(16), labels.astype(np.int64)]).mean()
    np.testing.assert_allclose(value, reference, rtol=2e-3 if loss_dtype == "float16" else 1e-5)


def test_labels_the_losss_dtype_rounds_are_converted_as_keras_converts_them():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    small = tt.constant(np.array([3, 2**24], np.int64))
    assert loss._true_values(small) is small
    rounded = loss._true_values(tt.constant(np.array([3, 2**24 + 1], np.int64)))
    assert rounded.dtype == tt.float32 and rounded.numpy().tolist() == [3.0, 16777216.0]
    ignoring = losses.SparseCategoricalCrossentropy(ignore_class=-1)
    assert ignoring._true_values(tt.constant([1, 2])).dtype == tt.float32
    for_float16 = losses.SparseCategoricalCrossentropy(dtype="float16")
    assert for_float16._true_values(tt.constant([2049])).dtype == tt.float16
    traced = tt.function(lambda y: loss._true_values(y).dtype == tt.float32)
    assert bool(traced(tt.constant([1, 2])))
