"""tt.keras.metrics: every metric against its formula written in numpy, accumulated over
batches with and without sample weights; compiled updates against eager ones; and `get` and
`resolve` against what Keras 3 does (the literal expectations below were read from Keras 3.15
with TensorFlow 2.21)."""

import doctest
import re

import numpy as np
import pytest

import tracer as tt
from tracer.keras import metrics

EPS = 1e-7
B, C = 6, 5


def _rng(seed=0):
    return np.random.default_rng(seed)


def _probabilities(rng, *shape):
    p = rng.random(shape).astype("float32") + 0.05
    return p / p.sum(-1, keepdims=True)


def _one_hot(rng, n):
    return np.eye(C, dtype="float32")[rng.integers(0, C, n)]


# --- numpy references: one value per sample --------------------------------------------------


def _ref_accuracy(y, p):
    return (y.astype(p.dtype) == p).mean(-1)


def _ref_binary_accuracy(y, p, threshold=0.5):
    return (y == (p > threshold)).mean(-1)


def _ref_categorical_accuracy(y, p):
    return (y.argmax(-1) == p.argmax(-1)).astype("float32")


def _ref_sparse_categorical_accuracy(y, p):
    return (y.reshape(-1) == p.argmax(-1)).astype("float32")


def _ref_in_top_k(labels, p, k):
    target = p[np.arange(len(p)), labels]
    return ((p > target[:, None]).sum(-1) < k).astype("float32")


def _ref_top_k(y, p, k):
    return _ref_in_top_k(y.argmax(-1), p, k)


def _ref_sparse_top_k(y, p, k):
    return _ref_in_top_k(y.reshape(-1).astype(int), p, k)


def _ref_mse(y, p):
    return ((y - p) ** 2).mean(-1)


def _ref_mae(y, p):
    return np.abs(y - p).mean(-1)


def _ref_bce(y, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(-1)


def _ref_bce_logits(y, x):
    return (np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))).mean(-1)


def _ref_cce(y, p):
    return -(y * np.log(np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS))).sum(-1)


def _ref_scce(y, p):
    return -np.log(p[np.arange(len(p)), y.reshape(-1).astype(int)])


# (metric, reference per sample, batch maker); batches hold (y_true, y_pred)
PER_SAMPLE = {
    "Accuracy": (
        metrics.Accuracy(),
        _ref_accuracy,
        lambda r: (r.integers(0, 3, (B, 1)), r.integers(0, 3, (B, 1)).astype("float32")),
    ),
    "BinaryAccuracy": (
        metrics.BinaryAccuracy(),
        _ref_binary_accuracy,
        lambda r: (r.integers(0, 2, (B, 3)).astype("float32"), r.random((B, 3), "float32")),
    ),
    "BinaryAccuracy(threshold=0.3)": (
        metrics.BinaryAccuracy(threshold=0.3),
        lambda y, p: _ref_binary_accuracy(y, p, 0.3),
        lambda r: (r.integers(0, 2, (B, 1)), r.random((B, 1), "float32")),
    ),
    "CategoricalAccuracy": (
        metrics.CategoricalAccuracy(),
        _ref_categorical_accuracy,
        lambda r: (_one_hot(r, B), _probabilities(r, B, C)),
    ),
    "SparseCategoricalAccuracy": (
        metrics.SparseCategoricalAccuracy(),
        _ref_sparse_categorical_accuracy,
        lambda r: (r.integers(0, C, B).astype("int32"), _probabilities(r, B, C)),
    ),
    "TopKCategoricalAccuracy(k=2)": (
        metrics.TopKCategoricalAccuracy(k=2),
        lambda y, p: _ref_top_k(y, p, 2),
        lambda r: (_one_hot(r, B), _probabilities(r, B, C)),
    ),
    "SparseTopKCategoricalAccuracy(k=3)": (
        metrics.SparseTopKCategoricalAccuracy(k=3),
        lambda y, p: _ref_sparse_top_k(y, p, 3),
        lambda r: (r.integers(0, C, (B, 1)).astype("float32"), _probabilities(r, B, C)),
    ),
    "MeanSquaredError": (
        metrics.MeanSquaredError(),
        _ref_mse,
        lambda r: (r.random((B, 3), "float32"), r.random((B, 3), "float32")),
    ),
    "MeanAbsoluteError": (
        metrics.MeanAbsoluteError(),
        _ref_mae,
        lambda r: (r.random((B, 3), "float32"), r.random((B, 3), "float32")),
    ),
    "BinaryCrossentropy": (
        metrics.BinaryCrossentropy(),
        _ref_bce,
        lambda r: (r.integers(0, 2, (B, 2)).astype("float32"), r.random((B, 2), "float32")),
    ),
    "BinaryCrossentropy(from_logits)": (
        metrics.BinaryCrossentropy(from_logits=True),
        _ref_bce_logits,
        lambda r: (
            r.integers(0, 2, (B, 1)).astype("float32"),
            r.normal(size=(B, 1)).astype("float32"),
        ),
    ),
    "CategoricalCrossentropy": (
        metrics.CategoricalCrossentropy(),
        _ref_cce,
        lambda r: (_one_hot(r, B), _probabilities(r, B, C)),
    ),
    "SparseCategoricalCrossentropy": (
        metrics.SparseCategoricalCrossentropy(),
        _ref_scce,
        lambda r: (r.integers(0, C, B), _probabilities(r, B, C)),
    ),
}


