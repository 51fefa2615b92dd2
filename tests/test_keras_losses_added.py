"""The Keras 3 losses and metrics added to tt.keras: BinaryFocalCrossentropy, Dice, Tversky,
SparseCategoricalCrossentropy's ignore_class, the "mean" and "mean_with_sample_weight"
reductions, the dtype a Loss computes in, and the IoU metrics; eagerly and inside
tt.function with both backends.

The expected numbers marked "Keras" are those Keras 3.15 printed on TensorFlow 2.21 for the
same inputs (float32); the others are worked out here."""

import numpy as np
import pytest

import tracer as tt
from tracer.keras import losses, metrics

RTOL = 1e-6  # float32 results: within a few units in the last place of Keras's

# Keras's documentation example for the binary crossentropies
BINARY_TRUE = [[0.0, 1.0], [0.0, 0.0]]
BINARY_PRED = [[0.6, 0.4], [0.4, 0.6]]
BINARY_LOGITS = [[-1.2, 0.7], [2.0, -0.3]]

# Keras's documentation example for dice: two 2x2 one-channel images
SEGMENT_TRUE = [[[[1.0], [1.0]], [[0.0], [0.0]]], [[[1.0], [1.0]], [[0.0], [0.0]]]]
SEGMENT_PRED = [[[[0.0], [1.0]], [[0.0], [1.0]]], [[[0.4], [0.0]], [[0.0], [0.9]]]]

# sparse labels, the third one -1 (ignored below), and probabilities for them
LABELS = np.array([0, 1, -1, 2])
PROBABILITIES = np.array(
    [[0.7, 0.2, 0.1], [0.3, 0.5, 0.2], [0.2, 0.2, 0.6], [0.1, 0.1, 0.8]], "float32"
)
WEIGHTS = np.array([1.0, 2.0, 3.0, 0.5], "float32")
LOGITS = np.array(
    [[1.0, -1.0, 0.5], [0.2, 2.0, -0.5], [3.0, 0.0, 0.0], [-1.0, 0.5, 1.5]], "float32"
)


def _close(got, expected, rtol=RTOL, atol=1e-7):
    np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=atol)


def _np_bce(y, p):
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


# --- BinaryFocalCrossentropy -----------------------------------------------------------------


@pytest.mark.parametrize(
    "y_pred, options, expected",
    [
        (BINARY_PRED, {}, [0.3298646807670593, 0.20579838752746582]),
        (
            BINARY_PRED,
            {"apply_class_balancing": True, "alpha": 0.3, "gamma": 1.5},
            [0.2129267454147339, 0.19427914917469025],
        ),
        (
            BINARY_LOGITS,
            {"from_logits": True, "label_smoothing": 0.2},
            [0.04718358814716339, 0.6804671883583069],
        ),
    ],
)
def test_binary_focal_crossentropy_matches_keras(y_pred, options, expected):
    got = losses.binary_focal_crossentropy(BINARY_TRUE, y_pred, **options)
    assert got.dtype == tt.float32
    _close(got, expected)  # Keras


def test_binary_focal_crossentropy_edges_and_axis():
    # saturated probabilities are clipped; logits are not (Keras)
    got = losses.binary_focal_crossentropy([[0.0, 1.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]])
    _close(got, [0.0, 16.03023910522461])
    got = losses.binary_focal_crossentropy(
        [[0.0, 1.0], [0.0, 1.0]], [[-40.0, 40.0], [40.0, -40.0]], from_logits=True, gamma=0.0
    )
    _close(got, [4.24835413113866e-18, 40.0])
    y_true = np.array([[[0, 1, 1], [1, 0, 0]], [[1, 1, 0], [0, 0, 1]]], "float32")
    y_pred = np.array(
        [[[0.1, 0.8, 0.3], [0.7, 0.2, 0.4]], [[0.9, 0.6, 0.2], [0.3, 0.1, 0.5]]], "float32"
    )
    expected = [  # Keras, axis=1
        [0.016577178612351418, 0.008925740607082844, 0.3358393609523773],
        [0.01657717674970627, 0.041392844170331955, 0.09110626578330994],
    ]
    _close(losses.binary_focal_crossentropy(y_true, y_pred, axis=1), expected)


