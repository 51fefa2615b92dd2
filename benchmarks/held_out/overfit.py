"""Held-out: TensorFlow's "Overfit and underfit" tutorial on a synthetic table shaped like
HIGGS (28 features, a binary label): Adam on an InverseTimeDecay schedule, tiny, small,
medium and large models of ELU Dense layers trained on a `.cache().shuffle().repeat().batch()`
dataset with `steps_per_epoch` and EarlyStopping on `val_binary_crossentropy`, then the large
model with `regularizers.l2`, with Dropout, and with both. Loss and metric are
BinaryCrossentropy(from_logits=True). Weights come from numpy; the size and L2 models are
also trained on the same dataset without its shuffle, which TF and tracer must agree on to
the printed digit; the shuffled runs and the dropout models draw their own random numbers,
so only their shapes, keys and summaries are compared."""

import contextlib
import gzip
import io
import pathlib
import tempfile
import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
regularizers = tf.keras.regularizers
rng = np.random.default_rng(0)

# -- a HIGGS-like table: a label, then 28 features ----------------------------------------
FEATURES = 28
N_VALIDATION = 500
N_TRAIN = 4000
BUFFER_SIZE = N_TRAIN
BATCH_SIZE = 250
STEPS_PER_EPOCH = N_TRAIN // BATCH_SIZE

rows = N_VALIDATION + N_TRAIN
features = rng.normal(size=(rows, FEATURES)).astype(np.float32)
hidden = np.tanh(features[:, :8] @ rng.normal(size=(8, 8))) @ rng.normal(size=8)
labels = (hidden + rng.normal(0.0, 1.0, rows) > 0).astype(np.float32)
workdir = pathlib.Path(tempfile.mkdtemp())
gz = workdir / "HIGGS.csv.gz"
with gzip.open(gz, "wt") as csv:
    for label, row in zip(labels, features):
        csv.write(",".join(f"{v:.9e}" for v in (label, *row)) + "\n")
logdir = workdir / "tensorboard_logs"

ds = tf.data.experimental.CsvDataset(str(gz), [0.0] * (FEATURES + 1), compression_type="GZIP")


def pack_row(*row):
    label = row[0]
    features = tf.stack(row[1:], 1)
    return features, label


packed_ds = ds.batch(1000).map(pack_row).unbatch()
for features_batch, label_batch in packed_ds.batch(1000).take(1):
    print(
        which,
        "first row",
        features_batch.shape,
        " ".join(f"{v:.4f}" for v in features_batch[0][:4]),
    )

validate_ds = packed_ds.take(N_VALIDATION).cache()
train_ds = packed_ds.skip(N_VALIDATION).take(N_TRAIN).cache()
print(which, "train_ds", train_ds.element_spec)

validate_ds = validate_ds.batch(BATCH_SIZE)
ordered_train_ds = train_ds.repeat().batch(BATCH_SIZE)  # the compared runs: no shuffle
train_ds = train_ds.shuffle(BUFFER_SIZE).repeat().batch(BATCH_SIZE)

lr_schedule = tf.keras.optimizers.schedules.InverseTimeDecay(
    0.001, decay_steps=STEPS_PER_EPOCH * 10, decay_rate=1, staircase=False
)
step = np.linspace(0, 1000, 5)
print(which, "learning rate", " ".join(f"{float(v):.6f}" for v in lr_schedule(step)))


def get_optimizer():
    return tf.keras.optimizers.Adam(lr_schedule)


class EpochDots(tf.keras.callbacks.Callback):
    """A dot per epoch and every `report_every` epochs the logs, as tensorflow_docs' EpochDots."""

    def __init__(self, report_every=5, dot_every=1):
        super().__init__()
        self.report_every, self.dot_every = report_every, dot_every
        self.lines = []

    def on_epoch_end(self, epoch, logs):
        if epoch % self.report_every == 0:
            text = ", ".join(f"{name}:{value:0.4f}" for name, value in sorted(logs.items()))
            self.lines.append(f"Epoch: {epoch:d}, {text}")
        if epoch % self.dot_every == 0:
            self.lines.append(".")


def get_callbacks(name):
    return [
        EpochDots(),
        tf.keras.callbacks.EarlyStopping(monitor="val_binary_crossentropy", patience=3),
        tf.keras.callbacks.TensorBoard(logdir / name),
    ]


summaries, reports = {}, {}


def compile_and_fit(model, name, optimizer=None, max_epochs=12, train=None):
    if optimizer is None:
        optimizer = get_optimizer()
    model.compile(
        optimizer=optimizer,
        loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[
            tf.keras.metrics.BinaryCrossentropy(from_logits=True, name="binary_crossentropy"),
            "accuracy",
        ],
    )
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        model.summary()
    summaries[name] = text.getvalue()
    callbacks = get_callbacks(name)
    history = model.fit(
        (train or train_ds).map(lambda x, y: (x, tf.expand_dims(y, axis=-1))),
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=max_epochs,
        validation_data=validate_ds.map(lambda x, y: (x, tf.expand_dims(y, axis=-1))),
        callbacks=callbacks,
        verbose=0,
    )
    reports[name] = callbacks[0].lines
    return history