def _batches(make, seed, weighted):
    rng = _rng(seed)
    batches = [make(rng) for _ in range(3)]
    weights = [rng.random(B).astype("float32") if weighted else None for _ in batches]
    return batches, weights


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("key", list(PER_SAMPLE))
def test_per_sample_metrics_are_weighted_means_over_batches(key, weighted):
    metric, reference, make = PER_SAMPLE[key]
    metric.reset_state()
    batches, weights = _batches(make, seed=len(key), weighted=weighted)
    for (y, p), w in zip(batches, weights):
        metric.update_state(y, p, sample_weight=w)
    values = np.concatenate([reference(y, p) for y, p in batches])
    w = np.concatenate(weights) if weighted else np.ones_like(values)
    np.testing.assert_allclose(metric.result().numpy(), (values * w).sum() / w.sum(), rtol=1e-5)
    metric.reset_state()
    assert float(metric.result()) == 0.0
    assert all(float(v.numpy().sum()) == 0.0 for v in metric.variables)


def test_mean_and_sum_weights_of_every_rank():
    values = np.arange(12, dtype="float32").reshape(2, 3, 2)
    weights = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0]], "float32")
    mean, total = metrics.Mean(), metrics.Sum()
    mean.update_state(values, sample_weight=weights)  # a weight per (sample, step)
    total.update_state(values, sample_weight=weights)
    # the values are reduced over the axes beyond the weight's, the weight over its last ones
    per_step = values.mean(-1) * weights
    expected_mean = per_step.mean(-1).sum() / weights.mean(-1).sum()
    np.testing.assert_allclose(mean.result().numpy(), expected_mean, rtol=1e-6)
    np.testing.assert_allclose(total.result().numpy(), (values.sum(-1) * weights).sum(), rtol=1e-6)
    mean.reset_state()
    mean.update_state(2.0, sample_weight=3.0)  # a scalar counts as one sample of weight 3
    mean.update_state([4.0, 6.0])
    assert float(mean.result()) == pytest.approx(3.2)  # (6 + 10) / 5, as Keras 3 gives
    assert float(metrics.Sum()([[1.0, 2.0], [3.0, 4.0]], sample_weight=[[1.0], [0.5]])) == 6.5
    with pytest.raises(ValueError, match="sample_weight of shape"):
        metrics.Mean().update_state([1.0, 2.0], sample_weight=np.ones((2, 3, 4)))


def test_a_metric_is_zero_before_any_update_and_call_accumulates():
    m = metrics.Mean(name="loss")
    assert float(m.result()) == 0.0 and float(m(np.zeros(0, "float32"))) == 0.0
    assert float(m([1.0, 3.0])) == 2.0 and float(m([8.0])) == 4.0
    assert repr(m) == "<Mean name=loss>"
    assert [v.trainable for v in m.variables] == [False, False]
    assert [v.path for v in m.variables] == ["loss/total", "loss/count"]
    assert [v.name for v in m.variables] == ["loss/total:0", "loss/count:0"]


