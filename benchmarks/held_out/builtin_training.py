"""Held-out: Keras's guide "Training & evaluation with the built-in methods" as TensorFlow users
run it with tf.keras, on synthetic MNIST-like data: compile/fit with validation_data and
history, evaluate, predict; compile by string names and by objects; a custom loss function, a
custom Loss subclass (CustomMSE), a custom Metric (CategoricalTruePositives), a layer calling
add_loss; validation_split; fit on a tf.data.Dataset with steps_per_epoch/validation_steps;
sample_weight and class_weight; a multi-input multi-output model (list and dict losses,
loss_weights, per-output metrics); callbacks (EarlyStopping, ModelCheckpoint, a custom
Callback, LearningRateScheduler, ReduceLROnPlateau, TensorBoard); an ExponentialDecay
schedule; save / load_model with custom_objects. Weights come from numpy and nothing is
shuffled, so TF and tracer must print the same numbers."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

keras = tf.keras
rng = np.random.default_rng(0)
N, NV, NT, D, C = 2000, 400, 400, 784, 10
teacher = rng.normal(size=(D, C)).astype(np.float32)
x_all = rng.random((N + NV + NT, D)).astype(np.float32)
y_all = np.argmax(x_all @ teacher + rng.normal(0.0, 3.0, (N + NV + NT, C)), axis=1)
y_all = y_all.astype(np.float32)
x_train, y_train = x_all[:N], y_all[:N]
x_val, y_val = x_all[N : N + NV], y_all[N : N + NV]
x_test, y_test = x_all[N + NV :], y_all[N + NV :]


def fmt(values):
    return " ".join(f"{float(v):.5g}" for v in values)


def show_history(tag, history):
    print(which, tag, "history keys", sorted(history.history))
    for key in sorted(history.history):
        print(which, tag, key, fmt(history.history[key]))


def init_weights(model, seed):
    wr = np.random.default_rng(seed)
    model.set_weights([wr.normal(0.0, 0.05, w.shape).astype(np.float32) for w in model.weights])


def get_uncompiled_model(seed=1):
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = keras.layers.Dense(10, activation="softmax", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    init_weights(model, seed)
    return model


def get_compiled_model(seed=1):
    model = get_uncompiled_model(seed)
    model.compile(
        optimizer="rmsprop",
        loss="sparse_categorical_crossentropy",
        metrics=["sparse_categorical_accuracy"],
    )
    return model


start = time.perf_counter()

# -- 1. API overview: compile with objects, fit with validation_data, evaluate, predict ------
model = get_uncompiled_model()
model.compile(
    optimizer=keras.optimizers.RMSprop(),
    loss=keras.losses.SparseCategoricalCrossentropy(),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)
history = model.fit(
    x_train,
    y_train,
    batch_size=64,
    epochs=2,
    validation_data=(x_val, y_val),
    verbose=0,
    shuffle=False,
)
show_history("overview", history)
results = model.evaluate(x_test, y_test, batch_size=128, verbose=0)
print(which, "overview test loss, test acc:", fmt(results))
predictions = model.predict(x_test[:3], verbose=0)
print(which, "overview predictions shape:", predictions.shape, fmt(predictions[0, :4]))
print(which, "overview metrics_names", model.metrics_names)

# -- 2. compile by string names ---------------------------------------------------------------
model = get_compiled_model()
history = model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0, shuffle=False)
show_history("strings", history)
ev = model.evaluate(x_test, y_test, verbose=0, return_dict=True)
print(which, "strings evaluate", {k: round(float(v), 4) for k, v in sorted(ev.items())})


# -- 3. custom losses ---------------------------------------------------------------------------
def custom_mean_squared_error(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=custom_mean_squared_error)
y_train_one_hot = tf.one_hot(tf.cast(y_train, tf.int32), depth=10)
history = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, verbose=0, shuffle=False)
show_history("custom loss fn", history)


class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse", **kwargs):
        super().__init__(name=name, **kwargs)
        self.regularization_factor = regularization_factor

    def call(self, y_true, y_pred):
        mse = tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)
        reg = tf.reduce_mean(tf.square(0.5 - y_pred), axis=-1)
        return mse + reg * self.regularization_factor

    def get_config(self):
        config = super().get_config()
        config.update({"regularization_factor": self.regularization_factor})
        return config


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=CustomMSE())
history = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, verbose=0, shuffle=False)
show_history("CustomMSE", history)
print(
    which,
    "CustomMSE direct",
    f"{float(CustomMSE(0.2)(y_train_one_hot[:8], model(x_train[:8]))):.5f}",
)


# -- 4. custom metric ---------------------------------------------------------------------------
class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_weight(shape=(), name="ctp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.reshape(tf.argmax(y_pred, axis=1), shape=(-1, 1))
        values = tf.cast(y_true, "int32") == tf.cast(y_pred, "int32")
        values = tf.cast(values, "float32")
        if sample_weight is not None:
            sample_weight = tf.cast(sample_weight, "float32")
            values = tf.multiply(values, sample_weight)
        self.true_positives.assign_add(tf.reduce_sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        self.true_positives.assign(0.0)


model = get_uncompiled_model()
model.compile(
    optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(),
    metrics=[CategoricalTruePositives()],
)
history = model.fit(x_train, y_train[:, None], batch_size=64, epochs=3, verbose=0, shuffle=False)
show_history("ctp", history)
ctp = CategoricalTruePositives()
ctp.update_state(y_test[:50, None], model.predict(x_test[:50], verbose=0))
print(which, "ctp standalone", f"{float(ctp.result()):.1f}")
ctp.reset_state()
print(which, "ctp after reset", f"{float(ctp.result()):.1f}")


# -- 5. a layer that calls add_loss ---------------------------------------------------------
class ActivityRegularizationLayer(keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(tf.reduce_sum(inputs) * 0.1)
        return inputs


inputs = keras.Input(shape=(784,), name="digits")
x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = ActivityRegularizationLayer()(x)
x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = keras.layers.Dense(10, name="predictions")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
init_weights(model, 2)
model.compile(
    optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
)
history = model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0, shuffle=False)
show_history("add_loss", history)
_ = model(x_test[:16])
print(which, "add_loss model.losses", len(model.losses), f"{float(sum(model.losses)):.5f}")


# -- 6. validation_split -------------------------------------------------------------------------
model = get_compiled_model()
history = model.fit(
    x_train, y_train, batch_size=64, validation_split=0.2, epochs=1, verbose=0, shuffle=False
)
show_history("validation_split", history)

# -- 7. tf.data.Dataset, steps_per_epoch, validation_steps --------------------------------------
model = get_compiled_model()
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)
test_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)
history = model.fit(train_dataset, epochs=2, verbose=0)
show_history("dataset", history)
result = model.evaluate(test_dataset, verbose=0)
print(
    which, "dataset evaluate", dict(zip(model.metrics_names, [round(float(r), 4) for r in result]))
)

model = get_compiled_model()
history = model.fit(train_dataset.repeat(), epochs=2, steps_per_epoch=12, verbose=0)
show_history("steps_per_epoch", history)

model = get_compiled_model()
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(64)
history = model.fit(
    train_dataset, epochs=1, validation_data=val_dataset, validation_steps=3, verbose=0
)
show_history("validation_steps", history)

# -- 8. sample_weight and class_weight ---------------------------------------------------------
class_weight = {i: 1.0 for i in range(10)}
class_weight[5] = 2.0
model = get_compiled_model()
history = model.fit(
    x_train, y_train, class_weight=class_weight, batch_size=64, epochs=1, verbose=0, shuffle=False
)
show_history("class_weight", history)

sample_weight = np.ones(shape=(len(y_train),), dtype=np.float32)
sample_weight[y_train == 5] = 2.0
model = get_compiled_model()
history = model.fit(
    x_train,
    y_train,
    sample_weight=sample_weight,
    batch_size=64,
    epochs=1,
    verbose=0,
    shuffle=False,
)
show_history("sample_weight", history)

model = get_compiled_model()
sw_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train, sample_weight)).batch(64)
history = model.fit(sw_dataset, epochs=1, verbose=0)
show_history("sample_weight dataset", history)
ev = model.evaluate(x_test, y_test, sample_weight=sample_weight[:NT], verbose=0, return_dict=True)
print(which, "weighted evaluate", {k: round(float(v), 4) for k, v in sorted(ev.items())})


# -- 9. multi-input multi-output ------------------------------------------------------------------
def get_mimo_model():
    """The guide's image + timeseries model with a score and a class output (a fresh one
    per compile: Keras 3 keeps a model's old compiled metrics when compile() gets none)."""
    image_input = keras.Input(shape=(16, 16, 3), name="img_input")
    timeseries_input = keras.Input(shape=(None, 10), name="ts_input")
    x1 = keras.layers.Conv2D(3, 3)(image_input)
    x1 = keras.layers.GlobalMaxPooling2D()(x1)
    x2 = keras.layers.Conv1D(3, 3)(timeseries_input)
    x2 = keras.layers.GlobalMaxPooling1D()(x2)
    x = keras.layers.concatenate([x1, x2])
    score_output = keras.layers.Dense(1, name="score_output")(x)
    class_output = keras.layers.Dense(5, activation="softmax", name="class_output")(x)
    model = keras.Model(
        inputs=[image_input, timeseries_input], outputs=[score_output, class_output]
    )
    init_weights(model, 3)
    return model


