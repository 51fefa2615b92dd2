"""Keras's training API on tracer's compiled step: `Model.compile`, `fit`, `evaluate`,
`predict`, `train_on_batch`, `test_on_batch`, `predict_on_batch`.

`fit` runs `train_step` (the forward pass, the loss, the gradient, the optimizer's update
and the metrics' updates) as one `tt.function`, so that a step is one call of one compiled
C module, as the README's hand-written training step is. `evaluate` and `predict` compile
`test_step` and `predict_step` the same way. A subclass that overrides `train_step` (or the
others) has its own step compiled instead, as in Keras; `compile(run_eagerly=True)` runs
the steps eagerly, `jit_compile=False` on the numpy interpreter.

The order of callbacks and logs is Keras 3's: batch logs hold each metric's running value
over the epoch so far, epoch logs the values at the epoch's end followed by the `val_`
values of the validation pass, which runs after the epoch's last batch. Before its first
step, a model that is not built yet is called once eagerly on the first batch, so that its
weights (and the metrics that depend on the shapes of its outputs) exist before tracing.
"""

import functools
import inspect
import itertools
import warnings

import numpy as np

from tracer import nest, optimizers
from tracer.function import function
from tracer.keras import callbacks as callbacks_module
from tracer.keras import data_adapter
from tracer.keras import metrics as metrics_module
from tracer.keras.compile_utils import CompileLoss, CompileMetrics, batch_size, class_weighted
from tracer.keras.loss_scale_optimizer import LossScaleOptimizer
from tracer.ops.array_ops import cast
from tracer.ops.broadcast_ops import reduce_sum
from tracer.tape import GradientTape

BACKENDS = {True: "c", False: "interpreter", "auto": "auto", None: "auto"}