def test_root_mean_squared_error_is_the_root_of_the_mean_over_all_entries():
    rng = _rng(3)
    m = metrics.RootMeanSquaredError()
    batches, weights = _batches(lambda r: (r.random((B, 3)), r.random((B, 3))), 3, True)
    for (y, p), w in zip(batches, weights):
        m.update_state(y, p, sample_weight=w)
    rows = np.concatenate([((y - p) ** 2).mean(-1) for y, p in batches])
    w = np.concatenate(weights)
    np.testing.assert_allclose(m.result().numpy(), np.sqrt((rows * w).sum() / w.sum()), rtol=1e-5)
    m.reset_state()
    y, p = rng.random((4, 2)), rng.random((4, 2))
    np.testing.assert_allclose(m(y, p).numpy(), np.sqrt(((y - p) ** 2).mean()), rtol=1e-5)


@pytest.mark.parametrize(
    "labels",
    [
        np.array([2, 0, 1, 3]),
        np.array([[2], [0], [1], [3]], "int32"),
        np.array([2.0, 0.0, 1.0, 3.0], "float32"),
        np.array([[2.0], [0.0], [1.0], [3.0]], "float32"),
    ],
    ids=["int", "int(b,1)", "float", "float(b,1)"],
)
def test_sparse_metrics_take_int_or_float_labels_with_or_without_a_unit_axis(labels):
    p = np.array(
        [[0.1, 0.2, 0.6, 0.1], [0.5, 0.2, 0.2, 0.1], [0.3, 0.4, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1]]
    )
    p = p.astype("float32")
    assert float(metrics.SparseCategoricalAccuracy()(labels, p)) == 0.75
    assert float(metrics.SparseTopKCategoricalAccuracy(k=2)(labels, p)) == 0.75
    expected = -np.log(p[np.arange(4), [2, 0, 1, 3]]).mean()
    np.testing.assert_allclose(
        metrics.SparseCategoricalCrossentropy()(labels, p).numpy(), expected, rtol=1e-6
    )


def test_top_k_counts_ties_at_the_boundary_as_in():
    labels = np.array([0, 1, 2, 3], "int32")
    p = np.array([[0.2, 0.2, 0.2, 0.4]] * 4, "float32")
    # Keras 3 (TensorFlow's in_top_k): 1.0 for k=2, 0.25 for k=1
    assert float(metrics.SparseTopKCategoricalAccuracy(k=2)(labels, p)) == 1.0
    assert float(metrics.SparseTopKCategoricalAccuracy(k=1)(labels, p)) == 0.25


# --- precision and recall --------------------------------------------------------------------


def _confusion(y, p, w, thresholds):
    """(true positives, false positives, true negatives, false negatives) per threshold."""
    above = p[None] > np.asarray(thresholds)[:, None, None]
    positive = (y != 0)[None]
    w = np.broadcast_to(w, y.shape)[None]
    cells = (above & positive, above & ~positive, ~above & ~positive, ~above & positive)
    return tuple((cell * w).sum((1, 2)) for cell in cells)


