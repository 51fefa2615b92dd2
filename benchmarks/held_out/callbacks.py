"""Held-out: Keras's guide "Writing your own callbacks" as a tf.keras user writes it: a
callback that reports every hook of fit (with validation_split), evaluate and predict and
the logs each receives; one that prints the loss and mean absolute error from `logs`; early
stopping at the minimum loss through `self.model.stop_training`, keeping the best weights
with get_weights / set_weights; a learning-rate scheduler setting
`self.model.optimizer.learning_rate` at each epoch's start. Synthetic regression data and
weights from numpy, so TF and tracer must print the same hooks, keys and numbers."""

import time

import numpy as np
from engine import tf, which

keras = tf.keras
rng = np.random.default_rng(0)
D = 32
teacher = rng.normal(size=(D,)).astype(np.float32)
x_train = rng.random((400, D)).astype(np.float32)
y_train = (x_train @ teacher + rng.normal(0.0, 0.1, 400)).astype(np.float32)
x_test = rng.random((200, D)).astype(np.float32)
y_test = (x_test @ teacher).astype(np.float32)
initial = [rng.normal(0.0, 0.1, (D, 1)).astype(np.float32), np.zeros(1, np.float32)]


def get_model():
    model = keras.Sequential()
    model.add(keras.layers.Dense(1, input_dim=D))
    model.set_weights(initial)
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=0.1),
        loss="mean_squared_error",
        metrics=["mean_absolute_error"],
    )
    return model


def described(logs):
    """The keys of `logs` with their values (an array's shape)."""
    if logs is None:
        return "None"
    parts = []
    for key, value in logs.items():
        if np.ndim(value) > 0:
            parts.append(f"{key}: shape {np.shape(value)}")
        else:
            parts.append(f"{key}: {float(value):.5f}")
    return "{" + ", ".join(parts) + "}"