def test_binary_focal_crossentropy_formula():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, (3, 4)).astype(float), rng.uniform(0.05, 0.95, (3, 4))
    plain = losses.binary_focal_crossentropy(y, tt.constant(p), gamma=0.0)
    _close(plain, losses.binary_crossentropy(y, tt.constant(p)).numpy(), rtol=1e-12, atol=0)
    p_t = y * p + (1 - y) * (1 - p)
    alpha = np.where(y == 1, 0.4, 0.6)
    expected = (alpha * (1 - p_t) ** 3 * _np_bce(y, p)).mean(-1)
    got = losses.binary_focal_crossentropy(
        y, tt.constant(p), apply_class_balancing=True, alpha=0.4, gamma=3
    )
    assert got.dtype == tt.float64  # the function keeps its inputs' dtype
    _close(got, expected, rtol=1e-12, atol=0)


def test_binary_focal_crossentropy_object():
    loss = losses.BinaryFocalCrossentropy()
    _close(loss(BINARY_TRUE, BINARY_PRED, sample_weight=[0.3, 0.7]), 0.1215091347694397)  # Keras
    balanced = losses.BinaryFocalCrossentropy(apply_class_balancing=True, reduction="sum")
    _close(balanced(BINARY_TRUE, BINARY_PRED), 0.31928113102912903)  # Keras
    per_sample = losses.BinaryFocalCrossentropy(from_logits=True, gamma=3.0, reduction=None)
    _close(per_sample(BINARY_TRUE, BINARY_LOGITS), [0.008997354656457901, 0.7480536103248596])
    assert loss.get_config() == {  # Keras's
        "name": "binary_focal_crossentropy",
        "reduction": "sum_over_batch_size",
        "from_logits": False,
        "label_smoothing": 0.0,
        "axis": -1,
        "apply_class_balancing": False,
        "alpha": 0.25,
        "gamma": 2.0,
    }
    again = losses.BinaryFocalCrossentropy.from_config(balanced.get_config())
    _close(again(BINARY_TRUE, BINARY_PRED), 0.31928113102912903)
    assert losses.get("BinaryFocalCrossentropy").name == "binary_focal_crossentropy"
    assert losses.get("binary_focal_crossentropy") is losses.binary_focal_crossentropy


def test_binary_focal_crossentropy_reads_the_logits_behind_a_sigmoid():
    z = tt.constant([[-30.0, 30.0]])
    labels = tt.constant([[1.0, 0.0]])
    keras_sigmoid = tt.keras.activations.sigmoid(z)
    _close(losses.binary_focal_crossentropy(labels, keras_sigmoid), [30.0])  # Keras
    # eagerly tf.nn.sigmoid's output is clipped, in a graph its logits are read (Keras)
    loss = losses.BinaryFocalCrossentropy()
    _close(loss(labels, tt.sigmoid(z)), 16.03024)
    for backend in ("c", "interpreter"):
        traced = tt.function(lambda y, z: loss(y, tt.sigmoid(z)), backend=backend)
        _close(traced(labels, z), 30.0)


# --- Dice and Tversky ------------------------------------------------------------------------


def test_dice_and_tversky_match_keras():
    _close(losses.dice(SEGMENT_TRUE, SEGMENT_PRED), 0.6164383888244629)
    _close(losses.dice(SEGMENT_TRUE, SEGMENT_PRED, axis=(1, 2, 3)), [0.5, 0.7575757503509521])
    _close(losses.tversky(SEGMENT_TRUE, SEGMENT_PRED), 0.6164383888244629)
    got = losses.tversky(SEGMENT_TRUE, SEGMENT_PRED, alpha=0.3, beta=0.7, axis=(1, 2, 3))
    _close(got, [0.5, 0.7350993156433105])
    _close(losses.Dice()(SEGMENT_TRUE, SEGMENT_PRED), 0.6164383888244629)
    per_image = losses.Dice(axis=(1, 2, 3))
    _close(per_image(SEGMENT_TRUE, SEGMENT_PRED, sample_weight=[0.25, 2.0]), 0.8200757503509521)
    # one loss for the batch, times the mean weight
    _close(losses.Dice()(SEGMENT_TRUE, SEGMENT_PRED, [0.25, 2.0]), 0.6934931874275208)
    tversky = losses.Tversky(alpha=0.3, beta=0.7, axis=(1, 2, 3), reduction="none")
    _close(tversky(SEGMENT_TRUE, SEGMENT_PRED), [0.5, 0.7350993156433105])
    _close(losses.Tversky(reduction="sum")(SEGMENT_TRUE, SEGMENT_PRED), 0.6164383888244629)
    rows = losses.Dice(axis=-1, reduction=None)
    got = rows([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], [[0.8, 0.1, 0.4], [0.3, 0.3, 0.3]])
    _close(got, [0.2727273106575012, 0.6842105388641357])


