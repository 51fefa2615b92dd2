"""Held-out: a subclassed tf.keras.Model (Dense, BatchNormalization, Dropout) trained by
fit on a tf.data pipeline (shuffle, batch, prefetch) with validation data and EarlyStopping,
then evaluate and predict; `tf` = tensorflow or tracer (the first argument)."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
x = rng.standard_normal((1024, 20)).astype(np.float32)
w = rng.standard_normal((20, 3)).astype(np.float32)
y = np.argmax(x @ w + 0.1 * rng.standard_normal((1024, 3)), axis=1).astype(np.int64)


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = tf.keras.layers.Dense(64)
        self.bn = tf.keras.layers.BatchNormalization()
        self.drop = tf.keras.layers.Dropout(0.2)
        self.d2 = tf.keras.layers.Dense(3)

    def call(self, inputs, training=False):
        h = tf.nn.relu(self.bn(self.d1(inputs), training=training))
        return self.d2(self.drop(h, training=training))


model = Net()
model.compile(
    optimizer=tf.keras.optimizers.Adam(1e-2),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
train = (
    tf.data.Dataset.from_tensor_slices((x[:800], y[:800]))
    .shuffle(800, seed=1)
    .batch(32)
    .prefetch(tf.data.AUTOTUNE)
)
val = tf.data.Dataset.from_tensor_slices((x[800:], y[800:])).batch(64)
stop = tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
t = time.perf_counter()
hist = model.fit(train, validation_data=val, epochs=15, callbacks=[stop], verbose=0)
fit_s = time.perf_counter() - t
ev = model.evaluate(val, verbose=0, return_dict=True)
pred = model.predict(x[800:810], verbose=0)
print(
    which,
    "epochs",
    len(hist.history["loss"]),
    "final val_acc {:.3f}".format(hist.history["val_accuracy"][-1]),
    "eval",
    {k: round(float(v), 3) for k, v in ev.items()},
    "pred",
    pred.shape,
    f"fit {fit_s:.2f} s",
)
