"""The base of the callbacks that watch a metric: which way it improves, and by how much."""

import operator
import warnings

from tracer.keras.callbacks.base import Callback

# Keras 3 learns whether a metric improves upward or downward from the metric object
# (`_direction`); the metrics by their Keras names, for models whose metrics do not say.
METRIC_DIRECTIONS = {
    **dict.fromkeys(
        [
            "acc",
            "accuracy",
            "auc",
            "binary_accuracy",
            "binary_io_u",
            "categorical_accuracy",
            "concordance_correlation",
            "cosine_similarity",
            "f1_score",
            "fbeta_score",
            "io_u",
            "mean_io_u",
            "one_hot_io_u",
            "one_hot_mean_io_u",
            "pearson_correlation",
            "precision",
            "precision_at_recall",
            "r2_score",
            "recall",
            "recall_at_precision",
            "sensitivity_at_specificity",
            "sparse_categorical_accuracy",
            "sparse_top_k_categorical_accuracy",
            "specificity_at_sensitivity",
            "top_k_categorical_accuracy",
        ],
        "max",
    ),
    **dict.fromkeys(
        [
            "binary_crossentropy",
            "categorical_crossentropy",
            "categorical_hinge",
            "ce",
            "crossentropy",
            "hinge",
            "kl_divergence",
            "logcosh",
            "loss",
            "mae",
            "mape",
            "mean_absolute_error",
            "mean_absolute_percentage_error",
            "mean_squared_error",
            "mean_squared_logarithmic_error",
            "mse",
            "msle",
            "poisson",
            "root_mean_squared_error",
            "sparse_categorical_crossentropy",
            "squared_hinge",
        ],
        "min",
    ),
}


class _MonitorCallback(Callback):
    """A callback that compares a monitored value with the best one so far.

    mode "min" or "max" says which way is better; "auto" takes it from the metric's name
    without "val_" ("loss" goes down), from the model's metric of that name when it has a
    `_direction` ("up" or "down"), or from METRIC_DIRECTIONS, and raises when none knows.
    A value improves on the best when it is better by more than `min_delta`.
    """

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.",
                stacklevel=3,
            )
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        mode = self.mode if self.mode != "auto" else self._auto_mode()
        self.monitor_op = operator.lt if mode == "min" else operator.gt
        if mode == "min":
            self.min_delta *= -1

    def _auto_mode(self):
        name = self.monitor.removeprefix("val_")
        metrics = getattr(self.model, "metrics", None) or ()
        # a container of metrics (Keras's compiled metrics) stands for the ones it holds
        metrics = [m for metric in metrics for m in (metric, *getattr(metric, "metrics", ()))]
        for metric in metrics:
            direction = getattr(metric, "_direction", None)
            if getattr(metric, "name", None) == name and direction in ("up", "down"):
                return "max" if direction == "up" else "min"
        if name in METRIC_DIRECTIONS:
            return METRIC_DIRECTIONS[name]
        raise ValueError(
            f"{type(self).__name__} callback received monitor={self.monitor}, but it cannot "
            "tell whether that metric should be maximized or minimized. Pass `mode='max'` "
            "to keep the highest value, or `mode='min'` to keep the lowest."
        )

    def _is_improvement(self, value, reference):
        return reference is None or bool(self.monitor_op(value - self.min_delta, reference))
