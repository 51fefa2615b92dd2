"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [3], "Gradient tapes":
the gradient with respect to each source has the shape of the source.

`w` starts from random values, so, as in the seed, only the shapes are printed.
"""

import tracer as tf

w = tf.Variable(tf.random.normal((3, 2)), name="w")
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
x = [[1.0, 2.0, 3.0]]

with tf.GradientTape(persistent=True) as tape:
    y = x @ w + b
    loss = tf.reduce_mean(y**2)

[dl_dw, dl_db] = tape.gradient(loss, [w, b])

# The gradient w.r.t. each source has the shape of the source:
print(w.shape)
print(dl_dw.shape)