class CustomCallback(keras.callbacks.Callback):
    """Reports each hook it is given, with the keys and values of its logs."""

    def report(self, hook, *args, logs=None):
        where = f" {args[0]}" if args else ""
        print(which, f"{hook}{where} got log keys {list(logs.keys())}: {described(logs)}")

    def on_train_begin(self, logs=None):
        self.report("on_train_begin", logs=logs)

    def on_train_end(self, logs=None):
        self.report("on_train_end", logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self.report("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch, logs=None):
        self.report("on_epoch_end", epoch, logs=logs)

    def on_test_begin(self, logs=None):
        self.report("on_test_begin", logs=logs)

    def on_test_end(self, logs=None):
        self.report("on_test_end", logs=logs)

    def on_predict_begin(self, logs=None):
        self.report("on_predict_begin", logs=logs)

    def on_predict_end(self, logs=None):
        self.report("on_predict_end", logs=logs)

    def on_train_batch_begin(self, batch, logs=None):
        self.report("on_train_batch_begin", batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.report("on_train_batch_end", batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        self.report("on_test_batch_begin", batch, logs=logs)

    def on_test_batch_end(self, batch, logs=None):
        self.report("on_test_batch_end", batch, logs=logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self.report("on_predict_batch_begin", batch, logs=logs)

    def on_predict_batch_end(self, batch, logs=None):
        self.report("on_predict_batch_end", batch, logs=logs)


print(which, "-- fit with validation_split, evaluate, predict")
model = get_model()
history = model.fit(
    x_train,
    y_train,
    batch_size=128,
    epochs=2,
    verbose=0,
    shuffle=False,
    validation_split=0.5,
    callbacks=[CustomCallback()],
)
print(which, "history", {k: [round(v, 5) for v in vs] for k, vs in history.history.items()})
print(which, "params", sorted(history.params.items()))
res = model.evaluate(x_test, y_test, batch_size=128, verbose=0, callbacks=[CustomCallback()])
print(which, "evaluate", [round(float(v), 5) for v in res])
res = model.predict(x_test, batch_size=128, verbose=0, callbacks=[CustomCallback()])
print(which, "predict", res.shape, res.dtype, " ".join(f"{v:.5f}" for v in res[:4, 0]))


class LossAndErrorPrintingCallback(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        print(which, f"For batch {batch}, loss is {logs['loss']:9.4f}.")

    def on_test_batch_end(self, batch, logs=None):
        print(which, f"For test batch {batch}, loss is {logs['loss']:9.4f}.")

    def on_epoch_end(self, epoch, logs=None):
        print(
            which,
            f"The average loss for epoch {epoch} is {logs['loss']:9.4f} "
            f"and mean absolute error is {logs['mean_absolute_error']:9.4f}.",
        )


print(which, "-- logs in use")
model = get_model()
model.fit(
    x_train,
    y_train,
    batch_size=128,
    epochs=2,
    verbose=0,
    shuffle=False,
    callbacks=[LossAndErrorPrintingCallback()],
)
res = model.evaluate(
    x_test, y_test, batch_size=128, verbose=0, callbacks=[LossAndErrorPrintingCallback()]
)


class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
    """Stops when the loss stops going down for `patience` epochs, and goes back to the
    weights of the best epoch."""

    def __init__(self, patience=0):
        super().__init__()
        self.patience = patience
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = logs.get("loss")
        if np.less(current, self.best):
            self.best = current
            self.wait = 0
            self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                print(which, "Restoring model weights from the end of the best epoch.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0:
            print(which, f"Epoch {self.stopped_epoch + 1}: early stopping")


class EpochLoss(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(which, f"epoch {epoch} loss {logs['loss']:.4f} mae {logs['mean_absolute_error']:.4f}")


print(which, "-- early stopping at the minimum loss")
model = get_model()
model.optimizer.learning_rate = 0.3  # large enough that the loss turns back up
start = time.perf_counter()
history = model.fit(
    x_train,
    y_train,
    batch_size=64,
    epochs=30,
    verbose=0,
    shuffle=False,
    callbacks=[EpochLoss(), EarlyStoppingAtMinLoss(patience=1)],
)
stopping_time = time.perf_counter() - start
print(which, "epochs run", len(history.history["loss"]), "stop_training", model.stop_training)
print(which, "restored kernel", " ".join(f"{v:.5f}" for v in model.get_weights()[0][:5, 0]))
print(which, "evaluate restored", round(float(model.evaluate(x_test, y_test, verbose=0)[0]), 5))


class CustomLearningRateScheduler(keras.callbacks.Callback):
    """Sets the optimizer's learning rate from `schedule(epoch, lr)` before each epoch."""

    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule

    def on_epoch_begin(self, epoch, logs=None):
        if not hasattr(self.model.optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        lr = self.model.optimizer.learning_rate
        scheduled_lr = self.schedule(epoch, lr)
        self.model.optimizer.learning_rate = scheduled_lr
        print(which, f"Epoch {epoch}: Learning rate is {float(np.array(scheduled_lr)):.4f}.")


LR_SCHEDULE = [(3, 0.05), (6, 0.01), (9, 0.005), (12, 0.001)]


def lr_schedule(epoch, lr):
    if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
        return lr
    for start_epoch, rate in LR_SCHEDULE:
        if epoch == start_epoch:
            return rate
    return lr


print(which, "-- learning-rate schedule")
model = get_model()
start = time.perf_counter()
history = model.fit(
    x_train,
    y_train,
    batch_size=64,
    epochs=15,
    verbose=0,
    shuffle=False,
    callbacks=[EpochLoss(), CustomLearningRateScheduler(lr_schedule)],
)
schedule_time = time.perf_counter() - start
lr = model.optimizer.learning_rate
print(
    which,
    "final learning_rate",
    type(lr).__name__,
    tf.as_dtype(lr.dtype).name,
    f"{float(lr.numpy()):.4f}",
)
print(which, "iterations", int(model.optimizer.iterations.numpy()))
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"][-3:]))
print(
    which,
    f"early stopping fit {stopping_time:.2f} s; 15 epochs with the schedule "
    f"{schedule_time:.2f} s ({schedule_time / 15 * 1e3:.1f} ms an epoch)",
)