def test_dice_and_tversky_formulas():
    rng = np.random.default_rng(1)
    y, p = rng.integers(0, 2, (3, 5)).astype(float), rng.uniform(0, 1, (3, 5))
    tp, fp, fn = (y * p).sum(-1), ((1 - p) * y).sum(-1), (p * (1 - y)).sum(-1)
    got = losses.tversky(y, tt.constant(p), alpha=0.2, beta=0.9, axis=-1)
    _close(got, 1 - tp / (tp + 0.2 * fp + 0.9 * fn + 1e-7), rtol=1e-12, atol=0)
    dice = 1 - 2 * (y * p).sum() / (y.sum() + p.sum() + 1e-7)
    _close(losses.dice(y, tt.constant(p)), dice, rtol=1e-12, atol=0)
    _close(losses.dice(y, tt.constant(y)), 0.0)  # a perfect overlap
    tiny = tt.constant([[1e-7]], tt.float64)  # where the EPSILON in the divisor tells
    _close(losses.dice(tiny, tiny), 1 - 2e-14 / 3e-7, rtol=1e-12, atol=0)


def test_dice_and_tversky_configs():
    assert losses.Dice().get_config() == {  # Keras's
        "name": "dice",
        "reduction": "sum_over_batch_size",
        "axis": None,
    }
    assert losses.Tversky(alpha=0.3, beta=0.7).get_config() == {
        "name": "tversky",
        "reduction": "sum_over_batch_size",
        "alpha": 0.3,
        "beta": 0.7,
        "axis": None,
    }
    assert losses.get("dice") is losses.dice and losses.get("tversky") is losses.tversky
    assert isinstance(losses.get("Tversky"), losses.Tversky)


# --- SparseCategoricalCrossentropy(ignore_class) ---------------------------------------------


def test_ignore_class_gives_zero_losses_and_a_mask():
    got = losses.sparse_categorical_crossentropy(LABELS, PROBABILITIES, ignore_class=-1)
    _close(got, [0.3566749691963196, 0.6931471228599548, 0.0, 0.2231435477733612])  # Keras
    assert got._keras_mask.numpy().tolist() == [True, True, False, True]
    plain = losses.sparse_categorical_crossentropy([0, 1], PROBABILITIES[:2])
    assert plain._keras_mask is None


# Keras's values for LABELS and PROBABILITIES with ignore_class=-1: without weights, then
# with WEIGHTS
IGNORED_BY_REDUCTION = {
    "sum_over_batch_size": (0.42432188987731934, 0.6181803345680237),
    "mean": (0.42432188987731934, 0.6181803345680237),
    "sum": (1.272965669631958, 1.8545410633087158),
    "mean_with_sample_weight": (0.42432188987731934, 0.5298689007759094),
    None: (
        [0.3566749691963196, 0.6931471228599548, 0.0, 0.2231435477733612],
        [0.3566749691963196, 1.3862942457199097, 0.0, 0.1115717738866806],
    ),
}


@pytest.mark.parametrize("reduction", list(IGNORED_BY_REDUCTION))
def test_ignore_class_reductions_match_keras(reduction):
    loss = losses.SparseCategoricalCrossentropy(ignore_class=-1, reduction=reduction)
    unweighted, weighted = IGNORED_BY_REDUCTION[reduction]
    _close(loss(LABELS, PROBABILITIES), unweighted)
    _close(loss(LABELS, PROBABILITIES, sample_weight=WEIGHTS), weighted)
    _close(loss(LABELS[:, None], PROBABILITIES), unweighted)  # labels of shape (N, 1)


