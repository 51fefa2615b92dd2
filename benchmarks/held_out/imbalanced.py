"""Held-out: TensorFlow's "Classification on imbalanced data" tutorial on a synthetic table
shaped like the credit-card one (29 features and a log amount, ~2% positives): standard
scaling and clipping in numpy, the tutorial's METRICS list, a Sequential model whose output
bias starts at log(pos/neg) through `initializers.Constant`, the initial weights saved with
`save_weights` and loaded into each new model, fits with a zero and a careful bias, a
baseline with EarlyStopping on `val_prc`, class weights, and oversampling with
`Dataset.sample_from_datasets`. Kernels come from numpy, fit does not shuffle and the
compared models use Dropout(0.0), so TF and tracer must print the same numbers; the
oversampled run draws its own random numbers (and its dropout is the tutorial's 0.5), so only
its shapes and keys are compared."""

import contextlib
import io
import os
import re
import tempfile
import time

import numpy as np
from engine import tf, which

keras = tf.keras
rng = np.random.default_rng(0)

# -- a credit-card-like table -------------------------------------------------------------
N, F = 12000, 29
direction = rng.normal(size=F)
raw_features = rng.normal(size=(N, F)) * rng.uniform(0.5, 3.0, F)
score = raw_features @ direction / np.sqrt(F) + rng.normal(0.0, 0.6, N)
raw_labels = (score > np.quantile(score, 0.98)).astype(np.int64)
amount = np.exp(rng.normal(3.0, 1.5, N)) * (1.0 + 2.0 * raw_labels)
eps = 0.001  # so that an amount of 0 has a finite log
table = np.concatenate([raw_features, np.log(amount + eps)[:, None]], axis=1)

neg, pos = np.bincount(raw_labels)
total = neg + pos
print(which, f"examples: total {total}, positive {pos} ({100 * pos / total:.2f}% of total)")

order = rng.permutation(N)
n_test, n_val = N // 5, (N - N // 5) // 5
test_idx, val_idx, train_idx = np.split(order, [n_test, n_test + n_val])
train_labels = raw_labels[train_idx].reshape(-1, 1)
val_labels = raw_labels[val_idx].reshape(-1, 1)
test_labels = raw_labels[test_idx].reshape(-1, 1)
bool_train_labels = train_labels[:, 0] != 0

# StandardScaler: the training set's mean and standard deviation, then a clip to [-5, 5].
mean, std = table[train_idx].mean(axis=0), table[train_idx].std(axis=0)
train_features = np.clip((table[train_idx] - mean) / std, -5, 5).astype(np.float32)
val_features = np.clip((table[val_idx] - mean) / std, -5, 5).astype(np.float32)
test_features = np.clip((table[test_idx] - mean) / std, -5, 5).astype(np.float32)
print(which, "average class probability", f"{train_labels.mean():.4f} {val_labels.mean():.4f}")
print(which, "shapes", train_features.shape, val_features.shape, test_features.shape)

METRICS = [
    keras.metrics.BinaryCrossentropy(name="cross entropy"),  # the same as the model's loss
    keras.metrics.MeanSquaredError(name="Brier score"),
    keras.metrics.TruePositives(name="tp"),
    keras.metrics.FalsePositives(name="fp"),
    keras.metrics.TrueNegatives(name="tn"),
    keras.metrics.FalseNegatives(name="fn"),
    keras.metrics.BinaryAccuracy(name="accuracy"),
    keras.metrics.Precision(name="precision"),
    keras.metrics.Recall(name="recall"),
    keras.metrics.AUC(name="auc"),
    keras.metrics.AUC(name="prc", curve="PR"),  # the area under the precision-recall curve
]

# The kernels every engine starts from (the biases come from the initializers).
init_rng = np.random.default_rng(1)
kernel_1 = init_rng.normal(0.0, 0.25, (train_features.shape[-1], 16)).astype(np.float32)
kernel_2 = init_rng.normal(0.0, 0.25, (16, 1)).astype(np.float32)