class Trainer:
    """The training methods of `tt.keras.Model` (a mixin: the model is `self`)."""

    compiled = False
    steps_per_execution = 1
    train_function = test_function = predict_function = None  # (predict needs no compile)
    optimizer = None
    stop_training = False

    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        loss_weights=None,
        metrics=None,
        weighted_metrics=None,
        run_eagerly=False,
        steps_per_execution=1,
        jit_compile="auto",
        auto_scale_loss=True,
    ):
        """Choose the optimizer, loss and metrics that `fit` and `evaluate` use: names
        ("adam", "mse", "accuracy") or objects, as Keras takes them.

        `steps_per_execution` batches make one execution, as Keras's: the steps still run
        one batch each, but the batch callbacks are called once per execution (see
        `_executions`). A model whose policy is `"mixed_float16"` gets its optimizer wrapped
        in a `LossScaleOptimizer` (named "loss_scale_optimizer") unless `auto_scale_loss` is
        False or it is one already, as Keras's."""
        if jit_compile not in BACKENDS:
            raise ValueError(f"jit_compile must be True, False or 'auto', not {jit_compile!r}")
        if not isinstance(steps_per_execution, int) or steps_per_execution < 1:
            raise ValueError(
                f"steps_per_execution must be a positive int, not {steps_per_execution!r}"
            )
        self.optimizer = optimizers.get(optimizer)
        if (
            auto_scale_loss
            and _mixed_float16(self)
            and not isinstance(self.optimizer, LossScaleOptimizer)
        ):
            self.optimizer = LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
        self.loss = loss
        self._compile_loss = None if loss is None else CompileLoss(loss, loss_weights)
        self._loss_tracker = metrics_module.Mean(name="loss")
        self._compile_metrics = (
            CompileMetrics(metrics, weighted_metrics) if metrics or weighted_metrics else None
        )
        self.run_eagerly = bool(run_eagerly)
        self.jit_compile = jit_compile
        self.steps_per_execution = steps_per_execution
        self._compile_config = {
            "optimizer": optimizer,
            "loss": loss,
            "loss_weights": loss_weights,
            "metrics": metrics,
            "weighted_metrics": weighted_metrics,
            "run_eagerly": run_eagerly,
            "steps_per_execution": steps_per_execution,
            "jit_compile": jit_compile,
        }
        self.train_function = self.test_function = self.predict_function = None
        self.compiled = True

    # --- what a step does (Keras's methods, for subclasses to override) ----------------------

    def train_step(self, data):
        """One optimizer step on one batch; returns the logs (each metric's value)."""
        x, y, sample_weight = data_adapter.unpack(data)
        with GradientTape() as tape:
            y_pred = _called(self, x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
            scaled = _scaled(self.optimizer, loss)
        self._loss_tracker.update_state(loss, sample_weight=batch_size(x))
        variables = self.trainable_variables
        gradients = tape.gradient(scaled, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = data_adapter.unpack(data)
        y_pred = _called(self, x, training=False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        self._loss_tracker.update_state(loss, sample_weight=batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = data_adapter.unpack(data)
        return _called(self, x, training=False)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of `y_pred` against `y` (the sum over outputs, weighted), plus
        the sum of `self.losses` (add_loss's and the regularizers', as Keras's)."""
        added = self.losses
        if self._compile_loss is None and not added:
            raise ValueError(
                "the model has no loss: give compile() a loss, or override compute_loss or "
                "train_step"
            )
        total = None
        if self._compile_loss is not None:
            total = self._compile_loss(y, y_pred, sample_weight, self._output_names())
        for loss in added:
            loss = reduce_sum(cast(loss, "float32"))
            total = loss if total is None else total + loss
        return total

    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """Keras 2's compiled loss, which Keras 3 keeps for old `train_step`s (with a
        deprecation warning): `compute_loss(None, y, y_pred, sample_weight)`, which adds
        `self.losses` itself, so `regularization_losses` is not read (as in Keras 3). The
        loss metric is not updated."""
        warnings.warn(
            "`model.compiled_loss()` is deprecated; use `model.compute_loss(x, y, y_pred, "
            "sample_weight)`",
            stacklevel=2,
        )
        return self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=sample_weight)

    @property
    def compiled_metrics(self):
        """Keras 2's compiled metrics, as Keras 3 keeps them for old `train_step`s: its
        `update_state(y, y_pred, sample_weight=None)` (deprecated) updates every metric of
        `self.metrics`, a Mean (such as the loss metric) with `y_pred` as its values, the
        others with `(y, y_pred)`. So with it, the "loss" an epoch logs is the mean of the
        predictions, as Keras 3 logs it."""
        return _CompiledMetrics(self)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight, self._output_names())
        return self.get_metrics_result()

    def get_metrics_result(self):
        """{name: value} of every metric (the compiled metrics' each under its own name)."""
        logs = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                logs.update(result)
            else:
                logs[metric.name] = result
        return logs

    @property
    def metrics(self):
        """The loss tracker and the compiled metrics (after compile), then the metrics the
        model holds as attributes (a subclass's own trackers), as Keras lists them."""
        found = []
        if self.compiled:
            found.append(self._loss_tracker)
            if self._compile_metrics is not None:
                found.append(self._compile_metrics)
            if self._compile_loss is not None:
                found.extend(self._compile_loss.metrics)
        for value in vars(self).values():
            if isinstance(value, metrics_module.Metric) and all(value is not m for m in found):
                found.append(value)
        return found

    @property
    def metrics_names(self):
        return [metric.name for metric in self.metrics]

    def _metrics_result_or_logs(self, logs):
        """The logs of an epoch (fit's) or of evaluate: the metrics' results where the last
        step's logs name exactly the metrics (a nested dict, such as a step's
        `{"compile_metrics": {...}}`, counting as one name), else those logs, as Keras 3's.
        NOTE: so a train_step that returns {"loss": ...} without updating the loss metric
        gives an epoch loss of 0, as in Keras."""
        results = _floats(self.get_metrics_result())
        return results if set(logs) == set(results) else logs

    def _returned(self, logs, return_dict):
        """What evaluate and the `*_on_batch` methods return: `logs` (nested dicts lifted) by
        name in sorted order (as TensorFlow's Keras gives them, through its nest's sorted
        dicts), or its values in order."""
        logs = _flat(logs)
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    def _flatten_metrics_in_order(self, logs):
        """The logs as the list `evaluate` and the `*_on_batch` methods return (the value
        alone if there is one), in Keras 3's order: the values named by the metrics in order
        (the compiled metrics by their own names, without an output's prefix), then the
        others sorted by name. A value may come twice where two metrics share a name."""
        names = []
        for metric in self.metrics:
            if isinstance(metric, CompileMetrics):
                names += [sub_metric.name for sub_metric in metric.metrics]
            else:
                names.append(metric.name)
        values = [logs[name] for name in names if name in logs]
        values += [logs[name] for name in sorted(logs) if name not in names]
        return values[0] if len(values) == 1 else values

    def _output_names(self):
        """The names of the outputs, where the model has them (a functional model)."""
        return getattr(self, "output_names", None)

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    # --- the compiled steps -------------------------------------------------------------------

    def make_train_function(self, force=False):
        if self.train_function is None or force:
            self.train_function = self._stepper(self.train_step)
        return self.train_function

    def make_test_function(self, force=False):
        if self.test_function is None or force:
            self.test_function = self._stepper(self.test_step)
        return self.test_function

    def make_predict_function(self, force=False):
        if self.predict_function is None or force:
            self.predict_function = self._stepper(self.predict_step)
        return self.predict_function

    def _stepper(self, step):
        if getattr(self, "run_eagerly", False):
            return step
        return function(step, backend=BACKENDS[getattr(self, "jit_compile", "auto")])

    def _build_on(self, data):
        """Call the model once eagerly on a first batch, if it has no weights yet, and let
        the compiled metrics see its outputs (they choose by shape)."""
        x, y, _ = data_adapter.unpack(data)
        needs_metrics = (
            self.compiled
            and self._compile_metrics is not None
            and not self._compile_metrics.built
            and y is not None
        )
        if self.built and not needs_metrics:
            return
        y_pred = _called(self, x, training=False)
        if needs_metrics:
            self._compile_metrics.build(y, y_pred, self._output_names())

    # --- fit, evaluate, predict ---------------------------------------------------------------

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
    ):
        """Train for `epochs` epochs; returns the History (each epoch's logs)."""
        self._check_compiled("fit")
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = data_adapter.split_for_validation(
                x, y, sample_weight, validation_split
            )
        batches = data_adapter.adapter(
            x, y, sample_weight, batch_size, steps_per_epoch, shuffle, "fit", class_weight
        )
        from tracer.data.dataset import Dataset

        per_element = isinstance(x, Dataset)
        callback_list = self._callback_list(callbacks, verbose, epochs, batches.steps, True)
        self.stop_training = False
        step = None
        callback_list.on_train_begin()
        training_logs = None
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callback_list.on_epoch_begin(epoch)
            logs = None
            for begin, end, execution in self._executions(batches):
                callback_list.on_train_batch_begin(begin)
                for data in execution:
                    if class_weight is not None:
                        data = class_weighted(data, class_weight, per_element)
                    if step is None:
                        self._build_on(data)
                        step = self.make_train_function()
                    logs = _floats(step(data))
                callback_list.on_train_batch_end(end, logs)
                if self.stop_training:
                    break
            if logs is None:
                if batches.ran_out:  # (the adapter warned, as Keras's)
                    break
                raise ValueError("fit: the training data has no batches")
            epoch_logs = dict(self._metrics_result_or_logs(logs))
            if validation_data is not None and _validates(epoch, validation_freq):
                val_x, val_y, val_weight = data_adapter.unpack(validation_data)
                val_logs = self.evaluate(
                    val_x,
                    val_y,
                    sample_weight=val_weight,
                    batch_size=validation_batch_size or batch_size,
                    steps=validation_steps,
                    callbacks=callback_list,
                    return_dict=True,
                )
                epoch_logs.update({f"val_{name}": value for name, value in val_logs.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        if epochs > 0:  # Keras's: the moving averages become the weights (with use_ema)
            self.optimizer.finalize_variable_values(self.trainable_weights)
        callback_list.on_train_end(logs=training_logs)
        return self.history

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        callbacks=None,
        return_dict=False,
    ):
        """The loss and metrics over the data: a scalar when there is only the loss, a list
        in Keras 3's order otherwise (`_flatten_metrics_in_order`), or a dict with
        `return_dict`."""
        self._check_compiled("evaluate")
        batches = data_adapter.adapter(x, y, sample_weight, batch_size, steps, False, "evaluate")
        if isinstance(callbacks, callbacks_module.CallbackList):
            callback_list = callbacks  # fit's, for its validation pass
        else:
            callback_list = self._callback_list(callbacks, verbose, 1, batches.steps)
        self.reset_metrics()
        callback_list.on_test_begin()
        logs = None
        for begin, end, execution in self._executions(batches):
            callback_list.on_test_batch_begin(begin)
            for data in execution:
                if self.test_function is None:
                    self._build_on(data)
                logs = _floats(self.make_test_function()(data))
            callback_list.on_test_batch_end(end, logs)
        if logs is None:
            raise ValueError("evaluate: the data has no batches")
        logs = _flat(self._metrics_result_or_logs(logs))
        callback_list.on_test_end(logs)
        return self._returned(logs, return_dict)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for every sample of `x`, as numpy arrays (batches joined)."""
        batches = data_adapter.adapter(x, None, None, batch_size, steps, False, "predict")
        callback_list = self._callback_list(callbacks, verbose, 1, batches.steps)
        callback_list.on_predict_begin()
        outputs = []
        for begin, end, execution in self._executions(batches):
            callback_list.on_predict_batch_begin(begin)
            step = self.make_predict_function()
            executed = [_arrays(step(data)) for data in execution]
            outputs += executed
            callback_list.on_predict_batch_end(end, {"outputs": _joined(executed)})
        if not outputs:
            raise ValueError("predict: the data has no batches")
        callback_list.on_predict_end()
        return _joined(outputs)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One optimizer step on one batch; the metrics are of this batch alone (Keras 3
        resets them first)."""
        self._check_compiled("train_on_batch")
        data = data_adapter.pack(x, y, sample_weight)
        if class_weight is not None:
            data = class_weighted(data, class_weight)
        self._build_on(data)
        self.reset_metrics()
        logs = _floats(self.make_train_function()(data))
        return self._returned(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._check_compiled("test_on_batch")
        data = data_adapter.pack(x, y, sample_weight)
        self._build_on(data)
        self.reset_metrics()
        logs = _floats(self.make_test_function()(data))
        return self._returned(logs, return_dict)

    def predict_on_batch(self, x):
        return _arrays(self.make_predict_function()((x,)))

    def _executions(self, batches):
        """An epoch's batches in executions of `steps_per_execution` (the last may be
        shorter): `(begin, end, [batch, ...])`, where `begin` is the index of the first batch
        and `end` that of the execution's last step had it been full, `begin +
        steps_per_execution - 1`, the indices Keras's batch callbacks get."""
        size = self.steps_per_execution
        iterator = iter(batches.batches())
        for begin in itertools.count(0, size):
            execution = list(itertools.islice(iterator, size))
            if not execution:
                return
            yield begin, begin + size - 1, execution

    def _callback_list(self, callbacks, verbose, epochs, steps, add_history=False):
        """The user's callbacks, then (as Keras adds them) a History for fit and a progress
        bar unless verbose is 0; "auto" reaches them as given."""
        if verbose not in ("auto", 0, 1, 2):
            raise ValueError(f"verbose must be 'auto', 0, 1 or 2, not {verbose!r}")
        return callbacks_module.CallbackList(
            callbacks,
            add_history=add_history,
            add_progbar=verbose != 0,
            model=self,
            verbose=verbose,
            epochs=epochs,
            steps=steps,
        )

    def _check_compiled(self, method):
        if not self.compiled:
            raise NotCompiledError(
                f"{method}: the model must be compiled first: call "
                "model.compile(optimizer, loss) (as in Keras)"
            )


class _CompiledMetrics:
    """What `Model.compiled_metrics` gives: an object whose `update_state` updates the
    model's metrics."""

    def __init__(self, model):
        self._model = model

    def update_state(self, y, y_pred, sample_weight=None):
        warnings.warn(
            "`model.compiled_metrics()` is deprecated; update each metric of `self.metrics` "
            "with `metric.update_state(y, y_pred)`",
            stacklevel=2,
        )
        for metric in self._model.metrics:
            if isinstance(metric, metrics_module.Mean):
                metric.update_state(y_pred, sample_weight=sample_weight)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)


class NotCompiledError(ValueError, RuntimeError):
    """fit, evaluate or a batch method of a model not compiled: Keras 3's ValueError, and
    the RuntimeError of Keras 2 and of tracer before, so that either `except` catches it."""


def _validates(epoch, validation_freq):
    """Whether the epoch (0-based) ends with a validation pass: every `validation_freq`
    epochs, or those (1-based) listed."""
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return epoch + 1 in validation_freq


def _floats(logs):
    """The step's logs with Python floats for values, a dict among them (a metric whose
    result is a dict, as `compile_metrics` is) kept as a dict of floats: Keras 3 compares
    the step's own keys with its metrics' names (`_metrics_result_or_logs`)."""
    return {
        name: _floats(value) if isinstance(value, dict) else _float(value)
        for name, value in logs.items()
    }


def _flat(logs):
    """`logs` with sorted keys and the entries of nested dicts lifted to the top, as Keras 3
    hands them to callbacks and returns them."""
    flat = {}
    for name, value in sorted(logs.items()):
        if isinstance(value, dict):
            flat.update(_flat(value))
        else:
            flat[name] = value
    return flat


def _float(value):
    array = np.asarray(value)
    return float(array) if array.size == 1 else array


def _joined(outputs):
    """The outputs of several batches (each a structure of arrays) as one, joined along
    the batch axis."""
    joined = [np.concatenate(parts) for parts in zip(*map(nest.flatten, outputs))]
    return nest.pack_sequence_as(outputs[0], joined)


def _arrays(outputs):
    return nest.pack_sequence_as(outputs, [np.asarray(o) for o in nest.flatten(outputs)])


def _mixed_float16(model):
    """Whether the model's policy is `"mixed_float16"` (Keras's test for loss scaling)."""
    policy = getattr(model, "_dtype_policy", None)
    return policy is not None and policy.name == "mixed_float16"


def _scaled(optimizer, loss):
    """The loss the gradient is taken of: `optimizer.scale_loss(loss)` where the optimizer
    scales losses (a LossScaleOptimizer), else `loss` itself."""
    scale_loss = getattr(optimizer, "scale_loss", None)
    return loss if scale_loss is None else scale_loss(loss)


def _called(model, x, training):
    """The model's outputs for `x`, as Keras 3's steps call it: with `training` where its
    `call` takes that argument, else without, so that its layers take their own defaults
    (a subclassed model whose `call` lacks it runs its Dropout and BatchNormalization as in
    inference, in fit too, as Keras's does)."""
    if "training" in _call_parameters(type(model).call):
        return model(x, training=training)
    return model(x)


@functools.cache
def _call_parameters(call):
    return inspect.signature(call).parameters
