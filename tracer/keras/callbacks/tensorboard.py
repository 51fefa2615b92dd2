"""`TensorBoard`: Keras 3's TensorBoard callback, writing event files with tt.summary."""

import os
import time
import warnings

import numpy as np

from tracer import summary
from tracer.keras.callbacks.base import Callback
from tracer.summary import ops as summary_ops

# the model classes whose config `write_graph` writes, as Keras 3's TensorBoard names them
_WRITES_CONFIG = ("Functional", "Sequential")


class TensorBoard(Callback):
    """Write a fit's results for TensorBoard, in Keras 3's layout: event files in
    `log_dir/train` and `log_dir/validation`.

    At each epoch's end: `epoch_loss` and `epoch_<metric>` in each (validation results in
    `validation`), and `epoch_learning_rate` in `train`, at step `epoch`. After each
    validation: `evaluation_<name>_vs_iterations` at step `optimizer.iterations`. With
    `update_freq` an int N (or "batch", 1): `batch_<name>` in `train` at every Nth batch of
    the whole fit (step: the batch's number, counted from 1); as in Keras, summaries are then
    written only when that count (validation batches: their own count) is a multiple of N,
    the epoch's results too. With `histogram_freq` N: a histogram of every weight every N
    epochs (tag `<model>/<layer>/<weight>/histogram`), and with `write_images` an image of it
    (tag `.../image`). With `write_graph`: the model's Keras config (tag `keras`) at step 0.

    >>> import os, tempfile
    >>> import numpy as np
    >>> import tracer as tt
    >>> model = tt.keras.Sequential([tt.keras.Input((2,)), tt.keras.layers.Dense(1)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> logs = tempfile.mkdtemp()
    >>> callback = tt.keras.callbacks.TensorBoard(logs)
    >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[callback])
    >>> sorted(os.listdir(logs))
    ['train']
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
    ):
        super().__init__()
        if profile_batch:
            raise ValueError("tracer has no profiler for TensorBoard: profile_batch must be 0")
        if embeddings_freq:
            raise ValueError("tracer does not write embeddings: embeddings_freq must be 0")
        if update_freq != "epoch" and update_freq != "batch" and not _positive_int(update_freq):
            raise ValueError(
                f'update_freq must be "epoch", "batch" or a positive int, not {update_freq!r}'
            )
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._writers = {}
        self._graph_pending = False  # write_graph, for a model not built yet
        self._contexts = []  # the (as_default, record_if) contexts entered, innermost last
        self._global_train_batch = 0
        self._global_test_batch = 0

    def set_model(self, model):
        super().set_model(model)
        self._writers = {}  # (new files for a new model, as Keras)
        # NOTE: as Keras, only Sequential and functional models (by class name: not their
        # subclasses) have their config written; others are passed over without a word
        self._graph_pending = self.write_graph and type(model).__name__ in _WRITES_CONFIG
        if self._graph_pending and getattr(model, "built", False):
            self._write_model_config()

    def _write_model_config(self):
        """The model's Keras config (what Keras's `to_json()` gives), for TensorBoard's graph
        dashboard; once."""
        self._graph_pending = False
        try:
            config = self.model.to_json()
        except (ImportError, TypeError, ValueError, AttributeError, NotImplementedError) as e:
            warnings.warn(f"TensorBoard: the model's config is not written ({e})", stacklevel=2)
            return
        # (written at once, whatever record_if a batch-level update_freq has entered)
        with self._writer("train").as_default(), summary.record_if(True):
            summary_ops.keras_model("keras", config, step=0)

    def _writer(self, kind):
        """The writer of `log_dir/train` or `log_dir/validation`, made when first used, so
        that a run without validation makes no `validation` directory."""
        if kind not in self._writers:
            directory = os.path.join(self.log_dir, kind)
            self._writers[kind] = summary.create_file_writer(directory)
        return self._writers[kind]

    # NOTE: with update_freq a number, Keras keeps `writer.as_default(step)` and a
    # `record_if(step % update_freq == 0)` entered between hooks, so that summaries written
    # inside the model go to the right writer and step; that condition also holds back the
    # epoch's results when the batch count at the epoch's end is not a multiple.
    def _push(self, kind, step):
        if self.update_freq == "epoch":
            return
        contexts = (
            self._writer(kind).as_default(step),
            summary.record_if(lambda: step % self.update_freq == 0),
        )
        for context in contexts:
            context.__enter__()
        self._contexts.append(contexts)

    def _pop(self):
        if self.update_freq == "epoch" or not self._contexts:
            return
        for context in reversed(self._contexts.pop()):
            context.__exit__(None, None, None)

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._push("train", 0)

    def on_train_end(self, logs=None):
        self._pop()
        for writer in self._writers.values():
            writer.close()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        self._pop()
        self._push("train", self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if self._graph_pending:  # a model built by its first batch
            self._write_model_config()
        step = self._global_train_batch
        if self.write_steps_per_second:
            elapsed = max(time.time() - self._batch_start, 1e-9)
            summary.scalar("batch_steps_per_second", 1.0 / elapsed, step=step)
        for name, value in (logs or {}).items():
            summary.scalar(f"batch_{name}", value, step=step)

    def on_test_begin(self, logs=None):
        self._push("validation", self._global_test_batch)

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        self._pop()
        self._push("validation", self._global_test_batch)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations"):
            with self._writer("validation").as_default():
                for name, value in (logs or {}).items():
                    summary.scalar(
                        f"evaluation_{name}_vs_iterations", value, step=optimizer.iterations
                    )
        self._pop()

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._epoch_start = time.time()
            self._epoch_iterations = _iterations(self.model)

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch(epoch, logs or {})
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch(self, epoch, logs):
        if not logs:
            return
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        validation = {k[len("val_") :]: v for k, v in logs.items() if k.startswith("val_")}
        rate = getattr(getattr(self.model, "optimizer", None), "learning_rate", None)
        if rate is not None:
            train["learning_rate"] = float(np.asarray(getattr(rate, "numpy", lambda: rate)()))
        if self.write_steps_per_second:
            elapsed = max(time.time() - self._epoch_start, 1e-9)
            train["steps_per_second"] = (_iterations(self.model) - self._epoch_iterations) / elapsed
        for kind, values in (("train", train), ("validation", validation)):
            if values:
                with self._writer(kind).as_default():
                    for name, value in values.items():
                        summary.scalar(f"epoch_{name}", value, step=epoch)

    def _log_weights(self, epoch):
        with self._writer("train").as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = _weight_path(self.model, weight).replace(":", "_")
                    value = weight.numpy()
                    summary.histogram(f"{name}/histogram", value, step=epoch)
                    if self.write_images:
                        image = _weight_image(value)
                        if image is not None:
                            summary.image(f"{name}/image", image, step=epoch)
            self._writer("train").flush()


def _positive_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0


def _iterations(model):
    return int(np.asarray(model.optimizer.iterations.numpy()))


def _weight_path(model, weight):
    """Keras 3's `variable.path`: "<model>/<layer>/<weight>" for the weights of a Sequential or
    subclassed model (its layers are built in its scope), "<layer>/<weight>" for a functional
    model's."""
    path = getattr(weight, "path", None)
    if path is not None:
        return path
    name = weight.name[: -len(":0")] if weight.name.endswith(":0") else weight.name
    # NOTE: by class name, as Keras's callback tells models apart (importing the class would
    # make an import circle: models -> training -> callbacks)
    return name if type(model).__name__ == "Functional" else f"{model.name}/{name}"


def _weight_image(value):
    """A weight as Keras shows it, [k, height, width, 1], or None where it cannot: a bias
    as one row, a kernel [in, out] as one image with its shorter side as height, a
    convolution kernel [h, w, channels] as one image per channel."""
    value = np.squeeze(value)
    if value.ndim == 1:
        value = value.reshape(1, value.shape[0], 1, 1)
    elif value.ndim == 2:
        if value.shape[0] > value.shape[1]:
            value = value.T
        value = value.reshape(1, *value.shape, 1)
    elif value.ndim == 3:
        value = np.transpose(value, (2, 0, 1))[..., None]
    if value.ndim == 4 and value.shape[-1] in (1, 3, 4):
        return value
    return None
