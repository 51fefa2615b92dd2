"""Keras's percentage, logarithmic and hinge losses, and the metrics Keras's training guide
and its users reach for beyond the common ones (MAPE, MSLE, the hinges, LogCoshError,
KLDivergence, CosineSimilarity, the confusion counts, R2Score, F1Score and FBetaScore),
against what TensorFlow 2.21 (Keras 3.15) printed for the same values."""

import numpy as np
import pytest

import tracer as tt

K = tt.keras
YT = np.array([[0.5, 0.0, 2.0], [1.0, -1.0, 0.0]], np.float32)
YP = np.array([[0.4, 0.2, 1.5], [0.5, -0.5, 0.25]], np.float32)
YB = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], np.float32)

# (printed by numpy to seven significant digits)
LOSSES = {
    "mape": ([6.666668e07, 8.333337e07], [1.3333338e08, 1.6666670e08]),
    "msle": ([0.0237474, 0.0441847], [0.1413164, 0.1012215]),
    "hinge": ([0.6, 0.6666667], [0.7333333, 0.5833333]),
    "squared_hinge": ([0.5466667, 0.5], [0.8666666, 0.3541667]),
    "categorical_hinge": ([0.0, 0.25], [0.0, 0.25]),
    "logcosh": ([0.0483247, 0.0903862], [0.1629405, 0.166165]),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_functions(name):
    fn = getattr(K.losses, name)
    np.testing.assert_allclose(fn(YT, YP).numpy(), LOSSES[name][0], rtol=5e-6)
    np.testing.assert_allclose(fn(YB, YP).numpy(), LOSSES[name][1], rtol=5e-6)
    assert K.losses.get(name) is fn


def test_loss_classes_and_their_names():
    expected = {
        "MeanAbsolutePercentageError": (75000024.0, "mean_absolute_percentage_error"),
        "MeanSquaredLogarithmicError": (0.03396604, "mean_squared_logarithmic_error"),
        "Hinge": (0.63333333, "hinge"),
        "SquaredHinge": (0.52333331, "squared_hinge"),
        "CategoricalHinge": (0.125, "categorical_hinge"),
    }
    for name, (value, loss_name) in expected.items():
        loss = getattr(K.losses, name)()
        np.testing.assert_allclose(float(loss(YT, YP)), value, rtol=1e-6)
        assert loss.name == loss_name and K.losses.get(name).name == loss_name


MEANS = {
    "MeanAbsolutePercentageError": (130555592.0, "mean_absolute_percentage_error"),
    "MeanSquaredLogarithmicError": (0.08548548, "mean_squared_logarithmic_error"),
    "Hinge": (0.625, "hinge"),
    "SquaredHinge": (0.49597219, "squared_hinge"),
    "CategoricalHinge": (0.16666667, "categorical_hinge"),
    "CosineSimilarity": (0.80396557, "cosine_similarity"),
    "LogCoshError": (0.13335775, "logcosh"),
    "KLDivergence": (1.44207954, "kl_divergence"),
}


@pytest.mark.parametrize("name", sorted(MEANS))
def test_mean_metrics_with_sample_weights(name):
    metric = getattr(K.metrics, name)()
    metric.update_state(YT, YP)
    metric.update_state(YB, YP, sample_weight=[1.0, 3.0])
    value, metric_name = MEANS[name]
    np.testing.assert_allclose(float(metric.result()), value, rtol=1e-6)
    assert metric.name == metric_name


def test_confusion_counts():
    for name, one, two in (
        ("TruePositives", 1.0, [3.0, 1.0]),
        ("FalsePositives", 0.0, [1.0, 0.0]),
        ("TrueNegatives", 2.0, [2.0, 3.0]),
        ("FalseNegatives", 3.0, [3.0, 5.0]),
    ):
        metric = getattr(K.metrics, name)()
        metric.update_state(YB, YP)
        assert float(metric.result()) == one
        weighted = getattr(K.metrics, name)(thresholds=[0.3, 0.6])
        weighted.update_state(YB, YP, sample_weight=[1.0, 2.0])
        assert weighted.result().numpy().tolist() == two


def test_r2_score():
    np.testing.assert_allclose(float(_updated(K.metrics.R2Score(), YT, YP)), 0.06125003, rtol=1e-5)
    weighted = K.metrics.R2Score(class_aggregation="variance_weighted_average")
    np.testing.assert_allclose(float(_updated(weighted, YT, YP)), 0.67142856, rtol=1e-5)
    y = np.arange(8.0).reshape(4, 2)
    raw = K.metrics.R2Score(class_aggregation=None)
    raw.update_state(y, y * 1.1 + 0.3, sample_weight=[1, 2, 1, 1])
    np.testing.assert_allclose(raw.result().numpy(), [0.90913463, 0.87884617], rtol=1e-6)
    np.testing.assert_allclose(float(_updated(K.metrics.R2Score(num_regressors=1), y, y * 1.1 + 0.3)), 0.88916665, rtol=1e-6)  # fmt: skip


def test_f_scores():
    np.testing.assert_allclose(_updated(K.metrics.F1Score(), YB, YP).numpy(), [0.99999982, 0.0, 0.66666657], rtol=1e-6)  # fmt: skip
    cases = {
        ("macro", 0.3): 0.44444439,
        ("micro", None): 0.66666663,
        ("weighted", 0.45): 0.58333325,
    }
    for (average, threshold), value in cases.items():
        metric = K.metrics.F1Score(average=average, threshold=threshold)
        np.testing.assert_allclose(float(_updated(metric, YB, YP)), value, rtol=1e-6)
    fbeta = K.metrics.FBetaScore(beta=2.0, threshold=0.3)
    np.testing.assert_allclose(
        _updated(fbeta, YB, YP).numpy(), [0.83333319, 0.0, 0.55555558], rtol=1e-6
    )
    weighted = K.metrics.F1Score(average="macro", threshold=0.3)
    weighted.update_state(YB, YP, sample_weight=[1.0, 0.5])
    np.testing.assert_allclose(float(weighted.result()), 0.43333328, rtol=1e-6)


def test_a_model_logs_them_by_keras_names():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(3)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mape", "msle", K.metrics.R2Score(), K.metrics.F1Score(average="micro")])  # fmt: skip
    history = model.fit(YB, YP, verbose=0)
    assert sorted(history.history) == ["f1_score", "loss", "mape", "msle", "r2_score"]


def _updated(metric, y_true, y_pred):
    metric.update_state(y_true, y_pred)
    return metric.result()