def _ratio(a, b):
    return np.where(a + b == 0, 0.0, a / np.where(a + b == 0, 1.0, a + b))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_precision_and_recall_count_every_entry_per_threshold(weighted):
    rng = _rng(7)
    thresholds = [0.3, 0.5, 0.7]
    precision, recall = (
        metrics.Precision(thresholds=thresholds),
        metrics.Recall(thresholds=thresholds),
    )
    single_precision, single_recall = metrics.Precision(), metrics.Recall()
    counts = single = 0.0
    for _ in range(3):
        y, p = rng.integers(0, 2, (B, 3)).astype("float32"), rng.random((B, 3), "float32")
        w = rng.random(B).astype("float32") if weighted else None
        for m in (precision, recall, single_precision, single_recall):
            m.update_state(y, p, sample_weight=w)
        w_entries = np.ones((B, 1)) if w is None else w[:, None]  # a weight covers its sample
        counts = np.add(counts, _confusion(y, p, w_entries, thresholds))
        single = np.add(single, _confusion(y, p, w_entries, [0.5]))
    (tp, fp, _, fn), (tp1, fp1, _, fn1) = counts, single
    np.testing.assert_allclose(precision.result().numpy(), tp / (tp + fp), rtol=1e-5)
    np.testing.assert_allclose(recall.result().numpy(), tp / (tp + fn), rtol=1e-5)
    assert single_precision.result().shape == () and single_recall.result().shape == ()
    np.testing.assert_allclose(single_precision.result().numpy(), (tp1 / (tp1 + fp1))[0], rtol=1e-5)
    np.testing.assert_allclose(single_recall.result().numpy(), (tp1 / (tp1 + fn1))[0], rtol=1e-5)
    precision.reset_state()
    assert precision.result().numpy().tolist() == [0.0, 0.0, 0.0]


def test_precision_and_recall_of_one_class_and_rank_one_inputs():
    y = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], "float32")
    p = np.array([[0.6, 0.2, 0.4], [0.7, 0.8, 0.1], [0.9, 0.3, 0.55]], "float32")
    # class 0: predictions above 0.5 in all three rows, labels 1, 0, 1
    assert float(metrics.Precision(class_id=0)(y, p)) == pytest.approx(2 / 3)
    weighted = metrics.Precision(class_id=0)(y, p, sample_weight=[1.0, 2.0, 3.0])
    assert float(weighted) == pytest.approx(4 / 6)
    assert metrics.Recall(class_id=0, thresholds=[0.5, 0.65])(y, p).numpy().tolist() == [1.0, 0.5]
    assert float(
        metrics.Recall(thresholds=0.4)([0, 1, 1, 1], [0.9, 0.3, 0.5, 0.8])
    ) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="thresholds"):
        metrics.Precision(thresholds=[0.5, 1.5])


@pytest.mark.parametrize(
    "curve, method",
    [
        ("ROC", "interpolation"),
        ("ROC", "minoring"),
        ("ROC", "majoring"),
        ("PR", "minoring"),
        ("PR", "majoring"),
    ],
)
def test_auc_is_a_riemann_sum_over_the_confusion_counts(curve, method):
    rng = _rng(11)
    auc = metrics.AUC(num_thresholds=9, curve=curve, summation_method=method)
    thresholds = [-EPS] + [i / 8 for i in range(1, 8)] + [1 + EPS]
    counts = 0.0
    for _ in range(3):
        y, p, w = (
            rng.integers(0, 2, (B, 2)),
            rng.random((B, 2), "float32"),
            rng.random(B, "float32"),
        )
        auc.update_state(y, p, sample_weight=w)
        counts = np.add(counts, _confusion(y, p, w[:, None], thresholds))
    tp, fp, tn, fn = counts
    recall = _ratio(tp, fn)
    x, h = (_ratio(fp, tn), recall) if curve == "ROC" else (recall, _ratio(tp, fp))
    pick = {
        "interpolation": lambda a, b: (a + b) / 2,
        "minoring": np.minimum,
        "majoring": np.maximum,
    }
    expected = ((x[:-1] - x[1:]) * pick[method](h[:-1], h[1:])).sum()
    np.testing.assert_allclose(auc.result().numpy(), expected, rtol=1e-5)
    assert auc.thresholds == pytest.approx(thresholds)


