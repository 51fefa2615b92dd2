"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [16]: a persistent tape
over a vector, with two gradient() calls."""

import tracer as tf

x = tf.constant([1, 3.0])
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y

print(tape.gradient(z, x).numpy())  # 108.0 (4 * x**3 at x = 3)
print(tape.gradient(y, x).numpy())  # 6.0 (2 * x)