def test_ignore_class_for_segmentation_maps_and_logits():
    labels = np.array([[0, 255, 1], [2, 1, 255]])
    probabilities = np.array(
        [
            [
                [0.6237181425094604, 0.2916185259819031, 0.08466324955224991],
                [0.0363910011947155, 0.4556303322315216, 0.5079786777496338],
                [0.32354265451431274, 0.3838379383087158, 0.2926194369792938],
            ],
            [
                [0.5167006850242615, 0.4543333649635315, 0.028965923935174942],
                [0.5116757750511169, 0.048476360738277435, 0.43984782695770264],
                [0.13133612275123596, 0.5268757939338684, 0.34178808331489563],
            ],
        ],
        "float32",
    )
    per_entry = losses.SparseCategoricalCrossentropy(ignore_class=255, reduction="none")
    expected = [[0.47205662727355957, 0.0, 0.9575347900390625], [3.541635274887085, 3.026679039001465, 0.0]]  # fmt: skip
    _close(per_entry(labels, probabilities), expected)  # Keras
    # Keras: the mean over the 4 entries kept; with weights per row, 21.13 / 8 and 21.13 / 4
    mean = losses.SparseCategoricalCrossentropy(ignore_class=255)
    _close(mean(labels, probabilities), 1.999476432800293)
    _close(mean(labels, probabilities, sample_weight=[[1.0], [3.0]]), 5.283633708953857)
    by_weight = losses.SparseCategoricalCrossentropy(
        ignore_class=255, reduction="mean_with_sample_weight"
    )
    _close(by_weight(labels, probabilities, sample_weight=[[1.0], [3.0]]), 2.6418166160583496)
    logits = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)
    _close(logits(LABELS[[0, 1, 3, 3]], LOGITS), 0.38800275325775146)  # Keras
    everything = losses.SparseCategoricalCrossentropy(ignore_class=1)
    assert float(everything(np.array([1, 1]), PROBABILITIES[:2])) == 0.0  # Keras: 0, not NaN


def test_ignore_class_joins_the_mask_of_the_predictions():
    predictions = tt.constant(PROBABILITIES)
    predictions._keras_mask = tt.constant([True, True, True, False])  # a layer's mask
    # Keras: the mean over the two entries neither mask leaves out
    expected = {"sum_over_batch_size": 0.52491105, "sum": 1.0498221}
    expected["mean_with_sample_weight"] = expected["sum_over_batch_size"]
    for reduction, value in expected.items():
        loss = losses.SparseCategoricalCrossentropy(ignore_class=-1, reduction=reduction)
        _close(loss(LABELS, predictions), value)


def test_ignore_class_hides_the_logits_behind_a_softmax():
    # Keras sets the ignored predictions to 0 first, so its softmax's logits are not read
    saturated = tt.keras.activations.softmax(tt.constant([[0.0, 40.0]]))
    _close(losses.SparseCategoricalCrossentropy()([0], saturated), 40.0)  # Keras
    ignoring = losses.SparseCategoricalCrossentropy(ignore_class=-1)
    _close(ignoring([0], saturated), 16.118095)  # Keras


def test_ignore_class_gradient_and_config():
    logits = tt.Variable(LOGITS)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    with tt.GradientTape() as tape:
        value = loss(LABELS, logits)
    expected = [  # Keras
        [-0.14196768403053284, 0.025898527354002, 0.11606913805007935],
        [0.044172149151563644, -0.06610741466283798, 0.02193523943424225],
        [0.0, 0.0, 0.0],
        [0.018870577216148376, 0.08457206189632416, -0.10344265401363373],
    ]
    _close(value, 0.3825149)
    _close(tape.gradient(value, logits), expected, rtol=2e-6)
    assert loss.get_config() == {  # Keras's: no axis
        "name": "sparse_categorical_crossentropy",
        "reduction": "sum_over_batch_size",
        "from_logits": True,
        "ignore_class": -1,
    }


