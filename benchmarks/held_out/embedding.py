"""Held-out: an embedding read by tf.gather, a custom Keras layer, einsum attention pooling, one_hot, gather, top_k,
clip_by_global_norm, an ExponentialDecay schedule, Adam; weights from numpy so that TF and
tracer must agree."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
V, D, T, B = 50, 16, 12, 8
tokens = rng.integers(0, V, (B, T)).astype(np.int32)
labels = rng.integers(0, 3, B).astype(np.int32)
emb0 = rng.standard_normal((V, D)).astype(np.float32) * 0.1
q0 = rng.standard_normal((D,)).astype(np.float32)
w0 = rng.standard_normal((D, 3)).astype(np.float32) * 0.1


class Pool(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.q = self.add_weight(name="q", shape=(input_shape[-1],), initializer="zeros")
        self.q.assign(q0)

    def call(self, h):
        scores = tf.einsum("btd,d->bt", h, self.q)
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.einsum("bt,btd->bd", weights, h)


emb = tf.Variable(emb0)
pool = Pool()
w = tf.Variable(w0)
sched = tf.keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=10, decay_rate=0.9)
opt = tf.keras.optimizers.Adam(sched)
pool(tf.gather(emb, tokens))
variables = [emb, pool.q, w]


@tf.function
def step(tokens, labels):
    with tf.GradientTape() as tape:
        h = tf.gather(emb, tokens)
        logits = tf.matmul(pool(h), w)
        onehot = tf.one_hot(labels, 3)
        loss = tf.reduce_mean(
            tf.reduce_logsumexp(logits, axis=-1) - tf.reduce_sum(onehot * logits, axis=-1)
        )
    grads = tape.gradient(loss, variables)
    grads, norm = tf.clip_by_global_norm(grads, 1.0)
    opt.apply_gradients(zip(grads, variables))
    top = tf.math.top_k(logits, k=2)
    return loss, norm, top.indices, tf.argmax(logits, axis=-1)


out = []
for _i in range(30):
    loss, norm, idx, am = step(tokens, labels)
    out.append((float(loss), float(norm)))
print(which, "losses", " ".join(f"{loss:.6f}" for loss, _ in out[::6]))
print(which, "norms ", " ".join(f"{n:.6f}" for _, n in out[::6]))
print(
    which,
    "top",
    idx.numpy()[:3].tolist(),
    am.numpy()[:5].tolist(),
    f"emb sum {float(tf.reduce_sum(emb)):.6f}",
)
ts = []
for _ in range(200):
    t = time.perf_counter()
    step(tokens, labels)
    ts.append(time.perf_counter() - t)
print(which, "step %.3f ms" % (np.median(ts) * 1e3))