mrng = np.random.default_rng(5)
img_data = mrng.random(size=(100, 16, 16, 3)).astype(np.float32)
ts_data = mrng.random(size=(100, 20, 10)).astype(np.float32)
score_targets = mrng.random(size=(100, 1)).astype(np.float32)
class_targets = np.eye(5, dtype=np.float32)[mrng.integers(0, 5, 100)]

mimo = get_mimo_model()
mimo.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss=[keras.losses.MeanSquaredError(), keras.losses.CategoricalCrossentropy()],
    metrics=[
        [keras.metrics.MeanAbsolutePercentageError(), keras.metrics.MeanAbsoluteError()],
        [keras.metrics.CategoricalAccuracy()],
    ],
)
history = mimo.fit(
    [img_data, ts_data],
    [score_targets, class_targets],
    batch_size=32,
    epochs=2,
    verbose=0,
    shuffle=False,
)
show_history("mimo list", history)

mimo = get_mimo_model()
mimo.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss={
        "score_output": keras.losses.MeanSquaredError(),
        "class_output": keras.losses.CategoricalCrossentropy(),
    },
    metrics={
        "score_output": [
            keras.metrics.MeanAbsolutePercentageError(),
            keras.metrics.MeanAbsoluteError(),
        ],
        "class_output": [keras.metrics.CategoricalAccuracy()],
    },
    loss_weights={"score_output": 2.0, "class_output": 1.0},
)
history = mimo.fit(
    {"img_input": img_data, "ts_input": ts_data},
    {"score_output": score_targets, "class_output": class_targets},
    batch_size=32,
    epochs=2,
    verbose=0,
    shuffle=False,
)
show_history("mimo dict", history)
ev = mimo.evaluate(
    {"img_input": img_data, "ts_input": ts_data},
    {"score_output": score_targets, "class_output": class_targets},
    verbose=0,
    return_dict=True,
)
print(which, "mimo evaluate", {k: round(float(v), 4) for k, v in sorted(ev.items())})
p_score, p_class = mimo.predict({"img_input": img_data[:4], "ts_input": ts_data[:4, :7]}, verbose=0)
print(which, "mimo predict", p_score.shape, p_class.shape, fmt(p_score[:, 0]))