init_rng = np.random.default_rng(1)


def set_numpy_weights(model):
    """Glorot-like kernels and zero biases from numpy, the same on both engines."""
    weights = []
    for w in model.get_weights():
        if w.ndim == 2:
            limit = np.sqrt(6.0 / (w.shape[0] + w.shape[1]))
            weights.append(init_rng.uniform(-limit, limit, w.shape).astype(np.float32))
        else:
            weights.append(np.zeros(w.shape, np.float32))
    model.set_weights(weights)
    return model


def dense_stack(widths, l2=None, dropout=None):
    stack = []
    for i, width in enumerate(widths):
        kwargs = {"input_shape": (FEATURES,)} if i == 0 else {}
        if l2 is not None:
            kwargs["kernel_regularizer"] = regularizers.l2(l2)
        stack.append(layers.Dense(width, activation="elu", **kwargs))
        if dropout is not None:
            stack.append(layers.Dropout(dropout))
    stack.append(layers.Dense(1))
    return set_numpy_weights(tf.keras.Sequential(stack))


def show(name, history):
    h = history.history
    print(which, name, "epochs", len(history.epoch), "keys", list(h))
    for key in ("loss", "binary_crossentropy", "accuracy", "val_binary_crossentropy"):
        print(which, name, key, " ".join(f"{v:.5f}" for v in h[key][::3]))


SIZES = {
    "Tiny": [16],
    "Small": [16, 16],
    "Medium": [64, 64, 64],
    "large": [512, 512, 512, 512],
}

# -- the model sizes, on the ordered dataset (compared to the digit) ----------------------
size_histories = {}
fit_times = {}
for name, widths in SIZES.items():
    start = time.perf_counter()
    size_histories[name] = compile_and_fit(
        dense_stack(widths), "sizes/" + name, train=ordered_train_ds
    )
    fit_times[name] = time.perf_counter() - start
    show("sizes/" + name, size_histories[name])
print(summaries["sizes/Medium"].rstrip())
print(which, "EpochDots of Tiny:", "".join(reports["sizes/Tiny"]).replace(".Epoch", ".\nEpoch"))
event_dirs = sorted(
    str(path.parent.relative_to(logdir)) for path in logdir.rglob("*") if "tfevents" in path.name
)
print(which, "tensorboard event files in", event_dirs)

# -- weight regularization ----------------------------------------------------------------
l2_model = dense_stack(SIZES["large"], l2=0.001)
l2_history = compile_and_fit(l2_model, "regularizers/l2", train=ordered_train_ds)
show("regularizers/l2", l2_history)
for features_batch, _ in validate_ds.take(1):
    result = l2_model(features_batch)
regularization_loss = tf.add_n(l2_model.losses)
print(which, "l2 losses", len(l2_model.losses), f"{float(regularization_loss):.5f}", result.shape)

# -- the shuffled runs and the dropout models: random, so shapes and keys only -----------
regularizer_histories = {"Tiny": compile_and_fit(dense_stack(SIZES["Tiny"]), "shuffled/Tiny")}
dropout_model = dense_stack(SIZES["large"], dropout=0.5)
regularizer_histories["dropout"] = compile_and_fit(dropout_model, "regularizers/dropout")
combined_model = dense_stack(SIZES["large"], l2=0.0001, dropout=0.5)
regularizer_histories["combined"] = compile_and_fit(combined_model, "regularizers/combined")
for name, history in regularizer_histories.items():
    h = history.history
    print(which, name, "keys", list(h), "finite", bool(np.all(np.isfinite(h["loss"]))))
print(summaries["regularizers/combined"].rstrip())
print(which, "combined l2 losses", len(combined_model.losses))

# -- the steady step time: the large model, one more fit on the ordered data --------------
large_model = dense_stack(SIZES["large"])
compile_and_fit(large_model, "timing", max_epochs=1, train=ordered_train_ds)
start = time.perf_counter()
large_model.fit(
    ordered_train_ds.map(lambda x, y: (x, tf.expand_dims(y, axis=-1))),
    steps_per_epoch=STEPS_PER_EPOCH,
    epochs=3,
    verbose=0,
)
step_time = (time.perf_counter() - start) / (3 * STEPS_PER_EPOCH)
print(
    which,
    "fit times",
    " ".join(f"{name} {seconds:.2f} s" for name, seconds in fit_times.items()),
    f"large step {step_time * 1e3:.2f} ms",
)