def test_auc_values_of_keras_3():
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1], "float32")
    p = np.array([0.1, 0.35, 0.8, 0.4, 0.65, 0.7, 0.2, 0.95], "float32")
    w = np.array([1, 2, 1, 0.5, 1, 1, 3, 1], "float32")
    expected = {  # (unweighted, weighted), from Keras 3
        (("curve", "PR"),): (0.8078746795654297, 0.8239370584487915),
        (("curve", "PR"), ("num_thresholds", 5)): (0.838629424571991, 0.8329815864562988),
        (("curve", "ROC"),): (0.6666666269302368, 0.574999988079071),
    }
    for arguments, (unweighted, weighted) in expected.items():
        assert float(metrics.AUC(**dict(arguments))(y, p)) == pytest.approx(unweighted, rel=1e-6)
        assert float(metrics.AUC(**dict(arguments))(y, p, w)) == pytest.approx(weighted, rel=1e-6)
    logits = np.log(p / (1 - p))
    from_logits = metrics.AUC(curve="PR", from_logits=True)(y, logits)
    assert float(from_logits) == pytest.approx(0.8078746795654297, rel=1e-5)
    listed = metrics.AUC(thresholds=[0.7, 0.2, 0.5])
    assert listed.num_thresholds == 5 and listed.thresholds[1:-1] == [0.2, 0.5, 0.7]
    for bad in (dict(curve="PRGAIN"), dict(summation_method="riemann"), dict(num_thresholds=1)):
        with pytest.raises(ValueError, match="AUC"):
            metrics.AUC(**bad)


# --- compiled updates --------------------------------------------------------------------------


_MAKE_CONFUSION = PER_SAMPLE["BinaryAccuracy"][2]
COMPILED = {
    **{key: (metric, make) for key, (metric, _, make) in PER_SAMPLE.items()},
    "RootMeanSquaredError": (metrics.RootMeanSquaredError(), PER_SAMPLE["MeanSquaredError"][2]),
    "Precision": (metrics.Precision(thresholds=[0.2, 0.6]), _MAKE_CONFUSION),
    "Recall": (metrics.Recall(), _MAKE_CONFUSION),
    "AUC": (metrics.AUC(num_thresholds=20, curve="PR"), _MAKE_CONFUSION),
}


@pytest.mark.parametrize("key", list(COMPILED))
def test_compiled_updates_give_the_eager_results(key):
    metric, make = COMPILED[key]
    config = metric.get_config()
    eager, compiled = type(metric).from_config(config), type(metric).from_config(config)

    @tt.function(backend="c")
    def step(y, p, w):
        compiled.update_state(y, p, sample_weight=w)
        return compiled.result()

    batches, weights = _batches(make, seed=1, weighted=True)
    for (y, p), w in zip(batches, weights):
        eager.update_state(y, p, sample_weight=w)
        result = step(tt.constant(y), tt.constant(p), tt.constant(w))
    np.testing.assert_allclose(result.numpy(), eager.result().numpy(), rtol=1e-6)
    np.testing.assert_allclose(compiled.result().numpy(), eager.result().numpy(), rtol=1e-6)
    assert step.experimental_get_tracing_count() == 1


def test_compiled_updates_with_an_unknown_batch_size_and_a_compiled_reset():
    accuracy, loss = metrics.SparseCategoricalAccuracy(), metrics.Mean()
    top2 = metrics.SparseTopKCategoricalAccuracy(k=2)

    @tt.function(
        input_signature=[tt.TensorSpec((None,), tt.int32), tt.TensorSpec((None, 4), tt.float32)],
        backend="c",
    )
    def step(labels, p):
        for m in (accuracy, top2):
            m.update_state(labels, p)
        loss.update_state(tt.reduce_sum(p, axis=-1))
        return accuracy.result(), top2.result(), loss.result()

    @tt.function(backend="c")
    def reset():
        for m in (accuracy, top2, loss):
            m.reset_state()

    one_hot = np.eye(4, dtype="float32")
    results = step(tt.constant([1, 2, 3]), tt.constant(one_hot[[1, 2, 0]] * 2.0))
    # the third row: label 3 is tied with two others behind one larger entry, so in the top 2
    assert [float(r) for r in results] == [pytest.approx(2 / 3), 1.0, 2.0]
    results = step(tt.constant([1]), tt.constant(one_hot[[2]]))
    assert [float(r) for r in results] == [0.5, 1.0, 1.75]
    assert step.experimental_get_tracing_count() == 1
    reset()
    assert [float(m.result()) for m in (accuracy, top2, loss)] == [0.0, 0.0, 0.0]


# --- the base class, configs ----------------------------------------------------------------