mimo_ds = tf.data.Dataset.from_tensor_slices(
    (
        {"img_input": img_data, "ts_input": ts_data},
        {"score_output": score_targets, "class_output": class_targets},
    )
).batch(32)
mimo = get_mimo_model()
mimo.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss=[None, keras.losses.CategoricalCrossentropy()],
)
history = mimo.fit(mimo_ds, epochs=1, verbose=0)
show_history("mimo dataset, loss [None, cce]", history)

# -- 9b. the functional guide's ticket model: dict inputs and outputs --------------------------
title_input = keras.Input(shape=(None,), name="title")
body_input = keras.Input(shape=(None,), name="body")
tags_input = keras.Input(shape=(12,), name="tags")
title_features = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(100, 8)(title_input))
body_features = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(100, 8)(body_input))
x = keras.layers.concatenate([title_features, body_features, tags_input])
priority_pred = keras.layers.Dense(1, name="priority")(x)
department_pred = keras.layers.Dense(4, name="department")(x)
tickets = keras.Model(
    inputs={"title": title_input, "body": body_input, "tags": tags_input},
    outputs={"priority": priority_pred, "department": department_pred},
)
init_weights(tickets, 4)
tickets.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss={
        "priority": keras.losses.BinaryCrossentropy(from_logits=True),
        "department": keras.losses.CategoricalCrossentropy(from_logits=True),
    },
    loss_weights={"priority": 1.0, "department": 0.2},
    metrics={"priority": ["mae"], "department": ["accuracy"]},
)
trng = np.random.default_rng(6)
title_data = trng.integers(0, 100, size=(256, 10))
body_data = trng.integers(0, 100, size=(256, 30))
tags_data = trng.integers(0, 2, size=(256, 12)).astype("float32")
priority_targets = trng.random(size=(256, 1)).astype(np.float32)
dept_targets = trng.integers(0, 2, size=(256, 4)).astype(np.float32)
history = tickets.fit(
    {"title": title_data, "body": body_data, "tags": tags_data},
    {"priority": priority_targets, "department": dept_targets},
    epochs=2,
    batch_size=32,
    verbose=0,
    shuffle=False,
)
show_history("tickets", history)