def test_ignore_class_in_the_metric_counts_the_ignored_as_zero():
    metric = metrics.SparseCategoricalCrossentropy(ignore_class=-1)
    _close(metric(LABELS, PROBABILITIES), 0.3182414174079895)  # Keras
    assert metric.get_config() == {
        "name": "sparse_categorical_crossentropy",
        "dtype": "float32",
        "from_logits": False,
        "ignore_class": -1,
        "axis": -1,
    }


# --- the reductions and the dtype of a Loss --------------------------------------------------

REGRESSION_TRUE = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [2.0, 1.0]])
REGRESSION_PRED = np.array([[1.0, 1.0], [1.0, 0.0], [0.5, 0.0], [1.0, 1.0]])

# Keras's MeanSquaredError for REGRESSION_*: no weight, [1, 2, 0, 3], its column, 2.5, zeros
MEAN_REDUCTIONS = {
    "mean": [0.40625, 0.75, 0.75, 1.015625, 0.0],
    "mean_with_sample_weight": [0.40625, 0.5, 0.5, 1.625, 0.0],
}


@pytest.mark.parametrize("reduction", list(MEAN_REDUCTIONS))
def test_mean_reductions_match_keras(reduction):
    loss = losses.MeanSquaredError(reduction=reduction)
    weights = [None, [1.0, 2.0, 0.0, 3.0], [[1.0], [2.0], [0.0], [3.0]], 2.5, [0.0] * 4]
    for weight, expected in zip(weights, MEAN_REDUCTIONS[reduction], strict=True):
        _close(loss(REGRESSION_TRUE, REGRESSION_PRED, sample_weight=weight), expected)
    assert loss.get_config() == {"name": "mean_squared_error", "reduction": reduction}


def test_mean_with_sample_weight_divides_by_the_weights_as_given():
    loss = losses.MeanAbsoluteError(reduction="mean_with_sample_weight")
    weight = [[1.0, 2.0], [0.0, 1.0], [1.0, 1.0], [3.0, 0.0]]
    got = loss(REGRESSION_TRUE[:, :, None], REGRESSION_PRED[:, :, None], sample_weight=weight)
    _close(got, 0.6111111044883728)  # Keras
    with pytest.raises(ValueError, match="'mean_with_sample_weight'"):
        losses.MeanSquaredError(reduction="mean_of_weights")


def test_a_loss_computes_in_floatx_unless_given_a_dtype():
    y_true, y_pred = tt.constant(REGRESSION_TRUE), tt.constant(REGRESSION_PRED)
    mse = losses.MeanSquaredError()(y_true, y_pred)
    assert mse.dtype == tt.float32 and float(mse) == 0.40625  # Keras: float32
    bce = losses.BinaryCrossentropy()(
        tt.constant([[0.0, 1.0]], tt.float64), tt.constant([[0.3, 0.6]], tt.float64)
    )
    assert bce.dtype == tt.float32
    _close(bce, 0.4337502717971802)  # Keras
    assert losses.mean_squared_error(y_true, y_pred).dtype == tt.float64  # Keras: float64
    forced = losses.MeanSquaredError(dtype="float64")(REGRESSION_TRUE, tt.cast(y_pred, "float32"))
    assert forced.dtype == tt.float64
    policy = tt.keras.mixed_precision.DTypePolicy("mixed_float16")
    assert losses.MeanSquaredError(dtype=policy).dtype == tt.float16  # Keras: float16
    labels = tt.constant([1])
    scce = losses.SparseCategoricalCrossentropy()(labels, tt.constant([[0.25, 0.75]], tt.float64))
    assert scce.dtype == tt.float32
    _close(scce, 0.28768202662467957)  # Keras

    class Scaled(losses.Loss):
        def call(self, y_true, y_pred):
            return y_true * 1.5 + y_pred * 0.0

    class Wide(losses.Loss):
        def call(self, y_true, y_pred):
            return tt.cast(y_pred, "float64") * 2.0

    # Keras: y_true is cast too, and the losses, to float32
    scaled = Scaled()(tt.constant([1, 2]), tt.constant([0.0, 0.0], tt.float64))
    assert scaled.dtype == tt.float32 and float(scaled) == 2.25
    wide = Wide()([0.0, 0.0], [0.25, 0.5])
    assert wide.dtype == tt.float32 and float(wide) == 0.75
    try:
        tt.keras.backend.set_floatx("float64")
        made_now = losses.MeanSquaredError()
    finally:
        tt.keras.backend.set_floatx("float32")
    assert made_now(REGRESSION_TRUE, REGRESSION_PRED).dtype == tt.float64


