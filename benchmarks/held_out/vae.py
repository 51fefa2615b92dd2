"""Held-out: a VAE training step (Dense encoder/decoder, reparameterization with
tf.random.normal, KL term, Adam), as a TF user writes it; `tf` = tensorflow or tracer."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
x = (rng.random((128, 784)) > 0.7).astype(np.float32)
L = tf.keras.layers
enc = [L.Dense(256, activation="relu"), L.Dense(2 * 16)]
dec = [L.Dense(256, activation="relu"), L.Dense(784)]


def encode(x):
    h = x
    for layer in enc:
        h = layer(h)
    return h[:, :16], h[:, 16:]


def decode(z):
    h = z
    for layer in dec:
        h = layer(h)
    return h


opt = tf.keras.optimizers.Adam(1e-3)
mean, logvar = encode(tf.constant(x))
decode(mean)
variables = [v for layer in enc + dec for v in layer.trainable_variables]


@tf.function
def step(x):
    with tf.GradientTape() as tape:
        mean, logvar = encode(x)
        eps = tf.random.normal(tf.shape(mean))
        z = mean + tf.exp(0.5 * logvar) * eps
        logits = decode(z)
        rec = tf.reduce_sum(
            tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=logits), axis=1
        )
        kl = -0.5 * tf.reduce_sum(1 + logvar - tf.square(mean) - tf.exp(logvar), axis=1)
        loss = tf.reduce_mean(rec + kl)
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
    return loss


X = tf.constant(x)
t = time.perf_counter()
first = float(step(X))
t1 = time.perf_counter() - t
for _ in range(20):
    step(X)
ts = []
for _ in range(300):
    t = time.perf_counter()
    step(X)
    ts.append(time.perf_counter() - t)
print(
    which,
    f"first call {t1:.2f} s, step {np.median(ts) * 1e3:.3f} ms, first loss {first:.2f}, loss now {float(step(X)):.2f}",
)