# -- 10. callbacks --------------------------------------------------------------------------------
workdir = tempfile.mkdtemp()
os.chdir(workdir)

model = get_compiled_model()
callbacks = [
    keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=1, verbose=1)
]
history = model.fit(
    x_train[:500],
    y_train[:500],
    epochs=20,
    batch_size=64,
    callbacks=callbacks,
    validation_split=0.2,
    verbose=0,
    shuffle=False,
)
show_history("early stopping", history)
print(which, "early stopping stopped_epoch", callbacks[0].stopped_epoch)


class LossHistory(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.per_batch_losses = []
        self.epoch_keys = []

    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            print(which, "callback batch logs keys", sorted(logs))
        self.per_batch_losses.append(logs.get("loss"))

    def on_epoch_end(self, epoch, logs=None):
        self.epoch_keys.append(sorted(logs))
        print(
            which, "callback epoch", epoch, {k: round(float(v), 4) for k, v in sorted(logs.items())}
        )


model = get_compiled_model()
loss_history = LossHistory()
model.fit(
    x_train,
    y_train,
    epochs=2,
    batch_size=250,
    validation_data=(x_val, y_val),
    callbacks=[loss_history],
    verbose=0,
    shuffle=False,
)
print(
    which,
    "callback per-batch losses",
    len(loss_history.per_batch_losses),
    fmt(loss_history.per_batch_losses),
)
print(which, "callback epoch keys", loss_history.epoch_keys[0])

model = get_compiled_model()
callbacks = [
    keras.callbacks.ModelCheckpoint(
        filepath="mymodel_{epoch}.keras", save_best_only=True, monitor="val_loss", verbose=1
    )
]
model.fit(
    x_train,
    y_train,
    epochs=3,
    batch_size=64,
    callbacks=callbacks,
    validation_split=0.2,
    verbose=0,
    shuffle=False,
)
print(which, "checkpoint files", sorted(os.listdir(workdir)))
restored = keras.models.load_model("mymodel_3.keras")
print(which, "restored checkpoint evaluate", fmt(restored.evaluate(x_test, y_test, verbose=0)))


def scheduler(epoch, lr):
    if epoch < 1:
        return lr
    return lr * 0.5


model = get_compiled_model()
history = model.fit(
    x_train,
    y_train,
    epochs=3,
    batch_size=64,
    callbacks=[keras.callbacks.LearningRateScheduler(scheduler, verbose=1)],
    verbose=0,
    shuffle=False,
)
show_history("LearningRateScheduler", history)
print(which, "lr after scheduler", f"{float(model.optimizer.learning_rate.numpy()):.6g}")

model = get_compiled_model()
reduce_lr = keras.callbacks.ReduceLROnPlateau(
    monitor="val_loss", factor=0.2, patience=1, min_delta=0.5, min_lr=1e-5, verbose=1
)
history = model.fit(
    x_train,
    y_train,
    epochs=3,
    batch_size=64,
    validation_data=(x_val, y_val),
    callbacks=[reduce_lr],
    verbose=0,
    shuffle=False,
)
show_history("ReduceLROnPlateau", history)
print(which, "lr after plateau", f"{float(model.optimizer.learning_rate.numpy()):.6g}")

initial_learning_rate = 0.1
lr_schedule = keras.optimizers.schedules.ExponentialDecay(
    initial_learning_rate, decay_steps=10, decay_rate=0.5, staircase=True
)
model = get_uncompiled_model()
model.compile(
    optimizer=keras.optimizers.SGD(learning_rate=lr_schedule),
    loss="sparse_categorical_crossentropy",
    metrics=["sparse_categorical_accuracy"],
)
history = model.fit(x_train, y_train, epochs=2, batch_size=64, verbose=0, shuffle=False)
show_history("ExponentialDecay", history)
print(which, "schedule at 0, 10, 45", fmt([lr_schedule(0), lr_schedule(10), lr_schedule(45)]))
print(which, "optimizer iterations", int(model.optimizer.iterations.numpy()))

log_dir = os.path.join(workdir, "logs")
model = get_compiled_model()
model.fit(
    x_train,
    y_train,
    epochs=1,
    batch_size=64,
    validation_data=(x_val, y_val),
    verbose=0,
    callbacks=[keras.callbacks.TensorBoard(log_dir=log_dir, histogram_freq=0, update_freq="epoch")],
    shuffle=False,
)
tb = []
for root, _, files in os.walk(log_dir):
    for name in files:
        tb.append(
            os.path.join(
                os.path.relpath(root, log_dir), name.split(".")[0] + "." + name.split(".")[1]
            )
        )
print(which, "tensorboard files", sorted(tb))

# -- 11. save / load_model with custom objects ----------------------------------------------
model = get_uncompiled_model()
model.compile(
    optimizer=keras.optimizers.Adam(1e-3),
    loss=CustomMSE(regularization_factor=0.2),
    metrics=[CategoricalTruePositives()],
)
model.fit(x_train, y_train_one_hot, batch_size=100, epochs=1, verbose=0, shuffle=False)
path = os.path.join(workdir, "custom.keras")
model.save(path)
loaded = keras.models.load_model(
    path,
    custom_objects={"CustomMSE": CustomMSE, "CategoricalTruePositives": CategoricalTruePositives},
)
print(which, "loaded loss", type(loaded.loss).__name__, loaded.loss.regularization_factor)
print(
    which,
    "loaded predict equal",
    bool(np.allclose(loaded.predict(x_test[:5], verbose=0), model.predict(x_test[:5], verbose=0))),
)
y_test_one_hot = tf.one_hot(tf.cast(y_test, tf.int32), depth=10)
print(which, "loaded evaluate", fmt(loaded.evaluate(x_test, y_test_one_hot, verbose=0)))
history = loaded.fit(x_train, y_train_one_hot, batch_size=100, epochs=1, verbose=0, shuffle=False)
show_history("loaded refit", history)

print(which, f"total {time.perf_counter() - start:.2f} s")