def make_model(metrics=METRICS, output_bias=None, dropout=0.0):
    if output_bias is not None:
        output_bias = tf.keras.initializers.Constant(output_bias)
    model = keras.Sequential(
        [
            keras.layers.Dense(16, activation="relu", input_shape=(train_features.shape[-1],)),
            keras.layers.Dropout(dropout),
            keras.layers.Dense(1, activation="sigmoid", bias_initializer=output_bias),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss=keras.losses.BinaryCrossentropy(),
        metrics=metrics,
    )
    weights = model.get_weights()
    # NOTE: with bias_initializer=None Keras 3 draws the bias with glorot_uniform, so the
    # program sets that one to zero itself, where the engines' draws would differ.
    last_bias = weights[3] if output_bias is not None else np.zeros(1, np.float32)
    model.set_weights([kernel_1, weights[1], kernel_2, last_bias])
    return model


EPOCHS = 30
BATCH_SIZE = 256


def early_stopping():
    return tf.keras.callbacks.EarlyStopping(
        monitor="val_prc", verbose=1, patience=5, mode="max", restore_best_weights=True
    )


def show(label, values):
    return f"{label} " + " ".join(f"{float(v):.5f}" for v in np.ravel(values))


def show_history(name, history, keys=("loss", "val_loss", "prc", "val_prc")):
    print(which, name, "epochs", len(history.epoch))
    for key in keys:
        print(which, name, show(key, history.history[key][::4]))


model = make_model()
summary = io.StringIO()
with contextlib.redirect_stdout(summary):
    model.summary()
print(summary.getvalue().rstrip())
print(which, show("predict, zero bias", model.predict(train_features[:10], verbose=0)))
results = model.evaluate(train_features, train_labels, batch_size=BATCH_SIZE, verbose=0)
print(which, f"loss, zero bias: {results[0]:0.4f}")

initial_bias = np.log([pos / neg])
print(which, "initial bias", initial_bias)
model = make_model(output_bias=initial_bias)
print(which, show("output bias", model.layers[-1].bias.numpy()))
print(which, show("predict, careful bias", model.predict(train_features[:10], verbose=0)))
results = model.evaluate(train_features, train_labels, batch_size=BATCH_SIZE, verbose=0)
print(which, f"loss, careful bias: {results[0]:0.4f}")

initial_weights = os.path.join(tempfile.mkdtemp(), "initial.weights.h5")
model.save_weights(initial_weights)

# -- zero bias against careful bias -------------------------------------------------------
model = make_model()
model.load_weights(initial_weights)
model.layers[-1].bias.assign([0.0])
zero_bias_history = model.fit(
    train_features,
    train_labels,
    batch_size=BATCH_SIZE,
    epochs=20,
    validation_data=(val_features, val_labels),
    shuffle=False,
    verbose=0,
)
show_history("zero bias", zero_bias_history, ("loss", "val_loss"))

model = make_model()
model.load_weights(initial_weights)
start = time.perf_counter()
careful_bias_history = model.fit(
    train_features,
    train_labels,
    batch_size=BATCH_SIZE,
    epochs=20,
    validation_data=(val_features, val_labels),
    shuffle=False,
    verbose=0,
)
fit_time = time.perf_counter() - start
show_history("careful bias", careful_bias_history, ("loss", "val_loss"))
print(which, "history keys", list(careful_bias_history.history))

# -- the baseline, with early stopping ----------------------------------------------------
model = make_model()
model.load_weights(initial_weights)
log = io.StringIO()
with contextlib.redirect_stdout(log):  # one line per epoch; its timings masked below
    baseline_history = model.fit(
        train_features,
        train_labels,
        batch_size=BATCH_SIZE,
        epochs=EPOCHS,
        callbacks=[early_stopping()],
        validation_data=(val_features, val_labels),
        shuffle=False,
        verbose=2,
    )
lines = re.sub(r"\d+s - [\d.]+[mu]?s/step", "<time>", log.getvalue()).splitlines()
print("\n".join(lines[:2] + lines[-4:]))
show_history("baseline", baseline_history)
test_predictions_baseline = model.predict(test_features, batch_size=BATCH_SIZE, verbose=0)
print(
    which, "baseline predictions", test_predictions_baseline.shape, test_predictions_baseline.dtype
)


def print_cm(labels, predictions, threshold=0.5):
    predicted = (predictions > threshold).astype(np.int64)[:, 0]
    cm = np.bincount(labels[:, 0] * 2 + predicted, minlength=4).reshape(2, 2)
    print(which, f"confusion @{threshold:.2f}: tn {cm[0][0]} fp {cm[0][1]}", end=" ")
    print(f"fn {cm[1][0]} tp {cm[1][1]} (fraudulent {np.sum(cm[1])})")


baseline_results = model.evaluate(test_features, test_labels, batch_size=BATCH_SIZE, verbose=0)
for name, value in zip(model.metrics_names, baseline_results):
    print(which, name, ": ", value if isinstance(value, str) else f"{value:.5f}")
baseline_dict = model.evaluate(
    test_features, test_labels, batch_size=BATCH_SIZE, verbose=0, return_dict=True
)
for name, value in baseline_dict.items():
    print(which, f"baseline {name}: {value:.5f}")
print_cm(test_labels, test_predictions_baseline)
print_cm(test_labels, test_predictions_baseline, threshold=0.1)

# -- class weights ------------------------------------------------------------------------
# Scaled by total / 2 so that the loss keeps a similar magnitude.
weight_for_0 = (1 / neg) * (total / 2.0)
weight_for_1 = (1 / pos) * (total / 2.0)
class_weight = {0: weight_for_0, 1: weight_for_1}
print(which, f"weight for class 0: {weight_for_0:.2f}, class 1: {weight_for_1:.2f}")

weighted_model = make_model()
weighted_model.load_weights(initial_weights)
weighted_history = weighted_model.fit(
    train_features,
    train_labels,
    batch_size=BATCH_SIZE,
    epochs=EPOCHS,
    callbacks=[early_stopping()],
    validation_data=(val_features, val_labels),
    class_weight=class_weight,
    shuffle=False,
    verbose=0,
)
show_history("weighted", weighted_history)
test_predictions_weighted = weighted_model.predict(test_features, batch_size=BATCH_SIZE, verbose=0)
weighted_results = weighted_model.evaluate(
    test_features, test_labels, batch_size=BATCH_SIZE, verbose=0, return_dict=True
)
for name, value in weighted_results.items():
    print(which, f"weighted {name}: {value:.5f}")
print_cm(test_labels, test_predictions_weighted)

# -- oversampling -------------------------------------------------------------------------
pos_features = train_features[bool_train_labels]
neg_features = train_features[~bool_train_labels]
pos_labels = train_labels[bool_train_labels]
neg_labels = train_labels[~bool_train_labels]

BUFFER_SIZE = 100000


def make_ds(features, labels):
    ds = tf.data.Dataset.from_tensor_slices((features, labels))
    ds = ds.shuffle(BUFFER_SIZE).repeat()
    return ds


pos_ds = make_ds(pos_features, pos_labels)
neg_ds = make_ds(neg_features, neg_labels)
for features, label in pos_ds.take(1):
    print(which, "one positive", features.shape, features.dtype.name, "label", label.numpy())

resampled_ds = tf.data.Dataset.sample_from_datasets([pos_ds, neg_ds], weights=[0.5, 0.5])
resampled_ds = resampled_ds.batch(BATCH_SIZE).prefetch(2)
print(which, "resampled cardinality", int(resampled_ds.cardinality()))
for features, label in resampled_ds.take(1):
    mean_label = label.numpy().mean()
    print(
        which,
        "resampled batch",
        features.shape,
        label.shape,
        "balanced",
        abs(mean_label - 0.5) < 0.1,
    )

resampled_steps_per_epoch = int(np.ceil(2.0 * neg / BATCH_SIZE))
print(which, "resampled steps per epoch", resampled_steps_per_epoch)

resampled_model = make_model(dropout=0.5)
resampled_model.load_weights(initial_weights)
output_layer = resampled_model.layers[-1]
output_layer.bias.assign([0])  # the resampled data is balanced

val_ds = tf.data.Dataset.from_tensor_slices((val_features, val_labels)).cache()
val_ds = val_ds.batch(BATCH_SIZE).prefetch(2)
with contextlib.redirect_stdout(io.StringIO()):  # its epoch of stopping is random
    resampled_history = resampled_model.fit(
        resampled_ds,
        epochs=2,
        steps_per_epoch=resampled_steps_per_epoch,
        callbacks=[early_stopping()],
        validation_data=val_ds,
        verbose=0,
    )
print(which, "resampled history keys", list(resampled_history.history))
test_predictions_resampled = resampled_model.predict(
    test_features, batch_size=BATCH_SIZE, verbose=0
)
print(which, "resampled predictions", test_predictions_resampled.shape)
resampled_results = resampled_model.evaluate(
    test_features, test_labels, batch_size=BATCH_SIZE, verbose=0, return_dict=True
)
print(which, "resampled results", list(resampled_results))

# -- the steady step time -----------------------------------------------------------------
start = time.perf_counter()
weighted_model.fit(
    train_features, train_labels, batch_size=BATCH_SIZE, epochs=3, shuffle=False, verbose=0
)
steps = 3 * int(np.ceil(len(train_features) / BATCH_SIZE))
step_time = (time.perf_counter() - start) / steps
print(which, f"careful-bias fit (20 epochs) {fit_time:.2f} s, step {step_time * 1e3:.2f} ms")