def test_a_subclass_keeps_its_state_and_resets_to_initial_values():
    class LargestSeen(metrics.Metric):
        def __init__(self, name=None, dtype=None):
            super().__init__(name=name, dtype=dtype)
            self.largest = self.add_variable(
                (), initializer=tt.keras.initializers.Constant(-1.0), name="largest"
            )

        def update_state(self, values):
            self.largest.assign(
                tt.maximum(self.largest.value(), tt.reduce_max(tt.cast(values, self.dtype)))
            )

        def result(self):
            return self.largest.value()

    m = LargestSeen(dtype="float64")
    assert m.name == "largest_seen" and m.dtype == tt.float64
    assert float(m([0.5, 3.0])) == 3.0 and float(m([2.0])) == 3.0
    m.reset_state()
    assert float(m.result()) == -1.0
    assert m.get_config() == {"name": "largest_seen", "dtype": "float64"}


def test_default_names_and_configs_round_trip():
    names = {
        metrics.Mean: "mean",
        metrics.Sum: "sum",
        metrics.Accuracy: "accuracy",
        metrics.BinaryAccuracy: "binary_accuracy",
        metrics.CategoricalAccuracy: "categorical_accuracy",
        metrics.SparseCategoricalAccuracy: "sparse_categorical_accuracy",
        metrics.TopKCategoricalAccuracy: "top_k_categorical_accuracy",
        metrics.SparseTopKCategoricalAccuracy: "sparse_top_k_categorical_accuracy",
        metrics.MeanSquaredError: "mean_squared_error",
        metrics.MeanAbsoluteError: "mean_absolute_error",
        metrics.RootMeanSquaredError: "root_mean_squared_error",
        metrics.BinaryCrossentropy: "binary_crossentropy",
        metrics.CategoricalCrossentropy: "categorical_crossentropy",
        metrics.SparseCategoricalCrossentropy: "sparse_categorical_crossentropy",
        metrics.Precision: "precision",
        metrics.Recall: "recall",
        metrics.AUC: "auc",
    }
    for cls, name in names.items():
        assert cls().name == name
        copy = cls.from_config(cls().get_config())
        assert type(copy) is cls and copy.get_config() == cls().get_config()
    assert metrics.BinaryAccuracy(threshold=0.3).get_config() == {
        "name": "binary_accuracy",
        "dtype": "float32",
        "threshold": 0.3,
    }
    assert metrics.TopKCategoricalAccuracy(k=3, name="top3").get_config() == {
        "name": "top3",
        "dtype": "float32",
        "k": 3,
    }
    assert metrics.Precision(thresholds=[0.2], class_id=1).get_config() == {
        "name": "precision",
        "dtype": "float32",
        "thresholds": [0.2],
        "top_k": None,
        "class_id": 1,
    }
    cce = metrics.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1).get_config()
    assert cce == {
        "name": "categorical_crossentropy",
        "dtype": "float32",
        "from_logits": True,
        "label_smoothing": 0.1,
        "axis": -1,
    }
    wrapper = metrics.MeanMetricWrapper(tt.keras.losses.mean_squared_error, name="m")
    assert wrapper.get_config()["fn"] is tt.keras.losses.mean_squared_error


def test_the_imbalanced_tutorials_metrics_have_kerass_configs():
    # the configs TF 2.21 (Keras 3.15) prints for the tutorial's METRICS: TruePositives and
    # the other counts take no class_id, Precision and Recall list top_k, AUC its label
    # options and thresholds only where they were given, the crossentropies an int 0
    assert metrics.TruePositives(name="tp").get_config() == {
        "name": "tp",
        "dtype": "float32",
        "thresholds": None,
    }
    assert list(metrics.Recall().get_config()) == [
        "name",
        "dtype",
        "thresholds",
        "top_k",
        "class_id",
    ]
    assert metrics.AUC(name="prc", curve="PR").get_config() == {
        "name": "prc",
        "dtype": "float32",
        "num_thresholds": 200,
        "curve": "PR",
        "summation_method": "interpolation",
        "multi_label": False,
        "num_labels": None,
        "label_weights": None,
        "from_logits": False,
    }
    assert metrics.AUC(thresholds=[0.7, 0.3]).get_config()["thresholds"] == [0.3, 0.7]
    bce = metrics.BinaryCrossentropy(name="cross entropy").get_config()
    assert bce == {
        "name": "cross entropy",
        "dtype": "float32",
        "from_logits": False,
        "label_smoothing": 0,
    }
    with pytest.raises(TypeError):
        metrics.TruePositives(class_id=0)  # as Keras's
    with pytest.raises(NotImplementedError, match="multi_label"):
        metrics.AUC(multi_label=True)
    with pytest.raises(NotImplementedError, match="top_k"):
        metrics.Precision(top_k=2)