# --- the IoU metrics -------------------------------------------------------------------------

ONE_HOT = np.eye(3)[[1, 0, 1, 2]]
SCORES = np.array([[0.1, 0.7, 0.2], [0.8, 0.1, 0.1], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3]], "float32")
SCORE_LABELS = [0.9, 0.5, 0.3, 0.49, 0.7]


def _cases():
    """(metric, y_true, y_pred, sample_weight, Keras's result)."""
    return [
        (metrics.MeanIoU(4, ignore_class=0), [0, 1, 2, 3, 0, 1], [1, 1, 2, 0, 0, 3], None, 0.375),
        (metrics.MeanIoU(3, ignore_class=-1), [-1, 1, 2, 5, 0], [0, 1, 2, 2, 7], None, 0.9999999),
        (
            metrics.MeanIoU(3, dtype="float32"),
            [0, 1, 2, 1],
            [0, 1, 1, 1],
            [0.5, 1.5, 2.0, 0.25],
            0.48888882994651794,
        ),
        (metrics.MeanIoU(3, sparse_y_pred=False), [1, 0, 1, 2], SCORES, None, 0.4444444),
        (
            metrics.MeanIoU(3, sparse_y_true=False, sparse_y_pred=False),
            ONE_HOT,
            SCORES,
            None,
            0.4444444,
        ),
        (metrics.OneHotMeanIoU(3), ONE_HOT, SCORES, None, 0.4444444),
        (metrics.OneHotIoU(3, [1]), ONE_HOT, SCORES, None, 0.3333333134651184),
        (metrics.IoU(3, [0, 2]), [0, 1, 2, 2, 0], [0, 2, 2, 1, 1], None, 0.4166666865348816),
        (metrics.IoU(3, [1]), [0, 1, 2, 2, 0], [0, 2, 2, 1, 1], None, 0.0),
        (metrics.BinaryIoU(), [1, 1, 0, 0, 0], SCORE_LABELS, None, 0.6666666865348816),
        (metrics.BinaryIoU([0]), [1, 1, 0, 0, 0], SCORE_LABELS, [1, 2, 3, 1, 2], 0.6666666),
    ]


@pytest.mark.parametrize("case", range(len(_cases())))
def test_iou_metrics_match_keras(case):
    metric, y_true, y_pred, weight, expected = _cases()[case]
    got = metric(np.asarray(y_true), np.asarray(y_pred), sample_weight=weight)
    assert got.dtype == tt.float32
    _close(got, expected)


def test_a_perfect_iou_falls_short_of_one_by_keras_epsilons():
    # Keras: EPSILON added to each class's union and to the number of classes
    assert float(metrics.MeanIoU(2)([0, 1], [0, 1])) == 0.9999998807907104


def test_mean_iou_accumulates_over_batches_and_resets():
    metric = metrics.MeanIoU(num_classes=3)
    assert float(metric.result()) == 0.0
    _close(metric([0, 1, 2, 2], [0, 2, 2, 1]), 0.4444444179534912)  # Keras
    weight = np.array([[1, 2], [3, 0]])
    _close(metric(np.array([[1, 1], [0, 2]]), np.array([[1, 0], [0, 2]]), weight), 0.4)
    with pytest.warns(UserWarning, match="truncated"):
        result = metric([0, 1], [1, 1], sample_weight=np.array([0.5, 1.7]))
    _close(result, 0.4444444477558136)  # Keras: the weights count as 0 and 1
    assert metric.total_cm.numpy().tolist() == [[4, 0, 0], [2, 2, 1], [0, 1, 1]]
    assert metric.total_cm.dtype == tt.int64
    metric.reset_state()
    assert float(metric.result()) == 0.0 and not metric.total_cm.numpy().any()
    # the binary threshold: float weights truncate too (Keras: only the last weight, 2, counts)
    binary = metrics.BinaryIoU([1], threshold=0.3)
    with pytest.warns(UserWarning):
        result = binary([1, 1, 0, 0, 0], SCORE_LABELS, np.array([0.2, 0.3, 0.4, 0.1, 2.0]))
    assert float(result) == 0.0


