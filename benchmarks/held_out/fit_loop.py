"""Held-out: Keras's built-in training loop (Model.fit / evaluate / predict and the
*_on_batch methods), in small independent cases.

Each case builds a small model (Dense, Conv2D, Embedding, LSTM, GRU, BatchNormalization),
sets every weight from seeded numpy through set_weights so both engines start identical,
and trains on a few samples of seeded data without shuffling. It covers compile with loss
strings and objects, metric strings and objects, weighted_metrics, several outputs (list
and dict, named outputs, loss_weights), fit on numpy arrays, on a batched tf.data.Dataset,
on a Python generator and on a PyDataset, batch sizes that leave a partial last batch,
validation_split / validation_data / validation_freq / validation_steps, sample_weight,
class_weight, initial_epoch, steps_per_epoch, callbacks (EarlyStopping with
restore_best_weights, ReduceLROnPlateau, LearningRateScheduler, a custom Callback
recording its logs, History, TerminateOnNaN, CSVLogger, LambdaCallback), evaluate with
return_dict, predict with batch_size, train_on_batch / test_on_batch / predict_on_batch, a
subclassed Model with its own train_step / test_step and metric trackers, run_eagerly,
jit_compile=False, steps_per_execution, regularizers, BatchNormalization's moving
statistics and the optimizer's state after fit.

Every case prints lines led by its name: History values per epoch, checksums of the final
weights (sum and sum of absolute values), evaluate and predict outputs, all with 6
significant digits, or `ERR TypeName: message` where a step raises, so the outputs of
TensorFlow and tracer can be diffed line by line. An optional second argument keeps only
the cases whose names contain it."""

import os
import sys
import tempfile

import numpy as np
from engine import tf

keras = tf.keras
layers = keras.layers
ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
SCRATCH = tempfile.mkdtemp(prefix="fitloop_")
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def say(name, *parts):
    print(name, *parts, flush=True)


def g(v):
    """One number with 6 significant digits."""
    return "%.6g" % float(np.asarray(v))


def gl(values):
    """Numbers (any nesting) as a flat bracketed list with 6 significant digits."""
    a = np.asarray(values.numpy() if hasattr(values, "numpy") else values, dtype=np.float64)
    return "[" + " ".join(g(v) for v in a.ravel()) + "]"


def err(name, e):
    say(name, "ERR", f"{type(e).__name__}: {str(e).replace(chr(10), ' ')[:80]}")


def guarded(name, label, fn):
    """Runs fn and prints `label value`, or the error it raises; returns its value or None."""
    try:
        value = fn()
    except Exception as e:
        say(name, label, "ERR", f"{type(e).__name__}: {str(e).replace(chr(10), ' ')[:80]}")
        return None
    return value


