"""Held-out: a message-passing GNN step (gather by edges, unsorted_segment_sum, segment_mean
readout), Adam; weights from numpy so TF and tracer must agree."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
N, E, F, H, G = 60, 240, 8, 16, 4
feats = rng.standard_normal((N, F)).astype(np.float32)
src = rng.integers(0, N, E).astype(np.int32)
dst = rng.integers(0, N, E).astype(np.int32)
graph_of = np.sort(rng.integers(0, G, N)).astype(np.int32)
target = rng.standard_normal((G, 1)).astype(np.float32)
W1 = tf.Variable(rng.standard_normal((2 * F, H)).astype(np.float32) * 0.3)
W2 = tf.Variable(rng.standard_normal((F + H, H)).astype(np.float32) * 0.3)
W3 = tf.Variable(rng.standard_normal((H, 1)).astype(np.float32) * 0.3)
opt = tf.keras.optimizers.Adam(1e-2)
variables = [W1, W2, W3]


@tf.function
def step(feats, src, dst, graph_of, target):
    with tf.GradientTape() as tape:
        pair = tf.concat([tf.gather(feats, src), tf.gather(feats, dst)], axis=1)
        messages = tf.nn.tanh(tf.matmul(pair, W1))
        incoming = tf.math.unsorted_segment_sum(messages, dst, num_segments=N)
        nodes = tf.nn.relu(tf.matmul(tf.concat([feats, incoming], axis=1), W2))
        pooled = tf.math.unsorted_segment_mean(nodes, graph_of, num_segments=G)
        pred = tf.matmul(pooled, W3)
        loss = tf.reduce_mean(tf.square(pred - target))
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
    return loss


losses = [float(step(feats, src, dst, graph_of, target)) for _ in range(40)]
print(which, " ".join(f"{loss:.6f}" for loss in losses[::8]))
ts = []
for _ in range(200):
    t = time.perf_counter()
    step(feats, src, dst, graph_of, target)
    ts.append(time.perf_counter() - t)
print(which, "step %.3f ms" % (np.median(ts) * 1e3))
