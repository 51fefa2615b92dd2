"""What `Model.compile` keeps: the loss over the model's outputs, the compiled metrics, and
class weights turned into sample weights.

A model may have one output or several (a list, or a dict by name). One loss applies to
every output; a list or dict of losses gives each output its own; `loss_weights` scales
each output's loss in the total. With several outputs, each output's loss is also logged
as `<output>_loss` and its metrics as `<output>_<metric>` (Keras 3's names); the metrics
for several outputs come as a list of lists or a dict by output name.
"""

import numpy as np

from tracer import nest
from tracer.context import state
from tracer.keras import losses
from tracer.keras import metrics as metrics_module
from tracer.keras.data_adapter import pack, unpack
from tracer.ops import array_ops, math_ops
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import convert_to_tensor


class CompileLoss:
    """The total loss of a batch, and a tracker per output when there are several."""

    def __init__(self, loss, loss_weights=None):
        self._given, self._weights = loss, loss_weights
        # [(Loss, weight, tracker or None), or None for an output without a loss] per output,
        # made on first use
        self._entries = None
        self.metrics = []

    def __call__(self, y, y_pred, sample_weight=None, output_names=None):
        outputs, names = _outputs(y_pred, output_names)
        targets = _targets(y, names, len(outputs))
        if self._entries is None:
            self._build(names)
        total = None
        for entry, target, output in zip(self._entries, targets, outputs):
            if entry is None:
                continue
            loss, weight, tracker = entry
            value = loss(target, output, sample_weight)
            if tracker is not None:
                tracker.update_state(value, sample_weight=_output_loss_weight(output))
            term = value if weight == 1.0 else math_ops.multiply(value, weight)
            total = term if total is None else math_ops.add(total, term)
        return total

    def _build(self, names):
        if isinstance(self._given, dict) and set(names) - set(self._given):
            raise ValueError(
                f"Expected keys {names} in loss dict, but found loss.keys()={sorted(self._given)}"
            )
        given = _per_output(self._given, names, "loss")
        weights = _per_output(self._weights, names, "loss_weights") if self._weights else None
        # an output whose loss is None in a list has none, as in Keras (its target is read
        # and ignored); the others are logged apart where there are several
        losing = [i for i, loss in enumerate(given) if loss is not None]
        if not losing:
            raise ValueError("a loss of None for every output: give at least one output a loss")
        self._entries = []
        for i, name in enumerate(names):
            if i not in losing:
                self._entries.append(None)
                continue
            tracker = metrics_module.Mean(name=f"{name}_loss") if len(losing) > 1 else None
            weight = 1.0 if weights is None else float(weights[i])
            self._entries.append((_loss_object(given[i]), weight, tracker))
            if tracker is not None:
                self.metrics.append(tracker)


class CompileMetrics:
    """The metrics `compile` was given, resolved against the first batch's targets and
    outputs (Keras's "accuracy" means binary, categorical or sparse accuracy by shape)."""

    name = "compile_metrics"

    def __init__(self, metrics=None, weighted_metrics=None):
        self._given = (metrics, weighted_metrics)
        self._entries = []  # (log name, metric, output index, weighted)
        self._output_names = None  # the prefixes of the log names, with several outputs
        self.built = False

    def build(self, y, y_pred, output_names=None):
        outputs, names = _outputs(y_pred, output_names)
        targets = _targets(y, names, len(outputs))
        self._output_names = names if len(outputs) > 1 else None
        for given, weighted in zip(self._given, (False, True)):
            if not given:
                continue
            per_output = [given] if len(outputs) == 1 else _per_output(given, names, "metrics")
            for index, identifiers in enumerate(per_output):
                if identifiers is None:
                    continue
                if not isinstance(identifiers, (list, tuple)):
                    identifiers = [identifiers]
                for identifier in identifiers:
                    metric = metrics_module.resolve(identifier, targets[index], outputs[index])
                    name = metric.name if len(outputs) == 1 else f"{names[index]}_{metric.name}"
                    self._entries.append((name, metric, index, weighted))
        self.built = True

    def update_state(self, y, y_pred, sample_weight=None, output_names=None):
        if not self.built:
            self.build(y, y_pred, output_names)
        outputs, names = _outputs(y_pred, output_names)
        targets = _targets(y, names, len(outputs))
        for _, metric, index, weighted in self._entries:
            weight = sample_weight if weighted else None
            metric.update_state(targets[index], outputs[index], sample_weight=weight)

    def result(self):
        """{log name: value}, names made unique as Keras 3 makes them: an unweighted metric
        whose name is taken becomes `<name>_<i>`; a weighted one `weighted_<name>` (after the
        output's name), then `weighted_<name>_<i>`."""
        results, counts = {}, {}
        for name, metric, index, weighted in self._entries:
            if name in counts and weighted:
                name = self._weighted_name(metric, index)
            if name in counts:
                # NOTE: as in Keras, the suffixed name is not counted itself.
                counts[name] += 1
                name = f"{name}_{counts[name] - 1}"
            else:
                counts[name] = 1
            results[name] = metric.result()
        return results

    def _weighted_name(self, metric, index):
        name = f"weighted_{metric.name}"
        return name if self._output_names is None else f"{self._output_names[index]}_{name}"

    @property
    def metrics(self):
        """The metrics, unweighted then weighted, each under its own (unprefixed) name: the
        order `evaluate` lists their values in, as Keras's CompileMetrics.metrics."""
        return [metric for _, metric, _, _ in self._entries]

    def reset_state(self):
        for _, metric, _, _ in self._entries:
            metric.reset_state()

    @property
    def variables(self):
        return [v for _, metric, _, _ in self._entries for v in metric.variables]


