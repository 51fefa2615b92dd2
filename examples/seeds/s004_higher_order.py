"""Seed 004_b8d273961b668fdb.txt (older eager-mode tutorial), "Higher-order gradients": a
gradient computed inside an outer tape's context is itself differentiable."""

import tracer as tf

x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0
with tf.GradientTape() as t:
    with tf.GradientTape() as t2:
        y = x * x * x
    # Compute the gradient inside the 't' context manager
    # which means the gradient computation is differentiable as well.
    dy_dx = t2.gradient(y, x)
d2y_dx2 = t.gradient(dy_dx, x)

assert dy_dx.numpy() == 3.0
assert d2y_dx2.numpy() == 6.0
