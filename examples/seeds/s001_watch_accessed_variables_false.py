"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [14]: a tape with
`watch_accessed_variables=False` that watches only x1, and a dict of sources."""

import tracer as tf

x0 = tf.Variable(0.0)
x1 = tf.Variable(10.0)

with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(x1)
    y0 = tf.math.sin(x0)
    y1 = tf.nn.softplus(x1)
    y = y0 + y1
    ys = tf.reduce_sum(y)
# Since GradientTape.watch was not called on x0, no gradient is computed with respect to it:
# dy = 2x * dx
grad = tape.gradient(ys, {"x0": x0, "x1": x1})

print("dy/dx0:", grad["x0"])
print("dy/dx1:", grad["x1"].numpy())
