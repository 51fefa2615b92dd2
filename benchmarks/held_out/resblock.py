"""Held-out: a small ResNet-style training step with BatchNormalization, as a TF user writes
it (tf.keras layers, tf.function, Adam), run with `tf` = tensorflow or tracer."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
x = rng.standard_normal((32, 32, 32, 3)).astype(np.float32)
y = rng.integers(0, 10, 32).astype(np.int32)
L = tf.keras.layers


def block(filters):
    return [
        L.Conv2D(filters, 3, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(),
        L.Conv2D(filters, 3, padding="same", use_bias=False),
        L.BatchNormalization(),
    ]


stem = [L.Conv2D(16, 3, padding="same", use_bias=False), L.BatchNormalization(), L.ReLU()]
b1 = block(16)
head = [L.GlobalAveragePooling2D(), L.Dense(10)]
layers = stem + b1 + head


def forward(x, training):
    h = x
    for layer in stem:
        h = layer(h, training=training) if isinstance(layer, L.BatchNormalization) else layer(h)
    r = h
    for layer in b1:
        r = layer(r, training=training) if isinstance(layer, L.BatchNormalization) else layer(r)
    h = tf.nn.relu(h + r)
    for layer in head:
        h = layer(h)
    return h


loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(1e-3)
forward(tf.constant(x), False)
variables = [v for layer in layers for v in layer.trainable_variables]


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, forward(x, True))
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
    return loss


X, Y = tf.constant(x), tf.constant(y)
t = time.perf_counter()
first = float(step(X, Y))
t1 = time.perf_counter() - t
for _ in range(20):
    step(X, Y)
ts = []
for _ in range(200):
    t = time.perf_counter()
    step(X, Y)
    ts.append(time.perf_counter() - t)
print(which, f"first call {t1:.2f} s, step {np.median(ts) * 1e3:.3f} ms, first loss {first:.4f}")