def test_iou_names_and_configs_are_keras():
    assert metrics.MeanIoU(3).get_config() == {
        "num_classes": 3,
        "name": "mean_io_u",
        "dtype": "int64",
        "ignore_class": None,
        "sparse_y_true": True,
        "sparse_y_pred": True,
        "axis": -1,
    }
    assert metrics.IoU(3, [0, 2]).get_config() == {
        "name": "io_u",
        "dtype": "int64",
        "num_classes": 3,
        "target_class_ids": [0, 2],
        "ignore_class": None,
        "sparse_y_true": True,
        "sparse_y_pred": True,
        "axis": -1,
    }
    assert metrics.BinaryIoU().get_config() == {
        "target_class_ids": [0, 1],
        "threshold": 0.5,
        "name": "binary_io_u",
        "dtype": "int64",
    }
    assert metrics.OneHotMeanIoU(3).get_config() == {
        "num_classes": 3,
        "name": "one_hot_mean_io_u",
        "dtype": "int64",
        "ignore_class": None,
        "sparse_y_pred": False,
        "axis": -1,
    }
    assert metrics.OneHotIoU(3, [1]).get_config() == {
        "num_classes": 3,
        "target_class_ids": [1],
        "name": "one_hot_io_u",
        "dtype": "int64",
        "ignore_class": None,
        "sparse_y_pred": False,
        "axis": -1,
    }
    again = metrics.MeanIoU.from_config(metrics.MeanIoU(4, ignore_class=0).get_config())
    _close(again([0, 1, 2, 3, 0, 1], [1, 1, 2, 0, 0, 3]), 0.375)
    with pytest.raises(ValueError, match="out of range"):
        metrics.IoU(2, [2])


# --- inside tt.function ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_losses_and_metrics_inside_traced_functions(backend):
    ignoring = losses.SparseCategoricalCrossentropy(ignore_class=-1)
    by_weight = losses.SparseCategoricalCrossentropy(
        ignore_class=-1, reduction="mean_with_sample_weight"
    )
    focal = losses.BinaryFocalCrossentropy(apply_class_balancing=True, reduction="sum")
    dice = losses.Dice(axis=(1, 2, 3))
    tversky = losses.Tversky(alpha=0.3, beta=0.7, axis=(1, 2, 3), reduction="none")
    iou = metrics.MeanIoU(num_classes=3)

    def step(labels, p, w, binary, binary_pred, segments, segments_pred, classes, predicted, n):
        iou.update_state(classes, predicted, sample_weight=n)
        return (
            ignoring(labels, p),
            by_weight(labels, p, w),
            focal(binary, binary_pred),
            dice(segments, segments_pred, sample_weight=[0.25, 2.0]),
            tversky(segments, segments_pred),
            iou.result(),
        )

    traced = tt.function(step, backend=backend)
    losses_of = [LABELS, PROBABILITIES, WEIGHTS, BINARY_TRUE, BINARY_PRED]
    losses_of += [SEGMENT_TRUE, SEGMENT_PRED]
    first = traced(*map(tt.constant, [*losses_of, [0, 1, 2, 2], [0, 2, 2, 1], [1, 1, 2, 1]]))
    second = traced(*map(tt.constant, [*losses_of, [1, 1, 0, 0], [1, 0, 0, 0], [3, 1, 1, 1]]))
    for got in (first, second):  # Keras's values, as above
        _close(got[:4], [0.42432188987731934, 0.5298689007759094, 0.31928113102912903, 0.8200757503509521])  # fmt: skip
        _close(got[4], [0.5, 0.7350993156433105])
    _close(first[5], 0.4999999701976776)  # Keras (in tf.function): the first batch's IoU
    _close(second[5], 0.5833333134651184)  # Keras: both batches'
    assert traced.experimental_get_tracing_count() == 1