def out(value):
    """A result of evaluate / predict / *_on_batch: a number, a list, a dict or an array."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {out(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "(" + " ; ".join(out(v) for v in value) + ")"
    a = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if a.ndim == 0:
        return g(a)
    return f"{tuple(a.shape)} sum={g(a.sum())} abs={g(np.abs(a).sum())}"


def hist(name, h):
    say(name, "epochs", list(h.epoch))
    for k in sorted(h.history):
        say(name, "hist", k, gl(h.history[k]))


def wsum(name, model, label="weights"):
    ws = model.get_weights()
    say(
        name,
        label,
        len(ws),
        "sums",
        " ".join(g(np.sum(w)) for w in ws),
        "abs",
        g(sum(np.abs(w).sum() for w in ws)),
    )


def set_all(model, seed, scale=0.3):
    """Every weight of a built model from numpy; variances and scales stay positive."""
    rng = np.random.default_rng(seed)
    arrays = []
    for v in model.weights:
        shape = tuple(v.shape)
        if "variance" in v.name or "gamma" in v.name:
            arrays.append((1.0 + 0.2 * rng.random(shape)).astype(np.float32))
        else:
            arrays.append(rng.normal(0.0, scale, shape).astype(np.float32))
    model.set_weights(arrays)
    return model


def reg_data(n=10, d=4, seed=0, k=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = (x @ rng.normal(size=(d, k)) + 0.2).astype(np.float32)
    return x, y


def cls_data(n=10, d=4, k=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = np.argmax(x @ rng.normal(size=(d, k)), axis=1).astype(np.int32)
    return x, y


def mlp(d=4, hidden=5, out_units=1, activation=None, seed=1, **dense_kw):
    model = keras.Sequential(
        [
            keras.Input(shape=(d,)),
            layers.Dense(hidden, activation="relu", **dense_kw),
            layers.Dense(out_units, activation=activation),
        ]
    )
    return set_all(model, seed)


def sgd(lr=0.1):
    return keras.optimizers.SGD(learning_rate=lr)


def standard(name, model, x, y, epochs=3, batch_size=4, **fit_kw):
    """fit, then History, weights, evaluate and predict."""
    h = model.fit(x, y, epochs=epochs, batch_size=batch_size, verbose=0, shuffle=False, **fit_kw)
    hist(name, h)
    wsum(name, model)
    say(name, "evaluate", out(model.evaluate(x, y, batch_size=batch_size, verbose=0)))
    say(name, "predict", out(model.predict(x, batch_size=batch_size, verbose=0)))
    return h


# ---------------------------------------------------------------- losses and metrics
@case
def loss_string_mse():
    x, y = reg_data()
    m = mlp()
    m.compile(optimizer=sgd(), loss="mse", metrics=["mae"])
    standard("loss_string_mse", m, x, y)
    say("loss_string_mse", "metrics_names", m.metrics_names)


@case
def loss_object_huber():
    x, y = reg_data(seed=2)
    m = mlp(seed=3)
    m.compile(
        optimizer=sgd(0.05),
        loss=keras.losses.Huber(delta=0.5),
        metrics=[keras.metrics.MeanSquaredError(), keras.metrics.RootMeanSquaredError()],
    )
    standard("loss_object_huber", m, x, y)


@case
def metric_strings_regression():
    x, y = reg_data(seed=4)
    m = mlp(seed=5)
    m.compile(optimizer=sgd(0.05), loss="mean_absolute_error", metrics=["mse", "mape", "msle"])
    standard("metric_strings_regression", m, x, np.abs(y) + 0.5)


@case
def sparse_cce_accuracy():
    x, y = cls_data()
    m = mlp(out_units=3, activation="softmax", seed=6)
    m.compile(optimizer=sgd(0.2), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    standard("sparse_cce_accuracy", m, x, y)


@case
def sparse_cce_logits_objects():
    x, y = cls_data(seed=7)
    m = mlp(out_units=3, seed=8)
    m.compile(
        optimizer=keras.optimizers.Adam(0.05),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[
            "sparse_categorical_accuracy",
            keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2"),
        ],
    )
    standard("sparse_cce_logits_objects", m, x, y)


@case
def categorical_cce_onehot():
    x, y = cls_data(seed=9)
    yh = np.eye(3, dtype=np.float32)[y]
    m = mlp(out_units=3, activation="softmax", seed=10)
    m.compile(
        optimizer=sgd(0.2),
        loss=keras.losses.CategoricalCrossentropy(label_smoothing=0.1),
        metrics=["accuracy", "categorical_crossentropy"],
    )
    standard("categorical_cce_onehot", m, x, yh)


@case
def binary_sigmoid_metrics():
    x, y = cls_data(k=2, seed=11)
    yb = y.astype(np.float32)[:, None]
    m = mlp(out_units=1, activation="sigmoid", seed=12)
    m.compile(
        optimizer=sgd(0.3),
        loss="binary_crossentropy",
        metrics=[
            "accuracy",
            keras.metrics.BinaryAccuracy(threshold=0.3, name="acc03"),
            keras.metrics.Precision(name="prec"),
            keras.metrics.Recall(name="rec"),
        ],
    )
    standard("binary_sigmoid_metrics", m, x, yb)


@case
def binary_logits_smoothing():
    x, y = cls_data(k=2, seed=13)
    yb = y.astype(np.float32)[:, None]
    m = mlp(out_units=1, seed=14)
    m.compile(
        optimizer=keras.optimizers.RMSprop(0.01),
        loss=keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0, name="acc_logit"), "auc"],
    )
    standard("binary_logits_smoothing", m, x, yb)


@case
def custom_loss_function():
    def mean_fourth(y_true, y_pred):
        return tf.reduce_mean(tf.square(tf.square(y_true - y_pred)), axis=-1)

    def max_err(y_true, y_pred):
        return tf.reduce_max(tf.abs(y_true - y_pred), axis=-1)

    x, y = reg_data(seed=15, k=2)
    m = mlp(out_units=2, seed=16)
    m.compile(optimizer=sgd(0.01), loss=mean_fourth, metrics=[max_err])
    standard("custom_loss_function", m, x, y)


@case
def weighted_metrics_vs_metrics():
    x, y = reg_data(seed=17)
    sw = np.linspace(0.0, 2.0, len(x)).astype(np.float32)
    m = mlp(seed=18)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"], weighted_metrics=["mae"])
    standard("weighted_metrics_vs_metrics", m, x, y, sample_weight=sw)
    say(
        "weighted_metrics_vs_metrics",
        "evaluate sw",
        out(m.evaluate(x, y, sample_weight=sw, batch_size=4, verbose=0, return_dict=True)),
    )


# ---------------------------------------------------------------- several outputs
def two_head(seed, names=("reg", "cls")):
    inp = keras.Input((4,), name="x")
    h = layers.Dense(6, activation="tanh", name="trunk")(inp)
    o1 = layers.Dense(1, name=names[0])(h)
    o2 = layers.Dense(3, activation="softmax", name=names[1])(h)
    return inp, o1, o2


@case
def multi_out_list():
    x, yr = reg_data(seed=20)
    _, yc = cls_data(seed=21)
    inp, o1, o2 = two_head(22)
    m = set_all(keras.Model(inp, [o1, o2]), 22)
    m.compile(
        optimizer=sgd(0.1),
        loss=["mse", "sparse_categorical_crossentropy"],
        loss_weights=[1.0, 0.5],
        metrics=[["mae"], ["accuracy"]],
    )
    h = m.fit(x, [yr, yc], epochs=3, batch_size=4, verbose=0, shuffle=False)
    hist("multi_out_list", h)
    wsum("multi_out_list", m)
    say("multi_out_list", "evaluate", out(m.evaluate(x, [yr, yc], verbose=0, return_dict=True)))
    say("multi_out_list", "predict", out(m.predict(x, verbose=0)))


@case
def multi_out_dict_named():
    x, yr = reg_data(seed=23)
    _, yc = cls_data(seed=24)
    inp, o1, o2 = two_head(25)
    m = set_all(keras.Model(inp, {"reg": o1, "cls": o2}), 25)
    m.compile(
        optimizer=sgd(0.1),
        loss={"reg": "mse", "cls": keras.losses.SparseCategoricalCrossentropy()},
        loss_weights={"reg": 0.3, "cls": 2.0},
        metrics={"reg": ["mae"], "cls": ["accuracy"]},
    )
    h = m.fit(x, {"reg": yr, "cls": yc}, epochs=3, batch_size=4, verbose=0, shuffle=False)
    hist("multi_out_dict_named", h)
    wsum("multi_out_dict_named", m)
    say(
        "multi_out_dict_named",
        "evaluate",
        out(m.evaluate(x, {"reg": yr, "cls": yc}, verbose=0, return_dict=True)),
    )
    say("multi_out_dict_named", "predict", out(m.predict(x, verbose=0)))


@case
def multi_out_list_losses_by_name():
    x, yr = reg_data(seed=26)
    _, yc = cls_data(seed=27)
    inp, o1, o2 = two_head(28, names=("price", "kind"))
    m = set_all(keras.Model(inp, [o1, o2]), 28)
    m.compile(
        optimizer=sgd(0.1),
        loss={"price": "mae", "kind": "sparse_categorical_crossentropy"},
        loss_weights={"price": 2.0, "kind": 1.0},
        metrics={"kind": "sparse_categorical_accuracy"},
    )
    h = m.fit(x, {"price": yr, "kind": yc}, epochs=2, batch_size=5, verbose=0, shuffle=False)
    hist("multi_out_list_losses_by_name", h)
    wsum("multi_out_list_losses_by_name", m)


@case
def multi_out_single_loss():
    x, y1 = reg_data(seed=29)
    _, y2 = reg_data(seed=30, k=2)
    inp = keras.Input((4,))
    h = layers.Dense(5, activation="relu")(inp)
    m = set_all(keras.Model(inp, [layers.Dense(1)(h), layers.Dense(2)(h)]), 31)
    m.compile(optimizer=sgd(0.05), loss="mse")
    h = m.fit(x, [y1, y2], epochs=2, batch_size=4, verbose=0, shuffle=False)
    hist("multi_out_single_loss", h)
    wsum("multi_out_single_loss", m)
    say("multi_out_single_loss", "evaluate", out(m.evaluate(x, [y1, y2], verbose=0)))


@case
def multi_input_dict():
    rng = np.random.default_rng(32)
    xa = rng.normal(size=(9, 3)).astype(np.float32)
    xb = rng.normal(size=(9, 2)).astype(np.float32)
    y = rng.normal(size=(9, 1)).astype(np.float32)
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    h = layers.Concatenate()([layers.Dense(4, activation="relu")(a), b])
    m = set_all(keras.Model({"a": a, "b": b}, layers.Dense(1)(h)), 33)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    h = m.fit({"a": xa, "b": xb}, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    hist("multi_input_dict", h)
    ds = tf.data.Dataset.from_tensor_slices(({"a": xa, "b": xb}, y)).batch(4)
    h2 = m.fit(ds, epochs=1, verbose=0)
    hist("multi_input_dict", h2)
    wsum("multi_input_dict", m)
    say("multi_input_dict", "predict", out(m.predict({"a": xa, "b": xb}, verbose=0)))


# ---------------------------------------------------------------- data forms
@case
def fit_dataset_batched():
    x, y = reg_data(n=11, seed=34)
    xv, yv = reg_data(n=5, seed=35)
    m = mlp(seed=36)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    vds = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(2)
    h = m.fit(ds, epochs=3, validation_data=vds, verbose=0)
    hist("fit_dataset_batched", h)
    say("fit_dataset_batched", "params", sorted(h.params.items()))
    wsum("fit_dataset_batched", m)
    say("fit_dataset_batched", "evaluate ds", out(m.evaluate(vds, verbose=0, return_dict=True)))
    say("fit_dataset_batched", "predict ds", out(m.predict(ds, verbose=0)))


@case
def fit_dataset_sample_weight():
    x, y = reg_data(n=8, seed=37)
    sw = np.array([1, 0, 2, 1, 0.5, 1, 3, 0], np.float32)
    m = mlp(seed=38)
    m.compile(optimizer=sgd(0.05), loss="mse", weighted_metrics=["mse"])
    ds = tf.data.Dataset.from_tensor_slices((x, y, sw)).batch(3)
    h = m.fit(ds, epochs=2, verbose=0)
    hist("fit_dataset_sample_weight", h)
    wsum("fit_dataset_sample_weight", m)


@case
def fit_generator():
    x, y = reg_data(n=9, seed=39)

    def batches():
        while True:
            for i in range(0, 9, 3):
                yield x[i : i + 3], y[i : i + 3]

    m = mlp(seed=40)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    h = m.fit(batches(), steps_per_epoch=3, epochs=3, verbose=0)
    hist("fit_generator", h)
    wsum("fit_generator", m)
    say("fit_generator", "evaluate gen", out(m.evaluate(batches(), steps=3, verbose=0)))
    say("fit_generator", "predict gen", out(m.predict(batches(), steps=2, verbose=0)))


@case
def fit_pydataset():
    x, y = reg_data(n=10, seed=41)

    class Batches(keras.utils.PyDataset):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return x[i * 3 : i * 3 + 3], y[i * 3 : i * 3 + 3]

    m = mlp(seed=42)
    m.compile(optimizer=sgd(0.05), loss="mse")
    h = m.fit(Batches(), epochs=2, verbose=0, shuffle=False)
    hist("fit_pydataset", h)
    wsum("fit_pydataset", m)


@case
def partial_last_batch():
    x, y = reg_data(n=10, seed=43)
    m = mlp(seed=44)
    m.compile(optimizer=sgd(0.1), loss="mse", metrics=["mae"])
    rec = []

    class Count(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            rec.append(batch)

    standard("partial_last_batch", m, x, y, epochs=2, batch_size=3, callbacks=[Count()])
    say("partial_last_batch", "batches", rec)


@case
def batch_larger_than_data():
    x, y = reg_data(n=6, seed=45)
    m = mlp(seed=46)
    m.compile(optimizer=sgd(0.1), loss="mse")
    standard("batch_larger_than_data", m, x, y, epochs=2, batch_size=32)


@case
def validation_split():
    x, y = reg_data(n=10, seed=47)
    m = mlp(seed=48)
    m.compile(optimizer=sgd(0.1), loss="mse", metrics=["mae"])
    h = m.fit(x, y, epochs=3, batch_size=3, validation_split=0.3, verbose=0, shuffle=False)
    hist("validation_split", h)
    say("validation_split", "steps", h.params.get("steps"))
    wsum("validation_split", m)
    say("validation_split", "val tail", out(m.evaluate(x[7:], y[7:], verbose=0)))


@case
def validation_data_with_weights():
    x, y = reg_data(n=8, seed=49)
    xv, yv = reg_data(n=5, seed=50)
    swv = np.array([1, 2, 0, 1, 4], np.float32)
    m = mlp(seed=51)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"], weighted_metrics=["mse"])
    h = m.fit(x, y, epochs=2, batch_size=4, validation_data=(xv, yv, swv), verbose=0, shuffle=False)
    hist("validation_data_with_weights", h)
    h2 = m.fit(
        x, y, epochs=1, batch_size=4, validation_data=(xv, yv), validation_batch_size=2,
        verbose=0, shuffle=False,
    )  # fmt: skip
    hist("validation_data_with_weights", h2)


@case
def validation_freq():
    x, y = reg_data(n=8, seed=52)
    m = mlp(seed=53)
    m.compile(optimizer=sgd(0.05), loss="mse")
    h = m.fit(
        x, y, epochs=5, batch_size=4, validation_data=(x, y), validation_freq=2, verbose=0,
        shuffle=False,
    )  # fmt: skip
    hist("validation_freq", h)


@case
def validation_steps_dataset():
    x, y = reg_data(n=8, seed=54)
    xv, yv = reg_data(n=9, seed=55)
    m = mlp(seed=56)
    m.compile(optimizer=sgd(0.05), loss="mse")
    vds = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(2)
    h = m.fit(x, y, epochs=2, batch_size=4, validation_data=vds, validation_steps=2, verbose=0)
    hist("validation_steps_dataset", h)


@case
def sample_weight_numpy():
    x, y = reg_data(n=10, seed=57)
    sw = np.array([0, 1, 2, 3, 0, 1, 2, 3, 0, 1], np.float32)
    m = mlp(seed=58)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    standard("sample_weight_numpy", m, x, y, sample_weight=sw)
    say(
        "sample_weight_numpy",
        "evaluate sw",
        out(m.evaluate(x, y, sample_weight=sw, batch_size=4, verbose=0)),
    )


@case
def class_weight():
    x, y = cls_data(n=12, seed=59)
    m = mlp(out_units=3, activation="softmax", seed=60)
    m.compile(
        optimizer=sgd(0.2),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        weighted_metrics=["accuracy"],
    )
    standard("class_weight", m, x, y, class_weight={0: 1.0, 1: 3.0, 2: 0.5})


@case
def class_weight_binary():
    x, y = cls_data(n=10, k=2, seed=61)
    m = mlp(out_units=1, activation="sigmoid", seed=62)
    m.compile(optimizer=sgd(0.2), loss="binary_crossentropy", metrics=["accuracy"])
    standard("class_weight_binary", m, x, y.astype(np.float32), class_weight={0: 0.2, 1: 2.0})


@case
def initial_epoch():
    x, y = reg_data(n=8, seed=63)
    m = mlp(seed=64)
    m.compile(optimizer=sgd(0.05), loss="mse")
    seen = []
    cb = keras.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs: seen.append(e))
    h = m.fit(
        x, y, epochs=4, initial_epoch=2, batch_size=4, verbose=0, shuffle=False, callbacks=[cb]
    )
    hist("initial_epoch", h)
    say("initial_epoch", "seen", seen, "iterations", int(m.optimizer.iterations.numpy()))
    say("initial_epoch", "params epochs", h.params.get("epochs"))


@case
def steps_per_epoch_dataset():
    x, y = reg_data(n=10, seed=65)
    m = mlp(seed=66)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(3).repeat()
    h = m.fit(ds, steps_per_epoch=2, epochs=3, verbose=0)
    hist("steps_per_epoch_dataset", h)
    say("steps_per_epoch_dataset", "iterations", int(m.optimizer.iterations.numpy()))
    wsum("steps_per_epoch_dataset", m)
    say("steps_per_epoch_dataset", "evaluate steps", out(m.evaluate(ds, steps=3, verbose=0)))


@case
def steps_per_epoch_numpy():
    x, y = reg_data(n=12, seed=67)
    m = mlp(seed=68)
    m.compile(optimizer=sgd(0.05), loss="mse")
    h = m.fit(x, y, steps_per_epoch=2, epochs=3, batch_size=3, verbose=0, shuffle=False)
    hist("steps_per_epoch_numpy", h)
    say("steps_per_epoch_numpy", "iterations", int(m.optimizer.iterations.numpy()))
    wsum("steps_per_epoch_numpy", m)


@case
def fit_twice_continues():
    x, y = reg_data(n=8, seed=69)
    m = mlp(seed=70)
    m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    h1 = m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    h2 = m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    hist("fit_twice_continues", h1)
    hist("fit_twice_continues", h2)
    say("fit_twice_continues", "same history object", h2 is m.history, h1 is h2)
    say("fit_twice_continues", "iterations", int(m.optimizer.iterations.numpy()))
    wsum("fit_twice_continues", m)


# ---------------------------------------------------------------- callbacks
@case
def early_stopping_restore():
    x, y = reg_data(n=8, seed=71)
    m = mlp(seed=72)
    m.compile(optimizer=sgd(0.05), loss="mse")
    m1 = mlp(seed=72)
    m1.compile(optimizer=sgd(0.05), loss="mse")
    m1.fit(x, y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    es = keras.callbacks.EarlyStopping(
        monitor="loss", min_delta=100.0, patience=1, restore_best_weights=True
    )
    h = m.fit(x, y, epochs=6, batch_size=4, verbose=0, shuffle=False, callbacks=[es])
    hist("early_stopping_restore", h)
    say("early_stopping_restore", "stopped_epoch", es.stopped_epoch, "best", g(es.best))
    say("early_stopping_restore", "best_epoch", getattr(es, "best_epoch", "<none>"))
    wsum("early_stopping_restore", m)
    wsum("early_stopping_restore", m1, "after one epoch")


@case
def early_stopping_val_max_no_stop():
    x, y = reg_data(n=8, seed=73)
    xv, yv = reg_data(n=4, seed=74)
    m = mlp(seed=75)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    es = keras.callbacks.EarlyStopping(
        monitor="val_mae", mode="max", patience=5, restore_best_weights=True
    )
    h = m.fit(
        x, y, epochs=3, batch_size=4, validation_data=(xv, yv), verbose=0, shuffle=False,
        callbacks=[es],
    )  # fmt: skip
    hist("early_stopping_val_max_no_stop", h)
    say("early_stopping_val_max_no_stop", "stopped_epoch", es.stopped_epoch, "best", g(es.best))
    wsum("early_stopping_val_max_no_stop", m)
    say("early_stopping_val_max_no_stop", "val after", out(m.evaluate(xv, yv, verbose=0)))


@case
def early_stopping_patience():
    x, y = reg_data(n=8, seed=76)
    m = mlp(seed=77)
    m.compile(optimizer=sgd(0.6), loss="mse")
    es = keras.callbacks.EarlyStopping(monitor="loss", patience=1, baseline=None)
    h = m.fit(x, y, epochs=8, batch_size=8, verbose=0, shuffle=False, callbacks=[es])
    hist("early_stopping_patience", h)
    say("early_stopping_patience", "stopped_epoch", es.stopped_epoch, "wait", es.wait)


@case
def reduce_lr_on_plateau():
    x, y = reg_data(n=8, seed=78)
    m = mlp(seed=79)
    m.compile(optimizer=sgd(0.1), loss="mse", metrics=["mae"])
    cb = keras.callbacks.ReduceLROnPlateau(
        monitor="loss", factor=0.5, patience=0, min_delta=100.0, min_lr=0.02
    )
    h = m.fit(x, y, epochs=4, batch_size=4, verbose=0, shuffle=False, callbacks=[cb])
    hist("reduce_lr_on_plateau", h)
    say("reduce_lr_on_plateau", "lr", g(m.optimizer.learning_rate.numpy()))
    wsum("reduce_lr_on_plateau", m)


@case
def learning_rate_scheduler():
    x, y = reg_data(n=8, seed=80)
    m = mlp(seed=81)
    m.compile(optimizer=sgd(0.1), loss="mse")
    seen = []

    def schedule(epoch, lr):
        seen.append((epoch, round(float(lr), 6)))
        return lr * 0.5 if epoch >= 1 else lr

    cb = keras.callbacks.LearningRateScheduler(schedule)
    h = m.fit(x, y, epochs=4, batch_size=4, verbose=0, shuffle=False, callbacks=[cb])
    hist("learning_rate_scheduler", h)
    say("learning_rate_scheduler", "seen", seen)
    say("learning_rate_scheduler", "lr", g(m.optimizer.learning_rate.numpy()))
    wsum("learning_rate_scheduler", m)


@case
def custom_callback_logs():
    x, y = reg_data(n=10, seed=82)
    xv, yv = reg_data(n=4, seed=83)
    m = mlp(seed=84)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    events = []

    class Rec(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            events.append(("train_begin", sorted(self.params.items())))

        def on_train_batch_end(self, batch, logs=None):
            events.append(("batch", batch, {k: g(v) for k, v in sorted(logs.items())}))

        def on_test_batch_end(self, batch, logs=None):
            events.append(("test_batch", batch, {k: g(v) for k, v in sorted(logs.items())}))

        def on_epoch_end(self, epoch, logs=None):
            events.append(("epoch", epoch, {k: g(v) for k, v in sorted(logs.items())}))

        def on_predict_batch_end(self, batch, logs=None):
            events.append(("predict_batch", batch, sorted(logs)))

    rec = Rec()
    m.fit(
        x, y, epochs=2, batch_size=4, validation_data=(xv, yv), verbose=0, shuffle=False,
        callbacks=[rec],
    )  # fmt: skip
    m.evaluate(xv, yv, batch_size=3, verbose=0, callbacks=[rec])
    m.predict(xv, batch_size=3, verbose=0, callbacks=[rec])
    for e in events:
        say("custom_callback_logs", *e)
    say("custom_callback_logs", "model is m", rec.model is m)


@case
def history_callback_explicit():
    x, y = reg_data(n=8, seed=85)
    m = mlp(seed=86)
    m.compile(optimizer=sgd(0.05), loss="mse")
    hc = keras.callbacks.History()
    h = m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False, callbacks=[hc])
    say("history_callback_explicit", "returned is passed", h is hc, "model.history", m.history is h)
    hist("history_callback_explicit", h)
    say("history_callback_explicit", "passed keys", sorted(getattr(hc, "history", {})))
    say("history_callback_explicit", "params", sorted(h.params.items()))


@case
def terminate_on_nan():
    x, y = reg_data(n=9, seed=87)
    x[4, 1] = np.nan
    m = mlp(seed=88)
    m.compile(optimizer=sgd(0.05), loss="mse")
    seen = []
    cb = keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(b))
    h = m.fit(
        x, y, epochs=3, batch_size=3, verbose=0, shuffle=False,
        callbacks=[keras.callbacks.TerminateOnNaN(), cb],
    )  # fmt: skip
    hist("terminate_on_nan", h)
    say("terminate_on_nan", "batches", seen, "stop_training", m.stop_training)


@case
def csv_logger():
    x, y = reg_data(n=8, seed=89)
    m = mlp(seed=90)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    path = os.path.join(SCRATCH, "log.csv")
    m.fit(
        x, y, epochs=3, batch_size=4, validation_data=(x[:3], y[:3]), verbose=0, shuffle=False,
        callbacks=[keras.callbacks.CSVLogger(path)],
    )  # fmt: skip
    m.fit(
        x, y, epochs=1, batch_size=4, verbose=0, shuffle=False,
        callbacks=[keras.callbacks.CSVLogger(path, separator=";", append=True)],
    )  # fmt: skip
    with open(path) as f:
        text = f.read()
    for line in text.splitlines():
        cells = []
        for cell in line.replace(";", ",").split(","):
            try:
                cells.append(cell if cell.isdigit() else g(float(cell)))
            except ValueError:
                cells.append(cell)
        say("csv_logger", "line", ",".join(cells), "(;)" if ";" in line else "")


@case
def lambda_and_params():
    x, y = reg_data(n=7, seed=91)
    m = mlp(seed=92)
    m.compile(optimizer=sgd(0.05), loss="mse")
    seen = []
    cb = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: seen.append(("begin", logs)),
        on_epoch_end=lambda e, logs: seen.append(("epoch", e, sorted(logs))),
        on_train_end=lambda logs: seen.append(("end", sorted(logs or {}))),
    )
    m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False, callbacks=[cb])
    for s in seen:
        say("lambda_and_params", *s)


@case
def callback_stop_training_mid_epoch():
    x, y = reg_data(n=12, seed=93)
    m = mlp(seed=94)
    m.compile(optimizer=sgd(0.05), loss="mse")
    seen = []

    class Stop(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(batch)
            if batch == 1:
                self.model.stop_training = True

    h = m.fit(x, y, epochs=3, batch_size=3, verbose=0, shuffle=False, callbacks=[Stop()])
    hist("callback_stop_training_mid_epoch", h)
    say("callback_stop_training_mid_epoch", "batches", seen)
    say("callback_stop_training_mid_epoch", "iterations", int(m.optimizer.iterations.numpy()))


# ---------------------------------------------------------------- evaluate / predict / *_on_batch
@case
def evaluate_forms():
    x, y = cls_data(n=11, seed=95)
    m = mlp(out_units=3, activation="softmax", seed=96)
    m.compile(
        optimizer=sgd(0.1),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=2)],
    )
    say("evaluate_forms", "list", out(m.evaluate(x, y, verbose=0)))
    say("evaluate_forms", "dict", out(m.evaluate(x, y, verbose=0, return_dict=True)))
    say("evaluate_forms", "batch 4", out(m.evaluate(x, y, batch_size=4, verbose=0)))
    say("evaluate_forms", "batch 32", out(m.evaluate(x, y, batch_size=32, verbose=0)))
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(5)
    say("evaluate_forms", "dataset", out(m.evaluate(ds, verbose=0, return_dict=True)))
    say("evaluate_forms", "steps 1", out(m.evaluate(ds, steps=1, verbose=0)))
    say("evaluate_forms", "metrics_names", m.metrics_names)


@case
def evaluate_before_fit_uncompiled_metrics():
    x, y = reg_data(n=6, seed=97)
    m = mlp(seed=98)
    m.compile(optimizer=sgd(0.1), loss="mse", metrics=["mae", "mse"])
    say("evaluate_before_fit", "names before", m.metrics_names)
    say("evaluate_before_fit", "eval", out(m.evaluate(x, y, verbose=0, return_dict=True)))
    say("evaluate_before_fit", "names after", m.metrics_names)


@case
def predict_forms():
    x, _ = reg_data(n=7, seed=99)
    m = mlp(out_units=2, seed=100)
    say("predict_forms", "uncompiled", out(m.predict(x, verbose=0)))
    say("predict_forms", "batch 3", out(m.predict(x, batch_size=3, verbose=0)))
    say("predict_forms", "batch 100", out(m.predict(x, batch_size=100, verbose=0)))
    ds = tf.data.Dataset.from_tensor_slices(x).batch(2)
    p = m.predict(ds, verbose=0)
    say("predict_forms", "dataset", out(p), type(p).__name__, str(p.dtype))
    say("predict_forms", "steps", out(m.predict(ds, steps=2, verbose=0)))
    say("predict_forms", "call", out(m(x)))
    say("predict_forms", "rows", gl(m.predict(x[:2], verbose=0)))


@case
def on_batch_methods():
    x, y = reg_data(n=6, seed=101)
    m = mlp(seed=102)
    m.compile(optimizer=sgd(0.1), loss="mse", metrics=["mae"])
    say("on_batch_methods", "train 1", out(m.train_on_batch(x[:3], y[:3])))
    say("on_batch_methods", "train 2", out(m.train_on_batch(x[3:], y[3:], return_dict=True)))
    say("on_batch_methods", "test", out(m.test_on_batch(x, y)))
    say("on_batch_methods", "test dict", out(m.test_on_batch(x, y, return_dict=True)))
    sw = np.array([1, 0, 2, 0, 1, 1], np.float32)
    say("on_batch_methods", "train sw", out(m.train_on_batch(x, y, sample_weight=sw)))
    say("on_batch_methods", "test sw", out(m.test_on_batch(x, y, sample_weight=sw)))
    p = m.predict_on_batch(x)
    say("on_batch_methods", "predict", out(p), type(p).__name__)
    say("on_batch_methods", "iterations", int(m.optimizer.iterations.numpy()))
    wsum("on_batch_methods", m)


@case
def train_on_batch_class_weight():
    x, y = cls_data(n=6, seed=103)
    m = mlp(out_units=3, activation="softmax", seed=104)
    m.compile(optimizer=sgd(0.2), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    r = m.train_on_batch(x, y, class_weight={0: 2.0, 1: 0.5, 2: 1.0}, return_dict=True)
    say("train_on_batch_class_weight", "train", out(r))
    wsum("train_on_batch_class_weight", m)


# ---------------------------------------------------------------- subclassed models
@case
def subclass_default_fit():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.a = layers.Dense(5, activation="relu")
            self.b = layers.Dense(1)

        def call(self, inputs, training=False):
            return self.b(self.a(inputs))

    x, y = reg_data(n=10, seed=105)
    m = Net()
    m(x[:1])
    set_all(m, 106)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    standard("subclass_default_fit", m, x, y)


def tracker_net(seed, mode):
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.a = layers.Dense(5, activation="relu")
            self.b = layers.Dense(1)
            if mode == "trackers":
                self.loss_tracker = keras.metrics.Mean(name="loss")
                self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
                self.steps_seen = keras.metrics.Sum(name="steps")

        def call(self, inputs, training=False):
            return self.b(self.a(inputs))

        if mode == "trackers":

            @property
            def metrics(self):
                return [self.loss_tracker, self.mae_metric, self.steps_seen]

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                if mode == "trackers":
                    loss = tf.reduce_mean(tf.square(y - y_pred))
                elif mode == "compute_loss":
                    loss = self.compute_loss(y=y, y_pred=y_pred)
                else:
                    loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            if mode == "trackers":
                self.loss_tracker.update_state(loss)
                self.mae_metric.update_state(y, y_pred)
                self.steps_seen.update_state(1.0)
                return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result(),
                        "steps": self.steps_seen.result()}  # fmt: skip
            if mode == "compute_loss":
                for metric in self.metrics:
                    if metric.name == "loss":
                        metric.update_state(loss)
                    else:
                        metric.update_state(y, y_pred)
                return {m.name: m.result() for m in self.metrics}
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            if mode == "trackers":
                self.loss_tracker.update_state(tf.reduce_mean(tf.square(y - y_pred)))
                self.mae_metric.update_state(y, y_pred)
                self.steps_seen.update_state(1.0)
                return {m.name: m.result() for m in self.metrics}
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    m = Net()
    return m


def run_tracker(name, mode, compile_kw):
    x, y = reg_data(n=10, seed=107)
    xv, yv = reg_data(n=4, seed=108)
    m = tracker_net(109, mode)
    m(x[:1])
    set_all(m, 109)
    m.compile(optimizer=sgd(0.05), **compile_kw)
    h = m.fit(x, y, epochs=3, batch_size=4, validation_data=(xv, yv), verbose=0, shuffle=False)
    hist(name, h)
    wsum(name, m)
    say(name, "metrics", [mm.name for mm in m.metrics])
    say(name, "evaluate", out(m.evaluate(xv, yv, batch_size=2, verbose=0, return_dict=True)))


@case
def subclass_train_step_trackers():
    run_tracker("subclass_train_step_trackers", "trackers", {})


@case
def subclass_train_step_compute_loss():
    run_tracker(
        "subclass_train_step_compute_loss", "compute_loss", {"loss": "mse", "metrics": ["mae"]}
    )


@case
def subclass_train_step_compiled_loss():
    run_tracker(
        "subclass_train_step_compiled_loss", "compiled_loss", {"loss": "mse", "metrics": ["mae"]}
    )


@case
def subclass_metric_attribute_reset():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = layers.Dense(1)
            self.count = keras.metrics.Sum(name="count")

        def call(self, inputs):
            return self.d(inputs)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(y - self(x)))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.count.update_state(1.0)
            return {"loss": loss, "count": self.count.result()}

    x, y = reg_data(n=9, seed=110)
    m = Net()
    m(x[:1])
    set_all(m, 111)
    m.compile(optimizer=sgd(0.05))
    h = m.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    hist("subclass_metric_attribute_reset", h)
    say("subclass_metric_attribute_reset", "metrics", [mm.name for mm in m.metrics])


# ---------------------------------------------------------------- execution options
@case
def run_eagerly_vs_default():
    x, y = cls_data(n=10, seed=112)
    results = []
    for kw in ({"run_eagerly": True}, {}, {"jit_compile": False}):
        m = mlp(out_units=3, seed=113)
        m.compile(
            optimizer=keras.optimizers.Adam(0.02),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
            **kw,
        )
        h = m.fit(x, y, epochs=2, batch_size=3, verbose=0, shuffle=False)
        say("run_eagerly_vs_default", sorted(kw), "run_eagerly", m.run_eagerly)
        hist("run_eagerly_vs_default", h)
        wsum("run_eagerly_vs_default", m)
        results.append(np.concatenate([w.ravel() for w in m.get_weights()]))
    say(
        "run_eagerly_vs_default",
        "eager~graph",
        bool(np.max(np.abs(results[0] - results[1])) < 1e-5),
        "graph~nojit",
        bool(np.max(np.abs(results[1] - results[2])) < 1e-5),
    )


@case
def steps_per_execution():
    x, y = reg_data(n=10, seed=114)
    m = mlp(seed=115)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"], steps_per_execution=2)
    seen = []
    cb = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda b, logs: seen.append((b, g(logs["loss"])))
    )
    h = m.fit(x, y, epochs=2, batch_size=2, verbose=0, shuffle=False, callbacks=[cb])
    hist("steps_per_execution", h)
    say("steps_per_execution", "batch calls", seen)
    say("steps_per_execution", "iterations", int(m.optimizer.iterations.numpy()))
    wsum("steps_per_execution", m)
    say("steps_per_execution", "evaluate", out(m.evaluate(x, y, batch_size=3, verbose=0)))
    say("steps_per_execution", "predict", out(m.predict(x, batch_size=3, verbose=0)))


# ---------------------------------------------------------------- regularization, BN, optimizer
@case
def l2_regularizer_in_loss():
    x, y = reg_data(n=8, seed=116)
    m = mlp(seed=117, kernel_regularizer=keras.regularizers.l2(0.1))
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mse"])
    say("l2_regularizer_in_loss", "losses", gl([float(v) for v in m.losses]))
    standard("l2_regularizer_in_loss", m, x, y, epochs=2)
    say("l2_regularizer_in_loss", "losses after", gl([float(v) for v in m.losses]))


@case
def activity_and_bias_regularizers():
    x, y = reg_data(n=8, seed=118)
    m = keras.Sequential(
        [
            keras.Input((4,)),
            layers.Dense(
                5,
                activation="relu",
                activity_regularizer=keras.regularizers.l1(0.01),
                bias_regularizer=keras.regularizers.L1L2(l1=0.01, l2=0.02),
            ),
            layers.Dense(1),
        ]
    )
    set_all(m, 119)
    m.compile(optimizer=sgd(0.05), loss="mse")
    standard("activity_and_bias_regularizers", m, x, y, epochs=2)


@case
def batchnorm_fit():
    x, y = reg_data(n=10, seed=120)
    x = x * 3.0 + 1.0
    m = keras.Sequential(
        [
            keras.Input((4,)),
            layers.Dense(5),
            layers.BatchNormalization(momentum=0.8),
            layers.Activation("relu"),
            layers.Dropout(0.0),
            layers.Dense(1),
        ]
    )
    set_all(m, 121)
    m.compile(optimizer=sgd(0.05), loss="mse", metrics=["mae"])
    standard("batchnorm_fit", m, x, y, epochs=2)
    bn = m.layers[1]
    say("batchnorm_fit", "moving_mean", gl(bn.moving_mean.numpy()))
    say("batchnorm_fit", "moving_variance", gl(bn.moving_variance.numpy()))
    say("batchnorm_fit", "train-mode out", out(m(x, training=True)))


@case
def frozen_layer_fit():
    x, y = reg_data(n=8, seed=122)
    m = mlp(seed=123)
    m.layers[0].trainable = False
    m.compile(optimizer=sgd(0.1), loss="mse")
    before = m.layers[0].get_weights()
    m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    after = m.layers[0].get_weights()
    say(
        "frozen_layer_fit",
        "frozen unchanged",
        all(np.array_equal(a, b) for a, b in zip(before, after)),
    )
    say("frozen_layer_fit", "trainable count", len(m.trainable_weights))
    wsum("frozen_layer_fit", m)


@case
def optimizer_state_adam():
    x, y = reg_data(n=10, seed=124)
    m = mlp(seed=125)
    opt = keras.optimizers.Adam(learning_rate=0.01)
    m.compile(optimizer=opt, loss="mse")
    m.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    say("optimizer_state_adam", "iterations", int(opt.iterations.numpy()), "is", m.optimizer is opt)
    say("optimizer_state_adam", "n variables", len(opt.variables))
    say(
        "optimizer_state_adam",
        "state sums",
        " ".join(g(np.sum(np.asarray(v))) for v in opt.variables),
    )
    wsum("optimizer_state_adam", m)


@case
def optimizer_schedule_in_fit():
    x, y = reg_data(n=10, seed=126)
    m = mlp(seed=127)
    lr = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    m.compile(optimizer=keras.optimizers.SGD(lr, momentum=0.9, nesterov=True), loss="mse")
    h = m.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    hist("optimizer_schedule_in_fit", h)
    say("optimizer_schedule_in_fit", "lr now", g(m.optimizer.learning_rate.numpy()))
    say("optimizer_schedule_in_fit", "iterations", int(m.optimizer.iterations.numpy()))
    wsum("optimizer_schedule_in_fit", m)


@case
def optimizer_string_and_clipnorm():
    x, y = reg_data(n=10, seed=128)
    for opt in ("rmsprop", "adagrad", keras.optimizers.Adam(0.05, clipnorm=0.1)):
        m = mlp(seed=129)
        m.compile(optimizer=opt, loss="mse")
        h = m.fit(x, y, epochs=2, batch_size=5, verbose=0, shuffle=False)
        name = opt if isinstance(opt, str) else "adam_clipnorm"
        say("optimizer_string_and_clipnorm", name, "lr", g(m.optimizer.learning_rate.numpy()))
        hist("optimizer_string_and_clipnorm", h)
        wsum("optimizer_string_and_clipnorm", m)


# ---------------------------------------------------------------- other layers
@case
def conv2d_fit():
    rng = np.random.default_rng(130)
    x = rng.normal(size=(6, 6, 6, 2)).astype(np.float32)
    y = (np.arange(6) % 3).astype(np.int32)
    m = keras.Sequential(
        [
            keras.Input((6, 6, 2)),
            layers.Conv2D(3, 3, activation="relu", padding="same"),
            layers.MaxPooling2D(2),
            layers.Conv2D(2, 2, strides=1),
            layers.Flatten(),
            layers.Dense(3),
        ]
    )
    set_all(m, 131)
    m.compile(
        optimizer=sgd(0.05),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    standard("conv2d_fit", m, x, y, epochs=2, batch_size=4)


@case
def embedding_pool_fit():
    rng = np.random.default_rng(132)
    x = rng.integers(0, 12, size=(8, 5)).astype(np.int32)
    y = (x.sum(axis=1) % 2).astype(np.float32)
    m = keras.Sequential(
        [
            keras.Input((5,), dtype="int32"),
            layers.Embedding(12, 4),
            layers.GlobalAveragePooling1D(),
            layers.Dense(1, activation="sigmoid"),
        ]
    )
    set_all(m, 133)
    m.compile(
        optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"]
    )
    standard("embedding_pool_fit", m, x, y, epochs=3, batch_size=3)


@case
def lstm_fit():
    rng = np.random.default_rng(134)
    x = rng.normal(size=(6, 4, 3)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None].astype(np.float32) * 0.2
    m = keras.Sequential([keras.Input((4, 3)), layers.LSTM(5), layers.Dense(1)])
    set_all(m, 135)
    m.compile(optimizer=sgd(0.1), loss="mse", metrics=["mae"])
    standard("lstm_fit", m, x, y, epochs=2, batch_size=4)


@case
def gru_sequences_fit():
    rng = np.random.default_rng(136)
    x = rng.normal(size=(5, 4, 2)).astype(np.float32)
    y = np.cumsum(x[..., :1], axis=1).astype(np.float32)
    m = keras.Sequential(
        [keras.Input((4, 2)), layers.GRU(3, return_sequences=True), layers.Dense(1)]
    )
    set_all(m, 137)
    m.compile(optimizer=sgd(0.1), loss="mse")
    standard("gru_sequences_fit", m, x, y, epochs=2, batch_size=2)


@case
def multi_out_flat_metrics():
    x, y1 = reg_data(seed=140)
    _, y2 = reg_data(seed=141, k=2)
    inp = keras.Input((4,))
    h = layers.Dense(5, activation="relu")(inp)
    m = set_all(keras.Model(inp, [layers.Dense(1, name="p")(h), layers.Dense(2, name="q")(h)]), 142)
    m.compile(optimizer=sgd(0.05), loss=["mse", "mae"], metrics=["mae"])
    h = m.fit(x, [y1, y2], epochs=2, batch_size=4, verbose=0, shuffle=False)
    hist("multi_out_flat_metrics", h)
    say("multi_out_flat_metrics", "evaluate", out(m.evaluate(x, [y1, y2], verbose=0)))


@case
def validation_split_sample_weight():
    x, y = reg_data(n=10, seed=143)
    sw = np.array([1, 2, 0, 1, 1, 3, 0, 1, 2, 5], np.float32)
    m = mlp(seed=144)
    m.compile(optimizer=sgd(0.05), loss="mse", weighted_metrics=["mae"])
    h = m.fit(
        x, y, sample_weight=sw, epochs=2, batch_size=3, validation_split=0.4, verbose=0,
        shuffle=False,
    )  # fmt: skip
    hist("validation_split_sample_weight", h)
    wsum("validation_split_sample_weight", m)


@case
def class_weight_onehot_and_sample_weight():
    x, y = cls_data(n=9, seed=145)
    yh = np.eye(3, dtype=np.float32)[y]
    sw = np.linspace(0.5, 1.5, 9).astype(np.float32)
    m = mlp(out_units=3, activation="softmax", seed=146)
    m.compile(optimizer=sgd(0.2), loss="categorical_crossentropy", weighted_metrics=["accuracy"])
    h = m.fit(
        x, yh, epochs=2, batch_size=4, class_weight={0: 2.0, 1: 1.0, 2: 0.25}, verbose=0,
        shuffle=False,
    )  # fmt: skip
    hist("class_weight_onehot_and_sample_weight", h)
    h = m.fit(
        x, yh, epochs=1, batch_size=4, class_weight={0: 2.0, 1: 1.0, 2: 0.25}, sample_weight=sw,
        verbose=0, shuffle=False,
    )  # fmt: skip
    hist("class_weight_onehot_and_sample_weight", h)
    wsum("class_weight_onehot_and_sample_weight", m)


@case
def add_loss_only_model():
    class Penalty(layers.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_mean(tf.square(inputs - 1.0)))
            return inputs

    x, _ = reg_data(n=8, seed=147)
    inp = keras.Input((4,))
    m = set_all(keras.Model(inp, Penalty()(layers.Dense(3)(inp))), 148)
    m.compile(optimizer=sgd(0.1))
    h = m.fit(x, epochs=3, batch_size=3, verbose=0, shuffle=False)
    hist("add_loss_only_model", h)
    wsum("add_loss_only_model", m)
    say("add_loss_only_model", "evaluate", out(m.evaluate(x, verbose=0)))


@case
def dataset_runs_out():
    x, y = reg_data(n=7, seed=149)
    m = mlp(seed=150)
    m.compile(optimizer=sgd(0.05), loss="mse")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(2)
    h = m.fit(ds, epochs=3, steps_per_epoch=3, verbose=0)
    hist("dataset_runs_out", h)
    say("dataset_runs_out", "iterations", int(m.optimizer.iterations.numpy()))
    h0 = m.fit(x, y, epochs=0, verbose=0)
    say("dataset_runs_out", "epochs=0", list(h0.epoch), sorted(h0.history))


# ---------------------------------------------------------------- errors
@case
def fit_errors():
    x, y = reg_data(n=8, seed=138)
    m = mlp(seed=139)
    m.compile(optimizer=sgd(0.05), loss="mse")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    guarded(
        "fit_errors", "val_split on dataset", lambda: m.fit(ds, validation_split=0.5, verbose=0)
    )
    guarded("fit_errors", "length mismatch", lambda: m.fit(x, y[:5], verbose=0))
    guarded("fit_errors", "uncompiled", lambda: mlp(seed=1).fit(x, y, verbose=0))
    r = guarded(
        "fit_errors", "unknown loss", lambda: mlp(seed=1).compile("sgd", loss="no_such_loss")
    )
    say("fit_errors", "done", r is None)


def main():
    for fn in CASES:
        if ONLY and ONLY not in fn.__name__:
            continue
        keras.backend.clear_session()
        try:
            fn()
        except Exception as e:  # one failing case must not hide the others
            err(fn.__name__, e)
    say("END", len(CASES), "cases")


if __name__ == "__main__":
    main()