def class_weighted(data, class_weight, per_element=False):
    """The batch `(x, y, weights)` where each sample weighs its class's weight, as Keras 3's
    class_weight_to_sample_weights gives it: the class is the one-hot target's argmax, or
    the label rounded to the nearest integer (soft binary labels too); a class the dict does
    not name weighs 1. Keras refuses sample weights beside class weights, and so does this.

    With `per_element` (a tf.data dataset's batches, which Keras weights by a map over the
    dataset) the targets may have any rank: each element weighs its class's weight, as a
    segmentation's pixels do; the weights have the targets' shape less a last axis of classes
    or of size 1. Otherwise targets of more than one class per sample are refused (Keras fails
    converting them to one class each, with a TypeError)."""
    x, y, sample_weight = unpack(data)
    if sample_weight is not None:
        raise ValueError(
            "class_weight and sample_weight were both given; give one of them (fold the class "
            "weights into the sample weights), as Keras requires"
        )
    if y is None or len(nest.flatten(y)) != 1:
        raise ValueError("class_weight needs a model with one output and its targets y")
    targets = np.asarray(nest.flatten(y)[0])
    labels = targets
    if labels.ndim > 1:
        labels = labels.argmax(axis=-1) if labels.shape[-1] != 1 else labels.squeeze(-1)
    if labels.ndim != 1 and not per_element:
        raise TypeError(
            f"class_weight needs one class per sample; the targets have shape {targets.shape} "
            "(a tf.data dataset of these targets weighs each element by its class)"
        )
    classes, where = np.unique(np.round(labels).astype(np.int32), return_inverse=True)
    table = np.array([class_weight.get(int(c), 1.0) for c in classes], dtype=np.float32)
    return pack(x, y, table[where].reshape(labels.shape))


def _outputs(y_pred, output_names=None):
    """(the outputs in order, their names): a dict's keys; for a list, the model's
    `output_names` (a functional model's output layers) or `output_<i>`."""
    if isinstance(y_pred, dict):
        names = list(y_pred)
        return [y_pred[name] for name in names], names
    if isinstance(y_pred, (list, tuple)):
        if output_names is not None and len(output_names) == len(y_pred):
            return list(y_pred), list(output_names)
        return list(y_pred), [f"output_{i}" for i in range(len(y_pred))]
    return [y_pred], ["output"]


def _targets(y, names, count):
    if count == 1:
        flat = nest.flatten(y) if isinstance(y, (list, tuple, dict)) else [y]
        if len(flat) != 1:
            raise ValueError(f"the model has one output, but y holds {len(flat)} targets")
        return flat
    if isinstance(y, dict):
        missing = [name for name in names if name not in y]
        if missing:
            raise ValueError(f"y has no targets for the outputs {missing} (it has {sorted(y)})")
        return [y[name] for name in names]
    if not isinstance(y, (list, tuple)) or len(y) != count:
        raise ValueError(f"the model has {count} outputs; give y as a list of {count} targets")
    return list(y)


def _per_output(given, names, what):
    """`given` (one thing, a list, or a dict by output name) as a list over the outputs."""
    if isinstance(given, dict):
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ValueError(f"{what} names outputs {unknown} the model does not have {names}")
        return [given.get(name) for name in names]
    if isinstance(given, (list, tuple)) and len(names) > 1:
        if len(given) != len(names):
            raise ValueError(
                f"{what} lists {len(given)} entries for a model with {len(names)} outputs"
            )
        return list(given)
    return [given] * len(names)


def _loss_object(identifier):
    """A Loss object (Keras wraps a plain loss function to reduce it over the batch)."""
    loss = losses.get(identifier)
    if loss is None:
        raise ValueError("a loss of None for an output that needs one")
    if isinstance(loss, losses.Loss):
        return loss
    return losses.LossFunctionWrapper(loss, name=getattr(loss, "__name__", None))


def _output_loss_weight(output):
    """The weight of a batch in an output's logged loss: Keras's on TensorFlow weighs by the
    batch's static size, which a compiled step does not know (its tf.function reduces
    retracing), so there every batch weighs one, and an epoch's `<output>_loss` is the plain
    mean of its batches' (the total `loss` weighs by batch size either way); eagerly, the
    batch's size."""
    return 1.0 if state.trace is not None else batch_size(output)


def batch_size(x):
    """The number of samples of a batch (its first leaf's first axis, read when the step
    runs): the weight of a batch in an epoch's mean loss, as in Keras 3. A sparse batch's
    is its dense shape's."""
    first = nest.flatten(x, expand_composites=False)[0]
    if isinstance(first, SparseTensor):
        return convert_to_tensor(float(first.shape[0]))
    first = convert_to_tensor(first)
    return array_ops.cast(array_ops.shape(first)[0], "float32")
