"""Held-out: a transformer encoder for text classification as Keras's examples write it: a
subclassed block (MultiHeadAttention, a Dense feed-forward, Dropout, LayerNormalization,
residual adds), token and position embeddings added, GlobalAveragePooling1D, fit; weights
from numpy so that TF and tracer must agree (dropout off)."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
V, T, N, D = 50, 24, 512, 32
lengths = rng.integers(6, T + 1, N)
tokens = np.zeros((N, T), np.int32)
for row, length in enumerate(lengths):
    tokens[row, :length] = rng.integers(1, V, length)
labels = (np.isin(tokens, [3, 5, 7]).sum(axis=1) > 2).astype(np.int32)
layers = tf.keras.layers


class Block(layers.Layer):
    def __init__(self, dim, heads, hidden, rate=0.0, **kwargs):
        super().__init__(**kwargs)
        self.attention = layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)
        self.ffn = tf.keras.Sequential([layers.Dense(hidden, activation="gelu"), layers.Dense(dim)])
        self.norm1 = layers.LayerNormalization(epsilon=1e-6)
        self.norm2 = layers.LayerNormalization(epsilon=1e-6)
        self.drop1 = layers.Dropout(rate)
        self.drop2 = layers.Dropout(rate)

    def call(self, x, training=False):
        attended = self.drop1(self.attention(x, x), training=training)
        x = self.norm1(x + attended)
        return self.norm2(x + self.drop2(self.ffn(x), training=training))


class Embed(layers.Layer):
    def __init__(self, length, vocabulary, dim, **kwargs):
        super().__init__(**kwargs)
        self.tokens = layers.Embedding(vocabulary, dim)
        self.positions = layers.Embedding(length, dim)

    def call(self, x):
        positions = tf.range(start=0, limit=tf.shape(x)[-1], delta=1)
        return self.tokens(x) + self.positions(positions)


inputs = tf.keras.Input((T,), dtype="int32")
h = Block(D, 4, 64)(Embed(T, V, D)(inputs))
h = layers.GlobalAveragePooling1D()(h)
outputs = layers.Dense(2, activation="softmax")(layers.Dense(16, activation="relu")(h))
model = tf.keras.Model(inputs, outputs)
model.set_weights([rng.normal(0.0, 0.15, w.shape).astype(np.float32) for w in model.weights])
model.compile(
    optimizer=tf.keras.optimizers.Adam(3e-3),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)

start = time.perf_counter()
history = model.fit(tokens, labels, batch_size=64, epochs=4, shuffle=False, verbose=0)
fit_time = time.perf_counter() - start
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))
print(which, "accuracy", " ".join(f"{v:.4f}" for v in history.history["accuracy"]))
print(which, "evaluate", " ".join(f"{v:.5f}" for v in model.evaluate(tokens, labels, verbose=0)))
start = time.perf_counter()
model.fit(tokens, labels, batch_size=64, epochs=2, shuffle=False, verbose=0)
epoch = (time.perf_counter() - start) / 2
print(which, f"first fit (4 epochs) {fit_time:.2f} s, then an epoch {epoch * 1e3:.1f} ms")