# --- get and resolve -----------------------------------------------------------------------


def _my_metric(y_true, y_pred):
    return tt.reduce_mean(tt.subtract(y_pred, y_true), axis=-1)


def test_get_knows_keras_3_names():
    expected = {
        "mse": (metrics.MeanSquaredError, "mean_squared_error"),
        "MSE": (metrics.MeanSquaredError, "mean_squared_error"),
        "mae": (metrics.MeanAbsoluteError, "mean_absolute_error"),
        "MAE": (metrics.MeanAbsoluteError, "mean_absolute_error"),
        "bce": (metrics.BinaryCrossentropy, "binary_crossentropy"),
        "accuracy": (metrics.Accuracy, "accuracy"),
        "Accuracy": (metrics.Accuracy, "accuracy"),
        "binary_accuracy": (metrics.BinaryAccuracy, "binary_accuracy"),
        "SparseTopKCategoricalAccuracy": (
            metrics.SparseTopKCategoricalAccuracy,
            "sparse_top_k_categorical_accuracy",
        ),
        "top_k_categorical_accuracy": (
            metrics.TopKCategoricalAccuracy,
            "top_k_categorical_accuracy",
        ),
        "root_mean_squared_error": (metrics.RootMeanSquaredError, "root_mean_squared_error"),
        "categorical_crossentropy": (metrics.CategoricalCrossentropy, "categorical_crossentropy"),
        "mean": (metrics.Mean, "mean"),
        "precision": (metrics.Precision, "precision"),
        "auc": (metrics.AUC, "auc"),
        "AUC": (metrics.AUC, "auc"),
    }
    for identifier, (cls, name) in expected.items():
        metric = metrics.get(identifier)
        assert type(metric) is cls and metric.name == name, identifier
    assert metrics.get("mse") is not metrics.get("mse")  # a new instance each time
    instance = metrics.Recall(name="r")
    assert metrics.get(instance) is instance and metrics.get(None) is None
    assert type(metrics.get(metrics.Sum)) is metrics.Sum
    config = {"class_name": "BinaryAccuracy", "config": {"threshold": 0.9, "name": "ba"}}
    assert metrics.get(config).get_config() == {"name": "ba", "dtype": "float32", "threshold": 0.9}
    wrapped = metrics.get(_my_metric)
    assert type(wrapped) is metrics.MeanMetricWrapper and wrapped.name == "_my_metric"
    assert float(wrapped([[1.0, 1.0]], [[2.0, 4.0]])) == 2.0


@pytest.mark.parametrize("identifier", ["acc", "ce", "crossentropy", "rmse", "foo", 3, object])
def test_get_refuses_unknown_identifiers_naming_them(identifier):
    with pytest.raises(ValueError, match="unknown metric " + re.escape(repr(identifier))):
        metrics.get(identifier)


# (y_true shape and dtype, y_pred shape) -> the accuracy Keras 3's compile picks
ACCURACY_CASES = [
    (((8,), "int32"), (8, 10), metrics.SparseCategoricalAccuracy),
    (((8, 1), "int32"), (8, 10), metrics.SparseCategoricalAccuracy),
    (((8, 1), "float32"), (8,), metrics.SparseCategoricalAccuracy),
    (((8, 3), "float32"), (8, 3, 10), metrics.SparseCategoricalAccuracy),
    (((8, 10), "float32"), (8, 10), metrics.CategoricalAccuracy),
    (((8,), "float32"), (8,), metrics.CategoricalAccuracy),  # y_pred's last axis is not 1
    (((8, 1), "float32"), (8, 1), metrics.BinaryAccuracy),
    (((8,), "float32"), (8, 1), metrics.BinaryAccuracy),
    (((8, 3, 1), "float32"), (8, 3, 1), metrics.BinaryAccuracy),
]


