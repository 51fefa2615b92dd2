"""Held-out: text classification as TensorFlow's tutorials write it: padded token sequences,
an Embedding with mask_zero whose mask reaches a Bidirectional LSTM and a GRU, Dense with
sigmoid, compile/fit/evaluate/predict; weights from numpy so that TF and tracer must agree."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
V, T, N = 40, 20, 256
lengths = rng.integers(4, T + 1, N)
tokens = np.zeros((N, T), np.int32)
for row, length in enumerate(lengths):
    tokens[row, :length] = rng.integers(1, V, length)
labels = ((tokens == 7).sum(axis=1) > (tokens == 9).sum(axis=1)).astype(np.float32)

layers = tf.keras.layers
model = tf.keras.Sequential(
    [
        tf.keras.Input((T,), dtype="int32"),
        layers.Embedding(V, 16, mask_zero=True),
        layers.Bidirectional(layers.LSTM(16, return_sequences=True)),
        layers.GRU(16),
        layers.Dense(1, activation="sigmoid"),
    ]
)
model.set_weights([rng.normal(0.0, 0.2, w.shape).astype(np.float32) for w in model.weights])
model.compile(
    optimizer=tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"]
)

start = time.perf_counter()
history = model.fit(tokens, labels, batch_size=32, epochs=4, shuffle=False, verbose=0)
fit_time = time.perf_counter() - start
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))
print(which, "accuracy", " ".join(f"{v:.4f}" for v in history.history["accuracy"]))
evaluated = model.evaluate(tokens, labels, verbose=0)
print(which, "evaluate", " ".join(f"{v:.5f}" for v in evaluated))
predicted = model.predict(tokens[:4], verbose=0)
print(which, "predict", " ".join(f"{v:.5f}" for v in predicted[:, 0]))

start = time.perf_counter()
model.fit(tokens, labels, batch_size=32, epochs=2, shuffle=False, verbose=0)
epoch = (time.perf_counter() - start) / 2
print(which, f"first fit (4 epochs) {fit_time:.2f} s, then an epoch {epoch * 1e3:.1f} ms")
