"""Held-out: regression on tabular features as TensorFlow's "basic regression" guide writes
it: a Normalization layer adapted to the training features, Dense layers with an L2 kernel
regularizer, Dropout, fit with validation_split, evaluate; weights from numpy so that TF and
tracer must agree (dropout 0 so that the draws do not differ)."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
N, F = 400, 9
features = rng.normal(size=(N, F)) * rng.uniform(0.5, 20.0, F) + rng.uniform(-50, 50, F)
targets = features @ rng.normal(size=F) * 0.05 + np.sin(features[:, 0] * 0.1) * 3.0
features, targets = features.astype(np.float32), targets.astype(np.float32)

normalizer = tf.keras.layers.Normalization(axis=-1)
normalizer.adapt(features)
l2 = tf.keras.regularizers.l2(1e-3)
model = tf.keras.Sequential(
    [
        tf.keras.Input((F,)),
        normalizer,
        tf.keras.layers.Dense(64, activation="relu", kernel_regularizer=l2),
        tf.keras.layers.Dropout(0.0),
        tf.keras.layers.Dense(64, activation="relu", kernel_regularizer=l2),
        tf.keras.layers.Dense(1),
    ]
)
trainable = [w for w in model.weights if w.trainable]
model.set_weights(
    [
        rng.normal(0.0, 0.1, w.shape).astype(np.float32) if w.trainable else w.numpy()
        for w in model.weights
    ]
)
print(which, "adapted mean", " ".join(f"{v:.4f}" for v in normalizer.mean.numpy().ravel()[:3]))
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mean_absolute_error")
start = time.perf_counter()
history = model.fit(
    features, targets, validation_split=0.2, epochs=20, batch_size=32, shuffle=False, verbose=0
)
fit_time = time.perf_counter() - start
print(which, "loss", " ".join(f"{v:.4f}" for v in history.history["loss"][::5]))
print(which, "val_loss", " ".join(f"{v:.4f}" for v in history.history["val_loss"][::5]))
print(which, "evaluate", f"{model.evaluate(features, targets, verbose=0):.5f}")
print(which, "regularization", f"{float(sum(model.losses)):.5f}")
print(which, f"fit (20 epochs) {fit_time:.2f} s")