@pytest.mark.parametrize("identifier", ["accuracy", "acc", "Accuracy", "ACC"])
@pytest.mark.parametrize("true, pred_shape, cls", ACCURACY_CASES)
def test_resolve_picks_the_accuracy_from_the_shapes_and_keeps_the_name(
    identifier, true, pred_shape, cls
):
    y_true = tt.zeros(true[0], dtype=true[1])
    metric = metrics.resolve(identifier, y_true, np.zeros(pred_shape, "float32"))
    assert type(metric) is cls and metric.name == identifier


def test_resolve_names_other_metrics_as_keras_3_logs_them():
    y, p = np.zeros((8, 10), "float32"), np.zeros((8, 10), "float32")
    expected = {
        "mse": (metrics.MeanSquaredError, "mse"),
        "MAE": (metrics.MeanAbsoluteError, "MAE"),
        "mean_absolute_error": (metrics.MeanAbsoluteError, "mean_absolute_error"),
        "MeanAbsoluteError": (metrics.MeanAbsoluteError, "MeanAbsoluteError"),
        "bce": (metrics.BinaryCrossentropy, "bce"),
        "binary_accuracy": (metrics.BinaryAccuracy, "binary_accuracy"),
        "sparse_categorical_crossentropy": (
            metrics.SparseCategoricalCrossentropy,
            "sparse_categorical_crossentropy",
        ),
        "Mean": (metrics.Mean, "Mean"),
        "AUC": (metrics.AUC, "AUC"),
    }
    for identifier, (cls, name) in expected.items():
        metric = metrics.resolve(identifier, y, p, loss="mse")
        assert type(metric) is cls and metric.name == name, identifier
    instance = metrics.MeanSquaredError(name="x")
    assert metrics.resolve(instance, y, p) is instance and instance.name == "x"
    assert metrics.resolve(metrics.Mean(), y, p).name == "mean"
    function_metric = metrics.resolve(_my_metric, y, p)
    assert (
        type(function_metric) is metrics.MeanMetricWrapper and function_metric.name == "_my_metric"
    )
    loss_metric = metrics.resolve(tt.keras.losses.MeanSquaredError(name="l2"), y, p)
    assert loss_metric.name == "l2"
    for bad in ("crossentropy", "ce", "rmse"):  # Keras 3 resolves "crossentropy" for losses only
        with pytest.raises(ValueError, match=repr(bad)):
            metrics.resolve(bad, y, p, loss="categorical_crossentropy")
    with pytest.raises(ValueError, match="None"):
        metrics.resolve(None, y, p)


def test_docstring_examples():
    result = doctest.testmod(metrics, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_auc_clips_predictions_outside_zero_to_one_as_keras_3():
    """Keras 3 on TF 2.21: AUC()([0, 1, 1, 0, 1], [-1.5, 0.3, 2.0, 0.1, -0.2]) is 0.75, the
    AUC of the predictions clipped to [0, 1] (tracer counted the 2.0 above the last threshold,
    1 + epsilon: 0.333); with thresholds not spread evenly, Keras does not clip."""
    y_true = [[0.0], [1.0], [1.0], [0.0], [1.0]]
    y_pred = [[-1.5], [0.3], [2.0], [0.1], [-0.2]]
    auc = tt.keras.metrics.AUC()
    auc.update_state(y_true, y_pred)
    clipped = tt.keras.metrics.AUC()
    clipped.update_state(y_true, np.clip(y_pred, 0.0, 1.0))
    assert float(auc.result()) == pytest.approx(0.75, abs=1e-6)
    assert float(auc.result()) == float(clipped.result())
    uneven = tt.keras.metrics.AUC(thresholds=[0.2, 0.9])
    uneven.update_state(y_true, y_pred)
    assert float(uneven.result()) == pytest.approx(1 / 3, abs=1e-6)  # TF 2.21 too
